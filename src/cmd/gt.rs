//! `swex gt`: build line-level ground truth from repair trajectories, and measure how much of an
//! existing ground truth a set of trajectories' reads covers. Argument parsing and printing only;
//! the work is in `swex_bench::gt`.

use crate::out::shown;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use swex_bench::gt::build::{
    self, BuildOptions, ModelRule, Progress, SnapshotRoot, VerdictScopes, Verdicts,
};
use swex_bench::gt::coverage;
use swex_bench::gt::load::{self, Problem};
use swex_bench::gt::reads::ReadPolicy;
use swex_bench::gt::repo::{LineCountTable, RepoView, SnapshotDir};

#[derive(Subcommand, Debug)]
pub enum GtCommand {
    /// Build benchmark rows (reference schema, one per instance) from successful trajectories.
    Build(BuildArgs),
    /// Measure how much of a benchmark's core ground truth the trajectories' reads cover.
    Coverage(CoverageArgs),
    /// Show, step by step, what one trajectory file read and what was discarded and why.
    Reads(ReadsArgs),
}

#[derive(Args, Debug)]
pub struct ReadsArgs {
    /// A trajectory file.
    trajectory: PathBuf,
    /// The instance's snapshot directory.
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// `reference` or `shown` (see `swex gt build --help`).
    #[arg(long, default_value = "reference", value_name = "POLICY")]
    reads: ReadPolicy,
    /// Also list discarded reads of agent scratch files and paths outside the repository.
    #[arg(long)]
    all: bool,
}

#[derive(Args, Debug)]
pub struct InputArgs {
    /// Trajectory directories or files (mini-swe-agent v1/v2, SWE-agent, OpenHands, unified).
    #[arg(long, num_args = 1.., required = true, value_name = "DIR")]
    trajectories: Vec<PathBuf>,
    /// Harness verdicts ({instance_id: bool}, a list of resolved ids, or a SWE-bench report) for
    /// all trajectories. Default: each `resolved.json` found applies to the runs in its directory.
    #[arg(long, value_name = "FILE")]
    resolved: Option<PathBuf>,
    /// Use trajectories of unresolved instances too (ignore `resolved.json`).
    #[arg(long, conflicts_with = "resolved")]
    include_unresolved: bool,
    /// What counts as read: `reference` (as the official ground truth was built) or `shown`
    /// (only lines the agent was provably shown).
    #[arg(long, default_value = "reference", value_name = "POLICY")]
    reads: ReadPolicy,
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Snapshot root: the repository of instance X is DIR/X.
    #[arg(long, value_name = "DIR")]
    repos: PathBuf,
    /// Attribute trajectories whose path matches the regex PATTERN to model NAME (repeatable;
    /// first match wins; default: the model the trajectory records, else its directory name).
    #[arg(long = "model-of", value_name = "PATTERN=NAME")]
    model_of: Vec<ModelRule>,
    /// Skip instances with fewer successful trajectories.
    #[arg(long, default_value_t = 1, value_name = "N")]
    min_trajectories: usize,
    /// Output JSONL file.
    #[arg(long, value_name = "FILE")]
    output: PathBuf,
}

#[derive(Args, Debug)]
pub struct CoverageArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Benchmark JSONL whose `read_core_regions` are measured.
    #[arg(long, value_name = "FILE")]
    bench: PathBuf,
    /// Snapshot root (DIR/<instance_id>); used when the instance's directory exists.
    #[arg(long, value_name = "DIR")]
    repos: Option<PathBuf>,
    /// `{instance_id: {path: line_count}}` for instances without a snapshot; only the listed
    /// files are known to exist.
    #[arg(long, value_name = "FILE")]
    line_counts: Option<PathBuf>,
    /// Print every missed region with its cause.
    #[arg(long)]
    misses: bool,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(command: GtCommand) -> anyhow::Result<ExitCode> {
    match command {
        GtCommand::Build(args) => run_build(args),
        GtCommand::Coverage(args) => run_coverage(args),
        GtCommand::Reads(args) => run_reads(args),
    }
}

/// The trajectory files and the verdicts that apply to them.
struct Inputs {
    files: Vec<PathBuf>,
    verdicts: VerdictScopes,
    problems: Vec<Problem>,
}

fn discover_inputs(input: &InputArgs) -> anyhow::Result<Inputs> {
    let discovery = load::discover(&input.trajectories);
    let mut problems = discovery.problems;
    let mut verdicts = VerdictScopes::default();
    if let Some(path) = &input.resolved {
        let v = Verdicts::load(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        verdicts = VerdictScopes::global(v);
    } else if !input.include_unresolved {
        for path in &discovery.resolved_files {
            match Verdicts::load(path) {
                Ok(v) => {
                    errln!("gt: using verdicts {}", path.display());
                    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                    verdicts.add_directory(dir, v);
                }
                Err(e) => problems.push(Problem::new(path, None, e)),
            }
        }
    }
    if discovery.trajectory_files.is_empty() {
        bail!("no trajectory files under {:?}", input.trajectories);
    }
    errln!(
        "gt: reading {} trajectory files",
        discovery.trajectory_files.len()
    );
    Ok(Inputs {
        files: discovery.trajectory_files,
        verdicts,
        problems,
    })
}

/// Prints progress at every tenth of the work, once per step.
fn progress_printer() -> impl Fn(Progress) + Sync {
    let shown = [AtomicUsize::new(0), AtomicUsize::new(0)];
    move |p| {
        let (slot, done, total, what) = match p {
            Progress::Loaded { done, total } => (0, done, total, "trajectory files read"),
            Progress::Built { done, total } => (1, done, total, "instances built"),
        };
        let step = (total / 10).max(1);
        if (done % step == 0 || done == total)
            && shown[slot].fetch_max(done, Ordering::Relaxed) < done
        {
            errln!("gt: {done}/{total} {what}");
        }
    }
}

fn print_problems(problems: &[Problem]) {
    for p in problems {
        errln!("gt: skipped {p}");
    }
}

fn run_build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    if !args.repos.is_dir() {
        bail!("--repos {}: not a directory", args.repos.display());
    }
    let inputs = discover_inputs(&args.input)?;
    print_problems(&inputs.problems);
    let options = BuildOptions {
        policy: args.input.reads,
        min_trajectories: args.min_trajectories,
        model_rules: args.model_of,
        verdicts: inputs.verdicts,
    };
    let snapshots = SnapshotRoot {
        root: args.repos.clone(),
    };
    let (rows, report) = build::build(&inputs.files, &snapshots, &options, &progress_printer());
    print_problems(&report.problems);
    for s in &report.skipped {
        errln!("gt: no row for {}: {}", s.instance_id, s.reason);
    }
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&args.output)
            .with_context(|| format!("creating {}", args.output.display()))?,
    );
    for row in &rows {
        serde_json::to_writer(&mut out, row)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    let problems = inputs.problems.len() + report.problems.len();
    errln!(
        "gt: wrote {} rows to {} ({} trajectories read, {} used, {} of unresolved instances skipped, {} instances without a row, {} input problems; reads: {})",
        rows.len(),
        args.output.display(),
        report.trajectories_read,
        report.trajectories_used,
        report.unresolved,
        report.skipped.len(),
        problems,
        options.policy.name(),
    );
    let missing_snapshots = report
        .skipped
        .iter()
        .any(|s| s.reason.starts_with("no repository snapshot"));
    Ok(if problems == 0 && !missing_snapshots {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_coverage(args: CoverageArgs) -> anyhow::Result<ExitCode> {
    let rows = load::load_bench_rows(&args.bench)?;
    let counts = match &args.line_counts {
        Some(path) => load::load_line_counts(path)?,
        None => BTreeMap::new(),
    };
    if args.repos.is_none() && args.line_counts.is_none() {
        bail!("give --repos (snapshots) or --line-counts (line counts of the ground-truth files)");
    }
    let inputs = discover_inputs(&args.input)?;
    print_problems(&inputs.problems);
    let (trajectories, problems) = build::load_all(&inputs.files, &progress_printer());
    print_problems(&problems);
    let options = BuildOptions {
        policy: args.input.reads,
        verdicts: inputs.verdicts,
        ..BuildOptions::default()
    };
    let mut report = build::BuildReport::default();
    let groups = build::group(trajectories, &options, &mut report);
    print_problems(&report.problems);
    let repos = args.repos.clone();
    let view_for = |id: &str| -> Option<Box<dyn RepoView>> {
        if let Some(root) = &repos {
            let dir = root.join(id);
            if dir.is_dir() {
                return Some(Box::new(SnapshotDir::new(dir)));
            }
        }
        counts
            .get(id)
            .map(|c| Box::new(LineCountTable::new(c.clone())) as Box<dyn RepoView>)
    };
    let measured = coverage::measure(&rows, &groups, &view_for, options.policy);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&coverage_json(&measured))?
        );
    } else {
        print_coverage(&measured, args.misses);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_coverage(report: &coverage::CoverageReport, misses: bool) {
    outln!("instance                                  trajs  core lines  covered  fraction");
    for i in &report.instances {
        outln!(
            "{:<40} {:>6} {:>11} {:>8} {:>9.4}",
            i.instance_id,
            i.trajectories,
            i.core_lines,
            i.covered_lines,
            i.fraction()
        );
    }
    outln!(
        "\n{} instances, reads policy `{}`: {} of {} core lines covered = {:.4} (mean per instance {:.4})",
        report.instances.len(),
        report.policy.name(),
        report.covered_lines(),
        report.core_lines(),
        report.fraction(),
        report.mean_instance_fraction()
    );
    let clipped: u64 = report.instances.iter().map(|i| i.clipped_lines).sum();
    if clipped > 0 {
        outln!("({clipped} core lines past the end of their file left out)");
    }
    let by_cause = report.misses_by_cause();
    if !by_cause.is_empty() {
        outln!("\nmissed lines by cause:");
        for (cause, n) in by_cause {
            outln!("  {n:>7}  {cause}");
        }
    }
    if misses {
        outln!("\nmissed regions:");
        for i in &report.instances {
            for m in &i.misses {
                outln!(
                    "  {}  {}:{}  ({})",
                    i.instance_id,
                    shown(&m.path),
                    m.lines,
                    m.cause
                );
            }
        }
    }
    if !report.skipped.is_empty() {
        outln!("\nnot measured: {}", report.skipped.len());
        for (id, why) in &report.skipped {
            outln!("  {id}: {why}");
        }
    }
}

fn coverage_json(report: &coverage::CoverageReport) -> serde_json::Value {
    serde_json::json!({
        "policy": report.policy.name(),
        "core_lines": report.core_lines(),
        "covered_lines": report.covered_lines(),
        "fraction": report.fraction(),
        "mean_instance_fraction": report.mean_instance_fraction(),
        "misses_by_cause": report.misses_by_cause().iter().map(|(c, n)| serde_json::json!({"cause": c.to_string(), "lines": n})).collect::<Vec<_>>(),
        "instances": report.instances.iter().map(|i| serde_json::json!({
            "instance_id": i.instance_id,
            "trajectories": i.trajectories,
            "core_lines": i.core_lines,
            "covered_lines": i.covered_lines,
            "clipped_lines": i.clipped_lines,
            "misses": i.misses.iter().map(|m| serde_json::json!({"path": m.path, "lines": m.lines.to_string(), "cause": m.cause.to_string()})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "skipped": report.skipped.iter().map(|(id, why)| serde_json::json!({"instance_id": id, "reason": why})).collect::<Vec<_>>(),
    })
}

fn run_reads(args: ReadsArgs) -> anyhow::Result<ExitCode> {
    if !args.repo.is_dir() {
        bail!("--repo {}: not a directory", args.repo.display());
    }
    let (trajectories, problems) = load::load_file(&args.trajectory);
    print_problems(&problems);
    let repo = SnapshotDir::new(&args.repo);
    for t in &trajectories {
        outln!(
            "{} ({}, instance {}, model {})",
            t.source.display(),
            t.format,
            t.instance_id.as_deref().unwrap_or("?"),
            t.model.as_deref().unwrap_or("?")
        );
        let extraction = swex_bench::gt::reads::extract(t, &repo, args.reads);
        for step in &t.steps {
            let reads: Vec<String> = extraction
                .reads
                .iter()
                .filter(|r| r.step == step.index)
                .map(|r| format!("{}:{}", r.path, r.lines))
                .collect();
            let discards: Vec<String> = extraction
                .discards
                .iter()
                .filter(|d| d.step == step.index)
                .filter(|d| {
                    args.all
                        || !matches!(
                            d.reason,
                            swex_bench::gt::reads::DiscardReason::Temporary
                                | swex_bench::gt::reads::DiscardReason::Outside
                        )
                })
                .map(|d| {
                    let what = d.path.as_deref().unwrap_or(&d.raw);
                    match &d.lines {
                        Some(l) => format!("{what}:{l} ({})", d.reason),
                        None => format!("{what} ({})", d.reason),
                    }
                })
                .collect();
            if reads.is_empty() && discards.is_empty() {
                continue;
            }
            outln!(
                "step {:>4}  {}",
                step.index,
                shown(&summarize(&step.action))
            );
            for r in reads {
                outln!("    read     {}", shown(&r.to_string()));
            }
            for d in discards {
                outln!("    discard  {}", shown(&d.to_string()));
            }
        }
        if !extraction.modified.is_empty() {
            let modified: Vec<&str> = extraction.modified.iter().map(String::as_str).collect();
            outln!("modified: {}", modified.join(", "));
        }
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn summarize(action: &swex_bench::gt::trajectory::Action) -> String {
    use swex_bench::gt::trajectory::Action;
    let text = match action {
        Action::Shell { command } => command.clone(),
        Action::View { path, range } => match range {
            Some((a, b)) => format!("view {path} [{a}, {b}]"),
            None => format!("view {path}"),
        },
        Action::Window { path, .. } => format!("window {}", path.as_deref().unwrap_or("")),
        Action::Edit { path } => format!("edit {path}"),
        Action::Rejected { text } => format!("(rejected) {text}"),
        Action::Other => String::new(),
    };
    let one_line = text.replace('\n', " \u{23ce} ");
    match one_line.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}
