//! Training data for a learned ranker: the candidates an explorer saw for each benchmark row, with
//! their feature rows, labelled by the row's ground truth.
//!
//! An explorer that can be trained writes its candidates' features into a note of its answer (a
//! line that starts with a prefix the caller names, then one JSON object
//! `{"features": [names], "candidates": [{"path", "row", "linear"}]}`); `swex train` runs it over
//! a benchmark like `swex bench` does and joins the notes with the rows here. The gold files of a
//! row are its ground truth's `read_core_files` (for rows made from a fix, the files the fix
//! changes), tests left out: the ranker orders source files, and tests are never candidates.
//!
//! Invariant: every row of the benchmark the run was asked for ends in exactly one place, a
//! training example or a [`Missing`] entry with its reason; nothing is dropped silently.

use crate::dataset::Benchmark;
use crate::report::{language_of, repo_of};
use crate::results::ResultRow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One candidate file of an example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub path: String,
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
/// note) with the benchmark rows `ids` names. `is_test` says which gold files are tests.
pub fn training_set(
    bench: &Benchmark,
    ids: &[&str],
    results: &[ResultRow],
    note_prefix: &str,
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
        set.examples.push(Example {
            id: id.to_owned(),
            repo: repo_of(id, row),
            language: language_of(row).to_ascii_lowercase(),
            features: note.features,
            gold,
            candidates: note.candidates,
        });
    }
    set
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
        let set = training_set(&b, &ids, &results, "f: ", |p| p.starts_with("tests/"));
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
}
