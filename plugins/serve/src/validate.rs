//! Validation of explorer output, as the reference runner's parsing does before scoring: invalid
//! regions are dropped and counted (never silently), the order is kept, the list is cut to
//! `top_k`.
//!
//! A region is dropped when its path is empty, absolute (`/x`, `C:\x`, `\\server`), climbs out of
//! the snapshot (a `..` segment), or names no file of the snapshot; or when its interval covers no
//! line: `end` is 0 or below -1 (empty), or `end >= 1` and `start > end` (reversed). `end = -1`
//! ("to the end of the file") is valid, and so are `start <= 0` values, which the metrics resolve
//! (0 reads as 1, negative counts from the end of the file). A leading `./` is removed.
//!
//! [`enforce_budget`] then holds a response to the request's `line_budget`, whatever the explorer
//! did: regions are walked in order and their lines counted with real file lengths (a whole-file
//! region costs its file's lines, a line two regions share counts once); the region that would
//! pass the budget is cut to the lines that fit, and the ones after it are dropped, both counted.

use crate::services::RawServices;
use serde::{Deserialize, Serialize};
use swex_plugin::{Region, Request, Response};

/// How many regions were dropped, by reason, and how many the `top_k` cut removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    /// Regions whose path is empty (after a leading `./` is removed).
    pub empty_path: usize,
    /// Regions whose path is absolute (`/x`, `C:\x`, `\\server`).
    pub absolute_path: usize,
    /// Regions whose path climbs out of the snapshot (a `..` segment).
    pub outside_snapshot: usize,
    /// Regions whose path names no file of the snapshot.
    pub nonexistent_file: usize,
    /// Regions whose interval covers no line: `end` is 0 or below -1.
    pub empty_interval: usize,
    /// Regions whose interval is reversed: `end >= 1` and `start > end`.
    pub reversed_interval: usize,
    /// Valid regions past the first `top_k`, cut to keep the answer within `top_k`.
    pub beyond_top_k: usize,
    /// Regions dropped because the line budget was spent before them.
    #[serde(default)]
    pub over_budget: usize,
    /// Regions cut short to fit the line budget.
    #[serde(default)]
    pub trimmed_to_budget: usize,
}

impl DropCounts {
    /// Regions dropped as invalid (the `top_k` cut is not counted here).
    pub fn invalid(&self) -> usize {
        self.empty_path
            + self.absolute_path
            + self.outside_snapshot
            + self.nonexistent_file
            + self.empty_interval
            + self.reversed_interval
    }
}

/// An explorer's response after validation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidatedResponse {
    /// The regions kept, in the explorer's order, leading `./` removed: at most `top_k`, and
    /// within the line budget when one was enforced.
    pub regions: Vec<Region>,
    /// How many regions were dropped or cut, by reason.
    pub dropped: DropCounts,
    /// The explorer's notes, passed through unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Why one region is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Invalid {
    EmptyPath,
    AbsolutePath,
    OutsideSnapshot,
    NonexistentFile,
    EmptyInterval,
    ReversedInterval,
}

fn check(region: &Region, path: &str, contains_file: &dyn Fn(&str) -> bool) -> Option<Invalid> {
    let bytes = path.as_bytes();
    if path.is_empty() {
        return Some(Invalid::EmptyPath);
    }
    let windows_drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with('/') || path.starts_with('\\') || windows_drive {
        return Some(Invalid::AbsolutePath);
    }
    if path.split(['/', '\\']).any(|segment| segment == "..") {
        return Some(Invalid::OutsideSnapshot);
    }
    if region.end == 0 || region.end < -1 {
        return Some(Invalid::EmptyInterval);
    }
    if region.end >= 1 && region.start > region.end {
        return Some(Invalid::ReversedInterval);
    }
    if !contains_file(path) {
        return Some(Invalid::NonexistentFile);
    }
    None
}

/// Validates a response: drops and counts invalid regions, keeps the order, cuts to `top_k`.
pub fn validate(
    response: Response,
    top_k: usize,
    contains_file: &dyn Fn(&str) -> bool,
) -> ValidatedResponse {
    let mut dropped = DropCounts::default();
    let mut regions = Vec::new();
    for mut region in response.regions {
        let mut path = region.path.as_str();
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        match check(&region, path, contains_file) {
            None => {
                if regions.len() < top_k {
                    region.path = path.to_owned();
                    regions.push(region);
                } else {
                    dropped.beyond_top_k += 1;
                }
            }
            Some(Invalid::EmptyPath) => dropped.empty_path += 1,
            Some(Invalid::AbsolutePath) => dropped.absolute_path += 1,
            Some(Invalid::OutsideSnapshot) => dropped.outside_snapshot += 1,
            Some(Invalid::NonexistentFile) => dropped.nonexistent_file += 1,
            Some(Invalid::EmptyInterval) => dropped.empty_interval += 1,
            Some(Invalid::ReversedInterval) => dropped.reversed_interval += 1,
        }
    }
    ValidatedResponse {
        regions,
        dropped,
        notes: response.notes,
    }
}

/// Validates an explorer's answer to `request` against the snapshot `services` serve: [`validate`],
/// then, when the request has a `line_budget`, [`enforce_budget`] with the files' real lengths.
/// Every host path that runs an explorer (`swex explore`, `swex bench`, isolated or not) uses it.
pub fn validate_answer(
    request: &Request,
    response: Response,
    services: &dyn RawServices,
) -> ValidatedResponse {
    let mut validated = validate(response, request.top_k, &|path| {
        services.contains_file(path)
    });
    if let Some(budget) = request.line_budget {
        enforce_budget(&mut validated, budget, &|path| services.line_count(path));
    }
    validated
}

/// Holds `response` to `budget` lines: `line_count(path)` is the real length of a file of the
/// snapshot (`None`: unknown, then the region counts as its explicit end says, or 0 lines for
/// `end = -1`). Regions keep their order; the first region that passes the budget keeps only the
/// lines that fit (its start stays, its end moves up), and every later region is dropped.
/// Start values the metrics resolve (`0`, negative) are resolved here the same way.
pub fn enforce_budget(
    response: &mut ValidatedResponse,
    budget: u64,
    line_count: &dyn Fn(&str) -> Option<u64>,
) {
    let mut spent: u64 = 0;
    // Lines already paid for, per file, as sorted disjoint closed runs.
    let mut paid: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
    let mut kept = Vec::with_capacity(response.regions.len());
    for mut region in std::mem::take(&mut response.regions) {
        if spent >= budget {
            response.dropped.over_budget += 1;
            continue;
        }
        let length = line_count(&region.path).map(|l| l.min(i64::MAX as u64) as i64);
        let Some((start, end)) = resolve_span(region.start, region.end, length) else {
            kept.push(region); // holds no lines: costs nothing
            continue;
        };
        let runs = match paid.iter_mut().find(|(p, _)| *p == region.path) {
            Some((_, runs)) => runs,
            None => {
                paid.push((region.path.clone(), Vec::new()));
                &mut paid.last_mut().expect("just pushed").1
            }
        };
        let left = budget - spent;
        let (new_lines, cut_end) = new_lines_within(runs, start, end, left);
        if cut_end < end {
            region.start = start;
            region.end = cut_end;
            response.dropped.trimmed_to_budget += 1;
        }
        add_run(runs, start, cut_end);
        spent += new_lines;
        kept.push(region);
    }
    response.regions = kept;
}

/// `(start, end)` of a region against a known or unknown file length, as the metrics resolve
/// it, clipped to the length; `None` when it holds no line.
fn resolve_span(start: i64, end: i64, length: Option<i64>) -> Option<(i64, i64)> {
    let (start, end) = if end == -1 || start < 0 {
        let lines = length.filter(|&l| l >= 1)?;
        let end = if end == -1 { lines } else { end };
        let start = if start < 0 {
            lines.saturating_add(start).saturating_add(1)
        } else {
            start
        };
        (start.clamp(1, lines), end.clamp(1, lines))
    } else {
        (start.max(1), length.map_or(end, |l| end.min(l)))
    };
    (start <= end).then_some((start, end))
}

/// Lines of `start..=end` not in `runs`, walking from `start` until `limit` new lines are taken:
/// how many were taken and the last line of the span that keeps them.
fn new_lines_within(runs: &[(i64, i64)], start: i64, end: i64, limit: u64) -> (u64, i64) {
    let mut taken: u64 = 0;
    let mut line = start;
    for &(lo, hi) in runs.iter().filter(|&&(_, hi)| hi >= start) {
        if lo > end {
            break;
        }
        // New lines before this run.
        let gap_end = (lo - 1).min(end);
        if gap_end >= line {
            let gap = (gap_end - line + 1) as u64;
            if taken + gap >= limit {
                return (limit, line + (limit - taken) as i64 - 1);
            }
            taken += gap;
        }
        line = line.max(hi + 1);
        if line > end {
            return (taken, end);
        }
    }
    let rest = (end - line + 1).max(0) as u64;
    if taken + rest > limit {
        (limit, line + (limit - taken) as i64 - 1)
    } else {
        (taken + rest, end)
    }
}

fn add_run(runs: &mut Vec<(i64, i64)>, start: i64, end: i64) {
    if start > end {
        return;
    }
    runs.push((start, end));
    runs.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(runs.len());
    for &(lo, hi) in runs.iter() {
        match merged.last_mut() {
            Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    *runs = merged;
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: &[&str] = &["a.py", "pkg/b.py", "pkg/..c.py"];

    /// One case: input regions `(path, start, end)`, `top_k`, the kept regions and the counts
    /// (empty_path, absolute, outside, nonexistent, empty, reversed, beyond_top_k).
    fn check(
        input: &[(&str, i64, i64)],
        top_k: usize,
        kept: &[(&str, i64, i64)],
        counts: [usize; 7],
    ) {
        let response = Response::new(
            input
                .iter()
                .map(|(p, s, e)| Region::new(*p, *s, *e))
                .collect(),
        );
        let contains = |path: &str| FILES.contains(&path);
        let validated = validate(response, top_k, &contains);
        let got: Vec<(&str, i64, i64)> = validated
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, kept, "kept regions for {input:?}");
        let d = validated.dropped;
        assert_eq!(
            [
                d.empty_path,
                d.absolute_path,
                d.outside_snapshot,
                d.nonexistent_file,
                d.empty_interval,
                d.reversed_interval,
                d.beyond_top_k
            ],
            counts,
            "counts for {input:?}"
        );
    }

    #[test]
    fn valid_regions_pass_in_order() {
        check(
            &[("pkg/b.py", 3, 9), ("a.py", 1, 1)],
            5,
            &[("pkg/b.py", 3, 9), ("a.py", 1, 1)],
            [0; 7],
        );
    }

    #[test]
    fn whole_file_and_metric_resolvable_starts_are_valid() {
        check(
            &[
                ("a.py", 1, -1),
                ("a.py", -20, -1),
                ("a.py", 0, 10),
                ("a.py", -5, 3),
            ],
            5,
            &[
                ("a.py", 1, -1),
                ("a.py", -20, -1),
                ("a.py", 0, 10),
                ("a.py", -5, 3),
            ],
            [0; 7],
        );
    }

    #[test]
    fn bad_paths_are_dropped_and_counted() {
        check(
            &[
                ("", 1, 2),
                ("/etc/passwd", 1, 2),
                ("C:\\x.py", 1, 2),
                ("\\\\server\\x", 1, 2),
                ("../a.py", 1, 2),
                ("pkg/../a.py", 1, 2),
                ("missing.py", 1, 2),
                ("pkg/..c.py", 1, 2),
            ],
            10,
            &[("pkg/..c.py", 1, 2)],
            [1, 3, 2, 1, 0, 0, 0],
        );
    }

    #[test]
    fn empty_and_reversed_intervals_are_dropped() {
        check(
            &[
                ("a.py", 5, 0),
                ("a.py", 1, -2),
                ("a.py", 9, 3),
                ("a.py", 3, 3),
            ],
            10,
            &[("a.py", 3, 3)],
            [0, 0, 0, 0, 2, 1, 0],
        );
    }

    #[test]
    fn dot_slash_is_removed() {
        check(
            &[("./pkg/b.py", 1, 2), ("././a.py", 4, 5)],
            5,
            &[("pkg/b.py", 1, 2), ("a.py", 4, 5)],
            [0; 7],
        );
    }

    #[test]
    fn cut_to_top_k_after_dropping_invalid_ones() {
        check(
            &[
                ("x.py", 1, 2),
                ("a.py", 1, 2),
                ("a.py", 9, 1),
                ("pkg/b.py", 1, 2),
                ("a.py", 5, 6),
            ],
            2,
            &[("a.py", 1, 2), ("pkg/b.py", 1, 2)],
            [0, 0, 0, 1, 0, 1, 1],
        );
    }

    #[test]
    fn duplicates_are_kept() {
        check(
            &[("a.py", 1, 2), ("a.py", 1, 2)],
            5,
            &[("a.py", 1, 2), ("a.py", 1, 2)],
            [0; 7],
        );
    }

    /// One budget case: regions `(path, start, end)` with file lengths `a.py` = 100, `b.py` = 30,
    /// the budget, the regions kept and (over_budget, trimmed_to_budget).
    fn budget(
        input: &[(&str, i64, i64)],
        budget: u64,
        kept: &[(&str, i64, i64)],
        counts: (usize, usize),
    ) {
        let mut response = ValidatedResponse {
            regions: input
                .iter()
                .map(|(p, s, e)| Region::new(*p, *s, *e))
                .collect(),
            ..ValidatedResponse::default()
        };
        let lengths = |path: &str| match path {
            "a.py" => Some(100),
            "b.py" => Some(30),
            _ => None,
        };
        enforce_budget(&mut response, budget, &lengths);
        let got: Vec<(&str, i64, i64)> = response
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, kept, "kept for {input:?} at {budget}");
        assert_eq!(
            (
                response.dropped.over_budget,
                response.dropped.trimmed_to_budget
            ),
            counts,
            "counts for {input:?} at {budget}"
        );
    }

    #[test]
    fn a_budget_cuts_the_region_that_passes_it_and_drops_the_rest() {
        budget(
            &[("b.py", 1, -1), ("a.py", 1, 20)],
            100,
            &[("b.py", 1, -1), ("a.py", 1, 20)],
            (0, 0),
        );
        budget(
            &[("a.py", 1, -1), ("b.py", 1, 10)],
            60,
            &[("a.py", 1, 60)],
            (1, 1),
        );
        budget(
            &[("b.py", 1, -1), ("a.py", 11, 90), ("b.py", 1, 5)],
            50,
            &[("b.py", 1, -1), ("a.py", 11, 30)],
            (1, 1),
        );
        budget(&[("a.py", -10, -1)], 4, &[("a.py", 91, 94)], (0, 1));
    }

    #[test]
    fn lines_two_regions_share_are_paid_once() {
        budget(
            &[("a.py", 1, 40), ("a.py", 21, 60), ("b.py", 1, 10)],
            70,
            &[("a.py", 1, 40), ("a.py", 21, 60), ("b.py", 1, 10)],
            (0, 0),
        );
        // 40 + 20 new lines of the second region fit, then 5 of b.py's 10.
        budget(
            &[("a.py", 1, 40), ("a.py", 21, 60), ("b.py", 1, 10)],
            65,
            &[("a.py", 1, 40), ("a.py", 21, 60), ("b.py", 1, 5)],
            (0, 1),
        );
        // A region inside paid lines costs nothing; one spanning a paid run pays only its gaps.
        budget(
            &[("a.py", 10, 20), ("a.py", 12, 15), ("a.py", 1, 30)],
            25,
            &[("a.py", 10, 20), ("a.py", 12, 15), ("a.py", 1, 25)],
            (0, 1),
        );
    }

    #[test]
    fn regions_past_the_end_of_their_file_cost_only_real_lines() {
        budget(
            &[("b.py", 20, 500), ("a.py", 1, 5)],
            16,
            &[("b.py", 20, 500), ("a.py", 1, 5)],
            (0, 0),
        );
        budget(
            &[("b.py", 40, 50), ("a.py", 1, 5)],
            5,
            &[("b.py", 40, 50), ("a.py", 1, 5)],
            (0, 0),
        );
    }
}
