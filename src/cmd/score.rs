//! `swex score`: score result rows against SWE-Explore ground truth with the 17 reference metrics.
//! Parses arguments, calls `swex_bench::score`, prints. Diagnostics go to stderr, the table to
//! stdout.

use crate::out::shown;
use anyhow::bail;
use clap::{Args, ValueEnum};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use swex_bench::dataset::{
    Benchmark, LoadOptions, Predictions, Skipped, load_issue_map, summarize_skipped,
};
use swex_bench::linecounts::{InstanceSnapshot, LineCounts, count_from_snapshots};
use swex_bench::metrics::{NdcgVariant, ScoreOptions};
use swex_bench::score::{
    ScoreConfig, ScoreReport, Unscored, format_summary_table, score, write_rows,
};

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Benchmark file (JSONL, reference schema: instance_id, ground_truth, ...).
    #[arg(long, value_name = "FILE")]
    bench: PathBuf,
    /// Result file(s) (JSONL rows {instance_id, explorer, regions | error}); a file may hold
    /// several explorers. Repeat the option or separate files with commas.
    #[arg(long, value_name = "FILE", required = true, value_delimiter = ',')]
    predictions: Vec<PathBuf>,
    /// Line counts {instance_id: {path: count}}, used to resolve `end = -1` and negative starts.
    #[arg(long, value_name = "FILE", conflicts_with = "repos")]
    line_counts: Option<PathBuf>,
    /// Count lines from snapshot folders instead: DIR/<instance_id> or the row's repo_dir. The
    /// lists are then also scored with every predicted file's real length (a whole-file region
    /// costs its lines, unlike in the reference counting), and the lines returned are reported.
    #[arg(long, value_name = "DIR")]
    repos: Option<PathBuf>,
    /// Issue texts {instance_id: text} for rows without problem_statement (checked, not needed
    /// for scoring).
    #[arg(long, value_name = "FILE")]
    issue_map: Option<PathBuf>,
    /// Keep only benchmark rows whose `dataset` is NAME.
    #[arg(long, value_name = "NAME")]
    dataset: Option<String>,
    /// Cut each ranked list at these k (comma-separated).
    #[arg(long, value_name = "K,...", value_delimiter = ',', default_value = "5")]
    top_k: Vec<usize>,
    /// Write one metric row per (instance, explorer, k) as JSONL; `{explorer}` and `{k}` in the
    /// name split the rows into one file each.
    #[arg(long, short, value_name = "FILE")]
    output: Option<String>,
    /// Skip bad input rows (reported with counts and reasons) instead of stopping at the first.
    #[arg(long)]
    lenient: bool,
    /// nDCG variant: `code` as the released evaluator computes it, or `paper` as the paper
    /// describes it (greedy marginal-gain ideal, regions clipped to the file length).
    #[arg(long, value_enum, default_value_t = NdcgChoice::Code)]
    ndcg: NdcgChoice,
    /// Score instances without core regions too (the reference skips them).
    #[arg(long)]
    keep_empty_core: bool,
    /// Leave failed and missing instances out of the means (as the reference runner does with
    /// failures) instead of scoring them as empty predictions.
    #[arg(long)]
    skip_unscored: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum NdcgChoice {
    Code,
    Paper,
}

/// How many ids to name when listing instances.
const EXAMPLES: usize = 3;

/// The first ids or paths of a list, for a message; they come from the input, hence [`shown`].
fn examples<S: AsRef<str>>(ids: &[S]) -> String {
    let first: Vec<String> = ids
        .iter()
        .take(EXAMPLES)
        .map(|id| shown(id.as_ref()).into_owned())
        .collect();
    let more = if ids.len() > EXAMPLES { ", ..." } else { "" };
    format!("{}{more}", first.join(", "))
}

pub fn run(args: ScoreArgs) -> anyhow::Result<ExitCode> {
    let mut bench = load_bench(&args)?;
    if let Some(path) = &args.issue_map {
        join_issue_texts(&mut bench, path)?;
    }
    let (line_counts, snapshot_folders) = line_counts(&args, &bench)?;
    let predictions = load_predictions(&args)?;
    let config = score_config(&args, snapshot_folders)?;
    let report = score(&bench, &predictions, &line_counts, &config)?;
    ensure_scored(&report, &bench, &predictions, &args.bench)?;
    report_unused_rows(&report, &args.bench);
    report_unscored(&report, &config, &bench);
    if let Some(template) = &args.output {
        for (path, rows) in write_rows(&report.rows, template)? {
            errln!("wrote {rows} metric rows to {}", path.display());
        }
    }
    print_tables(&report);
    Ok(ExitCode::SUCCESS)
}

/// The benchmark, with what its filters left out said on stderr.
fn load_bench(args: &ScoreArgs) -> anyhow::Result<Benchmark> {
    let load_options = LoadOptions {
        lenient: args.lenient,
        dataset: args.dataset.clone(),
        keep_empty_core: args.keep_empty_core,
    };
    let bench = Benchmark::load(&args.bench, &load_options)?;
    let name = args.bench.display();
    report_skipped(&args.bench, &bench.skipped);
    if !bench.excluded_by_dataset.is_empty() {
        errln!(
            "{name}: left out {} rows of other datasets (e.g. {})",
            bench.excluded_by_dataset.len(),
            examples(&bench.excluded_by_dataset)
        );
    }
    if !bench.excluded_empty_core.is_empty() {
        errln!(
            "{name}: left out {} rows without core regions, like the reference (--keep-empty-core keeps them): {}",
            bench.excluded_empty_core.len(),
            examples(&bench.excluded_empty_core)
        );
    }
    errln!("{name}: {} instances to score", bench.rows.len());
    Ok(bench)
}

/// Joins the issue texts of `--issue-map` (checked, not needed for scoring).
fn join_issue_texts(bench: &mut Benchmark, path: &Path) -> anyhow::Result<()> {
    let issues = load_issue_map(path)?;
    let join = bench.join_issues(&issues);
    errln!(
        "{}: issue text for {} instances",
        path.display(),
        join.from_map
    );
    if !join.missing.is_empty() {
        errln!(
            "warning: {} instances have no issue text (e.g. {})",
            join.missing.len(),
            examples(&join.missing)
        );
    }
    Ok(())
}

/// The snapshot folder of each instance, by id (real-length scoring reads them).
type SnapshotFolders = BTreeMap<String, PathBuf>;

/// The line counts of `--line-counts`, of `--repos` (then with the snapshot folders, so that the
/// predicted files' real lengths are counted too: honest counting), or none.
fn line_counts(
    args: &ScoreArgs,
    bench: &Benchmark,
) -> anyhow::Result<(LineCounts, SnapshotFolders)> {
    if let Some(path) = &args.line_counts {
        Ok((counts_from_file(path, bench)?, SnapshotFolders::new()))
    } else if let Some(root) = &args.repos {
        counts_from_snapshots(root, bench)
    } else {
        errln!(
            "note: no --line-counts or --repos: regions with end = -1 or a negative start are unresolvable"
        );
        Ok((LineCounts::default(), SnapshotFolders::new()))
    }
}

fn counts_from_file(path: &Path, bench: &Benchmark) -> anyhow::Result<LineCounts> {
    let counts = LineCounts::load(path)?;
    let without: Vec<&str> = bench
        .rows
        .iter()
        .map(|r| r.instance_id.as_str())
        .filter(|id| !counts.contains(id))
        .collect();
    if !without.is_empty() {
        errln!(
            "warning: {} has no line counts for {} instances (e.g. {}); their end = -1 regions are unresolvable",
            path.display(),
            without.len(),
            examples(&without)
        );
    }
    Ok(counts)
}

fn counts_from_snapshots(
    root: &Path,
    bench: &Benchmark,
) -> anyhow::Result<(LineCounts, SnapshotFolders)> {
    anyhow::ensure!(root.is_dir(), "--repos {}: not a folder", root.display());
    let (counts, snapshots) = count_from_snapshots(&bench.rows, root);
    let folders = snapshots
        .iter()
        .filter_map(|s| Some((s.instance_id.clone(), s.folder.clone()?)))
        .collect();
    let no_folder: Vec<&str> = snapshots
        .iter()
        .filter(|s| s.folder.is_none())
        .map(|s| s.instance_id.as_str())
        .collect();
    let files: usize = counts_total(&counts, bench);
    errln!(
        "{}: counted lines of {files} ground-truth files in {} snapshots",
        root.display(),
        snapshots.len() - no_folder.len()
    );
    if !no_folder.is_empty() {
        errln!(
            "warning: no snapshot folder for {} instances (e.g. {}); their end = -1 regions are unresolvable",
            no_folder.len(),
            examples(&no_folder)
        );
    }
    for snapshot in snapshots.iter().filter(|s| !s.report.is_clean()) {
        report_uncounted(snapshot);
    }
    Ok((counts, folders))
}

/// The ground-truth files of a snapshot that were not counted, and why.
fn report_uncounted(snapshot: &InstanceSnapshot) {
    let r = &snapshot.report;
    let mut problems: Vec<String> = r
        .missing_files
        .iter()
        .map(|p| format!("{p} (missing)"))
        .collect();
    problems.extend(r.unreadable_files.iter().map(|(p, e)| format!("{p} ({e})")));
    problems.extend(
        r.unsafe_paths
            .iter()
            .map(|p| format!("{p} (outside the snapshot, not read)")),
    );
    problems.extend(
        r.escaping_links
            .iter()
            .map(|p| format!("{p} (a symlink out of the snapshot, not followed)")),
    );
    errln!(
        "warning: {}: {} ground-truth files not counted: {}",
        snapshot.instance_id,
        problems.len(),
        examples(&problems)
    );
}

fn load_predictions(args: &ScoreArgs) -> anyhow::Result<Vec<Predictions>> {
    let mut predictions = Vec::with_capacity(args.predictions.len());
    for path in &args.predictions {
        let file = Predictions::load(path, args.lenient)?;
        report_skipped(path, &file.skipped);
        predictions.push(file);
    }
    Ok(predictions)
}

fn score_config(args: &ScoreArgs, snapshots: SnapshotFolders) -> anyhow::Result<ScoreConfig> {
    let mut config = ScoreConfig::new(&args.top_k)?;
    config.options = ScoreOptions {
        ndcg: match args.ndcg {
            NdcgChoice::Code => NdcgVariant::Reference,
            NdcgChoice::Paper => NdcgVariant::Paper,
        },
    };
    config.unscored = if args.skip_unscored {
        Unscored::Skip
    } else {
        Unscored::Zero
    };
    config.lenient = args.lenient;
    config.snapshots = snapshots;
    Ok(config)
}

/// Nothing matched: a wrong file, a wrong benchmark, or a filter that left nothing; an empty
/// table with status 0 would read as success.
fn ensure_scored(
    report: &ScoreReport,
    bench: &Benchmark,
    predictions: &[Predictions],
    bench_path: &Path,
) -> anyhow::Result<()> {
    if !report.summaries.is_empty() {
        return Ok(());
    }
    let name = bench_path.display();
    let rows: usize = predictions.iter().map(|p| p.rows.len()).sum();
    if bench.rows.is_empty() {
        bail!("nothing to score: {name} has no instances to score");
    }
    bail!(
        "nothing to score: none of the {rows} result rows is for one of the {} instances of \
         {name}",
        bench.rows.len()
    );
}

/// Result rows left unused: duplicates (`--lenient`), rows of unknown or filtered instances.
fn report_unused_rows(report: &ScoreReport, bench_path: &Path) {
    let name = bench_path.display();
    if !report.duplicates_skipped.is_empty() {
        errln!(
            "skipped {} duplicate result rows (--lenient): the first row of each (instance, explorer) is used",
            report.duplicates_skipped.len()
        );
        for d in &report.duplicates_skipped {
            errln!(
                "  {}:{} (first in {}:{})",
                d.file.display(),
                d.line,
                d.first_file.display(),
                d.first_line
            );
        }
    }
    let (filtered, unknown): (Vec<_>, Vec<_>) =
        report.unmatched.iter().partition(|u| u.excluded_by_filter);
    if !unknown.is_empty() {
        let ids: Vec<&str> = unknown.iter().map(|u| u.instance_id.as_str()).collect();
        errln!(
            "warning: ignored {} result rows for instances not in {name} (e.g. {})",
            unknown.len(),
            examples(&ids)
        );
    }
    if !filtered.is_empty() {
        let ids: Vec<&str> = filtered.iter().map(|u| u.instance_id.as_str()).collect();
        errln!(
            "ignored {} result rows for instances the filters left out (e.g. {})",
            filtered.len(),
            examples(&ids)
        );
    }
}

/// Instances an explorer has no row for or failed on, once per explorer (at the first k).
fn report_unscored(report: &ScoreReport, config: &ScoreConfig, bench: &Benchmark) {
    let unscored_note = match config.unscored {
        Unscored::Zero => "scored as empty predictions (0)",
        Unscored::Skip => "left out of the means (--skip-unscored)",
    };
    for summary in report
        .summaries
        .iter()
        .filter(|s| s.top_k == config.top_ks[0])
    {
        if !summary.missing.is_empty() {
            errln!(
                "warning: {}: no result row for {} of {} instances, {unscored_note}: {}",
                summary.explorer,
                summary.missing.len(),
                bench.rows.len(),
                examples(&summary.missing)
            );
        }
        if !summary.failed.is_empty() {
            errln!(
                "warning: {}: failed on {} instances, {unscored_note}: {}",
                summary.explorer,
                summary.failed.len(),
                examples(&summary.failed)
            );
        }
    }
}

/// The summary table on stdout, and LocAgent's metrics for rows whose ground truth comes from a
/// fix (`swex dataset import`).
fn print_tables(report: &ScoreReport) {
    out!("{}", format_summary_table(&report.summaries));
    let loc = swex_bench::score::format_loc_table(&report.summaries);
    if !loc.is_empty() {
        out!("localization metrics (LocAgent's definitions; docs/metrics.md):\n{loc}");
    }
}

/// Bad rows named one by one by [`report_skipped`]; the rest are only counted.
const SKIPPED_SHOWN: usize = 10;

/// Says how many rows a lenient load skipped, why, and where (the first [`SKIPPED_SHOWN`]).
fn report_skipped(path: &Path, skipped: &Skipped) {
    if skipped.is_empty() {
        return;
    }
    errln!(
        "{}: skipped {} bad rows (--lenient): {}",
        path.display(),
        skipped.len(),
        summarize_skipped(skipped)
    );
    for error in skipped.iter().take(SKIPPED_SHOWN) {
        errln!(
            "  {}:{}: {}",
            path.display(),
            error.line,
            shown(&error.detail())
        );
    }
    if skipped.len() > SKIPPED_SHOWN {
        errln!(
            "  … and {} more bad rows (counted above by reason)",
            skipped.len() - SKIPPED_SHOWN
        );
    }
}

/// Number of ground-truth files counted across the benchmark's instances.
fn counts_total(counts: &LineCounts, bench: &Benchmark) -> usize {
    bench
        .rows
        .iter()
        .map(|r| counts.for_instance(&r.instance_id).len())
        .sum()
}
