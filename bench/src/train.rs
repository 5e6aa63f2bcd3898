//! Training data for a learned ranker: the candidates an explorer saw for each benchmark row, with
//! their feature rows, labelled by the row's ground truth.
//!
//! An explorer that can be trained writes its candidates' features into a note of its answer (a
//! line that starts with a prefix the caller names, then one JSON object
//! `{"features": [names], "candidates": [{"path", "row", "linear"}]}`, span candidates with
//! `start` and `end` too); `swex train` runs it over a benchmark like `swex bench` does and joins
//! the notes with the rows here. Two [`Unit`]s of ranking:
//! - **files**: one example per row, its candidate files; the gold files are the ground truth's
//!   `read_core_files` (for rows made from a fix, the files the fix changes), tests left out: the
//!   ranker orders source files, and tests are never candidates.
//! - **spans**: one example per gold file that has candidate spans, its spans (named
//!   `path:start-end`); the gold spans are those that overlap a `read_core_regions` region of the
//!   file (for rows made from a fix, the lines it edits).
//!
//! Invariant: every row of the benchmark the run was asked for ends in exactly one place, its
//! training examples or a [`Missing`] entry with its reason; nothing is dropped silently.

use crate::dataset::{Benchmark, Region};
use crate::report::{language_of, repo_of};
use crate::results::ResultRow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a ranker orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The candidate files of a row.
    Files,
    /// The candidate spans of each gold file of a row.
    Spans,
}

/// One candidate (a file, or a span of one) of an example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub path: String,
    /// The span's lines (1-based, closed), for span candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
    pub row: Vec<f64>,
    /// The explorer's own (untrained) score, for comparison.
    pub linear: f64,
}

/// One benchmark row as a ranking example (a line of the dataset the trainer reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub id: String,
    pub repo: String,
    pub language: String,
    pub features: Vec<String>,
    /// The files a good ranking puts first (see the module doc).
    pub gold: Vec<String>,
    pub candidates: Vec<Candidate>,
}

impl Example {
    /// Whether a gold file is among the candidates (otherwise the example teaches nothing, but
    /// still counts as a miss in the metrics).
    pub fn has_gold_candidate(&self) -> bool {
        self.candidates.iter().any(|c| self.gold.contains(&c.path))
    }
}

/// A row that did not become an example, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub id: String,
    pub reason: String,
}

/// The examples of a run, in benchmark order, and the rows that are not.
#[derive(Debug, Default)]
pub struct TrainingSet {
    pub examples: Vec<Example>,
    pub missing: Vec<Missing>,
}

#[derive(Deserialize)]
struct FeaturesNote {
    features: Vec<String>,
    candidates: Vec<Candidate>,
}

/// Joins the result rows of a run (one per instance: the explorer's answer with its features
/// note) with the benchmark rows `ids` names, as examples of `unit`. `is_test` says which gold
/// files are tests.
pub fn training_set(
    bench: &Benchmark,
    ids: &[&str],
    results: &[ResultRow],
    note_prefix: &str,
    unit: Unit,
    is_test: impl Fn(&str) -> bool,
) -> TrainingSet {
    let by_id: BTreeMap<&str, &ResultRow> = results
        .iter()
        .map(|r| (r.instance_id.as_str(), r))
        .collect();
    let mut set = TrainingSet::default();
    let mut features: Option<Vec<String>> = None;
    for &id in ids {
        let row = bench.get(id);
        let missing = |reason: String| Missing {
            id: id.to_owned(),
            reason,
        };
        let Some(result) = by_id.get(id) else {
            set.missing.push(missing("no answer in the run".into()));
            continue;
        };
        if let Some(error) = &result.error {
            set.missing
                .push(missing(format!("the explorer failed: {error}")));
            continue;
        }
        let Some(note) = result
            .notes
            .iter()
            .find_map(|n| n.strip_prefix(note_prefix))
        else {
            set.missing.push(missing(format!(
                "the answer has no `{}` note (is the explorer configured to emit features?)",
                note_prefix.trim_end()
            )));
            continue;
        };
        let note: FeaturesNote = match serde_json::from_str(note) {
            Ok(note) => note,
            Err(e) => {
                set.missing
                    .push(missing(format!("its features note is not valid: {e}")));
                continue;
            }
        };
        if let Some(bad) = note
            .candidates
            .iter()
            .find(|c| c.row.len() != note.features.len())
        {
            set.missing.push(missing(format!(
                "{}: a row of {} values for {} features",
                bad.path,
                bad.row.len(),
                note.features.len()
            )));
            continue;
        }
        match &features {
            Some(first) if *first != note.features => {
                set.missing.push(missing(
                    "its features differ from the first row's (answers of two explorer builds?)"
                        .into(),
                ));
                continue;
            }
            Some(_) => {}
            None => features = Some(note.features.clone()),
        }
        let gold: Vec<String> = row
            .map(|r| {
                r.ground_truth
                    .read_core_files
                    .iter()
                    .filter(|p| !is_test(p))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if gold.is_empty() {
            set.missing
                .push(missing("its ground truth names no source file".into()));
            continue;
        }
        let example = Example {
            id: id.to_owned(),
            repo: repo_of(id, row),
            language: language_of(row).to_ascii_lowercase(),
            features: note.features,
            gold,
            candidates: note.candidates,
        };
        match unit {
            Unit::Files => set.examples.push(example),
            Unit::Spans => {
                let regions = row.map_or(&[][..], |r| &r.ground_truth.read_core_regions[..]);
                match span_examples(example, regions) {
                    Ok(examples) => set.examples.extend(examples),
                    Err(reason) => set.missing.push(missing(reason)),
                }
            }
        }
    }
    set
}

/// A row's file example split into one span example per gold file with candidate spans: the
/// spans named `path:start-end`, gold when they overlap a region of the file.
fn span_examples(file_example: Example, regions: &[Region]) -> Result<Vec<Example>, String> {
    if let Some(c) = file_example
        .candidates
        .iter()
        .find(|c| c.start.is_none() || c.end.is_none())
    {
        return Err(format!(
            "{}: a candidate without `start` and `end` (a files note, not a spans note?)",
            c.path
        ));
    }
    let mut examples = Vec::new();
    for gold_file in &file_example.gold {
        let edited: Vec<(i64, i64)> = regions
            .iter()
            .filter(|r| r.path == *gold_file)
            // `end` -1 is "to the end of the file".
            .map(|r| (r.start, if r.end < 0 { i64::MAX } else { r.end }))
            .collect();
        let candidates: Vec<Candidate> = file_example
            .candidates
            .iter()
            .filter(|c| c.path == *gold_file)
            .map(|c| Candidate {
                path: format!("{}:{}-{}", c.path, c.start.unwrap_or(0), c.end.unwrap_or(0)),
                ..c.clone()
            })
            .collect();
        if edited.is_empty() || candidates.is_empty() {
            continue;
        }
        let gold = candidates
            .iter()
            .filter(|c| {
                let (start, end) = (c.start.unwrap_or(0), c.end.unwrap_or(0));
                edited.iter().any(|&(s, e)| s <= end && start <= e)
            })
            .map(|c| c.path.clone())
            .collect();
        examples.push(Example {
            id: format!("{} {gold_file}", file_example.id),
            repo: file_example.repo.clone(),
            language: file_example.language.clone(),
            features: file_example.features.clone(),
            gold,
            candidates,
        });
    }
    if examples.is_empty() {
        return Err(
            "no gold source file with ground-truth regions has candidate spans (the explorer did not plan it)"
                .into(),
        );
    }
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::LoadOptions;
    use std::io::Write;

    fn bench(rows: &[serde_json::Value]) -> Benchmark {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for row in rows {
            writeln!(file, "{row}").unwrap();
        }
        Benchmark::load(file.path(), &LoadOptions::default()).unwrap()
    }

    fn result(id: &str, notes: Vec<String>, error: Option<&str>) -> ResultRow {
        let mut row: ResultRow = serde_json::from_value(serde_json::json!({
            "instance_id": id, "explorer": "swex", "top_k": 10
        }))
        .unwrap();
        row.notes = notes;
        row.error = error.map(str::to_owned);
        row
    }

    #[test]
    fn rows_become_examples_or_say_why_not() {
        let gt = |files: &[&str]| {
            serde_json::json!({
                "read_core_files": files,
                "read_core_regions": files.iter().map(|f| serde_json::json!({"path": f, "start": 1, "end": 2})).collect::<Vec<_>>(),
            })
        };
        let b = bench(&[
            serde_json::json!({"instance_id": "o__r-1", "repo": "o/r", "language": "rust", "problem_statement": "x", "ground_truth": gt(&["src/a.rs", "tests/t.rs"])}),
            serde_json::json!({"instance_id": "o__r-2", "repo": "o/r", "problem_statement": "x", "ground_truth": gt(&["src/b.py"])}),
            serde_json::json!({"instance_id": "o__r-3", "repo": "o/r", "problem_statement": "x", "ground_truth": gt(&["src/c.rs"])}),
            serde_json::json!({"instance_id": "o__r-4", "repo": "o/r", "problem_statement": "x", "ground_truth": gt(&["src/d.rs"])}),
            serde_json::json!({"instance_id": "o__r-5", "repo": "o/r", "problem_statement": "x", "ground_truth": gt(&["tests/only.rs"])}),
        ]);
        let note = |candidates: serde_json::Value| {
            format!(
                "f: {}",
                serde_json::json!({"features": ["x", "y"], "candidates": candidates})
            )
        };
        let results = vec![
            result(
                "o__r-1",
                vec![
                    "other note".into(),
                    note(
                        serde_json::json!([{"path": "src/a.rs", "row": [1.0, 2.0], "linear": 0.5}]),
                    ),
                ],
                None,
            ),
            result("o__r-2", vec![note(serde_json::json!([]))], None),
            result("o__r-3", vec![], Some("boom")),
            result("o__r-5", vec![note(serde_json::json!([]))], None),
            result(
                "o__r-6",
                vec![note(
                    serde_json::json!([{"path": "a", "row": [1.0], "linear": 0.0}]),
                )],
                None,
            ),
        ];
        let ids = ["o__r-1", "o__r-2", "o__r-3", "o__r-4", "o__r-5"];
        let set = training_set(&b, &ids, &results, "f: ", Unit::Files, |p| {
            p.starts_with("tests/")
        });
        let examples: Vec<(&str, &str, &[String], bool)> = set
            .examples
            .iter()
            .map(|e| {
                (
                    e.id.as_str(),
                    e.language.as_str(),
                    e.gold.as_slice(),
                    e.has_gold_candidate(),
                )
            })
            .collect();
        assert_eq!(
            examples,
            [
                ("o__r-1", "rust", &["src/a.rs".to_owned()][..], true),
                // No language field: the core files' extension says it.
                ("o__r-2", "python", &["src/b.py".to_owned()][..], false),
            ]
        );
        let missing: Vec<(&str, &str)> = set
            .missing
            .iter()
            .map(|m| (m.id.as_str(), m.reason.as_str()))
            .collect();
        assert_eq!(
            missing,
            [
                ("o__r-3", "the explorer failed: boom"),
                ("o__r-4", "no answer in the run"),
                ("o__r-5", "its ground truth names no source file"),
            ]
        );
    }

    #[test]
    fn span_examples_are_the_spans_of_each_gold_file_labelled_by_its_edited_lines() {
        let row = |id: &str, regions: serde_json::Value| {
            serde_json::json!({"instance_id": id, "repo": "o/r", "language": "go", "problem_statement": "x",
                "ground_truth": {"read_core_files": ["a.go", "b.go", "a_test.go"], "read_core_regions": regions}})
        };
        let b = bench(&[
            row(
                "o__r-1",
                serde_json::json!([
                    {"path": "a.go", "start": 12, "end": 12},
                    {"path": "b.go", "start": 40, "end": -1},
                    {"path": "a_test.go", "start": 1, "end": 5},
                ]),
            ),
            row(
                "o__r-2",
                serde_json::json!([{"path": "a.go", "start": 1, "end": 1}]),
            ),
            row(
                "o__r-3",
                serde_json::json!([{"path": "a.go", "start": 1, "end": 1}]),
            ),
        ]);
        let span = |path: &str, start: i64, end: i64| serde_json::json!({"path": path, "start": start, "end": end, "row": [start as f64], "linear": 0.0});
        let note = |candidates: serde_json::Value| {
            format!(
                "s: {}",
                serde_json::json!({"features": ["x"], "candidates": candidates})
            )
        };
        let results = vec![
            result(
                "o__r-1",
                vec![note(serde_json::json!([
                    span("a.go", 1, 10),
                    span("a.go", 11, 20),
                    span("c.go", 11, 20),
                    span("b.go", 1, 39),
                    span("b.go", 30, 45),
                    span("a_test.go", 1, 5),
                ]))],
                None,
            ),
            // The gold files were not planned.
            result(
                "o__r-2",
                vec![note(serde_json::json!([span("c.go", 1, 10)]))],
                None,
            ),
            // A files note.
            result(
                "o__r-3",
                vec![note(
                    serde_json::json!([{"path": "a.go", "row": [1.0], "linear": 0.0}]),
                )],
                None,
            ),
        ];
        let ids = ["o__r-1", "o__r-2", "o__r-3"];
        let set = training_set(&b, &ids, &results, "s: ", Unit::Spans, |p| {
            p.ends_with("_test.go")
        });
        let examples: Vec<(&str, Vec<&str>, Vec<&str>)> = set
            .examples
            .iter()
            .map(|e| {
                (
                    e.id.as_str(),
                    e.candidates.iter().map(|c| c.path.as_str()).collect(),
                    e.gold.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            examples,
            [
                (
                    "o__r-1 a.go",
                    vec!["a.go:1-10", "a.go:11-20"],
                    vec!["a.go:11-20"]
                ),
                // A region to the end of the file (`end` -1) reaches every span after its start.
                (
                    "o__r-1 b.go",
                    vec!["b.go:1-39", "b.go:30-45"],
                    vec!["b.go:30-45"]
                ),
            ]
        );
        assert_eq!(set.examples[0].language, "go");
        let missing: Vec<&str> = set.missing.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(missing, ["o__r-2", "o__r-3"]);
        assert!(set.missing[0].reason.contains("did not plan it"));
        assert!(set.missing[1].reason.contains("without `start` and `end`"));
    }
}
