//! `mdbook-notabene`: the mdBook plugin binary; with a subcommand, the agent CLI.

fn main() {
    std::process::exit(mdbook_notabene::cli::run(std::env::args_os()));
}
