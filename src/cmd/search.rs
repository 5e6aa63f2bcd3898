//! `swex search`: symbol, text and graph queries against a snapshot from the terminal. `--text`
//! is the engine's ranked code search (`swex_engine::search`: one span per file, definitions
//! first); `--raw` gives the plain BM25 chunks instead.

use super::index::EngineArgs;
use crate::out::shown;
use clap::{ArgGroup, Args as ClapArgs};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use swex_engine::graph::{Direction, EdgeKind, NodeId, PageRankOptions};
use swex_engine::index::{SearchFilters, SnapshotIndex};
use swex_engine::search::{DenseUse, SearchOptions};
use swex_plugin::text::Glob;

/// When dense (embedding) scores are used (`--dense-scores`): fused into a code search's ranking
/// (`swex search`, `swex bench`), or computed as feature columns (`swex train`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenseScores {
    /// Where they are cheap: when the embedding model is installed and the process keeps it
    /// loaded (`swex bench`, `swex train`); never in a one-shot `swex search`.
    Auto,
    /// Never: lexical scores only, as on a machine without the model.
    Off,
    /// Always: failing when the model is missing.
    On,
}

impl From<DenseScores> for DenseUse {
    fn from(when: DenseScores) -> DenseUse {
        match when {
            DenseScores::Auto => DenseUse::Auto,
            DenseScores::Off => DenseUse::Off,
            DenseScores::On => DenseUse::On,
        }
    }
}

#[derive(ClapArgs, Debug)]
#[command(group(ArgGroup::new("query").required(true).args(["symbol", "text", "neighbours"])))]
pub struct Args {
    /// Snapshot directory.
    #[arg(long)]
    pub repo: PathBuf,
    /// Definitions with this name (bare, qualified, or a dotted suffix such as `Model.save`).
    #[arg(long)]
    pub symbol: Option<String>,
    /// Ranked code search with a short query: a symbol (`HttpClient`), a phrase or a question
    /// (`how are middlewares ordered?`). One span per file (the matching definition, else the
    /// best chunk); tests, docs and examples come after the code unless the query asks for them.
    #[arg(long)]
    pub text: Option<String>,
    /// With --text: plain BM25 chunks of the issue query builder (several per file, no ranking
    /// stage), e.g. for a whole issue text.
    #[arg(long, requires = "text")]
    pub raw: bool,
    /// With --text: spans per file.
    #[arg(long, default_value_t = 1, value_name = "N", requires = "text")]
    pub per_file: usize,
    /// With --text: fuse dense (embedding) scores: `on` (fail without the model), `off`, or
    /// `auto`: when they are cheap, which in this one-shot command they never are (loading the
    /// embedding model for one query costs seconds and hundreds of MB, for a small gain), so
    /// `auto` is lexical here; the MCP server, which keeps the model loaded, fuses them.
    #[arg(long, value_enum, default_value_t = DenseScores::Auto, value_name = "WHEN", requires = "text")]
    pub dense_scores: DenseScores,
    /// Graph neighbours of a file (imports, references, tests, containment).
    #[arg(long, value_name = "PATH")]
    pub neighbours: Option<String>,
    /// Results to print.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only files matching this glob (`*.py`, `django/db/**`), for --text.
    #[arg(long)]
    pub glob: Option<String>,
    /// Print a JSON array of {path, start, end, kind, name, score}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// One result line, the same shape for every query kind.
#[derive(serde::Serialize)]
struct Row {
    path: String,
    start: u32,
    end: u32,
    kind: String,
    name: Option<String>,
    score: Option<f32>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let index = args.engine.open(&args.repo)?;
    let rows: Vec<Row> = if let Some(symbol) = &args.symbol {
        index
            .definitions(symbol)
            .into_iter()
            .take(args.limit)
            .map(|d| Row {
                path: d.path,
                start: d.start,
                end: d.end,
                kind: serde_name(d.kind),
                name: Some(d.qualified_name),
                score: None,
            })
            .collect()
    } else if let Some(text) = &args.text {
        let filters = SearchFilters {
            path_glob: args.glob.as_deref().map(Glob::new).transpose()?,
            ..SearchFilters::default()
        };
        if args.raw {
            index
                .search_text(text, args.limit, &filters)?
                .into_iter()
                .map(|hit| Row {
                    path: hit.path,
                    start: hit.start,
                    end: hit.end,
                    kind: serde_name(hit.kind),
                    name: hit.name,
                    score: Some(hit.score),
                })
                .collect()
        } else {
            let dense = match args.dense_scores {
                // One query per process: the model's load would cost more than the search.
                DenseScores::Auto | DenseScores::Off => DenseUse::Off,
                DenseScores::On => DenseUse::On,
            };
            if args.per_file == 0 {
                anyhow::bail!("--per-file must be at least 1");
            }
            let options = SearchOptions {
                limit: args.limit,
                per_file: args.per_file,
                filters,
                dense,
                ..SearchOptions::default()
            };
            let results = index.search(text, &options)?;
            if !args.json {
                errln!(
                    "{} query{}{}",
                    results.kind.as_str(),
                    if results.dense {
                        ", dense scores fused"
                    } else {
                        ""
                    },
                    if results.grep_fallback {
                        ", no ranked match: files that mention it"
                    } else {
                        ""
                    }
                );
            }
            results
                .hits
                .into_iter()
                .map(|hit| Row {
                    path: hit.path,
                    start: hit.start,
                    end: hit.end,
                    kind: serde_name(hit.kind),
                    name: hit.name,
                    score: Some(hit.score),
                })
                .collect()
        }
    } else if let Some(path) = &args.neighbours {
        neighbours(&index, path, args.limit)?
    } else {
        unreachable!("clap requires one query");
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
    } else if rows.is_empty() {
        errln!("no results");
    } else {
        for row in &rows {
            let score = row.score.map(|s| format!("{s:8.3}  ")).unwrap_or_default();
            let name = row.name.as_deref().unwrap_or("");
            outln!(
                "{score}{}:{}-{}  {} {}",
                shown(&row.path),
                row.start,
                row.end,
                row.kind,
                shown(name)
            );
        }
    }
    SnapshotIndex::release_at_exit(index);
    Ok(ExitCode::SUCCESS)
}

/// Direct graph neighbours of a file and of its definitions, scored by personalised PageRank
/// from the file (so the most connected come first).
fn neighbours(index: &SnapshotIndex, path: &str, limit: usize) -> anyhow::Result<Vec<Row>> {
    let graph = index.graph();
    let Some(file) = graph.file_node(path) else {
        anyhow::bail!(
            "{path} is not a file of the snapshot's graph (see `swex index --repo … --json` for the file list)"
        );
    };
    let ranks: HashMap<NodeId, f64> = graph
        .personalized_pagerank(&[(file, 1.0)], &PageRankOptions::default())
        .into_iter()
        .collect();
    // The file's own definitions are part of it, not neighbours; their edges are the file's.
    let own: Vec<NodeId> = std::iter::once(file)
        .chain(
            graph
                .neighbours(file, &[EdgeKind::Contains], Direction::Outgoing)
                .into_iter()
                .map(|(id, _)| id),
        )
        .collect();
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for &node in &own {
        for (id, edge) in graph.neighbours(node, &[], Direction::Both) {
            if own.contains(&id) || graph.node(id).file == file || !seen.insert(id) {
                continue;
            }
            let info = graph.node(id);
            rows.push((
                ranks.get(&id).copied().unwrap_or(0.0),
                Row {
                    path: info.path.clone(),
                    start: info.start,
                    end: info.end,
                    kind: serde_name(edge),
                    name: Some(info.qualified_name.clone()),
                    score: None,
                },
            ));
        }
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    Ok(rows
        .into_iter()
        .take(limit)
        .map(|(score, mut row)| {
            row.score = Some(score as f32);
            row
        })
        .collect())
}

fn serde_name<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
