//! swex-rankkit: what the ranking explorers (`bm25`, `tfidf`, `dense`, `hybrid`, `graph`) share — turning
//! ranked chunk lists into regions, and fusing several ranked lists into one.
//!
//! - [`Ranked`]: one ranked chunk `(path, start, end, score, why)`, from any search service.
//! - [`fuse`]: reciprocal rank fusion or normalised score fusion of weighted lists, with a
//!   deterministic order on ties.
//! - [`select`]: walks a ranking and keeps `top_k` regions within a line budget, by default
//!   merging chunks of one file that overlap, touch or are separated only by blank lines (no line
//!   is paid for twice, and neighbouring definitions do not take two places: the engine's blank
//!   chunks between definitions are never hits themselves), re-merging a region that grows into
//!   another, and optionally capping the regions per file so that the answer spans more files.
//!   Its [`Selection`] names where rankers differ: [`Overlap::Skip`] keeps each ranked item
//!   whole and drops those overlapping it, and [`PerFile::AtMost`] is a cap that held-back
//!   chunks never fill ([`select_regions`] and [`select_regions_within`] are the chunk rankers'
//!   defaults).
//! - [`BlankLines`]: answers "are these lines blank?" from the `read_lines` service, each file
//!   read once.
//! - [`dense_note`]: the line an explorer adds to its notes about how dense hits were found.
//! - [`trees`]: gradient-boosted trees at inference (the learned ranking model's format).
//! - [`localize`]: within-file localization (definition-level candidate spans scored by the
//!   evidence marks they hold) and the budgeted choice between whole files and focused regions.
//!
//! It knows nothing about how the lists were produced (engine, services, scores' scales); it
//! only sees ranks and scores.

pub mod localize;
pub mod trees;

use serde::Deserialize;
use std::collections::HashMap;
use swex_plugin::types::{DenseMode, SearchHit, SearchResult};
use swex_plugin::{Region, Services};

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub path: String,
    pub start: i64,
    pub end: i64,
    /// Higher is better; the scale depends on the producer.
    pub score: f64,
    /// Provenance for people (`dense: function parse_url`).
    pub why: String,
}

impl Ranked {
    pub fn new(path: impl Into<String>, start: i64, end: i64, score: f64) -> Ranked {
        Ranked {
            path: path.into(),
            start,
            end,
            score,
            why: String::new(),
        }
    }

    /// A search hit, its provenance `label: kind name`.
    pub fn from_hit(hit: &SearchHit, label: &str) -> Ranked {
        let why = match (&hit.kind, &hit.name) {
            (Some(kind), Some(name)) => format!("{label}: {kind} {name}"),
            (Some(kind), None) => format!("{label}: {kind}"),
            _ => label.to_owned(),
        };
        Ranked {
            path: hit.path.clone(),
            start: hit.start as i64,
            end: hit.end as i64,
            score: hit.score,
            why,
        }
    }

    fn span(&self) -> (&str, i64, i64) {
        (&self.path, self.start, self.end)
    }
}

/// How [`fuse`] combines lists.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ weight / (k + rank), rank from 1. Uses ranks only, so lists
    /// whose scores live on unrelated scales (BM25, cosine) combine without calibration.
    Rrf,
    /// Normalised score fusion: Σ weight × (score − min) / (max − min) over each list (1 when a
    /// list's scores are all equal); a chunk absent from a list gets 0 from it.
    Score,
}

/// The `k` of reciprocal rank fusion: the usual 60 (Cormack et al.), which flattens the
/// difference between the first few ranks of a list.
pub const DEFAULT_RRF_K: f64 = 60.0;

/// One list to fuse.
#[derive(Debug, Clone, Copy)]
pub struct FusionInput<'a> {
    /// Named in the fused items' `why` (`lexical`, `dense`).
    pub name: &'a str,
    pub ranked: &'a [Ranked],
    pub weight: f64,
}

/// Fuses ranked lists into one ranking of distinct chunks (same path, start and end), best
/// first. Ties are broken by the best rank a chunk has in any list, then by the order of first
/// appearance (earlier lists first), so the result is deterministic. Each fused item's `why`
/// names its rank in every list that has it.
pub fn fuse(inputs: &[FusionInput<'_>], fusion: Fusion, rrf_k: f64) -> Vec<Ranked> {
    struct Entry {
        first_seen: usize,
        best_rank: usize,
        score: f64,
        /// Inputs that ranked the chunk, and the text naming its rank in each.
        seen_in: Vec<usize>,
        origin: Vec<String>,
        kind_why: String,
    }
    let mut entries: Vec<(Ranked, Entry)> = Vec::new();
    let mut index: HashMap<(String, i64, i64), usize> = HashMap::new();
    for (input_index, input) in inputs.iter().enumerate() {
        let (min, max) = input
            .ranked
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r.score), hi.max(r.score))
            });
        for (position, ranked) in input.ranked.iter().enumerate() {
            let rank = position + 1;
            let contribution = input.weight
                * match fusion {
                    Fusion::Rrf => 1.0 / (rrf_k + rank as f64),
                    Fusion::Score if max > min => (ranked.score - min) / (max - min),
                    Fusion::Score => 1.0,
                };
            let key = (ranked.path.clone(), ranked.start, ranked.end);
            let slot = *index.entry(key).or_insert_with(|| {
                let first_seen = entries.len();
                entries.push((
                    Ranked {
                        score: 0.0,
                        why: String::new(),
                        ..ranked.clone()
                    },
                    Entry {
                        first_seen,
                        best_rank: rank,
                        score: 0.0,
                        seen_in: Vec::new(),
                        origin: Vec::new(),
                        kind_why: ranked.why.clone(),
                    },
                ));
                first_seen
            });
            let entry = &mut entries[slot].1;
            // A list that names the same chunk twice counts it once, at its best rank.
            if entry.seen_in.contains(&input_index) {
                continue;
            }
            entry.seen_in.push(input_index);
            entry.score += contribution;
            entry.best_rank = entry.best_rank.min(rank);
            entry.origin.push(format!("{} #{rank}", input.name));
        }
    }
    entries.sort_by(|(_, a), (_, b)| {
        b.score
            .total_cmp(&a.score)
            .then(a.best_rank.cmp(&b.best_rank))
            .then(a.first_seen.cmp(&b.first_seen))
    });
    entries
        .into_iter()
        .map(|(mut ranked, entry)| {
            ranked.score = entry.score;
            ranked.why = if entry.kind_why.is_empty() {
                entry.origin.join(", ")
            } else {
                format!("{} ({})", entry.kind_why, entry.origin.join(", "))
            };
            ranked
        })
        .collect()
}

/// What [`select`] does with a chunk of a file that already has a region it overlaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overlap {
    /// The chunk merges into the region it overlaps, touches or is separated from only by blank
    /// lines, and the grown region absorbs the others it reaches: for rankers of engine chunks,
    /// whose neighbouring chunks are parts of one stretch of code, so no line is paid for twice and
    /// neighbours do not take two places.
    #[default]
    Merge,
    /// The chunk is dropped: every region is one ranked chunk exactly as it came (touching ones
    /// stay apart). For rankers whose items are whole definitions or files (`graph`): a definition
    /// inside one already chosen adds no line, and merging would grow a region past the item the
    /// ranker scored.
    Skip,
}

/// How [`select`] holds a file to its cap of regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PerFile {
    /// No cap.
    #[default]
    Unlimited,
    /// At most `n` regions while chunks of other files are left; the chunks held back fill the
    /// places still free, in rank order, when the ranking runs out (an answer is never shorter
    /// for the cap).
    Prefer(usize),
    /// At most `n` regions, whatever is left: diversity over length (`graph`, whose ranking ends
    /// with lexical hits that fill what its own candidates leave).
    AtMost(usize),
}

impl PerFile {
    /// `Some(n)` is [`PerFile::Prefer`], the cap of [`select_regions`].
    pub fn prefer(cap: Option<usize>) -> PerFile {
        cap.map_or(PerFile::Unlimited, PerFile::Prefer)
    }

    fn cap(self) -> Option<usize> {
        match self {
            PerFile::Unlimited => None,
            PerFile::Prefer(n) | PerFile::AtMost(n) => Some(n),
        }
    }
}

/// The rules of one [`select`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// At most this many regions.
    pub top_k: usize,
    pub per_file: PerFile,
    /// At most this many lines in all (the request's `line_budget`): a chunk that would pass it,
    /// as a new region or by growing one, is skipped, so a later, shorter chunk can still use what
    /// is left. Chunk regions are explicit line ranges, so their cost is their length; `None` is
    /// no limit.
    pub line_budget: Option<u64>,
    pub overlap: Overlap,
}

impl Selection {
    /// `top_k` regions, merging, no cap, no budget.
    pub fn new(top_k: usize) -> Selection {
        Selection {
            top_k,
            per_file: PerFile::Unlimited,
            line_budget: None,
            overlap: Overlap::Merge,
        }
    }
}

/// Regions from a ranking, best first: each chunk either joins an earlier region of the same
/// file (as `selection.overlap` says), or starts a new region while there are fewer than `top_k`
/// and its file is under its cap, or is skipped. `blank(path, from, to)` (inclusive) says whether
/// lines are blank, for [`Overlap::Merge`]; `|_, _, _| false` merges only overlapping or
/// touching chunks. With [`Overlap::Merge`] a chunk merges even when all places are taken, and a
/// region that grows absorbs the other regions of its file it now reaches (the earlier-ranked one
/// keeps its place, score and reason), which frees a place for a later chunk.
pub fn select(
    ranked: &[Ranked],
    selection: &Selection,
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> Vec<Region> {
    let fits = |regions: &[Region]| {
        selection.line_budget.is_none_or(|budget| {
            let lines: i64 = regions.iter().map(|r| (r.end - r.start + 1).max(0)).sum();
            lines as u64 <= budget
        })
    };
    // Joins `chunk` to the regions, or adds it as a region, when the result fits; whether it was
    // used up (taken, merged past the budget, or dropped as an overlap).
    let mut take = |regions: &mut Vec<Region>, chunk: &Ranked, add: bool| -> bool {
        let mut trial = regions.clone();
        let merged = match selection.overlap {
            Overlap::Merge => merge(&mut trial, chunk, blank),
            Overlap::Skip if overlaps_any(regions, chunk) => return true,
            Overlap::Skip => false,
        };
        if !merged {
            if !add {
                return false;
            }
            trial.push(region(chunk));
        }
        if fits(&trial) {
            *regions = trial;
            true
        } else {
            merged // a chunk whose merge does not fit is used up all the same
        }
    };
    let cap = selection.per_file.cap();
    let mut regions: Vec<Region> = Vec::new();
    let mut held_back: Vec<&Ranked> = Vec::new();
    for chunk in ranked {
        let in_file = regions.iter().filter(|r| r.path == chunk.path).count();
        let capped = cap.is_some_and(|cap| in_file >= cap);
        let room = regions.len() < selection.top_k;
        if take(&mut regions, chunk, room && !capped) || !room {
            continue;
        }
        if capped && matches!(selection.per_file, PerFile::Prefer(_)) {
            held_back.push(chunk);
        }
    }
    for chunk in held_back {
        let room = regions.len() < selection.top_k;
        take(&mut regions, chunk, room);
    }
    regions
}

/// [`select`] merging, with `per_file` as [`PerFile::Prefer`], no line budget.
pub fn select_regions(
    ranked: &[Ranked],
    top_k: usize,
    per_file: Option<usize>,
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> Vec<Region> {
    select_regions_within(ranked, top_k, per_file, None, blank)
}

/// [`select`] merging, with `per_file` as [`PerFile::Prefer`], within `line_budget`.
pub fn select_regions_within(
    ranked: &[Ranked],
    top_k: usize,
    per_file: Option<usize>,
    line_budget: Option<u64>,
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> Vec<Region> {
    let selection = Selection {
        per_file: PerFile::prefer(per_file),
        line_budget,
        ..Selection::new(top_k)
    };
    select(ranked, &selection, blank)
}

/// Whether `chunk` shares a line with a region of its file.
fn overlaps_any(regions: &[Region], chunk: &Ranked) -> bool {
    regions
        .iter()
        .any(|r| r.path == chunk.path && r.start <= chunk.end && chunk.start <= r.end)
}

/// Whether the span `start..=end` of `path` joins `region`: same file, and overlapping,
/// touching, or apart only by blank lines.
fn joins(
    region: &Region,
    (path, start, end): (&str, i64, i64),
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> bool {
    if region.path != path {
        return false;
    }
    if start <= region.end + 1 && region.start <= end + 1 {
        return true;
    }
    let (from, to) = if start > region.end {
        (region.end + 1, start - 1)
    } else {
        (end + 1, region.start - 1)
    };
    blank(path, from, to)
}

/// Folds `chunk` into the first region it joins, then lets the grown region absorb the other
/// regions it now joins.
fn merge(
    regions: &mut Vec<Region>,
    chunk: &Ranked,
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> bool {
    let Some(mut at) = regions.iter().position(|r| joins(r, chunk.span(), blank)) else {
        return false;
    };
    regions[at].start = regions[at].start.min(chunk.start);
    regions[at].end = regions[at].end.max(chunk.end);
    loop {
        let grown = (regions[at].path.clone(), regions[at].start, regions[at].end);
        let Some(other) = (0..regions.len())
            .find(|&i| i != at && joins(&regions[i], (&grown.0, grown.1, grown.2), blank))
        else {
            return true;
        };
        let (keep, gone) = (at.min(other), at.max(other));
        let removed = regions.remove(gone);
        regions[keep].start = regions[keep].start.min(removed.start);
        regions[keep].end = regions[keep].end.max(removed.end);
        at = keep;
    }
}

/// Whether lines `from..=to` of a file are all blank (whitespace only), each file's lines read
/// once through the `read_lines` service; a file that cannot be read has no blank lines.
pub struct BlankLines<'s, 'a> {
    services: &'s Services<'a>,
    files: HashMap<String, Option<Vec<bool>>>,
}

impl<'s, 'a> BlankLines<'s, 'a> {
    pub fn new(services: &'s Services<'a>) -> Self {
        BlankLines {
            services,
            files: HashMap::new(),
        }
    }

    pub fn check(&mut self, path: &str, from: i64, to: i64) -> bool {
        if from > to || from < 1 {
            return false;
        }
        let services = self.services;
        let blank = self.files.entry(path.to_owned()).or_insert_with(|| {
            services
                .read_file_lines(path)
                .ok()
                .map(|lines| lines.iter().map(|line| line.trim().is_empty()).collect())
        });
        match blank {
            Some(blank) => blank
                .get(from as usize - 1..to as usize)
                .is_some_and(|lines| lines.iter().all(|&b| b)),
            None => false,
        }
    }
}

fn region(chunk: &Ranked) -> Region {
    let mut region =
        Region::new(chunk.path.clone(), chunk.start, chunk.end).with_score(chunk.score);
    if !chunk.why.is_empty() {
        region = region.with_why(chunk.why.clone());
    }
    region
}

/// `"<label>: full index, N chunks scored"` or `"<label>: reranked N lexical candidates (M
/// embedded now)"`, from a `dense_search` result.
pub fn dense_note(label: &str, result: &SearchResult) -> String {
    let scored = result.scored.unwrap_or(result.hits.len());
    match result.mode {
        Some(DenseMode::Full) => format!("{label}: full index, {scored} chunks scored"),
        Some(DenseMode::Rerank) => format!(
            "{label}: reranked {scored} lexical candidates ({} embedded now)",
            result.embedded.unwrap_or(0)
        ),
        _ => format!("{label}: {scored} chunks scored"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `"a.py:10-20"` → a ranked chunk with the given score.
    fn chunk(spec: &str, score: f64) -> Ranked {
        let (path, lines) = spec.split_once(':').unwrap();
        let (start, end) = lines.split_once('-').unwrap();
        Ranked::new(path, start.parse().unwrap(), end.parse().unwrap(), score)
    }

    fn spans(regions: &[Region]) -> Vec<String> {
        regions
            .iter()
            .map(|r| format!("{}:{}-{}", r.path, r.start, r.end))
            .collect()
    }

    fn check_select(ranking: &[&str], top_k: usize, per_file: Option<usize>, expected: &[&str]) {
        let ranked: Vec<Ranked> = ranking
            .iter()
            .enumerate()
            .map(|(i, s)| chunk(s, 100.0 - i as f64))
            .collect();
        assert_eq!(
            spans(&select_regions(&ranked, top_k, per_file, &mut |_, _, _| {
                false
            })),
            expected,
            "{ranking:?} top {top_k} per file {per_file:?}"
        );
    }

    #[test]
    fn a_budget_skips_chunks_that_do_not_fit_and_takes_later_shorter_ones() {
        let ranked: Vec<Ranked> = [
            "a.py:1-40",
            "b.py:1-80",
            "c.py:1-30",
            "a.py:41-50",
            "d.py:1-5",
        ]
        .iter()
        .enumerate()
        .map(|(i, s)| chunk(s, 100.0 - i as f64))
        .collect();
        let select = |budget| {
            spans(&select_regions_within(
                &ranked,
                5,
                None,
                budget,
                &mut |_, _, _| false,
            ))
        };
        // 40, then b (80) does not fit in 75, c (30) does; a's growth by 10 would pass 75.
        assert_eq!(select(Some(75)), ["a.py:1-40", "c.py:1-30", "d.py:1-5"]);
        assert_eq!(select(Some(85)), ["a.py:1-50", "c.py:1-30", "d.py:1-5"]);
        assert_eq!(select(Some(4)), Vec::<String>::new());
        assert_eq!(
            select(None),
            ["a.py:1-50", "b.py:1-80", "c.py:1-30", "d.py:1-5"]
        );
    }

    #[test]
    fn region_selection() {
        // Touching and overlapping chunks of a file merge, in rank order, even after top_k.
        check_select(
            &[
                "a.py:10-20",
                "b.py:1-5",
                "a.py:21-30",
                "c.py:1-2",
                "a.py:50-60",
                "b.py:3-9",
            ],
            3,
            None,
            &["a.py:10-30", "b.py:1-9", "c.py:1-2"],
        );
        // Duplicates are one region.
        check_select(&["a.py:1-5", "a.py:1-5"], 5, None, &["a.py:1-5"]);
        // A gap of one line keeps regions apart.
        check_select(
            &["a.py:1-5", "a.py:7-9"],
            5,
            None,
            &["a.py:1-5", "a.py:7-9"],
        );
        // Per-file cap: a third region of a.py waits for the other files.
        check_select(
            &[
                "a.py:1-5",
                "a.py:20-25",
                "a.py:40-45",
                "b.py:1-5",
                "c.py:1-5",
            ],
            4,
            Some(2),
            &["a.py:1-5", "a.py:20-25", "b.py:1-5", "c.py:1-5"],
        );
        // ... and fills the answer when nothing else is left.
        check_select(
            &["a.py:1-5", "a.py:20-25", "a.py:40-45", "b.py:1-5"],
            4,
            Some(1),
            &["a.py:1-5", "b.py:1-5", "a.py:20-25", "a.py:40-45"],
        );
        // A held-back chunk still merges with its file's region.
        check_select(
            &["a.py:1-5", "a.py:6-9", "a.py:40-45", "b.py:1-5"],
            2,
            Some(1),
            &["a.py:1-9", "b.py:1-5"],
        );
        check_select(&[], 5, Some(1), &[]);
    }

    /// The same ranking under each [`Overlap`] and [`PerFile`]: merging grows `a.py:10-50` by the
    /// chunk touching it and ignores the one inside; skipping keeps both ranked items whole and
    /// apart; a preferred cap lets the held-back `a.py:80-90` fill the free place, a strict one
    /// does not.
    #[test]
    fn overlap_and_per_file_options_differ_where_rankers_differ() {
        let ranked: Vec<Ranked> = [
            "a.py:10-50",
            "a.py:20-30",
            "a.py:51-55",
            "b.py:1-5",
            "a.py:80-90",
        ]
        .iter()
        .enumerate()
        .map(|(i, s)| chunk(s, 100.0 - i as f64))
        .collect();
        let pick = |overlap, per_file| {
            let selection = Selection {
                per_file,
                overlap,
                ..Selection::new(4)
            };
            spans(&select(&ranked, &selection, &mut |_, _, _| false))
        };
        let cases: [(Overlap, PerFile, &[&str]); 4] = [
            (
                Overlap::Merge,
                PerFile::Prefer(1),
                &["a.py:10-55", "b.py:1-5", "a.py:80-90"],
            ),
            (
                Overlap::Merge,
                PerFile::AtMost(1),
                &["a.py:10-55", "b.py:1-5"],
            ),
            (
                Overlap::Skip,
                PerFile::Prefer(2),
                &["a.py:10-50", "a.py:51-55", "b.py:1-5", "a.py:80-90"],
            ),
            (
                Overlap::Skip,
                PerFile::AtMost(2),
                &["a.py:10-50", "a.py:51-55", "b.py:1-5"],
            ),
        ];
        for (overlap, per_file, expected) in cases {
            assert_eq!(
                pick(overlap, per_file),
                expected,
                "{overlap:?} {per_file:?}"
            );
        }
    }

    /// `graph`'s selection: whole items, at most two per file, a budget that skips a long item
    /// for later shorter ones.
    #[test]
    fn skipping_selection_is_diverse_and_holds_the_budget() {
        let ranked: Vec<Ranked> = [
            "a.py:10-50",
            "a.py:20-30", // inside the first
            "a.py:60-70",
            "a.py:80-90", // third of a.py
            "b.py:1-5",
            "c.py:1-5",
        ]
        .iter()
        .enumerate()
        .map(|(i, s)| chunk(s, 100.0 - i as f64))
        .collect();
        let pick = |line_budget| {
            let selection = Selection {
                per_file: PerFile::AtMost(2),
                line_budget,
                overlap: Overlap::Skip,
                ..Selection::new(4)
            };
            spans(&select(&ranked, &selection, &mut |_, _, _| false))
        };
        assert_eq!(
            pick(None),
            ["a.py:10-50", "a.py:60-70", "b.py:1-5", "c.py:1-5"]
        );
        // 41 lines do not fit 20: the shorter items that do are taken instead.
        assert_eq!(pick(Some(20)), ["a.py:20-30", "b.py:1-5"]);
    }

    fn check_fuse(
        lexical: &[(&str, f64)],
        dense: &[(&str, f64)],
        fusion: Fusion,
        dense_weight: f64,
        expected: &[(&str, f64)],
    ) {
        let to_ranked = |list: &[(&str, f64)]| -> Vec<Ranked> {
            list.iter().map(|(s, v)| chunk(s, *v)).collect()
        };
        let (lexical, dense) = (to_ranked(lexical), to_ranked(dense));
        let fused = fuse(
            &[
                FusionInput {
                    name: "lexical",
                    ranked: &lexical,
                    weight: 1.0 - dense_weight,
                },
                FusionInput {
                    name: "dense",
                    ranked: &dense,
                    weight: dense_weight,
                },
            ],
            fusion,
            DEFAULT_RRF_K,
        );
        let got: Vec<(String, f64)> = fused
            .iter()
            .map(|r| (format!("{}:{}-{}", r.path, r.start, r.end), r.score))
            .collect();
        assert_eq!(got.len(), expected.len(), "{got:?}");
        for ((span, score), (want_span, want_score)) in got.iter().zip(expected) {
            assert_eq!(span, want_span, "{got:?}");
            assert!(
                (score - want_score).abs() < 1e-12,
                "{span}: {score} vs {want_score}"
            );
        }
    }

    #[test]
    fn reciprocal_rank_fusion() {
        let rrf = |ranks: &[usize]| ranks.iter().map(|r| 0.5 / (60.0 + *r as f64)).sum::<f64>();
        // b is second in both lists and beats a and c, each first in one list only.
        check_fuse(
            &[("a.py:1-2", 9.0), ("b.py:1-2", 8.0)],
            &[("c.py:1-2", 0.9), ("b.py:1-2", 0.8)],
            Fusion::Rrf,
            0.5,
            &[
                ("b.py:1-2", rrf(&[2, 2])),
                ("a.py:1-2", rrf(&[1])),
                ("c.py:1-2", rrf(&[1])),
            ],
        );
        // Weights: dense counts three times as much as lexical.
        check_fuse(
            &[("a.py:1-2", 9.0)],
            &[("c.py:1-2", 0.9)],
            Fusion::Rrf,
            0.75,
            &[("c.py:1-2", 0.75 / 61.0), ("a.py:1-2", 0.25 / 61.0)],
        );
        check_fuse(&[], &[], Fusion::Rrf, 0.5, &[]);
    }

    #[test]
    fn normalised_score_fusion() {
        // Lexical scores 10, 6, 2 → 1, 0.5, 0; dense 0.8, 0.4 → 1, 0.
        check_fuse(
            &[("a.py:1-2", 10.0), ("b.py:1-2", 6.0), ("c.py:1-2", 2.0)],
            &[("c.py:1-2", 0.8), ("b.py:1-2", 0.4)],
            Fusion::Score,
            0.5,
            &[("a.py:1-2", 0.5), ("c.py:1-2", 0.5), ("b.py:1-2", 0.25)],
        );
        // A list of equal scores gives each of its chunks the full weight.
        check_fuse(
            &[("a.py:1-2", 3.0), ("b.py:1-2", 3.0)],
            &[],
            Fusion::Score,
            0.5,
            &[("a.py:1-2", 0.5), ("b.py:1-2", 0.5)],
        );
    }

    #[test]
    fn fused_items_name_their_origins() {
        let lexical = vec![Ranked {
            why: "BM25: function f".into(),
            ..chunk("a.py:1-2", 3.0)
        }];
        let dense = vec![chunk("b.py:1-2", 0.5), chunk("a.py:1-2", 0.4)];
        let fused = fuse(
            &[
                FusionInput {
                    name: "lexical",
                    ranked: &lexical,
                    weight: 0.5,
                },
                FusionInput {
                    name: "dense",
                    ranked: &dense,
                    weight: 0.5,
                },
            ],
            Fusion::Rrf,
            DEFAULT_RRF_K,
        );
        assert_eq!(fused[0].why, "BM25: function f (lexical #1, dense #2)");
        assert_eq!(fused[1].why, "dense #1");
    }

    /// `a.py` has blank lines 21–22 and 41, code everywhere else.
    fn blank_in_a(path: &str, from: i64, to: i64) -> bool {
        path == "a.py" && (from..=to).all(|l| l == 21 || l == 22 || l == 41)
    }

    fn select_with_blanks(ranking: &[&str], top_k: usize) -> Vec<Region> {
        let ranked: Vec<Ranked> = ranking
            .iter()
            .enumerate()
            .map(|(i, s)| chunk(s, 100.0 - i as f64))
            .collect();
        select_regions(&ranked, top_k, None, &mut blank_in_a)
    }

    #[test]
    fn chunks_separated_only_by_blank_lines_merge() {
        let regions = select_with_blanks(
            &[
                "a.py:10-20",
                "a.py:23-30", // after blank 21-22: joins the first
                "b.py:1-5",
                "a.py:32-40", // line 31 is code: a region of its own
                "c.py:1-2",
                "a.py:42-50", // after blank 41: folds into 32-40 though all places are taken
            ],
            4,
        );
        assert_eq!(
            spans(&regions),
            ["a.py:10-30", "b.py:1-5", "a.py:32-50", "c.py:1-2"]
        );
        assert_eq!(regions[0].score, Some(100.0));
    }

    #[test]
    fn a_grown_region_absorbs_the_regions_it_reaches() {
        let regions = select_with_blanks(
            &[
                "a.py:30-40",
                "a.py:10-19",
                "b.py:1-5",
                // Touches both a.py regions: they become one, which frees a place for d.py.
                "a.py:20-29",
                "d.py:3-4",
            ],
            3,
        );
        assert_eq!(spans(&regions), ["a.py:10-40", "b.py:1-5", "d.py:3-4"]);
        assert_eq!(regions[0].score, Some(100.0));
    }
}
