//! End to end: `swex dataset import` of a SWE-bench-style task row (and a bad one), `swex snapshot`
//! of the imported row from a fixture git repository, `swex bench` with the oracle explorer, and
//! the localization metrics in its result row — the definitions of the gold found at scoring time.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use swex_testkit::git;

fn swex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .output()
        .expect("swex runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn import_snapshot_bench_scores_the_fix_at_file_and_function_level() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/tests/data/fix/python");
    let src = tmp.path().join("calc");
    fs::create_dir_all(src.join("pkg")).unwrap();
    fs::copy(fixtures.join("before/pkg/calc.py"), src.join("pkg/calc.py")).unwrap();
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    let commit = git(&src, &["rev-parse", "HEAD"]);
    let patch = fs::read_to_string(fixtures.join("patch.diff")).unwrap();
    let good = serde_json::json!({"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": commit,
        "patch": patch, "problem_statement": "Calc.div divides by zero"});
    let no_issue = serde_json::json!({"instance_id": "acme__calc-2", "repo": "acme/calc", "base_commit": commit,
        "patch": patch, "problem_statement": ""});
    let tasks = tmp.path().join("tasks.jsonl");
    fs::write(&tasks, format!("{good}\n{no_issue}\n")).unwrap();
    let bench = tmp.path().join("bench.jsonl");
    let (tasks, bench_s) = (tasks.to_str().unwrap(), bench.to_str().unwrap());

    // --strict: the bad row makes the exit status 1, the good one is written all the same.
    let out = swex(&["dataset", "import", tasks, "-o", bench_s, "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("tasks.jsonl:2 acme__calc-2: no issue text"),
        "{err}"
    );
    assert!(
        err.contains("wrote 1 rows")
            && err.contains("swe-bench: 1")
            && err.contains("1 not imported"),
        "{err}"
    );

    let repos = tmp.path().join("repos");
    let git_dir = format!("acme/calc={}", src.display());
    let out = swex(&[
        "snapshot",
        "--bench",
        bench_s,
        "--git-dir",
        &git_dir,
        "--out",
        repos.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    let results = tmp.path().join("results/{explorer}/top{k}.jsonl");
    let out = swex(&[
        "bench",
        "--bench",
        bench_s,
        "--repos",
        repos.to_str().unwrap(),
        "-e",
        "oracle",
        "-k",
        "10",
        "--output",
        results.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let row: serde_json::Value = serde_json::from_str(
        fs::read_to_string(tmp.path().join("results/oracle/top10.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let loc = &row["loc_metrics"];
    // The oracle returns the core regions: lines 9 and 13-14 of pkg/calc.py, i.e. the one gold
    // file and the two edited definitions (Calc.div, helper), found from the snapshot and the patch.
    assert_eq!(loc["file_acc@1"], 1.0, "{row}");
    assert_eq!(loc["function_acc@5"], 1.0, "{row}");
    assert_eq!(loc["module_acc@5"], 1.0, "{row}");
}

/// `--trajectories DIR` needs `--release`; with it, a task row without a base commit takes the
/// commit map's, a mini-swe-agent trajectory's id is reported with why it gives none, and the
/// counts are printed.
#[test]
fn import_takes_base_commits_from_a_commit_map_and_says_why_a_trajectory_gives_none() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/tests/data/fix/python");
    let patch = fs::read_to_string(fixtures.join("patch.diff")).unwrap();
    let task = |id: &str| {
        serde_json::json!({"instance_id": id, "repo": "acme/calc", "base_commit": "",
            "patch": patch, "problem_statement": "Calc.div divides by zero"})
    };
    let tasks = tmp.path().join("tasks.jsonl");
    fs::write(
        &tasks,
        format!("{}\n{}\n", task("acme__calc-1"), task("acme__calc-2")),
    )
    .unwrap();
    let release = tmp.path().join("release.jsonl");
    let gt = serde_json::json!({"read_core_files": ["pkg/calc.py"], "read_core_regions": [],
        "read_optional_files_map": {}, "read_optional_regions_map": {},
        "modified_core_files": ["pkg/calc.py"], "main_files": ["pkg/calc.py"]});
    fs::write(
        &release,
        format!(
            "{}\n{}\n",
            serde_json::json!({"instance_id": "acme__calc-1", "ground_truth": gt}),
            serde_json::json!({"instance_id": "acme__calc-2", "ground_truth": gt})
        ),
    )
    .unwrap();
    let trajs = tmp.path().join("trajs");
    fs::create_dir_all(&trajs).unwrap();
    let commit = "e".repeat(40);
    fs::write(
        trajs.join("commit_map.json"),
        serde_json::json!({"acme__calc-1": commit}).to_string(),
    )
    .unwrap();
    fs::write(
        trajs.join("acme__calc-2.traj.json"),
        serde_json::json!({"info": {"config": {}}, "messages": [],
            "trajectory_format": "mini-swe-agent-1", "instance_id": "acme__calc-2"})
        .to_string(),
    )
    .unwrap();
    let bench = tmp.path().join("bench.jsonl");
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (tasks, release, trajs, bench_s) =
        (path(&tasks), path(&release), path(&trajs), path(&bench));

    let out = swex(&[
        "dataset",
        "import",
        &tasks,
        "-o",
        &bench_s,
        "--trajectories",
        &trajs,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--release"), "{}", stderr(&out));

    let out = swex(&[
        "dataset",
        "import",
        &tasks,
        "-o",
        &bench_s,
        "--release",
        &release,
        "--trajectories",
        &trajs,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("acme__calc-2: no base commit (")
            && err.contains("a mini-swe-agent trajectory records no base commit"),
        "{err}"
    );
    assert!(
        err.contains(
            "trajectories: 2 files read, base commits for 1 ids; 1 rows took theirs from them"
        ),
        "{err}"
    );
    let written = fs::read_to_string(&bench).unwrap();
    let rows: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["instance_id"], "acme__calc-1");
    assert_eq!(rows[0]["base_commit"], commit.as_str());
}
