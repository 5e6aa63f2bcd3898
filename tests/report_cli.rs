//! End-to-end test of `swex report`: rows made by `swex bench` on synthetic snapshots, the report
//! written by the binary, and its HTML page opened in headless Chromium (Debian's `chromium`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Chromium binary: `$SWEX_CHROMIUM`, else `chromium` or `chromium-browser` on PATH. Missing
/// is a failure, not a skip: CI installs it.
fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("SWEX_CHROMIUM") {
        return PathBuf::from(path);
    }
    for name in ["chromium", "chromium-browser"] {
        if let Some(path) = std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
        {
            return path;
        }
    }
    panic!(
        "headless Chromium is needed to check the HTML report and was not found; install it with \
         `apt-get install -y chromium fonts-dejavu-core` (or set SWEX_CHROMIUM to its path)"
    );
}

fn swex(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("swex runs");
    assert!(
        out.status.success(),
        "swex {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn fixture(dir: &Path) {
    let mut lines = String::new();
    for i in 0..3 {
        let id = format!("org__repo-{i}");
        let snapshot = dir.join("repos").join(&id);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::write(
            snapshot.join("a.py"),
            "def parse_url():\n    pass\n".repeat(20),
        )
        .unwrap();
        std::fs::write(snapshot.join("b.py"), "x = 1\n".repeat(30)).unwrap();
        let row = serde_json::json!({
            "instance_id": id,
            "repo": "org/repo",
            "problem_statement": "parse_url crashes on empty input",
            "ground_truth": {
                "read_core_files": ["a.py"],
                "read_core_regions": [{"path": "a.py", "start": 3, "end": 8}],
            }
        });
        lines.push_str(&format!("{row}\n"));
    }
    std::fs::write(dir.join("bench.jsonl"), lines).unwrap();
}

/// Runs Chromium headless with `args` on the page; its stdout.
fn headless(page: &Path, args: &[&str]) -> String {
    let home = page.parent().unwrap().join("chromium-home");
    let out = Command::new(chromium())
        .env("HOME", &home)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "chromium {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_html_report_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fixture(root);
    swex(
        root,
        &[
            "bench",
            "--bench",
            "bench.jsonl",
            "--repos",
            "repos",
            "-e",
            "bm25-ref,oracle",
            "-k",
            "1,3",
            "--plain",
        ],
    );
    let out = swex(
        root,
        &[
            "report",
            "results/bm25-ref/top1.jsonl",
            "results/bm25-ref/top3.jsonl",
            "results/oracle/top1.jsonl",
            "results/oracle/top3.jsonl",
            "--bench",
            "bench.jsonl",
            "--compare",
            "oracle,bm25-ref",
            "-o",
            "report",
        ],
    );
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(
        markdown.contains("| oracle | 3 | 3 | 0 | 1.0000 | 1.0000 |"),
        "{markdown}"
    );
    for file in [
        "report.md",
        "report.json",
        "means.csv",
        "breakdown.csv",
        "paired.csv",
    ] {
        assert!(root.join("report").join(file).is_file(), "{file}");
    }
    for chart in ["recall-budget-k1", "metrics-k3"] {
        for ext in ["svg", "png"] {
            assert!(root.join(format!("report/charts/{chart}.{ext}")).is_file());
        }
    }

    let page = std::fs::canonicalize(root.join("report/report.html")).unwrap();
    let dom = headless(&page, &["--dump-dom"]);
    assert!(dom.contains("<h1>swex report</h1>"), "{dom}");
    for expected in [
        "<td class=\"l\">oracle</td><td>3</td><td>3</td><td>0</td><td>1.0000</td>",
        "<td class=\"l\">bm25-ref</td><td>1</td><td>3</td><td>0</td>",
        "<td>oracle</td><td class=\"l\">bm25-ref</td><td>1</td>",
        "org__repo-2",
        "a.py:3-8",
    ] {
        assert!(
            dom.contains(expected),
            "the rendered page lacks {expected:?}"
        );
    }
    assert_eq!(dom.matches("<details class=\"instance\"").count(), 3);
    assert!(dom.matches("<svg").count() >= 4, "charts are inline");

    let shot = root.join("shot.png");
    headless(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote a screenshot");
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    let pixels = pixmap.pixels();
    let white = pixels
        .iter()
        .filter(|p| p.red() > 245 && p.green() > 245 && p.blue() > 245)
        .count();
    let distinct: std::collections::BTreeSet<[u8; 3]> = pixels
        .iter()
        .map(|p| [p.red(), p.green(), p.blue()])
        .collect();
    assert!(
        white < pixels.len() * 98 / 100 && distinct.len() > 20,
        "the screenshot is blank ({white} of {} pixels white, {} colours)",
        pixels.len(),
        distinct.len()
    );
}

#[test]
fn reference_rows_are_read_and_duplicate_inputs_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let metrics: serde_json::Map<String, serde_json::Value> = [
        "precision",
        "recall",
        "f1_score",
        "hit_file_rate",
        "noise_file_rate",
        "hit_region_rate",
        "noise_region_rate",
        "weighted_core_coverage",
        "context_efficiency",
        "optional_coverage",
        "ndcg_at_100",
        "ndcg_at_300",
        "ndcg_at_500",
        "recall_at_100",
        "recall_at_300",
        "recall_at_500",
        "first_useful_hit",
    ]
    .iter()
    .map(|m| (m.to_string(), serde_json::json!(0.5)))
    .collect();
    // The reference runner's rows: no top_k (it is in the file name), extra fields kept.
    let row = serde_json::json!({
        "instance_id": "org__repo-1", "explorer": "cosil",
        "regions": [{"path": "a.py", "start": 1, "end": 5}],
        "metrics": metrics, "num_regions": 1, "token_usage": null,
    });
    std::fs::write(root.join("dev.cosil-top5.jsonl"), format!("{row}\n")).unwrap();
    let out = swex(
        root,
        &["report", "dev.cosil-top5.jsonl", "--no-png", "-o", "rep"],
    );
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(
        markdown.contains("| cosil | 5 | 1 | 0 | 0.5000 |"),
        "{markdown}"
    );
    assert!(root.join("rep/charts/metrics-k5.svg").is_file());
    assert!(!root.join("rep/charts/metrics-k5.png").exists());

    std::fs::copy(
        root.join("dev.cosil-top5.jsonl"),
        root.join("copy-top5.jsonl"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(root)
        .args([
            "report",
            "dev.cosil-top5.jsonl",
            "copy-top5.jsonl",
            "-o",
            "rep2",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("swex merge"), "{stderr}");
}
