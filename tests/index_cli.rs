//! `swex index` and `swex search` end to end, through the binary: JSON shapes, human output,
//! errors, and two processes building the same snapshot at once; and `swex cache gc` on the
//! index cache they build: a dry run counts and removes nothing, a run removes the chunks of an
//! edited file's old version and the next open reuses everything, the text report, and a cache
//! folder that does not exist is an error, not an empty cache.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use swex_testkit::write_checkout_file;

const MODELS: &str = "from app.utils import slugify\n\n\nclass Article:\n    def save(self):\n        self.slug = slugify(self.title)\n";
const UTILS: &str = "def slugify(value):\n    return value.lower().replace(' ', '-')\n";
const TESTS: &str =
    "from app.utils import slugify\n\n\ndef test_slugify():\n    assert slugify('A B') == 'a-b'\n";

fn fixture(root: &Path) {
    for (path, text) in [
        ("app/models.py", MODELS.as_bytes()),
        ("app/utils.py", UTILS.as_bytes()),
        ("app/__init__.py", b"".as_slice()),
        ("tests/test_utils.py", TESTS.as_bytes()),
        ("logo.png", b"\x89PNG\0\0"),
    ] {
        let abs = root.join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, text).unwrap();
    }
}

fn swex(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Work that ends within half a second shows no progress: an explore on a small snapshot, cold
/// or warm, writes only its answer (stderr is not a terminal here, where every stage's last
/// count used to be a line of its own).
#[test]
fn quick_work_prints_no_progress() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    for run in ["cold", "warm"] {
        let output = swex(
            &[
                "explore",
                "--repo",
                repo_arg,
                "--json",
                "slugify lowercases titles",
            ],
            cache.path(),
        );
        json(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("reading") && !stderr.contains("analysing"),
            "{run}: {stderr}"
        );
    }
}

/// `bench/python/explore_latency.py`, the one-shot latency benchmark of docs/explorer-swex.md,
/// runs two binaries over a bench file's snapshots (here the same one twice, an A/A run) and
/// reports each one's p50 and their ratio; a row without a snapshot is refused before anything
/// runs.
#[test]
fn the_latency_benchmark_compares_two_binaries() {
    let Some(python) = swex_testkit::available(swex_testkit::Needs::Python, swex_testkit::python())
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    fixture(&repos.join("org__app-1"));
    let bench = tmp.path().join("bench.jsonl");
    let row = serde_json::json!({"instance_id": "org__app-1",
        "problem_statement": "slugify lowercases titles but keeps spaces"});
    fs::write(&bench, format!("{row}\n")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/python/explore_latency.py");
    let binary = env!("CARGO_BIN_EXE_swex");
    let report = tmp.path().join("latency.json");
    let run = |repos: &Path| {
        Command::new(&python)
            .arg(&script)
            .arg("--bench")
            .arg(&bench)
            .arg("--repos")
            .arg(repos)
            .arg("--cache-dir")
            .arg(tmp.path().join("cache"))
            .args(["--runs", "2", binary, binary, "--json"])
            .arg(&report)
            .output()
            .unwrap()
    };
    let output = run(&repos);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("p50") && stdout.contains("ratio"),
        "{stdout}"
    );
    let figures: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(figures["instances"], 1);
    assert_eq!(figures["binaries"].as_array().unwrap().len(), 2);
    assert!(figures["binaries"][1]["p50_ms"].as_f64().unwrap() > 0.0);
    assert!(figures["ratio"].as_f64().unwrap() > 0.0);
    let missing = run(&tmp.path().join("elsewhere"));
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no snapshot for org__app-1"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[test]
fn index_reports_statistics_and_diagnostics() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let report = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    let stats = &report["stats"];
    assert_eq!(stats["files"], 4);
    assert_eq!(stats["files_by_language"]["python"], 4);
    assert_eq!(stats["cache"]["analyses_computed"], 4);
    assert!(stats["pool"]["docs_added"].as_u64().unwrap() > 0);
    assert_eq!(report["diagnostics"][0]["path"], "logo.png");
    assert_eq!(report["diagnostics"][0]["kind"], "binary");
    assert!(report["graph"]["nodes"].as_u64().unwrap() >= 4);
    // A plain folder has no history to rank with, and says why.
    let reason = report["history"]["absent"]["reason"].as_str().unwrap();
    assert!(reason.contains("neither a git work tree"), "{reason}");

    // Second run: everything from the cache; the human output says so.
    let output = swex(&["index", "--repo", repo_arg, "-q"], cache.path());
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("files     4 indexed (python 4)"), "{text}");
    assert!(text.contains("analyses 4 reused, 0 computed"), "{text}");
    assert!(text.contains("logo.png: binary"), "{text}");
    assert!(
        text.contains("history   none (no repository history"),
        "{text}"
    );

    // In a git work tree: the commits of HEAD (the root commit, which adds every file, left out).
    let git = |args: &[&str]| swex_testkit::git(repo.path(), args);
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "Initial import"]);
    fs::write(repo.path().join("app/utils.py"), format!("{UTILS}\n")).unwrap();
    git(&["commit", "-q", "-am", "Fix slug handling"]);
    let head = git(&["rev-parse", "HEAD"]);
    let report = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    let read = &report["history"]["read"];
    assert_eq!(read["commit"], head.as_str());
    assert_eq!(
        (read["commits"].as_u64(), read["files"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(read["from"], "git", "the first index reads the log");
    let text =
        String::from_utf8(swex(&["index", "--repo", repo_arg, "-q"], cache.path()).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "history   1 commit up to {}, 1 file with history, from the cache in ",
            &head[..12]
        )),
        "{text}"
    );
}

#[test]
fn search_symbol_text_and_neighbours_as_json() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let search = |args: &[&str]| {
        let mut all = vec!["search", "--repo", repo_arg, "--json", "-q"];
        all.extend_from_slice(args);
        json(&swex(&all, cache.path()))
    };

    let symbols = search(&["--symbol", "Article.save"]);
    assert_eq!(
        symbols,
        serde_json::json!([{
            "path": "app/models.py", "start": 5, "end": 6, "kind": "method",
            "name": "Article.save", "score": null
        }])
    );

    // Lexical ranking alone, so the answer does not depend on whether the embedding model is
    // installed: the two application files, the test file demoted below them.
    let hits = search(&[
        "--text",
        "slugify lowercases the title",
        "--limit",
        "2",
        "--dense-scores",
        "off",
    ]);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 2);
    for hit in hits {
        for field in ["path", "start", "end", "kind", "name", "score"] {
            assert!(hit.get(field).is_some(), "{field} in {hit}");
        }
    }
    let mut paths: Vec<&str> = hits.iter().map(|h| h["path"].as_str().unwrap()).collect();
    paths.sort();
    assert_eq!(paths, ["app/models.py", "app/utils.py"]);
    let glob = search(&["--text", "slugify", "--glob", "tests/**"]);
    assert!(
        glob.as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] == "tests/test_utils.py")
    );

    let neighbours = search(&["--neighbours", "app/utils.py"]);
    let paths: Vec<&str> = neighbours
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"tests/test_utils.py"), "{neighbours}");
    assert!(paths.contains(&"app/models.py"), "{neighbours}");
}

#[test]
fn errors_name_what_is_wrong() {
    let cache = tempfile::tempdir().unwrap();
    let output = swex(&["index", "--repo", "/no/such/snapshot"], cache.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/no/such/snapshot"), "{stderr}");

    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let output = swex(
        &[
            "search",
            "--repo",
            repo_arg,
            "-q",
            "--neighbours",
            "nope.py",
        ],
        cache.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("nope.py"));
    let output = swex(
        &[
            "search", "--repo", repo_arg, "-q", "--text", "x", "--glob", "[bad",
        ],
        cache.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid glob"));
    // Exactly one query kind.
    let output = swex(&["search", "--repo", repo_arg], cache.path());
    assert!(!output.status.success());
}

#[test]
fn two_processes_building_the_same_snapshot() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_swex"))
            .args([
                "index",
                "--repo",
                repo_arg,
                "--json",
                "-q",
                "--no-graph",
                "--cache-dir",
            ])
            .arg(cache.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    for child in children {
        let output = child.wait_with_output().unwrap();
        let report = json(&output);
        assert_eq!(report["stats"]["files"], 4);
    }
    let after = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q", "--no-graph"],
        cache.path(),
    ));
    assert_eq!(after["stats"]["cache"]["analyses_computed"], 0);
    assert_eq!(after["stats"]["pool"]["docs_added"], 0);
    assert_eq!(after["stats"]["cache"]["invalid_entries"], 0);
    assert!(
        after["stats"]["cache"]["pool_repairs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// One symlink rule for every reader of a checkout: a link out of it is never followed, and each
/// says so — the index, the plain-file backend (`--no-index`) and `swex score --repos`.
#[cfg(unix)]
#[test]
fn symlinks_out_of_the_checkout_are_refused_by_every_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repos/org__p-1");
    fixture(&repo);
    fs::write(
        tmp.path().join("secret.py"),
        "def leaked_password():\n    return 'hunter2'\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret.py"), repo.join("app/secret.py")).unwrap();
    let repo_arg = repo.to_str().unwrap();

    let report = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    let escapes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "symlink_escapes")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(escapes, ["app/secret.py"]);

    let explore = swex(
        &[
            "explore",
            "--no-index",
            "-e",
            "bm25-ref",
            "--repo",
            repo_arg,
            "--json",
            "leaked_password hunter2",
        ],
        cache.path(),
    );
    let answer = json(&explore);
    let stderr = String::from_utf8_lossy(&explore.stderr);
    assert!(
        answer["regions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] != "app/secret.py"),
        "{answer}"
    );
    assert!(
        stderr.contains("app/secret.py: symlink points outside the snapshot"),
        "{stderr}"
    );

    // `swex score --repos`: no line count through the link, so `end = -1` stays unresolvable.
    let bench = tmp.path().join("bench.jsonl");
    let row = serde_json::json!({"instance_id": "org__p-1", "ground_truth": {
        "read_core_files": ["app/secret.py"],
        "read_core_regions": [{"path": "app/secret.py", "start": 1, "end": -1}]}});
    fs::write(&bench, format!("{row}\n")).unwrap();
    let predictions = tmp.path().join("predictions.jsonl");
    let prediction = serde_json::json!({"instance_id": "org__p-1", "explorer": "x",
        "regions": [{"path": "app/secret.py", "start": 1, "end": -1}]});
    fs::write(&predictions, format!("{prediction}\n")).unwrap();
    let scored = tmp.path().join("scored.jsonl");
    let score = Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(["score", "--bench"])
        .arg(&bench)
        .arg("--predictions")
        .arg(&predictions)
        .arg("--repos")
        .arg(tmp.path().join("repos"))
        .arg("-o")
        .arg(&scored)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&score.stderr);
    assert!(
        stderr.contains("app/secret.py (a symlink out of the snapshot, not followed)"),
        "{stderr}"
    );
    let row: serde_json::Value =
        serde_json::from_str(fs::read_to_string(&scored).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(row["metrics"]["recall"], 0.0, "{row}");
}

#[test]
fn top_k_is_bounded_before_anything_is_sized_by_it() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    // Sized by k, 2^32 would abort on a 34 GB allocation (bm25, tfidf, swex) and 2^64 - 1 panic
    // with a capacity overflow: every k is bounded first.
    for k in ["4294967296", "18446744073709551615", "10001"] {
        for explorer in ["swex", "bm25", "tfidf"] {
            let output = swex(
                &[
                    "explore", "-e", explorer, "--repo", repo_arg, "-k", k, "slugify",
                ],
                cache.path(),
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{explorer} -k {k}: {stderr}");
            assert!(stderr.contains("--top-k must be in 1..=10000"), "{stderr}");
        }
    }
    let output = swex(
        &[
            "explore", "-e", "bm25", "--repo", repo_arg, "-k", "10000", "slugify",
        ],
        cache.path(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `swex … | head -1`: the reader goes away before swex writes; `println!` would panic ("failed
/// printing to stdout: Broken pipe", exit 101).
#[test]
fn every_command_exits_quietly_when_stdout_is_closed() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["explorers"],
        &["index", "--repo", repo_arg, "-q"],
        &["search", "--repo", repo_arg, "--text", "slugify", "-q"],
        &["explore", "--repo", repo_arg, "-q", "slugify"],
        &[
            "explore",
            "--no-index",
            "-e",
            "bm25-ref",
            "--repo",
            repo_arg,
            "slugify",
        ],
    ];
    // Warm the cache so that every command reaches its output quickly.
    let _ = swex(&["index", "--repo", repo_arg, "-q"], cache.path());
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_swex"))
            .args(args)
            .env("SWEX_CACHE_DIR", cache.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for args in commands {
        let mut child = spawn(args);
        drop(child.stdout.take()); // the reader is gone before the first write
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");

        // Both closed (`2>&1 | head -1`): diagnostics nobody reads do not stop the work either.
        let mut child = spawn(args);
        drop(child.stdout.take());
        drop(child.stderr.take());
        assert_eq!(
            child.wait().unwrap().code(),
            Some(0),
            "{args:?}, stderr closed too"
        );
    }
}

fn git(dir: &Path, args: &[&str]) {
    swex_testkit::git(dir, args);
}

/// Build outputs are not the code an issue is about, and they are many (1,956 files of `target/`
/// in this project's own checkout after a build): the ignore rules keep them out.
#[test]
fn a_checkout_is_indexed_without_its_ignored_build_outputs() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    fs::write(repo.path().join(".gitignore"), "/target\n*.pyc\n").unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "one"]);
    for (path, text) in [
        (
            "target/debug/build/slugify-1/out/gen.rs",
            "pub fn slugify() {}\n",
        ),
        ("target/debug/.fingerprint/x/lib-slugify", "0123\n"),
        ("app/utils.cpython-311.pyc", "x\n"),
        ("app/new.py", "def fresh():\n    pass\n"),
    ] {
        let abs = repo.path().join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, text).unwrap();
    }
    let repo_arg = repo.path().to_str().unwrap();
    let report = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    // The fixture's four Python files, its logo, .gitignore and the untracked app/new.py.
    assert_eq!(report["stats"]["files"], 6, "{}", report["stats"]);
    assert_eq!(report["stats"]["ignored"]["checkout"], "git_work_tree");
    let output = swex(&["index", "--repo", repo_arg, "-q"], cache.path());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(
            "ignored   1 folder and 1 file (git work tree): .gitignore: *.pyc (1 file); \
             .gitignore: /target (1 folder)"
        ),
        "{text}"
    );
    let search = swex(
        &[
            "search", "--repo", repo_arg, "--symbol", "slugify", "--json", "-q",
        ],
        cache.path(),
    );
    let hits = json(&search);
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .all(|h| !h["path"].as_str().unwrap().starts_with("target/")),
        "{hits}"
    );
}

/// A file named `evil\nforged:1-9.py` must not forge a line of output, nor `ESC [2J` drive the
/// terminal.
#[cfg(unix)]
#[test]
fn file_names_with_control_characters_are_escaped_in_text_output() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let body = "def slugify_twice(value):\n    return slugify(slugify(value))\n";
    fs::write(repo.path().join("evil\nforged:1-9.py"), body).unwrap();
    fs::write(repo.path().join("\u{1b}[2Jclear.py"), body).unwrap();
    let repo_arg = repo.path().to_str().unwrap();
    for args in [
        &[
            "explore",
            "--no-index",
            "-e",
            "bm25-ref",
            "--repo",
            repo_arg,
            "-k",
            "10",
            "slugify_twice",
        ][..],
        &[
            "explore",
            "-e",
            "bm25",
            "--repo",
            repo_arg,
            "-k",
            "10",
            "-q",
            "slugify_twice",
        ],
        &[
            "search",
            "--repo",
            repo_arg,
            "--text",
            "slugify_twice",
            "-q",
        ],
    ] {
        let output = swex(args, cache.path());
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(text.contains("evil\\nforged:1-9.py:"), "{args:?}: {text}");
        assert!(text.contains("\\u{1b}[2Jclear.py:"), "{args:?}: {text}");
        assert!(!text.contains('\u{1b}'), "{args:?}: {text}");
        assert!(
            text.lines().all(|l| !l.starts_with("forged")),
            "{args:?}: a forged line: {text}"
        );
    }
}

/// `swex explore --budget`: the default explorer plans for it (the defining file whole when it
/// fits, pointers elsewhere), `none` lifts it, and a bad value is refused with the reason.
#[test]
fn explore_plans_for_the_line_budget() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let issue = "slugify does not strip dashes\n\n`slugify('a - b')` keeps the dashes.";
    let lines_of = |answer: &serde_json::Value| -> i64 {
        let length = |path: &str| -> i64 {
            fs::read_to_string(repo.path().join(path))
                .unwrap()
                .lines()
                .count() as i64
        };
        answer["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let path = r["path"].as_str().unwrap();
                let (start, end) = (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap());
                let end = if end == -1 { length(path) } else { end };
                end - start + 1
            })
            .sum()
    };
    let explore = |budget: &str| {
        json(&swex(
            &[
                "explore", "--repo", repo_arg, "--json", "--budget", budget, issue,
            ],
            cache.path(),
        ))
    };
    let answer = explore("3");
    assert!(lines_of(&answer) <= 3, "{answer}");
    assert_eq!(answer["regions"][0]["path"], "app/utils.py", "{answer}");
    let unlimited = explore("none");
    assert_eq!(unlimited["regions"][0]["path"], "app/utils.py");
    assert_eq!(unlimited["regions"][0]["end"], -1, "{unlimited}");
    let bad = swex(
        &["explore", "--repo", repo_arg, "--budget", "0", issue],
        cache.path(),
    );
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("positive number of lines"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// Runs `chmod` with `mode` on `paths`.
fn chmod(mode: &str, paths: &[&Path]) {
    let status = Command::new("chmod")
        .arg(mode)
        .args(paths)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A complete cache in a folder this process cannot write (a read-only file system, another
/// user's cache) still serves an open: no lock, no write is needed, so none is fatal. Root writes
/// through permission bits, so as root the reading process runs as `nobody` (`setpriv`); the
/// cache is then another user's, which the kernel refuses exactly as a read-only one
/// (`EACCES` instead of `EROFS`; the engine treats both alike).
#[test]
fn a_complete_cache_that_cannot_be_written_is_still_read() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    // Readable by everyone, writable by nobody but root, before the stamps are taken.
    chmod("a+rX,go-w", &[repo.path(), cache.path()]);
    let repo_arg = repo.path().to_str().unwrap();
    let cold = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    let status = Command::new("chmod")
        .args(["-R", "a+rX,a-w"])
        .arg(cache.path())
        .status()
        .unwrap();
    assert!(status.success());
    let uid = Command::new("id").arg("-u").output().unwrap();
    let as_root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    let reader = |args: &[&str]| -> Option<Output> {
        let mut command = if as_root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            c.arg(env!("CARGO_BIN_EXE_swex"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_swex"))
        };
        let output = command.args(args).output().ok()?;
        Some(output)
    };
    // Whether the other user can run the binary at all (its folders may be private).
    let runs = reader(&["--version"]).is_some_and(|o| o.status.success());
    if !runs {
        eprintln!("skipped: cannot run swex as another user here (setpriv, permissions)");
        let _ = Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(cache.path())
            .status();
        return;
    }
    let cache_arg = cache.path().to_str().unwrap();
    let output = reader(&[
        "index",
        "--repo",
        repo_arg,
        "--json",
        "-q",
        "--cache-dir",
        cache_arg,
    ])
    .unwrap();
    let _ = Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(cache.path())
        .status();
    let warm = json(&output);
    assert_eq!(warm["stats"]["files"], cold["stats"]["files"]);
    // (The files were just written: their stamps are racy, so they are read again, and the
    // manifest that would record them cannot be written; that costs only the fast path.)
    assert_eq!(warm["stats"]["cache"]["analyses_reused"], 4, "{warm:#}");
    assert_eq!(warm["stats"]["pool"]["docs_added"], 0);
}

/// The pool statistics of `swex index --json` on `repo` (building or refreshing its index).
fn pool_stats(repo: &Path, cache: &Path) -> serde_json::Value {
    let repo = repo.to_str().unwrap();
    json(&swex(
        &["index", "--repo", repo, "--json", "-q", "--no-graph"],
        cache,
    ))["stats"]["pool"]
        .clone()
}

#[test]
fn gc_removes_an_edited_files_old_chunks_and_keeps_what_the_checkout_uses() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_checkout_file(
        repo.path(),
        "app/utils.py",
        "def slugify(value):\n    return value.lower()\n",
    );
    write_checkout_file(
        repo.path(),
        "app/views.py",
        "def render(page):\n    return page.title\n",
    );
    pool_stats(repo.path(), cache.path());
    write_checkout_file(
        repo.path(),
        "app/utils.py",
        "def slugify(value, sep='-'):\n    return value.lower().replace(' ', sep)\n",
    );
    let edited = pool_stats(repo.path(), cache.path());
    let stale = edited["docs_total"].as_u64().unwrap() - edited["snapshot_docs"].as_u64().unwrap();
    assert!(stale > 0, "{edited}");

    let dry = json(&swex(&["cache", "gc", "--dry-run", "--json"], cache.path()));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["snapshots_kept"], 1);
    assert_eq!(dry["pools"][0]["docs_deleted"].as_u64(), Some(stale));
    assert_eq!(dry["pools"][0]["analyses_deleted"], 1);
    assert_eq!(
        pool_stats(repo.path(), cache.path())["docs_total"],
        edited["docs_total"]
    );

    let output = swex(&["cache", "gc"], cache.path());
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(&format!("{stale} chunks and 1 analyses deleted"))
            && text.contains("(1 snapshot)")
            && text.contains("snapshots: 1 kept, 0 forgotten"),
        "{text}"
    );
    let after = pool_stats(repo.path(), cache.path());
    assert_eq!(after["docs_added"], 0);
    assert_eq!(after["docs_total"], edited["snapshot_docs"]);
    assert_eq!(after["id"], edited["id"]);

    // Gone, with its folder: the checkout is forgotten and its pool removed.
    drop(repo);
    let kept = json(&swex(&["cache", "gc", "--json"], cache.path()));
    assert_eq!(kept["snapshots_forgotten"].as_array().unwrap().len(), 1);
    assert_eq!(
        kept["pools"][0]["recent"], true,
        "written a moment ago: {kept}"
    );
    let gone = json(&swex(
        &["cache", "gc", "--json", "--grace", "0"],
        cache.path(),
    ));
    assert_eq!(gone["snapshots_kept"], 0);
    assert!(
        gone["snapshots_forgotten"].as_array().unwrap().is_empty(),
        "forgotten before"
    );
    assert_eq!(gone["pools"][0]["removed"], true);
    assert_eq!(gone["bytes_after"], 0);
}

#[test]
fn a_cache_folder_that_does_not_exist_is_an_error() {
    let parent = tempfile::tempdir().unwrap();
    let missing = parent.path().join("no-cache-here");
    let output = swex(&["cache", "gc"], &missing);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no-cache-here") && stderr.contains("no such folder"),
        "{stderr}"
    );
    assert!(!missing.exists(), "gc created the folder");
}
