//! `swex`: the command-line front. Argument parsing and dispatch only; every command's work lives
//! in a library crate (engine, plugin host, bench).

#[macro_use]
mod out;
mod cmd;

use clap::Parser;

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
