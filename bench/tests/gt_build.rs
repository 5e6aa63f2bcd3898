//! `gt build` end to end on synthetic trajectories written for this project, one per format, for
//! one instance whose snapshot is in `tests/fixtures/gt/repos`: what each format's reader and the
//! extractor find, the aggregated row, and how bad inputs are reported while the rest goes on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use swex_bench::dataset::BenchRow;
use swex_bench::gt::build::{self, BuildOptions, ModelRule, SnapshotRoot, VerdictScopes, Verdicts};
use swex_bench::gt::intervals::LineSet;
use swex_bench::gt::load;
use swex_bench::gt::reads::{ReadPolicy, extract};
use swex_bench::gt::repo::SnapshotDir;
use swex_bench::gt::trajectory::{Format, Trajectory};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gt")
}

fn load_one(relative: &str) -> Trajectory {
    let (mut t, problems) = load::load_file(&fixtures().join(relative));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(t.len(), 1);
    t.remove(0)
}

fn render_reads(t: &Trajectory, policy: ReadPolicy) -> String {
    let repo = SnapshotDir::new(fixtures().join("repos/demo__demo-1"));
    let extraction = extract(t, &repo, policy);
    let mut files: BTreeMap<String, LineSet> = BTreeMap::new();
    for read in &extraction.reads {
        let entry = files.entry(read.path.clone()).or_default();
        *entry = entry.union(&read.lines);
    }
    let reads: Vec<String> = files.iter().map(|(p, l)| format!("{p}:{l}")).collect();
    let modified: Vec<&str> = extraction.modified.iter().map(String::as_str).collect();
    format!("{} | modified {}", reads.join(" "), modified.join(","))
}

/// (file, format, model, reads under Reference, reads under Shown)
const FORMATS: &[(&str, Format, &str, &str, &str)] = &[
    (
        "runs/mini/demo__demo-1.traj.json",
        Format::MiniSweAgentV1,
        "model-a",
        "pkg/core.py:1-40 tests/test_core.py:1-12 | modified pkg/core.py",
        "pkg/core.py:5-25 tests/test_core.py:1-12 | modified pkg/core.py",
    ),
    (
        "runs/mini2/demo__demo-1.traj.json",
        Format::MiniSweAgentV2,
        "model-b",
        "pkg/core.py:8-30 pkg/util.py:1-20 tests/test_core.py:1-12 | modified pkg/core.py",
        "pkg/core.py:8-30 pkg/util.py:1-5 tests/test_core.py:3-3,7-7 | modified pkg/core.py",
    ),
    (
        "runs/sweagent/demo__demo-1/demo__demo-1.traj",
        Format::SweAgent,
        "model-c",
        "pkg/core.py:1-40 tests/test_core.py:1-6 | modified pkg/core.py",
        "pkg/core.py:1-40 tests/test_core.py:1-6 | modified pkg/core.py",
    ),
    (
        "runs/openhands/output.jsonl",
        Format::OpenHands,
        "model-d",
        "README.md:1-4 pkg/core.py:5-28 tests/test_core.py:3-3 | modified pkg/core.py",
        "README.md:1-4 pkg/core.py:5-28 tests/test_core.py:3-3 | modified pkg/core.py",
    ),
    (
        "runs/unified/demo__demo-1.json",
        Format::Unified,
        "model-a",
        "pkg/core.py:1-40 pkg/util.py:1-20 tests/test_core.py:1-8 | modified pkg/core.py",
        "pkg/core.py:1-40 pkg/util.py:1-20 tests/test_core.py:1-8 | modified pkg/core.py",
    ),
];

#[test]
fn each_format_is_read_and_extracted() {
    for &(file, format, model, reference, shown) in FORMATS {
        let t = load_one(file);
        assert_eq!(t.format, format, "{file}");
        assert_eq!(t.instance_id.as_deref(), Some("demo__demo-1"), "{file}");
        assert_eq!(t.model.as_deref(), Some(model), "{file}");
        assert_eq!(
            render_reads(&t, ReadPolicy::Reference),
            reference,
            "{file} (reference)"
        );
        assert_eq!(render_reads(&t, ReadPolicy::Shown), shown, "{file} (shown)");
    }
}

#[test]
fn rejected_actions_are_kept_as_discards() {
    let t = load_one("runs/mini/demo__demo-1.traj.json");
    let repo = SnapshotDir::new(fixtures().join("repos/demo__demo-1"));
    let extraction = extract(&t, &repo, ReadPolicy::Reference);
    let rejected: Vec<String> = extraction
        .discards
        .iter()
        .filter(|d| d.reason == swex_bench::gt::reads::DiscardReason::Rejected)
        .map(|d| format!("{}:{}", d.raw, d.lines.clone().unwrap_or_default()))
        .collect();
    assert_eq!(rejected, vec!["README.md:1-4", "pkg/util.py:1-20"]);
}

fn build_rows(options: &BuildOptions) -> (Vec<BenchRow>, build::BuildReport) {
    let discovery = load::discover(&[fixtures().join("runs")]);
    assert!(discovery.problems.is_empty());
    let snapshots = SnapshotRoot {
        root: fixtures().join("repos"),
    };
    let (rows, report) = build::build(&discovery.trajectory_files, &snapshots, options, &|_| {});
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    (rows, report)
}

fn verdicts() -> VerdictScopes {
    let mut scopes = VerdictScopes::default();
    let dir = fixtures().join("runs/mini");
    scopes.add_directory(
        dir.clone(),
        Verdicts::load(&dir.join("resolved.json")).unwrap(),
    );
    scopes
}

fn regions(rs: &[swex_bench::dataset::Region]) -> String {
    rs.iter()
        .map(|r| format!("{}:{}-{}", r.path, r.start, r.end))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn rows_aggregate_core_optional_and_modified_files() {
    let options = BuildOptions {
        verdicts: verdicts(),
        ..BuildOptions::default()
    };
    let (rows, report) = build_rows(&options);
    // demo__demo-2 is in the runs but unresolved: its trajectory is dropped, no row.
    assert_eq!(report.unresolved, 1);
    assert_eq!(report.trajectories_read, 6);
    assert_eq!(report.trajectories_used, 5);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let gt = &row.ground_truth;
    assert_eq!(row.instance_id, "demo__demo-1");
    assert_eq!(
        regions(&gt.read_core_regions),
        "pkg/core.py:8-28 tests/test_core.py:3-3"
    );
    assert_eq!(
        gt.read_core_files,
        vec!["pkg/core.py", "tests/test_core.py"]
    );
    let optional: Vec<String> = gt
        .read_optional_regions_map
        .iter()
        .map(|(m, r)| format!("{m}: {}", regions(r)))
        .collect();
    assert_eq!(
        optional,
        vec![
            "model-a: pkg/core.py:1-7 pkg/core.py:29-40 pkg/util.py:1-20 tests/test_core.py:1-2 tests/test_core.py:4-12",
            "model-b: pkg/core.py:29-30 pkg/util.py:1-20 tests/test_core.py:1-2 tests/test_core.py:4-12",
            "model-c: pkg/core.py:1-7 pkg/core.py:29-40 tests/test_core.py:1-2 tests/test_core.py:4-6",
            "model-d: README.md:1-4 pkg/core.py:5-7",
        ]
    );
    assert_eq!(
        gt.read_optional_files_map["model-d"],
        vec!["README.md", "pkg/core.py"]
    );
    assert_eq!(gt.modified_core_files, vec!["pkg/core.py"]);
    assert_eq!(gt.main_files, vec!["pkg/core.py"]);
    assert_eq!(row.extra["meta"]["num_trajectories"], 5);
    assert_eq!(row.extra["repo_path"], "/testbed");
    // Provenance: every counted read with its trajectory and step.
    let readme = &row.extra["read_step_info"]["README.md"];
    assert_eq!(readme.as_array().unwrap().len(), 1);
    assert_eq!(readme[0]["start"], 1);
    assert_eq!(readme[0]["end"], 4);
    assert_eq!(readme[0]["step_idx"], 3);
    assert!(
        readme[0]["traj_path"]
            .as_str()
            .unwrap()
            .ends_with("runs/openhands/output.jsonl")
    );

    // The row round-trips through the reference schema.
    let text = serde_json::to_string(row).unwrap();
    let back: BenchRow = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, row);
}

#[test]
fn shown_policy_narrows_the_core() {
    let options = BuildOptions {
        policy: ReadPolicy::Shown,
        verdicts: verdicts(),
        ..BuildOptions::default()
    };
    let (rows, _) = build_rows(&options);
    assert_eq!(
        regions(&rows[0].ground_truth.read_core_regions),
        "pkg/core.py:8-25 tests/test_core.py:3-3"
    );
    assert_eq!(rows[0].extra["meta"]["read_policy"], "shown");
}

#[test]
fn model_rules_and_min_trajectories() {
    let options = BuildOptions {
        verdicts: verdicts(),
        model_rules: vec!["unified=model-e".parse::<ModelRule>().unwrap()],
        ..BuildOptions::default()
    };
    let (rows, _) = build_rows(&options);
    let models: Vec<&String> = rows[0]
        .ground_truth
        .read_optional_regions_map
        .keys()
        .collect();
    assert_eq!(
        models,
        vec!["model-a", "model-b", "model-c", "model-d", "model-e"]
    );

    let options = BuildOptions {
        verdicts: verdicts(),
        min_trajectories: 6,
        ..BuildOptions::default()
    };
    let (rows, report) = build_rows(&options);
    assert!(rows.is_empty());
    assert_eq!(report.skipped.len(), 1);
    assert!(
        report.skipped[0]
            .reason
            .contains("fewer than --min-trajectories 6")
    );
    assert!("no-equals-sign".parse::<ModelRule>().is_err());
}

#[test]
fn bad_inputs_are_reported_and_the_rest_goes_on() {
    let discovery = load::discover(&[fixtures().join("runs"), fixtures().join("bad")]);
    let options = BuildOptions {
        verdicts: verdicts(),
        ..BuildOptions::default()
    };
    let snapshots = SnapshotRoot {
        root: fixtures().join("repos"),
    };
    let (rows, report) = build::build(&discovery.trajectory_files, &snapshots, &options, &|_| {});
    let mut messages: Vec<String> = report
        .problems
        .iter()
        .map(|p| {
            let name = p.file.file_name().unwrap().to_string_lossy().to_string();
            let location = p.location.clone().unwrap_or_default();
            format!(
                "{name} @ {location}: {}",
                p.message.split(';').next().unwrap()
            )
        })
        .collect();
    messages.sort();
    assert_eq!(
        messages,
        vec![
            "truncated.traj.json @ line 1 column 107: invalid JSON: EOF while parsing a list",
            "unknown.json @ : unknown trajectory format: object with keys [transcript]",
        ]
    );
    assert_eq!(rows.len(), 1, "the good instance still gets its row");
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].instance_id, "demo__demo-9");
    assert!(
        report.skipped[0]
            .reason
            .starts_with("no repository snapshot at "),
        "{}",
        report.skipped[0].reason
    );
}
