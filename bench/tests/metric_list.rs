//! The one metrics list against everything that repeats it: docs/metrics.md's table, the field
//! order of a result row's `metrics` object, and LocAgent's metric table.

use swex_bench::locmetrics;
use swex_bench::metric_list::{KEY_NAMES, LOCALIZATION_NAMES, METRICS, REFERENCE_NAMES};
use swex_bench::metrics::Metrics;

/// The rows of docs/metrics.md's "The metric list" table: metric, better, kind, label.
fn documented_rows() -> Vec<[String; 4]> {
    let docs = include_str!("../../docs/metrics.md");
    let start = docs
        .find("## The metric list")
        .expect("docs/metrics.md has a metric list section");
    docs[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect();
            assert_eq!(cells.len(), 4, "docs/metrics.md row {l:?}");
            [
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            ]
        })
        .collect()
}

#[test]
fn the_docs_list_every_metric_in_order() {
    let declared: Vec<[String; 4]> = METRICS
        .iter()
        .map(|m| {
            [
                m.name.to_string(),
                m.direction.word().to_string(),
                m.kind.word().to_string(),
                m.label.unwrap_or("").to_string(),
            ]
        })
        .collect();
    assert_eq!(documented_rows(), declared, "docs/metrics.md's metric list");
}

/// A result row's `metrics` object has the list's reference names, in its order: the struct and
/// the list cannot drift apart.
#[test]
fn result_rows_name_the_reference_metrics_in_the_list_order() {
    // The text, not a `Value`: a `Value`'s map sorts its keys.
    let text = serde_json::to_string(&Metrics::default()).unwrap();
    let keys: Vec<&str> = text.split('"').skip(1).step_by(2).collect();
    assert_eq!(keys, REFERENCE_NAMES);
    assert_eq!(Metrics::NAMES, REFERENCE_NAMES);
    // values() and from_values() follow the names.
    let mut v = [0.0; 17];
    for (i, x) in v.iter_mut().enumerate() {
        *x = i as f64;
    }
    let m = Metrics::from_values(v);
    for (i, name) in REFERENCE_NAMES.iter().enumerate() {
        assert_eq!(m.get(name), Some(i as f64), "{name}");
        assert_eq!(json_field(&m, name), i as f64, "{name}");
    }
}

fn json_field(m: &Metrics, name: &str) -> f64 {
    serde_json::to_value(m).unwrap()[name].as_f64().unwrap()
}

#[test]
fn locagents_table_computes_the_listed_localization_metrics() {
    let names: Vec<&str> = locmetrics::METRICS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, LOCALIZATION_NAMES);
}

#[test]
fn the_report_views_name_listed_metrics() {
    use swex_bench::report::chart::TRADEOFF_METRICS;
    use swex_bench::report::render::{KEY_METRICS, REAL_METRICS};
    assert_eq!(KEY_METRICS, KEY_NAMES);
    for name in REAL_METRICS.iter().chain(TRADEOFF_METRICS.iter()) {
        assert!(
            REFERENCE_NAMES.contains(name),
            "{name} is not a reference metric"
        );
    }
}

/// Each extra metric is a field of a result row under its listed name.
#[test]
fn result_rows_carry_the_extra_metrics_under_their_names() {
    use swex_bench::metric_list::Kind;
    use swex_bench::results::ResultRow;
    let row: ResultRow = serde_json::from_value(serde_json::json!({
        "instance_id": "a",
        "explorer": "e",
        "real_metrics": Metrics::default(),
        "lines_returned": 7,
    }))
    .unwrap();
    let written = serde_json::to_value(&row).unwrap();
    for m in METRICS.iter().filter(|m| m.kind == Kind::Extra) {
        assert!(
            written.get(m.name).is_some(),
            "a result row has no `{}` field",
            m.name
        );
    }
}
