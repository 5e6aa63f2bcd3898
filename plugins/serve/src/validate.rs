//! Validation of explorer output, as the reference runner's parsing does before scoring: invalid
//! regions are dropped and counted (never silently), the order is kept, the list is cut to
//! `top_k`.
//!
//! A region is dropped when its path is empty, absolute (`/x`, `C:\x`, `\\server`), climbs out of
//! the snapshot (a `..` segment), or names no file of the snapshot; or when its interval covers no
//! line: `end` is 0 or below -1 (empty), or `end >= 1` and `start > end` (reversed). `end = -1`
//! ("to the end of the file") is valid, and so are `start <= 0` values, which the metrics resolve
//! (0 reads as 1, negative counts from the end of the file). A leading `./` is removed.

use serde::{Deserialize, Serialize};
use swex_plugin::{Region, Response};

/// How many regions were dropped, by reason, and how many the `top_k` cut removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    pub empty_path: usize,
    pub absolute_path: usize,
    pub outside_snapshot: usize,
    pub nonexistent_file: usize,
    pub empty_interval: usize,
    pub reversed_interval: usize,
    pub beyond_top_k: usize,
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
    pub regions: Vec<Region>,
    pub dropped: DropCounts,
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
}
