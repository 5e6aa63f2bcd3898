//! The `bm25` explorer: the engine's lexical search as an explorer. The issue text goes to the
//! `lexical_search` service (the engine's code-aware BM25 over definition-level chunks, with its
//! issue query builder: identifiers, paths, traceback frames, weighted prose); the best chunks are
//! the regions, overlapping chunks of one file merged so no line is paid for twice. Chunks of one
//! file that touch, or are separated only by blank lines, merge too: the engine gives blank chunks
//! (the blank lines between definitions) no document, so they are never hits themselves, and two
//! neighbouring definitions would otherwise take two of the `top_k` regions
//! ([`swex_rankkit::select_regions`], shared with `tfidf`, `dense` and `hybrid`).
//!
//! It needs a host that serves the engine's index (`swex explore --index`, the benchmark
//! runner); on the plain filesystem backend it fails with a message saying so.
//!
//! Config: `{"candidates": 50}` — how many chunks to ask for before merging (default 4 × top_k,
//! at least 20).

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::types::SearchArgs;
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};
use swex_rankkit::{BlankLines, Ranked, select_regions_within};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bm25Config {
    #[serde(default)]
    pub candidates: Option<usize>,
}

pub struct Bm25 {
    candidates: Option<usize>,
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
        let limit = self
            .candidates
            .unwrap_or(request.top_k.saturating_mul(4).max(20));
        let args = SearchArgs::new(&request.issue, limit);
        let hits = services.lexical_search(&args).map_err(|e| {
            if e.is_unavailable() {
                ExplorerError::failed(format!(
                    "bm25 needs the engine's lexical index ({e}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
                ))
            } else {
                e.into()
            }
        })?;
        let ranked: Vec<Ranked> = hits.iter().map(|h| Ranked::from_hit(h, "BM25")).collect();
        let mut blank = BlankLines::new(services);
        Ok(Response::new(select_regions_within(
            &ranked,
            request.top_k,
            None,
            request.line_budget,
            &mut |path, from, to| blank.check(path, from, to),
        )))
    }
}

swex_plugin::export_vtable!(Bm25);
