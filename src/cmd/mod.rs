//! Subcommands. One module per command: its `Args` (clap) and a `run` that calls into a library.

mod models;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "swex",
    version,
    about = "Find the code regions an issue needs, ranked."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Install and inspect the files dense retrieval needs (ONNX Runtime, embedding model).
    Models(models::ModelsArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Models(args) => models::run(args),
    }
}
