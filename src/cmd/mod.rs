//! Subcommands. One module per command: its `Args` (clap) and a `run` that calls into a library.

mod bench;
mod bench_codesearch;
mod cache;
mod dataset;
pub mod explore;
pub mod explorers;
mod gt;
mod index;
mod mcp;
mod merge;
mod models;
mod progress;
mod report;
mod score;
mod search;
mod snapshot;
mod train;

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
    /// Ask an explorer which code regions an issue needs, on any checkout.
    Explore(explore::Args),
    /// List the explorers: built-in ones and plugins (kind, library, ABI version).
    Explorers(explorers::Args),
    /// Build or open a snapshot's indexes; print statistics and diagnostics.
    Index(index::Args),
    /// Query a snapshot: definitions by name, lexical search, graph neighbours.
    Search(search::Args),
    /// Serve swex's tools to a coding agent over the Model Context Protocol (stdio).
    Mcp(mcp::Args),
    /// Run explorers over a benchmark, score them at each top-k, write result rows.
    Bench(Box<bench::BenchArgs>),
    /// Score result rows against SWE-Explore ground truth with the 17 reference metrics.
    Score(score::ScoreArgs),
    /// Means, breakdowns, paired comparisons, charts and an HTML page from result files.
    Report(report::ReportArgs),
    /// Merge result files (shards of a run), refusing conflicting rows.
    Merge(merge::MergeArgs),
    /// Materialise benchmark snapshots (`repos/<instance_id>`) from local git directories.
    Snapshot(snapshot::SnapshotArgs),
    /// Import SWE-bench-family task files as bench rows, ground truth from the fix.
    #[command(subcommand)]
    Dataset(dataset::DatasetCommand),
    /// Ground truth from repair trajectories: build benchmark rows, measure coverage.
    #[command(subcommand)]
    Gt(gt::GtCommand),
    /// Fit the `swex` explorer's learned file ranker on benchmark rows (LambdaMART, held-out
    /// folds).
    Train(Box<train::TrainArgs>),
    /// Install and inspect the files dense retrieval needs (ONNX Runtime, embedding model).
    Models(models::ModelsArgs),
    /// Manage the index cache: `gc` removes what no snapshot it serves reads any more.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// The child process of `swex explore --isolated` (internal).
    #[command(name = "__plugin-worker", hide = true)]
    PluginWorker {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Explore(args) => explore::run(args),
        Command::Explorers(args) => explorers::run(args),
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Train(args) => train::run(*args),
        Command::Score(args) => score::run(args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Dataset(command) => dataset::run(command),
        Command::Gt(command) => gt::run(command),
        Command::Models(args) => models::run(args),
        Command::Cache(command) => cache::run(command),
        Command::PluginWorker { args } => explore::run_worker(&args),
    }
}
