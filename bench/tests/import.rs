//! `swex dataset import` on small hand-made rows of every schema (`tests/data/import/`): the bench
//! rows written (`expected.jsonl`) and every row not imported with its reason
//! (`expected-problems.txt`). The golden files were checked by hand against the rules of
//! docs/dataset.md; `SWEX_UPDATE_GOLDEN=1` rewrites them.

use std::path::{Path, PathBuf};
use swex_bench::fix::FixTruth;
use swex_bench::import::{ImportOptions, import};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/import")
}

fn inputs() -> Vec<PathBuf> {
    [
        "swe-bench.jsonl",
        "lite.json",
        "pro.jsonl",
        "multi-swe-bench.jsonl",
        "train.jsonl",
        "unknown.jsonl",
        "lite.parquet",
        "multi-swe-bench.parquet",
    ]
    .iter()
    .map(|f| data().join(f))
    .collect()
}

fn golden(name: &str, got: &str) {
    let path = data().join(name);
    if std::env::var_os("SWEX_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(got, expected, "{name} differs");
}

#[test]
fn every_schema_imports_and_bad_rows_are_reported() {
    let imported = import(&inputs(), &ImportOptions::default()).unwrap();
    let rows: String = imported
        .rows
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    golden("expected.jsonl", &rows);
    let prefix = format!("{}/", data().display());
    let problems: String = imported
        .problems
        .iter()
        .map(|p| {
            format!(
                "{} {}: {}\n",
                p.at.replace(&prefix, ""),
                p.instance_id.as_deref().unwrap_or("-"),
                p.reason
            )
        })
        .collect();
    golden("expected-problems.txt", &problems);
    assert_eq!(imported.duplicates, 1);
    let counts: Vec<(&str, usize)> = imported.by_schema.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(
        counts,
        vec![
            ("multi-swe-bench", 2),
            ("swe-bench", 3),
            ("swe-bench-pro", 1),
            ("swex-train", 1)
        ]
    );
    // Gold files are exactly the patch's pre-existing changed files.
    for row in &imported.rows {
        let truth = FixTruth::of(&row.ground_truth).unwrap().unwrap();
        assert_eq!(
            row.ground_truth.read_core_files, truth.files,
            "{}",
            row.instance_id
        );
        assert!(
            !truth.has_definitions(),
            "no --repos: definitions come later"
        );
    }
}

#[test]
fn with_snapshots_the_definitions_are_found_and_a_patch_that_does_not_apply_is_reported() {
    let repos = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fix");
    let copy = |from: &Path, to: &Path| {
        for entry in walk(from) {
            let target = to.join(entry.strip_prefix(from).unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&entry, &target).unwrap();
        }
    };
    copy(
        &fixtures.join("python/before"),
        &repos.path().join("acme__calc-1"),
    );
    // acme__server-7's snapshot holds another version of server.go: its patch does not apply.
    copy(
        &fixtures.join("python/before"),
        &repos.path().join("acme__calc-5"),
    );
    std::fs::create_dir_all(repos.path().join("acme__server-7")).unwrap();
    std::fs::write(
        repos.path().join("acme__server-7/server.go"),
        "package server\n",
    )
    .unwrap();
    let files = vec![
        data().join("swe-bench.jsonl"),
        data().join("lite.json"),
        data().join("multi-swe-bench.jsonl"),
    ];
    let imported = import(
        &files,
        &ImportOptions {
            repos: Some(repos.path().to_path_buf()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(imported.with_definitions, 2);
    let expected: FixTruth = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("python/expected.json")).unwrap(),
    )
    .unwrap();
    for row in &imported.rows {
        assert_eq!(
            FixTruth::of(&row.ground_truth).unwrap().unwrap(),
            expected,
            "{}",
            row.instance_id
        );
    }
    let server = imported
        .problems
        .iter()
        .find(|p| p.instance_id.as_deref() == Some("acme__server-7"))
        .unwrap();
    assert_eq!(
        server.reason,
        "the patch does not apply to the base commit: server.go: hunk 1 does not apply at line 7: the file ends before \"func (s *Server) Addr() string {\""
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn release_rows_keep_their_ground_truth_and_take_issue_commit_and_fix_from_the_tasks() {
    let options = ImportOptions {
        release: Some(data().join("release.jsonl")),
        ..Default::default()
    };
    let imported = import(&inputs(), &options).unwrap();
    let rows: String = imported
        .rows
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    golden("expected-release.jsonl", &rows);
    let prefix = format!("{}/", data().display());
    let problems: String = imported
        .problems
        .iter()
        .filter(|p| p.at.contains("release.jsonl"))
        .map(|p| {
            format!(
                "{} {}: {}\n",
                p.at.replace(&prefix, ""),
                p.instance_id.as_deref().unwrap_or("-"),
                p.reason
            )
        })
        .collect();
    golden("expected-release-problems.txt", &problems);
    // Two release rows joined; of the 7 task rows, 3 were asked for (one of them in conflict).
    assert_eq!(imported.rows.len(), 2);
    assert_eq!(imported.unused_tasks, 4);
    let calc = &imported.rows[0];
    assert_eq!(
        calc.ground_truth.read_core_regions.len(),
        1,
        "the release's own ground truth is kept"
    );
    assert!(
        FixTruth::of(&calc.ground_truth).is_some(),
        "the fix's ground truth is added beside it"
    );
}

#[test]
fn the_schema_table_of_the_docs_is_the_code_s() {
    // docs/dataset.md lists one row per schema of `SCHEMAS`, in the same order, no more.
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/dataset.md"))
            .unwrap();
    let section = docs.split("## Schemas").nth(1).unwrap();
    let documented: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("| schema"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('`').nth(1).unwrap())
        .collect();
    let code: Vec<&str> = swex_bench::import::schema::SCHEMAS
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(documented, code);
}
