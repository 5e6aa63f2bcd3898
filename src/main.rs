//! `swex`: the command-line front. Argument parsing and dispatch only; every command's work lives
//! in a library crate (engine, plugin host, bench).

// The commands' doc comments are clap's help text, written for a terminal: `<root>` and
// `https://github.com/<owner>/<name>` are placeholders there, not HTML or links to render.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

#[macro_use]
mod out;
mod cmd;

use clap::Parser;

/// mimalloc instead of the system allocator: a one-shot `swex explore` is over in tens of
/// milliseconds, and glibc's malloc spent a tenth of that in fresh pages (3,800 page faults per
/// answer against 870) and its own bookkeeping. Measured in docs/explorer-swex.md ("Speed"):
/// warm one-shot answers about 18 % faster, peak memory 20–90 MB higher.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Messages quote paths and names from the input: one line each, whatever they hold.
            errln!("error: {}", out::shown(&format!("{err:#}")));
            std::process::ExitCode::from(2)
        }
    }
}
