//! `swex bench --task codesearch`: the code-search benchmark. Checks the arguments that make sense
//! for it, sets up explorers and services as `swex bench` does, prints progress and the summary
//! table (with the published methods when the data folder has `published.json`); the run itself is
//! `swex_bench::codesearch::run`.

use super::bench::{BenchArgs, build_locator, engine_opener, make_explorers};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use swex_bench::codesearch::run::DEFAULT_OUTPUT;
use swex_bench::codesearch::{
    CodeSearchData, CodeSearchObserver, CodeSearchReport, CodeSearchRun, Published, RepoEvent,
    Scope, render_markdown,
};

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    if args.resume || args.shard.is_some() || args.issue_map.is_some() {
        bail!(
            "--resume, --shard and --issue-map are for --task swe-explore (a code-search run takes \
             minutes; run it again with --overwrite)"
        );
    }
    if args.top_k.as_deref().is_some_and(|k| k.trim() != "10") {
        bail!("--task codesearch always scores the top 10 (NDCG@10); leave --top-k out");
    }
    if !args.bench.is_dir() {
        bail!(
            "--bench {}: with --task codesearch, give the folder holding repos.json and annotations/",
            args.bench.display()
        );
    }
    let bench_path = std::fs::canonicalize(&args.bench)
        .with_context(|| format!("--bench {}", args.bench.display()))?;
    let mut data = CodeSearchData::load(&bench_path)?;
    data.select(&args.instances)?;
    if let Some(limit) = args.limit {
        data.repos.truncate(limit);
    }
    let published_path = bench_path.join("published.json");
    let published = published_path
        .is_file()
        .then(|| Published::load(&published_path))
        .transpose()?;

    let explorers = make_explorers(args, &bench_path)?;
    let locator = build_locator(&args.snapshots)?;
    if locator.is_none() && !args.snapshots.repos.is_dir() {
        bail!(
            "--repos {}: not a folder (pass --mirrors or --git-dir to make the checkouts)",
            args.snapshots.repos.display()
        );
    }
    // Explorers that search need the engine's indexes: code search always serves them.
    let engine = args.engine.engine();
    let services = engine_opener(&engine, &args.engine, args.dense_scores.into());
    let workers = args.workers.unwrap_or(1);
    let run = CodeSearchRun {
        data: &data,
        explorers: &explorers,
        checkouts: args.snapshots.repos.clone(),
        locator: locator.as_ref(),
        services: &services,
        scope: if args.whole_checkout {
            Scope::Checkout
        } else {
            Scope::BenchmarkRoot
        },
        output: args
            .output
            .clone()
            .unwrap_or_else(|| DEFAULT_OUTPUT.to_string()),
        overwrite: args.overwrite,
        workers,
    };
    let observer = Progress {
        quiet: args.engine.quiet,
        done: AtomicUsize::new(0),
        total: AtomicUsize::new(0),
        started: Instant::now(),
    };
    let summary = run.execute(&observer)?;
    let report = CodeSearchReport::build(&summary.rows, published.as_ref());
    out!("{}", render_markdown(&report));
    let failed = summary.rows.iter().filter(|r| r.error.is_some()).count();
    errln!(
        "done in {:.1}s: {} rows in {}{}",
        summary.seconds,
        summary.rows.len(),
        summary
            .files
            .iter()
            .map(|p: &PathBuf| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if failed > 0 {
            format!(", {failed} failed (score 0)")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// One line per repository on stderr.
struct Progress {
    quiet: bool,
    done: AtomicUsize,
    total: AtomicUsize,
    started: Instant,
}

impl CodeSearchObserver for Progress {
    fn started(&self, repos: usize, queries: usize, files: &[PathBuf]) {
        self.total.store(repos, Ordering::Relaxed);
        errln!(
            "{repos} repositories, {queries} queries; writing {}",
            files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    fn repo_done(&self, event: &RepoEvent) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(error) = &event.first_error {
            errln!(
                "{}: {} of its rows failed: {}",
                event.repo,
                event.failures,
                error.lines().next().unwrap_or("")
            );
        }
        if self.quiet {
            return;
        }
        errln!(
            "[{done}/{}] {} ({} queries; checkout {:.0} ms, index {:.0} ms, {:.1}s)  elapsed {:.0}s",
            self.total.load(Ordering::Relaxed),
            event.repo,
            event.queries,
            event.snapshot_ms,
            event.index_ms,
            event.seconds,
            self.started.elapsed().as_secs_f64()
        );
    }
}
