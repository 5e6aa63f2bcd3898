//! NDCG@10 exactly as the code-search benchmark computes it (semble's `benchmarks/metrics.py`).
//!
//! - A result `(path, start, end)` matches a target when the paths are equal (after `\` → `/`),
//!   or one ends with `/` + the other; a span target also needs line overlap:
//!   not (`end < target.start` or `start > target.end`).
//! - Each target gets the rank of the *first* result that matches it; only ranks 1..=k count.
//! - Binary gains: rank `i` has gain 1 when at least one target has rank `i` (a rank counts once
//!   however many targets it matches). DCG = Σ gain_i / log2(i + 1).
//! - IDCG = Σ_{i=1..min(k, n)} 1 / log2(i + 1), with `n` = number of targets (relevant +
//!   secondary, duplicates counted). NDCG = DCG / IDCG, 0 when `n` = 0.
//!
//! [`Scoring::File`] is how the benchmark scored the file-level tools (ColGREP, ripgrep, ck): the
//! results are reduced to their distinct paths in order, and spans are ignored on both sides.
//!
//! This module knows results and targets only.

use super::data::{Query, Target};
use serde::{Deserialize, Serialize};
use swex_text::hints::ends_with_path;

/// The cut-off of the benchmark's score.
pub const K: usize = 10;

/// How results are matched against targets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scoring {
    /// Results are spans, span targets need line overlap (the benchmark's chunk scoring).
    #[default]
    Chunk,
    /// Results are reduced to distinct paths; spans are ignored (the file-level tools).
    File,
}

/// One ranked result: a path relative to the checkout and a 1-based inclusive span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub path: String,
    pub start: i64,
    pub end: i64,
}

impl Hit {
    pub fn new(path: impl Into<String>, start: i64, end: i64) -> Hit {
        Hit {
            path: path.into(),
            start,
            end,
        }
    }
}

/// The benchmark's path rule: equal, or one a `/`-suffix of the other
/// (`swex_text::hints::ends_with_path` either way).
pub fn path_matches(result: &str, target: &str) -> bool {
    let result = result.replace('\\', "/");
    let target = target.replace('\\', "/");
    ends_with_path(&result, &target) || ends_with_path(&target, &result)
}

fn matches(hit: &Hit, target: &Target, scoring: Scoring) -> bool {
    if !path_matches(&hit.path, &target.path) {
        return false;
    }
    match (scoring, target.span) {
        (Scoring::File, _) | (_, None) => true,
        (Scoring::Chunk, Some((start, end))) => !(hit.end < start || hit.start > end),
    }
}

/// The score of one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryScore {
    pub ndcg10: f64,
    /// Per target (relevant then secondary), the 1-based rank of its first match within the top
    /// `K`, or `None`.
    pub ranks: Vec<Option<usize>>,
}

fn dcg(gains: &[bool]) -> f64 {
    gains
        .iter()
        .enumerate()
        .filter(|(_, g)| **g)
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum()
}

/// Scores `results` (best first) against the query's targets.
pub fn score(results: &[Hit], query: &Query, scoring: Scoring) -> QueryScore {
    let targets: Vec<&Target> = query.targets().collect();
    score_targets(results, &targets, scoring)
}

/// [`score`] for an explicit target list.
pub fn score_targets(results: &[Hit], targets: &[&Target], scoring: Scoring) -> QueryScore {
    let deduplicated;
    let results = match scoring {
        Scoring::Chunk => results,
        Scoring::File => {
            let mut seen = std::collections::HashSet::new();
            deduplicated = results
                .iter()
                .filter(|h| seen.insert(h.path.as_str()))
                .cloned()
                .collect::<Vec<_>>();
            &deduplicated
        }
    };
    let top = &results[..results.len().min(K)];
    let ranks: Vec<Option<usize>> = targets
        .iter()
        .map(|target| {
            top.iter()
                .position(|hit| matches(hit, target, scoring))
                .map(|i| i + 1)
        })
        .collect();
    if targets.is_empty() {
        return QueryScore { ndcg10: 0.0, ranks };
    }
    let mut gains = [false; K];
    for rank in ranks.iter().flatten() {
        gains[rank - 1] = true;
    }
    let ideal = dcg(&vec![true; targets.len().min(K)]);
    QueryScore {
        ndcg10: if ideal > 0.0 {
            dcg(&gains) / ideal
        } else {
            0.0
        },
        ranks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(items: &[(&str, i64, i64)]) -> Vec<Hit> {
        items.iter().map(|&(p, s, e)| Hit::new(p, s, e)).collect()
    }

    fn check(results: &[(&str, i64, i64)], targets: &[Target], scoring: Scoring, expected: f64) {
        let refs: Vec<&Target> = targets.iter().collect();
        let got = score_targets(&hits(results), &refs, scoring).ndcg10;
        assert!(
            (got - expected).abs() < 1e-12,
            "{results:?} vs {targets:?} ({scoring:?}): {got} != {expected}"
        );
    }

    #[test]
    fn ndcg_follows_the_published_rule() {
        let a = Target::file("src/a.py");
        let b = Target::file("src/b.py");
        let l = |i: usize| 1.0 / ((i + 1) as f64).log2();
        // First rank, one target: perfect.
        check(
            &[("src/a.py", 1, 5)],
            std::slice::from_ref(&a),
            Scoring::Chunk,
            1.0,
        );
        // Rank 2 of one target.
        check(
            &[("x.py", 1, 2), ("src/a.py", 1, 5)],
            std::slice::from_ref(&a),
            Scoring::Chunk,
            l(2),
        );
        // Two targets at ranks 1 and 3; further chunks of a matched file earn nothing.
        check(
            &[("src/a.py", 1, 5), ("src/a.py", 9, 12), ("src/b.py", 1, 2)],
            &[a.clone(), b.clone()],
            Scoring::Chunk,
            (l(1) + l(3)) / (l(1) + l(2)),
        );
        // Secondary and duplicate targets count in the ideal; one rank matching two targets
        // counts once.
        check(
            &[("src/a.py", 1, 5)],
            &[a.clone(), a.clone()],
            Scoring::Chunk,
            1.0 / (l(1) + l(2)),
        );
        // Past rank 10 nothing counts.
        let mut far: Vec<(&str, i64, i64)> = vec![("x.py", 1, 1); 10];
        far.push(("src/a.py", 1, 1));
        check(&far, std::slice::from_ref(&a), Scoring::Chunk, 0.0);
        // No targets: 0.
        check(&[("src/a.py", 1, 1)], &[], Scoring::Chunk, 0.0);
        // No results: 0.
        check(&[], std::slice::from_ref(&a), Scoring::Chunk, 0.0);
    }

    #[test]
    fn spans_need_overlap_unless_scored_by_file() {
        let t = Target::span("p.py", 10, 20);
        check(
            &[("p.py", 1, 9)],
            std::slice::from_ref(&t),
            Scoring::Chunk,
            0.0,
        );
        check(
            &[("p.py", 21, 30)],
            std::slice::from_ref(&t),
            Scoring::Chunk,
            0.0,
        );
        check(
            &[("p.py", 20, 30)],
            std::slice::from_ref(&t),
            Scoring::Chunk,
            1.0,
        );
        check(
            &[("p.py", 1, 10)],
            std::slice::from_ref(&t),
            Scoring::Chunk,
            1.0,
        );
        check(
            &[("p.py", 1, 9)],
            std::slice::from_ref(&t),
            Scoring::File,
            1.0,
        );
    }

    #[test]
    fn file_scoring_deduplicates_paths_before_the_cut() {
        // Eleven results, the target's file is the 11th result but the 2nd distinct path.
        let mut results: Vec<(&str, i64, i64)> = vec![("x.py", 1, 1); 10];
        results.push(("a.py", 1, 1));
        let t = [Target::file("a.py")];
        check(&results, &t, Scoring::Chunk, 0.0);
        check(&results, &t, Scoring::File, 1.0 / 3f64.log2());
    }

    #[test]
    fn paths_match_equal_or_as_slash_suffixes() {
        assert!(path_matches("src/a.py", "src/a.py"));
        assert!(path_matches("/abs/checkout/src/a.py", "src/a.py"));
        assert!(path_matches("a.py", "src/a.py"));
        assert!(path_matches("src\\a.py", "src/a.py"));
        assert!(!path_matches("src/aa.py", "a.py"));
        assert!(!path_matches("src/a.pyc", "src/a.py"));
    }
}
