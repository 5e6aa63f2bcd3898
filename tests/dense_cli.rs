//! The `dense` and `hybrid` explorers and `swex index --dense` end to end, through the binary.
//! Without the model: `dense` fails naming `swex models fetch`, `hybrid` answers lexically with a
//! note. With the model (skipped when absent, a failure under `SWEX_REQUIRE_MODEL=1`): output
//! shape, rerank then full index.

use std::path::Path;
use std::process::{Command, Output};

const URLS: &str = "\
def parse_url(url):
    \"\"\"Split a URL into scheme, host, port and path.\"\"\"
    scheme, rest = url.split('://', 1)
    host, _, path = rest.partition('/')
    return scheme, host, path


def join_url(base, path):
    \"\"\"Join a base URL and a relative path.\"\"\"
    return base.rstrip('/') + '/' + path.lstrip('/')
";
const MATRIX: &str = "\
class Matrix:
    def det(self):
        \"\"\"Determinant of a square matrix by Bareiss elimination.\"\"\"
        return self._eval_det_bareiss()
";
const ISSUE: &str = "parse_url gives the wrong host when the URL has a port";

fn fixture(root: &Path) {
    for (path, text) in [
        ("pkg/urls.py", URLS),
        ("pkg/matrix.py", MATRIX),
        ("docs/index.md", "# pkg\n\nURL helpers and a matrix type.\n"),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Runs swex with `cache` as the only cache root (so models are looked up there, and only
/// there, when `isolated_models` is set).
fn swex(args: &[&str], cache: &Path, isolated_models: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_swex"));
    command.args(args).arg("--cache-dir").arg(cache);
    if isolated_models {
        command
            .env("SWEX_CACHE_DIR", cache)
            .env_remove("ORT_DYLIB_PATH");
    }
    command.output().unwrap()
}

fn stdout_json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn without_the_model_dense_fails_with_the_fix_and_hybrid_answers_lexically() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();

    let output = swex(
        &[
            "explore", "-e", "dense", "--index", "--repo", repo_arg, "-q", ISSUE,
        ],
        cache.path(),
        true,
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("dense search is not available"), "{stderr}");
    assert!(stderr.contains("swex models fetch"), "{stderr}");

    let answer = stdout_json(&swex(
        &[
            "explore", "-e", "hybrid", "--index", "--repo", repo_arg, "-q", "--json", ISSUE,
        ],
        cache.path(),
        true,
    ));
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py", "{answer}");
    let notes = answer["notes"].to_string();
    assert!(notes.contains("lexical ranking only"), "{notes}");
    assert!(notes.contains("swex models fetch"), "{notes}");

    let output = swex(
        &["index", "--dense", "--repo", repo_arg, "-q"],
        cache.path(),
        true,
    );
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("swex models fetch"));
}

fn model_present() -> bool {
    let root = swex_engine::dense::default_cache_root();
    match swex_engine::dense::Embedder::open(&root, &Default::default()) {
        Ok(_) => true,
        Err(e) if e.is_absent() => {
            swex_testkit::available::<(), _>(swex_testkit::Needs::Model, Err(e)).is_some()
        }
        Err(e) => panic!("the model is installed but does not load: {e}"),
    }
}

#[test]
fn dense_and_hybrid_answer_regions_then_use_the_full_index() {
    if !model_present() {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let explore = |explorer: &str| {
        stdout_json(&swex(
            &[
                "explore", "-e", explorer, "--index", "--repo", repo_arg, "-q", "--json", "-k",
                "2", ISSUE,
            ],
            cache.path(),
            false,
        ))
    };

    for explorer in ["dense", "hybrid"] {
        let answer = explore(explorer);
        assert_eq!(answer["explorer"], explorer);
        let regions = answer["regions"].as_array().unwrap();
        assert!(!regions.is_empty() && regions.len() <= 2, "{answer}");
        assert_eq!(regions[0]["path"], "pkg/urls.py", "{answer}");
        assert_eq!(regions[0]["start"], 1, "{answer}");
        for region in regions {
            assert!(repo.path().join(region["path"].as_str().unwrap()).is_file());
            assert!(region["start"].as_i64().unwrap() <= region["end"].as_i64().unwrap());
            assert!(
                region["why"].as_str().unwrap().contains("dense"),
                "{region}"
            );
        }
        assert!(answer["notes"].to_string().contains("reranked"), "{answer}");
    }

    let report = stdout_json(&swex(
        &["index", "--dense", "--repo", repo_arg, "-q", "--json"],
        cache.path(),
        false,
    ));
    let dense = &report["dense"];
    let chunks = dense["chunks"].as_u64().unwrap();
    assert_eq!(
        dense["cached"].as_u64().unwrap() + dense["embedded"].as_u64().unwrap(),
        chunks,
        "{dense}"
    );
    assert_eq!(dense["search"], "exact");
    assert!(
        dense["graph"]
            .as_str()
            .unwrap()
            .contains("below the HNSW threshold"),
        "{dense}"
    );

    let answer = explore("dense");
    assert!(
        answer["notes"]
            .to_string()
            .contains(&format!("full index, {chunks} chunks scored")),
        "{answer}"
    );
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py", "{answer}");
}

/// One-shot commands load the embedding model only when asked: under the default `auto` a
/// `swex search` query, and a one-line `swex explore` request (which the `swex` explorer sends to
/// the same ranked search), are answered lexically even with the model installed; `swex search
/// --dense-scores on` and `swex explore --dense` fuse dense scores, and say so.
#[test]
fn one_shot_commands_load_the_model_only_when_asked() {
    const FUSED: &str = "dense scores fused";
    if !model_present() {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let query = "split a url into parts";
    // `swex search` says on stderr what it fused.
    let search = |extra: &[&str]| {
        let mut args = vec!["search", "--repo", repo_arg, "--text", query];
        args.extend(extra);
        let out = swex(&args, cache.path(), false);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // `swex explore`'s answer says it in a note.
    let explore = |extra: &[&str]| {
        let mut args = vec!["explore", "--repo", repo_arg, "--json", "-q"];
        args.extend(extra);
        args.push(query);
        let answer = stdout_json(&swex(&args, cache.path(), false));
        let notes = answer["notes"].to_string();
        assert!(notes.contains("ranked code search"), "{notes}");
        notes
    };
    assert!(!search(&[]).contains(FUSED));
    assert!(search(&["--dense-scores", "on"]).contains(FUSED));
    assert!(!explore(&[]).contains(FUSED));
    assert!(explore(&["--dense"]).contains(FUSED));
}

/// The `swex` explorer's features note for `issue` under `config` (which emits features): the
/// candidates' rows by path, and the other notes.
fn swex_features(
    repo: &Path,
    cache: &Path,
    isolated_models: bool,
    config: &str,
    issue: &str,
) -> (
    Vec<String>,
    std::collections::HashMap<String, Vec<f64>>,
    String,
) {
    let answer = stdout_json(&swex(
        &[
            "explore",
            "--repo",
            repo.to_str().unwrap(),
            "-q",
            "--json",
            "--config",
            config,
            issue,
        ],
        cache,
        isolated_models,
    ));
    let notes: Vec<&str> = answer["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let note = notes
        .iter()
        .find_map(|n| n.strip_prefix(swex_explorer_swex::learned::FEATURES_NOTE_PREFIX))
        .expect("a features note");
    let note: serde_json::Value = serde_json::from_str(note).unwrap();
    let features = serde_json::from_value(note["features"].clone()).unwrap();
    let rows = note["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let row = serde_json::from_value(c["row"].clone()).unwrap();
            (c["path"].as_str().unwrap().to_owned(), row)
        })
        .collect();
    (features, rows, notes.join("\n"))
}

#[test]
fn the_swex_explorers_dense_features_are_each_files_best_chunk_similarity() {
    let issue = "parse_url gives the wrong host when the URL has a port\n\n\
                 Calling `parse_url('http://example.com:8080/a')` returns `example.com:8080` as \
                 the host instead of `example.com`; the port is lost.";
    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let at = |features: &[String], name: &str| features.iter().position(|f| f == name).unwrap();

    const EMIT: &str = r#"{"emit_features": true}"#;
    // Without the model: the absent values, and a note that says why.
    let cache = tempfile::tempdir().unwrap();
    let (features, rows, notes) = swex_features(repo.path(), cache.path(), true, EMIT, issue);
    assert!(notes.contains("dense features absent"), "{notes}");
    let urls = &rows["pkg/urls.py"];
    let dense = at(&features, "dense");
    assert_eq!(urls[dense..dense + 3], [0.0, 0.0, 10.0], "{features:?}");
    // Asked for with them (`swex train --dense-scores on`), the explorer fails instead.
    let output = swex(
        &[
            "explore",
            "--repo",
            repo.path().to_str().unwrap(),
            "-q",
            "--json",
            "--config",
            r#"{"emit_features": true, "emit_dense": true}"#,
            issue,
        ],
        cache.path(),
        true,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("emit_dense") && stderr.contains("swex models fetch"),
        "{stderr}"
    );

    if !model_present() {
        return;
    }
    // With the model but left out (`swex train --dense-scores off`): the absent values again.
    let cache = tempfile::tempdir().unwrap();
    let without = r#"{"emit_features": true, "emit_dense": false}"#;
    let (_, rows, notes) = swex_features(repo.path(), cache.path(), false, without, issue);
    assert!(notes.contains("left out"), "{notes}");
    assert_eq!(rows["pkg/urls.py"][dense..dense + 3], [0.0, 0.0, 10.0]);
    let (features, rows, notes) = swex_features(repo.path(), cache.path(), false, EMIT, issue);
    assert!(!notes.contains("dense features absent"), "{notes}");
    let urls = &rows["pkg/urls.py"];
    assert!(urls[dense] > 0.2, "{urls:?}");
    assert_eq!(urls[at(&features, "dense_relative")], 1.0);
    assert_eq!(urls[at(&features, "dense_rank_log")], 0.0);
    if let Some(matrix) = rows.get("pkg/matrix.py") {
        assert!(matrix[dense] < urls[dense], "{matrix:?}");
    }
}

#[test]
fn the_dense_model_needs_the_embedding_model_and_says_so() {
    let issue = "parse_url gives the wrong host when the URL has a port\n\n\
                 Calling `parse_url('http://example.com:8080/a')` returns `example.com:8080` as \
                 the host instead of `example.com`.";
    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let args = [
        "explore",
        "--repo",
        repo_arg,
        "-q",
        "--json",
        "--config",
        r#"{"dense": true}"#,
        issue,
    ];
    let cache = tempfile::tempdir().unwrap();
    let output = swex(&args, cache.path(), true);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("dense similarities") && stderr.contains("swex models fetch"),
        "{stderr}"
    );
    if !model_present() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let answer = stdout_json(&swex(&args, cache.path(), false));
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py", "{answer}");
}
