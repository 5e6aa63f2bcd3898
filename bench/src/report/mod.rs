//! Reports over result rows: means per explorer × k, per-repository and per-language
//! breakdowns, paired comparisons with a bootstrap confidence interval, charts and a
//! self-contained HTML page. The library side of `swex report`.
//!
//! [`Report::build`] does the arithmetic once; the renderers ([`render`] for Markdown, CSV and
//! JSON, [`chart`] for SVG and PNG, [`html`] for the page) only format it. Everything is
//! deterministic: groups are ordered (explorers by first appearance, ks increasing, repositories
//! and languages by name) and the bootstrap uses a seeded generator.
//!
//! Failed rows (with `error`) count as zeros in every mean, as in `swex score`, and are counted.
//!
//! This module knows result rows and benchmark rows; it knows nothing about how rows were made.

pub mod chart;
pub mod html;
pub mod render;

use crate::dataset::{BenchRow, Benchmark};
use crate::metrics::Metrics;
use crate::results::ResultRow;
pub use crate::score::LineStats;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The means of one explorer at one k (over one group of instances).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanRow {
    /// The explorer, with the line budget its rows were asked for when they say
    /// ([`series_name`]): `swex[3000]`.
    pub explorer: String,
    pub top_k: usize,
    /// Rows averaged (failures included, as zeros).
    pub instances: usize,
    /// Rows with an `error`.
    pub failures: usize,
    /// Counted as the reference evaluator counts (only ground-truth files have a length).
    pub mean: Metrics,
    /// Counted with every predicted file's real length, when every row of the group has it
    /// (`swex bench` rows do; `swex report --repos` fills it in for others).
    pub real: Option<Metrics>,
    /// Lines returned per instance (real lengths), with `real`.
    pub lines: Option<LineStats>,
    /// The line budget of the rows, when they were asked for one.
    pub line_budget: Option<u64>,
    /// Means of the localization metrics (`file_acc@5`, …; [`crate::locmetrics`]), each over the
    /// rows that have it (instances whose gold at that level is not empty, as LocAgent averages).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub loc: BTreeMap<String, f64>,
}

/// How a report names the rows of one explorer run: the explorer, and `[N]` when the rows were
/// asked for a line budget of N lines, so that the runs of a budget sweep are told apart.
pub fn series_name(row: &ResultRow) -> String {
    match row.line_budget {
        Some(budget) => format!("{}[{budget}]", row.explorer),
        None => row.explorer.clone(),
    }
}

/// Means per (explorer, k), in first-appearance order of explorers and increasing k. Failed rows
/// are averaged as zeros (their metrics are zero) and counted in `failures`.
pub fn means(rows: &[ResultRow]) -> Vec<MeanRow> {
    let refs: Vec<&ResultRow> = rows.iter().collect();
    means_of(&refs)
}

fn means_of(rows: &[&ResultRow]) -> Vec<MeanRow> {
    let mut out = Vec::new();
    for explorer in explorers_in_order(rows) {
        let ks: BTreeSet<usize> = rows
            .iter()
            .filter(|r| r.explorer == explorer)
            .filter_map(|r| r.top_k)
            .collect();
        for k in ks {
            let group: Vec<&ResultRow> = rows
                .iter()
                .copied()
                .filter(|r| r.explorer == explorer && r.top_k == Some(k))
                .collect();
            let mut sums = [0.0f64; 17];
            let mut real_sums = [0.0f64; 17];
            let mut lines = Vec::new();
            for row in &group {
                for (sum, value) in sums.iter_mut().zip(row.metrics.values()) {
                    *sum += value;
                }
                if let (Some(real), Some(returned)) = (&row.real_metrics, row.lines_returned) {
                    for (sum, value) in real_sums.iter_mut().zip(real.values()) {
                        *sum += value;
                    }
                    lines.push(returned);
                }
            }
            let mut loc: BTreeMap<String, (f64, usize)> = BTreeMap::new();
            for row in &group {
                for (key, value) in crate::locmetrics::of_row(row).unwrap_or_default() {
                    let entry = loc.entry(key).or_default();
                    entry.0 += value;
                    entry.1 += 1;
                }
            }
            let n = group.len().max(1) as f64;
            let all_real = !group.is_empty() && lines.len() == group.len();
            out.push(MeanRow {
                explorer: explorer.to_string(),
                top_k: k,
                instances: group.len(),
                failures: group.iter().filter(|r| r.is_failure()).count(),
                mean: Metrics::from_values(sums.map(|s| s / n)),
                real: all_real.then(|| Metrics::from_values(real_sums.map(|s| s / n))),
                lines: all_real.then(|| LineStats::of(&lines)),
                line_budget: group.first().and_then(|r| r.line_budget),
                loc: loc
                    .into_iter()
                    .map(|(key, (sum, count))| (key, sum / count as f64))
                    .collect(),
            });
        }
    }
    out
}

fn explorers_in_order<'r>(rows: &[&'r ResultRow]) -> Vec<&'r str> {
    let mut explorers: Vec<&str> = Vec::new();
    for row in rows {
        if !explorers.contains(&row.explorer.as_str()) {
            explorers.push(&row.explorer);
        }
    }
    explorers
}

/// Means of one group of instances (a repository or a language).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupMeans {
    pub group: String,
    pub means: Vec<MeanRow>,
}

/// Per-instance comparison of two explorers at one k on one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    pub a: String,
    pub b: String,
    pub top_k: usize,
    pub metric: String,
    /// Instances both explorers have a row for.
    pub instances: usize,
    /// Instances where `a` scores higher / lower / the same (within 1e-12).
    pub wins: usize,
    pub losses: usize,
    pub ties: usize,
    /// Mean of `a − b` over the instances.
    pub mean_difference: f64,
    /// Percentile bootstrap interval of the mean difference.
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
}

/// What to compare in [`Report::build`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub a: String,
    pub b: String,
    /// One of [`Metrics::NAMES`].
    pub metric: String,
    pub resamples: usize,
    pub confidence: f64,
    pub seed: u64,
}

impl CompareOptions {
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> CompareOptions {
        CompareOptions {
            a: a.into(),
            b: b.into(),
            metric: "recall".into(),
            resamples: 10_000,
            confidence: 0.95,
            seed: 20_260_607,
        }
    }
}

/// One instance's rows, for the drill-down: its ground truth (when the benchmark is given) and
/// each explorer's answer at each k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceView {
    pub instance_id: String,
    pub repo: String,
    pub language: String,
    pub core_regions: Vec<crate::dataset::Region>,
    pub rows: Vec<ResultRow>,
}

/// Everything a report shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The result files read, in order.
    pub sources: Vec<String>,
    pub overall: Vec<MeanRow>,
    pub by_repo: Vec<GroupMeans>,
    pub by_language: Vec<GroupMeans>,
    pub paired: Vec<Paired>,
    /// Result rows whose instance the benchmark does not have (when a benchmark is given).
    pub unknown_instances: Vec<String>,
    #[serde(skip)]
    pub instances: Vec<InstanceView>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("--compare {0}: no rows for explorer `{1}`")]
    UnknownExplorer(String, String),
    #[error("--metric {0}: not one of the 17 metrics ({list})", list = Metrics::NAMES.join(", "))]
    UnknownMetric(String),
    #[error("--compare {a},{b}: no k at which both have rows")]
    NothingInCommon { a: String, b: String },
    #[error("no result rows to report on")]
    Empty,
}

/// The repository of an instance: the row's `repo`, else `org/repo` from an `org__repo-N` id.
pub fn repo_of(instance_id: &str, bench_row: Option<&BenchRow>) -> String {
    if let Some(repo) = bench_row.and_then(|r| r.repo.as_deref()) {
        return repo.to_string();
    }
    match instance_id.split_once("__") {
        Some((org, rest)) => {
            let name = rest.rsplit_once('-').map_or(rest, |(name, _)| name);
            format!("{org}/{name}")
        }
        None => "unknown".to_string(),
    }
}

/// The language of an instance: the row's `language` field, else the language of most of its
/// core files by extension, else `unknown`.
pub fn language_of(bench_row: Option<&BenchRow>) -> String {
    let Some(row) = bench_row else {
        return "unknown".into();
    };
    if let Some(language) = row.extra.get("language").and_then(|v| v.as_str()) {
        return language.to_string();
    }
    let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
    for region in &row.ground_truth.read_core_regions {
        let extension = region.path.rsplit_once('.').map_or("", |(_, e)| e);
        *votes.entry(language_of_extension(extension)).or_default() += 1;
    }
    votes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map_or_else(|| "unknown".into(), |(l, _)| l.to_string())
}

fn language_of_extension(extension: &str) -> &'static str {
    match extension.to_ascii_lowercase().as_str() {
        "py" | "pyi" => "Python",
        "rs" => "Rust",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "ts" | "tsx" => "TypeScript",
        "go" => "Go",
        "java" => "Java",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "C++",
        "rb" => "Ruby",
        "php" => "PHP",
        "ets" => "ArkTS",
        _ => "other",
    }
}

impl Report {
    /// Builds the report. `bench` adds ground truth to the drill-down and repositories and
    /// languages from the benchmark rows; without it they come from instance ids.
    pub fn build(
        sources: Vec<String>,
        rows: Vec<ResultRow>,
        bench: Option<&Benchmark>,
        compare: &[CompareOptions],
    ) -> Result<Report, ReportError> {
        if rows.is_empty() {
            return Err(ReportError::Empty);
        }
        // Rows of one explorer at several line budgets are separate series.
        let rows: Vec<ResultRow> = rows
            .into_iter()
            .map(|mut row| {
                row.explorer = series_name(&row);
                row
            })
            .collect();
        let refs: Vec<&ResultRow> = rows.iter().collect();
        let bench_row = |id: &str| bench.and_then(|b| b.get(id));
        let unknown_instances: Vec<String> = match bench {
            None => Vec::new(),
            Some(b) => rows
                .iter()
                .map(|r| r.instance_id.as_str())
                .filter(|id| b.get(id).is_none())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .map(str::to_string)
                .collect(),
        };

        let grouped = |key: &dyn Fn(&str) -> String| -> Vec<GroupMeans> {
            let mut groups: BTreeMap<String, Vec<&ResultRow>> = BTreeMap::new();
            for row in &refs {
                groups.entry(key(&row.instance_id)).or_default().push(row);
            }
            groups
                .into_iter()
                .map(|(group, rows)| GroupMeans {
                    group,
                    means: means_of(&rows),
                })
                .collect()
        };
        let by_repo = grouped(&|id| repo_of(id, bench_row(id)));
        let by_language = grouped(&|id| language_of(bench_row(id)));

        let mut paired = Vec::new();
        for options in compare {
            paired.extend(compare_pair(&refs, options)?);
        }

        // Drill-down: instances in benchmark order (unknown ones after, by id).
        let mut by_instance: BTreeMap<&str, Vec<ResultRow>> = BTreeMap::new();
        for row in &rows {
            by_instance
                .entry(row.instance_id.as_str())
                .or_default()
                .push(row.clone());
        }
        let position: HashMap<&str, usize> = bench
            .map(|b| {
                b.rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (r.instance_id.as_str(), i))
                    .collect()
            })
            .unwrap_or_default();
        let mut ids: Vec<&str> = by_instance.keys().copied().collect();
        ids.sort_by_key(|id| (position.get(id).copied().unwrap_or(usize::MAX), *id));
        let explorer_order = explorers_in_order(&refs);
        let instances = ids
            .into_iter()
            .map(|id| {
                let mut rows = by_instance.remove(id).unwrap_or_default();
                rows.sort_by_key(|r| {
                    (
                        explorer_order.iter().position(|e| *e == r.explorer),
                        r.top_k,
                    )
                });
                let row = bench_row(id);
                InstanceView {
                    instance_id: id.to_string(),
                    repo: repo_of(id, row),
                    language: language_of(row),
                    core_regions: row
                        .map(|r| r.ground_truth.read_core_regions.clone())
                        .unwrap_or_default(),
                    rows,
                }
            })
            .collect();

        Ok(Report {
            sources,
            overall: means_of(&refs),
            by_repo,
            by_language,
            paired,
            unknown_instances,
            instances,
        })
    }

    /// The explorers, in order of first appearance.
    pub fn explorers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for row in &self.overall {
            if !out.contains(&row.explorer.as_str()) {
                out.push(&row.explorer);
            }
        }
        out
    }

    /// The ks present, increasing.
    pub fn top_ks(&self) -> Vec<usize> {
        self.overall
            .iter()
            .map(|r| r.top_k)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// The paired comparisons of `a` and `b`, one per k both have.
fn compare_pair(rows: &[&ResultRow], options: &CompareOptions) -> Result<Vec<Paired>, ReportError> {
    let metric_index = Metrics::NAMES
        .iter()
        .position(|n| *n == options.metric)
        .ok_or_else(|| ReportError::UnknownMetric(options.metric.clone()))?;
    let pair = format!("{},{}", options.a, options.b);
    for name in [&options.a, &options.b] {
        if !rows.iter().any(|r| &r.explorer == name) {
            return Err(ReportError::UnknownExplorer(pair, name.clone()));
        }
    }
    let value_of = |explorer: &str, k: usize| -> BTreeMap<&str, f64> {
        rows.iter()
            .filter(|r| r.explorer == explorer && r.top_k == Some(k))
            .map(|r| (r.instance_id.as_str(), r.metrics.values()[metric_index]))
            .collect()
    };
    let ks: BTreeSet<usize> = rows.iter().filter_map(|r| r.top_k).collect();
    let mut out = Vec::new();
    for k in ks {
        let a = value_of(&options.a, k);
        let b = value_of(&options.b, k);
        let differences: Vec<f64> = a
            .iter()
            .filter_map(|(id, va)| b.get(id).map(|vb| va - vb))
            .collect();
        if differences.is_empty() {
            continue;
        }
        let wins = differences.iter().filter(|d| **d > 1e-12).count();
        let losses = differences.iter().filter(|d| **d < -1e-12).count();
        let (ci_low, ci_high) = bootstrap_ci(
            &differences,
            options.resamples,
            options.confidence,
            options.seed,
        );
        out.push(Paired {
            a: options.a.clone(),
            b: options.b.clone(),
            top_k: k,
            metric: options.metric.clone(),
            instances: differences.len(),
            wins,
            losses,
            ties: differences.len() - wins - losses,
            mean_difference: mean(&differences),
            ci_low,
            ci_high,
            confidence: options.confidence,
            resamples: options.resamples,
            seed: options.seed,
        });
    }
    if out.is_empty() {
        return Err(ReportError::NothingInCommon {
            a: options.a.clone(),
            b: options.b.clone(),
        });
    }
    Ok(out)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Percentile bootstrap of the mean: `resamples` means of samples drawn with replacement, cut at
/// the two tails. SplitMix64 keeps it seeded and dependency-free.
pub fn bootstrap_ci(values: &[f64], resamples: usize, confidence: f64, seed: u64) -> (f64, f64) {
    if values.is_empty() || resamples == 0 {
        return (0.0, 0.0);
    }
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let n = values.len() as u64;
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let sum: f64 = (0..n).map(|_| values[(next() % n) as usize]).sum();
            sum / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| {
        let index = (q * (resamples - 1) as f64).round() as usize;
        means[index.min(resamples - 1)]
    };
    (at(tail), at(1.0 - tail))
}
