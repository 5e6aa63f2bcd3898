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

/// The names to look up: the last part of each identifier the host's issue parser found
/// (`Session.get_adapter` gives `get_adapter`), 3+ characters, most specific (longest) first.
pub fn names_to_look_up(identifiers: &[String], limit: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for identifier in identifiers {
        let last = identifier.rsplit(['.', ':']).next().unwrap_or(identifier);
        if last.len() >= 3 && !names.iter().any(|n| n == last) {
            names.push(last.to_owned());
        }
    }
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.truncate(limit);
    names
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
        // The host reads the issue (frames, paths, identifiers, ...): no parsing here.
        let clues = services.issue_clues(&request.issue)?;
        let names = names_to_look_up(&clues.identifiers, self.config.max_identifiers);
        let mut response = Response::default();
        if names.is_empty() {
            response.notes.push("no identifier in the issue".to_owned());
            return Ok(response);
        }
        // (path, line) -> (number of issue identifiers defined there, names)
        let mut hits: BTreeMap<(String, u32), (usize, Vec<String>)> = BTreeMap::new();
        for name in &names {
            let pattern = format!(r"\b(def|class|fn|function|func|struct|enum|trait|interface|type)\s+{name}\b");
            let args = GrepArgs::new(pattern, 20);
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
    use swex_plugin_serve::MemoryBackend;

    #[test]
    fn names_of_identifiers() {
        let found = ["Session.get_adapter".to_owned(), "UrlParser".into(), "ab".into()];
        assert_eq!(names_to_look_up(&found, 10), ["get_adapter", "UrlParser"]);
    }

    /// The explorer end to end, through its C vtable as swex calls it, on a snapshot held in
    /// memory: no checkout and no engine needed (`swex-plugin-serve`).
    #[test]
    fn finds_the_definition_the_issue_names() {
        let snapshot = MemoryBackend::new([
            ("urls.py", "import re\n\n\ndef parse_url(url):\n    return url\n"),
            ("other.py", "parse_url('x')\n"),
        ]);
        let request = Request::new("t", "parse_url() drops the port", 5);
        let answer =
            swex_plugin_serve::explore::<DefinitionsGrep>(&serde_json::Value::Null, &request, &snapshot)
                .unwrap();
        let regions: Vec<(&str, i64, i64)> =
            answer.regions.iter().map(|r| (r.path.as_str(), r.start, r.end)).collect();
        assert_eq!(regions, [("urls.py", 1, 24)]);
        assert_eq!(answer.regions[0].why.as_deref(), Some("defines parse_url"));
    }
}
