//! The `bm25` explorer: the engine's lexical search as an explorer. The issue text goes to the
//! `lexical_search` service (the engine's code-aware BM25 over definition-level chunks, with its
//! issue query builder: identifiers, paths, traceback frames, weighted prose); the best chunks are
//! the regions, overlapping chunks of one file merged so no line is paid for twice.
//!
//! It needs a host that serves the engine's index (`swex explore --index`, the benchmark
//! runner); on the plain filesystem backend it fails with a message saying so.
//!
//! Config: `{"candidates": 50}` — how many chunks to ask for before merging (default 4 × top_k,
//! at least 20).

use serde::Deserialize;
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
/// overlap or touch; stops at `top_k` regions.
pub fn merge_hits(hits: &[(String, i64, i64, f64, String)], top_k: usize) -> Vec<Region> {
    let mut regions: Vec<Region> = Vec::new();
    for (path, start, end, score, why) in hits {
        if let Some(region) = regions
            .iter_mut()
            .find(|r| &r.path == path && *start <= r.end + 1 && r.start <= *end + 1)
        {
            region.start = region.start.min(*start);
            region.end = region.end.max(*end);
            continue;
        }
        if regions.len() == top_k {
            continue;
        }
        regions.push(
            Region::new(path.clone(), *start, *end)
                .with_score(*score)
                .with_why(why.clone()),
        );
    }
    regions
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
        Ok(Response::new(merge_hits(&hits, request.top_k)))
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
        let regions = merge_hits(&hits, 3);
        let got: Vec<(&str, i64, i64)> = regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, [("a.py", 10, 30), ("b.py", 1, 5), ("c.py", 1, 2)]);
    }
}
