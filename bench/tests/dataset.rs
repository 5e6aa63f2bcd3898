//! The shared loaders: benchmark rows, result rows, issue maps and line-count files. Bad input is an
//! error naming file, line and field; lenient loads skip it and say why; filters list what they
//! leave out.

use std::path::PathBuf;
use swex_bench::dataset::{
    Benchmark, InputError, IssueMap, LoadOptions, Outcome, Predictions, Region, RowErrorKind,
    load_issue_map, summarize_skipped,
};
use swex_bench::linecounts::LineCounts;

const GOOD: &str = r#"{"instance_id": "a", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#;

fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.jsonl");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Loading `text` as a benchmark fails at `line` on `field` with `kind`.
fn check_bench_error(text: &str, line: usize, field: Option<&str>, kind: RowErrorKind) {
    let (_dir, path) = file(text);
    match Benchmark::load(&path, &LoadOptions::default()) {
        Err(InputError::Row { path: p, error }) => {
            assert_eq!(p, path);
            assert_eq!(
                (error.line, error.field.as_deref(), error.kind),
                (line, field, kind),
                "{error}"
            );
        }
        other => panic!("expected a row error for {text:?}, got {other:?}"),
    }
}

#[test]
fn bad_benchmark_rows_are_errors_naming_line_and_field() {
    use RowErrorKind::*;
    check_bench_error(
        &format!("{GOOD}\n{{\"instance_id\": \"b\",\n"),
        2,
        None,
        MalformedJson,
    );
    check_bench_error("[1, 2]", 1, None, NotAnObject);
    check_bench_error(
        r#"{"ground_truth": {}}"#,
        1,
        Some("instance_id"),
        MissingField,
    );
    check_bench_error(
        r#"{"instance_id": 7, "ground_truth": {}}"#,
        1,
        Some("instance_id"),
        WrongType,
    );
    check_bench_error(
        r#"{"instance_id": "a"}"#,
        1,
        Some("ground_truth"),
        MissingField,
    );
    check_bench_error(
        r#"{"instance_id": "a", "ground_truth": "x"}"#,
        1,
        Some("ground_truth"),
        WrongType,
    );
    let region = |r: &str| {
        format!(
            r#"{{"instance_id": "a", "ground_truth": {{"read_core_regions": [{{"path": "x.py", "start": 1, "end": 2}}, {r}]}}}}"#
        )
    };
    let field = "ground_truth.read_core_regions[1].end";
    check_bench_error(
        &region(r#"{"path": "x.py", "start": 1}"#),
        1,
        Some(field),
        MissingField,
    );
    check_bench_error(
        &region(r#"{"path": "x.py", "start": 1, "end": "9"}"#),
        1,
        Some(field),
        BadLineNumber,
    );
    check_bench_error(
        &region(r#"{"path": "x.py", "start": 1, "end": -2}"#),
        1,
        Some(field),
        BadLineNumber,
    );
    check_bench_error(
        &region(r#"{"path": "x.py", "start": 1.5, "end": 3}"#),
        1,
        Some("ground_truth.read_core_regions[1].start"),
        BadLineNumber,
    );
    check_bench_error(
        r#"{"instance_id": "a", "ground_truth": {"read_optional_regions_map": {"m": [{"path": "x.py", "start": 1, "end": -3}]}}}"#,
        1,
        Some("ground_truth.read_optional_regions_map.m[0].end"),
        BadLineNumber,
    );
    check_bench_error(
        &format!("{GOOD}\n\n{GOOD}\n"),
        3,
        Some("instance_id"),
        DuplicateId,
    );
}

#[test]
fn error_messages_name_file_line_and_field() {
    let (_dir, path) = file(&format!(
        "{GOOD}\n{}",
        GOOD.replace("\"end\": 5", "\"end\": 5.5")
            .replace("\"a\"", "\"b\"")
    ));
    let message = Benchmark::load(&path, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    let expected = format!(
        "{}:2: field `ground_truth.read_core_regions[0].end`: ",
        path.display()
    );
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains("floating point"), "{message}");
}

#[test]
fn what_the_reference_gives_a_meaning_loads() {
    // null lists read as empty, negative starts count from the end, start > end is kept, end -1
    // is "to the end", unknown fields are kept.
    let text = r#"{"instance_id": "a", "repo_path": "/testbed", "ground_truth": {"read_core_files": null, "main_files": null, "read_core_regions": [{"path": "x.py", "start": -10, "end": -1}, {"path": "x.py", "start": 9, "end": 3}]}}"#;
    let (_dir, path) = file(text);
    let bench = Benchmark::load(&path, &LoadOptions::default()).unwrap();
    let row = bench.get("a").unwrap();
    assert!(row.ground_truth.read_core_files.is_empty());
    assert_eq!(
        row.ground_truth.read_core_regions[0],
        Region::new("x.py", -10, -1)
    );
    assert_eq!(
        row.ground_truth.read_core_regions[1],
        Region::new("x.py", 9, 3)
    );
    assert_eq!(row.extra["repo_path"], "/testbed");
}

#[test]
fn lenient_loads_skip_bad_rows_and_say_why() {
    let text = format!(
        "{GOOD}\nnot json\n{}\n{GOOD}\n{}\n",
        r#"{"instance_id": "c"}"#,
        GOOD.replace("\"a\"", "\"d\"")
            .replace("\"end\": 5", "\"end\": -4"),
    );
    let (_dir, path) = file(&text);
    let options = LoadOptions {
        lenient: true,
        ..LoadOptions::default()
    };
    let bench = Benchmark::load(&path, &options).unwrap();
    assert_eq!(bench.rows.len(), 1);
    let skipped: Vec<(usize, RowErrorKind)> =
        bench.skipped.iter().map(|e| (e.line, e.kind)).collect();
    use RowErrorKind::*;
    assert_eq!(
        skipped,
        [
            (2, MalformedJson),
            (3, MissingField),
            (4, DuplicateId),
            (5, BadLineNumber)
        ]
    );
    assert_eq!(
        summarize_skipped(&bench.skipped),
        "1 malformed JSON, 1 missing field, 1 bad line number, 1 duplicate id"
    );
}

#[test]
fn filters_list_what_they_leave_out() {
    let rows = [
        r#"{"instance_id": "v1", "dataset": "verified", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#,
        r#"{"instance_id": "v2", "dataset": "verified", "ground_truth": {"read_core_regions": []}}"#,
        r#"{"instance_id": "p1", "dataset": "pro", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#,
        r#"{"instance_id": "n1", "ground_truth": {}}"#,
    ];
    let (_dir, path) = file(&rows.join("\n"));
    let all = Benchmark::load(&path, &LoadOptions::default()).unwrap();
    let ids = |b: &Benchmark| {
        b.rows
            .iter()
            .map(|r| r.instance_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&all), ["v1", "p1"]);
    assert_eq!(all.excluded_empty_core, ["v2", "n1"]);

    let verified = LoadOptions {
        dataset: Some("verified".into()),
        ..LoadOptions::default()
    };
    let bench = Benchmark::load(&path, &verified).unwrap();
    assert_eq!(ids(&bench), ["v1"]);
    assert_eq!(bench.excluded_by_dataset, ["p1", "n1"]);
    assert_eq!(bench.excluded_empty_core, ["v2"]);
    assert!(bench.excluded("p1") && !bench.excluded("zz"));

    let keep = LoadOptions {
        keep_empty_core: true,
        ..verified
    };
    assert_eq!(ids(&Benchmark::load(&path, &keep).unwrap()), ["v1", "v2"]);
}

#[test]
fn issue_texts_join_from_the_map() {
    let rows = [
        r#"{"instance_id": "a", "problem_statement": "own text", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#,
        r#"{"instance_id": "b", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#,
        r#"{"instance_id": "c", "ground_truth": {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}]}}"#,
    ];
    let (_dir, path) = file(&rows.join("\n"));
    let mut bench = Benchmark::load(&path, &LoadOptions::default()).unwrap();
    assert_eq!(bench.rows_without_issue(), ["b", "c"]);
    let map: IssueMap = [("b".to_string(), "from the map".to_string())]
        .into_iter()
        .collect();
    let join = bench.join_issues(&map);
    assert_eq!(
        (join.from_map, join.missing.as_slice()),
        (1, &["c".to_string()][..])
    );
    assert_eq!(
        bench.get("a").unwrap().problem_statement.as_deref(),
        Some("own text")
    );
    assert_eq!(
        bench.get("b").unwrap().problem_statement.as_deref(),
        Some("from the map")
    );
}

#[test]
fn whole_document_files_name_the_bad_key() {
    let (_dir, path) = file(r#"{"a": "text", "b": 3}"#);
    let message = load_issue_map(&path).unwrap_err().to_string();
    assert!(message.contains("key `b`"), "{message}");
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );

    let (_dir, path) = file(r#"{"inst": {"x.py": 10, "y.py": -1}}"#);
    let message = LineCounts::load(&path).unwrap_err().to_string();
    assert!(message.contains("key `inst.y.py`"), "{message}");

    let (_dir, path) = file(r#"{"inst": {"x.py": 10}} trailing"#);
    assert!(LineCounts::load(&path).is_err());
}

/// Loading `text` as a result file fails at `line` on `field` with `kind`.
fn check_prediction_error(text: &str, line: usize, field: Option<&str>, kind: RowErrorKind) {
    let (_dir, path) = file(text);
    match Predictions::load(&path, false) {
        Err(InputError::Row { error, .. }) => {
            assert_eq!(
                (error.line, error.field.as_deref(), error.kind),
                (line, field, kind),
                "{error}"
            );
        }
        other => panic!("expected a row error for {text:?}, got {other:?}"),
    }
}

#[test]
fn bad_result_rows_are_errors_naming_line_and_field() {
    use RowErrorKind::*;
    check_prediction_error(
        r#"{"instance_id": "a", "regions": []}"#,
        1,
        Some("explorer"),
        MissingField,
    );
    check_prediction_error(
        r#"{"instance_id": "a", "explorer": "e"}"#,
        1,
        Some("regions"),
        MissingField,
    );
    check_prediction_error(
        r#"{"instance_id": "a", "explorer": "e", "regions": [["x.py", 1, 2], {"path": "x.py", "start": "one", "end": 2}]}"#,
        1,
        Some("regions[1].start"),
        BadLineNumber,
    );
    check_prediction_error(
        r#"{"instance_id": "a", "explorer": "e", "regions": [{"path": "x.py", "start": 1, "end": -7}]}"#,
        1,
        Some("regions[0].end"),
        BadLineNumber,
    );
    check_prediction_error(
        "{\"instance_id\": \"a\", \"explorer\": \"e\", \"regions\": []}\n{\"instance_id\": \"a\", \"explorer\": \"e\", \"regions\": []}",
        2,
        Some("instance_id"),
        DuplicateId,
    );
}

#[test]
fn result_rows_hold_regions_or_a_failure() {
    let rows = [
        r#"{"instance_id": "a", "explorer": "e", "regions": [["x.py", 1, 2], {"path": "y.py", "start": 3, "end": -1}], "metrics": {"precision": 1.0}}"#,
        r#"{"instance_id": "a", "explorer": "f", "error": "timeout after 600 s"}"#,
        r#"{"instance_id": "b", "explorer": "e", "error": null, "regions": []}"#,
    ];
    let (_dir, path) = file(&rows.join("\n"));
    let predictions = Predictions::load(&path, false).unwrap();
    let outcomes: Vec<&Outcome> = predictions.rows.iter().map(|r| &r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            &Outcome::Regions(vec![Region::new("x.py", 1, 2), Region::new("y.py", 3, -1)]),
            &Outcome::Failed("timeout after 600 s".into()),
            &Outcome::Regions(vec![]),
        ]
    );
    assert_eq!(predictions.rows[0].extra["metrics"]["precision"], 1.0);
    assert_eq!(predictions.rows[2].line, 3);
}

#[test]
fn a_lenient_load_of_junk_keeps_bounded_detail() {
    let junk: String = (0..1500).map(|i| format!("junk {i}\n")).collect();
    let (_dir, path) = file(&format!("{GOOD}\n{junk}"));
    let options = LoadOptions {
        lenient: true,
        ..LoadOptions::default()
    };
    let bench = Benchmark::load(&path, &options).unwrap();
    assert_eq!(bench.rows.len(), 1);
    assert_eq!(bench.skipped.len(), 1500);
    assert_eq!(
        bench.skipped.iter().count(),
        swex_bench::dataset::SKIPPED_KEPT
    );
    assert_eq!(summarize_skipped(&bench.skipped), "1500 malformed JSON");
}
