//! Dense search through the snapshot index, with the real model: rerank of lexical candidates,
//! the full index after `build_dense`, sharing of vectors between snapshots by chunk key,
//! candidate regions, filters, and the typed errors. Like `dense_model.rs`, each test is skipped
//! (with the reason) when the assets of `swex models fetch` are absent, and fails then under
//! `SWEX_REQUIRE_MODEL=1`. The absence path itself is tested without the model at the end.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use swex_engine::dense::{Embedder, EmbedderConfig, IndexOptions, default_cache_root};
use swex_engine::index::{
    CandidateRegion, DenseConfig, DenseMode, DenseQuery, Engine, EngineConfig, IndexError,
    NoProgress, Progress, SearchFilters, SnapshotIndex, Stage,
};
use swex_text::Glob;

fn model_present() -> bool {
    match Embedder::open(&default_cache_root(), &EmbedderConfig::default()) {
        Ok(_) => true,
        Err(e) if e.is_absent() => {
            swex_testkit::available::<(), _>(swex_testkit::Needs::Model, Err(e)).is_some()
        }
        Err(e) => panic!("the model is installed but does not load: {e}"),
    }
}

const URLS: &str = "\
import re


def parse_url(url):
    \"\"\"Split a URL into scheme, host, port and path.\"\"\"
    scheme, rest = url.split('://', 1)
    host, _, path = rest.partition('/')
    return scheme, host, path


def quote(text):
    \"\"\"Percent-encode unsafe characters.\"\"\"
    return re.sub('[^a-z]', '%', text)
";

const MATRIX: &str = "\
class Matrix:
    def det(self):
        \"\"\"Determinant of a square matrix by Bareiss elimination.\"\"\"
        return self._eval_det_bareiss()

    def transpose(self):
        \"\"\"Rows become columns.\"\"\"
        return Matrix(list(zip(*self.rows)))
";

const COOKIES: &str = "\
def set_cookie(jar, name, value, domain=None):
    \"\"\"Set a cookie in the jar, optionally for a domain and path.\"\"\"
    jar[(domain, name)] = value
";

fn write_repo(root: &Path, matrix: &str) {
    for (path, text) in [
        ("pkg/urls.py", URLS),
        ("pkg/matrix.py", matrix),
        ("pkg/cookies.py", COOKIES),
        (
            "README.md",
            "# pkg\n\nHelpers for URLs, matrices and cookies.\n",
        ),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn engine(cache: &Path, models_root: Option<&Path>) -> Engine {
    Engine::new(EngineConfig {
        cache_dir: cache.to_path_buf(),
        dense: DenseConfig {
            models_root: models_root.map(Path::to_path_buf),
            ..DenseConfig::default()
        },
        ..EngineConfig::default()
    })
}

fn query(text: &str, limit: usize, mode: DenseMode) -> DenseQuery {
    DenseQuery {
        mode,
        ..DenseQuery::new(text, limit)
    }
}

fn top_name(index: &SnapshotIndex, query: &DenseQuery) -> String {
    let result = index.dense_search(query).unwrap();
    result.hits[0].name.clone().unwrap_or_default()
}

#[test]
fn rerank_then_full_index_then_a_second_snapshot_reuses_vectors() {
    if !model_present() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), MATRIX);
    let engine = engine(cache.path(), Some(&default_cache_root()));
    let index = engine.open(repo.path()).unwrap();

    // No full index yet: auto reranks the lexical candidates, embedding each once.
    let issue = "parse_url returns the wrong host for URLs with a port";
    let first = index.dense_search(&DenseQuery::new(issue, 3)).unwrap();
    assert_eq!(first.mode, DenseMode::Rerank);
    assert!(
        first.scored > 0 && first.counts.embedded == first.scored,
        "{first:?}"
    );
    assert_eq!(
        first.hits[0].name.as_deref(),
        Some("parse_url"),
        "{first:?}"
    );
    let again = index.dense_search(&DenseQuery::new(issue, 3)).unwrap();
    assert_eq!(
        (again.counts.embedded, again.counts.cached),
        (0, first.scored)
    );
    assert_eq!(again.hits, first.hits);

    // `full` refuses until the index is built, naming the command.
    let status = index.dense_status().unwrap();
    assert!(!status.is_complete(), "{status:?}");
    match index.dense_search(&query(issue, 3, DenseMode::Full)) {
        Err(err @ IndexError::DenseNotBuilt { .. }) => {
            assert!(err.to_string().contains("swex index --dense"), "{err}");
        }
        other => panic!("expected DenseNotBuilt, got {other:?}"),
    }

    let report = index.build_dense(&NoProgress).unwrap();
    assert_eq!(report.chunks, status.chunks);
    assert_eq!(report.cached, status.embedded);
    assert_eq!(report.embedded, status.chunks - status.embedded);
    assert_eq!(report.search, "exact");
    assert!(index.dense_status().unwrap().is_complete());

    // With the full index built, auto uses it and scores every chunk; a query with no lexical
    // overlap still finds its chunk.
    let full = index
        .dense_search(&DenseQuery::new("wrong result of the determinant", 2))
        .unwrap();
    assert_eq!(full.mode, DenseMode::Full);
    assert_eq!(full.scored, status.chunks);
    // A class this small is one chunk.
    assert_eq!(full.hits[0].name.as_deref(), Some("Matrix"), "{full:?}");
    assert_eq!(
        top_name(
            &index,
            &query("cookie for a domain is lost", 2, DenseMode::Full)
        ),
        "set_cookie"
    );

    // A filter restricts the full index exactly.
    let filtered = index
        .dense_search(&DenseQuery {
            filters: SearchFilters {
                path_glob: Some(Glob::new("pkg/urls.py").unwrap()),
                ..SearchFilters::default()
            },
            ..query("determinant of a matrix", 5, DenseMode::Full)
        })
        .unwrap();
    assert!(
        filtered.hits.iter().all(|h| h.path == "pkg/urls.py"),
        "{filtered:?}"
    );
    assert!(!filtered.hits.is_empty());

    // Candidate regions: only chunks overlapping them are scored.
    let regions = index
        .dense_search(&DenseQuery {
            regions: vec![CandidateRegion {
                path: "pkg/urls.py".into(),
                start: 11,
                end: None,
            }],
            ..DenseQuery::new("matrix determinant", 5)
        })
        .unwrap();
    assert_eq!(regions.mode, DenseMode::Rerank);
    let names: Vec<&str> = regions
        .hits
        .iter()
        .filter_map(|h| h.name.as_deref())
        .collect();
    assert_eq!(names, ["quote"], "{regions:?}");
    let unknown = index.dense_search(&DenseQuery {
        regions: vec![CandidateRegion {
            path: "nope.py".into(),
            start: 1,
            end: None,
        }],
        ..DenseQuery::new("x", 5)
    });
    assert!(
        matches!(unknown, Err(IndexError::UnknownFile(_))),
        "{unknown:?}"
    );

    // A second snapshot of the "repository" with one method changed: only the changed chunk is
    // embedded; everything else comes from the cache through the chunk keys.
    let second = tempfile::tempdir().unwrap();
    write_repo(
        second.path(),
        &MATRIX.replace("Rows become columns.", "Swap rows and columns."),
    );
    let second_index: Arc<SnapshotIndex> = engine.open(second.path()).unwrap();
    let report = second_index.build_dense(&NoProgress).unwrap();
    assert_eq!(report.embedded, 1, "{report:?}");
    assert_eq!(report.cached, report.chunks - 1);
}

/// Keeps every progress report.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(Stage, u64, u64)>>);

impl Progress for Recorder {
    fn report(&self, stage: Stage, done: u64, total: u64) {
        self.0.lock().unwrap().push((stage, done, total));
    }
}

/// The stored HNSW graphs under an engine cache directory.
fn stored_graphs(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut graphs = Vec::new();
    for model in std::fs::read_dir(cache.join("embeddings")).unwrap() {
        let dir = model.unwrap().path().join("graphs");
        if let Ok(entries) = std::fs::read_dir(dir) {
            graphs.extend(entries.map(|e| e.unwrap().path()));
        }
    }
    graphs
}

#[test]
fn build_dense_stores_an_hnsw_graph_that_a_later_engine_loads() {
    if !model_present() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), MATRIX);
    // A threshold of two chunks gives this small repository a graph; loading costs nothing, so a
    // stored graph is loaded at once.
    let graph_engine = || {
        Engine::new(EngineConfig {
            cache_dir: cache.path().to_path_buf(),
            dense: DenseConfig {
                models_root: Some(default_cache_root()),
                index: IndexOptions {
                    exact_below: 2,
                    graph_load_cost_per_mb: Duration::ZERO,
                    ..IndexOptions::default()
                },
                ..DenseConfig::default()
            },
            ..EngineConfig::default()
        })
    };
    let first = graph_engine().open(repo.path()).unwrap();
    let progress = Recorder::default();
    let report = first.build_dense(&progress).unwrap();
    assert_eq!(report.search, "hnsw", "{report:?}");
    // The graph build reports its progress, ending with every chunk inserted.
    let graph_reports: Vec<(u64, u64)> = progress
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(stage, _, _)| *stage == Stage::VectorGraph)
        .map(|&(_, done, total)| (done, total))
        .collect();
    let chunks = report.chunks as u64;
    assert_eq!(graph_reports.first(), Some(&(0, chunks)));
    assert_eq!(graph_reports.last(), Some(&(chunks, chunks)));
    assert!(report.graph.contains("built"), "{report:?}");
    assert_eq!(stored_graphs(cache.path()).len(), 1);

    // Another engine (as another process would) finds the graph by the snapshot's vectors and
    // answers as exact search does.
    let later = graph_engine().open(repo.path()).unwrap();
    let report = later.build_dense(&NoProgress).unwrap();
    assert_eq!((report.embedded, report.search.as_str()), (0, "hnsw"));
    assert!(report.graph.contains("loaded"), "{report:?}");
    assert_eq!(stored_graphs(cache.path()).len(), 1);
    let exact = engine(cache.path(), Some(&default_cache_root()))
        .open(repo.path())
        .unwrap();
    for text in [
        "wrong result of the determinant",
        "cookie for a domain is lost",
        "URL parsing",
    ] {
        let q = query(text, 3, DenseMode::Full);
        let names = |index: &SnapshotIndex| -> Vec<Option<String>> {
            let result = index.dense_search(&q).unwrap();
            assert_eq!(result.mode, DenseMode::Full);
            result.hits.into_iter().map(|h| h.name).collect()
        };
        assert_eq!(names(&later), names(&exact), "{text}");
    }

    // A changed snapshot has other vectors, so it gets its own graph.
    let second = tempfile::tempdir().unwrap();
    write_repo(
        second.path(),
        &MATRIX.replace("Rows become columns.", "Swap rows and columns."),
    );
    let report = graph_engine()
        .open(second.path())
        .unwrap()
        .build_dense(&NoProgress)
        .unwrap();
    assert!(report.graph.contains("built"), "{report:?}");
    assert_eq!(stored_graphs(cache.path()).len(), 2);
}

#[test]
fn a_missing_model_is_a_typed_absence_error_and_lexical_search_still_works() {
    let cache = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), MATRIX);
    let engine = engine(cache.path(), Some(models.path()));
    let index = engine.open(repo.path()).unwrap();
    for mode in [DenseMode::Auto, DenseMode::Full, DenseMode::Rerank] {
        match index.dense_search(&query("parse_url", 3, mode)) {
            Err(IndexError::Dense(e)) => {
                assert!(e.is_absent(), "{e:?}");
                assert!(e.to_string().contains("swex models fetch"), "{e}");
            }
            other => panic!("expected an absence error, got {other:?}"),
        }
    }
    assert!(matches!(index.build_dense(&NoProgress), Err(IndexError::Dense(e)) if e.is_absent()));
    let hits = index
        .search_text("parse_url", 3, &SearchFilters::default())
        .unwrap();
    assert_eq!(hits[0].path, "pkg/urls.py");
}
