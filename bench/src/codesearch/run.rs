//! Running explorers over the code-search benchmark: per repository, the checkout is found or
//! materialised at its pinned revision (the engine's snapshot module, as for SWE-Explore
//! snapshots), its services are opened once on the search scope, and every explorer answers every
//! query with up to [`K`] regions, which are scored at once ([`super::metrics`]) and written as
//! [`CodeSearchRow`]s, one JSONL file per explorer.
//!
//! The search scope is `benchmark_root` by default, as the published methods searched; paths are
//! turned back into checkout-relative paths (the annotations' form) before scoring.
//! [`Scope::Checkout`] searches the whole checkout instead.
//!
//! Failures never vanish: a repository whose checkout or services fail gives a row with `error`
//! (score 0) for every query and explorer; a failed explorer call gives one such row.
//!
//! This module does no printing: progress goes to a [`CodeSearchObserver`].

use super::data::{Category, CodeSearchData, Query, RepoQueries, RepoSpec};
use super::metrics::{Hit, K, QueryScore, Scoring, score};
use crate::input::Lines;
use crate::runner::{BenchExplorer, ServicesOpener};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;
use swex_engine::snapshot::{RepoLocator, materialize};
use swex_plugin::Request;

/// The `task` field of every code-search row.
pub const TASK: &str = "codesearch";

/// The default output template.
pub const DEFAULT_OUTPUT: &str = "results/codesearch/{explorer}.jsonl";

/// What the explorers search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The repository's `benchmark_root` (the whole checkout when it has none): what the
    /// published methods searched.
    #[default]
    BenchmarkRoot,
    /// The whole checkout.
    Checkout,
}

/// Milliseconds spent on one row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryTimings {
    /// Materialising the checkout (0 when it was there), once per repository.
    pub snapshot_ms: f64,
    /// Opening the services (index build or cache open), once per repository.
    pub index_ms: f64,
    /// The explorer's answer to this query.
    pub query_ms: f64,
}

/// One query answered by one explorer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeSearchRow {
    /// Always [`TASK`]: tells these rows from SWE-Explore result rows.
    pub task: String,
    pub repo: String,
    pub language: String,
    pub query_index: usize,
    pub query: String,
    pub category: Category,
    pub explorer: String,
    /// The regions returned (at most [`K`]), paths relative to the checkout.
    pub results: Vec<Hit>,
    pub ndcg10: f64,
    /// Per target, the rank of its first match (see [`QueryScore`]).
    pub ranks: Vec<Option<usize>>,
    pub targets: usize,
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub explorer_config: serde_json::Value,
    #[serde(default)]
    pub timings: QueryTimings,
}

impl CodeSearchRow {
    pub fn key(&self) -> (String, String, usize) {
        (self.explorer.clone(), self.repo.clone(), self.query_index)
    }
}

/// Errors that stop a run (per-repository problems are rows).
#[derive(Debug, thiserror::Error)]
pub enum CodeSearchError {
    #[error("no explorers to run")]
    NoExplorers,
    #[error("explorer `{0}` is given twice")]
    DuplicateExplorer(String),
    #[error(
        "output template {0:?} has no {{explorer}} placeholder but there are several explorers"
    )]
    SharedOutput(String),
    #[error("{0} exists; pass --overwrite to replace it")]
    Exists(PathBuf),
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("starting {workers} worker threads: {message}")]
    Threads { workers: usize, message: String },
}

/// Progress of a run; called from worker threads.
pub trait CodeSearchObserver: Sync {
    fn started(&self, _repos: usize, _queries: usize, _files: &[PathBuf]) {}
    fn repo_done(&self, _event: &RepoEvent) {}
}

/// Observes nothing.
pub struct Quiet;
impl CodeSearchObserver for Quiet {}

/// One finished repository.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoEvent {
    pub repo: String,
    pub queries: usize,
    /// Rows with an error.
    pub failures: usize,
    /// The first error, if any.
    pub first_error: Option<String>,
    pub snapshot_ms: f64,
    pub index_ms: f64,
    pub seconds: f64,
}

/// Everything a run needs.
pub struct CodeSearchRun<'a> {
    pub data: &'a CodeSearchData,
    pub explorers: &'a [BenchExplorer],
    /// Checkouts live in `checkouts/<repo name>`.
    pub checkouts: PathBuf,
    /// When set, a missing checkout is materialised from a local git directory.
    pub locator: Option<&'a RepoLocator>,
    pub services: &'a dyn ServicesOpener,
    pub scope: Scope,
    /// Output path template with `{explorer}`.
    pub output: String,
    pub overwrite: bool,
    /// Repositories worked on at the same time.
    pub workers: usize,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct CodeSearchSummary {
    pub files: Vec<PathBuf>,
    pub rows: Vec<CodeSearchRow>,
    pub seconds: f64,
}

/// One output file, appended after each repository.
struct Sink {
    files: Mutex<BTreeMap<String, (PathBuf, File)>>,
}

impl Sink {
    fn open(
        template: &str,
        explorers: &[String],
        overwrite: bool,
    ) -> Result<Sink, CodeSearchError> {
        if explorers.len() > 1 && !template.contains("{explorer}") {
            return Err(CodeSearchError::SharedOutput(template.to_string()));
        }
        let mut files = BTreeMap::new();
        for explorer in explorers {
            let path = PathBuf::from(template.replace("{explorer}", explorer));
            if path.exists() && !overwrite {
                return Err(CodeSearchError::Exists(path));
            }
            let write_err = |source| CodeSearchError::Write {
                path: path.clone(),
                source,
            };
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(write_err)?;
            }
            let file = File::create(&path).map_err(write_err)?;
            files.insert(explorer.clone(), (path, file));
        }
        Ok(Sink {
            files: Mutex::new(files),
        })
    }

    fn paths(&self) -> Vec<PathBuf> {
        let files = self.files.lock().expect("sink lock");
        files.values().map(|(p, _)| p.clone()).collect()
    }

    fn append(&self, rows: &[CodeSearchRow]) -> Result<(), CodeSearchError> {
        let mut files = self.files.lock().expect("sink lock");
        for row in rows {
            let (path, file) = files
                .get_mut(&row.explorer)
                .expect("every explorer has a file");
            let mut line = serde_json::to_string(row).expect("rows serialise");
            line.push('\n');
            file.write_all(line.as_bytes())
                .map_err(|source| CodeSearchError::Write {
                    path: path.clone(),
                    source,
                })?;
        }
        for (path, file) in files.values_mut() {
            file.flush()
                .and_then(|_| file.sync_data())
                .map_err(|source| CodeSearchError::Write {
                    path: path.clone(),
                    source,
                })?;
        }
        Ok(())
    }
}

/// The folder the explorers search, and the prefix that turns its paths into checkout paths.
fn scope_dir(checkout: &Path, repo: &RepoSpec, scope: Scope) -> (PathBuf, String) {
    match (scope, repo.benchmark_root.as_deref()) {
        (Scope::BenchmarkRoot, Some(root)) if !root.trim_matches('/').is_empty() => {
            let root = root.trim_matches('/');
            (checkout.join(root), format!("{root}/"))
        }
        _ => (checkout.to_path_buf(), String::new()),
    }
}

impl CodeSearchRun<'_> {
    pub fn execute(
        &self,
        observer: &dyn CodeSearchObserver,
    ) -> Result<CodeSearchSummary, CodeSearchError> {
        let started = Instant::now();
        if self.explorers.is_empty() {
            return Err(CodeSearchError::NoExplorers);
        }
        let mut names: Vec<String> = Vec::new();
        for explorer in self.explorers {
            if names.contains(&explorer.name) {
                return Err(CodeSearchError::DuplicateExplorer(explorer.name.clone()));
            }
            names.push(explorer.name.clone());
        }
        let sink = Sink::open(&self.output, &names, self.overwrite)?;
        observer.started(
            self.data.repos.len(),
            self.data.query_count(),
            &sink.paths(),
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.workers.max(1))
            .thread_name(|i| format!("swex-codesearch-{i}"))
            .build()
            .map_err(|e| CodeSearchError::Threads {
                workers: self.workers,
                message: e.to_string(),
            })?;
        let outcomes: Vec<Result<Vec<CodeSearchRow>, CodeSearchError>> = pool.install(|| {
            self.data
                .repos
                .par_iter()
                .map(|repo| {
                    let repo_started = Instant::now();
                    let rows = self.run_repo(repo);
                    sink.append(&rows)?;
                    let failures: Vec<&CodeSearchRow> =
                        rows.iter().filter(|r| r.error.is_some()).collect();
                    observer.repo_done(&RepoEvent {
                        repo: repo.repo.name.clone(),
                        queries: repo.queries.len(),
                        failures: failures.len(),
                        first_error: failures.first().and_then(|r| r.error.clone()),
                        snapshot_ms: rows.first().map_or(0.0, |r| r.timings.snapshot_ms),
                        index_ms: rows.first().map_or(0.0, |r| r.timings.index_ms),
                        seconds: repo_started.elapsed().as_secs_f64(),
                    });
                    Ok(rows)
                })
                .collect()
        });
        let mut rows = Vec::new();
        for outcome in outcomes {
            rows.extend(outcome?);
        }
        Ok(CodeSearchSummary {
            files: sink.paths(),
            rows,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    fn row(
        &self,
        repo: &RepoSpec,
        query: &Query,
        explorer: &BenchExplorer,
        results: Vec<Hit>,
        error: Option<String>,
        timings: QueryTimings,
    ) -> CodeSearchRow {
        let QueryScore { ndcg10, ranks } = score(&results, query, Scoring::Chunk);
        CodeSearchRow {
            task: TASK.to_string(),
            repo: repo.name.clone(),
            language: repo.language.clone(),
            query_index: query.index,
            query: query.text.clone(),
            category: query.category,
            explorer: explorer.name.clone(),
            results,
            ndcg10: if error.is_some() { 0.0 } else { ndcg10 },
            ranks,
            targets: query.target_count(),
            scope: self.scope,
            error,
            explorer_config: explorer.config.clone(),
            timings,
        }
    }

    /// Every row of one repository; problems become rows with `error`.
    fn run_repo(&self, repo: &RepoQueries) -> Vec<CodeSearchRow> {
        let spec = &repo.repo;
        let mut timings = QueryTimings::default();
        let setup = (|| -> Result<_, String> {
            let checkout = self.checkouts.join(&spec.name);
            let began = Instant::now();
            if let Some(locator) = self.locator {
                let git = locator
                    .locate(&spec.source, &spec.revision)
                    .map_err(|e| e.to_string())?;
                materialize(&git, &spec.revision, &checkout, false).map_err(|e| e.to_string())?;
            } else if !checkout.is_dir() {
                return Err(format!(
                    "no checkout {} (pass --mirrors or --git-dir to make it)",
                    checkout.display()
                ));
            }
            timings.snapshot_ms = crate::results::Timings::ms(began.elapsed());
            let (dir, prefix) = scope_dir(&checkout, spec, self.scope);
            if !dir.is_dir() {
                return Err(format!(
                    "the search scope {} is not a folder of the checkout",
                    dir.display()
                ));
            }
            let began = Instant::now();
            let (services, _warnings) = self.services.open(&dir)?;
            timings.index_ms = crate::results::Timings::ms(began.elapsed());
            let root = std::fs::canonicalize(&dir).unwrap_or(dir);
            Ok((services, prefix, root))
        })();
        let (services, prefix, root) = match setup {
            Ok(ready) => ready,
            Err(reason) => {
                return self
                    .explorers
                    .iter()
                    .flat_map(|explorer| {
                        repo.queries.iter().map(|query| {
                            self.row(
                                spec,
                                query,
                                explorer,
                                Vec::new(),
                                Some(reason.clone()),
                                timings,
                            )
                        })
                    })
                    .collect();
            }
        };
        let mut rows = Vec::new();
        for explorer in self.explorers {
            for query in &repo.queries {
                let mut request = Request::new(
                    format!("{}#{}", spec.name, query.index),
                    query.text.clone(),
                    K,
                );
                request.repo_root = Some(root.display().to_string());
                let began = Instant::now();
                let answer = explorer.answer(&request, services.as_ref());
                let mut timings = timings;
                timings.query_ms = crate::results::Timings::ms(began.elapsed());
                let row = match answer {
                    Ok(answer) => {
                        let results = answer
                            .regions
                            .iter()
                            .take(K)
                            .map(|r| {
                                // `end = -1` reaches to the end of the file.
                                let end = if r.end < 0 { i64::MAX } else { r.end };
                                Hit::new(format!("{prefix}{}", r.path), r.start, end)
                            })
                            .collect();
                        self.row(spec, query, explorer, results, None, timings)
                    }
                    Err(reason) => {
                        self.row(spec, query, explorer, Vec::new(), Some(reason), timings)
                    }
                };
                rows.push(row);
            }
        }
        rows
    }
}

/// Whether a results file holds code-search rows (its first non-blank line has
/// `"task": "codesearch"`).
pub fn is_codesearch_file(path: &Path) -> bool {
    let Ok(mut lines) = Lines::open(path) else {
        return false;
    };
    while let Ok(Some(line)) = lines.next_line() {
        if line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return serde_json::from_slice::<serde_json::Value>(line.bytes)
            .is_ok_and(|v| v.get("task").and_then(|t| t.as_str()) == Some(TASK));
    }
    false
}

/// Reads a code-search results file strictly: a bad line is an error naming file and line, and so
/// is a key (explorer, repo, query) given twice.
pub fn read_rows(path: &Path) -> Result<Vec<CodeSearchRow>, CodeSearchError> {
    let read_err = |message: String| CodeSearchError::Read {
        path: path.to_path_buf(),
        message,
    };
    // Each row at most `MAX_ROW_BYTES`, the file at most `MAX_JSONL_BYTES` (crate::input).
    let mut lines = Lines::open(path).map_err(|e| read_err(e.reason()))?;
    let mut rows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while let Some(line) = lines.next_line().map_err(|e| read_err(e.reason()))? {
        let n = line.number - 1;
        let line = std::str::from_utf8(line.bytes)
            .map_err(|_| read_err(format!("line {}: not valid UTF-8", n + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let row: CodeSearchRow = serde_json::from_str(line)
            .map_err(|e| read_err(format!("line {}: not a code-search row: {e}", n + 1)))?;
        if row.task != TASK {
            return Err(read_err(format!(
                "line {}: task {:?} is not {TASK:?}",
                n + 1,
                row.task
            )));
        }
        if !seen.insert(row.key()) {
            return Err(read_err(format!(
                "line {}: {} on {}#{} appears twice",
                n + 1,
                row.explorer,
                row.repo,
                row.query_index
            )));
        }
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codesearch::data::Target;
    use crate::runner::{Explore, FsOpener};
    use swex_plugin_host::{RawServices, ValidatedResponse};

    struct Panics;

    impl Explore for Panics {
        fn explore(&self, _: &Request, _: &dyn RawServices) -> Result<ValidatedResponse, String> {
            panic!("a panic on purpose")
        }
    }

    /// A panic of an explorer is its query's row with the panic's message, as in `swex bench`.
    #[test]
    fn a_panicking_explorer_gives_a_row_naming_the_panic() {
        let dir = tempfile::tempdir().unwrap();
        let checkouts = dir.path().join("checkouts");
        std::fs::create_dir_all(checkouts.join("repo")).unwrap();
        std::fs::write(checkouts.join("repo/a.py"), "x = 1\n").unwrap();
        let query = Query {
            index: 0,
            text: "where is x set".into(),
            category: Category::Symbol,
            relevant: vec![Target {
                path: "a.py".into(),
                span: None,
            }],
            secondary: Vec::new(),
        };
        let repo = RepoSpec {
            name: "repo".into(),
            language: "python".into(),
            source: "owner/repo".into(),
            revision: "0".repeat(40),
            benchmark_root: None,
        };
        let data = CodeSearchData {
            dir: dir.path().to_path_buf(),
            repos: vec![RepoQueries {
                repo,
                queries: vec![query],
            }],
        };
        let explorers = [BenchExplorer {
            name: "panics".into(),
            config: serde_json::Value::Null,
            build: "test".into(),
            sees_ground_truth: false,
            explorer: Box::new(Panics),
        }];
        let run = CodeSearchRun {
            data: &data,
            explorers: &explorers,
            checkouts,
            locator: None,
            services: &FsOpener,
            scope: Scope::Checkout,
            output: dir.path().join("{explorer}.jsonl").display().to_string(),
            overwrite: true,
            workers: 1,
        };
        let summary = run.execute(&Quiet).unwrap();
        assert_eq!(
            summary.rows[0].error.as_deref(),
            Some("explorer panicked: a panic on purpose")
        );
    }
}
