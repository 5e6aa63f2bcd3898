//! Build cost of snapshot indexes, in CPU time as well as wall time: a cold build of the first
//! snapshot in an empty cache, then each following snapshot opened with the same cache ("next
//! snapshot"), optionally each of those also built cold in a cache of its own. Repeats the whole
//! sequence `--runs` times and reports every run plus the minimum CPU time per step (the steadiest
//! figure on a shared machine). Prints Markdown, or JSON with `--json`.
//!
//! ```text
//! cargo run --release -p swex-engine --example bench_build -- SNAPSHOT [NEXT ...] \
//!     [--runs N] [--cold-each] [--digest] [--json]
//! ```
//!
//! `--digest` prints a hash of everything a cold build of the first snapshot provides (files,
//! analyses, chunk keys, and the top 20 lexical hits of a fixed set of queries with their scores),
//! so that a speed change can be checked not to change results.
//!
//! Caches go to fresh folders under the system temporary directory and are removed afterwards.
//! CPU time is the process's user + system time from `/proc/self/stat` (Linux; 10 ms ticks).

use std::path::{Path, PathBuf};
use std::time::Instant;

use swex_engine::index::{Engine, EngineConfig, IndexStats, SearchFilters, SnapshotIndex};

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

struct Args {
    snapshots: Vec<PathBuf>,
    runs: usize,
    cold_each: bool,
    digest: bool,
    json: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        snapshots: Vec::new(),
        runs: 1,
        cold_each: false,
        digest: false,
        json: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--runs" => {
                args.runs = it
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .expect("--runs N")
                    .max(1)
            }
            "--cold-each" => args.cold_each = true,
            "--digest" => args.digest = true,
            "--json" => args.json = true,
            flag if flag.starts_with("--") => panic!("unknown flag {flag}"),
            path => args.snapshots.push(PathBuf::from(path)),
        }
    }
    assert!(
        !args.snapshots.is_empty(),
        "usage: bench_build SNAPSHOT [NEXT ...]"
    );
    args
}

struct Measured {
    what: &'static str,
    snapshot: String,
    wall: f64,
    cpu: f64,
    stats: IndexStats,
}

fn open_measured(
    engine: &Engine,
    what: &'static str,
    root: &Path,
) -> (Measured, std::sync::Arc<SnapshotIndex>) {
    let cpu = cpu_seconds();
    let started = Instant::now();
    let index = engine.open(root).expect("open snapshot");
    let measured = Measured {
        what,
        snapshot: root
            .file_name()
            .map_or(root.display().to_string(), |n| n.to_string_lossy().into()),
        wall: started.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - cpu,
        stats: index.stats().clone(),
    };
    (measured, index)
}

fn engine_at(cache: &Path) -> Engine {
    Engine::new(EngineConfig {
        cache_dir: cache.to_path_buf(),
        ..EngineConfig::default()
    })
}

fn temp_cache(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("swex-bench-build-{label}-"))
        .tempdir()
        .expect("temporary cache")
}

/// Queries for the digest: identifiers, a path, prose and a traceback line.
const DIGEST_QUERIES: &[&str] = &[
    "QuerySet.bulk_create() fails on empty objs",
    "File \"django/db/models/query.py\", line 500, in bulk_create",
    "migration autodetector renames a field twice",
    "ValueError: invalid literal for int() with base 10",
    "simplify(sin(x)**2 + cos(x)**2) returns the wrong result",
    "test_client response status_code redirect",
];

fn digest(index: &SnapshotIndex) -> String {
    let mut hasher = blake3::Hasher::new();
    for file in index.files() {
        hasher.update(serde_json::to_string(file).expect("json").as_bytes());
        let analysis = index.analysis(&file.path).expect("analysis");
        hasher.update(serde_json::to_string(analysis).expect("json").as_bytes());
    }
    for id in 0..index.num_chunks() {
        hasher.update(&index.chunk_key(id).unwrap_or(0).to_le_bytes());
    }
    let mut lines = Vec::new();
    for query in DIGEST_QUERIES {
        let hits = index
            .search_text(query, 20, &SearchFilters::default())
            .expect("search");
        for hit in hits {
            let line = format!("{}:{}-{} {:.5}", hit.path, hit.start, hit.end, hit.score);
            hasher.update(line.as_bytes());
            lines.push(line);
        }
    }
    eprintln!("digest: top hit of each query:");
    for query in DIGEST_QUERIES {
        let top = index
            .search_text(query, 1, &SearchFilters::default())
            .expect("search");
        eprintln!(
            "  {query:?} → {:?}",
            top.first().map(|h| (&h.path, h.start, h.end, h.score))
        );
    }
    hasher.finalize().to_hex().to_string()
}

fn main() {
    let args = parse_args();
    let mut all_runs: Vec<Vec<(Measured, Option<Measured>)>> = Vec::new();
    let mut fingerprint = None;
    for run in 0..args.runs {
        let cache = temp_cache("shared");
        let engine = engine_at(cache.path());
        let mut steps = Vec::new();
        for (i, root) in args.snapshots.iter().enumerate() {
            let what = if i == 0 { "cold" } else { "next snapshot" };
            let (measured, index) = open_measured(&engine, what, root);
            if i == 0 && run == 0 && args.digest {
                fingerprint = Some(digest(&index));
            }
            drop(index);
            let cold_same = (i > 0 && args.cold_each).then(|| {
                let own = temp_cache("cold");
                let (m, _) = open_measured(&engine_at(own.path()), "cold", root);
                m
            });
            eprintln!(
                "run {} {} {}: wall {:.2} s, cpu {:.2} s",
                run + 1,
                measured.what,
                measured.snapshot,
                measured.wall,
                measured.cpu
            );
            steps.push((measured, cold_same));
        }
        all_runs.push(steps);
    }
    if args.json {
        let runs: Vec<serde_json::Value> = all_runs
            .iter()
            .map(|steps| {
                steps
                    .iter()
                    .map(|(m, cold)| {
                        serde_json::json!({
                            "what": m.what, "snapshot": m.snapshot, "wall": m.wall, "cpu": m.cpu,
                            "stats": m.stats,
                            "cold_same": cold.as_ref().map(|c| serde_json::json!({"wall": c.wall, "cpu": c.cpu})),
                        })
                    })
                    .collect()
            })
            .collect();
        let report = serde_json::json!({"runs": runs, "digest": fingerprint});
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        return;
    }
    println!(
        "| step | snapshot | min CPU s | CPU s per run | min wall s | files read / analysed / docs added | stages of the fastest run (ms) | cold of same: min CPU s (ratio) |"
    );
    println!("|---|---|---:|---|---:|---|---|---|");
    for step in 0..args.snapshots.len() {
        let runs: Vec<&(Measured, Option<Measured>)> =
            all_runs.iter().map(|steps| &steps[step]).collect();
        let best = runs
            .iter()
            .min_by(|a, b| a.0.cpu.total_cmp(&b.0.cpu))
            .expect("a run");
        let min_wall = runs.iter().map(|r| r.0.wall).fold(f64::INFINITY, f64::min);
        let per_run: Vec<String> = runs.iter().map(|r| format!("{:.2}", r.0.cpu)).collect();
        let m = &best.0;
        let t = &m.stats.timings_ms;
        let c = &m.stats.cache;
        let cold = runs
            .iter()
            .filter_map(|r| r.1.as_ref().map(|c| c.cpu))
            .fold(f64::INFINITY, f64::min);
        let cold_text = if cold.is_finite() {
            format!("{cold:.2} ({:.0}%)", 100.0 * m.cpu / cold)
        } else {
            String::new()
        };
        println!(
            "| {} | {} | {:.2} | {} | {:.2} | {} / {} / {} | walk {:.0}, read {:.0}, analyse {:.0}, lexical {:.0}, total {:.0} | {} |",
            m.what,
            m.snapshot,
            m.cpu,
            per_run.join(", "),
            min_wall,
            c.files_read,
            c.analyses_computed,
            m.stats.pool.docs_added,
            t.walk,
            t.read,
            t.analyze,
            t.lexical,
            t.total,
            cold_text
        );
    }
    let first = &all_runs[0][0].0.stats;
    println!(
        "\n{} files, {:.1} MB, {} chunks ({} indexed), {} definitions; load average {}",
        first.files,
        first.bytes as f64 / 1e6,
        first.chunks,
        first.pool.snapshot_docs,
        first.definitions,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    if let Some(fingerprint) = fingerprint {
        println!("digest {fingerprint}");
    }
}
