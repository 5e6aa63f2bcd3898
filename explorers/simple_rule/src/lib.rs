//! The `simple_rule` explorer: the reference's rule baseline. Source files (the reference's
//! discovery policy, [`swex_refkit::SourcePolicy`]) are ranked by the first well-known name
//! pattern their file name contains (`__init__.py`, `setup.py`, `main.py`, `__main__.py`,
//! `config.py`, `constants.py`, `settings.py`, in that order; substring match), then by file
//! name, ties kept in path order; the first 100 lines of the `top_k` first are returned. The
//! issue text is ignored.
//!
//! Config: `{"extensions": [...], "excluded_dirs": [...], "patterns": [...], "lines": 100}`, all
//! optional.

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};
use swex_refkit::SourcePolicy;

pub const DEFAULT_PATTERNS: &[&str] = &[
    "__init__.py",
    "setup.py",
    "main.py",
    "__main__.py",
    "config.py",
    "constants.py",
    "settings.py",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleRuleConfig {
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    #[serde(default)]
    pub excluded_dirs: Option<Vec<String>>,
    #[serde(default = "default_patterns")]
    pub patterns: Vec<String>,
    #[serde(default = "default_lines")]
    pub lines: i64,
}

fn default_patterns() -> Vec<String> {
    DEFAULT_PATTERNS.iter().map(|s| (*s).to_owned()).collect()
}

fn default_lines() -> i64 {
    100
}

impl Default for SimpleRuleConfig {
    fn default() -> Self {
        SimpleRuleConfig {
            extensions: None,
            excluded_dirs: None,
            patterns: default_patterns(),
            lines: default_lines(),
        }
    }
}

pub struct SimpleRule {
    policy: SourcePolicy,
    patterns: Vec<String>,
    lines: i64,
}

impl SimpleRule {
    /// The ranking key of a file: (index of the first pattern its name contains, its name).
    fn key<'a>(&self, path: &'a str) -> (usize, &'a str) {
        let name = path.rsplit('/').next().unwrap_or(path);
        let rank = self
            .patterns
            .iter()
            .position(|p| name.contains(p.as_str()))
            .unwrap_or(self.patterns.len());
        (rank, name)
    }
}

impl Explorer for SimpleRule {
    const NAME: &'static CStr = c"simple_rule";
    const DESCRIPTION: &'static CStr =
        c"reference rule baseline: first 100 lines of files named __init__.py, setup.py, main.py, ...";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: SimpleRuleConfig = parse_config(config)?;
        if config.lines < 1 {
            return Err(ExplorerError::InvalidConfig(format!(
                "lines must be at least 1, got {}",
                config.lines
            )));
        }
        let defaults = SourcePolicy::default();
        Ok(SimpleRule {
            policy: SourcePolicy {
                extensions: config.extensions.unwrap_or(defaults.extensions),
                excluded_dirs: config.excluded_dirs.unwrap_or(defaults.excluded_dirs),
            },
            patterns: config.patterns,
            lines: config.lines,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let mut files = self.policy.source_files(services)?;
        // A stable sort: equal keys keep path order, as the reference's `sorted` does.
        files.sort_by(|a, b| self.key(a).cmp(&self.key(b)));
        let regions = files
            .into_iter()
            .take(request.top_k)
            .map(|path| {
                let (rank, _) = self.key(&path);
                let why = match self.patterns.get(rank) {
                    Some(pattern) => format!("file name contains {pattern}"),
                    None => "source file".to_owned(),
                };
                Region::new(path, 1, self.lines)
                    .with_score(0.5)
                    .with_why(why)
            })
            .collect();
        Ok(Response::new(regions))
    }
}

swex_plugin::export_vtable!(SimpleRule);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_key() {
        let rule = SimpleRule::create(&serde_json::Value::Null).unwrap();
        let mut files = vec![
            "b/zz.py",
            "a/setup.py",
            "c/__init__.py",
            "a/__init__.py",
            "x/my_main.py",
            "a/aa.py",
        ];
        files.sort_by(|a, b| rule.key(a).cmp(&rule.key(b)));
        assert_eq!(
            files,
            [
                "c/__init__.py",
                "a/__init__.py",
                "a/setup.py",
                "x/my_main.py",
                "a/aa.py",
                "b/zz.py"
            ]
        );
    }

    #[test]
    fn bad_config_names_the_field() {
        let err = SimpleRule::create(&serde_json::json!({"lines": 0}))
            .err()
            .unwrap();
        assert!(err.to_string().contains("lines"), "{err}");
        let err = SimpleRule::create(&serde_json::json!({"patern": []}))
            .err()
            .unwrap();
        assert!(err.to_string().contains("patern"), "{err}");
    }
}
