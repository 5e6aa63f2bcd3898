//! `swex bench`: run explorers over a benchmark, score every answer, and write result rows.
//! Two tasks: SWE-Explore (`--task swe-explore`, the default: every top-k, rows in
//! `results/{explorer}/top{k}.jsonl`; the run is `swex_bench::runner`) and code search
//! (`--task codesearch`: NDCG@10 per query, rows in `results/codesearch/{explorer}.jsonl`; the run
//! is `swex_bench::codesearch::run`). Argument parsing, explorer setup and printing.

use crate::cmd::explorers::{BenchSetup, bench_setup, registry};
use crate::out::shown;
use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use swex_bench::dataset::{Benchmark, LoadOptions, load_issue_map};
use swex_bench::input::{MAX_DOCUMENT_BYTES, read_text};
use swex_bench::results::OpenMode;
use swex_bench::runner::{
    BenchExplorer, DEFAULT_OUTPUT, FnOpener, FsOpener, InstanceEvent, OutputTemplate, Plan, Run,
    RunConfig, RunObserver, RunSummary, ServicesOpener, Shard, SnapshotSource, parse_top_ks,
    select_instances,
};
use swex_engine::search::DenseUse;
use swex_engine::snapshot::RepoLocator;
use swex_plugin_host::{EngineBackend, RawServices};

/// Which benchmark `--bench` is.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// SWE-Explore: a bench.jsonl of issues with line-level ground truth.
    SweExplore,
    /// Code search: a folder with repos.json and annotations/ (the semble benchmark's layout).
    Codesearch,
}

/// Where a run's snapshots are, and where to make the missing ones from (`swex bench`,
/// `swex train`).
#[derive(Args, Debug, Clone)]
pub struct SnapshotArgs {
    /// Snapshot folder: repos/<instance_id> (code search: repos/<repository name>). With
    /// --git-dir or --mirrors, missing snapshots are materialised here on the fly.
    #[arg(long, value_name = "DIR", default_value = "repos")]
    pub repos: PathBuf,
    #[command(flatten)]
    pub from: super::snapshot::RepoSourceArgs,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The benchmark: a bench.jsonl (the reference's schema), or with `--task codesearch` the
    /// folder holding repos.json and annotations/.
    #[arg(long, value_name = "PATH")]
    pub bench: PathBuf,
    /// Which benchmark to run.
    #[arg(long, value_enum, default_value = "swe-explore")]
    pub task: Task,
    /// Code search: search the whole checkout instead of each repository's `benchmark_root`
    /// (what the published methods searched).
    #[arg(long)]
    pub whole_checkout: bool,
    /// JSON object {instance_id: issue text}; its texts take precedence over problem_statement.
    #[arg(long, value_name = "FILE")]
    pub issue_map: Option<PathBuf>,
    #[command(flatten)]
    pub snapshots: SnapshotArgs,
    /// Explorers to run, comma-separated (see `swex explorers`).
    #[arg(long, short = 'e', value_delimiter = ',', required = true)]
    pub explorers: Vec<String>,
    /// Top-k cuts, comma-separated: each explorer runs once at the largest, the others are cuts.
    /// [default: 5; code search always scores the top 10].
    #[arg(long, short = 'k')]
    pub top_k: Option<String>,
    /// Line budget of every request: explorers return regions holding at most N lines, counted
    /// with real file lengths (a whole file costs its length) [default: each explorer's own].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: Option<u64>,
    /// The ks of the localization metrics (file/module/function Acc@k, Recall@k, NDCG@k, MAP@k)
    /// scored on rows whose ground truth comes from a fix (`swex dataset import`), e.g.
    /// `file=1,3,5,10;function=5,10` [default: file 1,3,5,10; module and function 5,10].
    #[arg(long, value_name = "LEVEL=K,…", value_parser = swex_bench::locmetrics::LocKs::parse)]
    pub loc_k: Option<swex_bench::locmetrics::LocKs>,
    /// Instances worked on at the same time [default: the number of CPUs].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// Output path template; placeholders {explorer}, {k}, {shard} [default:
    /// results/{explorer}/top{k}.jsonl; code search: results/codesearch/{explorer}.jsonl, {explorer}
    /// only].
    #[arg(long, short = 'o')]
    pub output: Option<String>,
    /// Keep the rows already in the output files and run only the missing (instance, explorer, k).
    #[arg(long, conflicts_with = "overwrite")]
    pub resume: bool,
    /// Replace existing output files.
    #[arg(long)]
    pub overwrite: bool,
    /// Run only shard i of N (0-based): the instances at positions i, i+N, ... of the sorted ids.
    #[arg(long, value_name = "i/N")]
    pub shard: Option<Shard>,
    /// Run explorers in child processes: a crash or hang fails one instance, not the run.
    /// Command explorers (Python files, manifests, executables) always run so.
    #[arg(long)]
    pub isolated: bool,
    /// Time limit per explorer call in seconds (explorers in child processes).
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Only the first N instances (after --instances).
    #[arg(long, short = 'n')]
    pub limit: Option<usize>,
    /// Only these instances (code search: repositories), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub instances: Vec<String>,
    /// An explorer's config: `NAME=JSON` or `NAME=@FILE`. Repeatable.
    #[arg(long = "explorer-config", value_name = "NAME=JSON")]
    pub explorer_configs: Vec<String>,
    /// Explorers whose requests carry the ground truth [default: oracle]. Repeatable.
    #[arg(long = "ground-truth-for", value_name = "NAME")]
    pub ground_truth_for: Vec<String>,
    /// An explorer file — a plugin library, a Python file defining `explore`, a .json manifest,
    /// an executable speaking the worker protocol — or a folder of them (repeatable).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Plain progress lines even on a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Serve explorers from the engine's index of each snapshot (built once, then reused from the
    /// cache) instead of the plain files; explorers that search (`bm25`, ...) need it.
    #[arg(long)]
    pub index: bool,
    #[command(flatten)]
    pub engine: super::index::EngineArgs,
    /// What a code search's `dense: "auto"` means for the explorers served from the index (the
    /// `swex` explorer's short queries, the `search` explorer unless its config says): `auto`
    /// fuses dense scores when the embedding model is installed, `off` never (the scores of a
    /// machine without the model), `on` always (queries fail without the model).
    #[arg(long, value_enum, default_value_t = super::search::DenseScores::Auto, value_name = "WHEN")]
    pub dense_scores: super::search::DenseScores,
}

/// The benchmark-aware defaults of an explorer, from its built-in row's [`BenchSetup`]: a config
/// (`null`: the explorer's own default) and whether its requests carry the ground truth.
fn default_setup(name: &str, bench: &Path) -> (serde_json::Value, bool) {
    match bench_setup(name) {
        BenchSetup::GroundTruth => (serde_json::Value::Null, true),
        BenchSetup::BenchFile => (
            serde_json::json!({ "bench_file": bench.display().to_string() }),
            false,
        ),
        BenchSetup::Plain => (serde_json::Value::Null, false),
    }
}

fn parse_configs(items: &[String]) -> anyhow::Result<BTreeMap<String, serde_json::Value>> {
    let mut configs = BTreeMap::new();
    for item in items {
        let (name, text) = item.split_once('=').with_context(|| {
            format!("--explorer-config {item:?}: expected NAME=JSON or NAME=@FILE")
        })?;
        let (json, origin) = match text.strip_prefix('@') {
            Some(path) => (
                read_text(Path::new(path), MAX_DOCUMENT_BYTES).map_err(|e| {
                    anyhow::anyhow!("--explorer-config {name}: {path}: {}", e.reason())
                })?,
                path.to_string(),
            ),
            None => (text.to_string(), format!("--explorer-config {name}")),
        };
        let value: serde_json::Value =
            serde_json::from_str(&json).with_context(|| format!("{origin}: not valid JSON"))?;
        if configs.insert(name.to_string(), value).is_some() {
            bail!("--explorer-config {name} is given twice");
        }
    }
    Ok(configs)
}

/// The explorers of `-e`: built-ins and plugins through the host, each created once with its
/// config (in-process, or a pool of isolated workers with `--isolated`).
pub(super) fn make_explorers(
    args: &BenchArgs,
    bench_path: &Path,
) -> anyhow::Result<Vec<BenchExplorer>> {
    let mut configs = parse_configs(&args.explorer_configs)?;
    for name in configs.keys() {
        if !args.explorers.contains(name) {
            bail!("--explorer-config {name}: `{name}` is not among --explorers");
        }
    }
    let registry = registry(&args.plugins)?;
    // Every name is checked before any explorer is created.
    for name in &args.explorers {
        registry.find(name)?;
    }
    let mut explorers = Vec::new();
    for name in &args.explorers {
        let (default_config, default_sees) = default_setup(name, bench_path);
        let entry = registry.find(name)?;
        let default_config = if default_config.is_null() {
            entry.explorer.default_config()
        } else {
            default_config
        };
        let config = configs.remove(name).unwrap_or(default_config);
        let sees_ground_truth = if args.ground_truth_for.is_empty() {
            default_sees
        } else {
            args.ground_truth_for.contains(name)
        };
        // An isolated explorer starts its first worker now, so that a bad config fails before
        // the run; it starts one more for each call in parallel.
        let explorer = super::explorers::explorer_handle(
            &entry.explorer,
            config.clone(),
            args.isolated,
            Duration::from_secs_f64(args.timeout),
            false,
        )
        .with_context(|| format!("creating explorer {name}"))?;
        explorers.push(BenchExplorer {
            name: name.clone(),
            config,
            build: entry.explorer.build_identity()?,
            sees_ground_truth,
            explorer: Box::new(explorer),
        });
    }

    Ok(explorers)
}

/// Services and the warnings of opening them.
type OpenedServices = (Box<dyn RawServices>, Vec<String>);

/// Services from the engine's index of each snapshot (built once, then reused from the cache),
/// with the full dense index too under `--dense`; `dense_auto` is what a code search's
/// `dense: "auto"` means there.
pub(super) fn engine_opener<'a>(
    engine: &'a swex_engine::index::Engine,
    engine_args: &'a super::index::EngineArgs,
    dense_auto: DenseUse,
) -> FnOpener<impl Fn(&Path) -> Result<OpenedServices, String> + 'a> {
    FnOpener {
        name: "engine".into(),
        open: move |dir: &Path| -> Result<OpenedServices, String> {
            let index = engine
                .open(dir)
                .map_err(|e| format!("indexing {}: {e}", dir.display()))?;
            engine_args
                .build_dense(&index)
                .map_err(|e| format!("{e:#}"))?;
            Ok((
                Box::new(EngineBackend::new(index).with_dense_auto(dense_auto)),
                Vec::new(),
            ))
        },
    }
}

/// The locator missing snapshots are made from; none without a git directory or mirror folder.
pub(super) fn build_locator(args: &SnapshotArgs) -> anyhow::Result<Option<RepoLocator>> {
    if args.from.is_empty() {
        return Ok(None);
    }
    args.from.locator().map(Some)
}

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        bail!("--timeout must be a positive number of seconds");
    }
    if args.task == Task::Codesearch {
        return super::bench_codesearch::run(&args);
    }
    if args.whole_checkout {
        bail!("--whole-checkout is for --task codesearch");
    }
    let top_ks = parse_top_ks(args.top_k.as_deref().unwrap_or("5"))?;
    let output = OutputTemplate::new(
        args.output
            .clone()
            .unwrap_or_else(|| DEFAULT_OUTPUT.to_string()),
    )?;
    if args.shard.is_some() && !output.has("shard") {
        errln!(
            "note: --output has no {{shard}} placeholder; run each shard on its own machine or give \
             each its own --output, then `swex merge`"
        );
    }
    let bench_path = std::fs::canonicalize(&args.bench)
        .with_context(|| format!("--bench {}", args.bench.display()))?;
    let mut bench = Benchmark::load(&bench_path, &LoadOptions::default())?;
    if !bench.excluded_empty_core.is_empty() {
        errln!(
            "note: {} rows without core regions are left out (as the reference runner does)",
            bench.excluded_empty_core.len()
        );
    }
    if let Some(path) = &args.issue_map {
        let issues = load_issue_map(path)?;
        let join = bench.join_issues(&issues);
        errln!(
            "{}: issue texts for {} instances",
            path.display(),
            join.from_map
        );
    }
    let instances = select_instances(&bench, &args.instances, args.limit, args.shard)?;

    let explorers = make_explorers(&args, &bench_path)?;

    let snapshots = SnapshotSource {
        repos: args.snapshots.repos.clone(),
        locator: build_locator(&args.snapshots)?,
    };
    if snapshots.locator.is_none() && !args.snapshots.repos.is_dir() {
        bail!(
            "--repos {}: not a folder (make snapshots with `swex snapshot`, or pass --git-dir / \
             --mirrors to make them on the fly)",
            args.snapshots.repos.display()
        );
    }
    let workers = args.workers.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let mode = if args.resume {
        OpenMode::Resume
    } else if args.overwrite {
        OpenMode::Overwrite
    } else {
        OpenMode::Create
    };
    // One engine for the whole run: its open pools are shared by the snapshots of a repository.
    let engine = args.index.then(|| args.engine.engine());
    let engine_opener = engine
        .as_ref()
        .map(|engine| engine_opener(engine, &args.engine, args.dense_scores.into()));
    let services: &dyn ServicesOpener = match &engine_opener {
        Some(opener) => opener,
        None => &FsOpener,
    };
    let run = Run {
        bench: &bench,
        instances,
        explorers: &explorers,
        snapshots: &snapshots,
        services,
        config: RunConfig {
            top_ks,
            workers,
            mode,
            output,
            shard: args.shard,
            line_budget: args.budget,
            loc_ks: args.loc_k.clone().unwrap_or_default(),
        },
    };
    let fancy = std::io::stderr().is_terminal() && !args.plain && !args.engine.quiet;
    let observer = Progress::new(fancy, args.engine.quiet);
    let summary = run.execute(&observer)?;
    observer.finish();
    print_summary(&summary);
    Ok(ExitCode::SUCCESS)
}

/// Progress on stderr: a bar with ETA on a terminal, one line per instance otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    /// Only failures, warnings and the summary (`--quiet`).
    quiet: bool,
    state: Mutex<ProgressState>,
}

struct ProgressState {
    total: usize,
    done: usize,
    failed_calls: usize,
    started: Instant,
}

impl Progress {
    fn new(fancy: bool, quiet: bool) -> Progress {
        let bar = fancy.then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} instances  {elapsed} elapsed, ETA {eta}  {msg}",
                )
                .expect("valid template"),
            );
            bar
        });
        Progress {
            bar,
            quiet,
            state: Mutex::new(ProgressState {
                total: 0,
                done: 0,
                failed_calls: 0,
                started: Instant::now(),
            }),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// One line of progress; what it quotes (ids, paths, explorer messages) is [`shown`].
    fn say(&self, line: &str) {
        let line = shown(line);
        let line = line.as_ref();
        match &self.bar {
            Some(bar) => bar.println(line),
            None => errln!("{line}"),
        }
    }
}

impl RunObserver for Progress {
    fn started(&self, plan: &Plan) {
        for (path, line, bytes) in &plan.torn_lines {
            self.say(&format!(
                "repaired {}: cut off a torn last line {line} ({bytes} bytes) left by an interrupted run",
                path.display()
            ));
        }
        self.say(&format!(
            "{} instances: {} to run ({} explorer calls), {} rows already present; writing {}",
            plan.instances,
            plan.to_run,
            plan.calls,
            plan.rows_present,
            plan.files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut state = self.state.lock().expect("progress lock");
        state.total = plan.to_run;
        state.started = Instant::now();
        if let Some(bar) = &self.bar {
            bar.set_length(plan.to_run as u64);
            bar.reset_elapsed();
        }
    }

    fn instance_done(&self, event: &InstanceEvent) {
        let mut state = self.state.lock().expect("progress lock");
        state.done += 1;
        state.failed_calls += event.failures.len();
        for (explorer, reason) in &event.failures {
            self.say(&format!(
                "{}: {explorer} failed: {}",
                event.instance_id,
                first_line(reason)
            ));
        }
        for warning in &event.warnings {
            self.say(&format!("{}: warning: {warning}", event.instance_id));
        }
        match &self.bar {
            Some(bar) => {
                bar.set_message(if state.failed_calls > 0 {
                    format!("{} failed calls", state.failed_calls)
                } else {
                    String::new()
                });
                bar.inc(1);
            }
            None if self.quiet => {}
            None => {
                let elapsed = state.started.elapsed().as_secs_f64();
                let eta = elapsed / state.done as f64 * (state.total - state.done) as f64;
                errln!(
                    "[{}/{}] {} ({} calls, {} failed, {:.1}s)  elapsed {:.0}s, ETA {:.0}s",
                    state.done,
                    state.total,
                    shown(&event.instance_id),
                    event.calls,
                    event.failures.len(),
                    event.seconds,
                    elapsed,
                    eta
                );
            }
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The end-of-run table: means per explorer × k over the selected instances (failures as zeros).
fn print_summary(summary: &RunSummary) {
    errln!(
        "done in {:.1}s: {} rows written, {} failed explorer calls",
        summary.seconds,
        summary.rows_written,
        summary.failures
    );
    // The key metrics of the metrics list, with their short labels.
    let shown: Vec<(&str, &str)> = swex_bench::metric_list::key_labels().collect();
    let width = summary
        .means
        .iter()
        .map(|m| m.explorer.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut header = format!(
        "{:<width$} {:>4} {:>5} {:>6}",
        "explorer", "k", "n", "failed"
    );
    for (_, label) in &shown {
        header.push_str(&format!(" {label:>8}"));
    }
    outln!("{header}");
    for row in &summary.means {
        let mut line = format!(
            "{:<width$} {:>4} {:>5} {:>6}",
            row.explorer, row.top_k, row.instances, row.failures
        );
        for (metric, _) in &shown {
            line.push_str(&format!(
                " {:>8.4}",
                row.mean.get(metric).expect("known metric")
            ));
        }
        outln!("{line}");
    }
    outln!("(means over instances, failures as zeros; all 17 metrics: swex report)");
    // Rows whose ground truth comes from a fix (`swex dataset import`): LocAgent's Acc@k too,
    // and at file level Hit@k (a gold file within the first k: the field's other "Acc@k").
    for row in summary.means.iter().filter(|r| !r.loc.is_empty()) {
        let mut acc: Vec<(&String, &f64)> = row
            .loc
            .iter()
            .filter(|(key, _)| swex_bench::locmetrics::is_headline(key))
            .collect();
        acc.sort_by_key(|(key, _)| swex_bench::locmetrics::display_order(key));
        let acc: Vec<String> = acc
            .iter()
            .map(|(key, value)| format!("{key}={value:.4}"))
            .collect();
        outln!("{} top{}: {}", row.explorer, row.top_k, acc.join(" "));
    }
}
