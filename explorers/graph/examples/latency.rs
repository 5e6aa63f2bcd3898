//! Explore latency of the `graph` (or `tfidf`) explorer on warm snapshot indexes.
//!
//! For each benchmark row: open the snapshot's index from the cache (`Engine::open`), run the
//! explorer once (the first call also builds the code graph, which the index builds lazily) and
//! then `--repeat` more times on the same index; prints per-phase medians and p95 over rows.
//!
//! `cargo run --release -p swex-explorer-graph --example latency -- BENCH.jsonl REPOS_DIR
//! CACHE_DIR [graph|tfidf] [--repeat N]`. Build the cache first (`swex bench --index` or
//! `swex index`), or the first open of each snapshot measures the cold build.

use std::time::Instant;
use swex_engine::index::{Engine, EngineConfig};
use swex_plugin::Request;
use swex_plugin_host::{EngineBackend, ExplorerPlugin};

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return f64::NAN;
    }
    let rank = ((values.len() - 1) as f64 * p).round() as usize;
    values[rank]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if positional.len() < 3 {
        eprintln!("usage: latency BENCH.jsonl REPOS_DIR CACHE_DIR [graph|tfidf] [--repeat N]");
        std::process::exit(2);
    }
    let repeat: usize = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .map_or(5, |n| n.parse().expect("--repeat N"));
    let positional: Vec<&String> = positional
        .into_iter()
        .filter(|a| a.parse::<usize>().is_err())
        .collect();
    let (bench, repos, cache) = (positional[0], positional[1], positional[2]);
    let which = positional.get(3).map_or("graph", |s| s.as_str());
    let getter = match which {
        "graph" => swex_explorer_graph::swex_explorer_vtable,
        "tfidf" => swex_explorer_tfidf::swex_explorer_vtable,
        other => panic!("unknown explorer {other}"),
    };
    let plugin = ExplorerPlugin::builtin(getter).expect("vtable");
    let explorer = plugin
        .instantiate(&serde_json::Value::Null)
        .expect("create");
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.into(),
        ..EngineConfig::default()
    });
    let text = std::fs::read_to_string(bench).expect("bench file");
    let (mut opens, mut firsts, mut warms) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).expect("bench row");
        let id = row["instance_id"].as_str().expect("instance_id");
        let issue = row["problem_statement"].as_str().unwrap_or("");
        let started = Instant::now();
        let index = engine
            .open(&std::path::Path::new(repos).join(id))
            .expect("open");
        opens.push(started.elapsed().as_secs_f64() * 1e3);
        let backend = EngineBackend::new(index);
        let request = Request::new(id, issue, 5);
        let started = Instant::now();
        explorer.explore(&request, &backend).expect("explore");
        firsts.push(started.elapsed().as_secs_f64() * 1e3);
        for _ in 0..repeat {
            let started = Instant::now();
            explorer.explore(&request, &backend).expect("explore");
            warms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        eprintln!(
            "{id}: open {:.0} ms, first explore {:.1} ms",
            opens.last().unwrap(),
            firsts.last().unwrap()
        );
    }
    let rows = opens.len();
    println!("explorer {which}, {rows} instances, {repeat} warm repeats each");
    for (name, values) in [
        ("open index (warm cache)", &mut opens),
        ("first explore (builds the graph)", &mut firsts),
        ("explore, graph built", &mut warms),
    ] {
        let p50 = percentile(values, 0.5);
        let p95 = percentile(values, 0.95);
        println!("{name:34} p50 {p50:8.1} ms   p95 {p95:8.1} ms");
    }
}
