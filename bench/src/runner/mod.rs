//! The benchmark runner: every selected instance × explorer, scored at every top-k, written as
//! result rows. The library side of `swex bench`.
//!
//! For each instance (in parallel over `workers` rayon threads):
//! 1. the snapshot is found or materialised ([`SnapshotSource`]) and its services opened once
//!    ([`ServicesOpener`]), then shared by the instance's explorers and dropped when the instance
//!    is done — at most `workers` snapshots are open at any time;
//! 2. each explorer that still lacks a row for some k is asked once, at the largest k, and its
//!    answer is cut at each k (as the reference runner does);
//! 3. each cut is scored with the reference metrics ([`crate::metrics`]) against line counts read
//!    from the snapshot, and the rows of all ks are appended together ([`ResultSink`]).
//!
//! Failures never vanish: a missing snapshot, an explorer error or panic, or a missing issue text
//! gives a row with `error` for each k (no regions, zero metrics), and the run goes on. With
//! `--resume` ([`OpenMode::Resume`]) only keys (instance, explorer, k) absent from the files are
//! run. When the run ends, each file is rewritten in a canonical order (benchmark order, then
//! explorer, then k), so an interrupted-and-resumed run and an uninterrupted one give the same
//! file apart from timings.
//!
//! This module does no printing: progress goes to a [`RunObserver`].

pub mod explorer;
mod instance;
pub mod output;
pub mod provenance;
pub mod snapshots;

pub use explorer::{BenchExplorer, Explore};
pub use output::{DEFAULT_OUTPUT, OutputTemplate, ResultSink, Shard, ShardError, TemplateError};
pub use snapshots::{FnOpener, FsOpener, PreparedSnapshot, ServicesOpener, SnapshotSource};

use crate::dataset::{BenchRow, Benchmark};
use crate::report::{MeanRow, means};
use crate::results::{
    LocatedRow, OpenMode, ProducedBy, ResultRow, ResultsError, config_digest, read_results,
    rewrite_ordered,
};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use swex_engine::snapshot::PlainName;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The top-k cuts, sorted, distinct, each at least 1 (see [`parse_top_ks`]).
    pub top_ks: Vec<usize>,
    /// Instances worked on at the same time.
    pub workers: usize,
    pub mode: OpenMode,
    pub output: OutputTemplate,
    /// Only the instances of this shard; also fills the `{shard}` placeholder.
    pub shard: Option<Shard>,
    /// The line budget every request carries (`None`: none, each explorer's own default).
    pub line_budget: Option<u64>,
    /// The ks of the localization metrics, scored for rows whose ground truth has a `fix`
    /// ([`crate::locmetrics`]).
    pub loc_ks: crate::locmetrics::LocKs,
}

/// Errors that stop a run (per-instance problems are rows, not errors).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("--top-k: {0}")]
    TopK(String),
    #[error("--instances: not in {bench}: {ids}")]
    UnknownInstances { bench: String, ids: String },
    #[error("no explorers to run")]
    NoExplorers,
    #[error("explorer `{0}` is given twice")]
    DuplicateExplorer(String),
    #[error("explorer name {0}")]
    ExplorerName(#[from] swex_engine::snapshot::NameError),
    #[error(transparent)]
    Mismatch(#[from] Box<provenance::Mismatch>),
    #[error("starting {workers} worker threads: {message}")]
    Threads { workers: usize, message: String },
}

/// Parses `5,10,20`: sorted, distinct, each in `1..=MAX_TOP_K`.
pub fn parse_top_ks(text: &str) -> Result<Vec<usize>, RunError> {
    let mut ks = Vec::new();
    for part in text.split(',') {
        let k: usize = part
            .trim()
            .parse()
            .map_err(|_| RunError::TopK(format!("{part:?} is not a positive integer")))?;
        if k == 0 {
            return Err(RunError::TopK("top-k values must be at least 1".into()));
        }
        if k > swex_plugin::MAX_TOP_K {
            return Err(RunError::TopK(format!(
                "{k} is above the largest top-k, {}",
                swex_plugin::MAX_TOP_K
            )));
        }
        ks.push(k);
    }
    ks.sort_unstable();
    ks.dedup();
    Ok(ks)
}

/// Which benchmark rows a run covers: `ids` (all when empty), then the first `limit`, then the
/// shard's part. Benchmark order is kept.
pub fn select_instances<'a>(
    bench: &'a Benchmark,
    ids: &[String],
    limit: Option<usize>,
    shard: Option<Shard>,
) -> Result<Vec<&'a BenchRow>, RunError> {
    let mut rows: Vec<&BenchRow> = if ids.is_empty() {
        bench.rows.iter().collect()
    } else {
        let unknown: Vec<&str> = ids
            .iter()
            .filter(|id| bench.get(id).is_none())
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(RunError::UnknownInstances {
                bench: bench.path.display().to_string(),
                ids: unknown.join(", "),
            });
        }
        let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        bench
            .rows
            .iter()
            .filter(|r| wanted.contains(r.instance_id.as_str()))
            .collect()
    };
    if let Some(limit) = limit {
        rows.truncate(limit);
    }
    if let Some(shard) = shard {
        let ids: Vec<&str> = rows.iter().map(|r| r.instance_id.as_str()).collect();
        let keep = shard.select(&ids);
        rows = rows
            .into_iter()
            .zip(keep)
            .filter_map(|(row, keep)| keep.then_some(row))
            .collect();
    }
    Ok(rows)
}

/// What a run is told before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub instances: usize,
    /// Instances with at least one missing row.
    pub to_run: usize,
    /// (explorer call, instance) pairs to run.
    pub calls: usize,
    /// Rows already in the files (resume) for the selected instances and explorers.
    pub rows_present: usize,
    pub files: Vec<PathBuf>,
    /// Torn last lines cut off while opening: (file, line, bytes).
    pub torn_lines: Vec<(PathBuf, usize, usize)>,
}

/// One finished instance.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceEvent {
    pub instance_id: String,
    /// Explorer calls made.
    pub calls: usize,
    /// (explorer, reason) of failed calls.
    pub failures: Vec<(String, String)>,
    /// Problems that did not fail anything: unreadable files, missing ground-truth files, ...
    pub warnings: Vec<String>,
    pub seconds: f64,
}

/// Receives progress; called from worker threads.
pub trait RunObserver: Sync {
    fn started(&self, _plan: &Plan) {}
    fn instance_done(&self, _event: &InstanceEvent) {}
}

/// Observes nothing.
pub struct Silent;
impl RunObserver for Silent {}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub plan: Plan,
    pub rows_written: usize,
    /// Explorer calls that failed in this run.
    pub failures: usize,
    pub seconds: f64,
    /// Means per explorer × k over the selected instances, from every row in the files (resumed
    /// and new); failures count as zeros and are counted.
    pub means: Vec<MeanRow>,
}

/// Everything a run needs.
pub struct Run<'a> {
    pub bench: &'a Benchmark,
    pub instances: Vec<&'a BenchRow>,
    pub explorers: &'a [BenchExplorer],
    pub snapshots: &'a SnapshotSource,
    pub services: &'a dyn ServicesOpener,
    pub config: RunConfig,
}

/// The work of a run: per instance, the explorers (by index) lacking a row for some k.
type Work<'a> = Vec<(&'a BenchRow, Vec<usize>)>;

/// What the parallel part of a run counted.
#[derive(Default)]
struct Tally {
    rows_written: AtomicUsize,
    failures: AtomicUsize,
}

impl Run<'_> {
    /// Checks the run, opens its files, runs every pending (instance, explorer) pair in parallel,
    /// then rewrites the files in canonical order and sums them up.
    pub fn execute(&self, observer: &dyn RunObserver) -> Result<RunSummary, RunError> {
        let started = Instant::now();
        let names = self.checked_explorer_names()?;
        let producers = self.producers();
        let (sink, opened) = self.open_sink(&names, &producers)?;
        let (work, rows_present) = self.pending_work(&sink);
        let plan = Plan {
            instances: self.instances.len(),
            to_run: work.len(),
            calls: work.iter().map(|(_, p)| p.len()).sum(),
            rows_present,
            files: sink.paths(),
            torn_lines: torn_lines(&opened),
        };
        observer.started(&plan);
        let pool = self.thread_pool()?;
        let tally = match self.run_work(&pool, &work, &sink, observer) {
            Ok(tally) => tally,
            Err(error) => {
                let _ = sink.finish();
                return Err(error.into());
            }
        };
        let files = sink.finish()?;
        let summary_rows = self.order_files(&files, &names)?;
        Ok(RunSummary {
            plan,
            rows_written: tally.rows_written.into_inner(),
            failures: tally.failures.into_inner(),
            seconds: started.elapsed().as_secs_f64(),
            means: ordered_means(&summary_rows, &names),
        })
    }

    /// The explorers' names, checked: at least one, no name twice, plain names only (they fill
    /// `{explorer}` in the output template); and the top-ks checked too.
    fn checked_explorer_names(&self) -> Result<Vec<PlainName>, RunError> {
        let config = &self.config;
        if self.explorers.is_empty() {
            return Err(RunError::NoExplorers);
        }
        let mut seen = BTreeSet::new();
        for explorer in self.explorers {
            if !seen.insert(explorer.name.as_str()) {
                return Err(RunError::DuplicateExplorer(explorer.name.clone()));
            }
        }
        if config.top_ks.is_empty() || config.top_ks[0] == 0 {
            return Err(RunError::TopK("give at least one k >= 1".into()));
        }
        if config.top_ks.iter().any(|&k| k > swex_plugin::MAX_TOP_K) {
            return Err(RunError::TopK(format!(
                "top-k values must be at most {}",
                swex_plugin::MAX_TOP_K
            )));
        }
        Ok(self
            .explorers
            .iter()
            .map(|e| PlainName::new(e.name.as_str()))
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// What produces each explorer's rows in this run.
    fn producers(&self) -> HashMap<&str, ProducedBy> {
        let max_k = *self.config.top_ks.last().expect("checked non-empty");
        self.explorers
            .iter()
            .map(|e| (e.name.as_str(), producer(e, max_k, self.config.line_budget)))
            .collect()
    }

    /// The result files, one per explorer (and shard); a resumed run first checks that the rows
    /// already there come from the same producers.
    fn open_sink(
        &self,
        names: &[PlainName],
        producers: &HashMap<&str, ProducedBy>,
    ) -> Result<(ResultSink, output::OpenedFiles), RunError> {
        let config = &self.config;
        let routes: Vec<(PlainName, String)> = names
            .iter()
            .map(|name| (name.clone(), producers[name.as_str()].run_id(name.as_str())))
            .collect();
        let shard_label = config.shard.map(|s| s.label()).unwrap_or_default();
        let (sink, opened) = ResultSink::open(
            &config.output,
            &routes,
            &config.top_ks,
            &shard_label,
            config.mode,
        )?;
        if config.mode == OpenMode::Resume {
            provenance::check_resume(&opened.recovered, producers, &config.top_ks)?;
        }
        Ok((sink, opened))
    }

    /// Per instance, the explorers lacking a row for some k; and how many rows are there already.
    fn pending_work(&self, sink: &ResultSink) -> (Work<'_>, usize) {
        let top_ks = &self.config.top_ks;
        let mut work: Work<'_> = Vec::new();
        let mut rows_present = 0;
        for row in &self.instances {
            let mut pending = Vec::new();
            for (index, explorer) in self.explorers.iter().enumerate() {
                let present = top_ks
                    .iter()
                    .filter(|&&k| sink.contains(&key(row, &explorer.name, k)))
                    .count();
                rows_present += present;
                if present < top_ks.len() {
                    pending.push(index);
                }
            }
            if !pending.is_empty() {
                work.push((row, pending));
            }
        }
        (work, rows_present)
    }

    /// The `workers` threads instances run on.
    fn thread_pool(&self) -> Result<rayon::ThreadPool, RunError> {
        let workers = self.config.workers;
        rayon::ThreadPoolBuilder::new()
            .num_threads(workers.max(1))
            .thread_name(|i| format!("swex-bench-{i}"))
            .build()
            .map_err(|e| RunError::Threads {
                workers,
                message: e.to_string(),
            })
    }

    /// Runs the work on the pool; the first failure to write stops the instances not yet started
    /// and is the error.
    fn run_work(
        &self,
        pool: &rayon::ThreadPool,
        work: &Work<'_>,
        sink: &ResultSink,
        observer: &dyn RunObserver,
    ) -> Result<Tally, ResultsError> {
        let tally = Tally::default();
        let stop = AtomicBool::new(false);
        let write_error: Mutex<Option<ResultsError>> = Mutex::new(None);
        pool.install(|| {
            work.par_iter().for_each(|(row, pending)| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                match self.run_instance(row, pending, sink) {
                    Ok((written, event)) => {
                        tally.rows_written.fetch_add(written, Ordering::Relaxed);
                        tally
                            .failures
                            .fetch_add(event.failures.len(), Ordering::Relaxed);
                        observer.instance_done(&event);
                    }
                    Err(error) => {
                        stop.store(true, Ordering::Relaxed);
                        write_error.lock().expect("error lock").get_or_insert(error);
                    }
                }
            });
        });
        match write_error.into_inner().expect("error lock") {
            Some(error) => Err(error),
            None => Ok(tally),
        }
    }

    /// Rewrites each file in canonical order when it is not, and returns the rows the summary
    /// covers: every row of the files (resumed and new) of the selected instances, explorers and
    /// ks.
    fn order_files(
        &self,
        files: &[PathBuf],
        names: &[PlainName],
    ) -> Result<Vec<ResultRow>, RunError> {
        let bench_position: HashMap<&str, usize> = self
            .bench
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.instance_id.as_str(), i))
            .collect();
        let explorer_position = explorer_positions(names);
        let selected: BTreeSet<&str> = self
            .instances
            .iter()
            .map(|r| r.instance_id.as_str())
            .collect();
        let mut summary_rows = Vec::new();
        for path in files {
            let rows = read_results(path)?;
            let ordered = canonical_order(&rows, &bench_position, &explorer_position);
            if ordered.iter().zip(&rows).any(|(a, b)| a.line != b.line) {
                let rows: Vec<ResultRow> = ordered.iter().map(|r| r.row.clone()).collect();
                rewrite_ordered(path, &rows)?;
            }
            summary_rows.extend(rows.into_iter().map(|r| r.row).filter(|r| {
                selected.contains(r.instance_id.as_str())
                    && explorer_position.contains_key(r.explorer.as_str())
                    && self.config.top_ks.contains(&r.top_k.unwrap_or(0))
            }));
        }
        Ok(summary_rows)
    }
}

/// Torn last lines cut off while opening the files: (file, line, bytes).
fn torn_lines(opened: &output::OpenedFiles) -> Vec<(PathBuf, usize, usize)> {
    opened
        .recovered
        .iter()
        .filter_map(|(path, r)| r.torn_line.map(|(line, len)| (path.clone(), line, len)))
        .collect()
}

/// Each explorer's position in the run.
fn explorer_positions(names: &[PlainName]) -> HashMap<&str, usize> {
    names
        .iter()
        .map(PlainName::as_str)
        .enumerate()
        .map(|(i, n)| (n, i))
        .collect()
}

/// Means per explorer × k, in the run's explorer order.
fn ordered_means(rows: &[ResultRow], names: &[PlainName]) -> Vec<MeanRow> {
    let explorer_position = explorer_positions(names);
    let mut means = means(rows);
    means.sort_by_key(|m| (explorer_position[m.explorer.as_str()], m.top_k));
    means
}

fn key(row: &BenchRow, explorer: &str, k: usize) -> crate::results::RowKey {
    crate::results::RowKey {
        instance_id: row.instance_id.clone(),
        explorer: explorer.to_string(),
        top_k: k,
    }
}

/// What produces `explorer`'s rows in a run whose largest k is `max_k`.
fn producer(explorer: &BenchExplorer, max_k: usize, line_budget: Option<u64>) -> ProducedBy {
    ProducedBy {
        build: explorer.build.clone(),
        config_digest: config_digest(&explorer.config),
        request_top_k: max_k,
        line_budget,
    }
}

/// Rows in canonical order: benchmark position of the instance (unknown instances last), then
/// explorer position (unknown explorers last, by name), then k, then file order.
fn canonical_order<'r>(
    rows: &'r [LocatedRow],
    bench_position: &HashMap<&str, usize>,
    explorer_position: &HashMap<&str, usize>,
) -> Vec<&'r LocatedRow> {
    let mut ordered: Vec<&LocatedRow> = rows.iter().collect();
    ordered.sort_by(|a, b| {
        let rank = |r: &LocatedRow| {
            (
                bench_position
                    .get(r.row.instance_id.as_str())
                    .copied()
                    .unwrap_or(usize::MAX),
                explorer_position
                    .get(r.row.explorer.as_str())
                    .copied()
                    .unwrap_or(usize::MAX),
                r.row.explorer.clone(),
                r.row.top_k,
                r.line,
            )
        };
        rank(a).cmp(&rank(b))
    });
    ordered
}
