//! The code-search benchmark's files: `repos.json` (one [`RepoSpec`] per repository) and
//! `annotations/<name>.json` (the [`Query`]s of a repository), as the semble benchmark publishes
//! them.
//!
//! A target is a path (the whole file) or a path with a 1-based inclusive line span. Paths are
//! relative to the repository checkout, not to `benchmark_root`. Loading is strict: the first bad
//! value is a [`DataError`] naming the file and the query; extra fields (`seed`, `related`) are
//! ignored, as the benchmark's own loader ignores them.
//!
//! This module knows the file formats only; it knows nothing about metrics, snapshots or explorers.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// Errors reading the benchmark's files.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: no annotation file for repository `{repo}` (expected {expected})")]
    MissingAnnotations {
        path: PathBuf,
        repo: String,
        expected: PathBuf,
    },
    #[error("--repos-only: not in {path}: {names}")]
    UnknownRepos { path: PathBuf, names: String },
}

/// One repository of the benchmark (`repos.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoSpec {
    /// The benchmark's name for it (`click`, `lazy.nvim`); also the annotation file's stem.
    pub name: String,
    /// Its language as the benchmark labels it (`python`, `csharp`, ...).
    pub language: String,
    /// `owner/name` of the GitHub repository holding `revision`.
    pub source: String,
    /// Full commit hash; scores are only comparable at this commit.
    pub revision: String,
    /// The sub-folder the published methods indexed (`None`: the whole checkout).
    #[serde(default)]
    pub benchmark_root: Option<String>,
}

/// A relevant file or span.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Target {
    pub path: String,
    /// 1-based inclusive line span; `None` for a whole-file target.
    pub span: Option<(i64, i64)>,
}

impl Target {
    pub fn file(path: impl Into<String>) -> Target {
        Target {
            path: path.into(),
            span: None,
        }
    }

    pub fn span(path: impl Into<String>, start: i64, end: i64) -> Target {
        Target {
            path: path.into(),
            span: Some((start, end)),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.span {
            Some((start, end)) => write!(f, "{}:{start}-{end}", self.path),
            None => f.write_str(&self.path),
        }
    }
}

/// The query categories of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Architecture,
    Semantic,
    Symbol,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Architecture, Category::Semantic, Category::Symbol];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Architecture => "architecture",
            Category::Semantic => "semantic",
            Category::Symbol => "symbol",
        }
    }
}

/// One annotated query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Query {
    /// Position in the annotation file (0-based): with the repository name, the query's key.
    pub index: usize,
    pub text: String,
    pub category: Category,
    pub relevant: Vec<Target>,
    /// Targets that count as much as `relevant` ones in the score (the benchmark's rule).
    pub secondary: Vec<Target>,
}

impl Query {
    /// Every target the score counts: `relevant` then `secondary`, duplicates kept (the
    /// benchmark counts each entry once in the ideal DCG).
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.relevant.iter().chain(&self.secondary)
    }

    pub fn target_count(&self) -> usize {
        self.relevant.len() + self.secondary.len()
    }
}

/// A repository and its queries.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoQueries {
    pub repo: RepoSpec,
    pub queries: Vec<Query>,
}

/// The whole benchmark: repositories in `repos.json` order, each with its queries.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeSearchData {
    /// The data folder (holding `repos.json` and `annotations/`).
    pub dir: PathBuf,
    pub repos: Vec<RepoQueries>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawTarget {
    Path(String),
    Span {
        path: String,
        start_line: i64,
        end_line: i64,
    },
}

#[derive(Deserialize)]
struct RawQuery {
    query: String,
    #[serde(default)]
    relevant: Vec<RawTarget>,
    #[serde(default)]
    secondary: Vec<RawTarget>,
    category: Category,
}

fn read(path: &Path) -> Result<String, DataError> {
    crate::input::read_text_io(path, crate::input::MAX_DOCUMENT_BYTES).map_err(|source| {
        DataError::Read {
            path: path.to_path_buf(),
            source,
        }
    })
}

fn invalid(path: &Path, message: impl Into<String>) -> DataError {
    DataError::Invalid {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn target(raw: RawTarget, path: &Path, query: &str) -> Result<Target, DataError> {
    let target = match raw {
        RawTarget::Path(p) => Target::file(p),
        RawTarget::Span {
            path: p,
            start_line,
            end_line,
        } => Target::span(p, start_line, end_line),
    };
    if target.path.is_empty() || target.path.starts_with('/') {
        return Err(invalid(
            path,
            format!(
                "query {query:?}: target path {:?} must be relative to the checkout",
                target.path
            ),
        ));
    }
    if let Some((start, end)) = target.span
        && (start < 1 || end < start)
    {
        return Err(invalid(
            path,
            format!(
                "query {query:?}: span {start}-{end} of {} is not 1-based and ordered",
                target.path
            ),
        ));
    }
    Ok(target)
}

/// Parses one annotation file's text.
pub fn parse_annotations(text: &str, path: &Path) -> Result<Vec<Query>, DataError> {
    let raw: Vec<RawQuery> = serde_json::from_str(text).map_err(|e| {
        invalid(
            path,
            format!("expected a list of {{query, relevant, secondary, category}}: {e}"),
        )
    })?;
    raw.into_iter()
        .enumerate()
        .map(|(index, q)| {
            if q.query.trim().is_empty() {
                return Err(invalid(path, format!("query #{index} is empty")));
            }
            let convert = |targets: Vec<RawTarget>| -> Result<Vec<Target>, DataError> {
                targets
                    .into_iter()
                    .map(|t| target(t, path, &q.query))
                    .collect()
            };
            Ok(Query {
                index,
                relevant: convert(q.relevant)?,
                secondary: convert(q.secondary)?,
                text: q.query,
                category: q.category,
            })
        })
        .collect()
}

/// Parses `repos.json`'s text.
pub fn parse_repos(text: &str, path: &Path) -> Result<Vec<RepoSpec>, DataError> {
    let repos: Vec<RepoSpec> = serde_json::from_str(text).map_err(|e| {
        invalid(
            path,
            format!("expected a list of {{name, language, source, revision, benchmark_root}}: {e}"),
        )
    })?;
    let mut names = BTreeSet::new();
    for repo in &repos {
        if repo.name.is_empty()
            || repo.name.contains(['/', '\\'])
            || repo.name.starts_with('.')
            || !names.insert(repo.name.as_str())
        {
            return Err(invalid(
                path,
                format!(
                    "repository name {:?} is empty, a path, hidden or given twice",
                    repo.name
                ),
            ));
        }
        if !repo.source.contains('/') {
            return Err(invalid(
                path,
                format!("{}: source {:?} is not owner/name", repo.name, repo.source),
            ));
        }
        if let Some(root) = &repo.benchmark_root
            && (root.starts_with('/') || root.split('/').any(|c| c == ".."))
        {
            return Err(invalid(
                path,
                format!(
                    "{}: benchmark_root {root:?} must stay inside the checkout",
                    repo.name
                ),
            ));
        }
    }
    Ok(repos)
}

impl CodeSearchData {
    /// Reads `dir/repos.json` and every repository's `dir/annotations/<name>.json`.
    pub fn load(dir: &Path) -> Result<CodeSearchData, DataError> {
        let repos_path = dir.join("repos.json");
        let specs = parse_repos(&read(&repos_path)?, &repos_path)?;
        let mut repos = Vec::with_capacity(specs.len());
        for repo in specs {
            let path = dir.join("annotations").join(format!("{}.json", repo.name));
            if !path.is_file() {
                return Err(DataError::MissingAnnotations {
                    path: repos_path,
                    repo: repo.name,
                    expected: path,
                });
            }
            let queries = parse_annotations(&read(&path)?, &path)?;
            repos.push(RepoQueries { repo, queries });
        }
        Ok(CodeSearchData {
            dir: dir.to_path_buf(),
            repos,
        })
    }

    /// Keeps only the named repositories (all when `names` is empty), in file order.
    pub fn select(&mut self, names: &[String]) -> Result<(), DataError> {
        if names.is_empty() {
            return Ok(());
        }
        let unknown: Vec<&str> = names
            .iter()
            .filter(|n| !self.repos.iter().any(|r| &r.repo.name == *n))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(DataError::UnknownRepos {
                path: self.dir.join("repos.json"),
                names: unknown.join(", "),
            });
        }
        self.repos.retain(|r| names.contains(&r.repo.name));
        Ok(())
    }

    pub fn query_count(&self) -> usize {
        self.repos.iter().map(|r| r.queries.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_parse_paths_and_spans() {
        let text = r#"[
            {"query": "how commands run", "relevant": ["src/a.py"], "secondary": [], "category": "architecture"},
            {"query": "Depends", "relevant": [{"path": "p.py", "start_line": 3, "end_line": 9}],
             "secondary": ["q.py"], "category": "symbol", "seed": "x", "related": []}
        ]"#;
        let queries = parse_annotations(text, Path::new("a.json")).expect("valid");
        assert_eq!(queries.len(), 2);
        assert_eq!(queries[0].category, Category::Architecture);
        assert_eq!(queries[0].relevant, vec![Target::file("src/a.py")]);
        assert_eq!(queries[1].index, 1);
        assert_eq!(
            queries[1].targets().cloned().collect::<Vec<_>>(),
            vec![Target::span("p.py", 3, 9), Target::file("q.py")]
        );
    }

    #[test]
    fn bad_annotations_name_the_file_and_the_problem() {
        let check = |text: &str, expected: &str| {
            let err = parse_annotations(text, Path::new("ann/x.json")).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("ann/x.json: ") && message.contains(expected),
                "{message}"
            );
        };
        check("{}", "expected a list");
        check(
            r#"[{"query": "q", "relevant": [], "secondary": [], "category": "other"}]"#,
            "unknown variant",
        );
        check(
            r#"[{"query": " ", "relevant": [], "secondary": [], "category": "symbol"}]"#,
            "query #0 is empty",
        );
        check(
            r#"[{"query": "q", "relevant": [{"path": "a", "start_line": 5, "end_line": 2}], "secondary": [], "category": "symbol"}]"#,
            "span 5-2 of a",
        );
        check(
            r#"[{"query": "q", "relevant": ["/abs/a.py"], "secondary": [], "category": "symbol"}]"#,
            "relative to the checkout",
        );
    }

    #[test]
    fn repos_are_checked() {
        let ok = r#"[{"name": "click", "language": "python", "source": "pallets/click",
                      "revision": "abc", "benchmark_root": "src/click"},
                     {"name": "gin", "language": "go", "source": "gin-gonic/gin", "revision": "def",
                      "benchmark_root": null}]"#;
        let repos = parse_repos(ok, Path::new("repos.json")).expect("valid");
        assert_eq!(repos[0].benchmark_root.as_deref(), Some("src/click"));
        assert_eq!(repos[1].benchmark_root, None);
        let bad = |text: &str, expected: &str| {
            let message = parse_repos(text, Path::new("repos.json"))
                .unwrap_err()
                .to_string();
            assert!(message.contains(expected), "{message}");
        };
        bad(
            r#"[{"name": "a", "language": "x", "source": "o/a", "revision": "1"},
                {"name": "a", "language": "x", "source": "o/b", "revision": "2"}]"#,
            "given twice",
        );
        bad(
            r#"[{"name": "a", "language": "x", "source": "oa", "revision": "1"}]"#,
            "not owner/name",
        );
        bad(
            r#"[{"name": "a", "language": "x", "source": "o/a", "revision": "1", "benchmark_root": "../x"}]"#,
            "inside the checkout",
        );
    }
}
