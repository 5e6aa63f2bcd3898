//! Evaluates and tunes the engine's ranked search ([`swex_engine::search`]) on the code-search
//! benchmark in one process: every repository's index is opened once, then each configuration is
//! scored on all queries in milliseconds, which `swex bench --task codesearch` (one explorer call
//! per query, through the host) is not made for.
//!
//! ```sh
//! # checkouts first: swex bench --task codesearch ... --repos /work/cs-repos
//! cargo run --release -p swex-bench --example codesearch_tune -- \
//!     --data ../shared/data/codesearch --checkouts /work/cs-repos --cache-dir /work/cs-cache \
//!     [--config '{"path": 0.8}' | --config @file.json] [--dense] [--tune] [--loo] \
//!     [--folds 6] [--rounds 1] [--knobs coherence,path,...] [--show-misses] [--dump top50.jsonl]
//! ```
//!
//! - default: NDCG@10 of the configuration (overall, per category, per repository);
//! - `--tune`: coordinate descent over the weights on all repositories (in-sample);
//! - `--loo`: leave-one-repository-out: for each repository, tune on the other 23 and score it
//!   with that configuration, which says how much of the tuned gain is fitted to the data
//!   (`--folds N`: N folds of repositories instead of one per repository; overall and
//!   per-category means of the held-out scores);
//! - `--knobs`: the `RankConfig` fields the descent tries (default [`KNOBS`]); to measure a new
//!   signal, cross-validate with and without its weight in the list;
//! - `--dump FILE`: every query's top 50 files with their signals, as JSON lines.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use swex_bench::codesearch::{Category, CodeSearchData, Hit, Scoring, score};
use swex_engine::index::{Engine, EngineConfig, SnapshotIndex};
use swex_engine::search::{DenseUse, RankConfig, SearchOptions};

struct Repo {
    name: String,
    prefix: String,
    index: Arc<SnapshotIndex>,
    queries: Vec<swex_bench::codesearch::Query>,
}

struct Args {
    data: PathBuf,
    checkouts: PathBuf,
    cache_dir: PathBuf,
    config: RankConfig,
    dense: bool,
    tune: bool,
    loo: bool,
    show_misses: bool,
    repos: Vec<String>,
    /// Cross-validation folds for `--loo` (0: one fold per repository).
    folds: usize,
    /// Coordinate-descent rounds.
    rounds: usize,
    /// Where to write every query's top 50 files with their signals (JSON lines), for studying
    /// what ranks above the targets.
    dump: Option<PathBuf>,
    /// The weights `--tune` and `--loo` descend over (default [`KNOBS`]).
    knobs: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        data: PathBuf::from("../shared/data/codesearch"),
        checkouts: PathBuf::from("/work/cs-repos"),
        cache_dir: PathBuf::from("/work/cs-cache"),
        config: RankConfig::default(),
        dense: false,
        tune: false,
        loo: false,
        show_misses: false,
        repos: Vec::new(),
        folds: 0,
        rounds: 2,
        dump: None,
        knobs: KNOBS.iter().map(|k| k.to_string()).collect(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--data" => args.data = value().into(),
            "--checkouts" => args.checkouts = value().into(),
            "--cache-dir" => args.cache_dir = value().into(),
            "--config" => {
                let text = value();
                let text = match text.strip_prefix('@') {
                    Some(path) => std::fs::read_to_string(path).expect("config file"),
                    None => text,
                };
                args.config = serde_json::from_str(&text).expect("config JSON");
            }
            "--repos" => args.repos = value().split(',').map(String::from).collect(),
            "--dense" => args.dense = true,
            "--tune" => args.tune = true,
            "--loo" => args.loo = true,
            "--show-misses" => args.show_misses = true,
            "--folds" => args.folds = value().parse().expect("--folds N"),
            "--rounds" => args.rounds = value().parse().expect("--rounds N"),
            "--dump" => args.dump = Some(value().into()),
            "--knobs" => args.knobs = value().split(',').map(String::from).collect(),
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// Per repository: mean NDCG@10, and per category (sum, count).
struct Scores {
    per_repo: Vec<f64>,
    per_category: BTreeMap<Category, Vec<f64>>,
    query_ms: Vec<f64>,
}

fn evaluate(repos: &[Repo], config: &RankConfig, dense: bool, show_misses: bool) -> Scores {
    let options = SearchOptions {
        dense: if dense { DenseUse::On } else { DenseUse::Off },
        config: config.clone(),
        ..SearchOptions::default()
    };
    let mut scores = Scores {
        per_repo: Vec::new(),
        per_category: BTreeMap::new(),
        query_ms: Vec::new(),
    };
    for repo in repos {
        let mut sum = 0.0;
        let mut by_category: BTreeMap<Category, (f64, usize)> = BTreeMap::new();
        for query in &repo.queries {
            let started = Instant::now();
            let results = repo.index.search(&query.text, &options).expect("search");
            scores.query_ms.push(started.elapsed().as_secs_f64() * 1e3);
            let hits: Vec<Hit> = results
                .hits
                .iter()
                .map(|h| {
                    Hit::new(
                        format!("{}{}", repo.prefix, h.path),
                        h.start.into(),
                        h.end.into(),
                    )
                })
                .collect();
            let ndcg = score(&hits, query, Scoring::Chunk).ndcg10;
            if show_misses && ndcg < 0.99 {
                println!(
                    "{:.3} {} [{}] {:?}\n   want {}\n   got  {}",
                    ndcg,
                    repo.name,
                    query.category.as_str(),
                    query.text,
                    query
                        .targets()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    hits.iter()
                        .take(5)
                        .map(|h| format!("{}:{}-{}", h.path, h.start, h.end))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            sum += ndcg;
            let entry = by_category.entry(query.category).or_default();
            entry.0 += ndcg;
            entry.1 += 1;
        }
        scores.per_repo.push(sum / repo.queries.len().max(1) as f64);
        for (category, (s, n)) in by_category {
            scores
                .per_category
                .entry(category)
                .or_default()
                .push(s / n as f64);
        }
    }
    scores
}

/// One JSON line per query: its targets and the top 50 hits (one per file) with their signals.
fn dump(repos: &[Repo], config: &RankConfig, dense: bool, out: &std::path::Path) {
    use std::io::Write;
    let options = SearchOptions {
        limit: 50,
        dense: if dense { DenseUse::On } else { DenseUse::Off },
        config: config.clone(),
        ..SearchOptions::default()
    };
    let mut file = std::io::BufWriter::new(std::fs::File::create(out).expect("dump file"));
    for repo in repos {
        for query in &repo.queries {
            let results = repo.index.search(&query.text, &options).expect("search");
            let hits: Vec<serde_json::Value> = results
                .hits
                .iter()
                .map(|h| {
                    serde_json::json!({
                        "path": format!("{}{}", repo.prefix, h.path),
                        "start": h.start, "end": h.end, "kind": h.kind, "name": h.name,
                        "score": h.score, "signals": h.signals,
                    })
                })
                .collect();
            let line = serde_json::json!({
                "repo": repo.name, "query": query.text, "category": query.category.as_str(),
                "kind": results.kind.as_str(),
                "targets": query.targets().map(|t| t.to_string()).collect::<Vec<_>>(),
                "hits": hits,
            });
            writeln!(file, "{line}").expect("write dump");
        }
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

fn summary(scores: &Scores) -> String {
    let mut text = format!("all {:.4}", mean(&scores.per_repo));
    for (category, values) in &scores.per_category {
        text.push_str(&format!("  {} {:.4}", category.as_str(), mean(values)));
    }
    text
}

/// The tunable weights: (name, getter/setter through serde).
const KNOBS: [&str; 17] = [
    "coherence",
    "symbol",
    "embedded_symbol",
    "symbol_stem",
    "path",
    "dense",
    "test_penalty",
    "docs_penalty",
    "example_penalty",
    "stub_penalty",
    "subword_weight",
    "word_symbol_weight",
    "capitalised_symbol_weight",
    "case_mismatch",
    "function_kind",
    "constant_kind",
    "lexical",
];

fn with(config: &RankConfig, knob: &str, value: f64) -> RankConfig {
    let mut json = serde_json::to_value(config).expect("serialise");
    json[knob] = serde_json::json!(value);
    serde_json::from_value(json).expect("deserialise")
}

fn get(config: &RankConfig, knob: &str) -> f64 {
    serde_json::to_value(config).expect("serialise")[knob]
        .as_f64()
        .unwrap_or_else(|| panic!("{knob} is not a numeric RankConfig field"))
}

/// Coordinate descent: each knob tried at ×0.5, ×0.75, ×1.33, ×2 of its value (0 → 0.1, 0.3, 1;
/// penalties at most 1), kept when the mean over repositories improves by more than 1e-4;
/// `rounds` rounds.
fn tune(
    repos: &[Repo],
    start: &RankConfig,
    knobs: &[String],
    dense: bool,
    rounds: usize,
) -> (RankConfig, f64) {
    let mut best = start.clone();
    let mut best_score = mean(&evaluate(repos, &best, dense, false).per_repo);
    for _round in 0..rounds {
        let mut improved = false;
        for knob in knobs.iter().map(String::as_str) {
            if knob == "dense" && !dense {
                continue;
            }
            let current = get(&best, knob);
            let candidates: Vec<f64> = if current == 0.0 {
                vec![0.1, 0.3, 1.0]
            } else {
                [0.5, 0.75, 1.33, 2.0].iter().map(|f| current * f).collect()
            };
            for value in candidates {
                // A penalty or a mismatch multiplier above 1 would promote what it demotes.
                if (knob.ends_with("_penalty") || knob == "case_mismatch") && value > 1.0 {
                    continue;
                }
                let trial = with(&best, knob, value);
                let s = mean(&evaluate(repos, &trial, dense, false).per_repo);
                if s > best_score + 1e-4 {
                    best_score = s;
                    best = trial;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
    (best, best_score)
}

fn main() {
    let args = parse_args();
    let mut data = CodeSearchData::load(&args.data).expect("data");
    data.select(&args.repos).expect("repos");
    let engine = Engine::new(EngineConfig {
        cache_dir: args.cache_dir.clone(),
        verify_pools: false,
        ..EngineConfig::default()
    });
    let started = Instant::now();
    let repos: Vec<Repo> = data
        .repos
        .iter()
        .map(|r| {
            let checkout = args.checkouts.join(&r.repo.name);
            let (dir, prefix) = match r.repo.benchmark_root.as_deref() {
                Some(root) => (checkout.join(root), format!("{}/", root.trim_matches('/'))),
                None => (checkout, String::new()),
            };
            let index = engine.open(&dir).expect("index");
            Repo {
                name: r.repo.name.clone(),
                prefix,
                index,
                queries: r.queries.clone(),
            }
        })
        .collect();
    eprintln!(
        "opened {} repositories in {:.1}s",
        repos.len(),
        started.elapsed().as_secs_f64()
    );
    if let Some(out) = &args.dump {
        dump(&repos, &args.config, args.dense, out);
    }
    // The start config's scores, which the held-out folds are compared with (`show_misses`
    // only prints: the scores are the same either way).
    let scores = evaluate(&repos, &args.config, args.dense, args.show_misses);
    let mut ms = scores.query_ms.clone();
    ms.sort_by(f64::total_cmp);
    println!(
        "config: {}  (query p50 {:.2} ms, p90 {:.2} ms)",
        summary(&scores),
        ms.get(ms.len() / 2).copied().unwrap_or(0.0),
        ms.get(ms.len() * 9 / 10).copied().unwrap_or(0.0)
    );
    for (repo, s) in repos.iter().zip(&scores.per_repo) {
        println!("  {:<20} {s:.3}", repo.name);
    }
    if args.tune {
        let (best, s) = tune(&repos, &args.config, &args.knobs, args.dense, args.rounds);
        println!(
            "tuned in-sample: {s:.4}  {}",
            serde_json::to_string(&best).expect("json")
        );
        println!(
            "tuned: {}",
            summary(&evaluate(&repos, &best, args.dense, false))
        );
    }
    if args.loo {
        // Fold f holds out the repositories at positions f, f + folds, ...
        let folds = if args.folds == 0 {
            repos.len()
        } else {
            args.folds.min(repos.len())
        };
        let mut held_out = vec![0.0; repos.len()];
        let mut held_out_categories: BTreeMap<Category, Vec<f64>> = BTreeMap::new();
        let clone = |r: &Repo| Repo {
            name: r.name.clone(),
            prefix: r.prefix.clone(),
            index: r.index.clone(),
            queries: r.queries.clone(),
        };
        for fold in 0..folds {
            let (test, train): (Vec<usize>, Vec<usize>) =
                (0..repos.len()).partition(|&j| j % folds == fold);
            let train: Vec<Repo> = train.iter().map(|&j| clone(&repos[j])).collect();
            let (config, _) = tune(&train, &args.config, &args.knobs, args.dense, args.rounds);
            let test_repos: Vec<Repo> = test.iter().map(|&j| clone(&repos[j])).collect();
            let fold_scores = evaluate(&test_repos, &config, args.dense, false);
            for (category, values) in fold_scores.per_category {
                held_out_categories
                    .entry(category)
                    .or_default()
                    .extend(values);
            }
            for (&j, s) in test.iter().zip(fold_scores.per_repo) {
                println!(
                    "  held out {:<20} start config {:.3} tuned without it {s:.3}",
                    repos[j].name, scores.per_repo[j]
                );
                held_out[j] = s;
            }
        }
        println!(
            "cross-validated ({folds} folds) mean {:.4}; start config {:.4}",
            mean(&held_out),
            mean(&scores.per_repo)
        );
        println!(
            "cross-validated: {}",
            summary(&Scores {
                per_repo: held_out,
                per_category: held_out_categories,
                query_ms: Vec::new(),
            })
        );
    }
}
