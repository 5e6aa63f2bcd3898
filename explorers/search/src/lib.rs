//! The `search` explorer: the engine's ranked code search ([`code_search`] service) as an
//! explorer, for short queries — a symbol (`HttpClient`), a phrase (`retry backoff with
//! jitter`), a question (`how are middlewares ordered?`). Each region is one file's best span
//! (the definition that matched, else its best chunk), files in rank order; `why` names the
//! signals that placed it.
//!
//! It needs a host that serves the engine's index (`swex explore`, `swex bench --index`, the
//! code-search benchmark); elsewhere it fails saying so.
//!
//! Config: `{"per_file": 1, "dense": "auto"}` — spans per file, and whether dense scores are
//! fused (`auto`: when the host has the embedding model; `off`; `on`: fail without it).
//!
//! [`code_search`]: swex_plugin::types::CodeSearchArgs

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::types::{CodeSearchArgs, Region};
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    #[serde(default)]
    pub per_file: Option<usize>,
    #[serde(default)]
    pub dense: Option<String>,
}

pub struct Search {
    config: SearchConfig,
}

impl Explorer for Search {
    const NAME: &'static CStr = c"search";
    const DESCRIPTION: &'static CStr = c"the engine's ranked code search for short queries: one span per file, definitions first (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: SearchConfig = parse_config(config)?;
        if config.per_file == Some(0) {
            return Err(ExplorerError::InvalidConfig(
                "per_file must be positive".to_owned(),
            ));
        }
        if let Some(dense) = &config.dense
            && !matches!(dense.as_str(), "auto" | "off" | "on")
        {
            return Err(ExplorerError::InvalidConfig(format!(
                "dense {dense:?}: expected \"auto\", \"off\" or \"on\""
            )));
        }
        Ok(Search { config })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let args = CodeSearchArgs {
            query: request.issue.clone(),
            limit: request.top_k,
            per_file: self.config.per_file,
            under: None,
            dense: self.config.dense.clone(),
        };
        let result = services.code_search(&args).map_err(|e| {
            if e.is_unavailable() {
                ExplorerError::failed(format!(
                    "search needs the engine's index ({e}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
                ))
            } else {
                e.into()
            }
        })?;
        let regions = result
            .hits
            .iter()
            .map(|hit| {
                let mut why = format!("{} query", result.query_kind);
                if let Some(name) = &hit.name {
                    why = format!("{why}: {} {name}", hit.kind.as_deref().unwrap_or("chunk"));
                }
                Region::new(hit.path.clone(), i64::from(hit.start), i64::from(hit.end))
                    .with_score(hit.score)
                    .with_why(why)
            })
            .collect();
        let mut response = Response::new(regions);
        if result.dense {
            response.notes.push("dense scores fused".to_owned());
        }
        Ok(response)
    }
}

swex_plugin::export_vtable!(Search);
