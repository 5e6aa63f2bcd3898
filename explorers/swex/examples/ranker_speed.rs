//! The learned ranker's cost per query: feature rows and the shipped trees over N candidate
//! source files (the explorer's candidates are the files its signals touch: about 100 on the
//! training rows, at most a few hundred), against the linear ranking's order it starts from.
//!
//! And the span ranker's: feature rows and the shipped span trees over the spans of the files the
//! planner points into (six sources, a few to a few hundred spans each).
//!
//! Run: `cargo run --release -p swex-explorer-swex --example ranker_speed [RUNS]`. Prints, per
//! candidate count, the median of RUNS runs (default 201) of `FileRanker::rerank` and, per span
//! count, of `SpanRanker::order` over six files, in microseconds.

use std::time::Instant;
use swex_explorer_swex::learned::FileRanker;
use swex_explorer_swex::rank::{Features, RankedFile};
use swex_explorer_swex::spans::SpanRanker;
use swex_plugin::types::SearchHit;
use swex_rankkit::localize::{Chunk, FileEvidence, Mark, SpanLimits, candidate_spans};

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(201);
    let ranker = FileRanker::shipped();
    for n in [100usize, 400, 1600] {
        let ranked: Vec<RankedFile> = (0..n)
            .map(|i| RankedFile {
                path: format!("src/pkg{}/mod{i}.rs", i % 17),
                score: 1.0 / (1 + i) as f64,
                features: Features {
                    lexical: 1.0 / (1 + i % 50) as f64,
                    lexical_rank: (i % 3 != 0).then_some(i),
                    symbols: (i % 7) as f64,
                    title_lexical: (i % 5) as f64 / 5.0,
                    ..Features::default()
                },
                is_test: i % 9 == 0,
                vendored: false,
                line_count: Some(50 + (i as u32 * 37) % 900),
                language: Some("rust".into()),
            })
            .collect();
        let hits: Vec<SearchHit> = ranked
            .iter()
            .take(400)
            .map(|f| SearchHit::new(f.path.clone(), 1, 20, f.score * 10.0))
            .collect();
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let input = ranked.clone();
                let start = Instant::now();
                let out = ranker.rerank(input, &hits, &Default::default());
                let elapsed = start.elapsed().as_secs_f64() * 1e6;
                std::hint::black_box(out);
                elapsed
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "{n:>5} candidates: median {:.0} µs over {runs} runs",
            times[runs / 2]
        );
    }
    span_speed(runs);
}

/// Six files of `spans` marked functions each (a lexical hit or a use in every one, a definition
/// in every fifth), ordered by the shipped span model.
fn span_speed(runs: usize) {
    let ranker = SpanRanker::shipped();
    for spans in [10u32, 50, 200] {
        let files: Vec<FileEvidence> = (0..6)
            .map(|f| {
                let chunks = (0..spans)
                    .flat_map(|i| {
                        let start = 1 + i * 20;
                        [
                            Chunk {
                                start,
                                end: start + 14,
                                kind: "function".into(),
                                name: Some(format!("f{i}")),
                            },
                            Chunk {
                                start: start + 15,
                                end: start + 19,
                                kind: "gap".into(),
                                name: None,
                            },
                        ]
                    })
                    .collect();
                let marks = (0..spans)
                    .flat_map(|i| {
                        let line = 3 + i * 20;
                        let mut marks = vec![
                            Mark::new(line, line + 2, 1.0 / (1 + (i + f) % 9) as f64, "lexical")
                                .of_kind("lexical"),
                            Mark::new(line + 4, line + 4, 0.3, "uses x").of_kind("use"),
                        ];
                        if i % 5 == 0 {
                            marks.push(
                                Mark::new(line - 2, line + 12, 1.5, "defines x")
                                    .of_kind("definition"),
                            );
                        }
                        marks
                    })
                    .collect();
                FileEvidence {
                    path: format!("src/m{f}.rs"),
                    line_count: spans * 20,
                    confidence: 0.2,
                    chunks,
                    marks,
                }
            })
            .collect();
        let limits = SpanLimits::default();
        let candidates: Vec<_> = files.iter().map(|f| candidate_spans(f, &limits)).collect();
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let input = candidates.clone();
                let start = Instant::now();
                for (file, spans) in files.iter().zip(input) {
                    std::hint::black_box(ranker.order(file, spans));
                }
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "{:>5} spans in each of 6 files: median {:.0} µs over {runs} runs",
            candidates[0].len(),
            times[runs / 2]
        );
    }
}
