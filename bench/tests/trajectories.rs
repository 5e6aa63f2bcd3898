//! `swex dataset import --release … --trajectories DIR`: base commits from trajectories and commit
//! maps, on hand-made files in the formats they are published in.

use swex_bench::fix::FixTruth;
use swex_bench::import::{ImportOptions, import};

/// `--trajectories DIR` with hand-made files in the formats it reads: the reference's commit map,
/// an OpenHands output row (`instance.base_commit`), a SWE-agent trajectory (`replay_config`
/// JSON text), and a mini-swe-agent trajectory as the Gemini runs of `../shared/data` are (no
/// base commit anywhere but abbreviated hashes in tool output).
#[test]
fn trajectories_give_base_commits_to_release_rows_that_lack_them() {
    use serde_json::json;
    let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
    let patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
    let tmp = tempfile::tempdir().unwrap();
    let task = |id: &str| {
        json!({"instance_id": id, "repo": "acme/calc", "base_commit": "", "patch": patch,
            "problem_statement": "f returns 1"})
        .to_string()
    };
    let tasks = tmp.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        format!("{}\n{}\n", task("acme__calc-1"), task("acme__calc-2")),
    )
    .unwrap();
    let gt = json!({"read_core_files": ["calc.py"], "read_core_regions": [{"path": "calc.py", "start": 1, "end": 2}],
        "read_optional_files_map": {}, "read_optional_regions_map": {},
        "modified_core_files": ["calc.py"], "main_files": ["calc.py"]});
    let release_row = |id: &str, issue: Option<&str>| {
        let mut row = json!({"instance_id": id, "ground_truth": gt, "dataset": "verified"});
        if let Some(issue) = issue {
            row["problem_statement"] = json!(issue);
        }
        row.to_string() + "\n"
    };
    let release = tmp.path().join("release.jsonl");
    std::fs::write(
        &release,
        [
            release_row("acme__calc-1", None),
            release_row("acme__calc-2", None),
            release_row("acme__lib-3", Some("lib breaks")),
            release_row("acme__lib-4", None),
            release_row("acme__lib-5", Some("lib breaks")),
            release_row("acme__lib-6", Some("lib breaks")),
        ]
        .concat(),
    )
    .unwrap();
    let dir = tmp.path().join("trajs");
    std::fs::create_dir_all(dir.join("mini")).unwrap();
    let write = |name: &str, value: serde_json::Value| {
        std::fs::write(
            dir.join(name),
            serde_json::to_string_pretty(&value).unwrap(),
        )
        .unwrap();
    };
    write(
        "commit_map.json",
        json!({"acme__calc-1": a, "acme__lib-6": a}),
    );
    write(
        "mini/acme__calc-2.traj.json",
        json!({"info": {"exit_status": "Submitted", "submission": "",
                "config": {"environment": {"image": "docker.io/swebench/sweb.eval.x86_64.acme_1776_calc-2:latest", "cwd": "/testbed"}}},
            "messages": [{"role": "user", "content": "<returncode>0</returncode>\n<output>\nHEAD is now at 1a2b3c4d5e Merge\n</output>"}],
            "trajectory_format": "mini-swe-agent-1", "instance_id": "acme__calc-2"}),
    );
    std::fs::write(
        dir.join("output.jsonl"),
        json!({"instance_id": "acme__lib-3", "instance": {"instance_id": "acme__lib-3", "repo": "acme/lib", "base_commit": b},
            "history": [], "test_result": {"git_patch": ""}})
        .to_string()
            + "\n",
    )
    .unwrap();
    write(
        "acme__lib-4.traj",
        json!({"trajectory": [], "history": [], "info": {},
            "replay_config": json!({"env": {"repo": {"github_url": "https://github.com/acme/lib", "base_commit": c}}}).to_string()}),
    );
    write(
        "lib-6.json",
        json!({"info": {"instance_id": "acme__lib-6", "repo": "acme/lib", "base_commit": b}, "traj": []}),
    );
    write("resolved.json", json!({"acme__calc-2": true}));

    let imported = import(
        &[tasks],
        &ImportOptions {
            release: Some(release),
            trajectories: Some(dir.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(imported.trajectory_files, 6);
    // calc-1 from the map, lib-3 from the OpenHands row, lib-4 from SWE-agent; lib-6 in dispute.
    assert_eq!(imported.trajectory_commits, 3);
    assert_eq!(imported.commits_from_trajectories, 2);
    let rows: Vec<(&str, &str, &str)> = imported
        .rows
        .iter()
        .map(|r| {
            (
                r.instance_id.as_str(),
                r.repo.as_deref().unwrap(),
                r.base_commit.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("acme__calc-1", "acme/calc", a.as_str()),
            ("acme__lib-3", "acme/lib", b.as_str())
        ]
    );
    assert!(FixTruth::of(&imported.rows[0].ground_truth).is_some());
    assert!(FixTruth::of(&imported.rows[1].ground_truth).is_none());
    let prefix = format!("{}/", tmp.path().display());
    let problems: Vec<String> = imported
        .problems
        .iter()
        .map(|p| {
            format!(
                "{} {}: {}",
                p.at.replace(&prefix, ""),
                p.instance_id.as_deref().unwrap_or("-"),
                p.reason.replace(&prefix, "")
            )
        })
        .collect();
    let mini = "trajs/mini/acme__calc-2.traj.json: a mini-swe-agent trajectory records no base commit (its config names a container image, its messages only abbreviated hashes)";
    assert_eq!(
        problems,
        [
            format!("trajs/lib-6.json acme__lib-6: trajectory: base commit {b} here, {a} in trajs/commit_map.json: neither is used"),
            "trajs/resolved.json -: trajectory: neither a trajectory (a field of messages, traj, trajectory, history, info, instance) nor a commit map (every value a full commit hash): fields seen acme__calc-2".to_string(),
            format!("tasks.jsonl:2 acme__calc-2: no base commit ({mini})"),
            format!("release.jsonl:2 acme__calc-2: its task row was not imported: no base commit ({mini})"),
            "release.jsonl:4 acme__lib-4: no task row with id acme__lib-4 or instance_acme__lib-4; its base commit is in trajs/acme__lib-4.traj, but no repository is".to_string(),
            "release.jsonl:5 acme__lib-5: no task row with id acme__lib-5 or instance_acme__lib-5, and no trajectory names it".to_string(),
            "release.jsonl:6 acme__lib-6: no task row with id acme__lib-6 or instance_acme__lib-6, and its trajectory gives no base commit: the trajectories disagree on its base commit (reported above)".to_string(),
        ]
    );
}
