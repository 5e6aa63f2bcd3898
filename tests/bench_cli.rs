//! End-to-end tests of `swex bench` and `swex merge`: synthetic snapshots and benchmark files
//! written here, the real binary, the built-in `command` explorer scripted with `sh`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use swex_bench::results::read_results;
use swex_testkit::git;

/// `n` instances `org__repo-<i>`, snapshots under `repos/` with `a.py` (40 lines) and `b.py`.
fn fixture(dir: &Path, n: usize) -> PathBuf {
    let mut lines = String::new();
    for i in 0..n {
        let id = format!("org__repo-{i}");
        let snapshot = dir.join("repos").join(&id);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::write(snapshot.join("a.py"), "def f():\n    return 1\n".repeat(20)).unwrap();
        std::fs::write(snapshot.join("b.py"), format!("# issue {i}\n").repeat(20)).unwrap();
        let row = serde_json::json!({
            "instance_id": id,
            "repo": "org/repo",
            "problem_statement": format!("f returns the wrong value, issue {i}"),
            "ground_truth": {
                "read_core_files": ["a.py"],
                "read_core_regions": [{"path": "a.py", "start": 10, "end": 19}],
            }
        });
        lines.push_str(&format!("{row}\n"));
    }
    let bench = dir.join("bench.jsonl");
    std::fs::write(&bench, lines).unwrap();
    bench
}

/// A `command` explorer config: `sh` prints a RELEVANT_FILES block after `sleep`.
fn slow_command(sleep: &str) -> String {
    serde_json::json!({
        "command": format!("sleep {sleep}; printf 'RELEVANT_FILES:\\na.py:10-19\\nb.py:1-5\\n'"),
    })
    .to_string()
}

fn bench_args(dir: &Path, out: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "bench",
        "--bench",
        "bench.jsonl",
        "--repos",
        "repos",
        "-e",
        "command,bm25-ref",
        "-k",
        "1,2",
        "--workers",
        "2",
        "--plain",
        "--output",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("{out}/{{explorer}}/top{{k}}.jsonl"));
    args.extend(extra.iter().map(|s| s.to_string()));
    let _ = dir;
    args
}

fn swex(dir: &Path, args: &[String]) -> Output {
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

/// Non-blank lines of a file.
fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

/// Every row of the run's files without timings, per file, strictly read (a torn line or a
/// duplicate fails the read).
fn canonical(out: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    for explorer in ["command", "bm25-ref"] {
        for k in [1, 2] {
            let path = out.join(explorer).join(format!("top{k}.jsonl"));
            let rows = read_results(&path).unwrap_or_else(|e| panic!("{e}"));
            files.push((
                format!("{explorer}/top{k}"),
                rows.into_iter().map(|r| r.row.canonical_line()).collect(),
            ));
        }
    }
    files
}

#[test]
fn killed_runs_resume_to_the_same_files_as_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 16);
    let config = format!("command={}", slow_command("0.15"));

    let full = swex(
        root,
        &bench_args(root, "full", &["--explorer-config", &config]),
    );
    assert_ok(&full);

    // Kill twice with SIGKILL while rows are being written, then let a resume finish.
    let watched = root.join("killed/command/top2.jsonl");
    for (kill_after_rows, resume) in [(3, false), (9, true)] {
        let mut args = bench_args(root, "killed", &["--explorer-config", &config]);
        if resume {
            args.push("--resume".into());
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_swex"))
            .current_dir(root)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while line_count(&watched) < kill_after_rows {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before it could be killed"
            );
            assert!(started.elapsed() < Duration::from_secs(120), "no progress");
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(line_count(&watched) < 16, "killed before the end");
    }
    let resumed = swex(
        root,
        &bench_args(root, "killed", &["--explorer-config", &config, "--resume"]),
    );
    assert_ok(&resumed);
    assert_eq!(
        canonical(&root.join("full")),
        canonical(&root.join("killed"))
    );

    // Nothing is left to do, and rerunning without --resume refuses to touch the files.
    let again = swex(
        root,
        &bench_args(root, "killed", &["--explorer-config", &config, "--resume"]),
    );
    assert_ok(&again);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("0 to run"), "{stderr}");
    let refused = swex(
        root,
        &bench_args(root, "killed", &["--explorer-config", &config]),
    );
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
}

#[test]
fn explorer_failures_are_rows_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 3);
    let config = format!(
        "command={}",
        serde_json::json!({"command": "echo broken >&2; exit 3"})
    );
    let out = swex(
        root,
        &bench_args(root, "out", &["--explorer-config", &config]),
    );
    assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("command failed"), "{stderr}");
    assert!(stderr.contains("3 failed explorer calls"), "{stderr}");
    let command_row = stdout
        .lines()
        .find(|l| l.starts_with("command ") && l.split_whitespace().nth(1) == Some("1"))
        .unwrap();
    let fields: Vec<&str> = command_row.split_whitespace().collect();
    assert_eq!((fields[2], fields[3]), ("3", "3"), "{command_row}");

    let rows = read_results(&root.join("out/command/top1.jsonl")).unwrap();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert!(
            row.row.error.as_deref().unwrap().contains("exit"),
            "{row:?}"
        );
    }
    assert!(
        read_results(&root.join("out/bm25-ref/top1.jsonl"))
            .unwrap()
            .iter()
            .all(|r| r.row.error.is_none())
    );
}

#[test]
fn bad_arguments_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 2);
    let cases: [(&[&str], &str); 7] = [
        (&["-k", "0"], "at least 1"),
        // A k is bounded before anything is sized by it (else: gigabytes, or an abort).
        (&["-k", "1000000000"], "above the largest top-k, 10000"),
        (
            &["-k", "5,18446744073709551615"],
            "above the largest top-k, 10000",
        ),
        (&["--shard", "2/2"], "expected i/N"),
        (&["--instances", "nope"], "nope"),
        (&["--explorer-config", "oracle={}"], "not among --explorers"),
        (&["-e", "no-such-explorer"], "no-such-explorer"),
    ];
    for (extra, expected) in cases {
        let mut args = bench_args(root, "out", &[]);
        if extra[0] == "-k" {
            let at = args.iter().position(|a| a == "1,2").unwrap();
            args[at] = extra[1].to_string();
        } else {
            args.extend(extra.iter().map(|s| s.to_string()));
        }
        let out = swex(root, &args);
        assert!(!out.status.success(), "{extra:?} should fail");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
    }
}

#[test]
fn shards_merge_to_the_full_run_and_conflicts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 7);
    let config = format!("command={}", slow_command("0"));
    assert_ok(&swex(
        root,
        &bench_args(root, "full", &["--explorer-config", &config]),
    ));
    let mut shard_files = Vec::new();
    for index in 0..3 {
        let mut args = bench_args(root, "unused", &["--explorer-config", &config]);
        let at = args.iter().position(|a| a.starts_with("unused/")).unwrap();
        args[at] = "shards/{shard}/{explorer}/top{k}.jsonl".into();
        args.extend(["--shard".to_string(), format!("{index}/3")]);
        assert_ok(&swex(root, &args));
        for explorer in ["command", "bm25-ref"] {
            for k in [1, 2] {
                let file = format!("shards/{index}-of-3/{explorer}/top{k}.jsonl");
                assert!(line_count(&root.join(&file)) >= 2, "{file}");
                shard_files.push(file);
            }
        }
    }
    let merge = |inputs: &[String], extra: &[&str]| {
        let mut args: Vec<String> = vec!["merge".into()];
        args.extend(inputs.iter().cloned());
        args.extend(["--bench", "bench.jsonl"].map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        swex(root, &args)
    };
    assert_ok(&merge(
        &shard_files,
        &["-o", "merged/{explorer}/top{k}.jsonl"],
    ));
    assert_eq!(
        canonical(&root.join("full")),
        canonical(&root.join("merged"))
    );

    // The same row twice is kept once; a different row for the same key is a conflict.
    let copy = root.join("copy.jsonl");
    std::fs::copy(root.join(&shard_files[0]), &copy).unwrap();
    shard_files.push("copy.jsonl".into());
    let out = merge(&shard_files, &["-o", "again/{explorer}/top{k}.jsonl"]);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept once"));

    let text = std::fs::read_to_string(&copy).unwrap();
    std::fs::write(&copy, text.replacen("\"a.py\"", "\"b.py\"", 1)).unwrap();
    let out = merge(&shard_files, &["-o", "conflict/{explorer}/top{k}.jsonl"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("conflicting rows"), "{stderr}");
    assert!(stderr.contains("copy.jsonl:1"), "{stderr}");
    assert!(
        !root.join("conflict").exists(),
        "nothing written on a conflict"
    );
}

/// A git repository `source` with `a.py` (40 lines), a benchmark of one row `instance_id` at its
/// commit, and `swex bench --git-dir` run on it with snapshots made under `work/repos`.
fn bench_from_git(root: &Path, instance_id: &str) -> Output {
    let source = root.join("source");
    std::fs::create_dir_all(&source).unwrap();
    git(&source, &["init", "-q"]);
    std::fs::write(source.join("a.py"), "def f():\n    return 1\n".repeat(20)).unwrap();
    git(&source, &["add", "."]);
    git(&source, &["commit", "-q", "-m", "one"]);
    let commit = git(&source, &["rev-parse", "HEAD"]);
    let row = serde_json::json!({
        "instance_id": instance_id,
        "repo": "org/repo",
        "base_commit": commit,
        "problem_statement": "f returns the wrong value",
        "ground_truth": {
            "read_core_files": ["a.py"],
            "read_core_regions": [{"path": "a.py", "start": 1, "end": 4}],
        }
    });
    std::fs::write(root.join("bench.jsonl"), format!("{row}\n")).unwrap();
    swex(
        root,
        &[
            "bench",
            "--bench",
            "bench.jsonl",
            "--git-dir",
            &format!("org/repo={}", source.display()),
            "--repos",
            "work/repos",
            "-e",
            "bm25-ref",
            "--plain",
        ]
        .map(String::from),
    )
}

#[test]
fn git_dir_materialises_missing_snapshots_on_the_fly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = bench_from_git(root, "org__repo-1");
    assert_ok(&out);
    assert!(root.join("work/repos/org__repo-1/a.py").is_file());
    let rows = read_results(&root.join("results/bm25-ref/top5.jsonl")).unwrap();
    let row = &rows[0].row;
    assert!(row.error.is_none(), "{row:?}");
    assert_eq!(row.regions[0].path, "a.py");
    assert!(row.timings.unwrap().snapshot_ms > 0.0);
}

#[test]
fn isolated_explorers_write_the_same_rows_as_in_process_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 4);
    let config = format!("command={}", slow_command("0"));
    assert_ok(&swex(
        root,
        &bench_args(root, "inproc", &["--explorer-config", &config]),
    ));
    assert_ok(&swex(
        root,
        &bench_args(
            root,
            "isolated",
            &[
                "--explorer-config",
                &config,
                "--isolated",
                "--timeout",
                "60",
            ],
        ),
    ));
    assert_eq!(
        canonical(&root.join("inproc")),
        canonical(&root.join("isolated"))
    );
}

#[test]
fn index_serves_engine_explorers_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 3);
    let run = |out: &str, index: bool| {
        let mut args: Vec<String> = [
            "bench",
            "--bench",
            "bench.jsonl",
            "--repos",
            "repos",
            "-e",
            "bm25",
            "-k",
            "2",
            "--plain",
            "--cache-dir",
            "cache",
            "-o",
        ]
        .map(String::from)
        .to_vec();
        args.push(format!("{out}/{{explorer}}/top{{k}}.jsonl"));
        if index {
            args.push("--index".into());
        }
        let output = swex(root, &args);
        assert_ok(&output);
        read_results(&root.join(out).join("bm25/top2.jsonl")).unwrap()
    };
    // Without the engine's index the explorer cannot search: a failure row that says why.
    for row in run("plain", false) {
        let error = row.row.error.unwrap_or_default();
        assert!(error.contains("lexical_search"), "{error}");
    }
    let cold = run("cold", true);
    let warm = run("warm", true);
    for (a, b) in cold.iter().zip(&warm) {
        assert!(a.row.error.is_none(), "{:?}", a.row);
        assert!(!a.row.regions.is_empty());
        assert_eq!(
            a.row.canonical_line(),
            b.row.canonical_line(),
            "the cache changes nothing"
        );
    }
    assert!(root.join("cache").is_dir());
}

#[test]
fn issue_map_texts_win_and_a_missing_issue_is_a_failure_row() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 3);
    // Instance 2 loses its problem statement; the map gives instance 0 another text.
    let bench = std::fs::read_to_string(root.join("bench.jsonl")).unwrap();
    let bench = bench.replace("f returns the wrong value, issue 2", "");
    std::fs::write(root.join("bench.jsonl"), bench).unwrap();
    std::fs::write(
        root.join("issues.json"),
        serde_json::json!({"org__repo-0": "b.py:3-4"}).to_string(),
    )
    .unwrap();
    // The explorer answers the issue text itself as its RELEVANT_FILES block.
    let config = format!(
        "command={}",
        serde_json::json!({"command": ["sh", "-c", "printf 'RELEVANT_FILES:\\n%s\\n' \"$1\"", "sh", "{issue}"]})
    );
    let mut args = bench_args(root, "out", &["--explorer-config", &config]);
    args.extend(["--issue-map", "issues.json"].map(String::from));
    let at = args.iter().position(|a| a == "command,bm25-ref").unwrap();
    args[at] = "command".into();
    assert_ok(&swex(root, &args));
    let rows = read_results(&root.join("out/command/top2.jsonl")).unwrap();
    assert_eq!(rows[0].row.regions[0].path, "b.py");
    assert_eq!(
        (rows[0].row.regions[0].start, rows[0].row.regions[0].end),
        (3, 4)
    );
    assert!(rows[1].row.error.is_none(), "{:?}", rows[1].row);
    let error = rows[2].row.error.as_deref().unwrap();
    assert!(error.contains("no issue text"), "{error}");
}

#[test]
fn hostile_names_in_rows_never_reach_outside_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `work/repos/../../x` is `x`: the on-the-fly snapshot must not be made there.
    std::fs::create_dir_all(root.join("x")).unwrap();
    std::fs::write(root.join("x/keep.txt"), "mine\n").unwrap();
    let out = bench_from_git(root, "../../x");
    assert_ok(&out);
    let rows = read_results(&root.join("results/bm25-ref/top5.jsonl")).unwrap();
    let error = rows[0].row.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("instance id \"../../x\" cannot be a file or folder name"),
        "{error}"
    );
    let entries = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(entries(&root.join("x")), ["keep.txt"]);
    assert!(!root.join(".swex").exists() && !root.join("a.py").exists());

    // A result row's explorer fills `{explorer}` in `swex merge -o`: `a/b/../../evil` is `evil`.
    let text = std::fs::read_to_string(root.join("results/bm25-ref/top5.jsonl")).unwrap();
    std::fs::write(
        root.join("hostile.jsonl"),
        text.replace("\"bm25-ref\"", "\"../../evil\""),
    )
    .unwrap();
    let out = swex(
        root,
        &[
            "merge",
            "hostile.jsonl",
            "-o",
            "a/b/{explorer}/top{k}.jsonl",
        ]
        .map(String::from),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("explorer: \"../../evil\" cannot be a file or folder name"),
        "{stderr}"
    );
    assert!(!root.join("evil").exists() && !root.join("a").exists());
}

#[test]
fn resume_with_another_config_or_k_refuses_to_mix_rows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 3);
    let first = format!("command={}", slow_command("0"));
    assert_ok(&swex(
        root,
        &bench_args(root, "out", &["--explorer-config", &first, "-n", "2"]),
    ));
    let before = std::fs::read_to_string(root.join("out/command/top1.jsonl")).unwrap();
    let row: serde_json::Value = serde_json::from_str(before.lines().next().unwrap()).unwrap();
    assert!(
        row["produced_by"]["build"]
            .as_str()
            .is_some_and(|b| b.starts_with("built-in, swex ")),
        "{row}"
    );

    let other = format!("command={}", slow_command("0.01"));
    let refused = swex(
        root,
        &bench_args(root, "out", &["--explorer-config", &other, "--resume"]),
    );
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("2 rows of explorer `command` were made by another run (explorer config"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("out/command/top1.jsonl")).unwrap(),
        before
    );

    // Another largest k: the k = 1 rows would be cuts of answers to a different request.
    let mut args = bench_args(root, "out", &["--explorer-config", &first, "--resume"]);
    let at = args.iter().position(|a| a == "1,2").unwrap();
    args[at] = "1".into();
    let refused = swex(root, &args);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("this run asks for k = 1"), "{stderr}");

    // The same run resumes; a different one, asked to, writes elsewhere with {run}.
    assert_ok(&swex(
        root,
        &bench_args(root, "out", &["--explorer-config", &first, "--resume"]),
    ));
    let mut args = bench_args(root, "out", &["--explorer-config", &other, "--resume"]);
    let at = args.iter().position(|a| a.starts_with("out/")).unwrap();
    args[at] = "out/{explorer}/{run}/top{k}.jsonl".into();
    assert_ok(&swex(root, &args));
    let runs: Vec<_> = std::fs::read_dir(root.join("out/command"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(line_count(&runs[0].join("top1.jsonl")), 3);
}

#[test]
fn merge_refuses_a_missing_shard_and_reports_strangers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 7);
    let config = format!("command={}", slow_command("0"));
    let shard_run = |index: usize, folder: &str, config: &str| {
        let mut args = bench_args(root, "unused", &["--explorer-config", config]);
        let at = args.iter().position(|a| a.starts_with("unused/")).unwrap();
        args[at] = format!("{folder}/{{shard}}/{{explorer}}/top{{k}}.jsonl");
        args.extend(["--shard".to_string(), format!("{index}/3")]);
        assert_ok(&swex(root, &args));
    };
    for index in 0..3 {
        shard_run(index, "shards", &config);
    }
    let file = |folder: &str, i: usize| format!("{folder}/{i}-of-3/command/top1.jsonl");
    let merge = |inputs: Vec<String>, extra: &[&str]| {
        let mut args: Vec<String> = vec!["merge".into()];
        args.extend(inputs);
        args.extend(
            [
                "--bench",
                "bench.jsonl",
                "-o",
                "merged/{explorer}/top{k}.jsonl",
            ]
            .map(String::from),
        );
        args.extend(extra.iter().map(|s| s.to_string()));
        swex(root, &args)
    };
    let refused = merge(vec![file("shards", 0), file("shards", 2)], &[]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("command top1: shard 1 of 3 missing"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-missing-shards"), "{stderr}");
    assert!(!root.join("merged").exists(), "nothing written");

    let allowed = merge(
        vec![file("shards", 0), file("shards", 2)],
        &["--allow-missing-shards"],
    );
    assert_ok(&allowed);
    let stderr = String::from_utf8_lossy(&allowed.stderr);
    assert!(
        stderr.contains("command top1: 2 of 7 benchmark instances have no row"),
        "{stderr}"
    );
    assert_eq!(line_count(&root.join("merged/command/top1.jsonl")), 5);

    // A row of an instance the benchmark does not have is reported.
    let text = std::fs::read_to_string(root.join(file("shards", 1))).unwrap();
    let first = text.lines().next().unwrap();
    let row: serde_json::Value = serde_json::from_str(first).unwrap();
    let id = row["instance_id"].as_str().unwrap();
    std::fs::write(
        root.join("stranger.jsonl"),
        format!("{}\n", first.replace(id, "other__x-1")),
    )
    .unwrap();
    let all = || (0..3).map(|i| file("shards", i)).collect::<Vec<_>>();
    let mut inputs = all();
    inputs.push("stranger.jsonl".into());
    let out = merge(inputs, &["--overwrite"]);
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rows of 1 instances not in bench.jsonl (e.g. other__x-1)"),
        "{stderr}"
    );

    // A shard made with another config is another run: it does not go into the same file.
    shard_run(1, "other", &format!("command={}", slow_command("0.01")));
    let mixed = vec![file("shards", 0), file("other", 1), file("shards", 2)];
    let out = merge(mixed.clone(), &["--overwrite"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rows of explorer `command` were made by different runs (explorer config"),
        "{stderr}"
    );
}

/// `--budget N`: every request carries it, the host holds answers to it (the command explorer
/// knows nothing of budgets), and rows record it next to the lines they hold, counted with real
/// lengths, and their real-length metrics.
#[test]
fn a_line_budget_holds_every_answer_and_rows_count_real_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root, 2);
    let config = format!("command={}", slow_command("0"));
    let mut args = bench_args(
        root,
        "out",
        &["--explorer-config", &config, "--budget", "12"],
    );
    let e = args.iter().position(|a| a == "command,bm25-ref").unwrap();
    args[e] = "command".into();
    assert_ok(&swex(root, &args));
    let rows = read_results(&root.join("out/command/top2.jsonl")).unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows.iter().map(|r| &r.row) {
        assert_eq!(row.line_budget, Some(12));
        // a.py:10-19 (10 lines), then b.py:1-5 cut to the 2 lines left.
        let spans: Vec<(&str, i64, i64)> = row
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(spans, [("a.py", 10, 19), ("b.py", 1, 2)]);
        assert_eq!(row.dropped.trimmed_to_budget, 1);
        assert_eq!(row.lines_returned, Some(12));
        let real = row.real_metrics.expect("real lengths with the snapshot");
        assert!((real.precision - 10.0 / 12.0).abs() < 1e-12, "{real:?}");
        assert_eq!(row.produced_by.as_ref().unwrap().line_budget, Some(12));
    }
    // The budget is part of what produced the rows: a resume without it refuses.
    let mut resume = bench_args(root, "out", &["--explorer-config", &config, "--resume"]);
    resume[e] = "command".into();
    let out = swex(root, &resume);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line budget"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 0 is not a budget.
    let mut zero = bench_args(root, "zero", &["--budget", "0"]);
    zero[e] = "command".into();
    assert!(!swex(root, &zero).status.success());
}
