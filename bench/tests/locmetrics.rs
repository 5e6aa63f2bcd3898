//! The peers' localization metrics against values computed by hand from LocAgent's definitions
//! (`eval_metric.py`: `acc_at_k`, `recall_at_k`, `normalized_dcg`, `average_precision_at_k`), and
//! the mapping of an answer's regions to ranked files and definitions.

use std::collections::BTreeMap;
use swex_bench::dataset::Region;
use swex_bench::fix::Entities;
use swex_bench::locmetrics::{Level, rank_answer, score_level};

fn s(items: &[&str]) -> Vec<String> {
    items.iter().map(|x| x.to_string()).collect()
}

fn close(got: &BTreeMap<String, f64>, expected: &[(&str, f64)]) {
    for (key, value) in expected {
        let g = got
            .get(*key)
            .unwrap_or_else(|| panic!("no {key} in {got:?}"));
        assert!(
            (g - value).abs() < 1e-12,
            "{key}: got {g}, expected {value}"
        );
    }
    assert_eq!(got.len(), expected.len(), "{got:?}");
}

#[test]
fn file_level_by_hand() {
    // Gold {a, b}; ranked x a y b z; ks 1,3,5,10 (K = 10, g = min(2, 10) = 2); hits 0 1 0 1 0.
    let got = score_level(
        Level::File,
        &s(&["x", "a", "y", "b", "z"]),
        &s(&["a", "b"]),
        &[1, 3, 5, 10],
    )
    .unwrap();
    let idcg = 1.0 + 1.0 / 3f64.log2(); // two gold: 1/log2(2) + 1/log2(3)
    close(
        &got,
        &[
            ("file_acc@1", 0.0),
            ("file_hit@1", 0.0),
            ("file_recall@1", 0.0),
            ("file_ndcg@1", 0.0),
            ("file_map@1", 0.0),
            // One of two gold in the first 3: not all; recall 1/2; DCG 1/log2(3); AP (1/2) / 3.
            ("file_acc@3", 0.0),
            // Hit@3: some gold within the first 3 (not LocAgent's).
            ("file_hit@3", 1.0),
            ("file_recall@3", 0.5),
            ("file_ndcg@3", (1.0 / 3f64.log2()) / idcg),
            ("file_map@3", 0.5 / 3.0),
            // Both within 5: acc 1; DCG 1/log2(3) + 1/log2(5); AP (1/2 + 2/4) / 5 — LocAgent
            // divides by k.
            ("file_acc@5", 1.0),
            ("file_hit@5", 1.0),
            ("file_recall@5", 1.0),
            (
                "file_ndcg@5",
                (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / idcg,
            ),
            ("file_map@5", 1.0 / 5.0),
            ("file_acc@10", 1.0),
            ("file_hit@10", 1.0),
            ("file_recall@10", 1.0),
            (
                "file_ndcg@10",
                (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / idcg,
            ),
            ("file_map@10", 1.0 / 10.0),
        ],
    );
    // The values LocAgent prints (4 decimals) for this case: NDCG@3 0.3869, NDCG@5 0.6509.
    assert_eq!(format!("{:.4}", got["file_ndcg@3"]), "0.3869");
    assert_eq!(format!("{:.4}", got["file_ndcg@5"]), "0.6509");
}

#[test]
fn gold_longer_than_k_follows_the_min_rule() {
    // Three gold functions, ks 1,2 (K = 2): g = min(3, 2) = 2. Ranked f2 q.
    let got = score_level(
        Level::Function,
        &s(&["f2", "q"]),
        &s(&["f1", "f2", "f3"]),
        &[1, 2],
    )
    .unwrap();
    close(
        &got,
        &[
            // Acc@1: 1 hit == min(g, 1) = 1. Recall divides by g = 2, not by 3.
            ("function_acc@1", 1.0),
            ("function_hit@1", 1.0),
            ("function_recall@1", 0.5),
            ("function_ndcg@1", 1.0),
            ("function_map@1", 1.0),
            ("function_acc@2", 0.0),
            ("function_hit@2", 1.0),
            ("function_recall@2", 0.5),
            ("function_ndcg@2", 1.0 / (1.0 + 1.0 / 3f64.log2())),
            ("function_map@2", 0.5),
        ],
    );
}

#[test]
fn empty_gold_is_not_scored_and_empty_answer_scores_zero() {
    assert!(score_level(Level::Module, &s(&["m"]), &[], &[5, 10]).is_none());
    let got = score_level(Level::Module, &[], &s(&["m"]), &[5]).unwrap();
    close(
        &got,
        &[
            ("module_acc@5", 0.0),
            ("module_hit@5", 0.0),
            ("module_recall@5", 0.0),
            ("module_ndcg@5", 0.0),
            ("module_map@5", 0.0),
        ],
    );
}

#[test]
fn regions_to_ranked_files_and_definitions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fix/python/before");
    let calc = std::fs::read_to_string(dir.join("pkg/calc.py")).unwrap();
    let regions = vec![
        Region::new("pkg/calc.py", 1, -1), // the whole file: no definition
        Region::new("pkg/calc.py", 8, 9),  // Calc.div
        Region::new("other.py", 1, 3),     // unreadable: the file only
        Region::new("pkg/calc.py", 5, 13), // add, the class's own line 7, (div), helper
    ];
    let ranked = rank_answer(&regions, &mut |path| {
        (path == "pkg/calc.py").then(|| Entities::of_text(path, &calc))
    });
    assert_eq!(ranked.files, s(&["pkg/calc.py", "other.py"]));
    assert_eq!(
        ranked.functions,
        s(&[
            "pkg/calc.py:Calc.div",
            "pkg/calc.py:Calc.add",
            "pkg/calc.py:Calc",
            "pkg/calc.py:helper"
        ])
    );
    assert_eq!(
        ranked.modules,
        s(&["pkg/calc.py:Calc", "pkg/calc.py:helper"])
    );
}

#[test]
fn swex_score_adds_the_localization_metrics_of_imported_rows() {
    use swex_bench::dataset::{Benchmark, LoadOptions, Predictions};
    use swex_bench::linecounts::LineCounts;
    use swex_bench::score::{ScoreConfig, score};
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // acme__calc-1 as `swex dataset import` writes it (no definitions yet); its snapshot is the
    // Python fixture, so the definitions are found at scoring time from it and the row's patch.
    let bench =
        Benchmark::load(&data.join("import/expected.jsonl"), &LoadOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let predictions = dir.path().join("p.jsonl");
    std::fs::write(
        &predictions,
        r#"{"instance_id": "acme__calc-1", "explorer": "x", "regions": [{"path": "pkg/calc.py", "start": 8, "end": 9}, {"path": "other.py", "start": 1, "end": 3}]}
"#,
    )
    .unwrap();
    let predictions = Predictions::load(&predictions, false).unwrap();
    let mut config = ScoreConfig::new(&[10]).unwrap();
    config
        .snapshots
        .insert("acme__calc-1".into(), data.join("fix/python/before"));
    let report = score(&bench, &[predictions], &LineCounts::default(), &config).unwrap();
    let row = report
        .rows
        .iter()
        .find(|r| r.instance_id == "acme__calc-1")
        .unwrap();
    let loc = row.loc_metrics.as_ref().unwrap();
    // File gold {pkg/calc.py}, ranked pkg/calc.py, other.py: right at 1.
    assert_eq!(loc["file_acc@1"], 1.0);
    // Function gold {Calc.div, helper} (K = 10, g = 2), ranked Calc.div: one of two within 5.
    assert_eq!(loc["function_acc@5"], 0.0);
    assert_eq!(loc["function_recall@5"], 0.5);
    assert!((loc["function_ndcg@5"] - 1.0 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-12);
    assert!((loc["function_map@5"] - 0.2).abs() < 1e-12);
    // Rows of other instances have no prediction: scored as empty answers, so file_acc@1 is 0 there.
    let summary = &report.summaries[0];
    let rows_with_loc = report
        .rows
        .iter()
        .filter(|r| r.loc_metrics.is_some())
        .count();
    assert_eq!(summary.loc["file_acc@1"], 1.0 / rows_with_loc as f64);
}
