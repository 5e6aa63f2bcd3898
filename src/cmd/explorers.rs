//! `swex explorers`: the explorers this swex can run — built-in ones, plugin libraries and
//! command explorers (Python files, manifests, executables) found through `--plugin`,
//! `SWEX_PLUGIN_PATH` and the plugins folder — with their kind, file and ABI version. Also home
//! of the built-in list, the registry setup and the explorer handles every command shares.

use crate::out::shown;
use anyhow::Context;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use swex_plugin::abi::SwexVTableGetter;
use swex_plugin_host::{
    DiscoveryOptions, ExplorerHandle, IsolatedExplorer, IsolatedOptions, Registered, Registry,
    WorkerCommand,
};

/// The hidden subcommand that runs swex's own worker (isolated mode's child process).
pub const WORKER_SUBCOMMAND: &str = "__plugin-worker";

/// How an entry runs as a worker process: swex's own worker for a plugin, the command for a
/// command explorer.
pub fn worker_command(explorer: &Registered) -> anyhow::Result<WorkerCommand> {
    Ok(explorer.worker_command(WORKER_SUBCOMMAND)?)
}

/// An explorer ready to answer: in this process, or in a worker process when `isolated` is asked
/// for or the explorer is a command (which always runs as one). `config` `null` takes the
/// explorer's default config (a manifest's `config`).
pub fn explorer_handle(
    explorer: &Registered,
    config: serde_json::Value,
    isolated: bool,
    timeout: Duration,
    forward_stderr: bool,
) -> anyhow::Result<ExplorerHandle> {
    let config = if config.is_null() {
        explorer.default_config()
    } else {
        config
    };
    match explorer {
        Registered::Plugin(plugin) if !isolated => {
            Ok(ExplorerHandle::InProcess(plugin.instantiate(&config)?))
        }
        _ => {
            let options = IsolatedOptions {
                timeout,
                forward_stderr,
            };
            Ok(ExplorerHandle::Isolated(IsolatedExplorer::start(
                worker_command(explorer)?,
                config,
                options,
            )?))
        }
    }
}

/// What a benchmark run gives a built-in explorer beyond its own default config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchSetup {
    /// Nothing: its own default config, requests without the ground truth.
    Plain,
    /// Its requests carry the ground truth unless `--ground-truth-for` names others (the oracle:
    /// an upper bound).
    GroundTruth,
    /// Its config names the benchmark file, `{"bench_file": PATH}` (random samples the file's
    /// pool of core regions).
    BenchFile,
}

/// A built-in explorer: its name (as its crate's `Explorer::NAME` says it), its vtable and what a
/// benchmark run gives it.
pub struct Builtin {
    pub name: &'static str,
    pub vtable: SwexVTableGetter,
    pub bench: BenchSetup,
}

/// The explorers linked into this binary, in registration order. Adding one is a row here and
/// its crate in Cargo.toml; every command reaches it through the registry.
pub const BUILTINS: [Builtin; 13] = [
    builtin("swex", swex_explorer_swex::swex_explorer_vtable),
    builtin("search", swex_explorer_search::swex_explorer_vtable),
    builtin("bm25", swex_explorer_bm25::swex_explorer_vtable),
    builtin("graph", swex_explorer_graph::swex_explorer_vtable),
    builtin("tfidf", swex_explorer_tfidf::swex_explorer_vtable),
    builtin("dense", swex_explorer_dense::swex_explorer_vtable),
    builtin("hybrid", swex_explorer_hybrid::swex_explorer_vtable),
    builtin("bm25-ref", swex_explorer_bm25_ref::swex_explorer_vtable),
    builtin("tfidf-ref", swex_explorer_tfidf_ref::swex_explorer_vtable),
    builtin(
        "simple_rule",
        swex_explorer_simple_rule::swex_explorer_vtable,
    ),
    Builtin {
        bench: BenchSetup::BenchFile,
        ..builtin("random", swex_explorer_random::swex_explorer_vtable)
    },
    Builtin {
        bench: BenchSetup::GroundTruth,
        ..builtin("oracle", swex_explorer_oracle::swex_explorer_vtable)
    },
    builtin("command", swex_explorer_command::swex_explorer_vtable),
];

const fn builtin(name: &'static str, vtable: SwexVTableGetter) -> Builtin {
    Builtin {
        name,
        vtable,
        bench: BenchSetup::Plain,
    }
}

/// The vtable getters of [`BUILTINS`], for the registry and swex's own worker.
pub fn builtin_explorers() -> Vec<SwexVTableGetter> {
    BUILTINS.iter().map(|b| b.vtable).collect()
}

/// What a benchmark run gives the explorer called `name`: its built-in row's setup, or nothing
/// for any other name.
pub fn bench_setup(name: &str) -> BenchSetup {
    BUILTINS
        .iter()
        .find(|b| b.name == name)
        .map_or(BenchSetup::Plain, |b| b.bench)
}

/// Built-ins plus discovered plugins; problems with discovered libraries go to stderr.
pub fn registry(plugins: &[PathBuf]) -> anyhow::Result<Registry> {
    let mut registry =
        Registry::with_builtins(&builtin_explorers()).context("registering built-in explorers")?;
    registry.discover(&DiscoveryOptions::from_env(plugins.to_vec()))?;
    for problem in registry.problems() {
        errln!("warning: skipped plugin {problem}");
    }
    Ok(registry)
}

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// An explorer file (a plugin library, a Python file, a .json manifest, an executable) or a
    /// folder of them (repeatable), on top of SWEX_PLUGIN_PATH and the plugins folder.
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let registry = registry(&args.plugins)?;
    let rows: Vec<serde_json::Value> = registry
        .entries()
        .iter()
        .map(|entry| {
            let plugin = &entry.explorer;
            serde_json::json!({
                "name": plugin.name(),
                "kind": plugin.kind(),
                "library": plugin.path().map(|p| p.display().to_string()),
                "abi_version": plugin.abi_version(),
                "found_by": entry.origin.as_str(),
                "shadowed": entry.shadowed,
                "description": plugin.description(),
            })
        })
        .collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let name_width = rows
        .iter()
        .map(|r| r["name"].as_str().unwrap_or("").len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        "{:<name_width$}  {:<8}  {:>3}  {:<40}  DESCRIPTION",
        "NAME",
        "KIND",
        "ABI",
        "FILE"
    );
    for row in &rows {
        let mut name = row["name"].as_str().unwrap_or("").to_owned();
        if row["shadowed"] == true {
            name.push('*');
        }
        // Names and descriptions come from the plugins themselves.
        outln!(
            "{:<name_width$}  {:<8}  {:>3}  {:<40}  {}",
            shown(&name),
            row["kind"].as_str().unwrap_or(""),
            row["abi_version"]
                .as_u64()
                .map_or_else(|| "-".to_owned(), |v| v.to_string()),
            shown(row["library"].as_str().unwrap_or("-")),
            shown(row["description"].as_str().unwrap_or("")),
        );
    }
    if rows.iter().any(|r| r["shadowed"] == true) {
        outln!(
            "(* shadowed by an explorer of the same name found earlier: --plugin, SWEX_PLUGIN_PATH, plugins folder, built-in)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's name is the name its explorer registers under, so `bench_setup` finds it.
    #[test]
    fn every_builtin_row_names_its_explorer() {
        let registry = Registry::with_builtins(&builtin_explorers()).unwrap();
        let registered: Vec<&str> = registry
            .entries()
            .iter()
            .map(|e| e.explorer.name())
            .collect();
        let rows: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        assert_eq!(registered, rows);
    }

    #[test]
    fn the_reference_baselines_get_their_benchmark_setup() {
        assert_eq!(bench_setup("oracle"), BenchSetup::GroundTruth);
        assert_eq!(bench_setup("random"), BenchSetup::BenchFile);
        assert_eq!(bench_setup("swex"), BenchSetup::Plain);
        assert_eq!(bench_setup("a-plugin"), BenchSetup::Plain);
    }
}
