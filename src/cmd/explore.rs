//! `swex explore`: asks one explorer for the regions an issue needs, on any checkout, and prints
//! them (`path:start-end  score  why`, or the validated response as JSON). Also the hidden
//! `swex __plugin-worker`, the child process of isolated mode.

use crate::cmd::explorers::{builtin_explorers, explorer_handle, registry};
use crate::out::shown;
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use swex_bench::input::{MAX_DOCUMENT_BYTES, into_text, read_capped, read_text};
use swex_engine::index::SnapshotIndex;
use swex_engine::search::DenseUse;
use swex_plugin::Request;
use swex_plugin_host::{
    EngineBackend, ExplorerHandle, FsBackend, IsolatedExplorer, IsolatedOptions, PluginTarget,
    RawServices, ValidatedResponse, WorkerCommand, is_library,
};

use crate::cmd::explorers::WORKER_SUBCOMMAND;

/// The explorer `swex explore` uses without `--explorer`: swex's own (docs/explorer-swex.md).
pub const DEFAULT_EXPLORER: &str = "swex";

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// The issue text; `-` or nothing reads it from stdin.
    pub issue: Option<String>,
    /// Which explorer (see `swex explorers`). Default: the one file given with --plugin, or
    /// swex.
    #[arg(long, short = 'e')]
    pub explorer: Option<String>,
    /// An explorer file — a plugin library, a Python file defining `explore`, a .json manifest,
    /// an executable speaking the worker protocol — or a folder of them (repeatable).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// The checkout to explore.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// How many regions to keep.
    #[arg(long, short = 'k', default_value_t = 5)]
    pub top_k: usize,
    /// The most lines to read: the regions hold at most N lines, counted with real file lengths
    /// (a whole file costs its length); `none` for no limit.
    #[arg(long, value_name = "N|none", default_value_t = LineBudget(Some(swex_plugin::DEFAULT_LINE_BUDGET)))]
    pub budget: LineBudget,
    /// The explorer's config: JSON, or @FILE holding JSON.
    #[arg(long)]
    pub config: Option<String>,
    /// The instance id passed to the explorer.
    #[arg(long, default_value = "adhoc")]
    pub instance_id: String,
    /// Run the explorer in a child process (a crash or hang cannot take swex down). Command
    /// explorers (Python files, manifests, executables) always run so.
    #[arg(long)]
    pub isolated: bool,
    /// Time limit in seconds for an explorer in a child process.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Print the validated response as JSON.
    #[arg(long)]
    pub json: bool,
    /// Serve the explorer from the engine's index of the checkout (built, or reused from the
    /// cache): the default; explorers that use search, chunks, definitions, the graph or dense
    /// search need it.
    #[arg(long, overrides_with = "no_index")]
    pub index: bool,
    /// Serve the explorer from the plain files instead (no index is built; the index services
    /// answer `Unavailable`).
    #[arg(long, overrides_with = "index")]
    pub no_index: bool,
    #[command(flatten)]
    pub engine: super::index::EngineArgs,
}

/// `--budget`: a positive number of lines, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineBudget(pub Option<u64>);

impl std::str::FromStr for LineBudget {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text.eq_ignore_ascii_case("none") {
            return Ok(LineBudget(None));
        }
        match text.parse::<u64>() {
            Ok(0) | Err(_) => Err(format!(
                "{text:?} is not a line budget: give a positive number of lines, or `none`"
            )),
            Ok(n) => Ok(LineBudget(Some(n))),
        }
    }
}

impl std::fmt::Display for LineBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("none"),
        }
    }
}

pub fn read_config(text: Option<&str>) -> anyhow::Result<serde_json::Value> {
    let Some(text) = text else {
        return Ok(serde_json::Value::Null);
    };
    let (json, origin) = match text.strip_prefix('@') {
        Some(path) => (
            read_text(Path::new(path), MAX_DOCUMENT_BYTES)
                .map_err(|e| anyhow::anyhow!("--config file {path}: {}", e.reason()))?,
            path.to_owned(),
        ),
        None => (text.to_owned(), "--config".to_owned()),
    };
    serde_json::from_str(&json).with_context(|| format!("{origin} is not valid JSON"))
}

fn read_issue(issue: Option<String>) -> anyhow::Result<String> {
    match issue.as_deref() {
        Some("-") | None => {
            if issue.is_none() && std::io::stdin().is_terminal() {
                bail!("give the issue text as an argument, or pipe it on stdin");
            }
            // Capped like every input file: an endless pipe is an error, not a process that grows
            // until it is killed.
            let stdin = Path::new("stdin");
            let bytes = read_capped(std::io::stdin().lock(), stdin, MAX_DOCUMENT_BYTES)
                .map_err(|e| anyhow::anyhow!("reading the issue from stdin: {}", e.reason()))?;
            into_text(stdin, bytes)
                .map_err(|e| anyhow::anyhow!("reading the issue from stdin: {}", e.reason()))
        }
        Some(text) => Ok(text.to_owned()),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let issue = read_issue(args.issue.clone())?;
    check_args(&args, &issue)?;
    let config = read_config(args.config.as_deref())?;
    let repo = std::fs::canonicalize(&args.repo)
        .with_context(|| format!("--repo {}", args.repo.display()))?;
    if !repo.is_dir() {
        bail!("--repo {} is not a directory", repo.display());
    }
    let handle = open_explorer(&args, config)?;
    let services = open_services(&args, &repo)?;
    let mut request = Request::new(args.instance_id.clone(), issue, args.top_k);
    request.repo_root = Some(repo.display().to_string());
    request.line_budget = args.budget.0;
    let answer = handle.explore_validated(&request, services.backend.as_ref())?;
    if args.json {
        print_json(&handle, &answer)?;
    } else {
        print_regions(&answer);
        print_notes(&handle, &answer, args.budget);
    }
    services.release_at_exit();
    Ok(ExitCode::SUCCESS)
}

/// The checks of the arguments that clap cannot make.
fn check_args(args: &Args, issue: &str) -> anyhow::Result<()> {
    if issue.trim().is_empty() {
        bail!("the issue text is empty: give it as an argument, or pipe it on stdin");
    }
    if !(1..=swex_plugin::MAX_TOP_K).contains(&args.top_k) {
        bail!("--top-k must be in 1..={}", swex_plugin::MAX_TOP_K);
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        bail!("--timeout must be a positive number of seconds");
    }
    Ok(())
}

/// The explorer to ask: `--explorer`, else the one `--plugin FILE` registers, else the default.
/// A single plugin library under `--isolated` is never loaded here: the worker loads it.
fn open_explorer(args: &Args, config: serde_json::Value) -> anyhow::Result<ExplorerHandle> {
    let single_file = match args.plugins.as_slice() {
        [path] if path.is_file() => Some(path.clone()),
        _ => None,
    };
    let isolated_library = single_file
        .as_ref()
        .filter(|path| args.isolated && args.explorer.is_none() && is_library(path));
    if let Some(library) = isolated_library {
        let library = std::fs::canonicalize(library)?;
        return isolated(PluginTarget::Library(library), config, args.timeout);
    }
    let registry = registry(&args.plugins)?;
    let name = match (&args.explorer, &single_file) {
        (Some(name), _) => name.clone(),
        (None, Some(_)) => registry
            .explicit()
            .next()
            .map(|e| e.explorer.name().to_owned())
            .context("the --plugin file did not register an explorer")?,
        (None, None) => DEFAULT_EXPLORER.to_owned(),
    };
    let entry = registry.find(&name)?;
    explorer_handle(
        &entry.explorer,
        config,
        args.isolated,
        Duration::from_secs_f64(args.timeout),
        true,
    )
}

/// What the explorer reads the checkout through.
struct Services {
    backend: Box<dyn RawServices>,
    /// The engine's index behind `backend`, unless `--no-index`.
    index: Option<Arc<SnapshotIndex>>,
}

impl Services {
    /// The process ends after the answer: the index is left to the operating system
    /// ([`SnapshotIndex::release_at_exit`]), not freed piece by piece.
    fn release_at_exit(self) {
        drop(self.backend);
        if let Some(index) = self.index {
            SnapshotIndex::release_at_exit(index);
        }
    }
}

/// The services of the checkout: the engine's index, or the plain files with `--no-index`.
fn open_services(args: &Args, repo: &Path) -> anyhow::Result<Services> {
    if !args.no_index {
        let index = args.engine.open(repo)?;
        args.engine.build_dense(&index)?;
        // One answer per process: a ranked code search's `auto` fuses dense scores only when
        // `--dense` loaded the model anyway (`EngineBackend::with_dense_auto`).
        let dense_auto = if args.engine.dense {
            DenseUse::Auto
        } else {
            DenseUse::Off
        };
        return Ok(Services {
            backend: Box::new(EngineBackend::new(index.clone()).with_dense_auto(dense_auto)),
            index: Some(index),
        });
    }
    // The same size limit as the index (`--max-file-size`).
    let files = FsBackend::with_max_file_size(repo, args.engine.cache.max_file_size);
    for diagnostic in files.diagnostics() {
        errln!("warning: {}", shown(diagnostic));
    }
    Ok(Services {
        backend: Box::new(files),
        index: None,
    })
}

/// `--json`: the validated response.
fn print_json(handle: &ExplorerHandle, answer: &ValidatedResponse) -> anyhow::Result<()> {
    let output = serde_json::json!({
        "explorer": handle.name(),
        "regions": answer.regions,
        "dropped": answer.dropped,
        "notes": answer.notes,
    });
    outln!("{}", serde_json::to_string_pretty(&output)?);
    Ok(())
}

/// One line a region: `path:start-end  score  why`, the locations padded to one width.
fn print_regions(answer: &ValidatedResponse) {
    let locations: Vec<String> = answer
        .regions
        .iter()
        .map(|r| {
            let end = if r.end == -1 {
                "end".to_owned()
            } else {
                r.end.to_string()
            };
            format!("{}:{}-{}", shown(&r.path), r.start, end)
        })
        .collect();
    let width = locations.iter().map(String::len).max().unwrap_or(0);
    for (region, location) in answer.regions.iter().zip(&locations) {
        let score = region
            .score
            .map(|s| format!("{s:.4}"))
            .unwrap_or_else(|| "-".to_owned());
        outln!(
            "{location:<width$}  {score:>8}  {}",
            shown(region.why.as_deref().unwrap_or(""))
        );
    }
}

/// The explorer's notes and what validation cut or dropped, on stderr.
fn print_notes(handle: &ExplorerHandle, answer: &ValidatedResponse, budget: LineBudget) {
    for note in &answer.notes {
        errln!("note: {}", shown(note));
    }
    let cut = answer.dropped.trimmed_to_budget + answer.dropped.over_budget;
    if cut > 0 {
        errln!(
            "note: the answer did not fit --budget {}: {} regions cut short, {} dropped",
            budget,
            answer.dropped.trimmed_to_budget,
            answer.dropped.over_budget
        );
    }
    let invalid = answer.dropped.invalid();
    if invalid > 0 {
        errln!(
            "note: {invalid} invalid regions dropped: {:?}",
            answer.dropped
        );
    }
    if answer.regions.is_empty() {
        errln!("{} found nothing", handle.name());
    }
}

fn isolated(
    target: PluginTarget,
    config: serde_json::Value,
    timeout: f64,
) -> anyhow::Result<ExplorerHandle> {
    let command = WorkerCommand::swex_worker(WORKER_SUBCOMMAND, &target)?;
    let options = IsolatedOptions {
        timeout: Duration::from_secs_f64(timeout),
        forward_stderr: true,
    };
    Ok(ExplorerHandle::Isolated(IsolatedExplorer::start(
        command, config, options,
    )?))
}

/// `swex __plugin-worker --builtin NAME | --library PATH`: swex's own worker, the child side of
/// isolated mode.
pub fn run_worker(args: &[std::ffi::OsString]) -> anyhow::Result<ExitCode> {
    let Some(target) = PluginTarget::from_worker_args(args) else {
        bail!("usage: swex {WORKER_SUBCOMMAND} (--builtin NAME | --library PATH)");
    };
    let code = swex_plugin_host::worker::run_worker(&target, &builtin_explorers());
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
