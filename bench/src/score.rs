//! Scoring result files against a benchmark: the library side of `swex score`.
//!
//! [`score`] joins a [`Benchmark`] with one or more [`Predictions`] files (each may hold several
//! explorers), cuts every ranked list at each top-k, scores it with [`crate::metrics`] and returns
//! one [`MetricRow`] per (explorer, k, instance) plus one [`Summary`] (means) per (explorer, k).
//!
//! Nothing is dropped silently:
//! - a benchmark instance an explorer has no row for is *missing*, and a row with an `error` is
//!   *failed*. By default both are scored as empty predictions (0 on every metric), so that every
//!   explorer is averaged over the same instances; [`Unscored::Skip`] leaves them out of the means
//!   instead, as the reference runner does with its failures. Either way they are counted and
//!   named in the summary.
//! - rows for ids the benchmark does not hold, or left out by a filter, are listed in the report.
//!
//! This module knows nothing about argv or terminal colours; it does the joining, the arithmetic
//! and the formatting of plain-text tables.

use crate::dataset::{Benchmark, Outcome, PredictionRow, Predictions, Region};
use crate::linecounts::{FileLineCounts, LineCounts};
use crate::locmetrics::{EntityCache, LocTruth};
use crate::metrics::{Metrics, PreparedTruth, ScoreOptions};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use swex_engine::snapshot::{NameError, PlainName};

/// What to do with instances that were not scored (failed or missing) when averaging.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unscored {
    /// Score them as empty predictions: 0 on every metric (the default).
    #[default]
    Zero,
    /// Leave them out of the means and write no metric rows for them (the reference runner's
    /// treatment of failures).
    Skip,
}

/// How to score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreConfig {
    /// The top-k cuts, each at least 1 (sorted and de-duplicated by [`ScoreConfig::new`]).
    pub top_ks: Vec<usize>,
    pub options: ScoreOptions,
    pub unscored: Unscored,
    /// Skip a second row for the same (instance, explorer) across files instead of failing.
    pub lenient: bool,
    /// Snapshot folder of each instance, when at hand: every list is then also scored with every
    /// predicted file's real length ([`PreparedTruth::score_real`]) and its lines counted.
    pub snapshots: BTreeMap<String, PathBuf>,
    /// The ks of the localization metrics, scored for rows whose ground truth has a `fix`
    /// ([`crate::locmetrics`]; function and module levels need the snapshot or definitions in
    /// the row).
    pub loc_ks: crate::locmetrics::LocKs,
}

impl ScoreConfig {
    pub fn new(top_ks: &[usize]) -> Result<ScoreConfig, ScoreError> {
        let mut top_ks = top_ks.to_vec();
        top_ks.sort_unstable();
        top_ks.dedup();
        if top_ks.is_empty() || top_ks[0] == 0 {
            return Err(ScoreError::BadTopK);
        }
        Ok(ScoreConfig {
            top_ks,
            options: ScoreOptions::default(),
            unscored: Unscored::default(),
            lenient: false,
            snapshots: BTreeMap::new(),
            loc_ks: Default::default(),
        })
    }
}

/// Why a row's metrics are what they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowStatus {
    Scored,
    Failed,
    Missing,
}

/// One scored (instance, explorer, k): the reference runner's result row plus `top_k`, and, for
/// rows that were not scored, `status` and `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    pub instance_id: String,
    pub explorer: String,
    pub top_k: usize,
    pub regions: Vec<Region>,
    pub metrics: Metrics,
    pub num_regions: usize,
    /// The metrics with every predicted file's real length (when the snapshot is at hand).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_metrics: Option<Metrics>,
    /// Distinct lines of the regions, counted with real lengths (with `real_metrics`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_returned: Option<u64>,
    /// The localization metrics (rows whose ground truth comes from a fix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loc_metrics: Option<BTreeMap<String, f64>>,
    #[serde(skip_serializing_if = "is_scored")]
    pub status: RowStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_scored(status: &RowStatus) -> bool {
    *status == RowStatus::Scored
}

/// Means of one (explorer, k) and what went into them.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub explorer: String,
    pub top_k: usize,
    /// Instances in the means.
    pub averaged: usize,
    /// Instances with a regions list.
    pub scored: usize,
    /// Instance ids whose row has an `error`.
    pub failed: Vec<String>,
    /// Benchmark instance ids with no row for this explorer.
    pub missing: Vec<String>,
    pub mean: Metrics,
    /// Means with real lengths and the lines returned, when every averaged instance had its
    /// snapshot at hand.
    pub real: Option<RealSummary>,
    /// Means of the localization metrics, each over the instances that have it.
    pub loc: BTreeMap<String, f64>,
}

/// The real-length side of a [`Summary`].
#[derive(Debug, Clone, PartialEq)]
pub struct RealSummary {
    pub mean: Metrics,
    pub lines: LineStats,
}

/// Lines returned per instance: median (mean of the two middle values for an even count), mean
/// and 90th percentile (nearest rank).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LineStats {
    pub median: f64,
    pub mean: f64,
    pub p90: f64,
}

impl LineStats {
    /// Statistics of per-instance line counts; all zero for none.
    pub fn of(lines: &[u64]) -> LineStats {
        if lines.is_empty() {
            return LineStats::default();
        }
        let mut sorted = lines.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2] as f64
        } else {
            (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
        };
        let rank = (0.9 * n as f64).ceil() as usize;
        LineStats {
            median,
            mean: sorted.iter().map(|&l| l as f64).sum::<f64>() / n as f64,
            p90: sorted[rank.clamp(1, n) - 1] as f64,
        }
    }
}

/// A result row that matched no benchmark instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched {
    pub file: PathBuf,
    pub line: usize,
    pub instance_id: String,
    pub explorer: String,
    /// `true`: the benchmark has the instance but a filter (dataset, empty core) left it out.
    pub excluded_by_filter: bool,
}

/// A row skipped by a lenient run because another file already had the same (instance, explorer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateRow {
    pub file: PathBuf,
    pub line: usize,
    pub first_file: PathBuf,
    pub first_line: usize,
}

/// Everything [`score`] produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoreReport {
    /// Explorer by explorer (first-appearance order), k by k, benchmark order.
    pub rows: Vec<MetricRow>,
    pub summaries: Vec<Summary>,
    pub unmatched: Vec<Unmatched>,
    pub duplicates_skipped: Vec<DuplicateRow>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("top-k values must be at least 1")]
    BadTopK,
    #[error(
        "{}:{}: duplicate row for instance `{instance_id}` and explorer `{explorer}` (first in {}:{})",
        file.display(), line, first_file.display(), first_line
    )]
    Duplicate {
        file: PathBuf,
        line: usize,
        first_file: PathBuf,
        first_line: usize,
        instance_id: String,
        explorer: String,
    },
    /// An explorer name that cannot fill `{explorer}` of the output template.
    #[error("the row of instance `{instance_id}`: explorer: {source}")]
    ExplorerName {
        instance_id: String,
        source: NameError,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Scores every explorer of `predictions` on every instance of `bench`.
pub fn score(
    bench: &Benchmark,
    predictions: &[Predictions],
    line_counts: &LineCounts,
    config: &ScoreConfig,
) -> Result<ScoreReport, ScoreError> {
    let mut report = ScoreReport::default();
    let joined = join_rows(bench, predictions, config, &mut report)?;
    let truths: Vec<PreparedTruth> = bench
        .rows
        .iter()
        .map(|row| {
            PreparedTruth::new(
                &row.ground_truth,
                line_counts.for_instance(&row.instance_id),
            )
        })
        .collect();
    let mut locs = loc_truths(bench, config);
    for &explorer in &joined.explorers {
        let lengths = real_lengths(bench, &joined, explorer, config);
        for &k in &config.top_ks {
            let cut = Cut {
                explorer,
                k,
                truths: &truths,
                lengths: &lengths,
            };
            let summary = score_cut(&cut, bench, &joined, &mut locs, config, &mut report.rows);
            report.summaries.push(summary);
        }
    }
    Ok(report)
}

/// The result rows joined to the benchmark: (explorer, instance) → (file, row), explorers in
/// first-appearance order.
struct Joined<'a> {
    explorers: Vec<&'a str>,
    by_key: HashMap<(&'a str, &'a str), (&'a Path, &'a PredictionRow)>,
}

impl<'a> Joined<'a> {
    fn get<'s>(
        &'s self,
        explorer: &'s str,
        instance_id: &'s str,
    ) -> Option<&'s (&'a Path, &'a PredictionRow)> {
        // The keys borrow the result files; a look-up with shorter-lived names (the benchmark's
        // ids) sees the map through its shorter key type.
        let by_key: &'s HashMap<(&'s str, &'s str), (&'a Path, &'a PredictionRow)> = &self.by_key;
        by_key.get(&(explorer, instance_id))
    }
}

/// Joins the rows of every file to the benchmark; rows of other instances go to
/// `report.unmatched`, duplicates are an error (or, `lenient`, skipped and reported).
fn join_rows<'a>(
    bench: &Benchmark,
    predictions: &'a [Predictions],
    config: &ScoreConfig,
    report: &mut ScoreReport,
) -> Result<Joined<'a>, ScoreError> {
    let mut joined = Joined {
        explorers: Vec::new(),
        by_key: HashMap::new(),
    };
    for file in predictions {
        for row in &file.rows {
            if bench.get(&row.instance_id).is_none() {
                report.unmatched.push(Unmatched {
                    file: file.path.clone(),
                    line: row.line,
                    instance_id: row.instance_id.clone(),
                    explorer: row.explorer.clone(),
                    excluded_by_filter: bench.excluded(&row.instance_id),
                });
                continue;
            }
            let key = (row.explorer.as_str(), row.instance_id.as_str());
            if let Some((first_file, first)) = joined.by_key.get(&key) {
                if !config.lenient {
                    return Err(ScoreError::Duplicate {
                        file: file.path.clone(),
                        line: row.line,
                        first_file: first_file.to_path_buf(),
                        first_line: first.line,
                        instance_id: row.instance_id.clone(),
                        explorer: row.explorer.clone(),
                    });
                }
                report.duplicates_skipped.push(DuplicateRow {
                    file: file.path.clone(),
                    line: row.line,
                    first_file: first_file.to_path_buf(),
                    first_line: first.line,
                });
                continue;
            }
            if !joined.explorers.contains(&key.0) {
                joined.explorers.push(key.0);
            }
            joined.by_key.insert(key, (&file.path, row));
        }
    }
    Ok(joined)
}

/// The fix's gold per instance (definitions found from the snapshot when the row lacks them),
/// and the entities of its predicted files, parsed once for every explorer and k.
fn loc_truths(bench: &Benchmark, config: &ScoreConfig) -> Vec<Option<(LocTruth, EntityCache)>> {
    bench
        .rows
        .iter()
        .map(|row| {
            let snapshot = config.snapshots.get(&row.instance_id);
            let (loc, _) = LocTruth::prepare(row, snapshot.map(PathBuf::as_path))?;
            let entities = match snapshot {
                Some(dir) => EntityCache::for_snapshot(dir),
                None => EntityCache::none(),
            };
            Some((loc, entities))
        })
        .collect()
}

/// Real lengths of every file the explorer predicted, per instance (read once for all ks);
/// `None` without the instance's snapshot.
fn real_lengths(
    bench: &Benchmark,
    joined: &Joined<'_>,
    explorer: &str,
    config: &ScoreConfig,
) -> Vec<Option<FileLineCounts>> {
    bench
        .rows
        .iter()
        .map(|row| {
            let folder = config.snapshots.get(&row.instance_id)?;
            let paths = match joined.get(explorer, &row.instance_id) {
                Some((
                    _,
                    PredictionRow {
                        outcome: Outcome::Regions(regions),
                        ..
                    },
                )) => regions.iter().map(|r| r.path.as_str()).collect(),
                _ => Vec::new(),
            };
            Some(FileLineCounts::from_paths(folder, paths).0)
        })
        .collect()
}

/// One explorer at one k, with what is prepared per instance.
struct Cut<'a> {
    explorer: &'a str,
    k: usize,
    truths: &'a [PreparedTruth],
    lengths: &'a [Option<FileLineCounts>],
}

/// The running sums of a cut's means.
#[derive(Default)]
struct Totals {
    reference: [f64; 17],
    real: [f64; 17],
    lines_returned: Vec<u64>,
    loc: BTreeMap<String, (f64, usize)>,
}

/// Scores one explorer at one k on every instance: its metric rows into `rows`, its means as the
/// summary.
fn score_cut(
    cut: &Cut<'_>,
    bench: &Benchmark,
    joined: &Joined<'_>,
    locs: &mut [Option<(LocTruth, EntityCache)>],
    config: &ScoreConfig,
    rows: &mut Vec<MetricRow>,
) -> Summary {
    let mut summary = Summary {
        explorer: cut.explorer.to_string(),
        top_k: cut.k,
        averaged: 0,
        scored: 0,
        failed: Vec::new(),
        missing: Vec::new(),
        mean: Metrics::default(),
        real: None,
        loc: BTreeMap::new(),
    };
    let mut totals = Totals::default();
    for (((row, truth), lengths), loc) in bench
        .rows
        .iter()
        .zip(cut.truths)
        .zip(cut.lengths)
        .zip(locs.iter_mut())
    {
        let found = joined.get(cut.explorer, &row.instance_id);
        let (status, regions, error) = match found.map(|(_, p)| &p.outcome) {
            Some(Outcome::Regions(regions)) => (
                RowStatus::Scored,
                &regions[..regions.len().min(cut.k)],
                None,
            ),
            Some(Outcome::Failed(message)) => {
                summary.failed.push(row.instance_id.clone());
                (RowStatus::Failed, &[][..], Some(message.clone()))
            }
            None => {
                summary.missing.push(row.instance_id.clone());
                (RowStatus::Missing, &[][..], None)
            }
        };
        if status == RowStatus::Scored {
            summary.scored += 1;
        } else if config.unscored == Unscored::Skip {
            continue;
        }
        let metrics = truth.score(regions, &config.options);
        for (total, value) in totals.reference.iter_mut().zip(metrics.values()) {
            *total += value;
        }
        let real = lengths
            .as_ref()
            .map(|lengths| truth.score_real(regions, &config.options, lengths));
        if let Some(real) = &real {
            for (total, value) in totals.real.iter_mut().zip(real.metrics.values()) {
                *total += value;
            }
            totals.lines_returned.push(real.lines_returned);
        }
        summary.averaged += 1;
        let loc_metrics = loc
            .as_mut()
            .map(|(loc, entities)| loc.score(regions, entities, &config.loc_ks));
        for (key, value) in loc_metrics.iter().flatten() {
            let total = totals.loc.entry(key.clone()).or_default();
            total.0 += value;
            total.1 += 1;
        }
        rows.push(MetricRow {
            instance_id: row.instance_id.clone(),
            explorer: cut.explorer.to_string(),
            top_k: cut.k,
            regions: regions.to_vec(),
            metrics,
            num_regions: regions.len(),
            real_metrics: real.map(|r| r.metrics),
            lines_returned: real.map(|r| r.lines_returned),
            loc_metrics,
            status,
            error,
        });
    }
    fill_means(&mut summary, totals);
    summary
}

/// The means of a cut from its sums: the real-length ones only when every averaged instance had
/// them.
fn fill_means(summary: &mut Summary, totals: Totals) {
    if summary.averaged > 0 {
        let n = summary.averaged as f64;
        summary.mean = Metrics::from_values(totals.reference.map(|t| t / n));
        if totals.lines_returned.len() == summary.averaged {
            summary.real = Some(RealSummary {
                mean: Metrics::from_values(totals.real.map(|t| t / n)),
                lines: LineStats::of(&totals.lines_returned),
            });
        }
    }
    summary.loc = totals
        .loc
        .into_iter()
        .map(|(key, (sum, n))| (key, sum / n as f64))
        .collect();
}

/// The localization metrics' means (file, module and function Acc@k, Recall@k, NDCG@k, MAP@k)
/// per explorer and k, one line each; empty when no summary has them.
pub fn format_loc_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    for summary in summaries.iter().filter(|s| !s.loc.is_empty()) {
        let cells: Vec<String> = summary
            .loc
            .iter()
            .map(|(key, value)| format!("{key}={value:.4}"))
            .collect();
        let _ = writeln!(
            out,
            "{} top{}: {}",
            summary.explorer,
            summary.top_k,
            cells.join(" ")
        );
    }
    out
}

/// What [`fill_real_metrics`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilledReal {
    /// Rows that got real-length metrics.
    pub filled: usize,
    /// Rows that already had them (kept as they are).
    pub kept: usize,
    /// Instance ids of rows that could not get them: not in the benchmark, or no snapshot folder.
    pub unavailable: Vec<String>,
}

/// Gives every result row without real-length metrics (the reference runner's rows, a peer's
/// published rows) its `real_metrics` and `lines_returned`, scoring its regions against the
/// benchmark's ground truth with every predicted file's length read from the instance's snapshot
/// folder (`repos_root/<instance_id>` or the row's `repo_dir`). The reference `metrics` are left
/// as they are. Failed rows get zeros.
pub fn fill_real_metrics(
    rows: &mut [crate::results::ResultRow],
    bench: &Benchmark,
    repos_root: &Path,
) -> FilledReal {
    let mut report = FilledReal::default();
    let mut truths: HashMap<String, Option<(PreparedTruth, PathBuf)>> = HashMap::new();
    for row in rows.iter_mut() {
        if row.real_metrics.is_some() && row.lines_returned.is_some() {
            report.kept += 1;
            continue;
        }
        let prepared = truths.entry(row.instance_id.clone()).or_insert_with(|| {
            let bench_row = bench.get(&row.instance_id)?;
            let folder = bench_row.snapshot_dir(repos_root)?;
            let (counts, _) = FileLineCounts::from_snapshot(&folder, &bench_row.ground_truth);
            Some((PreparedTruth::new(&bench_row.ground_truth, &counts), folder))
        });
        let Some((truth, folder)) = prepared else {
            report.unavailable.push(row.instance_id.clone());
            continue;
        };
        let (lengths, _) =
            FileLineCounts::from_paths(folder, row.regions.iter().map(|r| r.path.as_str()));
        let real = truth.score_real(&row.regions, &ScoreOptions::default(), &lengths);
        row.real_metrics = Some(real.metrics);
        row.lines_returned = Some(real.lines_returned);
        report.filled += 1;
    }
    report
}

/// Writes metric rows as JSONL. `template` may hold `{explorer}` and `{k}`: then each
/// (explorer, k) goes to its own file, as with the reference runner's `-o`. Returns the files
/// written with their row counts.
pub fn write_rows(rows: &[MetricRow], template: &str) -> Result<Vec<(PathBuf, usize)>, ScoreError> {
    let mut files: Vec<(PathBuf, String, usize)> = Vec::new();
    let by_explorer = template.contains("{explorer}");
    for row in rows {
        // `{explorer}` comes from the result rows: a plain name, or no path at all (the rule of
        // `swex bench -o` and `swex merge -o`), checked before anything is written.
        let explorer = if by_explorer {
            PlainName::new(row.explorer.as_str())
                .map_err(|source| ScoreError::ExplorerName {
                    instance_id: row.instance_id.clone(),
                    source,
                })?
                .to_string()
        } else {
            String::new()
        };
        let path = PathBuf::from(
            template
                .replace("{explorer}", &explorer)
                .replace("{k}", &row.top_k.to_string()),
        );
        let index = match files.iter().position(|(p, _, _)| *p == path) {
            Some(i) => i,
            None => {
                files.push((path, String::new(), 0));
                files.len() - 1
            }
        };
        let line = serde_json::to_string(row).expect("metric rows serialise");
        files[index].1.push_str(&line);
        files[index].1.push('\n');
        files[index].2 += 1;
    }
    if files.is_empty() && !template.contains("{explorer}") && !template.contains("{k}") {
        files.push((PathBuf::from(template), String::new(), 0));
    }
    let mut written = Vec::with_capacity(files.len());
    for (path, text, count) in files {
        let write_error = |source| ScoreError::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        std::fs::write(&path, text).map_err(write_error)?;
        written.push((path, count));
    }
    Ok(written)
}

/// The summaries as a plain-text table: one row per metric, one column per (explorer, k), values
/// with 4 decimals like the reference runner's table, then — when every summary has them — the
/// same metrics counted with real file lengths and the lines returned, then the instance counts.
pub fn format_summary_table(summaries: &[Summary]) -> String {
    let headers: Vec<String> = summaries
        .iter()
        .map(|s| format!("{}@{}", s.explorer, s.top_k))
        .collect();
    // `None` is a rule between sections.
    let mut lines: Vec<Option<(String, Vec<String>)>> = Vec::new();
    let reals: Option<Vec<&RealSummary>> = summaries.iter().map(|s| s.real.as_ref()).collect();
    let reference_label = if reals.is_some() { " (reference)" } else { "" };
    for (i, name) in Metrics::NAMES.iter().enumerate() {
        let cells = summaries
            .iter()
            .map(|s| format!("{:.4}", s.mean.values()[i]))
            .collect();
        lines.push(Some((format!("{name}{reference_label}"), cells)));
    }
    if let Some(reals) = &reals {
        lines.push(None);
        for (i, name) in Metrics::NAMES.iter().enumerate() {
            let cells = reals
                .iter()
                .map(|r| format!("{:.4}", r.mean.values()[i]))
                .collect();
            lines.push(Some((format!("{name} (real lengths)"), cells)));
        }
        type Stat = fn(&LineStats) -> f64;
        let stats: [(&str, Stat); 3] = [
            ("lines returned, median", |l| l.median),
            ("lines returned, mean", |l| l.mean),
            ("lines returned, p90", |l| l.p90),
        ];
        for (label, stat) in stats {
            let cells = reals
                .iter()
                .map(|r| format!("{:.0}", stat(&r.lines)))
                .collect();
            lines.push(Some((label.to_string(), cells)));
        }
    }
    lines.push(None);
    let counts = [
        (
            "averaged over",
            summaries.iter().map(|s| s.averaged).collect::<Vec<_>>(),
        ),
        ("scored", summaries.iter().map(|s| s.scored).collect()),
        ("failed", summaries.iter().map(|s| s.failed.len()).collect()),
        (
            "missing",
            summaries.iter().map(|s| s.missing.len()).collect(),
        ),
    ];
    for (label, values) in counts {
        let cells = values.iter().map(usize::to_string).collect();
        lines.push(Some((label.to_string(), cells)));
    }

    let rows = || lines.iter().flatten();
    let name_width = rows().map(|(n, _)| n.len()).max().unwrap_or(0).max(6);
    let widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(c, h)| {
            rows()
                .map(|(_, cells)| cells[c].len())
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:<name_width$}", "metric");
    for (h, w) in headers.iter().zip(&widths) {
        let _ = write!(out, "  {h:>w$}");
    }
    out.push('\n');
    let rule = name_width + widths.iter().map(|w| w + 2).sum::<usize>();
    out.push_str(&"-".repeat(rule));
    out.push('\n');
    for line in &lines {
        let Some((name, cells)) = line else {
            out.push_str(&"-".repeat(rule));
            out.push('\n');
            continue;
        };
        let _ = write!(out, "{name:<name_width$}");
        for (cell, w) in cells.iter().zip(&widths) {
            let _ = write!(out, "  {cell:>w$}");
        }
        out.push('\n');
    }
    out
}
