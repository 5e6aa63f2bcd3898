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

/// The explorers linked into this binary, registered through their vtable getters.
pub fn builtin_explorers() -> Vec<SwexVTableGetter> {
    vec![
        swex_explorer_swex::swex_explorer_vtable,
        swex_explorer_search::swex_explorer_vtable,
        swex_explorer_bm25::swex_explorer_vtable,
        swex_explorer_graph::swex_explorer_vtable,
        swex_explorer_tfidf::swex_explorer_vtable,
        swex_explorer_dense::swex_explorer_vtable,
        swex_explorer_hybrid::swex_explorer_vtable,
        swex_explorer_bm25_ref::swex_explorer_vtable,
        swex_explorer_tfidf_ref::swex_explorer_vtable,
        swex_explorer_simple_rule::swex_explorer_vtable,
        swex_explorer_random::swex_explorer_vtable,
        swex_explorer_oracle::swex_explorer_vtable,
        swex_explorer_command::swex_explorer_vtable,
    ]
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
