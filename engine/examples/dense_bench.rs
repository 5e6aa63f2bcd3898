//! Measurements of the dense layer (numbers recorded in `docs/dense.md`). Needs the assets
//! (`swex models fetch`) and materialized snapshots; run with `--release`:
//!
//! ```text
//! cargo run --release -p swex-engine --example dense_bench -- <command> ...
//!   chunks <snapshot> <out.jsonl>                 chunk a snapshot, write the passage texts
//!   embed <chunks.jsonl> [opts] [--limit N]       chunks/s of the embedder (no cache)
//!   snapshots <snapshot>... [opts]                embed snapshots in order through a fresh cache
//!   quality <dev.jsonl> <snapshots dir> <id,...> [opts]   file hit rate of dense top-k
//!   hnsw <n> [--dim D] [--dry] [--from-cache DIR] [--m M] [--ef-construction E]
//!                                                 exact query time; HNSW build, store, load (3×)
//!                                                 and query time, recall@10 against exact
//!                                                 (--dry: exact only; --from-cache: the first n
//!                                                 real vectors of an embedding cache directory;
//!                                                 the store is a temporary directory in
//!                                                 --cache-root, else the system's temp dir)
//!   engine-chunks <snapshot> <out.jsonl>          passage texts of the engine's chunks
//!   engine-snapshots <snapshot>... --cache-root DIR [--dry]
//!                                                 build each snapshot's full dense index in order
//!                                                 through the engine (index and embedding caches
//!                                                 in DIR); --dry: stand-in vectors, same counts
//! opts: --spin --batch N --threads N --max-tokens N --unit full|head:N --cache-root DIR --k N
//! ```
//!
//! `chunks`, `snapshots` and `quality` use a stand-in chunker (definition boundaries found by
//! indentation and `def`/`class` lines, windows elsewhere), written before the engine's
//! tree-sitter chunker landed and kept so earlier numbers can be reproduced; the `engine-*`
//! commands use the engine itself. Nothing here serves queries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use swex_engine::dense::{
    DenseIndex, Embedder, EmbedderConfig, EmbeddingCache, GraphKey, GraphState, GraphStore,
    IndexOptions, ModelIdentity, TextKey, TextUnit, default_cache_root, passage_text,
};
use swex_engine::index::{DenseConfig, Engine, EngineConfig, Progress, Stage};

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

type Error = Box<dyn std::error::Error>;

struct Opts {
    positional: Vec<String>,
    batch: usize,
    threads: Option<usize>,
    max_tokens: usize,
    unit: TextUnit,
    cache_root: Option<PathBuf>,
    limit: Option<usize>,
    k: usize,
    dim: usize,
    spin: bool,
    dry: bool,
    from_cache: Option<PathBuf>,
    max_connections: usize,
    ef_construction: usize,
}

fn parse_opts(args: &[String]) -> Result<Opts, Error> {
    let mut opts = Opts {
        positional: Vec::new(),
        batch: 4,
        threads: None,
        max_tokens: 256,
        unit: TextUnit::Full,
        cache_root: None,
        limit: None,
        k: 5,
        dim: 384,
        spin: false,
        dry: false,
        from_cache: None,
        max_connections: IndexOptions::default().max_connections,
        ef_construction: IndexOptions::default().ef_construction,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--batch" => opts.batch = value()?.parse()?,
            "--threads" => opts.threads = Some(value()?.parse()?),
            "--max-tokens" => opts.max_tokens = value()?.parse()?,
            "--unit" => opts.unit = value()?.parse()?,
            "--cache-root" => opts.cache_root = Some(PathBuf::from(value()?)),
            "--limit" => opts.limit = Some(value()?.parse()?),
            "--k" => opts.k = value()?.parse()?,
            "--dim" => opts.dim = value()?.parse()?,
            "--spin" => opts.spin = true,
            "--dry" => opts.dry = true,
            "--from-cache" => opts.from_cache = Some(PathBuf::from(value()?)),
            "--m" => opts.max_connections = value()?.parse()?,
            "--ef-construction" => opts.ef_construction = value()?.parse()?,
            _ => opts.positional.push(arg.clone()),
        }
    }
    Ok(opts)
}

/// One chunk of the stand-in chunker.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Chunk {
    path: String,
    start: usize,
    end: usize,
    name: Option<String>,
    body: String,
}

const TEXT_EXTENSIONS: [&str; 10] = [
    "py", "md", "txt", "toml", "cfg", "ini", "yaml", "yml", "json", "rst",
];
const MAX_CHUNK_LINES: usize = 120;
const WINDOW: usize = 60;

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            walk(root, &path, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| TEXT_EXTENSIONS.contains(&e))
        {
            out.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

/// Python files: a chunk per top-level definition and per method (indent ≤ 4), the code between
/// them as gap chunks; long chunks and other files cut into windows.
fn chunk_snapshot(root: &Path) -> Vec<Chunk> {
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.sort();
    let def =
        regex::Regex::new(r"^( {0,4})(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let mut chunks = Vec::new();
    for rel in files {
        let Ok(bytes) = std::fs::read(root.join(&rel)) else {
            continue;
        };
        if bytes.len() > 1 << 20 {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let path = rel.to_string_lossy().replace('\\', "/");
        let mut spans: Vec<(usize, usize, Option<String>)> = Vec::new();
        if path.ends_with(".py") {
            let mut starts: Vec<(usize, Option<String>)> = vec![(0, None)];
            let mut class: Option<String> = None;
            for (i, line) in lines.iter().enumerate() {
                if let Some(c) = def.captures(line) {
                    let indent = c[1].len();
                    let name = c[3].to_string();
                    let qualified = if indent == 0 {
                        class = (&c[2] == "class").then(|| name.clone());
                        name
                    } else if let Some(cls) = &class {
                        format!("{cls}.{name}")
                    } else {
                        continue;
                    };
                    starts.push((i, Some(qualified)));
                } else if !line.starts_with([' ', '\t']) && !line.trim().is_empty() && i > 0 {
                    // Module-level code ends a class or function.
                    if starts.last().is_some_and(|s| s.1.is_some()) {
                        class = None;
                        starts.push((i, None));
                    }
                }
            }
            for (j, (s, name)) in starts.iter().enumerate() {
                let e = starts.get(j + 1).map_or(lines.len(), |n| n.0);
                if e > *s {
                    spans.push((*s, e, name.clone()));
                }
            }
        } else {
            spans.push((0, lines.len(), None));
        }
        for (s, e, name) in spans {
            let step = if e - s > MAX_CHUNK_LINES {
                WINDOW
            } else {
                e - s
            };
            let mut a = s;
            while a < e {
                let b = (a + step).min(e);
                let body = lines[a..b].join("\n");
                if !body.trim().is_empty() {
                    chunks.push(Chunk {
                        path: path.clone(),
                        start: a + 1,
                        end: b,
                        name: name.clone(),
                        body,
                    });
                }
                a = b;
            }
        }
    }
    chunks
}

fn embedder(opts: &Opts) -> Result<Embedder, Error> {
    let config = EmbedderConfig {
        max_tokens: opts.max_tokens,
        batch_size: opts.batch,
        intra_threads: opts.threads,
        spin: opts.spin,
        ..EmbedderConfig::default()
    };
    Ok(Embedder::open(&default_cache_root(), &config)?)
}

fn texts_of(chunks: &[Chunk], unit: TextUnit, max_chars: usize) -> Vec<String> {
    chunks
        .iter()
        .map(|c| passage_text(&c.path, c.name.as_deref(), &c.body, unit, max_chars))
        .collect()
}

fn cmd_chunks(opts: &Opts) -> Result<(), Error> {
    let [snapshot, out] = &opts.positional[..] else {
        return Err("usage: chunks <snapshot> <out.jsonl>".into());
    };
    let chunks = chunk_snapshot(Path::new(snapshot));
    let texts = texts_of(&chunks, opts.unit, opts.max_tokens * 12);
    let mut file = String::new();
    for t in &texts {
        file.push_str(&serde_json::to_string(t)?);
        file.push('\n');
    }
    std::fs::write(out, file)?;
    eprintln!("{} chunks from {snapshot}", chunks.len());
    Ok(())
}

fn cmd_embed(opts: &Opts) -> Result<(), Error> {
    let [input] = &opts.positional[..] else {
        return Err("usage: embed <chunks.jsonl>".into());
    };
    let mut texts: Vec<String> = std::fs::read_to_string(input)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    if let Some(limit) = opts.limit {
        texts.truncate(limit);
    }
    let embedder = embedder(opts)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let cpu = cpu_seconds();
    let vectors = embedder.embed_passages(&refs, &mut |_, _| {})?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    println!(
        "embed: {} texts, batch {}, threads {:?}, spin {}, max_tokens {}: {:.2} s, {:.1} chunks/s; {:.1} CPU s, {:.2} chunks per CPU s (dim {})",
        texts.len(),
        opts.batch,
        opts.threads,
        opts.spin,
        embedder.max_tokens(),
        seconds,
        texts.len() as f64 / seconds,
        cpu,
        texts.len() as f64 / cpu,
        vectors[0].len()
    );
    Ok(())
}

fn cmd_snapshots(opts: &Opts) -> Result<(), Error> {
    let root = opts
        .cache_root
        .clone()
        .ok_or("snapshots needs --cache-root (a fresh directory)")?;
    // --dry: the same cache, keyed the same way, but a stand-in computes the vectors, so the share
    // of texts a later snapshot must embed is measured on large repositories in seconds.
    let embedder = if opts.dry {
        None
    } else {
        Some(embedder(opts)?)
    };
    let identity = match &embedder {
        Some(e) => e.identity().clone(),
        None => ModelIdentity {
            name: "dry-run".into(),
            fingerprint: "d".repeat(64),
            dim: 4,
        },
    };
    let max_chars = opts.max_tokens * 12;
    let cache = EmbeddingCache::open(&root, &identity)?;
    for snapshot in &opts.positional {
        let chunks = chunk_snapshot(Path::new(snapshot));
        let texts = texts_of(&chunks, opts.unit, max_chars);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let started = Instant::now();
        let mut last = Instant::now();
        let mut progress = |done: usize, total: usize| {
            if last.elapsed().as_secs() >= 30 {
                eprintln!("  {done}/{total}");
                last = Instant::now();
            }
        };
        let (_, counts) = match &embedder {
            Some(e) => cache.embed(e, &refs, &mut progress)?,
            None => cache.embed_with(
                &refs,
                &mut |batch, _| Ok(batch.iter().map(|_| vec![0.5f32; 4]).collect()),
                &mut progress,
            )?,
        };
        let distinct: std::collections::HashSet<&str> = refs.iter().copied().collect();
        println!(
            "{snapshot}: {} chunks ({} distinct texts), embedded {} ({:.1}% of distinct), cached {}, {:.1} s",
            texts.len(),
            distinct.len(),
            counts.embedded,
            100.0 * counts.embedded as f64 / distinct.len() as f64,
            counts.cached,
            started.elapsed().as_secs_f64(),
        );
    }
    Ok(())
}

fn cmd_quality(opts: &Opts) -> Result<(), Error> {
    let [dev, snapshots, ids] = &opts.positional[..] else {
        return Err("usage: quality <dev.jsonl> <snapshots dir> <id,id,...>".into());
    };
    let wanted: Vec<&str> = ids.split(',').collect();
    let rows: HashMap<String, serde_json::Value> = std::fs::read_to_string(dev)?
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).map_err(Error::from))
        .map(|r| r.map(|v| (v["instance_id"].as_str().unwrap_or("").to_string(), v)))
        .collect::<Result<_, _>>()?;
    let embedder = embedder(opts)?;
    let root = opts.cache_root.clone().unwrap_or_else(default_cache_root);
    let cache = EmbeddingCache::open(&root, embedder.identity())?;
    let (mut hit_sum, mut any_sum, mut n) = (0.0, 0.0, 0);
    for id in wanted {
        let row = rows
            .get(id)
            .ok_or_else(|| format!("{id} is not in {dev}"))?;
        let chunks = chunk_snapshot(&Path::new(snapshots).join(id));
        let texts = texts_of(&chunks, opts.unit, embedder.max_chars());
        let items: Vec<(usize, &str)> = texts.iter().map(String::as_str).enumerate().collect();
        let started = Instant::now();
        let (index, report) = DenseIndex::build(
            &embedder,
            &cache,
            &items,
            &IndexOptions::default(),
            &mut |_, _| {},
        )?;
        let issue = row["problem_statement"].as_str().unwrap_or("");
        let hits = index.search_text(&embedder, issue, opts.k * 4)?;
        // Top-k distinct files, in rank order.
        let mut files: Vec<&str> = Vec::new();
        for hit in &hits {
            let path = chunks[hit.key].path.as_str();
            if !files.contains(&path) {
                files.push(path);
            }
        }
        files.truncate(opts.k);
        let core: Vec<&str> = row["ground_truth"]["read_core_files"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let found = core.iter().filter(|c| files.contains(c)).count();
        let rate = if core.is_empty() {
            0.0
        } else {
            found as f64 / core.len() as f64
        };
        hit_sum += rate;
        any_sum += (found > 0) as u8 as f64;
        n += 1;
        println!(
            "{id}: {} chunks, embedded {} in {:.0} s; file hit rate@{} {:.2} ({found}/{}); top files {:?}",
            index.len(),
            report.counts.embedded,
            started.elapsed().as_secs_f64(),
            opts.k,
            rate,
            core.len(),
            files
        );
    }
    println!(
        "mean file hit rate@{} over {n} instances: {:.3}; instances with a core file in top {}: {:.3}",
        opts.k,
        hit_sum / n as f64,
        opts.k,
        any_sum / n as f64
    );
    Ok(())
}

fn cmd_hnsw(opts: &Opts) -> Result<(), Error> {
    let [n] = &opts.positional[..] else {
        return Err("usage: hnsw <n> [--dim D]".into());
    };
    let (vectors, n, dim) = hnsw_vectors(opts, n.parse()?)?;
    let bench = HnswBench::new(vectors, n, dim)?;
    if opts.dry {
        return Ok(());
    }
    let options = IndexOptions {
        exact_below: 1,
        max_connections: opts.max_connections,
        ef_construction: opts.ef_construction,
        graph_load_cost_per_mb: Duration::ZERO,
        ..IndexOptions::default()
    };
    let store_dir =
        tempfile::tempdir_in(opts.cache_root.clone().unwrap_or_else(std::env::temp_dir))?;
    let store = GraphStore::new(store_dir.path(), 2);
    let bytes = bench.build_and_store(&options, &store)?;
    bench.load_rounds(&options, &store, bytes)?;
    bench.load_policies(&options, &store)
}

/// `n` unit vectors: the first `n` of an embedding cache (`--from-cache`, its model's dimension),
/// else pseudo-random ones of `--dim` dimensions.
fn hnsw_vectors(opts: &Opts, mut n: usize) -> Result<(Vec<f32>, usize, usize), Error> {
    let Some(dir) = &opts.from_cache else {
        let dim = opts.dim;
        let mut state = 0x9E3779B97F4A7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let mut vectors = Vec::with_capacity(n * dim);
        for _ in 0..n {
            let v: Vec<f32> = (0..dim).map(|_| next()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            vectors.extend(v.iter().map(|x| x / norm));
        }
        return Ok((vectors, n, dim));
    };
    let identity: ModelIdentity = serde_json::from_slice(&std::fs::read(dir.join("model.json"))?)?;
    let dim = identity.dim;
    let mut all = EmbeddingCache::open_dir(dir, &identity)?.all_vectors();
    if all.len() / dim < n {
        eprintln!("{} holds only {} vectors", dir.display(), all.len() / dim);
        n = all.len() / dim;
    }
    all.truncate(n * dim);
    Ok((all, n, dim))
}

/// The vectors of an HNSW measurement, its queries and the exact index that is their truth.
struct HnswBench {
    n: usize,
    dim: usize,
    vectors: Vec<f32>,
    /// 100 vectors spread over the set, perturbed so none is its own exact match.
    queries: Vec<f32>,
    identity: ModelIdentity,
    exact: DenseIndex<usize>,
}

impl HnswBench {
    /// The queries and the exact index (no graph), whose query time it prints.
    fn new(vectors: Vec<f32>, n: usize, dim: usize) -> Result<HnswBench, Error> {
        let stride = (n / 100).max(1);
        let queries: Vec<f32> = (0..100.min(n))
            .flat_map(|i| {
                let v = &vectors[i * stride * dim..(i * stride + 1) * dim];
                let w = &vectors[((i * stride + 1) % n) * dim..((i * stride + 1) % n + 1) * dim];
                let mixed: Vec<f32> = v.iter().zip(w).map(|(a, b)| 0.7 * a + 0.3 * b).collect();
                let norm = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
                mixed.into_iter().map(move |x| x / norm)
            })
            .collect();
        let identity = ModelIdentity {
            name: "synthetic".into(),
            fingerprint: "0".repeat(64),
            dim,
        };
        let exact = DenseIndex::from_vectors(
            identity.clone(),
            (0..n).collect(),
            vectors.clone(),
            &IndexOptions {
                exact_below: usize::MAX,
                ..IndexOptions::default()
            },
        )?;
        let bench = HnswBench {
            n,
            dim,
            vectors,
            queries,
            identity,
            exact,
        };
        println!(
            "n {n}, dim {dim}: exact query {:.3} ms",
            bench.query_ms(&bench.exact)
        );
        Ok(bench)
    }

    /// The index over the vectors with `options`, its graph built, stored or loaded by `store`.
    fn open(
        &self,
        options: &IndexOptions,
        store: &GraphStore,
        progress: Option<&dyn Fn(usize, usize)>,
    ) -> Result<DenseIndex<usize>, Error> {
        Ok(DenseIndex::with_store(
            self.identity.clone(),
            (0..self.n).collect(),
            self.vectors.clone(),
            options,
            store,
            progress,
        )?)
    }

    /// Builds the graph into the store and prints build, store and key times, size, query time
    /// and recall; returns the stored graph's bytes.
    fn build_and_store(&self, options: &IndexOptions, store: &GraphStore) -> Result<u64, Error> {
        let (n, dim) = (self.n, self.dim);
        let started = Instant::now();
        let key = GraphKey::of(&self.vectors, dim, &options.graph_params());
        let key_ms = started.elapsed().as_secs_f64() * 1000.0;
        let cpu = cpu_seconds();
        let started = Instant::now();
        let built = self.open(options, store, Some(&|_, _| {}))?;
        let build_and_save = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        let GraphState::Built { seconds: build } = built.graph_state() else {
            return Err(format!("expected a built graph, got {:?}", built.graph_state()).into());
        };
        let bytes = store.stored_bytes(&key).ok_or("the graph was not stored")?;
        println!(
            "n {n}, dim {dim}, M {}, ef_construction {}: HNSW build {build:.2} s ({cpu:.1} CPU s with the store), \
             store {:.2} s, {:.1} MB; key {key_ms:.1} ms; HNSW query {:.3} ms; recall@10 vs exact {:.3}",
            options.max_connections,
            options.ef_construction,
            build_and_save - build,
            bytes as f64 / 1e6,
            self.query_ms(&built),
            self.recall(&built),
        );
        Ok(bytes)
    }

    /// Three loads of the stored graph: load time, query time and recall.
    fn load_rounds(
        &self,
        options: &IndexOptions,
        store: &GraphStore,
        bytes: u64,
    ) -> Result<(), Error> {
        for round in 1..=3 {
            let started = Instant::now();
            let loaded = self.open(options, store, None)?;
            let total = started.elapsed().as_secs_f64();
            let GraphState::Loaded { seconds } = loaded.graph_state() else {
                return Err(
                    format!("expected a loaded graph, got {:?}", loaded.graph_state()).into(),
                );
            };
            println!(
                "  load {round}: {seconds:.3} s ({:.2} ms per MB; {total:.3} s with the key); HNSW query {:.3} ms; recall@10 {:.3}",
                seconds * 1000.0 / (bytes as f64 / 1e6),
                self.query_ms(&loaded),
                self.recall(&loaded),
            );
        }
        Ok(())
    }

    /// The load policy: total time of opening an index and asking it q questions, for an index
    /// that never loads the graph, one that loads it at once, and the default (rent, then buy).
    fn load_policies(&self, options: &IndexOptions, store: &GraphStore) -> Result<(), Error> {
        println!(
            "  questions | exact only | load at once | default (load after exact has cost ~ a load)"
        );
        let policies = [
            ("exact", Duration::from_secs(1 << 30)),
            ("eager", Duration::ZERO),
            ("default", IndexOptions::default().graph_load_cost_per_mb),
        ];
        for questions in [1usize, 10, 100, 1000, 5000] {
            let mut row = Vec::new();
            for (_, cost) in policies {
                let options = IndexOptions {
                    graph_load_cost_per_mb: cost,
                    ..options.clone()
                };
                let started = Instant::now();
                let index = self.open(&options, store, None)?;
                for q in self.queries.chunks_exact(self.dim).cycle().take(questions) {
                    index.search(q, 10);
                }
                row.push(started.elapsed().as_secs_f64());
            }
            println!(
                "  {questions:>9} | {:>8.3} s | {:>10.3} s | {:>8.3} s",
                row[0], row[1], row[2]
            );
        }
        Ok(())
    }

    /// The share of the exact top 10 that `index` finds, over the queries.
    fn recall(&self, index: &DenseIndex<usize>) -> f64 {
        let mut found = 0;
        for q in self.queries.chunks_exact(self.dim) {
            let truth: Vec<usize> = self.exact.search(q, 10).iter().map(|h| h.key).collect();
            found += index
                .search(q, 10)
                .iter()
                .filter(|h| truth.contains(&h.key))
                .count();
        }
        found as f64 / (self.queries.len() / self.dim * 10) as f64
    }

    /// Mean milliseconds of one top-10 query.
    fn query_ms(&self, index: &DenseIndex<usize>) -> f64 {
        let started = Instant::now();
        for q in self.queries.chunks_exact(self.dim) {
            index.search(q, 10);
        }
        started.elapsed().as_secs_f64() * 1000.0 / (self.queries.len() / self.dim) as f64
    }
}

/// An engine whose index and embedding caches live in `root` (models from the default root).
fn engine(root: &Path, opts: &Opts) -> Engine {
    Engine::new(EngineConfig {
        cache_dir: root.to_path_buf(),
        dense: DenseConfig {
            models_root: Some(default_cache_root()),
            embedder: EmbedderConfig {
                max_tokens: opts.max_tokens,
                batch_size: opts.batch,
                intra_threads: opts.threads,
                spin: opts.spin,
                ..EmbedderConfig::default()
            },
            text_unit: opts.unit,
            ..DenseConfig::default()
        },
        ..EngineConfig::default()
    })
}

fn cmd_engine_chunks(opts: &Opts) -> Result<(), Error> {
    let [snapshot, out] = &opts.positional[..] else {
        return Err("usage: engine-chunks <snapshot> <out.jsonl>".into());
    };
    let root = opts.cache_root.clone().unwrap_or_else(default_cache_root);
    let index = engine(&root, opts).open(Path::new(snapshot))?;
    let mut file = String::new();
    let mut count = 0;
    for id in 0..index.num_chunks() {
        if index.chunk_key(id).is_none() {
            continue;
        }
        let (path, chunk) = index.chunk(id).expect("a chunk id below num_chunks");
        let body = index.chunk_text(id)?;
        let text = passage_text(
            path,
            chunk.name.as_deref(),
            &body,
            opts.unit,
            opts.max_tokens * 12,
        );
        file.push_str(&serde_json::to_string(&text)?);
        file.push('\n');
        count += 1;
    }
    std::fs::write(out, file)?;
    eprintln!("{count} non-blank chunks from {snapshot}");
    Ok(())
}

/// Prints embedding progress every 30 seconds.
struct EveryHalfMinute(std::sync::Mutex<Instant>);

impl Progress for EveryHalfMinute {
    fn report(&self, stage: Stage, done: u64, total: u64) {
        let mut last = self.0.lock().unwrap();
        if stage == Stage::Embed && last.elapsed().as_secs() >= 30 {
            eprintln!("  {done}/{total}");
            *last = Instant::now();
        }
    }
}

fn cmd_engine_snapshots(opts: &Opts) -> Result<(), Error> {
    let root = opts
        .cache_root
        .clone()
        .ok_or("engine-snapshots needs --cache-root (a fresh directory)")?;
    let engine = engine(&root, opts);
    // --dry: the derived keys the engine uses, in a cache of a stand-in identity.
    let dry_cache = if opts.dry {
        let identity = ModelIdentity {
            name: "dry-run".into(),
            fingerprint: "d".repeat(64),
            dim: 4,
        };
        Some(EmbeddingCache::open(&root, &identity)?)
    } else {
        None
    };
    let domain = match opts.unit {
        TextUnit::Full => "chunk/full".to_owned(),
        TextUnit::Head { lines } => format!("chunk/head:{lines}"),
    };
    for snapshot in &opts.positional {
        let index = engine.open(Path::new(snapshot))?;
        let started = Instant::now();
        let cpu = cpu_seconds();
        let (chunks, embedded) = match &dry_cache {
            Some(cache) => {
                let keys: Vec<TextKey> = (0..index.num_chunks())
                    .filter_map(|id| index.chunk_key(id))
                    .map(|key| cache.derived_key(&domain, &key.to_le_bytes()))
                    .collect();
                let missing: std::collections::HashSet<TextKey> =
                    cache.missing(&keys).into_iter().map(|i| keys[i]).collect();
                let vector = [0.5f32; 4];
                let entries: Vec<(TextKey, &[f32])> =
                    missing.iter().map(|k| (*k, vector.as_slice())).collect();
                cache.insert_many(&entries)?;
                (keys.len(), missing.len())
            }
            None => {
                let report =
                    index.build_dense(&EveryHalfMinute(std::sync::Mutex::new(Instant::now())))?;
                (report.chunks, report.embedded)
            }
        };
        println!(
            "{snapshot}: {chunks} chunks, embedded {embedded} ({:.1}%), {:.1} s, {:.1} CPU s",
            100.0 * embedded as f64 / chunks.max(1) as f64,
            started.elapsed().as_secs_f64(),
            cpu_seconds() - cpu,
        );
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        return Err(
            "usage: dense_bench chunks|embed|snapshots|quality|hnsw|engine-chunks|engine-snapshots ..."
                .into(),
        );
    };
    let opts = parse_opts(rest)?;
    match command.as_str() {
        "chunks" => cmd_chunks(&opts),
        "embed" => cmd_embed(&opts),
        "snapshots" => cmd_snapshots(&opts),
        "quality" => cmd_quality(&opts),
        "hnsw" => cmd_hnsw(&opts),
        "engine-chunks" => cmd_engine_chunks(&opts),
        "engine-snapshots" => cmd_engine_snapshots(&opts),
        other => Err(format!("unknown command {other}").into()),
    }
}
