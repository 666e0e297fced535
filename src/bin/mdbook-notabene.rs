//! `mdbook-notabene`: the mdBook plugin binary. With no arguments it speaks mdBook's
//! preprocessor (or renderer) protocol on stdin/stdout; with a subcommand it is the agent CLI.

fn main() {
    let code = if std::env::args_os().len() == 1 {
        mdbook_notabene::preprocess::main_stdin()
    } else {
        mdbook_notabene::cli::run(std::env::args_os())
    };
    std::process::exit(code);
}
