//! `swex index`: build (or open) a snapshot's indexes and print what they hold.

use super::progress::StderrProgress;
use crate::out::shown;
use anyhow::Context;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use swex_engine::history::HistoryOrigin;
use swex_engine::index::{DenseBuildReport, Engine, EngineConfig, IndexStats, SnapshotIndex};
use swex_engine::scan::Diagnostic;
use swex_engine::scan::{CheckoutKind, IgnoreReport};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Snapshot directory (a checkout or a materialised benchmark snapshot).
    #[arg(long)]
    pub repo: PathBuf,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print the statistics and every diagnostic as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Diagnostics to list by path in the text output (all are counted).
    #[arg(long, default_value_t = 20)]
    pub show_diagnostics: usize,
    /// Do not build the code graph (it is otherwise built to report its size).
    #[arg(long)]
    pub no_graph: bool,
}

/// Options shared by the commands that open a snapshot.
#[derive(ClapArgs, Debug, Clone)]
pub struct EngineArgs {
    #[command(flatten)]
    pub cache: CacheArgs,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also build the full dense index: embed every chunk that has no cached vector yet (slow
    /// the first time for a repository, tens of chunks per second; needs `swex models fetch`).
    /// Without it, dense search reranks lexical candidates.
    #[arg(long)]
    pub dense: bool,
}

/// Where indexes are cached and which files they take: the engine's configuration.
#[derive(ClapArgs, Debug, Clone)]
pub struct CacheArgs {
    /// Cache folder for indexes [default: $SWEX_CACHE_DIR, else the user cache dir's swex/].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Files larger than this many bytes are not indexed.
    #[arg(long, value_name = "BYTES", default_value_t = swex_engine::scan::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
}

impl CacheArgs {
    pub fn config(&self) -> EngineConfig {
        let mut config = EngineConfig::default();
        if let Some(dir) = &self.cache_dir {
            config.cache_dir = dir.clone();
        }
        config.scan.max_file_size = self.max_file_size;
        config
    }
}

impl EngineArgs {
    pub fn engine(&self) -> Engine {
        Engine::new(self.cache.config())
    }

    pub fn open(
        &self,
        repo: &std::path::Path,
    ) -> anyhow::Result<std::sync::Arc<swex_engine::index::SnapshotIndex>> {
        let engine = self.engine();
        let progress = StderrProgress::new(self.quiet);
        let index = engine
            .open_with_progress(repo, &progress)
            .with_context(|| format!("indexing {}", repo.display()))?;
        progress.finish();
        Ok(index)
    }

    /// With `--dense`, builds the snapshot's full dense index (progress on stderr).
    pub fn build_dense(&self, index: &SnapshotIndex) -> anyhow::Result<Option<DenseBuildReport>> {
        if !self.dense {
            return Ok(None);
        }
        let progress = StderrProgress::new(self.quiet);
        let report = index
            .build_dense(&progress)
            .with_context(|| format!("dense index of {}", index.root().display()))?;
        progress.finish();
        Ok(Some(report))
    }
}

#[derive(serde::Serialize)]
struct Report<'a> {
    root: String,
    stats: &'a IndexStats,
    graph: Option<GraphReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dense: Option<DenseBuildReport>,
    history: HistoryReport,
    diagnostics: &'a [Diagnostic],
}

/// The repository history the `swex` explorer ranks with: read (or built and cached) now.
#[derive(serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum HistoryReport {
    Read {
        commit: String,
        commits: u32,
        files: u32,
        /// `cache`, `extended` (the history of an earlier commit and `new_commits` since) or
        /// `git` (one `git log` of the whole history).
        from: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        new_commits: Option<usize>,
        ms: f64,
    },
    Absent {
        reason: String,
    },
}

impl HistoryReport {
    /// The text after `history   ` in the report.
    fn describe(&self) -> String {
        match self {
            HistoryReport::Read {
                commit,
                commits,
                files,
                from,
                new_commits,
                ms,
            } => format!(
                "{commits} commit{} up to {}, {files} file{} with history, {} in {ms:.0} ms",
                if *commits == 1 { "" } else { "s" },
                &commit[..commit.len().min(12)],
                if *files == 1 { "" } else { "s" },
                match (*from, new_commits) {
                    ("cache", _) => "from the cache".to_owned(),
                    (_, Some(n)) => format!(
                        "extended by {n} new commit{}",
                        if *n == 1 { "" } else { "s" }
                    ),
                    _ => "read from git".to_owned(),
                },
            ),
            HistoryReport::Absent { reason } => format!("none ({})", shown(reason)),
        }
    }

    fn of(index: &SnapshotIndex) -> HistoryReport {
        let started = std::time::Instant::now();
        match index.history_and_origin() {
            Ok((history, origin)) => HistoryReport::Read {
                commit: history.commit().to_owned(),
                commits: history.commits(),
                files: history.files(),
                from: match origin {
                    HistoryOrigin::Cached => "cache",
                    HistoryOrigin::Extended { .. } => "extended",
                    HistoryOrigin::Read => "git",
                },
                new_commits: match origin {
                    HistoryOrigin::Extended { new_commits } => Some(new_commits),
                    _ => None,
                },
                ms: started.elapsed().as_secs_f64() * 1000.0,
            },
            Err(e) => HistoryReport::Absent {
                reason: e.to_string(),
            },
        }
    }
}

#[derive(serde::Serialize)]
struct GraphReport {
    nodes: usize,
    edges: usize,
    stats: swex_engine::graph::GraphStats,
    build_ms: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let index = args.engine.open(&args.repo)?;
    let dense = args.engine.build_dense(&index)?;
    let graph = (!args.no_graph).then(|| {
        let started = std::time::Instant::now();
        let graph = index.graph();
        GraphReport {
            nodes: graph.node_count(),
            edges: graph.edge_count(),
            stats: graph.stats().clone(),
            build_ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    });
    let history = HistoryReport::of(&index);
    let stats = index.stats();
    if args.json {
        let report = Report {
            root: index.root().display().to_string(),
            stats,
            graph,
            dense,
            history,
            diagnostics: index.diagnostics(),
        };
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!("snapshot  {}", shown(&index.root().display().to_string()));
    let languages: Vec<String> = stats
        .files_by_language
        .iter()
        .map(|(language, n)| format!("{language} {n}"))
        .collect();
    outln!(
        "files     {} indexed ({}), {} lines, {}",
        stats.files,
        languages.join(", "),
        stats.lines,
        human_bytes(stats.bytes)
    );
    outln!(
        "chunks    {} chunks, {} definitions",
        stats.chunks,
        stats.definitions
    );
    if let Some(graph) = &graph {
        let g = &graph.stats;
        outln!(
            "graph     {} nodes, {} edges (contains {}, imports {}, references {}, tests {}), built in {:.0} ms",
            graph.nodes,
            graph.edges,
            g.contains,
            g.imports,
            g.references,
            g.tests,
            graph.build_ms
        );
    }
    if let Some(dense) = &dense {
        outln!(
            "dense     {} chunks, {} embedded now, {} from the cache ({}); {}; embed {:.1} s, index {:.1} s",
            dense.chunks,
            dense.embedded,
            dense.cached,
            dense.model,
            dense.graph,
            dense.embed_seconds,
            dense.index_seconds
        );
    }
    outln!("history   {}", history.describe());
    let pool = &stats.pool;
    outln!(
        "lexical   pool {}: {} chunks of this snapshot, {} in the pool ({} added now), {} segments, {}",
        pool.id,
        pool.snapshot_docs,
        pool.docs_total,
        pool.docs_added,
        pool.segments,
        human_bytes(pool.size_bytes)
    );
    if pool.docs_total > 2 * pool.snapshot_docs {
        // Other snapshots' versions, or old versions of this one's files: only the latter are
        // garbage, and only the collection can tell them apart (it reads every manifest).
        outln!(
            "          (most of the pool is other file versions: `swex cache gc` removes those no snapshot uses)"
        );
    }
    outln!("ignored   {}", describe_ignored(&stats.ignored));
    let cache = &stats.cache;
    outln!(
        "cache     {} files unchanged by stat, {} read; analyses {} reused, {} computed; {} invalid entries rebuilt",
        cache.stat_fast_path,
        cache.files_read,
        cache.analyses_reused,
        cache.analyses_computed,
        cache.invalid_entries
    );
    for repair in &cache.pool_repairs {
        outln!("cache     repaired {repair}");
    }
    if cache.write_errors > 0 {
        outln!(
            "cache     {} writes failed (first: {})",
            cache.write_errors,
            cache.first_write_error.as_deref().unwrap_or("")
        );
    }
    let t = &stats.timings_ms;
    outln!(
        "timings   walk {:.0} ms, read {:.0} ms, analyse {:.0} ms, lexical {:.0} ms, total {:.0} ms",
        t.walk,
        t.read,
        t.analyze,
        t.lexical,
        t.total
    );
    let diagnostics = index.diagnostics();
    if !diagnostics.is_empty() {
        let counts: Vec<String> = stats
            .diagnostics_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        outln!("diagnostics {} ({})", diagnostics.len(), counts.join(", "));
        for diagnostic in diagnostics.iter().take(args.show_diagnostics) {
            outln!("  {}", shown(&diagnostic.to_string()));
        }
        if diagnostics.len() > args.show_diagnostics {
            outln!(
                "  … {} more (--show-diagnostics N, or --json)",
                diagnostics.len() - args.show_diagnostics
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `swex index`'s line about ignore rules: what kind of checkout, and what each rule left out.
fn describe_ignored(report: &IgnoreReport) -> String {
    let kind = match report.checkout {
        CheckoutKind::Snapshot => {
            return "nothing: a swex snapshot is indexed as its git tree".to_string();
        }
        CheckoutKind::GitWorkTree => "git work tree",
        CheckoutKind::Plain => "folder",
    };
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut line = if report.rules.is_empty() {
        format!("nothing ({kind})")
    } else {
        let rules: Vec<String> = report
            .rules
            .iter()
            .map(|r| {
                let mut parts = Vec::new();
                if r.folders > 0 {
                    parts.push(plural(r.folders, "folder"));
                }
                if r.files > 0 {
                    parts.push(plural(r.files, "file"));
                }
                format!("{} ({})", r.rule, parts.join(", "))
            })
            .collect();
        format!(
            "{} and {} ({kind}): {}",
            plural(report.folders(), "folder"),
            plural(report.files(), "file"),
            rules.join("; ")
        )
    };
    if report.tracked_kept > 0 {
        line.push_str(&format!(
            "; {} kept: git tracks them",
            plural(report.tracked_kept, "matching file")
        ));
    }
    if let Some(error) = &report.git_error {
        line.push_str(&format!("; tracked files unknown ({error})"));
    }
    line
}

pub(super) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
