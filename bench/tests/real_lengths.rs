//! Scoring with every predicted file's real length (`PreparedTruth::score_real`), one
//! data-driven case each (`data/real-length-cases.json`): `expected` are the real-length values,
//! `expected_reference` the reference counting's for the same list (to show what differs), and
//! `lines_returned` the distinct lines the list holds.

use serde::Deserialize;
use std::collections::HashMap;
use swex_bench::dataset::{GroundTruth, Region};
use swex_bench::linecounts::FileLineCounts;
use swex_bench::metrics::{Metrics, PreparedTruth, ScoreOptions};

#[derive(Deserialize)]
struct Case {
    name: String,
    ground_truth: GroundTruth,
    line_counts: HashMap<String, i64>,
    lengths: HashMap<String, i64>,
    predictions: Vec<Region>,
    expected: HashMap<String, f64>,
    expected_reference: HashMap<String, f64>,
    lines_returned: u64,
}

fn cases() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/real-length-cases.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn mismatches(case: &Case, label: &str, got: &Metrics, want: &HashMap<String, f64>) -> Vec<String> {
    want.iter()
        .filter_map(|(name, want)| {
            let value = got.get(name).expect("known metric");
            ((value - want).abs() > 1e-12)
                .then(|| format!("{} ({label}): {name} = {value}, expected {want}", case.name))
        })
        .collect()
}

#[test]
fn real_lengths_cost_every_predicted_line() {
    let cases = cases();
    assert!(cases.len() >= 5);
    let mut failures = Vec::new();
    for case in &cases {
        let counts: FileLineCounts = case.line_counts.clone().into_iter().collect();
        let lengths: FileLineCounts = case.lengths.clone().into_iter().collect();
        let truth = PreparedTruth::new(&case.ground_truth, &counts);
        let options = ScoreOptions::default();
        let real = truth.score_real(&case.predictions, &options, &lengths);
        let reference = truth.score(&case.predictions, &options);
        failures.extend(mismatches(case, "real", &real.metrics, &case.expected));
        failures.extend(mismatches(
            case,
            "reference",
            &reference,
            &case.expected_reference,
        ));
        if real.lines_returned != case.lines_returned {
            failures.push(format!(
                "{}: lines_returned = {}, expected {}",
                case.name, real.lines_returned, case.lines_returned
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On lists that stay inside ground-truth files and their lengths, both countings agree: the
/// real one only adds the cost the reference cannot see.
#[test]
fn both_countings_agree_inside_the_ground_truth() {
    let truth = GroundTruth {
        read_core_files: vec!["a.py".into(), "t.py".into()],
        read_core_regions: vec![Region::new("a.py", 1, 30), Region::new("t.py", 5, 9)],
        main_files: vec!["a.py".into()],
        ..GroundTruth::default()
    };
    let counts: FileLineCounts = [("a.py".to_string(), 30), ("t.py".to_string(), 40)]
        .into_iter()
        .collect();
    let prepared = PreparedTruth::new(&truth, &counts);
    for predictions in [
        vec![Region::new("a.py", 1, -1), Region::new("t.py", 1, 20)],
        vec![Region::new("t.py", 3, 12), Region::new("a.py", 10, 20)],
        vec![Region::new("a.py", -5, -1)],
    ] {
        let options = ScoreOptions::default();
        let real = prepared.score_real(&predictions, &options, &counts);
        assert_eq!(
            real.metrics,
            prepared.score(&predictions, &options),
            "{predictions:?}"
        );
    }
}

/// Rows of a peer (no real-length metrics) get them from the snapshot folders; rows that have
/// them are kept; rows without a snapshot are named.
#[test]
fn rows_without_real_lengths_are_scored_from_the_snapshots() {
    use swex_bench::dataset::{Benchmark, LoadOptions};
    use swex_bench::results::ResultRow;
    let dir = tempfile::tempdir().unwrap();
    let repos = dir.path().join("repos");
    std::fs::create_dir_all(repos.join("org__repo-1/src")).unwrap();
    std::fs::write(repos.join("org__repo-1/src/a.py"), "x\n".repeat(10)).unwrap();
    std::fs::write(repos.join("org__repo-1/src/big.py"), "y\n".repeat(90)).unwrap();
    let bench_file = dir.path().join("bench.jsonl");
    let mut text = String::new();
    for id in ["org__repo-1", "org__repo-2"] {
        text.push_str(
            &serde_json::json!({"instance_id": id, "ground_truth": {
                "read_core_files": ["src/a.py"],
                "read_core_regions": [{"path": "src/a.py", "start": 1, "end": 10}]}})
            .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&bench_file, text).unwrap();
    let bench = Benchmark::load(&bench_file, &LoadOptions::default()).unwrap();
    let row = |id: &str| -> ResultRow {
        serde_json::from_value(serde_json::json!({
            "instance_id": id, "explorer": "peer", "top_k": 5,
            "regions": [{"path": "src/a.py", "start": 1, "end": -1},
                        {"path": "src/big.py", "start": 1, "end": -1}]}))
        .unwrap()
    };
    let mut kept = row("org__repo-1");
    kept.real_metrics = Some(Metrics::default());
    kept.lines_returned = Some(7);
    let mut rows = vec![row("org__repo-1"), row("org__repo-2"), kept];
    let filled = swex_bench::score::fill_real_metrics(&mut rows, &bench, &repos);
    assert_eq!((filled.filled, filled.kept), (1, 1));
    assert_eq!(filled.unavailable, ["org__repo-2"]);
    assert_eq!(rows[0].lines_returned, Some(100));
    let real = rows[0].real_metrics.unwrap();
    assert!(
        (real.precision - 0.1).abs() < 1e-12 && real.recall == 1.0,
        "{real:?}"
    );
    assert_eq!(rows[1].real_metrics, None);
    assert_eq!(rows[2].lines_returned, Some(7));
}
