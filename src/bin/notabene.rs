//! `notabene`: the agent CLI (same commands as `mdbook-notabene`). The top layer.

fn main() {
    std::process::exit(mdbook_notabene::cli::run(std::env::args_os()));
}
