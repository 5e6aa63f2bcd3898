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
    // The end-of-run line: LocAgent's Acc@k, then at file level Hit@k, each by k.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("oracle top10: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let file_keys: Vec<&str> = line
        .split(' ')
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
        .filter(|k| k.starts_with("file_"))
        .collect();
    assert_eq!(
        file_keys,
        [
            "file_acc@1",
            "file_acc@3",
            "file_acc@5",
            "file_acc@10",
            "file_hit@1",
            "file_hit@3",
            "file_hit@5",
            "file_hit@10"
        ],
        "{line}"
    );
    assert!(line.contains("file_hit@1=1.0000"), "{line}");
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

/// `bench/python/mine_commits.py` turns a repository's history into task rows that import: the
/// one commit that passes its filters (a described modification of a source file, tests beside
/// it) becomes a row whose issue is its message without trailers or web-edit lines, whose tests
/// are in `test_patch`, and whose ground truth after `swex dataset import` is the edited line;
/// a version bump, a commit adding a new file and a commit with a one-line message do not.
#[test]
fn mined_commits_import_with_their_edited_lines_as_ground_truth() {
    let Some(python) = swex_testkit::available(swex_testkit::Needs::Python, swex_testkit::python())
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("shop");
    fs::create_dir_all(src.join("lib/shop")).unwrap();
    fs::create_dir_all(src.join("spec")).unwrap();
    let cart: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    fs::write(src.join("lib/shop/cart.rb"), &cart).unwrap();
    fs::write(src.join("spec/cart_spec.rb"), "it 'adds'\n").unwrap();
    let commit = |message: &str| {
        git(&src, &["add", "-A"]);
        git(&src, &["commit", "-q", "-m", message]);
        git(&src, &["rev-parse", "HEAD"])
    };
    git(&src, &["init", "-q"]);
    let base = commit("base");
    fs::write(
        src.join("lib/shop/cart.rb"),
        cart.replace("line 4\n", "line four\n"),
    )
    .unwrap();
    fs::write(src.join("spec/cart_spec.rb"), "it 'adds'\nit 'totals'\n").unwrap();
    let words = "The cart total is wrong when a coupon and a discount apply to the same item, \
                 because the discount is taken after the coupon instead of before it";
    let fix = commit(&format!(
        "{words}\n\n* Update lib/shop/cart.rb\n\nSigned-off-by: someone <s@example.invalid>"
    ));
    fs::write(
        src.join("lib/shop/cart.rb"),
        cart.replace("line 9\n", "line nine\n"),
    )
    .unwrap();
    commit(&format!("Bump version to 2.0.1 because {words}"));
    fs::write(src.join("lib/shop/new.rb"), "fresh\n").unwrap();
    commit(words);
    fs::write(
        src.join("lib/shop/cart.rb"),
        cart.replace("line 2\n", "line two\n"),
    )
    .unwrap();
    commit("Fix typo");

    let tasks = tmp.path().join("tasks.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/python/mine_commits.py");
    let out = Command::new(&python)
        .arg(&script)
        .args(["--repo", "acme/shop", "--language", "ruby", "-o"])
        .arg(&tasks)
        .arg("--git-dir")
        .arg(src.join(".git"))
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<serde_json::Value> = fs::read_to_string(&tasks)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["instance_id"], format!("acme__shop-c{}", &fix[..10]));
    assert_eq!(row["base_commit"], base.as_str());
    assert_eq!(row["problem_statement"], words);
    let (patch, test_patch) = (
        row["patch"].as_str().unwrap(),
        row["test_patch"].as_str().unwrap(),
    );
    assert!(
        patch.contains("lib/shop/cart.rb") && !patch.contains("spec/"),
        "{patch}"
    );
    assert!(test_patch.contains("spec/cart_spec.rb"), "{test_patch}");

    let bench = tmp.path().join("bench.jsonl");
    let out = swex(&[
        "dataset",
        "import",
        tasks.to_str().unwrap(),
        "-o",
        bench.to_str().unwrap(),
        "--strict",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let imported: serde_json::Value =
        serde_json::from_str(fs::read_to_string(&bench).unwrap().trim()).unwrap();
    assert_eq!(imported["language"], "ruby");
    let truth = &imported["ground_truth"];
    assert_eq!(
        truth["read_core_files"],
        serde_json::json!(["lib/shop/cart.rb"]),
        "{truth}"
    );
    assert_eq!(
        truth["read_core_regions"],
        serde_json::json!([{"path": "lib/shop/cart.rb", "start": 4, "end": 4}]),
        "{truth}"
    );
}
