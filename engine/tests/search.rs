//! Ranked code search ([`swex_engine::search`]) on a small repository written here: one span per
//! file, definitions for symbol queries (also one-letter names), files named after the query,
//! tests and docs demoted unless asked for, auxiliary copies always, and the grep fallback. One
//! `check(query, expected)` per behaviour.

mod support;

use std::path::Path;
use swex_engine::index::{Engine, SnapshotIndex};
use swex_engine::search::{DenseUse, QueryKind, SearchOptions};

const FILES: &[(&str, &str)] = &[
    (
        "src/retry.py",
        "\"\"\"Retry policies.\"\"\"\n\n\nclass Backoff:\n    \"\"\"Exponential retry backoff with jitter.\"\"\"\n\n    def delay(self, attempt):\n        return min(2 ** attempt, 60)\n\n\ndef retry(call, backoff):\n    for attempt in range(5):\n        try:\n            return call()\n        except IOError:\n            backoff.delay(attempt)\n\n\ndef jitter(delay):\n    return delay / 2\n",
    ),
    (
        "src/http_client.py",
        "from src.retry import retry\n\n\nclass HttpClient:\n    \"\"\"Sends requests with retries.\"\"\"\n\n    def send(self, request):\n        return retry(lambda: request, None)\n\n\nclass Q:\n    \"\"\"A query object.\"\"\"\n",
    ),
    (
        "src/middleware.py",
        "MIDDLEWARE_ORDER = ['auth', 'session']\n\n\ndef ordered_middlewares(stack):\n    \"\"\"Middlewares run in the order of MIDDLEWARE_ORDER.\"\"\"\n    return sorted(stack, key=MIDDLEWARE_ORDER.index)\n",
    ),
    (
        "tests/test_retry.py",
        "from src.retry import retry, Backoff\n\n\ndef test_retry_backoff_delay():\n    assert Backoff().delay(1) == 2\n    assert retry(lambda: 1, Backoff()) == 1\n",
    ),
    (
        "docs/retry.md",
        "# Retry backoff\n\nThe retry backoff delay doubles with every attempt.\n",
    ),
    // A port of the library kept in a top-level `contrib/` (auxiliary): the same words, sorted
    // before `src/`, ranked after it.
    (
        "contrib/kernel/retry.py",
        "\"\"\"Retry policies.\"\"\"\n\n\nclass Backoff:\n    \"\"\"Exponential retry backoff with jitter.\"\"\"\n\n    def delay(self, attempt):\n        return min(2 ** attempt, 60)\n\n\ndef retry(call, backoff):\n    for attempt in range(5):\n        try:\n            return call()\n        except IOError:\n            backoff.delay(attempt)\n\n\ndef jitter(delay):\n    return delay / 2\n",
    ),
    (
        "src/notes.txt",
        "zeta_marker appears only here, in a plain text file.\n",
    ),
];

/// A class of 3 + 70 × 3 lines: longer than a hit may span (`LONGEST_DEFINITION_HIT`, 200).
fn long_class() -> String {
    let mut text = String::from(
        "class Application:\n    \"\"\"The application object: routes and settings.\"\"\"\n\n",
    );
    for i in 0..70 {
        text.push_str(&format!("    def step_{i}(self):\n        return {i}\n\n"));
    }
    text
}

fn open(repo: &Path, cache: &Path) -> std::sync::Arc<SnapshotIndex> {
    let long = long_class();
    for (path, text) in FILES.iter().chain([&("src/app.py", long.as_str())]) {
        let full = repo.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    Engine::new(support::test_config(cache)).open(repo).unwrap()
}

fn options() -> SearchOptions {
    SearchOptions {
        dense: DenseUse::Off,
        ..SearchOptions::default()
    }
}

/// `path:start-end` of the hits.
fn hits(index: &SnapshotIndex, query: &str, options: &SearchOptions) -> Vec<String> {
    index
        .search(query, options)
        .unwrap()
        .hits
        .iter()
        .map(|h| format!("{}:{}-{}", h.path, h.start, h.end))
        .collect()
}

#[test]
fn ranked_search_behaviours() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let index = open(repo.path(), cache.path());
    let check = |query: &str, expected_first: &[&str]| {
        let got = hits(&index, query, &options());
        // An expectation without a span names the file only.
        let matches = |hit: &String, expected: &&str| {
            hit == expected || (!expected.contains(':') && hit.split(':').next() == Some(expected))
        };
        assert!(
            got.len() >= expected_first.len()
                && got.iter().zip(expected_first).all(|(h, e)| matches(h, e)),
            "{query:?}: {got:?}"
        );
        // One span per file.
        let mut paths: Vec<&str> = got.iter().map(|h| h.split(':').next().unwrap()).collect();
        let total = paths.len();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), total, "{query:?}: a file twice in {got:?}");
    };
    // A symbol query answers with the definition's span, in the file named after it.
    check("HttpClient", &["src/http_client.py:4-8"]);
    // One letter, and it exists: its definition.
    check("Q", &["src/http_client.py:11-12"]);
    // A description finds the definition it describes; the test and the doc come later.
    check("retry backoff delay", &["src/retry.py"]);
    check("Backoff", &["src/retry.py:4-8"]);
    // A definition longer than a hit may span: its head, the class line and docstring.
    check("Application", &["src/app.py:1-3"]);
    // Inflected words still find the file (`middlewares` ↔ `middleware.py`).
    check("how are middlewares ordered", &["src/middleware.py:4-6"]);
    // Asking for tests puts the test first.
    check("tests of retry backoff delay", &["tests/test_retry.py:4-6"]);
    // Nothing but a plain-text mention: still an answer.
    check("zeta_marker", &["src/notes.txt:1-1"]);

    let retry = hits(&index, "retry backoff delay", &options());
    let position = |path: &str| retry.iter().position(|h| h.starts_with(path));
    assert!(
        position("src/retry.py") < position("tests/test_retry.py"),
        "{retry:?}"
    );
    assert!(
        position("src/retry.py") < position("docs/retry.md"),
        "{retry:?}"
    );
    assert!(
        position("src/retry.py") < position("contrib/kernel/retry.py"),
        "{retry:?}"
    );

    // More spans per file when asked.
    let many = hits(
        &index,
        "retry backoff delay jitter",
        &SearchOptions {
            per_file: 3,
            ..options()
        },
    );
    let in_retry = many
        .iter()
        .filter(|h| h.starts_with("src/retry.py"))
        .count();
    assert!(in_retry >= 2, "{many:?}");

    let results = index
        .search("how are middlewares ordered", &options())
        .unwrap();
    assert_eq!(results.kind, QueryKind::Architecture);
    assert!(!results.dense);
    assert!(index.search("", &options()).unwrap().hits.is_empty());
}

#[test]
fn grep_fallback_finds_names_the_index_does_not() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let index = open(repo.path(), cache.path());
    // `ordered_middlewares` is a definition; `sorted` only a call inside one: both come back.
    let results = index.search("sorted", &options()).unwrap();
    assert_eq!(
        results.hits.first().map(|h| h.path.as_str()),
        Some("src/middleware.py")
    );
}
