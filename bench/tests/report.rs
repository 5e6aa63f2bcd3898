//! Report golden tests: Markdown, CSV and JSON of a fixed set of rows against files in
//! `tests/golden/report/`. Run with `SWEX_UPDATE_GOLDEN=1` to rewrite them after an intended
//! change (and review the diff).

use std::path::{Path, PathBuf};
use swex_bench::dataset::{Benchmark, LoadOptions, Region};
use swex_bench::metrics::Metrics;
use swex_bench::report::{CompareOptions, Report, bootstrap_ci, chart, html, render};
use swex_bench::results::ResultRow;

const INSTANCES: [(&str, &str, &str); 4] = [
    ("org__alpha-1", "org/alpha", "src/a.py"),
    ("org__alpha-2", "org/alpha", "src/b.py"),
    ("team__beta-7", "team/beta", "lib/x.rs"),
    ("team__beta-9", "team/beta", "lib/y.rs"),
];

fn bench(dir: &Path) -> Benchmark {
    let mut text = String::new();
    for (id, repo, path) in INSTANCES {
        let row = serde_json::json!({
            "instance_id": id,
            "repo": repo,
            "ground_truth": {
                "read_core_files": [path],
                "read_core_regions": [{"path": path, "start": 10, "end": 20}],
            }
        });
        text.push_str(&format!("{row}\n"));
    }
    let path = dir.join("bench.jsonl");
    std::fs::write(&path, text).unwrap();
    Benchmark::load(&path, &LoadOptions::default()).unwrap()
}

/// Rows of two explorers at k = 1 and 2 with metrics chosen by hand; `beta` fails on one.
fn rows() -> Vec<ResultRow> {
    let mut rows = Vec::new();
    for (i, (id, _, path)) in INSTANCES.iter().enumerate() {
        for (explorer, base) in [("alpha", 0.5), ("beta", 0.25)] {
            for k in [1usize, 2] {
                let failed = explorer == "beta" && i == 3;
                let value = if failed {
                    0.0
                } else {
                    base + 0.125 * i as f64 / k as f64
                };
                let mut values = [0.0; 17];
                for (j, v) in values.iter_mut().enumerate() {
                    *v = (value + 0.01 * j as f64).min(1.0);
                }
                if failed {
                    values = [0.0; 17];
                }
                rows.push(ResultRow {
                    instance_id: id.to_string(),
                    explorer: explorer.into(),
                    top_k: Some(k),
                    regions: if failed {
                        vec![]
                    } else {
                        vec![Region::new(*path, 12, 30), Region::new("README.md", 1, -1)]
                            .into_iter()
                            .take(k)
                            .collect()
                    },
                    metrics: Metrics::from_values(values),
                    num_regions: if failed { 0 } else { k },
                    // alpha's rows were made with the snapshots: real lengths and lines.
                    real_metrics: (explorer == "alpha").then(|| {
                        let mut real = Metrics::from_values(values);
                        real.precision /= 2.0;
                        real
                    }),
                    lines_returned: (explorer == "alpha")
                        .then_some(100 * (i as u64 + 1) * k as u64),
                    line_budget: None,
                    error: failed.then(|| "scripted failure".to_string()),
                    explorer_config: serde_json::Value::Null,
                    dropped: Default::default(),
                    notes: vec![],
                    produced_by: None,
                    shard: None,
                    extra: Default::default(),
                    timings: None,
                });
            }
        }
    }
    rows
}

fn report(dir: &Path) -> Report {
    let bench = bench(dir);
    let compare = CompareOptions {
        resamples: 2000,
        ..CompareOptions::new("alpha", "beta")
    };
    Report::build(
        vec!["fixture.jsonl".into()],
        rows(),
        Some(&bench),
        &[compare],
    )
    .unwrap()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/report")
}

/// Compares `actual` with the golden file, or rewrites it when `SWEX_UPDATE_GOLDEN` is set.
fn check_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("SWEX_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with SWEX_UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs from the output; rerun with SWEX_UPDATE_GOLDEN=1 if the change is intended.\n--- output ---\n{actual}",
        path.display()
    );
}

#[test]
fn golden_markdown_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let report = report(dir.path());
    check_golden("report.md", &render::markdown(&report));
    check_golden("means.csv", &render::csv_means(&report));
    check_golden("breakdown.csv", &render::csv_breakdown(&report));
    check_golden("paired.csv", &render::csv_paired(&report));
    check_golden("report.json", &render::json(&report));
}

#[test]
fn breakdowns_group_by_repository_and_language() {
    let dir = tempfile::tempdir().unwrap();
    let report = report(dir.path());
    let groups = |g: &[swex_bench::report::GroupMeans]| -> Vec<(String, usize)> {
        g.iter()
            .map(|g| (g.group.clone(), g.means[0].instances))
            .collect()
    };
    assert_eq!(
        groups(&report.by_repo),
        [("org/alpha".to_string(), 2), ("team/beta".to_string(), 2)]
    );
    assert_eq!(
        groups(&report.by_language),
        [("Python".to_string(), 2), ("Rust".to_string(), 2)]
    );
    let beta = report
        .overall
        .iter()
        .find(|m| m.explorer == "beta" && m.top_k == 1)
        .unwrap();
    assert_eq!((beta.instances, beta.failures), (4, 1));
    // Means include the failure as zero: (0.25 + 0.375 + 0.5 + 0) / 4.
    assert!((beta.mean.precision - 0.28125).abs() < 1e-12);
}

#[test]
fn paired_comparison_counts_and_bootstraps() {
    let dir = tempfile::tempdir().unwrap();
    let report = report(dir.path());
    let p = &report.paired[0];
    assert_eq!(
        (p.top_k, p.instances, p.wins, p.losses, p.ties),
        (1, 4, 4, 0, 0)
    );
    assert!(p.ci_low <= p.mean_difference && p.mean_difference <= p.ci_high);

    // (values, expected interval) — constant samples give a point; the interval is seeded.
    type Interval = Option<(f64, f64)>;
    let cases: [(&[f64], Interval); 3] = [
        (&[0.5, 0.5, 0.5], Some((0.5, 0.5))),
        (&[], Some((0.0, 0.0))),
        (&[0.0, 1.0, 0.0, 1.0, 0.5], None),
    ];
    for (values, expected) in cases {
        let (low, high) = bootstrap_ci(values, 1000, 0.95, 7);
        assert_eq!((low, high), bootstrap_ci(values, 1000, 0.95, 7), "seeded");
        match expected {
            Some(interval) => assert_eq!((low, high), interval, "{values:?}"),
            None => assert!(
                0.0 < low && low < 0.5 && 0.5 < high && high < 1.0,
                "{low} {high}"
            ),
        }
    }
}

#[test]
fn charts_render_as_svg_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let report = report(dir.path());
    let charts = chart::charts(&report);
    let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "recall-budget-k1",
            "metrics-k1",
            "recall-budget-k2",
            "metrics-k2"
        ]
    );
    let svg = chart::svg(&charts[0]);
    assert!(svg.starts_with("<svg") && svg.contains("alpha") && svg.contains("polyline"));
    let png = chart::png(&svg).unwrap();
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    assert_eq!((pixmap.width(), pixmap.height()), (1520, 880));
    let distinct: std::collections::BTreeSet<[u8; 4]> = pixmap
        .pixels()
        .iter()
        .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
        .collect();
    assert!(distinct.len() > 10, "a drawn chart, not a blank image");
}

/// One explorer at three line budgets, with real lengths, and a peer's rows without a budget.
fn sweep_rows() -> Vec<ResultRow> {
    let mut rows = Vec::new();
    for (explorer, budget, lines, recall) in [
        ("alpha", Some(100), 80, 0.2),
        ("alpha", Some(300), 250, 0.4),
        ("alpha", Some(1000), 700, 0.6),
        ("peer", None, 400, 0.3),
    ] {
        for (id, _, path) in INSTANCES {
            rows.push(ResultRow {
                instance_id: id.to_string(),
                explorer: explorer.into(),
                top_k: Some(5),
                regions: vec![Region::new(path, 1, lines as i64)],
                metrics: Metrics::default(),
                num_regions: 1,
                real_metrics: Some(Metrics {
                    recall,
                    ..Metrics::default()
                }),
                lines_returned: Some(lines),
                line_budget: budget,
                error: None,
                explorer_config: serde_json::Value::Null,
                dropped: Default::default(),
                notes: vec![],
                produced_by: None,
                shard: None,
                extra: Default::default(),
                timings: None,
            });
        }
    }
    rows
}

#[test]
fn budget_sweeps_are_series_of_their_own_with_trade_off_charts() {
    let sweep = Report::build(vec!["sweep".into()], sweep_rows(), None, &[]).unwrap();
    let names: Vec<&str> = sweep.overall.iter().map(|m| m.explorer.as_str()).collect();
    assert_eq!(names, ["alpha[100]", "alpha[300]", "alpha[1000]", "peer"]);
    let alpha = &sweep.overall[1];
    assert_eq!(alpha.line_budget, Some(300));
    assert_eq!(alpha.lines.unwrap().median, 250.0);
    assert!((alpha.real.unwrap().recall - 0.4).abs() < 1e-12);

    let charts = chart::tradeoff_charts(&sweep, 5);
    assert_eq!(charts.len(), chart::TRADEOFF_METRICS.len());
    let recall = charts
        .iter()
        .find(|c| c.id == "tradeoff-recall-k5")
        .unwrap();
    let series: Vec<(&str, Vec<(f64, f64)>)> = recall
        .series
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.points.iter().map(|p| (p.0, p.1)).collect(),
            )
        })
        .collect();
    assert_eq!(
        series,
        [
            ("alpha", vec![(80.0, 0.2), (250.0, 0.4), (700.0, 0.6)]),
            ("peer", vec![(400.0, 0.3)]),
        ]
    );
    let svg = chart::svg(recall);
    assert!(
        svg.contains("polyline") && svg.contains("peer no budget: 400 lines"),
        "{svg}"
    );
    // No sweep, no trade-off charts.
    let dir = tempfile::tempdir().unwrap();
    assert!(chart::tradeoff_charts(&report(dir.path()), 1).is_empty());
    // The Markdown has the real-length table with the lines returned.
    let markdown = render::markdown(&sweep);
    assert!(markdown.contains("## Counted with every file's real length"));
    assert!(markdown.contains("| alpha[300] | 5 | 4 |"), "{markdown}");
}

#[test]
fn html_is_self_contained_and_has_the_drill_down() {
    let dir = tempfile::tempdir().unwrap();
    let report = report(dir.path());
    let page = html::page(&report, &chart::charts(&report));
    // The only URL is the SVG namespace, which is a name, not a fetch.
    assert_eq!(
        page.matches("http").count(),
        page.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(!page.contains("<link") && !page.contains("src="));
    assert_eq!(page.matches("<details class=\"instance\"").count(), 4);
    assert!(page.contains("src/a.py:10-20"), "ground truth shown");
    assert!(page.contains("<tr class=\"hit\"><td>1</td><td class=\"l\">src/a.py:12-30</td>"));
    assert!(page.contains("failed: scripted failure"));
}

/// Rows scored against a fix carry the localization metrics: the report lists them all, and per
/// language and per repository Acc@k at every level with the file-level Hit@k, in the metrics
/// table's order (Acc@k, then Hit@k; by k), and no other localization metric.
#[test]
fn localization_tables_show_acc_and_file_hit_per_group() {
    let dir = tempfile::tempdir().unwrap();
    let bench = bench(dir.path());
    let mut rows = rows();
    for (i, row) in rows.iter_mut().enumerate() {
        let v = (i % 2) as f64;
        let values: std::collections::BTreeMap<String, f64> = [
            ("file_recall@1", 0.5),
            ("file_hit@5", 1.0),
            ("file_acc@5", v),
            ("file_hit@1", v),
            ("file_acc@1", v),
            ("function_acc@5", 0.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        swex_bench::locmetrics::set_row(row, &values);
    }
    let report = Report::build(vec!["fixture.jsonl".into()], rows, Some(&bench), &[]).unwrap();
    let markdown = render::markdown(&report);
    let header_after = |title: &str| -> String {
        let at = markdown
            .find(title)
            .unwrap_or_else(|| panic!("no {title:?} in\n{markdown}"));
        markdown[at..]
            .lines()
            .find(|l| l.starts_with('|'))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        header_after("## Localization metrics"),
        "| explorer | k | file_acc@1 | file_acc@5 | file_hit@1 | file_hit@5 | file_recall@1 | function_acc@5 |"
    );
    for title in [
        "### Acc@k and file Hit@k per language",
        "### Acc@k and file Hit@k per repository",
    ] {
        assert_eq!(
            header_after(title),
            "| group | explorer | k | n | file_acc@1 | file_acc@5 | file_hit@1 | file_hit@5 | function_acc@5 |",
            "{title}"
        );
    }
}
