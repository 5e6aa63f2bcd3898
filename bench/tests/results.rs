//! Result files: row format, crash recovery, strict reading, duplicate refusal.

use std::io::Write;
use std::path::Path;
use swex_bench::dataset::Region;
use swex_bench::metrics::Metrics;
use swex_bench::results::{
    OpenMode, ResultFile, ResultRow, ResultsError, Timings, read_results, top_k_from_path,
};

fn row(id: &str, explorer: &str, k: usize) -> ResultRow {
    ResultRow {
        instance_id: id.into(),
        explorer: explorer.into(),
        top_k: Some(k),
        regions: vec![Region::new("a.py", 1, 10)],
        metrics: Metrics {
            precision: 0.1,
            recall: 1.0 / 3.0,
            ..Metrics::default()
        },
        num_regions: 1,
        real_metrics: None,
        lines_returned: None,
        line_budget: None,
        error: None,
        explorer_config: serde_json::Value::Null,
        dropped: Default::default(),
        notes: Vec::new(),
        produced_by: None,
        shard: None,
        extra: Default::default(),
        timings: Some(Timings {
            snapshot_ms: 0.0,
            index_ms: 1.5,
            explore_ms: 2.25,
        }),
    }
}

fn write_rows(path: &Path, rows: &[ResultRow]) {
    let (mut file, _) = ResultFile::open(path, OpenMode::Create, None).unwrap();
    for r in rows {
        file.append(r).unwrap();
    }
    file.finish().unwrap();
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn row_format_is_fixed_with_timings_last() {
    let line = row("i-1", "bm25", 5).to_line();
    assert_eq!(
        line,
        r#"{"instance_id":"i-1","explorer":"bm25","top_k":5,"regions":[{"path":"a.py","start":1,"end":10}],"metrics":{"precision":0.1,"recall":0.3333333333333333,"f1_score":0.0,"hit_file_rate":0.0,"noise_file_rate":0.0,"hit_region_rate":0.0,"noise_region_rate":0.0,"weighted_core_coverage":0.0,"context_efficiency":0.0,"optional_coverage":0.0,"ndcg_at_100":0.0,"ndcg_at_300":0.0,"ndcg_at_500":0.0,"recall_at_100":0.0,"recall_at_300":0.0,"recall_at_500":0.0,"first_useful_hit":0.0},"num_regions":1,"timings":{"snapshot_ms":0.0,"index_ms":1.5,"explore_ms":2.25}}"#
    );
    let mut other = row("i-1", "bm25", 5);
    other.timings = Some(Timings::default());
    assert_eq!(
        row("i-1", "bm25", 5).canonical_line(),
        other.canonical_line()
    );
    assert!(!other.canonical_line().contains("timings"));
}

#[test]
fn torn_last_lines_are_cut_off_on_resume() {
    // (what a crash left after two complete rows, torn line number)
    let cases: [(&[u8], Option<usize>); 4] = [
        (b"", None),
        (b"{\"instance_id\":\"i-3\",\"expl", Some(3)),
        (b"{\"instance_id\":\"i-3\"}garbage\n", Some(3)),
        (b"\0\0\0\0", Some(3)),
    ];
    for (tail, torn) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("top5.jsonl");
        write_rows(&path, &[row("i-1", "x", 5), row("i-2", "x", 5)]);
        let clean = std::fs::read(&path).unwrap();
        append_raw(&path, tail);

        let (mut file, recovered) = ResultFile::open(&path, OpenMode::Resume, Some(5)).unwrap();
        assert_eq!(recovered.rows.len(), 2, "tail {tail:?}");
        assert_eq!(recovered.torn_line.map(|(line, _)| line), torn);
        assert_eq!(std::fs::read(&path).unwrap(), clean, "tail {tail:?}");
        file.append(&row("i-3", "x", 5)).unwrap();
        file.finish().unwrap();
        let ids: Vec<String> = read_results(&path)
            .unwrap()
            .into_iter()
            .map(|r| r.row.instance_id)
            .collect();
        assert_eq!(ids, ["i-1", "i-2", "i-3"]);
    }
}

#[test]
fn a_bad_line_before_the_last_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    write_rows(&path, &[row("i-1", "x", 5)]);
    append_raw(&path, b"{not json}\n");
    append_raw(
        &path,
        format!("{}\n", row("i-2", "x", 5).to_line()).as_bytes(),
    );

    let error = read_results(&path).unwrap_err().to_string();
    assert!(error.contains("r.jsonl:2:"), "{error}");
    let error = ResultFile::open(&path, OpenMode::Resume, None)
        .unwrap_err()
        .to_string();
    assert!(error.contains("r.jsonl:2:"), "{error}");
}

#[test]
fn reading_refuses_a_torn_last_line_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    write_rows(&path, &[row("i-1", "x", 5)]);
    append_raw(&path, b"{\"instance_id\":");
    let error = read_results(&path).unwrap_err().to_string();
    assert!(error.contains("r.jsonl:2: incomplete last line"), "{error}");
}

#[test]
fn duplicates_are_refused_when_appending_and_when_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let (mut file, _) = ResultFile::open(&path, OpenMode::Create, None).unwrap();
    file.append(&row("i-1", "x", 5)).unwrap();
    file.append(&row("i-1", "x", 10)).unwrap();
    assert!(matches!(
        file.append(&row("i-1", "x", 5)),
        Err(ResultsError::DuplicateAppend { .. })
    ));
    file.finish().unwrap();
    assert_eq!(read_results(&path).unwrap().len(), 2);

    append_raw(
        &path,
        format!("{}\n", row("i-1", "x", 5).to_line()).as_bytes(),
    );
    let error = read_results(&path).unwrap_err().to_string();
    assert!(error.contains(":3: a second row"), "{error}");
    assert!(error.contains("first on line 1"), "{error}");
}

#[test]
fn resume_keeps_keys_so_a_key_cannot_be_written_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    write_rows(&path, &[row("i-1", "x", 5)]);
    let (mut file, recovered) = ResultFile::open(&path, OpenMode::Resume, None).unwrap();
    assert_eq!(recovered.rows.len(), 1);
    assert!(file.append(&row("i-1", "x", 5)).is_err());
    file.append(&row("i-2", "x", 5)).unwrap();

    // A row without k goes in only where the file fixes one.
    let mut without_k = row("i-3", "x", 5);
    without_k.top_k = None;
    let error = file.append(&without_k).unwrap_err().to_string();
    assert!(error.contains("has no `top_k`"), "{error}");
    let (mut fixed, _) =
        ResultFile::open(&dir.path().join("top5.jsonl"), OpenMode::Create, Some(5)).unwrap();
    fixed.append(&without_k).unwrap();
    assert!(
        fixed.append(&row("i-3", "x", 5)).is_err(),
        "same key once k is filled in"
    );
}

#[test]
fn create_refuses_a_file_with_rows_and_overwrite_empties_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    write_rows(&path, &[row("i-1", "x", 5)]);
    let error = ResultFile::open(&path, OpenMode::Create, None).unwrap_err();
    assert!(error.to_string().contains("--resume"), "{error}");
    let (file, recovered) = ResultFile::open(&path, OpenMode::Overwrite, None).unwrap();
    assert!(recovered.rows.is_empty());
    file.finish().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"");
}

#[test]
fn reference_rows_take_k_from_the_file_name() {
    let cases = [
        ("top5.jsonl", Some(5)),
        ("results/bm25/top20.jsonl", Some(20)),
        ("dev.cosil-top5.jsonl", Some(5)),
        ("stop5.jsonl", None),
        ("top.jsonl", None),
        ("top0.jsonl", None),
        ("results.jsonl", None),
    ];
    for (name, k) in cases {
        assert_eq!(top_k_from_path(Path::new(name)), k, "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let reference_line = r#"{"instance_id": "i-1", "explorer": "cosil", "regions": [{"path": "a.py", "start": 1, "end": 2}], "metrics": {"precision": 1.0, "recall": 1.0, "f1_score": 1.0, "hit_file_rate": 1.0, "noise_file_rate": 0.0, "hit_region_rate": 1.0, "noise_region_rate": 0.0, "weighted_core_coverage": 1.0, "context_efficiency": 1.0, "optional_coverage": 0.0, "ndcg_at_100": 1.0, "ndcg_at_300": 1.0, "ndcg_at_500": 1.0, "recall_at_100": 1.0, "recall_at_300": 1.0, "recall_at_500": 1.0, "first_useful_hit": 1.0}, "num_regions": 1, "token_usage": {"input": 3}}"#;
    let with_k = dir.path().join("top5.jsonl");
    std::fs::write(&with_k, format!("{reference_line}\n")).unwrap();
    let rows = read_results(&with_k).unwrap();
    assert_eq!(rows[0].row.top_k, Some(5));
    assert_eq!(rows[0].row.extra["token_usage"]["input"], 3);

    let without_k = dir.path().join("cosil.jsonl");
    std::fs::write(&without_k, format!("{reference_line}\n")).unwrap();
    let error = read_results(&without_k).unwrap_err().to_string();
    assert!(error.contains("cosil.jsonl:1: no `top_k`"), "{error}");
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("top5.jsonl");
    let mut text = b"\xEF\xBB\xBF".to_vec();
    text.extend_from_slice(row("i-0", "a", 5).to_line().as_bytes());
    text.push(b'\n');
    std::fs::write(&path, &text).unwrap();
    assert_eq!(read_results(&path).unwrap().len(), 1);
    let (_, recovered) = ResultFile::open(&path, OpenMode::Resume, Some(5)).unwrap();
    assert_eq!(recovered.rows.len(), 1);
}
