//! The 17 SWE-Explore metrics, with exactly the semantics of the reference evaluator (`eval.py`).
//!
//! Per instance, [`PreparedTruth::new`] resolves the ground truth once (core, optional and their
//! union as per-file interval sets); [`PreparedTruth::score`] then scores any number of ranked
//! prediction lists against it, for instance one per top-k cut. Everything is interval arithmetic
//! on line numbers: no per-line sets, so a region of 10⁶ lines costs the same as one of 10.
//!
//! ```
//! use swex_bench::dataset::{GroundTruth, Region};
//! use swex_bench::linecounts::FileLineCounts;
//! use swex_bench::metrics::{score_instance, ScoreOptions};
//!
//! let truth = GroundTruth {
//!     read_core_files: vec!["a.py".into()],
//!     read_core_regions: vec![Region::new("a.py", 10, 19)],
//!     ..GroundTruth::default()
//! };
//! let predictions = [Region::new("a.py", 15, 24)];
//! let m = score_instance(&truth, &predictions, &FileLineCounts::default(), &ScoreOptions::default());
//! assert_eq!(m.precision, 0.5);
//! assert_eq!(m.recall, 0.5);
//! assert_eq!(m.first_useful_hit, 1.0);
//! ```
//!
//! The semantics, reproduced on purpose (the contract is `docs/metrics.md`):
//! - A region `(p, s, e)` with `e == -1` or `s < 0` needs the line count `L` of `p`: unresolvable
//!   without one (or with `L < 1`); else `e = L` for `-1`, `s = L + s + 1` for negative `s`, both
//!   clamped to `[1, L]`. Any other region is unresolvable when `e < 1`, else `(max(1, s), e)`,
//!   *not* clipped to the file length. A resolved `s > e` holds no lines but still takes part in
//!   region overlap tests (`s1 <= e2 && s2 <= e1`) and counts `e - s + 1` (negative) lines towards
//!   the nDCG budget, as in the reference.
//! - Line sets (precision, recall, coverage) are sets: duplicates count once. Region lists (noise
//!   region rate, budgets, nDCG, first useful hit) count duplicates.
//! - nDCG@B: gain of a prediction = Σ over its core lines of 1.5 (main file) or 1.0; the DCG adds
//!   rank i's line count to a running total and stops when the total exceeds B, except at rank 0;
//!   the ideal is the same predictions stably sorted by gain per line, descending.
//!   [`NdcgVariant::Paper`] replaces this with the paper's description (see [`NdcgVariant`]).
//! - first_useful_hit = 1 − i/n for the first prediction i (of the n given) covering a core line.
//! - Line numbers are any `i64`, as in the reference (whose Python integers never overflow): counts
//!   of lines are [`Lines`] (`i128`), so that a few regions ending near `i64::MAX` sum exactly
//!   instead of wrapping into negative precision. The ratios are then `f64` divisions of the exact
//!   counts (the reference rounds the quotient once; beyond 2^53 lines the two may differ in the
//!   last bit, never in sign or range).
//!
//! This module knows nothing about files or explorers: it takes ground truth, line counts and
//! ranked regions.

use crate::dataset::{GroundTruth, Region};
use crate::linecounts::FileLineCounts;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A count of lines: wide enough that sums over regions of any `i64` extent never overflow.
pub type Lines = i128;

/// The line budgets of `ndcg_at_B` and `recall_at_B`.
pub const BUDGETS: [i64; 3] = [100, 300, 500];

/// The 17 reference metrics of one ranked list, in the reference order and with its key names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub precision: f64,
    pub recall: f64,
    pub f1_score: f64,
    pub hit_file_rate: f64,
    pub noise_file_rate: f64,
    pub hit_region_rate: f64,
    pub noise_region_rate: f64,
    pub weighted_core_coverage: f64,
    pub context_efficiency: f64,
    pub optional_coverage: f64,
    pub ndcg_at_100: f64,
    pub ndcg_at_300: f64,
    pub ndcg_at_500: f64,
    pub recall_at_100: f64,
    pub recall_at_300: f64,
    pub recall_at_500: f64,
    pub first_useful_hit: f64,
}

impl Metrics {
    /// The metric names, in the reference order (the order of [`Metrics::values`]), from the one
    /// metrics list.
    pub const NAMES: [&'static str; 17] = crate::metric_list::REFERENCE_NAMES;

    /// The values in the order of [`Metrics::NAMES`].
    pub fn values(&self) -> [f64; 17] {
        [
            self.precision,
            self.recall,
            self.f1_score,
            self.hit_file_rate,
            self.noise_file_rate,
            self.hit_region_rate,
            self.noise_region_rate,
            self.weighted_core_coverage,
            self.context_efficiency,
            self.optional_coverage,
            self.ndcg_at_100,
            self.ndcg_at_300,
            self.ndcg_at_500,
            self.recall_at_100,
            self.recall_at_300,
            self.recall_at_500,
            self.first_useful_hit,
        ]
    }

    /// The inverse of [`Metrics::values`].
    pub fn from_values(v: [f64; 17]) -> Metrics {
        Metrics {
            precision: v[0],
            recall: v[1],
            f1_score: v[2],
            hit_file_rate: v[3],
            noise_file_rate: v[4],
            hit_region_rate: v[5],
            noise_region_rate: v[6],
            weighted_core_coverage: v[7],
            context_efficiency: v[8],
            optional_coverage: v[9],
            ndcg_at_100: v[10],
            ndcg_at_300: v[11],
            ndcg_at_500: v[12],
            recall_at_100: v[13],
            recall_at_300: v[14],
            recall_at_500: v[15],
            first_useful_hit: v[16],
        }
    }

    /// The value of the metric called `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        let index = Self::NAMES.iter().position(|n| *n == name)?;
        Some(self.values()[index])
    }
}

/// Metrics counted with every predicted file's real length, and the lines that costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RealScore {
    pub metrics: Metrics,
    /// Distinct lines the predictions hold (the denominator of precision): what a reader of the
    /// answer reads.
    pub lines_returned: u64,
}

/// Which nDCG@B to compute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NdcgVariant {
    /// What the released `eval.py` computes (the default: published numbers reproduce).
    #[default]
    Reference,
    /// The paper's description, as we read it: regions clipped to the file length when it is
    /// known; a prediction's gain counts only core lines no earlier prediction covered (marginal
    /// gain); the ideal order picks, greedily, the prediction with the largest marginal gain, ties
    /// to the shorter region, then the smaller path, then the earlier rank. Budget rule as in the
    /// reference.
    Paper,
}

/// Options of [`PreparedTruth::score`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScoreOptions {
    pub ndcg: NdcgVariant,
}

/// A resolved line interval, 1-based and closed. May be inverted (`start > end`): then it holds no
/// lines, but the reference still uses its endpoints in overlap tests and budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: i64,
    pub end: i64,
}

impl Span {
    /// Number of lines it holds (0 when inverted).
    pub fn len(&self) -> i64 {
        if self.start > self.end {
            0
        } else {
            self.end - self.start + 1
        }
    }

    pub fn is_empty(&self) -> bool {
        self.start > self.end
    }

    /// The reference's `e - s + 1`, negative for inverted spans.
    fn signed_len(&self) -> i64 {
        self.end.saturating_sub(self.start).saturating_add(1)
    }

    /// The reference's overlap test on resolved endpoints (true for some inverted spans too).
    fn overlaps(&self, other: &Span) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// Resolves a region's `(start, end)` against its file's line count, exactly as the reference
/// does; `None` when the region cannot be resolved.
pub fn resolve(start: i64, end: i64, line_count: Option<i64>) -> Option<Span> {
    if end == -1 || start < 0 {
        let lines = line_count.filter(|&l| l >= 1)?;
        let end = if end == -1 { lines } else { end };
        let start = if start < 0 {
            lines.saturating_add(start).saturating_add(1)
        } else {
            start
        };
        Some(Span {
            start: start.clamp(1, lines),
            end: end.clamp(1, lines),
        })
    } else if end < 1 {
        None
    } else {
        Some(Span {
            start: start.max(1),
            end,
        })
    }
}

/// A set of line numbers as sorted, disjoint, non-adjacent closed runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LineSet {
    runs: Vec<(i64, i64)>,
}

impl LineSet {
    fn from_spans(spans: impl IntoIterator<Item = Span>) -> LineSet {
        let mut runs: Vec<(i64, i64)> = spans
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(|s| (s.start, s.end))
            .collect();
        runs.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(runs.len());
        for (start, end) in runs {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        LineSet { runs: merged }
    }

    fn len(&self) -> Lines {
        self.runs
            .iter()
            .map(|&(s, e)| Lines::from(e) - Lines::from(s) + 1)
            .sum()
    }

    /// Number of lines of `span` in the set.
    fn count_in(&self, span: Span) -> Lines {
        if span.is_empty() {
            return 0;
        }
        self.runs
            .iter()
            .map(|&(s, e)| {
                let (lo, hi) = (s.max(span.start), e.min(span.end));
                if lo <= hi {
                    Lines::from(hi) - Lines::from(lo) + 1
                } else {
                    0
                }
            })
            .sum()
    }

    fn intersection(&self, other: &LineSet) -> LineSet {
        let (mut i, mut j) = (0, 0);
        let mut runs = Vec::new();
        while i < self.runs.len() && j < other.runs.len() {
            let (a, b) = (self.runs[i], other.runs[j]);
            let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));
            if lo <= hi {
                runs.push((lo, hi));
            }
            if a.1 < b.1 { i += 1 } else { j += 1 }
        }
        LineSet { runs }
    }

    fn intersection_len(&self, other: &LineSet) -> Lines {
        self.intersection(other).len()
    }

    fn insert(&mut self, span: Span) {
        if !span.is_empty() {
            let spans = self.runs.iter().map(|&(start, end)| Span { start, end });
            *self = LineSet::from_spans(spans.chain([span]));
        }
    }
}

/// What the ground truth says about one file.
#[derive(Debug, Clone, Default)]
struct FileTruth {
    core_lines: LineSet,
    optional_lines: LineSet,
    /// Core ∪ optional.
    gold_lines: LineSet,
    /// Resolved core and optional regions (inverted ones included) for the overlap tests.
    core_spans: Vec<Span>,
    optional_spans: Vec<Span>,
    /// In `main_files`: weight 3 (coverage) and 1.5 (nDCG gain) instead of 2 and 1.
    main: bool,
}

/// One instance's ground truth, resolved once and ready to score prediction lists against.
#[derive(Debug, Clone)]
pub struct PreparedTruth {
    line_counts: FileLineCounts,
    files: HashMap<String, FileTruth>,
    /// Every core region in order, resolved (`None`: unresolvable), with its path.
    core_regions: Vec<(String, Option<Span>)>,
    core_files: HashSet<String>,
    optional_files: HashSet<String>,
    core_line_total: Lines,
    optional_line_total: Lines,
}

impl PreparedTruth {
    pub fn new(truth: &GroundTruth, line_counts: &FileLineCounts) -> PreparedTruth {
        let resolve_region = |r: &Region| resolve(r.start, r.end, line_counts.get(&r.path));
        let main_files: HashSet<&str> = truth.main_files.iter().map(String::as_str).collect();

        let mut core_spans: HashMap<&str, Vec<Span>> = HashMap::new();
        let mut core_regions = Vec::with_capacity(truth.read_core_regions.len());
        for region in &truth.read_core_regions {
            let span = resolve_region(region);
            if let Some(span) = span {
                core_spans.entry(&region.path).or_default().push(span);
            }
            core_regions.push((region.path.clone(), span));
        }
        let mut optional_spans: HashMap<&str, Vec<Span>> = HashMap::new();
        for region in truth.optional_regions() {
            if let Some(span) = resolve_region(region) {
                optional_spans.entry(&region.path).or_default().push(span);
            }
        }

        let mut files: HashMap<String, FileTruth> = HashMap::new();
        for path in core_spans.keys().chain(optional_spans.keys()) {
            if files.contains_key(*path) {
                continue;
            }
            let core = core_spans.get(path).cloned().unwrap_or_default();
            let optional = optional_spans.get(path).cloned().unwrap_or_default();
            let file = FileTruth {
                core_lines: LineSet::from_spans(core.iter().copied()),
                optional_lines: LineSet::from_spans(optional.iter().copied()),
                gold_lines: LineSet::from_spans(core.iter().chain(&optional).copied()),
                core_spans: core,
                optional_spans: optional,
                main: main_files.contains(path),
            };
            files.insert(path.to_string(), file);
        }
        let core_line_total = files.values().map(|f| f.core_lines.len()).sum();
        let optional_line_total = files.values().map(|f| f.optional_lines.len()).sum();

        PreparedTruth {
            line_counts: line_counts.clone(),
            files,
            core_regions,
            core_files: truth.read_core_files.iter().cloned().collect(),
            optional_files: truth.optional_files().cloned().collect(),
            core_line_total,
            optional_line_total,
        }
    }

    /// Scores one ranked prediction list (already cut to the top k), counting as the reference
    /// evaluator does: only ground-truth files have a length, so a whole-file region on any other
    /// file holds no lines.
    pub fn score(&self, predictions: &[Region], options: &ScoreOptions) -> Metrics {
        let preds: Vec<Prediction<'_>> = predictions
            .iter()
            .map(|r| Prediction {
                path: &r.path,
                span: resolve(r.start, r.end, self.line_counts.get(&r.path)),
                file: self.files.get(&r.path),
            })
            .collect();
        self.score_resolved(&preds, options)
    }

    /// Scores one ranked prediction list with every predicted file's real length
    /// (`lengths`: the line count of each predicted file that exists; see
    /// [`FileLineCounts::from_paths`]): a whole-file region costs its file's lines, and a region
    /// is clipped to the end of its file (lines past the end are not there to read). A file
    /// without a length (it does not exist) holds no lines. The ground truth is resolved exactly
    /// as in [`PreparedTruth::score`], so the two differ only in what the predictions cost.
    pub fn score_real(
        &self,
        predictions: &[Region],
        options: &ScoreOptions,
        lengths: &FileLineCounts,
    ) -> RealScore {
        let preds: Vec<Prediction<'_>> = predictions
            .iter()
            .map(|r| {
                let length = lengths.get(&r.path);
                let span = resolve(r.start, r.end, length).and_then(|span| match length {
                    Some(lines) if span.start > lines => None,
                    Some(lines) => Some(Span {
                        end: span.end.min(lines),
                        ..span
                    }),
                    None => None,
                });
                Prediction {
                    path: &r.path,
                    span,
                    file: self.files.get(&r.path),
                }
            })
            .collect();
        RealScore {
            metrics: self.score_resolved(&preds, options),
            lines_returned: PredictedLines::new(&preds).total().max(0) as u64,
        }
    }

    fn score_resolved(&self, preds: &[Prediction<'_>], options: &ScoreOptions) -> Metrics {
        let pred_lines = PredictedLines::new(preds);

        let predicted = pred_lines.total();
        let hit_core = pred_lines.overlap_with(|f| &f.core_lines);
        let hit_optional = pred_lines.overlap_with(|f| &f.optional_lines);
        let hit_gold = pred_lines.overlap_with(|f| &f.gold_lines);

        let precision = ratio(hit_core, predicted);
        let recall = ratio(hit_core, self.core_line_total);
        let f1_score = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };

        let ndcg = match options.ndcg {
            NdcgVariant::Reference => self.ndcg_reference(preds),
            NdcgVariant::Paper => self.ndcg_paper(preds),
        };
        let recall_at = BUDGETS.map(|budget| self.recall_at_budget(preds, budget));

        Metrics {
            precision,
            recall,
            f1_score,
            hit_file_rate: self.hit_file_rate(preds),
            noise_file_rate: self.noise_file_rate(preds),
            hit_region_rate: self.hit_region_rate(preds),
            noise_region_rate: noise_region_rate(preds),
            weighted_core_coverage: self.weighted_core_coverage(&pred_lines),
            context_efficiency: ratio(hit_gold, predicted),
            optional_coverage: ratio(hit_optional, self.optional_line_total),
            ndcg_at_100: ndcg[0],
            ndcg_at_300: ndcg[1],
            ndcg_at_500: ndcg[2],
            recall_at_100: recall_at[0],
            recall_at_300: recall_at[1],
            recall_at_500: recall_at[2],
            first_useful_hit: first_useful_hit(preds),
        }
    }

    fn hit_file_rate(&self, preds: &[Prediction<'_>]) -> f64 {
        let visited: HashSet<&str> = preds.iter().map(|p| p.path).collect();
        let hits = self
            .core_files
            .iter()
            .filter(|f| visited.contains(f.as_str()))
            .count();
        ratio(hits as Lines, self.core_files.len() as Lines)
    }

    fn noise_file_rate(&self, preds: &[Prediction<'_>]) -> f64 {
        let visited: HashSet<&str> = preds.iter().map(|p| p.path).collect();
        let noise = visited
            .iter()
            .filter(|p| !self.core_files.contains(**p) && !self.optional_files.contains(**p))
            .count();
        ratio(noise as Lines, visited.len() as Lines)
    }

    fn hit_region_rate(&self, preds: &[Prediction<'_>]) -> f64 {
        let hits = self
            .core_regions
            .iter()
            .filter(|(path, span)| {
                span.is_some_and(|core| {
                    preds.iter().any(|p| {
                        p.path == path.as_str() && p.span.is_some_and(|s| s.overlaps(&core))
                    })
                })
            })
            .count();
        ratio(hits as Lines, self.core_regions.len() as Lines)
    }

    fn weighted_core_coverage(&self, pred_lines: &PredictedLines<'_>) -> f64 {
        let mut weighted_sum = 0.0;
        let mut weight_total = 0.0;
        for (path, span) in &self.core_regions {
            let Some(span) = span.filter(|s| !s.is_empty()) else {
                continue;
            };
            let covered = pred_lines.lines_of(path).map_or(0, |l| l.count_in(span));
            let coverage = covered as f64 / span.len() as f64;
            let main = self.files.get(path).is_some_and(|f| f.main);
            let weight = if main { 3.0 } else { 2.0 };
            weighted_sum += weight * coverage;
            weight_total += weight;
        }
        if weight_total > 0.0 {
            weighted_sum / weight_total
        } else {
            0.0
        }
    }

    fn recall_at_budget(&self, preds: &[Prediction<'_>], budget: i64) -> f64 {
        if self.core_line_total == 0 {
            return 0.0;
        }
        // Lines are read in rank order, each costing one unit of budget even when already read.
        let mut read: Vec<(&str, Span)> = Vec::new();
        let mut spent = 0i64;
        for pred in preds {
            let Some(span) = pred.span.filter(|s| !s.is_empty()) else {
                continue;
            };
            let take = span.len().min(budget - spent);
            read.push((
                pred.path,
                Span {
                    start: span.start,
                    end: span.start + take - 1,
                },
            ));
            spent += take;
            if spent >= budget {
                break;
            }
        }
        let covered = group_by_path(read.into_iter())
            .into_iter()
            .map(|(path, lines)| {
                self.files
                    .get(path)
                    .map_or(0, |f| lines.intersection_len(&f.core_lines))
            })
            .sum::<Lines>();
        ratio(covered, self.core_line_total)
    }

    fn gain_weight(file: Option<&FileTruth>) -> f64 {
        if file.is_some_and(|f| f.main) {
            1.5
        } else {
            1.0
        }
    }

    fn ndcg_reference(&self, preds: &[Prediction<'_>]) -> [f64; 3] {
        if self.core_regions.is_empty() || preds.is_empty() {
            return [0.0; 3];
        }
        let ranked: Vec<(f64, i64)> = preds
            .iter()
            .map(|p| match (p.span, p.file) {
                (None, _) => (0.0, 0),
                (Some(span), file) => {
                    let core = file.map_or(0, |f| f.core_lines.count_in(span));
                    // Summing 1.0 or 1.5 once per line is exact in f64, so a product equals it.
                    (Self::gain_weight(file) * core as f64, span.signed_len())
                }
            })
            .collect();
        let mut ideal = ranked.clone();
        // A stable sort: ties keep rank order, like Python's `sorted(..., reverse=True)`.
        ideal.sort_by(|a, b| {
            density(b)
                .partial_cmp(&density(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        BUDGETS.map(|budget| ndcg(&ranked, &ideal, budget))
    }

    fn ndcg_paper<'p>(&self, preds: &[Prediction<'p>]) -> [f64; 3] {
        if self.core_regions.is_empty() || preds.is_empty() {
            return [0.0; 3];
        }
        let clipped: Vec<Option<Span>> = preds
            .iter()
            .map(|p| {
                let span = p.span?;
                let end = match self.line_counts.get(p.path) {
                    Some(lines) => span.end.min(lines),
                    None => span.end,
                };
                Some(Span { end, ..span })
            })
            .collect();
        let length = |i: usize| clipped[i].map_or(0, |s| s.len());
        // Core lines of prediction i not yet covered by `covered` (per path), weighted.
        let marginal_gain = |i: usize, covered: &HashMap<&'p str, LineSet>| -> f64 {
            let (Some(span), Some(file)) = (clipped[i], preds[i].file) else {
                return 0.0;
            };
            let core = LineSet::from_spans([span]).intersection(&file.core_lines);
            let seen = covered
                .get(preds[i].path)
                .map_or(0, |c| core.intersection_len(c));
            Self::gain_weight(Some(file)) * (core.len() - seen) as f64
        };
        let cover = |i: usize, covered: &mut HashMap<&'p str, LineSet>| {
            if let Some(span) = clipped[i] {
                covered.entry(preds[i].path).or_default().insert(span);
            }
        };

        let mut covered = HashMap::new();
        let mut ranked = Vec::with_capacity(preds.len());
        for i in 0..preds.len() {
            ranked.push((marginal_gain(i, &covered), length(i)));
            cover(i, &mut covered);
        }

        let mut covered = HashMap::new();
        let mut remaining: Vec<usize> = (0..preds.len()).collect();
        let mut ideal = Vec::with_capacity(preds.len());
        while !remaining.is_empty() {
            let gains: Vec<f64> = remaining
                .iter()
                .map(|&i| marginal_gain(i, &covered))
                .collect();
            let best = (0..remaining.len())
                .min_by(|&a, &b| {
                    let (ia, ib) = (remaining[a], remaining[b]);
                    gains[b]
                        .total_cmp(&gains[a])
                        .then(length(ia).cmp(&length(ib)))
                        .then(preds[ia].path.cmp(preds[ib].path))
                        .then(ia.cmp(&ib))
                })
                .expect("remaining is not empty");
            let chosen = remaining.remove(best);
            ideal.push((gains[best], length(chosen)));
            cover(chosen, &mut covered);
        }
        BUDGETS.map(|budget| ndcg(&ranked, &ideal, budget))
    }
}

/// Scores one ranked prediction list against one instance's ground truth. When scoring several
/// lists (several explorers or top-k cuts) against the same instance, build a [`PreparedTruth`]
/// once and call [`PreparedTruth::score`] instead.
pub fn score_instance(
    truth: &GroundTruth,
    predictions: &[Region],
    line_counts: &FileLineCounts,
    options: &ScoreOptions,
) -> Metrics {
    PreparedTruth::new(truth, line_counts).score(predictions, options)
}

/// A prediction resolved against the instance.
struct Prediction<'a> {
    path: &'a str,
    span: Option<Span>,
    file: Option<&'a FileTruth>,
}

/// The union of the predicted lines, per file.
struct PredictedLines<'a> {
    files: Vec<(&'a str, LineSet, Option<&'a FileTruth>)>,
}

impl<'a> PredictedLines<'a> {
    fn new(preds: &[Prediction<'a>]) -> Self {
        let lines = group_by_path(preds.iter().filter_map(|p| Some((p.path, p.span?))));
        let files = lines
            .into_iter()
            .map(|(path, set)| {
                let file = preds.iter().find(|p| p.path == path).and_then(|p| p.file);
                (path, set, file)
            })
            .collect();
        PredictedLines { files }
    }

    fn total(&self) -> Lines {
        self.files.iter().map(|(_, l, _)| l.len()).sum()
    }

    fn overlap_with(&self, truth_lines: impl Fn(&FileTruth) -> &LineSet) -> Lines {
        self.files
            .iter()
            .filter_map(|(_, lines, file)| Some(lines.intersection_len(truth_lines((*file)?))))
            .sum()
    }

    fn lines_of(&self, path: &str) -> Option<&LineSet> {
        self.files
            .iter()
            .find(|(p, _, _)| *p == path)
            .map(|(_, l, _)| l)
    }
}

/// Groups spans by path (first-appearance order) into line sets. Lists are short (top k), so a
/// linear scan beats hashing.
fn group_by_path<'a>(spans: impl Iterator<Item = (&'a str, Span)>) -> Vec<(&'a str, LineSet)> {
    let mut grouped: Vec<(&'a str, Vec<Span>)> = Vec::new();
    for (path, span) in spans {
        match grouped.iter_mut().find(|(p, _)| *p == path) {
            Some((_, list)) => list.push(span),
            None => grouped.push((path, vec![span])),
        }
    }
    grouped
        .into_iter()
        .map(|(path, spans)| (path, LineSet::from_spans(spans)))
        .collect()
}

fn noise_region_rate(preds: &[Prediction<'_>]) -> f64 {
    let noise = preds
        .iter()
        .filter(|p| {
            let touches = |spans: &[Span]| {
                p.span
                    .is_some_and(|s| spans.iter().any(|other| s.overlaps(other)))
            };
            !p.file
                .is_some_and(|f| touches(&f.core_spans) || touches(&f.optional_spans))
        })
        .count();
    ratio(noise as Lines, preds.len() as Lines)
}

fn first_useful_hit(preds: &[Prediction<'_>]) -> f64 {
    let first = preds.iter().position(|p| match (p.span, p.file) {
        (Some(span), Some(file)) => file.core_lines.count_in(span) > 0,
        _ => false,
    });
    match first {
        Some(i) => 1.0 - (i as f64 / preds.len() as f64),
        None => 0.0,
    }
}

/// `a / b` as Python's true division of two ints, and 0 when `b` is 0.
fn ratio(a: Lines, b: Lines) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The reference's ideal-order key: gain per line, with empty regions counting one line.
fn density(&(gain, lines): &(f64, i64)) -> f64 {
    gain / lines.max(1) as f64
}

/// DCG of `(gain, line count)` pairs in the given order: rank i adds its lines to a running total
/// and stops the walk when the total exceeds the budget, except at rank 0.
fn dcg(ranked: &[(f64, i64)], budget: i64) -> f64 {
    let mut dcg = 0.0;
    let mut spent = 0i64;
    for (i, &(gain, lines)) in ranked.iter().enumerate() {
        spent = spent.saturating_add(lines);
        if spent > budget && i > 0 {
            break;
        }
        dcg += gain / ((i + 2) as f64).log2();
    }
    dcg
}

fn ndcg(ranked: &[(f64, i64)], ideal: &[(f64, i64)], budget: i64) -> f64 {
    let ideal_dcg = dcg(ideal, budget);
    if ideal_dcg > 0.0 {
        (dcg(ranked, budget) / ideal_dcg).min(1.0)
    } else {
        0.0
    }
}
