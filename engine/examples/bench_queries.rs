//! Query latency of an opened snapshot: issue texts through the query builder and lexical search,
//! plus symbol lookups and grep. Used by `scripts/bench-engine`; prints one JSON object.
//!
//! ```text
//! cargo run --release -p swex-engine --example bench_queries -- \
//!     --repo SNAPSHOT --cache-dir DIR --issues ../shared/data/dev.jsonl [--repo-filter django/django] [--repeat 5]
//! ```
//!
//! Every issue of the file is a query (those of `--repo-filter` are reported separately, as the
//! "own" queries); each query is timed on its first run (cold per-term statistics) and over
//! `--repeat` further runs.

use std::path::PathBuf;
use std::time::Instant;
use swex_engine::index::{Engine, EngineConfig, SearchFilters};
use swex_engine::lexical::LexicalQuery;

struct Args {
    repo: PathBuf,
    cache_dir: PathBuf,
    issues: PathBuf,
    repo_filter: Option<String>,
    repeat: usize,
    limit: usize,
}

fn parse_args() -> Args {
    let mut args = std::env::args().skip(1);
    let mut repo = None;
    let mut cache_dir = None;
    let mut issues = None;
    let mut repo_filter = None;
    let mut repeat = 5;
    let mut limit = 50;
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| panic!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--repo" => repo = Some(PathBuf::from(value())),
            "--cache-dir" => cache_dir = Some(PathBuf::from(value())),
            "--issues" => issues = Some(PathBuf::from(value())),
            "--repo-filter" => repo_filter = Some(value()),
            "--repeat" => repeat = value().parse().expect("--repeat N"),
            "--limit" => limit = value().parse().expect("--limit N"),
            other => panic!("unknown argument {other}"),
        }
    }
    Args {
        repo: repo.expect("--repo"),
        cache_dir: cache_dir.expect("--cache-dir"),
        issues: issues.expect("--issues"),
        repo_filter,
        repeat,
        limit,
    }
}

fn percentile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1);
    sorted[index]
}

fn summary(values: &[f64]) -> serde_json::Value {
    serde_json::json!({
        "n": values.len(),
        "p50_ms": percentile(values, 0.5),
        "p95_ms": percentile(values, 0.95),
        "max_ms": values.iter().copied().fold(0.0, f64::max),
    })
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let args = parse_args();
    let engine = Engine::new(EngineConfig {
        cache_dir: args.cache_dir.clone(),
        ..EngineConfig::default()
    });
    let started = Instant::now();
    let index = engine.open(&args.repo).expect("open snapshot");
    let open_ms = ms(started);

    let text = std::fs::read_to_string(&args.issues).expect("read issues");
    let mut own = Vec::new();
    let mut other = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).expect("issue JSON");
        let statement = row["problem_statement"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let is_own = args
            .repo_filter
            .as_deref()
            .is_none_or(|r| row["repo"].as_str() == Some(r));
        if is_own {
            own.push(statement)
        } else {
            other.push(statement)
        }
    }

    let config = engine.config().lexical.clone();
    let filters = SearchFilters::default();
    let run = |queries: &[String]| {
        let mut build = Vec::new();
        let mut first = Vec::new();
        let mut repeated = Vec::new();
        let mut tokens = Vec::new();
        for text in queries {
            let t = Instant::now();
            let query = LexicalQuery::from_text(text, &config);
            build.push(ms(t));
            tokens.push(query.tokens.len() as f64);
            let t = Instant::now();
            let hits = index
                .lexical_search(&query, args.limit, &filters)
                .expect("search");
            first.push(ms(t));
            std::hint::black_box(hits);
            for _ in 0..args.repeat {
                let t = Instant::now();
                let hits = index
                    .lexical_search(&query, args.limit, &filters)
                    .expect("search");
                repeated.push(ms(t));
                std::hint::black_box(hits);
            }
        }
        serde_json::json!({
            "queries": queries.len(),
            "mean_tokens": tokens.iter().sum::<f64>() / tokens.len().max(1) as f64,
            "query_build": summary(&build),
            "search_first_run": summary(&first),
            "search_repeated": summary(&repeated),
        })
    };
    let own_report = run(&own);
    let other_report = run(&other);

    // Symbol lookups: every definition name of the first 200 files with definitions.
    let names: Vec<String> = index
        .files()
        .iter()
        .filter_map(|f| index.analysis(&f.path))
        .flat_map(|a| a.definitions.iter().map(|d| d.name.clone()))
        .take(2000)
        .collect();
    let mut symbol = Vec::new();
    for name in &names {
        let t = Instant::now();
        std::hint::black_box(index.definitions(name));
        symbol.push(ms(t));
    }
    let mut grep = Vec::new();
    for pattern in [
        r"def get_queryset\(",
        r"class \w+Field\(",
        "TODO",
        r"raise ValueError\(",
    ] {
        let t = Instant::now();
        std::hint::black_box(index.grep(pattern, None, 50).expect("grep"));
        grep.push(ms(t));
    }

    let report = serde_json::json!({
        "repo": args.repo.display().to_string(),
        "open_ms": open_ms,
        "files": index.stats().files,
        "chunks": index.stats().chunks,
        "own_issues": own_report,
        "other_issues": other_report,
        "definitions": summary(&symbol),
        "grep": summary(&grep),
    });
    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
}
