//! `definitions-grep`: a template explorer. It pulls identifiers out of the issue text
//! (`parse_url`, `UrlParser`, `Session.get`), greps the snapshot for where they are defined
//! (`def name`, `class name`, `fn name`, `function name`, ...), and answers a window around each
//! definition, ranked by how many issue identifiers the definition line names.
//!
//! Build: `cargo build --release`, then
//! `swex explore --plugin target/release/libmy_explorer.so --repo CHECKOUT "issue text"`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::CStr;
use swex_plugin::types::GrepArgs;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};

/// Config: `{"context": 20, "max_identifiers": 12}` (both optional).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Lines kept after a definition line (and a few before it).
    pub context: i64,
    /// How many identifiers of the issue to look up.
    pub max_identifiers: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config { context: 20, max_identifiers: 12 }
    }
}

pub struct DefinitionsGrep {
    config: Config,
}

/// Identifier-like words of the issue: with `_` or an inner capital, or dotted (`a.b`), 3+
/// characters; dotted names contribute their last part. Most specific (longest) first.
pub fn identifiers(issue: &str, limit: usize) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for word in issue.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
        let word = word.trim_matches('.');
        let last = word.rsplit('.').next().unwrap_or(word);
        let code_like = last.contains('_')
            || last.chars().skip(1).any(|c| c.is_uppercase())
            || word.contains('.');
        if code_like && last.len() >= 3 && last.chars().all(|c| c.is_alphanumeric() || c == '_') && !found.iter().any(|f| f == last) {
            found.push(last.to_owned());
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.len()));
    found.truncate(limit);
    found
}

impl Explorer for DefinitionsGrep {
    const NAME: &'static CStr = c"definitions-grep";
    const DESCRIPTION: &'static CStr = c"template: definitions of the identifiers the issue names, found by grep";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: Config = parse_config(config)?;
        if config.context < 0 {
            return Err(ExplorerError::InvalidConfig(format!("context must be >= 0, got {}", config.context)));
        }
        Ok(DefinitionsGrep { config })
    }

    fn explore(&self, request: &Request, services: &Services<'_>) -> Result<Response, ExplorerError> {
        let names = identifiers(&request.issue, self.config.max_identifiers);
        let mut response = Response::default();
        if names.is_empty() {
            response.notes.push("no identifier in the issue".to_owned());
            return Ok(response);
        }
        // (path, line) -> (number of issue identifiers defined there, names)
        let mut hits: BTreeMap<(String, u32), (usize, Vec<String>)> = BTreeMap::new();
        for name in &names {
            let pattern = format!(r"\b(def|class|fn|function|func|struct|enum|trait|interface|type)\s+{name}\b");
            let args = GrepArgs { pattern, path_glob: None, case_insensitive: false, limit: 20 };
            for found in services.grep(&args)?.matches {
                let entry = hits.entry((found.path, found.line)).or_default();
                entry.0 += 1;
                entry.1.push(name.clone());
            }
        }
        let mut ranked: Vec<_> = hits.into_iter().collect();
        // Most identifiers first; ties in path/line order (BTreeMap order, sort is stable):
        // deterministic, as the contract asks.
        ranked.sort_by_key(|(_, (count, _))| std::cmp::Reverse(*count));
        for ((path, line), (count, defined)) in ranked.into_iter().take(request.top_k) {
            let start = (line as i64 - 3).max(1);
            let region = Region::new(path, start, line as i64 + self.config.context)
                .with_score(count as f64)
                .with_why(format!("defines {}", defined.join(", ")));
            response.regions.push(region);
        }
        Ok(response)
    }
}

swex_plugin::export_explorer!(DefinitionsGrep);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_of_an_issue() {
        let issue = "Calling Session.get_adapter() with UrlParser fails in parse_url; see the docs.";
        assert_eq!(identifiers(issue, 10), ["get_adapter", "UrlParser", "parse_url"]);
    }
}
