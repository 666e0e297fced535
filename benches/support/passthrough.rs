//! The pass-through preprocessor of `cargo bench --bench scale`: what any mdBook plugin pays
//! before it does any work. It speaks mdBook's preprocessor protocol the way the
//! `mdbook-preprocessor` crate's documentation writes one — `supports <renderer>` answers
//! yes; otherwise the `[context, book]` pair is parsed from stdin and the book written back
//! unchanged to stdout — and does nothing else. The bench builds it
//! (`cargo build --release --example passthrough`) and runs it through the real `mdbook`.

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("supports") {
        return;
    }
    let (_ctx, book) = match mdbook_preprocessor::parse_input(std::io::stdin()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("passthrough: cannot read mdBook's input: {e:#}");
            std::process::exit(1);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let Err(e) = serde_json::to_writer(&mut out, &book)
        .map_err(std::io::Error::from)
        .and_then(|()| out.flush())
    {
        eprintln!("passthrough: cannot write the book: {e}");
        std::process::exit(1);
    }
}
