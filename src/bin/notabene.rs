//! `notabene`: the agent CLI (same commands as `mdbook-notabene`).

/// mimalloc: builds make millions of short-lived allocations (see `Cargo.toml`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(mdbook_notabene::apps::cli::run(std::env::args_os()));
}
