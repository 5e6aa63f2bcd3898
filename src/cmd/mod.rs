//! Subcommands. One module per command: its `Args` (clap) and a `run` that calls into a library.

pub mod bench;
pub mod explore;
pub mod explorers;
mod index;
pub mod merge;
mod progress;
pub mod report;
pub mod score;
mod search;
pub mod snapshot;

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
    /// Run explorers over a benchmark, score them at each top-k, write result rows.
    Bench(Box<bench::BenchArgs>),
    /// Means, breakdowns, paired comparisons, charts and an HTML page from result files.
    Report(report::ReportArgs),
    /// Merge result files (shards of a run), refusing conflicting rows.
    Merge(merge::MergeArgs),
    /// Materialise benchmark snapshots (`repos/<instance_id>`) from local git directories.
    Snapshot(snapshot::SnapshotArgs),
    /// Score result rows against SWE-Explore ground truth with the 17 reference metrics.
    Score(score::ScoreArgs),
    /// List the explorers: built-in ones and plugins (kind, library, ABI version).
    Explorers(explorers::Args),
    /// Ask an explorer which code regions an issue needs, on any checkout.
    Explore(explore::Args),
    /// The child process of `swex explore --isolated` (internal).
    #[command(name = "__plugin-worker", hide = true)]
    PluginWorker,
    /// Build or open a snapshot's indexes; print statistics and diagnostics.
    Index(index::Args),
    /// Query a snapshot: definitions by name, lexical search, graph neighbours.
    Search(search::Args),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bench(args) => bench::run(*args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Score(args) => score::run(args),
        Command::Explorers(args) => explorers::run(args),
        Command::Explore(args) => explore::run(args),
        Command::PluginWorker => explore::run_worker(),
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
    }
}
