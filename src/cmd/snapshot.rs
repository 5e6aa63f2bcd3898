//! `swex snapshot`: materialise `<out>/<instance_id>` at each benchmark row's `base_commit`.
//!
//! Argument parsing, reading the benchmark rows and printing; the work is
//! `swex_engine::snapshot::run_batch`.

use crate::out::shown;
use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use swex_bench::input::{Lines, MAX_DOCUMENT_BYTES, read_text};
use swex_engine::snapshot::{
    BatchOptions, BatchReport, GithubFetcher, InstanceOutcome, PlainName, Progress, RepoLocator,
    SnapshotJob, run_batch,
};

/// Where repositories' commits are found locally: the arguments `swex snapshot`, `swex bench`
/// and `swex train` share, and the one place they become a [`RepoLocator`].
#[derive(Args, Debug, Clone)]
pub struct RepoSourceArgs {
    /// A git directory (bare, or a work tree) for a repository: `owner/name=GITDIR`. Repeatable.
    #[arg(long = "git-dir", value_name = "OWNER/NAME=GITDIR")]
    pub git_dirs: Vec<String>,
    /// A folder of mirrors: `DIR/<owner>+<name>/repo`, `DIR/<owner>+<name>`,
    /// `DIR/<owner>/<name>.git` or `DIR/<owner>/<name>`. Repeatable.
    #[arg(long, value_name = "DIR")]
    pub mirrors: Vec<PathBuf>,
    /// JSON object `{"owner/name": "holder-owner/holder-name"}`: where a repository's commits live.
    #[arg(long, value_name = "FILE")]
    pub sources: Option<PathBuf>,
}

impl RepoSourceArgs {
    /// True when no git directory or mirror folder was given.
    pub fn is_empty(&self) -> bool {
        self.git_dirs.is_empty() && self.mirrors.is_empty()
    }

    /// The locator of these git directories, mirrors and sources (without GitHub).
    pub fn locator(&self) -> anyhow::Result<RepoLocator> {
        let mut git_dirs = BTreeMap::new();
        for spec in &self.git_dirs {
            let (repo, dir) = spec
                .split_once('=')
                .filter(|(repo, _)| repo.contains('/'))
                .with_context(|| format!("--git-dir {spec:?}: expected OWNER/NAME=GITDIR"))?;
            git_dirs.insert(repo.to_string(), PathBuf::from(dir));
        }
        let sources = match &self.sources {
            Some(path) => {
                let text = read_text(path, MAX_DOCUMENT_BYTES)?;
                serde_json::from_str(&text).with_context(|| {
                    format!(
                        "{}: expected a JSON object of \"owner/name\": \"owner/name\"",
                        path.display()
                    )
                })?
            }
            None => BTreeMap::new(),
        };
        Ok(RepoLocator {
            git_dirs,
            mirror_dirs: self.mirrors.clone(),
            sources,
            github: None,
        })
    }
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Benchmark JSONL; each row needs `instance_id`, `repo` (owner/name) and `base_commit`.
    #[arg(long, value_name = "FILE")]
    pub bench: PathBuf,
    #[command(flatten)]
    pub from: RepoSourceArgs,
    /// Output folder: snapshots go to `OUT/<instance_id>`, markers to `OUT/.swex/`.
    #[arg(long, value_name = "DIR", default_value = "repos")]
    pub out: PathBuf,
    /// Only these instances (comma-separated ids).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub instances: Vec<String>,
    /// Replace snapshots at another commit, and folders without a swex marker.
    #[arg(long)]
    pub force: bool,
    /// Fetch commits not found locally from https://github.com/<owner>/<name> (needs network).
    #[arg(long)]
    pub from_github: bool,
    /// Cache of mirrors fetched with --from-github [default: ~/.cache/swex/mirrors].
    #[arg(long, value_name = "DIR")]
    pub github_cache: Option<PathBuf>,
    /// Snapshots made at the same time.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub jobs: usize,
    /// Write the per-instance results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

pub fn run(args: SnapshotArgs) -> anyhow::Result<ExitCode> {
    let mut jobs = read_jobs(&args.bench)?;
    if !args.instances.is_empty() {
        let wanted: BTreeSet<&str> = args.instances.iter().map(String::as_str).collect();
        let known: BTreeSet<&str> = jobs.iter().map(|j| j.instance_id.as_str()).collect();
        let unknown: Vec<&str> = wanted.difference(&known).copied().collect();
        if !unknown.is_empty() {
            bail!(
                "--instances: not in {}: {}",
                args.bench.display(),
                unknown.join(", ")
            );
        }
        jobs.retain(|j| wanted.contains(j.instance_id.as_str()));
    }
    let locator = build_locator(&args)?;
    if locator.git_dirs.is_empty() && locator.mirror_dirs.is_empty() && locator.github.is_none() {
        bail!(
            "say where the repositories are: --git-dir OWNER/NAME=GITDIR, --mirrors DIR or --from-github"
        );
    }
    let options = BatchOptions {
        out: args.out.clone(),
        force: args.force,
        jobs: args.jobs.max(1),
    };
    let started = std::time::Instant::now();
    let report = run_batch(&jobs, &locator, &options, &print_progress)?;
    print_summary(&report, started.elapsed().as_secs_f64());
    if let Some(path) = &args.report {
        let json = serde_json::to_vec_pretty(&report_json(&report))?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The three fields a snapshot needs from a benchmark row; every other field is ignored.
#[derive(Deserialize)]
struct RowFields {
    instance_id: Option<String>,
    repo: Option<String>,
    base_commit: Option<String>,
}

fn read_jobs(path: &Path) -> anyhow::Result<Vec<SnapshotJob>> {
    // Each row at most `MAX_ROW_BYTES`, the file at most `MAX_JSONL_BYTES` (swex_bench::input).
    let mut lines = Lines::open(path)?;
    let mut jobs = Vec::new();
    while let Some(line) = lines.next_line()? {
        let at = format!("{}:{}", path.display(), line.number);
        let line = std::str::from_utf8(line.bytes)
            .map_err(|_| anyhow::anyhow!("{at}: not valid UTF-8"))?;
        if line.trim().is_empty() {
            continue;
        }
        let row: RowFields =
            serde_json::from_str(line).with_context(|| format!("{at}: not a JSON object row"))?;
        let field = |value: Option<String>, name: &str| {
            value
                .filter(|v| !v.is_empty())
                .with_context(|| format!("{at}: missing or empty field `{name}`"))
        };
        // Checked here, before any path exists: the id becomes `<out>/<id>`.
        let instance_id = PlainName::new(field(row.instance_id, "instance_id")?)
            .with_context(|| format!("{at}: field `instance_id`"))?;
        jobs.push(SnapshotJob {
            instance_id,
            repo: field(row.repo, "repo")?,
            commit: field(row.base_commit, "base_commit")?,
        });
    }
    Ok(jobs)
}

fn build_locator(args: &SnapshotArgs) -> anyhow::Result<RepoLocator> {
    let mut locator = args.from.locator()?;
    if args.from_github {
        let cache = match &args.github_cache {
            Some(dir) => dir.clone(),
            None => GithubFetcher::default_cache()
                .context("no user cache folder here; pass --github-cache DIR")?,
        };
        locator.github = Some(GithubFetcher::new(cache));
    }
    Ok(locator)
}

fn print_progress(event: Progress<'_>) {
    match event {
        Progress::Started { index, total, job } => {
            errln!("[{}/{total}] {} …", index + 1, job.instance_id);
        }
        Progress::Finished {
            index,
            total,
            result,
        } => {
            let n = index + 1;
            let id = &result.instance_id;
            let secs = result.seconds;
            match &result.outcome {
                InstanceOutcome::Made(r) => errln!(
                    "[{n}/{total}] {id}: made at {} — {} files, {:.1} MiB, {} missing blobs skipped, \
                     {} refused, {} submodules ({secs:.1}s)",
                    short(&r.commit),
                    r.files,
                    mib(r.bytes),
                    r.missing_blobs.len(),
                    r.refused.len(),
                    r.submodules.len()
                ),
                InstanceOutcome::AlreadyThere(r) => {
                    errln!("[{n}/{total}] {id}: already there at {}", short(&r.commit))
                }
                InstanceOutcome::Failed(e) => {
                    errln!("[{n}/{total}] {id}: FAILED: {}", shown(&e.to_string()))
                }
            }
        }
    }
}

fn print_summary(report: &BatchReport, seconds: f64) {
    let present = report.made() + report.already_there();
    errln!(
        "snapshots: {} made, {} already there, {} failed ({seconds:.1}s); the {present} present hold \
         {} files, {:.1} MiB; skipped: {} missing blobs, {} refused entries, {} submodules",
        report.made(),
        report.already_there(),
        report.failed(),
        report.files(),
        mib(report.bytes()),
        report.missing_blobs(),
        report.refused(),
        report.submodules(),
    );
    for result in &report.results {
        if let InstanceOutcome::Failed(e) = &result.outcome {
            errln!("failed: {}: {}", result.instance_id, shown(&e.to_string()));
        }
    }
}

fn report_json(report: &BatchReport) -> serde_json::Value {
    let instances: Vec<serde_json::Value> = report
        .results
        .iter()
        .map(|r| {
            let (status, detail) = match &r.outcome {
                InstanceOutcome::Made(rep) => ("made", serde_json::to_value(rep)),
                InstanceOutcome::AlreadyThere(rep) => ("already_there", serde_json::to_value(rep)),
                InstanceOutcome::Failed(e) => {
                    ("failed", Ok(serde_json::json!({"error": e.to_string()})))
                }
            };
            serde_json::json!({
                "instance_id": r.instance_id,
                "repo": r.repo,
                "status": status,
                "seconds": r.seconds,
                "snapshot": detail.unwrap_or_default(),
            })
        })
        .collect();
    serde_json::json!({
        "made": report.made(),
        "already_there": report.already_there(),
        "failed": report.failed(),
        "files": report.files(),
        "bytes": report.bytes(),
        "missing_blobs": report.missing_blobs(),
        "refused": report.refused(),
        "submodules": report.submodules(),
        "instances": instances,
    })
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
