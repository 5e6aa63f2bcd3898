//! The reference evaluator's quirks, one data-driven case each (`data/metric-cases.json`): a
//! ground truth, line counts, ranked predictions (optionally cut at `top_k`) and the expected value
//! of the metrics the case is about. `expected` holds the reference evaluator's values (checked
//! against `eval.py` with `bench/python/reference_driver.py cases`); `expected_paper` holds the
//! `--ndcg paper` values.

use serde::Deserialize;
use std::collections::HashMap;
use swex_bench::dataset::{GroundTruth, Region};
use swex_bench::linecounts::FileLineCounts;
use swex_bench::metrics::{Metrics, NdcgVariant, ScoreOptions, score_instance};

#[derive(Deserialize)]
struct Case {
    name: String,
    ground_truth: GroundTruth,
    line_counts: HashMap<String, i64>,
    predictions: Vec<Region>,
    top_k: Option<usize>,
    expected: HashMap<String, f64>,
    #[serde(default)]
    expected_paper: HashMap<String, f64>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/metric-cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check(case: &Case, variant: NdcgVariant, expected: &HashMap<String, f64>) -> Vec<String> {
    let counts: FileLineCounts = case.line_counts.clone().into_iter().collect();
    let cut = case
        .top_k
        .unwrap_or(case.predictions.len())
        .min(case.predictions.len());
    let metrics = score_instance(
        &case.ground_truth,
        &case.predictions[..cut],
        &counts,
        &ScoreOptions { ndcg: variant },
    );
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = metrics
            .get(name)
            .unwrap_or_else(|| panic!("{}: unknown metric {name}", case.name));
        if (got - want).abs() > 1e-12 {
            failures.push(format!(
                "{} ({variant:?}): {name} = {got}, expected {want}",
                case.name
            ));
        }
    }
    failures
}

#[test]
fn every_metric_case_gives_the_expected_values() {
    let cases = cases();
    assert!(cases.len() >= 20);
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|case| {
            let mut f = check(case, NdcgVariant::Reference, &case.expected);
            f.extend(check(case, NdcgVariant::Paper, &case.expected_paper));
            f
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_paper_variant_changes_only_ndcg() {
    for case in cases() {
        let counts: FileLineCounts = case.line_counts.clone().into_iter().collect();
        let score = |ndcg| {
            score_instance(
                &case.ground_truth,
                &case.predictions,
                &counts,
                &ScoreOptions { ndcg },
            )
        };
        let (code, paper) = (score(NdcgVariant::Reference), score(NdcgVariant::Paper));
        for ((name, a), b) in Metrics::NAMES.iter().zip(code.values()).zip(paper.values()) {
            if !name.starts_with("ndcg") {
                assert_eq!(a, b, "{}: {name}", case.name);
            }
        }
    }
}

#[test]
fn metrics_serialise_with_the_reference_keys_in_order() {
    let json = serde_json::to_string(&Metrics::default()).unwrap();
    let keys: Vec<String> = serde_json::from_str::<serde_json::Value>(&json)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut sorted_names = Metrics::NAMES.map(String::from).to_vec();
    sorted_names.sort();
    // serde_json's map sorts keys; the order of the serialised text is checked separately.
    assert_eq!(keys, sorted_names);
    let positions: Vec<usize> = Metrics::NAMES
        .iter()
        .map(|n| json.find(&format!("\"{n}\"")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{json}");
}
