//! End-to-end tests of `swex score`: the real parity data through the binary, error messages that
//! name file, line and field, lenient counts, and the reporting of missing, failed and unmatched
//! rows.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn swex(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("swex runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const BENCH: &str = r#"{"instance_id": "org__p-1", "repo_dir": "repos/org__p-1", "ground_truth": {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 10}], "main_files": ["a.py"]}}
{"instance_id": "org__p-2", "ground_truth": {"read_core_files": ["b.py"], "read_core_regions": [{"path": "b.py", "start": 5, "end": -1}]}}
{"instance_id": "org__p-3", "ground_truth": {"read_core_files": ["c.py"], "read_core_regions": [{"path": "c.py", "start": 1, "end": 4}]}}
{"instance_id": "org__p-4", "ground_truth": {"read_core_regions": []}}
"#;

const RESULTS: &str = r#"{"instance_id": "org__p-1", "explorer": "alpha", "regions": [{"path": "a.py", "start": 1, "end": 5}, {"path": "z.py", "start": 1, "end": 5}]}
{"instance_id": "org__p-2", "explorer": "alpha", "regions": [{"path": "b.py", "start": 1, "end": -1}]}
{"instance_id": "org__p-1", "explorer": "beta", "regions": [{"path": "a.py", "start": 1, "end": 10}]}
{"instance_id": "org__p-2", "explorer": "beta", "error": "timed out"}
{"instance_id": "org__p-3", "explorer": "beta", "regions": []}
{"instance_id": "org__p-4", "explorer": "beta", "regions": []}
{"instance_id": "org__zz-9", "explorer": "beta", "regions": []}
"#;

#[test]
fn the_parity_data_scores_to_the_reference_values() {
    let Some(data) =
        swex_testkit::shared_data(&["dev.jsonl", "dev.cosil-top5.jsonl", "dev.line-counts.json"])
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rows.jsonl");
    let run = swex(
        tmp.path(),
        &[
            "score",
            "--bench",
            data.join("dev.jsonl").to_str().unwrap(),
            "--predictions",
            data.join("dev.cosil-top5.jsonl").to_str().unwrap(),
            "--line-counts",
            data.join("dev.line-counts.json").to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("cosil@5"), "{}", run.stdout);
    let ours = jsonl(&out);
    let reference = jsonl(&data.join("dev.cosil-top5.jsonl"));
    assert_eq!(ours.len(), 66);
    for (o, r) in ours.iter().zip(&reference) {
        assert_eq!(o["instance_id"], r["instance_id"]);
        assert_eq!(o["regions"], r["regions"]);
        assert_eq!(o["num_regions"], r["num_regions"]);
        assert_eq!(o["top_k"], 5);
        let (om, rm) = (
            o["metrics"].as_object().unwrap(),
            r["metrics"].as_object().unwrap(),
        );
        assert_eq!(om.len(), 17);
        for (name, want) in rm {
            let got = om[name].as_f64().unwrap();
            assert!(
                (got - want.as_f64().unwrap()).abs() <= 1e-9,
                "{}: {name}",
                o["instance_id"]
            );
        }
    }
}

#[test]
fn missing_failed_and_unmatched_rows_are_reported_and_scored_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    write(dir, "results.jsonl", RESULTS);
    write(dir, "counts.json", r#"{"org__p-2": {"b.py": 20}}"#);
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--line-counts",
            "counts.json",
            "--top-k",
            "1,5",
            "-o",
            "out/{explorer}-top{k}.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let err = &run.stderr;
    assert!(
        err.contains("left out 1 rows without core regions"),
        "{err}"
    );
    assert!(err.contains("3 instances to score"), "{err}");
    assert!(
        err.contains(
            "alpha: no result row for 1 of 3 instances, scored as empty predictions (0): org__p-3"
        ),
        "{err}"
    );
    assert!(
        err.contains("beta: failed on 1 instances, scored as empty predictions (0): org__p-2"),
        "{err}"
    );
    assert!(
        err.contains("ignored 1 result rows for instances not in bench.jsonl (e.g. org__zz-9)"),
        "{err}"
    );
    assert!(
        err.contains("ignored 1 result rows for instances the filters left out (e.g. org__p-4)"),
        "{err}"
    );
    assert!(err.contains("has no line counts for 2 instances"), "{err}");

    // One file per (explorer, k); every bench instance has a row, unscored ones say why.
    let alpha = jsonl(&dir.join("out/alpha-top1.jsonl"));
    assert_eq!(alpha.len(), 3);
    assert_eq!(alpha[0]["regions"].as_array().unwrap().len(), 1);
    assert_eq!(alpha[0]["metrics"]["precision"], 1.0);
    // end = -1 resolved with the line count: lines 1..20 against core 5..20.
    assert_eq!(alpha[1]["metrics"]["precision"], 0.8);
    assert_eq!(alpha[2]["status"], "missing");
    assert_eq!(alpha[2]["metrics"]["recall"], 0.0);
    let beta = jsonl(&dir.join("out/beta-top5.jsonl"));
    assert_eq!(beta[1]["status"], "failed");
    assert_eq!(beta[1]["error"], "timed out");
    assert!(beta[0].get("status").is_none());

    // The table: means over all 3 instances, e.g. alpha@1 precision = (1 + 0.8 + 0) / 3 and
    // alpha@5 = (0.5 + 0.8 + 0) / 3; beta has one failure and one empty list.
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("precision"))
        .unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells,
        ["precision", "0.6000", "0.4333", "0.3333", "0.3333"],
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("alpha@1"));
}

#[test]
fn skip_unscored_leaves_failed_and_missing_out_of_the_means() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    write(dir, "results.jsonl", RESULTS);
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--skip-unscored",
            "-o",
            "rows.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("left out of the means (--skip-unscored)"),
        "{}",
        run.stderr
    );
    let averaged = run
        .stdout
        .lines()
        .find(|l| l.starts_with("averaged over"))
        .unwrap();
    assert_eq!(
        averaged.split_whitespace().collect::<Vec<_>>(),
        ["averaged", "over", "2", "2"]
    );
    assert_eq!(jsonl(&dir.join("rows.jsonl")).len(), 4);
}

#[test]
fn bad_input_names_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let check = |bench: &str, results: &str, expected: &str| {
        write(dir, "bench.jsonl", bench);
        write(dir, "results.jsonl", results);
        let run = swex(
            dir,
            &[
                "score",
                "--bench",
                "bench.jsonl",
                "--predictions",
                "results.jsonl",
            ],
        );
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains(expected),
            "expected {expected:?} in:\n{}",
            run.stderr
        );
    };
    let good = BENCH.lines().next().unwrap();
    check(
        &format!("{good}\n{{oops\n"),
        RESULTS,
        "bench.jsonl:2: malformed JSON",
    );
    check(
        &format!(
            "{good}\n{}\n",
            good.replace("\"end\": 10", "\"end\": \"ten\"")
        ),
        RESULTS,
        "bench.jsonl:2: field `ground_truth.read_core_regions[0].end`: invalid type: string \"ten\"",
    );
    check(
        &format!("{good}\n{good}\n"),
        RESULTS,
        "bench.jsonl:2: field `instance_id`: duplicate id `org__p-1` (first on line 1)",
    );
    check(
        BENCH,
        "{\"instance_id\": \"org__p-1\", \"explorer\": \"a\", \"regions\": [{\"path\": \"a.py\", \"start\": 1, \"end\": -9}]}\n",
        "results.jsonl:1: field `regions[0].end`: -9 is not a line number",
    );
    check(
        BENCH,
        "{\"instance_id\": \"org__p-1\", \"regions\": []}\n",
        "results.jsonl:1: field `explorer`: missing",
    );
}

#[test]
fn lenient_skips_bad_rows_and_counts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = BENCH.lines().next().unwrap();
    write(
        dir,
        "bench.jsonl",
        &format!("{good}\nnot json\n{good}\n{}\n", r#"{"instance_id": "x"}"#),
    );
    write(
        dir,
        "results.jsonl",
        &format!(
            "{}\n{}\n",
            RESULTS.lines().next().unwrap(),
            r#"{"instance_id": "org__p-1", "explorer": "alpha", "regions": [["a.py", 1.5, 3]]}"#
        ),
    );
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--lenient",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let err = &run.stderr;
    assert!(err.contains("bench.jsonl: skipped 3 bad rows (--lenient): 1 malformed JSON, 1 missing field, 1 duplicate id"), "{err}");
    assert!(
        err.contains("  bench.jsonl:4: field `ground_truth`: missing"),
        "{err}"
    );
    assert!(
        err.contains("results.jsonl: skipped 1 bad rows (--lenient): 1 bad line number"),
        "{err}"
    );
    assert!(err.contains("1 instances to score"), "{err}");
}

#[test]
fn repos_line_counts_match_a_line_counts_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    write(dir, "results.jsonl", RESULTS);
    // org__p-2's b.py: 20 lines by Python's splitlines (\r, \r\n, U+2028 and a final unterminated line).
    let mut text = String::new();
    for i in 0..19 {
        text.push_str(&format!(
            "line {i}{}",
            ["\n", "\r", "\r\n", "\u{2028}"][i % 4]
        ));
    }
    text.push_str("last");
    write(dir, "repos/org__p-2/b.py", &text);
    write(dir, "repos/org__p-1/a.py", "x\n");
    write(
        dir,
        "counts.json",
        r#"{"org__p-2": {"b.py": 20}, "org__p-1": {"a.py": 1}}"#,
    );
    let run_with = |source: &[&str], out: &str| {
        let mut args = vec![
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "-o",
            out,
        ];
        args.extend_from_slice(source);
        let run = swex(dir, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    };
    let from_repos = run_with(&["--repos", "repos"], "repos.jsonl");
    assert!(
        from_repos
            .stderr
            .contains("counted lines of 2 ground-truth files in 2 snapshots"),
        "{}",
        from_repos.stderr
    );
    assert!(
        from_repos
            .stderr
            .contains("no snapshot folder for 1 instances (e.g. org__p-3)"),
        "{}",
        from_repos.stderr
    );
    let from_file = run_with(&["--line-counts", "counts.json"], "file.jsonl");
    // The reference counting is the same either way; with the snapshots, the rows that have one
    // are also counted with every predicted file's real length (z.py does not exist: no lines;
    // a.py has 1 line, so a.py:1-5 holds one).
    let mut repo_rows = jsonl(&dir.join("repos.jsonl"));
    let alpha_1 = &repo_rows[0];
    assert_eq!(alpha_1["instance_id"], "org__p-1");
    assert_eq!(alpha_1["lines_returned"], 1);
    assert_eq!(alpha_1["real_metrics"]["precision"], 1.0);
    for row in &mut repo_rows {
        let has_snapshot = row["instance_id"] != "org__p-3";
        let object = row.as_object_mut().unwrap();
        assert_eq!(
            object.remove("real_metrics").is_some(),
            has_snapshot,
            "{object:?}"
        );
        assert_eq!(object.remove("lines_returned").is_some(), has_snapshot);
    }
    assert_eq!(repo_rows, jsonl(&dir.join("file.jsonl")));
    // The table shows real-length means only when every averaged instance has its snapshot.
    assert!(
        !from_repos.stdout.contains("(real lengths)"),
        "{}",
        from_repos.stdout
    );
    assert!(!from_file.stdout.contains("(real lengths)"));
    write(dir, "repos/org__p-3/c.py", "1\n2\n");
    let complete = run_with(&["--repos", "repos"], "repos.jsonl");
    assert!(
        complete.stdout.contains("precision (reference)")
            && complete.stdout.contains("precision (real lengths)")
            && complete.stdout.contains("lines returned, median"),
        "{}",
        complete.stdout
    );
}

#[test]
fn options_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    write(dir, "results.jsonl", RESULTS);
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--top-k",
            "0",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("top-k values must be at least 1"),
        "{}",
        run.stderr
    );
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--line-counts",
            "x",
            "--repos",
            "y",
        ],
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "nope.jsonl",
            "--predictions",
            "results.jsonl",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read nope.jsonl"),
        "{}",
        run.stderr
    );
}

#[test]
fn dataset_filter_and_paper_ndcg() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bench = r#"{"instance_id": "v", "dataset": "verified", "ground_truth": {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 400}]}}
{"instance_id": "p", "dataset": "pro", "ground_truth": {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 400}]}}
"#;
    // Equal gain per line: the code's stable ideal keeps this order (nDCG 1), the paper's greedy
    // ideal puts the 200-line region first (nDCG@100 = 10/200).
    let results = r#"{"instance_id": "v", "explorer": "e", "regions": [{"path": "a.py", "start": 300, "end": 309}, {"path": "a.py", "start": 1, "end": 200}]}
"#;
    write(dir, "bench.jsonl", bench);
    write(dir, "results.jsonl", results);
    let ndcg100 = |extra: &[&str]| {
        let mut args = vec![
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--dataset",
            "verified",
        ];
        args.extend_from_slice(extra);
        let run = swex(dir, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("left out 1 rows of other datasets (e.g. p)"),
            "{}",
            run.stderr
        );
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with("ndcg_at_100"))
            .unwrap()
            .to_string();
        line.split_whitespace().nth(1).unwrap().to_string()
    };
    assert_eq!(ndcg100(&[]), "1.0000");
    assert_eq!(ndcg100(&["--ndcg", "paper"]), "0.0500");
}

#[test]
fn line_numbers_near_i64_max_never_wrap_into_negative_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "bench.jsonl",
        r#"{"instance_id": "x__y-1", "ground_truth": {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 10}]}}
"#,
    );
    // Line totals near i64::MAX must not wrap (that gives precision -5.0, f1 2.5, context
    // efficiency -5.0).
    write(
        dir,
        "p.jsonl",
        r#"{"instance_id": "x__y-1", "explorer": "e", "regions": [{"path": "a.py", "start": 1, "end": 9223372036854775807}, {"path": "b.py", "start": 1, "end": 9223372036854775807}]}
"#,
    );
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "p.jsonl",
            "-o",
            "out.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let metrics = &jsonl(&dir.join("out.jsonl"))[0]["metrics"];
    let exact = 10.0 / (2.0 * 9223372036854775807.0);
    assert_eq!(metrics["precision"].as_f64().unwrap(), exact, "{metrics}");
    assert_eq!(metrics["context_efficiency"].as_f64().unwrap(), exact);
    assert_eq!(metrics["recall"].as_f64().unwrap(), 1.0);
    let f1 = metrics["f1_score"].as_f64().unwrap();
    assert!(f1 > 0.0 && f1 < 1e-17, "{f1}");
}

/// What editors and hostile files do to JSONL, each handled so that the user can act: a BOM
/// (which editors add) is accepted, invalid UTF-8 is named with its line, junk under --lenient is
/// counted by reason with ten rows named (not one message per line), and a run that scored
/// nothing fails rather than exiting 0.
#[test]
fn encodings_junk_and_nothing_to_score_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let score = |extra: &[&str]| {
        let mut args = vec![
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
        ];
        args.extend_from_slice(extra);
        swex(dir, &args)
    };
    let good = BENCH.lines().next().unwrap();
    let result = RESULTS.lines().next().unwrap();

    // A byte-order mark is accepted, in both files.
    write(dir, "bench.jsonl", &format!("\u{feff}{good}\n"));
    write(dir, "results.jsonl", &format!("\u{feff}{result}\n"));
    let run = score(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("alpha"), "{}", run.stdout);

    // Invalid UTF-8 names the line (strict), or is one skipped row (lenient).
    let mut bytes = format!("{good}\n").into_bytes();
    bytes.extend_from_slice(b"{\"instance_id\": \"caf\xe9\"}\n");
    std::fs::write(dir.join("bench.jsonl"), &bytes).unwrap();
    let run = score(&[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("bench.jsonl:2: not valid UTF-8 (byte 0xe9 at column 21"),
        "{}",
        run.stderr
    );
    let run = score(&["--lenient"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("skipped 1 bad rows (--lenient): 1 invalid UTF-8"),
        "{}",
        run.stderr
    );

    // A file of junk: counted by reason, ten named, the rest summed up.
    let junk: String = (0..5000).map(|i| format!("junk {i}\n")).collect();
    write(dir, "bench.jsonl", &format!("{good}\n{junk}"));
    let run = score(&["--lenient"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("bench.jsonl: skipped 5000 bad rows (--lenient): 5000 malformed JSON"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("… and 4990 more bad rows"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.lines().count() < 30, "{}", run.stderr);

    // Scoring nothing is an error.
    write(dir, "bench.jsonl", &format!("{good}\n"));
    write(
        dir,
        "results.jsonl",
        "{\"instance_id\": \"other__x-1\", \"explorer\": \"e\", \"regions\": []}\n",
    );
    let run = score(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "nothing to score: none of the 1 result rows is for one of the 1 instances of bench.jsonl"
        ),
        "{}",
        run.stderr
    );
}

/// Input files are read with a size cap (docs/score.md, "Inputs"): a row longer than 64 MiB —
/// `/dev/zero`, an endless pipe — is an error naming file and line, a whole-document input over
/// 256 MiB one naming the file, rather than memory growing until the system kills swex.
#[cfg(unix)]
#[test]
fn endless_and_oversized_inputs_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    write(dir, "results.jsonl", RESULTS);
    let check = |args: &[&str], expected: &str| {
        let mut all = vec!["score"];
        all.extend_from_slice(args);
        let run = swex(dir, &all);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(expected),
            "{args:?}: expected {expected:?} in:\n{}",
            run.stderr
        );
    };
    let row_limit = "row is larger than 67108864 bytes (64 MiB)";
    check(
        &["--bench", "/dev/zero", "--predictions", "results.jsonl"],
        &format!("/dev/zero:1: {row_limit}"),
    );
    check(
        &["--bench", "bench.jsonl", "--predictions", "/dev/zero"],
        &format!("/dev/zero:1: {row_limit}"),
    );
    check(
        &[
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "--issue-map",
            "/dev/zero",
        ],
        "/dev/zero: larger than 268435456 bytes (256 MiB)",
    );

    // An endless pipe of a row that never ends, after two good rows.
    let mut child = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir)
        .args([
            "score",
            "--bench",
            "/dev/stdin",
            "--predictions",
            "results.jsonl",
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let good: String = BENCH.lines().take(2).map(|l| format!("{l}\n")).collect();
        stdin.write_all(good.as_bytes())?;
        stdin.write_all(b"{\"instance_id\": \"")?;
        let chunk = vec![b'x'; 1 << 16];
        loop {
            // Ends with a broken pipe when swex stops reading.
            stdin.write_all(&chunk)?;
        }
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    });
    let output = child.wait_with_output().unwrap();
    assert!(writer.join().unwrap().is_err());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("/dev/stdin:3: {row_limit}")),
        "{stderr}"
    );
}

/// `-o` with `{explorer}`: the explorer name comes from the result rows, so it must be a plain
/// name (the rule of `swex bench -o` and `swex merge -o`); `../../victim` writes nothing, anywhere.
#[test]
fn output_template_refuses_explorer_names_that_are_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "bench.jsonl", BENCH);
    let good = r#"{"instance_id": "org__p-1", "explorer": "alpha", "regions": []}"#;
    for name in ["../../victim", "/tmp/victim", ".hidden", "a/b"] {
        let row = format!(
            "{good}\n{{\"instance_id\": \"org__p-1\", \"explorer\": {}, \"regions\": []}}\n",
            serde_json::to_string(name).unwrap()
        );
        write(dir, "results.jsonl", &row);
        let run = swex(
            dir,
            &[
                "score",
                "--bench",
                "bench.jsonl",
                "--predictions",
                "results.jsonl",
                "-o",
                "out/scores/{explorer}-top{k}.jsonl",
            ],
        );
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("the row of instance `org__p-1`: explorer: ")
                && run.stderr.contains("cannot be a file or folder name"),
            "{name}: {}",
            run.stderr
        );
        // Nothing written: not the bad name's file, not even the good explorer's.
        assert!(!dir.join("out").exists(), "{name}");
        assert!(!dir.join("victim-top5.jsonl").exists(), "{name}");
    }
    // Without `{explorer}` in the template the name is only data.
    write(
        dir,
        "results.jsonl",
        "{\"instance_id\": \"org__p-1\", \"explorer\": \"../x\", \"regions\": []}\n",
    );
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
            "-o",
            "all-top{k}.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(jsonl(&dir.join("all-top5.jsonl"))[0]["explorer"], "../x");
}

/// Fields swex does not know are kept and written back unchanged at any depth the JSON parser
/// accepts (127 levels of arrays and objects, the row counting as one); a deeper row is refused
/// with that limit named, not called malformed JSON.
#[test]
fn unknown_nested_fields_are_kept_up_to_the_stated_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // `levels` levels in all: the row, `ground_truth`, and `levels - 2` in `deep` (its leaf is an
    // object holding an array).
    let row = |levels: usize| {
        let mut deep = serde_json::json!({"leaf": [1.5, "x", null, 12345678901234567i64]});
        for i in 0..levels - 4 {
            deep = serde_json::json!({ format!("k{i}"): deep });
        }
        serde_json::json!({
            "instance_id": "org__p-1",
            "ground_truth": {
                "read_core_regions": [{"path": "a.py", "start": 1, "end": 10}],
                "deep": deep,
            },
            "annotator": {"notes": [{"by": "a", "ok": true}]},
        })
    };
    let at_limit = row(127);
    let text = serde_json::to_string(&at_limit).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    write(dir, "bench.jsonl", &format!("{text}\n"));
    write(
        dir,
        "results.jsonl",
        "{\"instance_id\": \"org__p-1\", \"explorer\": \"a\", \"regions\": []}\n",
    );
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Read and written back through the library's row type, unchanged.
    let bench = swex_bench::dataset::Benchmark::load(
        &dir.join("bench.jsonl"),
        &swex_bench::dataset::LoadOptions::default(),
    )
    .unwrap();
    let written = serde_json::to_value(&bench.rows[0]).unwrap();
    for field in ["/annotator", "/ground_truth/deep"] {
        assert_eq!(written.pointer(field), at_limit.pointer(field), "{field}");
    }
    // Serialised again it is still within the limit, so it reads back.
    assert!(serde_json::from_str::<serde_json::Value>(&written.to_string()).is_ok());

    let over = serde_json::to_string(&row(128)).unwrap();
    write(dir, "bench.jsonl", &format!("{over}\n"));
    let run = swex(
        dir,
        &[
            "score",
            "--bench",
            "bench.jsonl",
            "--predictions",
            "results.jsonl",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "bench.jsonl:1: nested 128 levels deep; rows and documents may nest arrays and \
             objects at most 127 levels deep"
        ),
        "{}",
        run.stderr
    );
}
