//! Where in a file to point, learned: gradient-boosted trees (trained by `swex train --unit spans`
//! on the lines real fixes edit; docs/ranker.md) that order a file's candidate spans.
//!
//! [`swex_rankkit::localize::candidate_spans`] grows a file's marked chunks into spans and orders
//! them by the summed weight of their marks, weights set by hand ([`crate::locate::MarkWeights`]).
//! The planner points at the first span (the lead file's focus when it is not read whole, every
//! other file's pointer), so that order decides where a reader looks. The span ranker reorders
//! the spans of each source file by a model over one row per span: its marks by kind (lexical
//! hits, definitions of the names, uses of them, traceback lines), how it stands among
//! the file's spans, its length and place in the file, and the kind of code it starts on. No
//! feature names a repository, a language or a file.
//!
//! Tests keep the evidence order: the fixes the model learns from edit sources.

use crate::learned::read_model;
use crate::locate::{DEFINITION, FRAME, LEXICAL, USE};
use serde::{Deserialize, Serialize};
use swex_rankkit::localize::{FileEvidence, Span};
use swex_rankkit::trees::{ModelError, TreeEnsemble};

/// The features of a span's row, in order. A model is checked against this list when loaded.
pub const SPAN_FEATURES: &[&str] = &[
    "lexical",
    "lexical_best",
    "lexical_marks_log",
    "definitions",
    "definition_marks",
    "uses",
    "use_marks_log",
    "frames",
    "evidence",
    "evidence_share",
    "evidence_rank_log",
    "lines_log",
    "start_fraction",
    "spans_log",
    "file_lines_log",
    "starts_callable",
    "starts_type",
    "starts_gap",
    "chunked",
];

/// The note that carries the candidate spans' rows (for `swex train --unit spans`): one JSON
/// object `{"features": [...], "candidates": [{"path", "start", "end", "row", "linear"}]}` after
/// the prefix, `linear` being the span's evidence (the hand-weighted order).
pub const SPAN_FEATURES_NOTE_PREFIX: &str = "swex-span-features ";

/// At most this many spans of a file go into the features note (its best by evidence): a file
/// that uses an issue's name on every other line has hundreds, and a fix's lines are nearly
/// always among the first few dozen.
const NOTE_SPANS_PER_FILE: usize = 40;

/// The model shipped with the explorer (trained on `../shared/data/train`; its `training` field
/// says on what, and its held-out metrics).
pub(crate) const DEFAULT_MODEL: &str = include_str!("../model/span-ranker.json");

/// A learned span ranker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanRanker {
    #[serde(flatten)]
    pub ensemble: TreeEnsemble,
    /// What the model was trained on and how it did on held-out folds (kept as written).
    #[serde(default)]
    pub training: serde_json::Value,
}

impl SpanRanker {
    /// The shipped model.
    pub fn shipped() -> SpanRanker {
        let value: serde_json::Value =
            serde_json::from_str(DEFAULT_MODEL).expect("the shipped span model is JSON");
        SpanRanker::from_json(&value).expect("the shipped span model is valid")
    }

    /// Reads a model: a `swex-trees/1` ensemble over features among [`SPAN_FEATURES`], by name.
    pub fn from_json(value: &serde_json::Value) -> Result<SpanRanker, ModelError> {
        let (ensemble, _temperature, training) = read_model(value, SPAN_FEATURES)?;
        Ok(SpanRanker { ensemble, training })
    }

    /// The spans of `file` (in evidence order, as [`swex_rankkit::localize::candidate_spans`]
    /// gives them) ordered by the model, best first; ties keep the evidence order.
    pub fn order(&self, file: &FileEvidence, spans: Vec<Span>) -> Vec<Span> {
        let rows = span_rows(file, &spans);
        let mut scored: Vec<(f64, Span)> = rows
            .iter()
            .map(|row| self.ensemble.score(row))
            .zip(spans)
            .collect();
        // A stable sort: equal scores keep the evidence order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, span)| span).collect()
    }
}

/// One row per span of `file` (see [`SPAN_FEATURES`]); `spans` in evidence order, best first.
pub fn span_rows(file: &FileEvidence, spans: &[Span]) -> Vec<Vec<f64>> {
    let best = spans.iter().map(|s| s.evidence).fold(0.0, f64::max);
    let line_count = f64::from(file.line_count.max(1));
    let spans_log = (1.0 + spans.len() as f64).ln();
    let file_lines_log = (1.0 + f64::from(file.line_count)).ln();
    let chunked = if file.chunks.is_empty() { 0.0 } else { 1.0 };
    let (sum, count, lexical_best) = marks_by_span(file, spans);
    spans
        .iter()
        .enumerate()
        .map(|(rank, span)| {
            let (sum, count, lexical_best) = (sum[rank], count[rank], lexical_best[rank]);
            // The chunk the span starts on (chunks are in order and do not overlap).
            let at = file.chunks.partition_point(|c| c.start <= span.start);
            let kind = at
                .checked_sub(1)
                .map(|i| &file.chunks[i])
                .filter(|c| span.start <= c.end)
                .map_or("", |c| c.kind.as_str());
            let flag = |b: bool| if b { 1.0 } else { 0.0 };
            let row = vec![
                sum[0],
                lexical_best,
                (1.0 + count[0] as f64).ln(),
                sum[1],
                count[1] as f64,
                sum[2],
                (1.0 + count[2] as f64).ln(),
                count[3] as f64,
                span.evidence,
                span.evidence / best.max(f64::MIN_POSITIVE),
                (1.0 + rank as f64).ln(),
                (1.0 + f64::from(span.lines())).ln(),
                f64::from(span.start.saturating_sub(1)) / line_count,
                spans_log,
                file_lines_log,
                flag(matches!(kind, "function" | "method")),
                flag(matches!(
                    kind,
                    "class"
                        | "struct"
                        | "enum"
                        | "interface"
                        | "trait"
                        | "impl"
                        | "module"
                        | "namespace"
                )),
                flag(matches!(kind, "gap" | "window")),
                chunked,
            ];
            debug_assert_eq!(row.len(), SPAN_FEATURES.len());
            row
        })
        .collect()
}

/// Per span: the summed weight and the number of the marks it overlaps, by kind
/// (`[lexical, definition, use, frame]`), and its best lexical mark. Each mark visits only the
/// spans it can overlap (spans by start, with the running maximum of their ends), so a file
/// with hundreds of marked spans costs marks × overlaps, not marks × spans.
#[allow(clippy::type_complexity)]
fn marks_by_span(
    file: &FileEvidence,
    spans: &[Span],
) -> (Vec<[f64; 4]>, Vec<[usize; 4]>, Vec<f64>) {
    let mut sum = vec![[0.0f64; 4]; spans.len()];
    let mut count = vec![[0usize; 4]; spans.len()];
    let mut lexical_best = vec![0.0f64; spans.len()];
    let mut by_start: Vec<usize> = (0..spans.len()).collect();
    by_start.sort_by_key(|&i| spans[i].start);
    let reach: Vec<u32> = by_start
        .iter()
        .scan(0u32, |reach, &i| {
            *reach = (*reach).max(spans[i].end);
            Some(*reach)
        })
        .collect();
    for mark in &file.marks {
        let Some(k) = [LEXICAL, DEFINITION, USE, FRAME]
            .iter()
            .position(|kind| *kind == mark.kind)
        else {
            continue;
        };
        // Spans before `first` all end before the mark; spans from `last` on start after it.
        let first = reach.partition_point(|&end| end < mark.start);
        let last = by_start.partition_point(|&i| spans[i].start <= mark.end);
        for &i in &by_start[first..last.max(first)] {
            if spans[i].end < mark.start {
                continue;
            }
            sum[i][k] += mark.weight;
            count[i][k] += 1;
            if k == 0 {
                lexical_best[i] = lexical_best[i].max(mark.weight);
            }
        }
    }
    (sum, count, lexical_best)
}

/// The span features note of the planned files (`is_test` says which to leave out): each file's
/// best `NOTE_SPANS_PER_FILE` spans by evidence, with their rows.
pub fn span_features_note(
    files: &[FileEvidence],
    spans: &[Vec<Span>],
    is_test: impl Fn(&str) -> bool,
) -> String {
    let mut candidates = Vec::new();
    for (file, spans) in files.iter().zip(spans) {
        if is_test(&file.path) {
            continue;
        }
        let rows = span_rows(file, spans);
        for (span, row) in spans.iter().zip(rows).take(NOTE_SPANS_PER_FILE) {
            candidates.push(serde_json::json!({
                "path": file.path, "start": span.start, "end": span.end,
                "row": row, "linear": span.evidence,
            }));
        }
    }
    format!(
        "{SPAN_FEATURES_NOTE_PREFIX}{}",
        serde_json::json!({"features": SPAN_FEATURES, "candidates": candidates})
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_rankkit::localize::{Chunk, Mark, SpanLimits, candidate_spans};

    fn chunk(start: u32, end: u32, kind: &str) -> Chunk {
        Chunk {
            start,
            end,
            kind: kind.into(),
            name: None,
        }
    }

    /// A file of a class (1–20), a method (21–50), a gap (51–60) and a function (61–100): a
    /// lexical hit and a use in the method, the definition of an issue name and a traceback line
    /// in the function.
    fn file() -> FileEvidence {
        FileEvidence {
            path: "pkg/m.py".into(),
            line_count: 100,
            confidence: 0.5,
            chunks: vec![
                chunk(1, 20, "class"),
                chunk(21, 50, "method"),
                chunk(51, 60, "gap"),
                chunk(61, 100, "function"),
            ],
            marks: vec![
                Mark::new(25, 30, 3.0, "lexical").of_kind(LEXICAL),
                Mark::new(40, 40, 0.3, "uses x").of_kind(USE),
                Mark::new(61, 100, 1.0, "defines x").of_kind(DEFINITION),
                Mark::new(70, 70, 1.0, "traceback line 70").of_kind(FRAME),
            ],
        }
    }

    fn value(row: &[f64], feature: &str) -> f64 {
        row[SPAN_FEATURES.iter().position(|f| *f == feature).unwrap()]
    }

    #[test]
    fn rows_count_marks_by_kind_and_place_the_span() {
        let file = file();
        let spans = candidate_spans(&file, &SpanLimits::default());
        // Evidence order: the method (3.3) before the function (2.0).
        assert_eq!(
            spans.iter().map(|s| (s.start, s.end)).collect::<Vec<_>>(),
            [(21, 50), (61, 100)]
        );
        let rows = span_rows(&file, &spans);
        let (method, function) = (&rows[0], &rows[1]);
        assert_eq!(value(method, "lexical"), 3.0);
        assert_eq!(value(method, "uses"), 0.3);
        assert_eq!(value(method, "definitions"), 0.0);
        assert_eq!(value(method, "evidence_rank_log"), 0.0);
        assert_eq!(value(method, "starts_callable"), 1.0);
        assert_eq!(value(method, "start_fraction"), 0.2);
        assert_eq!(value(function, "definition_marks"), 1.0);
        assert_eq!(value(function, "frames"), 1.0);
        assert_eq!(value(function, "lexical"), 0.0);
        assert_eq!(value(function, "evidence_share"), 2.0 / 3.3);
        assert_eq!(value(function, "evidence_rank_log"), 2f64.ln());
        assert_eq!(value(function, "lines_log"), 41f64.ln());
        assert!(rows.iter().all(|r| r.len() == SPAN_FEATURES.len()));
    }

    #[test]
    fn marks_reach_exactly_the_spans_they_overlap() {
        // Spans in evidence order, one overlapping another (as a joined head gap can), marks
        // long and short, before, between and after them.
        let spans: Vec<Span> = [(40, 60), (1, 10), (8, 20), (70, 70), (100, 140)]
            .iter()
            .map(|&(start, end)| Span {
                start,
                end,
                evidence: 1.0,
                why: String::new(),
            })
            .collect();
        let mut file = file();
        file.line_count = 150;
        file.marks = vec![
            Mark::new(5, 9, 1.0, "l").of_kind(LEXICAL),
            Mark::new(9, 45, 2.0, "d").of_kind(DEFINITION),
            Mark::new(21, 39, 4.0, "l").of_kind(LEXICAL),
            Mark::new(70, 70, 0.5, "u").of_kind(USE),
            Mark::new(141, 150, 8.0, "f").of_kind(FRAME),
            Mark::new(1, 150, 16.0, "x").of_kind("other"),
        ];
        let (sum, count, best) = marks_by_span(&file, &spans);
        for (i, span) in spans.iter().enumerate() {
            let mut naive = [0.0; 4];
            let mut naive_count = [0; 4];
            let mut naive_best = 0.0f64;
            for m in file
                .marks
                .iter()
                .filter(|m| m.start <= span.end && span.start <= m.end)
            {
                if let Some(k) = [LEXICAL, DEFINITION, USE, FRAME]
                    .iter()
                    .position(|k| *k == m.kind)
                {
                    naive[k] += m.weight;
                    naive_count[k] += 1;
                    if k == 0 {
                        naive_best = naive_best.max(m.weight);
                    }
                }
            }
            assert_eq!(
                (sum[i], count[i], best[i]),
                (naive, naive_count, naive_best),
                "{span:?}"
            );
        }
        assert_eq!(sum[1], [1.0, 2.0, 0.0, 0.0]);
        assert_eq!(sum[2], [1.0, 2.0, 0.0, 0.0]);
        assert_eq!(sum[0], [0.0, 2.0, 0.0, 0.0]);
        assert_eq!(sum[4], [0.0; 4]);
    }

    /// A one-split model: spans holding a definition score 1, others 0.
    fn definitions_first() -> SpanRanker {
        let at = SPAN_FEATURES
            .iter()
            .position(|f| *f == "definition_marks")
            .unwrap();
        SpanRanker::from_json(&serde_json::json!({
            "format": "swex-trees/1", "features": SPAN_FEATURES,
            "trees": [{"split_feature": [at], "threshold": [0.5], "left_child": [-1],
                       "right_child": [-2], "leaf_value": [0.0, 1.0]}],
        }))
        .unwrap()
    }

    #[test]
    fn the_model_orders_a_files_spans_and_ties_keep_the_evidence_order() {
        let file = file();
        let spans = candidate_spans(&file, &SpanLimits::default());
        let ordered = definitions_first().order(&file, spans.clone());
        assert_eq!(
            ordered.iter().map(|s| s.start).collect::<Vec<_>>(),
            [61, 21]
        );
        // No definitions anywhere: every score ties, the evidence order stays.
        let mut plain = file.clone();
        plain.marks.retain(|m| m.kind != DEFINITION);
        let spans = candidate_spans(&plain, &SpanLimits::default());
        let ordered = definitions_first().order(&plain, spans.clone());
        assert_eq!(ordered, spans);
    }

    #[test]
    fn a_span_model_over_features_not_computed_is_refused() {
        let model = |features: serde_json::Value| {
            SpanRanker::from_json(&serde_json::json!({
                "format": "swex-trees/1", "features": features,
                "trees": [{"split_feature": [0], "threshold": [0.5], "left_child": [-1],
                           "right_child": [-2], "leaf_value": [0.0, 1.0]}],
            }))
        };
        let error = model(serde_json::json!(["lexical", "moon_phase"])).unwrap_err();
        assert!(error.0.contains("[\"moon_phase\"]"), "{error}");
        // A subset of the computed features, in another order, is read by name.
        let last = SPAN_FEATURES[SPAN_FEATURES.len() - 1];
        let subset = model(serde_json::json!([last, SPAN_FEATURES[0]])).unwrap();
        assert_eq!(subset.ensemble.features, SPAN_FEATURES);
        assert_eq!(
            subset.ensemble.trees[0].split_feature,
            [SPAN_FEATURES.len() - 1]
        );
    }

    #[test]
    fn the_note_holds_the_sources_spans_with_their_lines() {
        let source = file();
        let test = FileEvidence {
            path: "tests/test_m.py".into(),
            ..file()
        };
        let files = [source, test];
        let spans: Vec<Vec<Span>> = files
            .iter()
            .map(|f| candidate_spans(f, &SpanLimits::default()))
            .collect();
        let note = span_features_note(&files, &spans, |p| p.starts_with("tests/"));
        let json: serde_json::Value =
            serde_json::from_str(note.strip_prefix(SPAN_FEATURES_NOTE_PREFIX).unwrap()).unwrap();
        assert_eq!(
            json["features"].as_array().unwrap().len(),
            SPAN_FEATURES.len()
        );
        let candidates = json["candidates"].as_array().unwrap();
        let got: Vec<(&str, u64, u64)> = candidates
            .iter()
            .map(|c| {
                (
                    c["path"].as_str().unwrap(),
                    c["start"].as_u64().unwrap(),
                    c["end"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, [("pkg/m.py", 21, 50), ("pkg/m.py", 61, 100)]);
        assert_eq!(
            candidates[0]["linear"].as_f64().unwrap(),
            spans[0][0].evidence
        );
    }
}
