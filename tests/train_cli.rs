//! End-to-end tests of `swex train`: synthetic snapshots where the issue names the file to fix,
//! the real binary, the dataset it writes and (with LightGBM: `scripts/ranker-env`) the model it
//! fits, loaded back by the `swex` explorer.

use std::path::Path;
use std::process::{Command, Output};
use swex_testkit::{Needs, available, ranker_python};

/// Three repositories of `per_repo` instances each. Every snapshot holds a few modules; the issue
/// of instance `i` names a function that only `pkg/mod_<i % 4>.py` defines, which the ground
/// truth says the fix edits.
fn fixture(dir: &Path, per_repo: usize) {
    let mut lines = String::new();
    for repo in ["alpha", "beta", "gamma"] {
        for i in 0..per_repo {
            let id = format!("org__{repo}-{i}");
            let snapshot = dir.join("repos").join(&id);
            std::fs::create_dir_all(snapshot.join("pkg")).unwrap();
            std::fs::create_dir_all(snapshot.join("tests")).unwrap();
            for m in 0..4 {
                let body = format!(
                    "def compute_{repo}_{m}(values):\n    total = 0\n    for v in values:\n        total += v\n    return total\n\n\ndef helper_{m}():\n    return {m}\n"
                );
                std::fs::write(snapshot.join(format!("pkg/mod_{m}.py")), body).unwrap();
                std::fs::write(
                    snapshot.join(format!("tests/test_mod_{m}.py")),
                    format!("from pkg.mod_{m} import compute_{repo}_{m}\n\ndef test_it():\n    assert compute_{repo}_{m}([1]) == 1\n"),
                )
                .unwrap();
            }
            let gold = format!("pkg/mod_{}.py", i % 4);
            let row = serde_json::json!({
                "instance_id": id,
                "repo": format!("org/{repo}"),
                "language": "python",
                "problem_statement": format!("compute_{repo}_{} returns the wrong total\n\nCalling `compute_{repo}_{}([1, 2])` gives 0.", i % 4, i % 4),
                "ground_truth": {
                    "read_core_files": [gold, format!("tests/test_mod_{}.py", i % 4)],
                    "read_core_regions": [{"path": gold, "start": 1, "end": 5}],
                }
            });
            lines.push_str(&format!("{row}\n"));
        }
    }
    std::fs::write(dir.join("bench.jsonl"), lines).unwrap();
}

fn swex(dir: &Path, args: &[&str], python: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_swex"));
    command.current_dir(dir).args(args);
    if let Some(python) = python {
        command.env("SWEX_RANKER_PYTHON", python);
    }
    command.output().expect("swex runs")
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `swex train` on the fixture with `extra` arguments, writing the model to `output`: the model.
fn fit(dir: &Path, python: &Path, output: &str, extra: &[&str]) -> serde_json::Value {
    fit_saying(dir, python, "bench.jsonl", output, extra).0
}

/// `swex train` on the bench file `bench` of `dir` with `extra` arguments, writing the model to
/// `output`: the model and what the trainer said on stderr.
fn fit_saying(
    dir: &Path,
    python: &Path,
    bench: &str,
    output: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    let mut args = TRAIN.to_vec();
    let at = args.iter().position(|a| *a == "--bench").unwrap() + 1;
    args[at] = bench;
    args.extend(["-o", output]);
    args.extend(extra);
    let out = swex(dir, &args, Some(python));
    assert_ok(&out);
    let model = std::fs::read_to_string(dir.join(output)).unwrap();
    (
        serde_json::from_str(&model).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const TRAIN: &[&str] = &[
    "train",
    "--bench",
    "bench.jsonl",
    "--repos",
    "repos",
    "--work",
    "work",
    "--cache-dir",
    "cache",
    "-w",
    "2",
    "-q",
];

#[test]
fn the_dataset_holds_each_rows_candidates_labelled_by_its_ground_truth() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 2);
    let mut args = TRAIN.to_vec();
    args.push("--dataset-only");
    let out = swex(dir.path(), &args, None);
    assert_ok(&out);
    let text = std::fs::read_to_string(dir.path().join("work/dataset.jsonl")).unwrap();
    let examples: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(examples.len(), 6);
    for example in &examples {
        let id = example["id"].as_str().unwrap();
        let i: usize = id.rsplit('-').next().unwrap().parse().unwrap();
        // Tests are not gold: the ranker orders source files.
        assert_eq!(
            example["gold"],
            serde_json::json!([format!("pkg/mod_{}.py", i % 4)]),
            "{id}"
        );
        assert_eq!(example["language"], "python");
        let features = example["features"].as_array().unwrap();
        let candidates = example["candidates"].as_array().unwrap();
        assert!(candidates.iter().all(|c| {
            c["row"].as_array().unwrap().len() == features.len()
                && !c["path"].as_str().unwrap().starts_with("tests/")
        }));
        assert!(
            candidates.iter().any(|c| example["gold"][0] == c["path"]),
            "{id}: the named module is a candidate"
        );
    }
    // A second run resumes: the answers are not asked again, the dataset is the same.
    let out = swex(dir.path(), &args, None);
    assert_ok(&out);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("work/dataset.jsonl")).unwrap(),
        text
    );
}

#[test]
fn dense_scores_off_leaves_the_dense_columns_absent_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 1);
    let mut args = TRAIN.to_vec();
    args.extend(["--dataset-only", "--dense-scores", "off"]);
    assert_ok(&swex(dir.path(), &args, None));
    // Each answer says why its dense columns are absent, whether the model is installed or not.
    let answers = std::fs::read_to_string(dir.path().join("work/run/swex/top10.jsonl")).unwrap();
    assert_eq!(answers.lines().count(), 3);
    assert!(
        answers
            .lines()
            .all(|row| row.contains(r#"dense features absent: left out"#)),
        "{answers}"
    );
    let text = std::fs::read_to_string(dir.path().join("work/dataset.jsonl")).unwrap();
    for line in text.lines() {
        let example: serde_json::Value = serde_json::from_str(line).unwrap();
        let features = example["features"].as_array().unwrap();
        let dense = features.iter().position(|f| f == "dense").unwrap();
        for candidate in example["candidates"].as_array().unwrap() {
            // The absent values: no similarity, no relative share, the rank past the last.
            assert_eq!(
                candidate["row"].as_array().unwrap()[dense..dense + 3],
                [0.0, 0.0, 10.0],
                "{candidate}"
            );
        }
    }
    // Answers made elsewhere carry what their run measured: the flag cannot change them.
    let out = swex(
        dir.path(),
        &[
            "train",
            "--bench",
            "bench.jsonl",
            "--repos",
            "repos",
            "--answers",
            "work/run/swex/top10.jsonl",
            "--dense-scores",
            "off",
            "--dataset-only",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--answers"));
}

#[test]
fn dense_scores_on_without_the_model_fails_before_the_first_row() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 1);
    let no_models = tempfile::tempdir().unwrap();
    let mut args = TRAIN.to_vec();
    args.extend(["--dataset-only", "--dense-scores", "on"]);
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir.path())
        .args(&args)
        // Neither the engine's cache nor the user's holds a model.
        .env("SWEX_CACHE_DIR", no_models.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--dense-scores on") && stderr.contains("swex models fetch"),
        "{stderr}"
    );
    assert!(!dir.path().join("work/run").exists(), "no row was run");
}

#[test]
fn a_python_without_the_trainer_is_a_clear_error_and_the_dataset_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 1);
    let mut args = TRAIN.to_vec();
    args.extend(["--python", "/nonexistent/python3"]);
    let out = swex(dir.path(), &args, None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/python3") && stderr.contains("scripts/ranker-env"),
        "{stderr}"
    );
    // What was done before the fit is kept: the answers and the dataset.
    assert!(dir.path().join("work/dataset.jsonl").is_file());
    assert!(dir.path().join("work/run/swex/top10.jsonl").is_file());
}

#[test]
fn a_fitted_model_reports_held_out_folds_and_serves_the_explorer() {
    let Some(python) = available(Needs::RankerPython, ranker_python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 8);
    let model = fit(dir.path(), &python, "model.json", &[]);
    assert_eq!(model["format"], "swex-trees/1");
    let training = &model["training"];
    assert_eq!(training["instances"], 24);
    assert_eq!(training["repositories"], 3);
    // Held-out folds: one model per left-out repository, metrics over all 24 instances.
    let loro = &training["metrics"]["leave_one_repo_out"]["all"];
    assert_eq!(loro["instances"], 24);
    assert!(loro["acc@1"].as_f64().unwrap() >= 0.0);
    // The digest is the dataset's.
    let dataset = std::fs::read(dir.path().join("work/dataset.jsonl")).unwrap();
    let digest = format!("sha256:{}", sha256_hex(&dataset));
    assert_eq!(training["dataset_digest"], digest);
    assert!(model["temperature"].as_f64().unwrap() > 0.0);

    // The explorer takes the model as its config and answers with it.
    let explore_with = |model: &serde_json::Value| explore_with_config(dir.path(), "model", model);
    let out = explore_with(&model);
    assert_ok(&out);
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(answer.contains("pkg/mod_1.py"), "{answer}");
    // The config is read, not ignored: a model over other features is refused.
    let mut wrong = model.clone();
    wrong["features"][0] = "renamed".into();
    let out = explore_with(&wrong);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("renamed"));
}

#[test]
fn the_fit_says_how_the_model_ranks_held_out_against_the_hand_set_order() {
    let Some(python) = available(Needs::RankerPython, ranker_python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 8);
    let (model, stderr) = fit_saying(dir.path(), &python, "bench.jsonl", "model.json", &[]);
    let metrics = &model["training"]["metrics"];
    let (held, linear) = (
        &metrics["leave_one_repo_out"]["all"],
        &metrics["linear"]["all"],
    );
    let pair = |m: &serde_json::Value| (m["hit@1"].as_f64().unwrap(), m["mrr"].as_f64().unwrap());
    let judged = match pair(held).partial_cmp(&pair(linear)).unwrap() {
        std::cmp::Ordering::Greater => "better than",
        std::cmp::Ordering::Less => "worse than",
        std::cmp::Ordering::Equal => "level with",
    };
    // The repository folds judge (not the language folds, not the in-sample fit), with the
    // record's own numbers.
    let said = format!(
        "held out by repository (24 examples), the model ranks {judged} the hand-set order: hit@1 {:.4} against {:.4}, MRR {:.4} against {:.4}",
        pair(held).0,
        pair(linear).0,
        pair(held).1,
        pair(linear).1
    );
    assert!(stderr.contains(&said), "{said}\n{stderr}");

    // One repository gives no held-out folds, and the fit says so instead of judging.
    let one_repository: String = std::fs::read_to_string(dir.path().join("bench.jsonl"))
        .unwrap()
        .lines()
        .filter(|line| line.contains("\"org/alpha\""))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(dir.path().join("alpha.jsonl"), one_repository).unwrap();
    let (model, stderr) = fit_saying(dir.path(), &python, "alpha.jsonl", "model.json", &[]);
    assert_eq!(model["training"]["repositories"], 1);
    assert!(
        stderr.contains("no held-out folds: every instance shares its repository"),
        "{stderr}"
    );
    assert!(!stderr.contains("held out by"), "{stderr}");
}

#[test]
fn features_left_out_are_not_in_the_model_and_it_still_serves_the_explorer() {
    let Some(python) = available(Needs::RankerPython, ranker_python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 8);
    let fit = |without: Option<&str>| match without {
        Some(without) => fit(dir.path(), &python, "model.json", &["--without", without]),
        None => fit(dir.path(), &python, "model.json", &[]),
    };
    let names = |model: &serde_json::Value| -> Vec<String> {
        serde_json::from_value(model["features"].clone()).unwrap()
    };
    let computed = swex_explorer_swex::learned::FEATURES;
    // Everything, when asked.
    assert_eq!(names(&fit(Some(""))), computed);
    // By default the graph's features are left out, as in the shipped models.
    let model = fit(None);
    let features = names(&model);
    assert_eq!(features.len(), computed.len() - 2);
    assert!(!features.iter().any(|f| f.starts_with("graph_")));
    assert_eq!(
        model["training"]["features_left_out"],
        serde_json::json!(["graph_issue", "graph_top"])
    );
    // The explorer reads the model's features by name, the graph's among them or not.
    let out = explore_with_config(dir.path(), "model", &model);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("pkg/mod_1.py"));
    // A name the dataset does not have is refused, naming it.
    let mut args = TRAIN.to_vec();
    args.extend(["-o", "other.json", "--without", "graph_moon"]);
    let out = swex(dir.path(), &args, Some(&python));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("graph_moon"));
}

/// `--linear-share A` blends the trees with the linear score: the model carries a positive
/// `linear_weight` and the share it was fitted with, and serves the explorer; a share of 1 or
/// more is refused.
#[test]
fn a_linear_share_is_recorded_in_the_model_and_serves_the_explorer() {
    let Some(python) = available(Needs::RankerPython, ranker_python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 8);
    let model = fit(
        dir.path(),
        &python,
        "blend.json",
        &["--linear-share", "0.25"],
    );
    assert!(
        model["linear_weight"].as_f64().unwrap() > 0.0,
        "{}",
        model["linear_weight"]
    );
    assert_eq!(model["training"]["linear_share"], 0.25);
    assert!(model["training"]["trees_temperature"].as_f64().unwrap() > 0.0);
    let out = explore_with_config(dir.path(), "model", &model);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("pkg/mod_1.py"));
    // Without it, no blend is written.
    let trees = fit(dir.path(), &python, "trees.json", &[]);
    assert!(trees.get("linear_weight").is_none());
    let mut args = TRAIN.to_vec();
    args.extend(["-o", "bad.json", "--linear-share", "1"]);
    let out = swex(dir.path(), &args, Some(&python));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--linear-share"));
}

#[test]
fn span_examples_are_the_gold_files_spans_labelled_by_the_edited_lines_and_fit_a_span_model() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 8);
    let mut args = TRAIN.to_vec();
    args.extend(["--unit", "spans", "--dataset-only"]);
    let out = swex(dir.path(), &args, None);
    assert_ok(&out);
    let text = std::fs::read_to_string(dir.path().join("work/span-dataset.jsonl")).unwrap();
    let examples: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(examples.len(), 24);
    for example in &examples {
        let id = example["id"].as_str().unwrap();
        // One example per gold source file: `<instance> <file>`.
        let (instance, file) = id.split_once(' ').unwrap();
        let i: usize = instance.rsplit('-').next().unwrap().parse().unwrap();
        assert_eq!(file, format!("pkg/mod_{}.py", i % 4), "{id}");
        let candidates = example["candidates"].as_array().unwrap();
        assert!(!candidates.is_empty(), "{id}");
        for c in candidates {
            let name = c["path"].as_str().unwrap();
            assert!(name.starts_with(&format!("{file}:")), "{id}: {name}");
            // Gold exactly when the span overlaps the edited lines 1–5.
            let gold = example["gold"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g == name);
            assert_eq!(gold, c["start"].as_i64().unwrap() <= 5, "{id}: {name}");
        }
    }

    let Some(python) = available(Needs::RankerPython, ranker_python()) else {
        return;
    };
    let mut args = TRAIN.to_vec();
    args.extend(["--unit", "spans"]);
    let out = swex(dir.path(), &args, Some(&python));
    assert_ok(&out);
    // The default output name of a span model, its features the explorer's span features.
    let model: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("span-ranker.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(model["training"]["instances"], 24);
    assert!(dir.path().join("work/span-report.json").is_file());
    let explore_with =
        |model: &serde_json::Value| explore_with_config(dir.path(), "span_model", model);
    let out = explore_with(&model);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("pkg/mod_1.py"));
    // A file model is not a span model.
    let file_model: serde_json::Value =
        serde_json::from_str(include_str!("../explorers/swex/model/file-ranker.json")).unwrap();
    let out = explore_with(&file_model);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("span_model"));
}

/// `swex explore` of the fixture's `org__alpha-1` with the swex explorer configured
/// `{key: model}`.
fn explore_with_config(dir: &Path, key: &str, model: &serde_json::Value) -> Output {
    let config = serde_json::json!({ key: model }).to_string();
    std::fs::write(dir.join("config.json"), config).unwrap();
    swex(
        dir,
        &[
            "explore",
            "--repo",
            "repos/org__alpha-1",
            "--cache-dir",
            "cache",
            "-e",
            "swex",
            "--config",
            "@config.json",
            "--json",
            "compute_alpha_1 returns the wrong total",
        ],
        None,
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    let out = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .expect("sha256sum runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}
