//! The `dense` explorer: the chunks most similar to the issue by sentence embedding (the
//! reference release's `embed`/`potion` family, on the engine's definition-level chunks).
//!
//! The issue text goes to the `dense_search` service. The engine answers from the snapshot's full
//! dense index when every chunk is embedded (`swex index --dense`), and otherwise reranks a wide
//! set of lexical candidates (the top BM25 chunks of the same issue), embedding only those, cache
//! first. The best chunks become the regions: chunks of one file that overlap, touch or are apart
//! only by blank lines merge into one region, optionally at most `per_file` regions per file.
//!
//! It needs a host that serves the engine's index with the embedding model installed
//! (`swex models fetch`, then `swex explore --index` or `swex bench --index`); otherwise it fails
//! with the host's message, which names the fix. It never falls back to lexical ranking on its
//! own, so its results are always dense ones.
//!
//! Config (all optional): `{"mode": "auto"|"full"|"rerank", "candidates": 100, "limit": 20,
//! "per_file": 2}` — `candidates`: lexical chunks reranked when there is no full index (the
//! host's default, 100, when absent); `limit`: chunks asked for before merging (default
//! max(4 × top_k, 20)); `per_file`: cap on regions per file (none by default).

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::types::{DenseMode, DenseSearchArgs};
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};
use swex_rankkit::{BlankLines, Ranked, dense_note, select_regions_within};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenseConfig {
    #[serde(default)]
    pub mode: Option<DenseMode>,
    #[serde(default)]
    pub candidates: Option<usize>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub per_file: Option<usize>,
}

pub struct Dense {
    config: DenseConfig,
}

/// Chunks asked for before merging when the config does not say.
pub fn default_limit(top_k: usize) -> usize {
    top_k.saturating_mul(4).max(20)
}

impl Explorer for Dense {
    const NAME: &'static CStr = c"dense";
    const DESCRIPTION: &'static CStr = c"chunks ranked by embedding similarity to the issue (needs the engine's index and `swex models fetch`)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: DenseConfig = parse_config(config)?;
        for (name, value) in [
            ("candidates", config.candidates),
            ("limit", config.limit),
            ("per_file", config.per_file),
        ] {
            if value == Some(0) {
                return Err(ExplorerError::InvalidConfig(format!(
                    "{name} must be positive"
                )));
            }
        }
        Ok(Dense { config })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let mut args = DenseSearchArgs::new(
            request.issue.clone(),
            self.config.limit.unwrap_or(default_limit(request.top_k)),
        );
        args.mode = self.config.mode;
        args.candidates = self.config.candidates;
        let result = services.dense_search_with(&args).map_err(|e| {
            if e.is_unavailable() {
                ExplorerError::failed(format!("dense search is not available: {e}"))
            } else {
                e.into()
            }
        })?;
        let ranked: Vec<Ranked> = result
            .hits
            .iter()
            .map(|hit| Ranked::from_hit(hit, "dense"))
            .collect();
        let mut blank = BlankLines::new(services);
        let mut response = Response::new(select_regions_within(
            &ranked,
            request.top_k,
            self.config.per_file,
            request.line_budget,
            &mut |path, from, to| blank.check(path, from, to),
        ));
        response.notes.push(dense_note("dense", &result));
        Ok(response)
    }
}

swex_plugin::export_vtable!(Dense);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked() {
        let ok = Dense::create(&serde_json::json!({"mode": "rerank", "candidates": 50})).unwrap();
        assert_eq!(ok.config.mode, Some(DenseMode::Rerank));
        assert_eq!(ok.config.candidates, Some(50));
        assert!(Dense::create(&serde_json::Value::Null).is_ok());
        for bad in [
            serde_json::json!({"mode": "fastest"}),
            serde_json::json!({"limit": 0}),
            serde_json::json!({"candiates": 5}),
        ] {
            assert!(
                matches!(Dense::create(&bad), Err(ExplorerError::InvalidConfig(_))),
                "{bad}"
            );
        }
    }
}
