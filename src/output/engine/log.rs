//! mdBook's own messages when the engine builds in process: mdBook reports through `tracing`
//! (a backend that is missing, and the `optional = true` hint; an unclosed HTML tag), and with no
//! subscriber they would be lost. [`install`] sets a process-wide subscriber that prints its
//! warnings and errors on stderr, one line each, as `mdbook build` shows them. A subscriber set
//! already (the tests' captures) is left in place.
//!
//! Owns: the subscriber. Calls: `tracing`, [`notabene_core::term`].

use std::fmt::Write as _;

/// Prints mdBook's WARN and ERROR events on stderr.
struct Stderr;

/// Collects an event's `message` field (and its other fields after it).
struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl tracing::Subscriber for Stderr {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        *meta.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            _ => return,
        };
        let mut message = Message(String::new());
        event.record(&mut message);
        notabene_core::term::err_line(&format!("mdbook: {level}: {}", message.0.trim()));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Sets the process-wide subscriber that prints mdBook's warnings and errors, once; a no-op
/// when one is set already.
pub(crate) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = tracing::subscriber::set_global_default(Stderr);
    });
}
