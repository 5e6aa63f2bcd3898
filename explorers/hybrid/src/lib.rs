//! The `hybrid` explorer: lexical and dense rankings of the snapshot's chunks, fused.
//!
//! It asks `lexical_search` for the top `candidates` chunks (the engine's code-aware BM25) and
//! `dense_search` for as many (the full dense index when the snapshot has one, else a rerank of
//! those same lexical candidates), fuses the two lists and turns the best fused chunks into
//! regions (chunks of one file that overlap, touch or are apart only by blank lines merge). `per_file` optionally caps the
//! regions of one file while other files' chunks can fill the answer (diversity).
//!
//! Fusion (`fusion`):
//! - `score` (default): each list's scores min-max normalised to [0, 1], then the weighted sum.
//!   It keeps how far apart the candidates are, which ranks throw away.
//! - `rrf`: reciprocal rank fusion, Σ w / (60 + rank). Ranks only: BM25 scores are unbounded and
//!   depend on the query, cosines live in [-1, 1]; RRF needs no calibration.
//!
//! `dense_weight` (default 0.5) weighs the dense list, `1 - dense_weight` the lexical one.
//! Without the embedding model (or on a host without the engine's dense search) it falls back to
//! the lexical ranking alone and says so in a note; `"require_dense": true` makes that an error.
//!
//! The defaults (score fusion, weight 0.5, no per-file cap) were chosen on the 66 SWE-Explore dev
//! instances (`docs/dense.md`, Measurements): score fusion without a cap had the best precision,
//! context efficiency, first useful hit and weighted core coverage of the variants tried there;
//! RRF with `per_file: 2` had the best file hit rate but the lowest recall. Tuned on dev only.
//!
//! Config (all optional): `{"fusion": "score"|"rrf", "dense_weight": 0.5, "rrf_k": 60,
//! "candidates": 100, "mode": "auto"|"full"|"rerank", "limit": 20, "per_file": 2,
//! "require_dense": false}` (`per_file`: absent or 0 means no cap).

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::types::{DenseMode, DenseSearchArgs, SearchArgs};
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};
use swex_rankkit::{
    BlankLines, DEFAULT_RRF_K, Fusion, FusionInput, Ranked, dense_note, fuse, select_regions_within,
};

/// Candidates per list when the config does not say.
pub const DEFAULT_CANDIDATES: usize = 100;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HybridConfig {
    #[serde(default)]
    pub fusion: Option<Fusion>,
    #[serde(default)]
    pub dense_weight: Option<f64>,
    #[serde(default)]
    pub rrf_k: Option<f64>,
    #[serde(default)]
    pub candidates: Option<usize>,
    #[serde(default)]
    pub mode: Option<DenseMode>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Cap on regions per file; absent or 0: no cap.
    #[serde(default)]
    pub per_file: Option<usize>,
    #[serde(default)]
    pub require_dense: bool,
}

pub struct Hybrid {
    fusion: Fusion,
    dense_weight: f64,
    rrf_k: f64,
    candidates: usize,
    mode: Option<DenseMode>,
    limit: Option<usize>,
    per_file: Option<usize>,
    require_dense: bool,
}

impl Explorer for Hybrid {
    const NAME: &'static CStr = c"hybrid";
    const DESCRIPTION: &'static CStr =
        c"lexical and dense rankings fused (normalised scores by default, or RRF) (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: HybridConfig = parse_config(config)?;
        let invalid = |m: &str| Err(ExplorerError::InvalidConfig(m.to_owned()));
        let dense_weight = config.dense_weight.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&dense_weight) {
            return invalid("dense_weight must be between 0 and 1");
        }
        let rrf_k = config.rrf_k.unwrap_or(DEFAULT_RRF_K);
        if !(rrf_k >= 0.0 && rrf_k.is_finite()) {
            return invalid("rrf_k must be a finite number of at least 0");
        }
        if config.candidates == Some(0) || config.limit == Some(0) {
            return invalid("candidates and limit must be positive");
        }
        Ok(Hybrid {
            fusion: config.fusion.unwrap_or(Fusion::Score),
            dense_weight,
            rrf_k,
            candidates: config.candidates.unwrap_or(DEFAULT_CANDIDATES),
            mode: config.mode,
            limit: config.limit,
            per_file: config.per_file.filter(|&cap| cap > 0),
            require_dense: config.require_dense,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let limit = self
            .limit
            .unwrap_or(request.top_k.saturating_mul(4).max(20))
            .min(self.candidates.max(1));
        let lexical = services
            .lexical_search(&SearchArgs::new(&request.issue, self.candidates))
            .map_err(|e| {
                if e.is_unavailable() {
                    ExplorerError::failed(format!(
                        "hybrid needs the engine's lexical index ({e}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
                    ))
                } else {
                    e.into()
                }
            })?;
        let lexical: Vec<Ranked> = lexical
            .iter()
            .map(|hit| Ranked::from_hit(hit, "BM25"))
            .collect();

        let mut args = DenseSearchArgs::new(request.issue.clone(), self.candidates);
        args.mode = self.mode;
        args.candidates = Some(self.candidates);
        let mut notes = Vec::new();
        let dense = match services.dense_search_with(&args) {
            Ok(result) => {
                notes.push(dense_note("hybrid dense", &result));
                result
                    .hits
                    .iter()
                    .map(|hit| Ranked::from_hit(hit, "dense"))
                    .collect()
            }
            Err(e) if e.is_unavailable() && !self.require_dense => {
                notes.push(format!("hybrid: lexical ranking only; {e}"));
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        };

        let mut fused = fuse(
            &[
                FusionInput {
                    name: "lexical",
                    ranked: &lexical,
                    weight: 1.0 - self.dense_weight,
                },
                FusionInput {
                    name: "dense",
                    ranked: &dense,
                    weight: self.dense_weight,
                },
            ],
            self.fusion,
            self.rrf_k,
        );
        fused.truncate(limit);
        let mut blank = BlankLines::new(services);
        let mut response = Response::new(select_regions_within(
            &fused,
            request.top_k,
            self.per_file,
            request.line_budget,
            &mut |path, from, to| blank.check(path, from, to),
        ));
        response.notes = notes;
        Ok(response)
    }
}

swex_plugin::export_vtable!(Hybrid);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked() {
        let h = Hybrid::create(
            &serde_json::json!({"fusion": "rrf", "dense_weight": 0.7, "per_file": 2}),
        )
        .unwrap();
        assert_eq!(h.fusion, Fusion::Rrf);
        assert_eq!(h.dense_weight, 0.7);
        assert_eq!(h.per_file, Some(2));
        let uncapped = Hybrid::create(&serde_json::json!({"per_file": 0})).unwrap();
        assert_eq!(uncapped.per_file, None);
        let defaults = Hybrid::create(&serde_json::Value::Null).unwrap();
        assert_eq!(defaults.fusion, Fusion::Score);
        assert_eq!(defaults.dense_weight, 0.5);
        assert_eq!(defaults.per_file, None);
        assert_eq!(defaults.candidates, DEFAULT_CANDIDATES);
        for bad in [
            serde_json::json!({"fusion": "max"}),
            serde_json::json!({"dense_weight": 1.5}),
            serde_json::json!({"rrf_k": -1.0}),
            serde_json::json!({"candidates": 0}),
            serde_json::json!({"weight": 0.5}),
        ] {
            assert!(
                matches!(Hybrid::create(&bad), Err(ExplorerError::InvalidConfig(_))),
                "{bad}"
            );
        }
    }
}
