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

/// A one-row SWE-bench task file written by the `parquet` crate itself with `compression`.
fn write_parquet(path: &Path, compression: parquet::basic::Compression) {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    let columns = [
        ("instance_id", "acme__calc-9".to_string()),
        ("repo", "acme/calc".to_string()),
        ("base_commit", "a".repeat(40)),
        (
            "patch",
            "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n".to_string(),
        ),
        ("problem_statement", "f returns 1".to_string()),
    ];
    let message = format!(
        "message task {{ {} }}",
        columns
            .iter()
            .map(|(name, _)| format!("required binary {name} (UTF8);"))
            .collect::<String>()
    );
    let schema = Arc::new(parquet::schema::parser::parse_message_type(&message).unwrap());
    let properties = Arc::new(
        WriterProperties::builder()
            .set_compression(compression)
            .build(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, schema, properties).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut values = columns.iter();
    while let Some(mut column) = group.next_column().unwrap() {
        let (_, value) = values.next().unwrap();
        column
            .typed::<ByteArrayType>()
            .write_batch(&[ByteArray::from(value.as_str())], None, None)
            .unwrap();
        column.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

#[test]
fn parquet_files_are_read_with_every_codec_published_files_use() {
    use parquet::basic::{Compression, GzipLevel, ZstdLevel};
    let tmp = tempfile::tempdir().unwrap();
    for (name, compression) in [
        ("uncompressed", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ("gzip", Compression::GZIP(GzipLevel::default())),
        ("lz4-raw", Compression::LZ4_RAW),
    ] {
        let path = tmp.path().join(format!("{name}.parquet"));
        write_parquet(&path, compression);
        let imported = import(&[path], &ImportOptions::default()).unwrap();
        assert_eq!(imported.problems, vec![], "{name}");
        assert_eq!(imported.rows.len(), 1, "{name}");
        let row = &imported.rows[0];
        assert_eq!(row.instance_id, "acme__calc-9", "{name}");
        assert_eq!(row.ground_truth.read_core_files, ["calc.py"], "{name}");
    }
}

#[test]
fn test_lists_are_read_as_json_text_python_literals_or_arrays() {
    let patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
    let row = |id: &str, lists: serde_json::Value| {
        let mut row = serde_json::json!({"instance_id": id, "repo": "acme/calc",
            "base_commit": "a".repeat(40), "patch": patch, "problem_statement": "f returns 1"});
        row.as_object_mut()
            .unwrap()
            .extend(lists.as_object().unwrap().clone());
        row.to_string() + "\n"
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tasks.jsonl");
    std::fs::write(
        &file,
        [
            // SWE-bench Pro: Python literal strings, quotes and escapes as `repr` writes them.
            row(
                "instance_acme__calc-1",
                serde_json::json!({"fail_to_pass": "['tests/test_calc.py::test_f[it\\'s]', \"tests/test_calc.py::test_g[\\\"q\\\"]\"]",
                    "pass_to_pass": "[]", "selected_test_files_to_run": "['tests/test_calc.py']"}),
            ),
            // SWE-bench: JSON text in a string.
            row(
                "acme__calc-2",
                serde_json::json!({"FAIL_TO_PASS": "[\"tests/test_calc.py::test_f\"]", "PASS_TO_PASS": "[]"}),
            ),
            // A copy that stores real arrays.
            row(
                "acme__calc-3",
                serde_json::json!({"FAIL_TO_PASS": ["t1", "t2"]}),
            ),
            row(
                "acme__calc-4",
                serde_json::json!({"FAIL_TO_PASS": "['t1', 2]"}),
            ),
            row("acme__calc-5", serde_json::json!({"FAIL_TO_PASS": 7})),
        ]
        .concat(),
    )
    .unwrap();
    let imported = import(&[file], &ImportOptions::default()).unwrap();
    let lists: Vec<serde_json::Value> = imported
        .rows
        .iter()
        .map(|r| {
            let keep: serde_json::Map<_, _> = r
                .extra
                .iter()
                .filter(|(k, _)| k.contains("_to_") || k.starts_with("selected"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            serde_json::Value::Object(keep)
        })
        .collect();
    assert_eq!(
        lists,
        [
            serde_json::json!({"fail_to_pass": ["tests/test_calc.py::test_f[it's]", "tests/test_calc.py::test_g[\"q\"]"],
                "pass_to_pass": [], "selected_test_files_to_run": ["tests/test_calc.py"]}),
            serde_json::json!({"fail_to_pass": ["tests/test_calc.py::test_f"], "pass_to_pass": []}),
            serde_json::json!({"fail_to_pass": ["t1", "t2"]}),
        ]
    );
    let reasons: Vec<(&str, &str)> = imported
        .problems
        .iter()
        .map(|p| (p.instance_id.as_deref().unwrap(), p.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "acme__calc-4",
                "`FAIL_TO_PASS` is a string but not a list of strings as JSON or a Python literal: expected a string at byte 7 ('2')"
            ),
            (
                "acme__calc-5",
                "`FAIL_TO_PASS` is a number, not a list of strings"
            ),
        ]
    );
}

#[test]
fn a_release_row_twice_is_kept_once_and_reported_when_it_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let release = tmp.path().join("release.jsonl");
    let text = std::fs::read_to_string(data().join("release.jsonl")).unwrap();
    let first = text.lines().next().unwrap();
    let changed = first.replace("\"start\": 4", "\"start\": 5");
    assert_ne!(first, changed);
    std::fs::write(&release, format!("{first}\n{first}\n{changed}\n")).unwrap();
    let options = ImportOptions {
        release: Some(release),
        ..Default::default()
    };
    let imported = import(&inputs(), &options).unwrap();
    let ids: Vec<&str> = imported
        .rows
        .iter()
        .map(|r| r.instance_id.as_str())
        .collect();
    assert_eq!(ids, ["acme__calc-1"]);
    assert_eq!(
        imported.duplicates, 2,
        "the task files' duplicate and the release's"
    );
    let release_problems: Vec<(&str, &str)> = imported
        .problems
        .iter()
        .filter(|p| p.at.contains("release.jsonl"))
        .map(|p| (p.instance_id.as_deref().unwrap(), p.reason.as_str()))
        .collect();
    assert_eq!(
        release_problems,
        [(
            "acme__calc-1",
            "release row: the same instance id twice with different content (the first is kept)"
        )]
    );
}
