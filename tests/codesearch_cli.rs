//! End-to-end tests of `swex bench --task codesearch` and `swex report` on its rows: a small git
//! repository and benchmark folder written here, the real binary, the `command` explorer scripted
//! with `sh` (known answers, hence known scores) and the engine-backed `bm25`.

use std::path::Path;
use std::process::{Command, Output};
use swex_bench::codesearch::read_rows;
use swex_testkit::git;

fn swex(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("swex runs")
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository `org/shop` with its sources under `src/` (the benchmark root) and a README
/// outside it; a benchmark folder `data/` with three queries and published scores.
fn fixture(root: &Path) -> String {
    let source = root.join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    git(&source, &["init", "-q"]);
    std::fs::write(
        source.join("src/retry.py"),
        "def backoff_delay(attempt):\n    \"\"\"Exponential retry backoff.\"\"\"\n    return 2 ** attempt\n",
    )
    .unwrap();
    std::fs::write(
        source.join("src/client.py"),
        "class HttpClient:\n    def send(self, request):\n        return request\n",
    )
    .unwrap();
    std::fs::write(source.join("README.md"), "retry backoff HttpClient\n").unwrap();
    git(&source, &["add", "."]);
    git(&source, &["commit", "-q", "-m", "one"]);
    let commit = git(&source, &["rev-parse", "HEAD"]);
    let data = root.join("data");
    std::fs::create_dir_all(data.join("annotations")).unwrap();
    std::fs::write(
        data.join("repos.json"),
        serde_json::json!([{"name": "shop", "language": "python", "source": "org/shop",
                            "revision": commit, "benchmark_root": "src"}])
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        data.join("annotations/shop.json"),
        serde_json::json!([
            {"query": "where is the retry backoff computed", "relevant": ["src/retry.py"],
             "secondary": [], "category": "semantic"},
            {"query": "HttpClient", "relevant": [{"path": "src/client.py", "start_line": 1, "end_line": 3}],
             "secondary": [], "category": "symbol"},
            {"query": "how are requests sent", "relevant": ["src/client.py"],
             "secondary": ["src/retry.py"], "category": "architecture"}
        ])
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        data.join("published.json"),
        serde_json::json!({"methods": {"tool": {"file": "tool.json", "label": "Tool",
            "scoring": "chunk", "per_repo": {"shop": {"ndcg10": 0.5,
            "by_category": {"semantic": 0.25, "symbol": 1.0, "architecture": 0.25}}}}}})
        .to_string(),
    )
    .unwrap();
    source.display().to_string()
}

/// The arguments of a code-search run over the fixture's benchmark, checkouts made from `source`.
fn codesearch_run(source: &str) -> Vec<String> {
    [
        "bench",
        "--task",
        "codesearch",
        "--bench",
        "data",
        "--git-dir",
        &format!("org/shop={source}"),
        "--repos",
        "checkouts",
        "--cache-dir",
        "cache",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[test]
fn codesearch_runs_scores_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let source = fixture(root);
    // The command explorer answers every query with retry.py then client.py (paths relative to
    // the search scope, src/).
    let config = serde_json::json!({
        "command": "printf 'RELEVANT_FILES:\\nretry.py:1-3\\nclient.py:2-3\\n'",
    })
    .to_string();
    let mut args = codesearch_run(&source);
    args.extend(["-e", "command,bm25", "--explorer-config"].map(str::to_owned));
    args.push(format!("command={config}"));
    let out = swex(root, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&out);
    assert!(root.join("checkouts/shop/src/retry.py").is_file());
    let rows = read_rows(&root.join("results/codesearch/command.jsonl")).unwrap();
    assert_eq!(rows.len(), 3);
    let ndcg: Vec<f64> = rows.iter().map(|r| r.ndcg10).collect();
    let l2 = 1.0 / 3f64.log2();
    // Semantic: retry.py at rank 1. Symbol: client.py:2-3 overlaps the span 1-3, at rank 2.
    // Architecture: both targets, at ranks 2 and 1.
    assert!((ndcg[0] - 1.0).abs() < 1e-12, "{ndcg:?}");
    assert!((ndcg[1] - l2).abs() < 1e-12, "{ndcg:?}");
    assert!((ndcg[2] - 1.0).abs() < 1e-12, "{ndcg:?}");
    assert_eq!(rows[0].results[0].path, "src/retry.py");
    assert_eq!(rows[2].ranks, vec![Some(2), Some(1)]);
    // The engine-backed explorer searched src/ only: the README never comes back.
    let bm25 = read_rows(&root.join("results/codesearch/bm25.jsonl")).unwrap();
    assert!(bm25.iter().all(|r| r.error.is_none()), "{bm25:?}");
    assert!(
        bm25.iter()
            .flat_map(|r| &r.results)
            .all(|h| h.path.starts_with("src/")),
        "{bm25:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| Tool (published) | 1 | 0.500 |"),
        "{stdout}"
    );
    let mean = (1.0 + l2 + 1.0) / 3.0;
    assert!(
        stdout.contains(&format!("| **command** | 1 | **{mean:.3}** |")),
        "{stdout}"
    );

    // A second run refuses to overwrite without --overwrite.
    let again = swex(
        root,
        &[
            "bench",
            "--task",
            "codesearch",
            "--bench",
            "data",
            "--repos",
            "checkouts",
            "--cache-dir",
            "cache",
            "-e",
            "bm25",
        ],
    );
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("pass --overwrite"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    // The report reads the rows back, with the published methods from the data folder.
    let report = swex(
        root,
        &[
            "report",
            "results/codesearch/command.jsonl",
            "results/codesearch/bm25.jsonl",
            "--bench",
            "data",
            "--out",
            "report",
        ],
    );
    assert_ok(&report);
    let markdown = std::fs::read_to_string(root.join("report/codesearch.md")).unwrap();
    assert_eq!(markdown, String::from_utf8_lossy(&report.stdout));
    assert!(markdown.contains("| shop (python, 3) |"), "{markdown}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("report/codesearch.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["explorers"][0]["explorer"], "command");
    assert_eq!(json["published"][0]["scores"]["by_category"]["symbol"], 1.0);
}

#[test]
fn codesearch_rejects_what_it_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root);
    let check = |args: &[&str], expected: &str| {
        let out = swex(root, args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    };
    let base = [
        "bench",
        "--task",
        "codesearch",
        "-e",
        "bm25",
        "--repos",
        "checkouts",
    ];
    check(
        &[&base[..], &["--bench", "data", "-k", "5"]].concat(),
        "top 10",
    );
    check(
        &[&base[..], &["--bench", "data/repos.json"]].concat(),
        "give the folder holding repos.json",
    );
    check(
        &[&base[..], &["--bench", "data", "--instances", "nope"]].concat(),
        "not in",
    );
    // No checkout and no git directory: every row fails, and says why.
    let out = swex(
        root,
        &[
            &base[..],
            &[
                "--bench",
                "data",
                "--cache-dir",
                "cache",
                "-o",
                "out/{explorer}.jsonl",
            ],
        ]
        .concat(),
    );
    assert!(!out.status.success(), "no --repos folder");
    std::fs::create_dir_all(root.join("checkouts")).unwrap();
    let out = swex(
        root,
        &[
            &base[..],
            &[
                "--bench",
                "data",
                "--cache-dir",
                "cache",
                "-o",
                "out/{explorer}.jsonl",
            ],
        ]
        .concat(),
    );
    assert_ok(&out);
    let rows = read_rows(&root.join("out/bm25.jsonl")).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter().all(|r| r.ndcg10 == 0.0
            && r.error
                .as_deref()
                .is_some_and(|e| e.contains("no checkout"))),
        "{rows:?}"
    );
}

/// `--dense-scores` decides what the explorers' `dense: "auto"` means: on a machine without the
/// embedding model (an empty `SWEX_CACHE_DIR`), `on` makes every `search` query fail and say
/// which asset is missing, while `off` and `auto` answer lexically, with the same scores.
#[test]
fn dense_scores_decide_what_auto_means() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let source = fixture(root);
    let no_models = root.join("no-models");
    std::fs::create_dir_all(&no_models).unwrap();
    let run = |when: &str| -> Vec<swex_bench::codesearch::CodeSearchRow> {
        let output = format!("out-{when}/{{explorer}}.jsonl");
        let out = Command::new(env!("CARGO_BIN_EXE_swex"))
            .current_dir(root)
            .env("SWEX_CACHE_DIR", &no_models)
            .args(codesearch_run(&source))
            .args(["-e", "search", "--dense-scores", when, "-o", &output])
            .output()
            .expect("swex runs");
        if when != "on" {
            assert_ok(&out);
        }
        read_rows(&root.join(format!("out-{when}/search.jsonl"))).unwrap()
    };
    let scores = |rows: &[swex_bench::codesearch::CodeSearchRow]| -> Vec<f64> {
        assert!(rows.iter().all(|r| r.error.is_none()), "{rows:?}");
        rows.iter().map(|r| r.ndcg10).collect()
    };
    let (auto, off) = (run("auto"), run("off"));
    assert_eq!(scores(&auto), scores(&off));
    assert!(scores(&off).iter().any(|&s| s > 0.0), "{off:?}");
    let on = run("on");
    assert_eq!(on.len(), 3);
    assert!(
        on.iter().all(|r| r
            .error
            .as_deref()
            .is_some_and(|e| e.contains("swex models fetch"))),
        "{on:?}"
    );
}

/// `swex search --text` gives one span per file (several chunks of one file would crowd other
/// files out of the answer), a definition for a one-letter symbol, and `--raw` still gives the
/// plain BM25 chunks.
#[test]
fn search_text_is_ranked_one_span_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mut retry = String::new();
    for i in 0..6 {
        retry.push_str(&format!(
            "def retry_backoff_{i}(attempt):\n    \"\"\"retry backoff delay {i}\"\"\"\n    return attempt * {i}\n\n\n"
        ));
    }
    std::fs::write(repo.join("retry.py"), retry).unwrap();
    std::fs::write(
        repo.join("client.py"),
        "class Q:\n    \"\"\"retry backoff for the client\"\"\"\n",
    )
    .unwrap();
    let search = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec![
            "search",
            "--repo",
            "repo",
            "--cache-dir",
            "cache",
            "--json",
            "-q",
        ];
        args.extend_from_slice(extra);
        let out = swex(root, &args);
        assert_ok(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let ranked = search(&["--text", "retry backoff delay"]);
    let paths: Vec<&str> = ranked.iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["retry.py", "client.py"], "{ranked:?}");
    let raw = search(&["--text", "retry backoff delay", "--raw"]);
    let in_retry = raw.iter().filter(|r| r["path"] == "retry.py").count();
    assert!(in_retry >= 3, "{raw:?}");
    let q = search(&["--text", "Q"]);
    assert_eq!(
        (q[0]["path"].as_str(), q[0]["start"].as_u64()),
        (Some("client.py"), Some(1))
    );
}
