//! Measures the analysers and the code graph on a repository checkout: analysis time, graph build
//! time, personalised PageRank latency, node/edge counts and chunk statistics.
//!
//! `cargo run --release -p swex-engine --example analyze_repo -- DIR [--repeat N] [--tolerance T]
//! [--slowest N] [--edges KIND]`
//!
//! The file walk here is a minimal stand-in for the engine's scanner (skips `.git`, symlinks,
//! files over 1 MiB and files with a NUL byte in their first 8 KiB); it exists only to measure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use swex_engine::analysis::{ChunkKind, FileAnalysis, Language};
use swex_engine::graph::{
    CodeGraph, Direction, EdgeKind, NodeId, NodeKind, PageRankMethod, PageRankOptions,
};
use swex_engine::lang::{AnalyzeOptions, analyze, detect_language};

const MAX_FILE_BYTES: u64 = 1 << 20;

/// The command line.
struct Options {
    root: PathBuf,
    repeat: usize,
    /// Print this many slowest files to analyse.
    slowest: usize,
    /// Print every edge of this kind instead of measuring PageRank.
    edges: Option<String>,
    tolerance: f64,
}

impl Options {
    fn parse() -> Options {
        let mut args = std::env::args().skip(1);
        let mut root = None;
        let mut repeat = 5usize;
        let mut slowest = 0usize;
        let mut edges: Option<String> = None;
        let mut tolerance = PageRankOptions::default().tolerance;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(5).max(1),
                "--slowest" => slowest = args.next().and_then(|n| n.parse().ok()).unwrap_or(10),
                "--edges" => edges = args.next(),
                "--tolerance" => {
                    tolerance = args
                        .next()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(tolerance)
                }
                _ => root = Some(PathBuf::from(arg)),
            }
        }
        let Some(root) = root else {
            eprintln!("usage: analyze_repo DIR [--repeat N]");
            std::process::exit(2);
        };
        Options {
            root,
            repeat,
            slowest,
            edges,
            tolerance,
        }
    }
}

/// Wall and CPU times of repeated runs.
#[derive(Default)]
struct Timed {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

impl Timed {
    fn run<T>(&mut self, work: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let cpu_started = cpu_time();
        let result = work();
        self.wall.push(started.elapsed());
        self.cpu.push(cpu_time().saturating_sub(cpu_started));
        result
    }
}

fn main() {
    let options = Options::parse();
    let started = Instant::now();
    let files = read_text_files(&options.root);
    let read_time = started.elapsed();
    let (analyses, mut analysis) = analyse_all(&files, options.repeat);
    if options.slowest > 0 {
        print_slowest(&files, options.slowest);
    }
    let pairs: Vec<(&str, &FileAnalysis)> = files
        .iter()
        .map(|(p, _)| p.as_str())
        .zip(&analyses)
        .collect();
    let (graph, mut build) = build_graph(&pairs, options.repeat);
    if let Some(kind) = &options.edges {
        print_edges(&graph, kind);
        return;
    }
    let mut pagerank = PageRankTimes::measure(&graph, options.tolerance);

    let total_bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    println!("repository      {}", options.root.display());
    println!(
        "files           {} text files ({:.1} MiB), read in {}",
        files.len(),
        total_bytes as f64 / 1048576.0,
        ms(read_time)
    );
    println!(
        "analysis        median {} wall, {} CPU over {} runs ({} threads)",
        ms(median(&mut analysis.wall)),
        ms(median(&mut analysis.cpu)),
        analysis.wall.len(),
        rayon::current_num_threads()
    );
    print_graph(&graph, &mut build);
    pagerank.print(options.tolerance);
    print_languages(&analyses);
    print_python_chunks(&analyses, &files);
}

/// Every text file under `root` (no NUL byte in its first 8 KiB), by path.
fn read_text_files(root: &Path) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    walk(root, root, &mut paths);
    paths.sort();
    paths
        .par_iter()
        .filter_map(|relative| {
            let bytes = std::fs::read(root.join(relative)).ok()?;
            let head = &bytes[..bytes.len().min(8192)];
            if head.contains(&0) {
                return None;
            }
            Some((
                relative.clone(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect()
}

/// Every file analysed in parallel, up to three times.
fn analyse_all(files: &[(String, String)], repeat: usize) -> (Vec<FileAnalysis>, Timed) {
    let options = AnalyzeOptions::default();
    let mut timed = Timed::default();
    let mut analyses: Vec<FileAnalysis> = Vec::new();
    for _ in 0..repeat.min(3) {
        analyses = timed.run(|| {
            files
                .par_iter()
                .map(|(path, text)| {
                    analyze(path, detect_language(path, text.as_bytes()), text, &options)
                })
                .collect()
        });
    }
    (analyses, timed)
}

/// The `count` files that take longest to analyse, one at a time.
fn print_slowest(files: &[(String, String)], count: usize) {
    let options = AnalyzeOptions::default();
    let mut timed: Vec<(Duration, &str, usize)> = files
        .iter()
        .map(|(path, text)| {
            let started = Instant::now();
            std::hint::black_box(analyze(
                path,
                detect_language(path, text.as_bytes()),
                text,
                &options,
            ));
            (started.elapsed(), path.as_str(), text.len())
        })
        .collect();
    timed.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    println!("slowest files:");
    for (time, path, bytes) in timed.iter().take(count) {
        println!("  {:>9} {:>9} bytes  {path}", ms(*time), bytes);
    }
}

/// The code graph, built `repeat` times.
fn build_graph(pairs: &[(&str, &FileAnalysis)], repeat: usize) -> (CodeGraph, Timed) {
    let mut timed = Timed::default();
    let mut graph = None;
    for _ in 0..repeat {
        graph = Some(timed.run(|| CodeGraph::build(pairs)));
    }
    (graph.expect("built at least once"), timed)
}

/// Every edge of one kind, for inspection: `--edges imports|tests|references|contains`.
fn print_edges(graph: &CodeGraph, kind: &str) {
    let kind = match kind {
        "imports" => EdgeKind::Imports,
        "tests" => EdgeKind::Tests,
        "references" => EdgeKind::References,
        _ => EdgeKind::Contains,
    };
    for id in graph.nodes() {
        for (to, _) in graph.neighbours(id, &[kind], Direction::Outgoing) {
            let (from, to) = (graph.node(id), graph.node(to));
            println!(
                "{kind:?}\t{}#{}\t{}#{}",
                from.path, from.qualified_name, to.path, to.qualified_name
            );
        }
    }
}

/// PageRank from single definitions spread over the graph, push versus exact power iteration.
struct PageRankTimes {
    seeds: usize,
    push: Vec<Duration>,
    push_cpu: Duration,
    exact: Vec<Duration>,
    exact_cpu: Duration,
    /// Nodes of the exact top 20 also in the push top 20, summed over the seeds.
    top20_agreement: usize,
}

impl PageRankTimes {
    fn measure(graph: &CodeGraph, tolerance: f64) -> PageRankTimes {
        let definitions: Vec<NodeId> = graph
            .nodes()
            .filter(|&id| graph.node(id).kind != NodeKind::File)
            .collect();
        let seeds: Vec<NodeId> = definitions
            .iter()
            .step_by((definitions.len() / 50).max(1))
            .take(50)
            .copied()
            .collect();
        let push_options = PageRankOptions {
            limit: 100,
            tolerance,
            method: PageRankMethod::Push,
            ..PageRankOptions::default()
        };
        let exact_options = PageRankOptions {
            limit: 100,
            method: PageRankMethod::PowerIteration,
            ..PageRankOptions::default()
        };
        let (pushed, push, push_cpu) = rank_each(graph, &seeds, &push_options);
        let (exact_ranks, exact, exact_cpu) = rank_each(graph, &seeds, &exact_options);
        let top20_agreement: usize = pushed
            .iter()
            .zip(&exact_ranks)
            .map(|(push, exact)| {
                let exact_top: std::collections::HashSet<NodeId> =
                    exact.iter().take(20).map(|(id, _)| *id).collect();
                push.iter()
                    .take(20)
                    .filter(|(id, _)| exact_top.contains(id))
                    .count()
            })
            .sum();
        PageRankTimes {
            seeds: seeds.len(),
            push,
            push_cpu,
            exact,
            exact_cpu,
            top20_agreement,
        }
    }

    fn print(&mut self, tolerance: f64) {
        if self.push.is_empty() {
            return;
        }
        let p = |times: &mut Vec<Duration>, q: usize| {
            times.sort();
            ms(times[(times.len() * q / 100).min(times.len() - 1)])
        };
        println!(
            "pagerank push   p50 {}, p95 {} wall, mean {} CPU over {} single-definition seeds (tolerance {tolerance:e})",
            p(&mut self.push, 50),
            p(&mut self.push, 95),
            ms(self.push_cpu),
            self.seeds
        );
        println!(
            "pagerank exact  p50 {}, p95 {} wall, mean {} CPU (power iteration); top-20 overlap with push {:.1}%",
            p(&mut self.exact, 50),
            p(&mut self.exact, 95),
            ms(self.exact_cpu),
            100.0 * self.top20_agreement as f64 / (20 * self.seeds) as f64
        );
    }
}

/// One personalised PageRank's ranking.
type Ranking = Vec<(NodeId, f64)>;

/// PageRank from each seed alone: the rankings, each one's wall time, and the mean CPU time.
fn rank_each(
    graph: &CodeGraph,
    seeds: &[NodeId],
    options: &PageRankOptions,
) -> (Vec<Ranking>, Vec<Duration>, Duration) {
    let mut times = Vec::new();
    let cpu_started = cpu_time();
    let ranked = seeds
        .iter()
        .map(|seed| {
            let started = Instant::now();
            let ranked = graph.personalized_pagerank(&[(*seed, 1.0)], options);
            times.push(started.elapsed());
            ranked
        })
        .collect();
    let cpu = cpu_time().saturating_sub(cpu_started) / seeds.len().max(1) as u32;
    (ranked, times, cpu)
}

/// Build times and the graph's node and edge counts.
fn print_graph(graph: &CodeGraph, build: &mut Timed) {
    let stats = graph.stats();
    println!(
        "graph build     median {} wall, {} CPU, min {} wall over {} runs",
        ms(median(&mut build.wall)),
        ms(median(&mut build.cpu)),
        ms(*build.wall.iter().min().expect("runs")),
        build.wall.len()
    );
    println!(
        "graph           {} nodes ({} files, {} definitions), {} edges",
        graph.node_count(),
        stats.files,
        stats.definitions,
        graph.edge_count()
    );
    println!(
        "edges           contains {}, imports {}, references {}, tests {}",
        stats.contains, stats.imports, stats.references, stats.tests
    );
}

/// Files, chunks, chunk lengths, definitions and files with syntax errors per language.
fn print_languages(analyses: &[FileAnalysis]) {
    let mut by_language: BTreeMap<String, (usize, usize, u64, usize, usize)> = BTreeMap::new();
    for analysis in analyses {
        let key = analysis
            .language
            .map_or("text".to_owned(), |l| format!("{l:?}").to_lowercase());
        let entry = by_language.entry(key).or_default();
        entry.0 += 1;
        entry.1 += analysis.chunks.len();
        entry.2 += analysis
            .chunks
            .iter()
            .map(|c| u64::from(c.end - c.start + 1))
            .sum::<u64>();
        entry.3 += analysis.definitions.len();
        entry.4 += usize::from(analysis.has_syntax_errors);
    }
    println!(
        "\n{:<12} {:>7} {:>8} {:>11} {:>11} {:>12} {:>8}",
        "language", "files", "chunks", "chunks/file", "mean lines", "definitions", "errors"
    );
    for (language, (count, chunks, lines, definitions, errors)) in &by_language {
        println!(
            "{language:<12} {count:>7} {chunks:>8} {:>11.1} {:>11.1} {definitions:>12} {errors:>8}",
            *chunks as f64 / *count as f64,
            *lines as f64 / (*chunks).max(1) as f64
        );
    }
}

/// Python chunks by kind, and the gap chunks that hold more than blank lines.
fn print_python_chunks(analyses: &[FileAnalysis], files: &[(String, String)]) {
    if !analyses
        .iter()
        .any(|a| a.language == Some(Language::Python))
    {
        return;
    }
    let mut kinds: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    let mut non_blank_gaps = 0usize;
    for (analysis, (_, text)) in analyses.iter().zip(files) {
        if analysis.language != Some(Language::Python) {
            continue;
        }
        let lines: Vec<&str> = text.split('\n').collect();
        for chunk in &analysis.chunks {
            let entry = kinds.entry(format!("{:?}", chunk.kind)).or_default();
            entry.0 += 1;
            entry.1 += u64::from(chunk.end - chunk.start + 1);
            if chunk.kind == ChunkKind::Gap
                && lines[(chunk.start - 1) as usize..chunk.end as usize]
                    .iter()
                    .any(|l| !l.trim().is_empty())
            {
                non_blank_gaps += 1;
            }
        }
    }
    println!("\nPython chunks by kind (count, mean lines):");
    for (kind, (count, lines)) in kinds {
        println!(
            "  {kind:<10} {count:>7} {:>7.1}",
            lines as f64 / count as f64
        );
    }
    println!("  (gap chunks with non-blank content: {non_blank_gaps})");
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if entry.file_name() != ".git" {
                walk(root, &path, out);
            }
        } else if kind.is_file()
            && entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES)
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// CPU time of this process (user + system, all threads) from `/proc/self/stat`; zero elsewhere.
/// Reported next to wall time because the measuring machine is shared.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10) // USER_HZ is 100 on Linux
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}
