//! The `bm25` explorer: the engine's lexical search as an explorer. The issue text goes to the
//! `lexical_search` service (the engine's code-aware BM25 over definition-level chunks, with its
//! issue query builder: identifiers, paths, traceback frames, weighted prose); the best chunks are
//! the regions, overlapping chunks of one file merged so no line is paid for twice. Chunks of one
//! file that touch, or are separated only by blank lines, merge too: the engine gives blank chunks
//! (the blank lines between definitions) no document, so they are never hits themselves, and two
//! neighbouring definitions would otherwise take two of the `top_k` regions.
//!
//! It needs a host that serves the engine's index (`swex explore --index`, the benchmark
//! runner); on the plain filesystem backend it fails with a message saying so.
//!
//! Config: `{"candidates": 50}` — how many chunks to ask for before merging (default 4 × top_k,
//! at least 20).

use serde::Deserialize;
use std::collections::HashMap;
use std::ffi::CStr;
use swex_plugin::types::SearchArgs;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bm25Config {
    #[serde(default)]
    pub candidates: Option<usize>,
}

pub struct Bm25 {
    candidates: Option<usize>,
}

/// Keeps hits in rank order, folding a hit into an earlier region of the same file when the two
/// overlap, touch, or are separated only by lines for which `blank(path, from, to)` (inclusive
/// range) holds; stops at `top_k` regions. A region that grows is merged again with the other
/// regions of its file it now joins (the earlier-ranked one keeps its place, score and reason),
/// which frees a place for a later hit.
pub fn merge_hits(
    hits: &[(String, i64, i64, f64, String)],
    top_k: usize,
    mut blank: impl FnMut(&str, i64, i64) -> bool,
) -> Vec<Region> {
    let mut joins = |region: &Region, path: &str, start: i64, end: i64| -> bool {
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
    };
    let mut regions: Vec<Region> = Vec::new();
    for (path, start, end, score, why) in hits {
        let Some(mut at) = regions.iter().position(|r| joins(r, path, *start, *end)) else {
            if regions.len() < top_k {
                regions.push(
                    Region::new(path.clone(), *start, *end)
                        .with_score(*score)
                        .with_why(why.clone()),
                );
            }
            continue;
        };
        regions[at].start = regions[at].start.min(*start);
        regions[at].end = regions[at].end.max(*end);
        // The grown region may now join other regions of its file.
        loop {
            let (path, start, end) = (regions[at].path.clone(), regions[at].start, regions[at].end);
            let Some(other) =
                (0..regions.len()).find(|&i| i != at && joins(&regions[i], &path, start, end))
            else {
                break;
            };
            let (keep, gone) = (at.min(other), at.max(other));
            let removed = regions.remove(gone);
            regions[keep].start = regions[keep].start.min(removed.start);
            regions[keep].end = regions[keep].end.max(removed.end);
            at = keep;
        }
    }
    regions
}

/// Whether lines `from..=to` of a file are all blank, the file's lines read once through the
/// `read_lines` service; unreadable files are never blank.
struct BlankLines<'s, 'a> {
    services: &'s Services<'a>,
    files: HashMap<String, Option<Vec<bool>>>,
}

impl BlankLines<'_, '_> {
    fn check(&mut self, path: &str, from: i64, to: i64) -> bool {
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

impl Explorer for Bm25 {
    const NAME: &'static CStr = c"bm25";
    const DESCRIPTION: &'static CStr =
        c"the engine's code-aware BM25 over definition-level chunks (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: Bm25Config = parse_config(config)?;
        if config.candidates == Some(0) {
            return Err(ExplorerError::InvalidConfig(
                "candidates must be positive".to_owned(),
            ));
        }
        Ok(Bm25 {
            candidates: config.candidates,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let limit = self.candidates.unwrap_or((4 * request.top_k).max(20));
        let args = SearchArgs {
            query: request.issue.clone(),
            limit,
            under: None,
        };
        let hits = services.lexical_search(&args).map_err(|e| {
            if e.is_unavailable() {
                ExplorerError::failed(format!(
                    "bm25 needs the engine's lexical index ({e}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
                ))
            } else {
                e.into()
            }
        })?;
        let hits: Vec<(String, i64, i64, f64, String)> = hits
            .into_iter()
            .map(|h| {
                let why = match (&h.kind, &h.name) {
                    (Some(kind), Some(name)) => format!("BM25: {kind} {name}"),
                    (Some(kind), None) => format!("BM25: {kind}"),
                    _ => "BM25".to_owned(),
                };
                (h.path, h.start as i64, h.end as i64, h.score, why)
            })
            .collect();
        let mut blank = BlankLines {
            services,
            files: HashMap::new(),
        };
        Ok(Response::new(merge_hits(
            &hits,
            request.top_k,
            |p, f, t| blank.check(p, f, t),
        )))
    }
}

swex_plugin::export_vtable!(Bm25);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_hits_merge_in_rank_order() {
        let hit = |p: &str, s, e, score| (p.to_owned(), s, e, score, String::new());
        let hits = [
            hit("a.py", 10, 20, 9.0),
            hit("b.py", 1, 5, 8.0),
            hit("a.py", 21, 30, 7.0),
            hit("c.py", 1, 2, 6.0),
            hit("a.py", 50, 60, 5.0),
        ];
        let regions = merge_hits(&hits, 3, |_, _, _| false);
        let got: Vec<(&str, i64, i64)> = regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, [("a.py", 10, 30), ("b.py", 1, 5), ("c.py", 1, 2)]);
    }

    fn spans(regions: &[Region]) -> Vec<(&str, i64, i64)> {
        regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect()
    }

    /// `a.py` has blank lines 21–22 and 41, code everywhere else.
    fn blank_in_a(path: &str, from: i64, to: i64) -> bool {
        path == "a.py" && (from..=to).all(|l| l == 21 || l == 22 || l == 41)
    }

    #[test]
    fn hits_separated_only_by_blank_lines_merge() {
        let hit = |p: &str, s, e, score| (p.to_owned(), s, e, score, String::new());
        let hits = [
            hit("a.py", 10, 20, 9.0),
            hit("a.py", 23, 30, 8.0), // after blank 21-22: joins the first
            hit("b.py", 1, 5, 7.0),
            hit("a.py", 32, 40, 6.0), // line 31 is code: a region of its own
            hit("c.py", 1, 2, 5.0),
            hit("a.py", 42, 50, 4.0), // after blank 41: folds into 32-40 though all places are taken
        ];
        let regions = merge_hits(&hits, 4, blank_in_a);
        assert_eq!(
            spans(&regions),
            [
                ("a.py", 10, 30),
                ("b.py", 1, 5),
                ("a.py", 32, 50),
                ("c.py", 1, 2)
            ]
        );
        assert_eq!(regions[0].score, Some(9.0));
    }

    #[test]
    fn a_grown_region_absorbs_the_regions_it_reaches() {
        let hit = |p: &str, s, e, score| (p.to_owned(), s, e, score, String::new());
        let hits = [
            hit("a.py", 30, 40, 9.0),
            hit("a.py", 10, 19, 8.0),
            hit("b.py", 1, 5, 7.0),
            // Touches both a.py regions: they become one, which frees a place for d.py.
            hit("a.py", 20, 29, 6.0),
            hit("d.py", 3, 4, 5.0),
        ];
        let regions = merge_hits(&hits, 3, |_, _, _| false);
        assert_eq!(
            spans(&regions),
            [("a.py", 10, 40), ("b.py", 1, 5), ("d.py", 3, 4)]
        );
        assert_eq!(regions[0].score, Some(9.0));
    }
}
