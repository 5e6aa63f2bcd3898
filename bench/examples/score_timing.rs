//! Times `swex score`'s library path in-process: each pass reads the benchmark, line-count and
//! result files and scores every result row at every top-k, like one `swex score` run without
//! process start-up. Prints the median and minimum wall time per pass and the mean precision of
//! the last pass (a check that the passes did the work).
//!
//! ```sh
//! cargo run --release -p swex-bench --example score_timing -- \
//!     ../shared/data/dev.jsonl ../shared/data/dev.cosil-top5.jsonl ../shared/data/dev.line-counts.json 5 1000
//! ```

use std::path::Path;
use std::time::Instant;
use swex_bench::dataset::{Benchmark, LoadOptions, Predictions};
use swex_bench::linecounts::LineCounts;
use swex_bench::score::{ScoreConfig, score};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bench, predictions, counts, top_ks, repeat] = &args[..] else {
        eprintln!("usage: score_timing BENCH PREDICTIONS LINE_COUNTS TOP_KS REPEAT");
        std::process::exit(2);
    };
    let top_ks: Vec<usize> = top_ks
        .split(',')
        .map(|k| k.parse().expect("top-k"))
        .collect();
    let repeat: usize = repeat.parse().expect("repeat count");
    let config = ScoreConfig::new(&top_ks).expect("valid top-k");

    let mut times = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat {
        let start = Instant::now();
        let bench = Benchmark::load(Path::new(bench), &LoadOptions::default()).expect("bench");
        let counts = LineCounts::load(Path::new(counts)).expect("line counts");
        let predictions = Predictions::load(Path::new(predictions), false).expect("predictions");
        let report = score(&bench, &[predictions], &counts, &config).expect("score");
        times.push(start.elapsed().as_secs_f64());
        last = Some(report);
    }
    times.sort_by(f64::total_cmp);
    let report = last.expect("at least one pass");
    for summary in &report.summaries {
        println!(
            "{}@{}: {} instances, mean precision {:.4}",
            summary.explorer, summary.top_k, summary.averaged, summary.mean.precision
        );
    }
    println!(
        "passes={repeat} per-pass median={:.3}ms min={:.3}ms",
        times[times.len() / 2] * 1e3,
        times[0] * 1e3
    );
}
