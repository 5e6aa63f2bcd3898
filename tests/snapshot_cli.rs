//! End-to-end tests of `swex snapshot`: a fixture repository made with the `git` CLI, a benchmark
//! file written here, the real binary.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use swex_testkit::git;
use tempfile::TempDir;

fn swex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .output()
        .expect("swex runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A repository with one commit, and a benchmark file naming it twice plus a missing repository.
fn fixture(tmp: &Path) -> (String, String) {
    let src = tmp.join("tool");
    fs::create_dir_all(src.join("pkg")).unwrap();
    git(&src, &["init", "-q"]);
    fs::write(src.join("pkg/core.py"), "def run():\n    pass\n").unwrap();
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-q", "-m", "one"]);
    let commit = git(&src, &["rev-parse", "HEAD"]);
    let rows = [
        format!(
            r#"{{"instance_id": "acme__tool-1", "repo": "acme/tool", "base_commit": "{commit}", "ground_truth": {{}}}}"#
        ),
        format!(
            r#"{{"instance_id": "acme__tool-2", "repo": "acme/tool", "base_commit": "{commit}"}}"#
        ),
        format!(r#"{{"instance_id": "other__x-1", "repo": "other/x", "base_commit": "{commit}"}}"#),
    ];
    let bench = tmp.join("bench.jsonl");
    fs::write(&bench, rows.join("\n") + "\n").unwrap();
    (
        bench.display().to_string(),
        format!("acme/tool={}", src.display()),
    )
}

#[test]
fn snapshots_a_benchmark_file_and_reports_failures_per_instance() {
    let tmp = TempDir::new().unwrap();
    let (bench, git_dir) = fixture(tmp.path());
    let out_dir = tmp.path().join("repos");
    let out = out_dir.display().to_string();
    let report_path = tmp.path().join("report.json");
    let report = report_path.display().to_string();

    let first = swex(&[
        "snapshot",
        "--bench",
        &bench,
        "--git-dir",
        &git_dir,
        "--out",
        &out,
        "--report",
        &report,
    ]);
    assert_eq!(
        first.status.code(),
        Some(1),
        "one instance failed: {}",
        stderr(&first)
    );
    let text = stderr(&first);
    assert!(text.contains("2 made, 0 already there, 1 failed"), "{text}");
    assert!(
        text.contains("other__x-1: FAILED: no git directory for other/x"),
        "{text}"
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("acme__tool-2/pkg/core.py")).unwrap(),
        "def run():\n    pass\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(json["made"], 2);
    assert_eq!(json["failed"], 1);
    assert_eq!(json["files"], 2);
    assert_eq!(json["instances"][2]["status"], "failed");

    let again = swex(&[
        "snapshot",
        "--bench",
        &bench,
        "--git-dir",
        &git_dir,
        "--out",
        &out,
        "--instances",
        "acme__tool-1,acme__tool-2",
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("0 made, 2 already there, 0 failed"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let tmp = TempDir::new().unwrap();
    let (bench, git_dir) = fixture(tmp.path());
    let out = tmp.path().join("repos").display().to_string();

    let check = |args: &[&str], expected: &str| {
        let run = swex(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(
            stderr(&run).contains(expected),
            "{args:?}: {}",
            stderr(&run)
        );
    };
    let broken = tmp.path().join("broken.jsonl");
    fs::write(&broken, "{\"instance_id\": \"a\", \"repo\": \"o/n\", \"base_commit\": \"c\"}\n{\"instance_id\": \"b\", \"repo\": \"o/n\"}\n").unwrap();
    let broken = broken.display().to_string();
    check(
        &[
            "snapshot",
            "--bench",
            &broken,
            "--git-dir",
            &git_dir,
            "--out",
            &out,
        ],
        "broken.jsonl:2: missing or empty field `base_commit`",
    );
    check(
        &["snapshot", "--bench", &bench, "--out", &out],
        "say where the repositories are",
    );
    check(
        &[
            "snapshot",
            "--bench",
            &bench,
            "--git-dir",
            &git_dir,
            "--out",
            &out,
            "--instances",
            "nope",
        ],
        "--instances: not in",
    );
    check(
        &[
            "snapshot",
            "--bench",
            &bench,
            "--git-dir",
            "acme/tool",
            "--out",
            &out,
        ],
        "expected OWNER/NAME=GITDIR",
    );
}

/// Every path under `root` except those under `skip`, with file contents: what a run must not
/// change outside its output folder.
fn tree_outside(root: &Path, skip: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.starts_with(skip) {
                continue;
            }
            let shown = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                pending.push(path);
                found.push((shown + "/", Vec::new()));
            } else {
                found.push((shown, fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn hostile_instance_ids_never_reach_outside_out() {
    let tmp = TempDir::new().unwrap();
    let (_, git_dir) = fixture(tmp.path());
    let commit = git(&tmp.path().join("tool"), &["rev-parse", "HEAD"]);
    let out_dir = tmp.path().join("work/out");
    // What `../../x` and an absolute id would replace: `--force` deletes an unmarked folder.
    let climbing = tmp.path().join("x");
    let absolute = tmp.path().join("abs-victim");
    for victim in [&climbing, &absolute] {
        fs::create_dir_all(victim).unwrap();
        fs::write(victim.join("keep.txt"), "mine\n").unwrap();
    }
    let before = tree_outside(tmp.path(), &out_dir);
    for id in [
        "../../x".to_string(),
        absolute.display().to_string(),
        "..".to_string(),
        ".swex".to_string(),
        "a/b".to_string(),
    ] {
        let bench = tmp.path().join("hostile.jsonl");
        let row =
            serde_json::json!({"instance_id": id, "repo": "acme/tool", "base_commit": commit});
        fs::write(&bench, format!("{row}\n")).unwrap();
        let run = swex(&[
            "snapshot",
            "--bench",
            &bench.display().to_string(),
            "--git-dir",
            &git_dir,
            "--out",
            &out_dir.display().to_string(),
            "--force",
        ]);
        let text = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{id}: {text}");
        assert!(
            text.contains("hostile.jsonl:1: field `instance_id`")
                && text.contains("cannot be a file or folder name"),
            "{id}: {text}"
        );
        fs::remove_file(&bench).unwrap();
        assert_eq!(tree_outside(tmp.path(), &out_dir), before, "{id}");
    }
}
