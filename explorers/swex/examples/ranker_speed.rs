//! The learned ranker's cost per query: feature rows and the shipped trees over N candidate
//! source files (the explorer's candidates are the files its signals touch: about 100 on the
//! training rows, at most a few hundred), against the linear ranking's order it starts from.
//!
//! Run: `cargo run --release -p swex-explorer-swex --example ranker_speed [RUNS]`. Prints, per
//! candidate count, the median of RUNS runs (default 201) of `FileRanker::rerank` in microseconds.

use std::time::Instant;
use swex_explorer_swex::learned::FileRanker;
use swex_explorer_swex::rank::{Features, RankedFile};
use swex_plugin::types::SearchHit;

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
                let out = ranker.rerank(input, &hits);
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
}
