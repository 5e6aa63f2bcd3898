//! `swex gt` end to end through the binary, on the synthetic fixtures of `bench/tests`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/tests/fixtures/gt")
}

fn path(p: PathBuf) -> String {
    p.to_str().unwrap().to_string()
}

fn swex(args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn build_then_measure_own_core() {
    let dir = tempfile::tempdir().unwrap();
    let rows = path(dir.path().join("rows.jsonl"));
    let runs = path(fixtures().join("runs"));
    let repos = path(fixtures().join("repos"));
    let (code, _, err) = swex(&args(&[
        "gt",
        "build",
        "--trajectories",
        &runs,
        "--repos",
        &repos,
        "--output",
        &rows,
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 1 rows"), "{err}");
    let text = std::fs::read_to_string(&rows).unwrap();
    assert_eq!(text.lines().count(), 1);
    let row: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(row["instance_id"], "demo__demo-1");

    // A ground truth built from these trajectories is fully covered by their reads.
    let (code, out, err) = swex(&args(&[
        "gt",
        "coverage",
        "--trajectories",
        &runs,
        "--bench",
        &rows,
        "--repos",
        &repos,
        "--json",
    ]));
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["fraction"], 1.0);
    assert_eq!(report["instances"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_inputs_exit_one_and_name_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let rows = path(dir.path().join("rows.jsonl"));
    let (code, _, err) = swex(&args(&[
        "gt",
        "build",
        "--trajectories",
        &path(fixtures().join("runs")),
        &path(fixtures().join("bad")),
        "--repos",
        &path(fixtures().join("repos")),
        "--output",
        &rows,
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("truncated.traj.json: line 1 column 107: invalid JSON"),
        "{err}"
    );
    assert!(
        err.contains("unknown.json: unknown trajectory format"),
        "{err}"
    );
    assert!(
        err.contains("no row for demo__demo-9: no repository snapshot"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&rows).unwrap().lines().count(), 1);
}

#[test]
fn reads_shows_steps() {
    let (code, out, err) = swex(&args(&[
        "gt",
        "reads",
        &path(fixtures().join("runs/mini2/demo__demo-1.traj.json")),
        "--repo",
        &path(fixtures().join("repos/demo__demo-1")),
        "--reads",
        "shown",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read     pkg/util.py:3-3"), "{out}");
    assert!(
        out.contains("discard  pkg/util.py:1-2,4-20 (filtered out by `grep (one file)`)"),
        "{out}"
    );
}
