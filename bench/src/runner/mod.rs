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
pub mod output;
pub mod provenance;
pub mod snapshots;

pub use explorer::{BenchExplorer, Explore, HostExplorer, IsolatedFactory};
pub use output::{DEFAULT_OUTPUT, OutputTemplate, ResultSink, Shard, ShardError, TemplateError};
pub use snapshots::{FnOpener, FsOpener, PreparedSnapshot, ServicesOpener, SnapshotSource};

use crate::dataset::{BenchRow, Benchmark, Region};
use crate::linecounts::FileLineCounts;
use crate::locmetrics::{self, EntityCache, LocTruth};
use crate::metrics::{Metrics, PreparedTruth, ScoreOptions};
use crate::report::{MeanRow, means};
use crate::results::{
    LocatedRow, OpenMode, ProducedBy, ResultRow, ResultsError, Timings, config_digest,
    read_results, rewrite_ordered,
};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use swex_engine::snapshot::PlainName;
use swex_plugin::Request;

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

impl Run<'_> {
    pub fn execute(&self, observer: &dyn RunObserver) -> Result<RunSummary, RunError> {
        let started = Instant::now();
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
        // Explorer names fill `{explorer}` in the output template: plain names only.
        let names = self
            .explorers
            .iter()
            .map(|e| swex_engine::snapshot::PlainName::new(e.name.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        let max_k = *config.top_ks.last().expect("checked non-empty");
        let producers: HashMap<&str, ProducedBy> = self
            .explorers
            .iter()
            .map(|e| (e.name.as_str(), producer(e, max_k, self.config.line_budget)))
            .collect();
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
            provenance::check_resume(&opened.recovered, &producers, &config.top_ks)?;
        }

        // Work: per instance, the explorers lacking a row for some k.
        let mut work: Vec<(&BenchRow, Vec<usize>)> = Vec::new();
        let mut rows_present = 0;
        for row in &self.instances {
            let mut pending = Vec::new();
            for (index, explorer) in self.explorers.iter().enumerate() {
                let present = config
                    .top_ks
                    .iter()
                    .filter(|&&k| sink.contains(&key(row, &explorer.name, k)))
                    .count();
                rows_present += present;
                if present < config.top_ks.len() {
                    pending.push(index);
                }
            }
            if !pending.is_empty() {
                work.push((row, pending));
            }
        }
        let plan = Plan {
            instances: self.instances.len(),
            to_run: work.len(),
            calls: work.iter().map(|(_, p)| p.len()).sum(),
            rows_present,
            files: sink.paths(),
            torn_lines: opened
                .recovered
                .iter()
                .filter_map(|(path, r)| r.torn_line.map(|(line, len)| (path.clone(), line, len)))
                .collect(),
        };
        observer.started(&plan);

        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.workers.max(1))
            .thread_name(|i| format!("swex-bench-{i}"))
            .build()
            .map_err(|e| RunError::Threads {
                workers: config.workers,
                message: e.to_string(),
            })?;
        let rows_written = AtomicUsize::new(0);
        let failures = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let write_error: Mutex<Option<ResultsError>> = Mutex::new(None);
        pool.install(|| {
            work.par_iter().for_each(|(row, pending)| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let outcome = self.run_instance(row, pending, &sink);
                match outcome {
                    Ok((written, event)) => {
                        rows_written.fetch_add(written, Ordering::Relaxed);
                        failures.fetch_add(event.failures.len(), Ordering::Relaxed);
                        observer.instance_done(&event);
                    }
                    Err(error) => {
                        stop.store(true, Ordering::Relaxed);
                        write_error.lock().expect("error lock").get_or_insert(error);
                    }
                }
            });
        });
        if let Some(error) = write_error.into_inner().expect("error lock") {
            let _ = sink.finish();
            return Err(error.into());
        }
        let files = sink.finish()?;

        // Canonical order, and the summary over everything the files hold.
        let bench_position: HashMap<&str, usize> = self
            .bench
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.instance_id.as_str(), i))
            .collect();
        let explorer_position: HashMap<&str, usize> = names
            .iter()
            .map(PlainName::as_str)
            .enumerate()
            .map(|(i, n)| (n, i))
            .collect();
        let selected: BTreeSet<&str> = self
            .instances
            .iter()
            .map(|r| r.instance_id.as_str())
            .collect();
        let mut summary_rows = Vec::new();
        for path in &files {
            let rows = read_results(path)?;
            let ordered = canonical_order(&rows, &bench_position, &explorer_position);
            if ordered.iter().zip(&rows).any(|(a, b)| a.line != b.line) {
                let rows: Vec<ResultRow> = ordered.iter().map(|r| r.row.clone()).collect();
                rewrite_ordered(path, &rows)?;
            }
            summary_rows.extend(rows.into_iter().map(|r| r.row).filter(|r| {
                selected.contains(r.instance_id.as_str())
                    && explorer_position.contains_key(r.explorer.as_str())
                    && config.top_ks.contains(&r.top_k.unwrap_or(0))
            }));
        }
        Ok(RunSummary {
            plan,
            rows_written: rows_written.into_inner(),
            failures: failures.into_inner(),
            seconds: started.elapsed().as_secs_f64(),
            means: {
                let mut means = means(&summary_rows);
                means.sort_by_key(|m| (explorer_position[m.explorer.as_str()], m.top_k));
                means
            },
        })
    }

    /// Runs the pending explorers of one instance and appends their rows. Only a failure to write
    /// is an error; everything else becomes rows.
    fn run_instance(
        &self,
        row: &BenchRow,
        pending: &[usize],
        sink: &ResultSink,
    ) -> Result<(usize, InstanceEvent), ResultsError> {
        let started = Instant::now();
        let config = &self.config;
        let max_k = *config.top_ks.last().expect("checked non-empty");
        let mut event = InstanceEvent {
            instance_id: row.instance_id.clone(),
            calls: 0,
            failures: Vec::new(),
            warnings: Vec::new(),
            seconds: 0.0,
        };
        let mut written = 0;
        // Rows of keys already written (an explorer resumed for one k only) are left out.
        let mut emit = |rows: Vec<ResultRow>| {
            let missing: Vec<ResultRow> = rows
                .into_iter()
                .filter(|r| !sink.contains(&r.key()))
                .collect();
            written += missing.len();
            sink.append(&missing)
        };

        // Snapshot and services, shared by the explorers of this instance.
        let mut setup = || -> Result<_, String> {
            let issue = row
                .problem_statement
                .as_deref()
                .filter(|t| !t.trim().is_empty())
                .ok_or("no issue text (neither problem_statement nor --issue-map)")?;
            let snapshot = self.snapshots.prepare(row)?;
            let opened_at = Instant::now();
            let (services, warnings) = self.services.open(&snapshot.dir)?;
            let index_ms = Timings::ms(opened_at.elapsed());
            event.warnings.extend(warnings);
            if snapshot.missing_blobs > 0 {
                event.warnings.push(format!(
                    "{} blobs missing from the git directory were skipped",
                    snapshot.missing_blobs
                ));
            }
            Ok((issue, snapshot, services, index_ms))
        };
        let (issue, snapshot, services, index_ms) = match setup() {
            Ok(ready) => ready,
            Err(reason) => {
                let loc = LocTruth::prepare(row, None).map(|(loc, _)| loc);
                for &index in pending {
                    let explorer = &self.explorers[index];
                    event.failures.push((explorer.name.clone(), reason.clone()));
                    emit(failure_rows(
                        row,
                        explorer,
                        config,
                        &reason,
                        None,
                        loc.as_ref(),
                    ))?;
                }
                event.seconds = started.elapsed().as_secs_f64();
                return Ok((written, event));
            }
        };

        let (counts, count_report) =
            FileLineCounts::from_snapshot(&snapshot.dir, &row.ground_truth);
        for path in &count_report.missing_files {
            event
                .warnings
                .push(format!("ground-truth file {path} is not in the snapshot"));
        }
        for path in &count_report.escaping_links {
            event.warnings.push(format!(
                "ground-truth file {path} is a symlink out of the snapshot: not followed, not counted"
            ));
        }
        let truth = PreparedTruth::new(&row.ground_truth, &counts);
        // The peers' localization metrics, for rows whose ground truth comes from a fix.
        let loc = LocTruth::prepare(row, Some(&snapshot.dir)).map(|(loc, warning)| {
            event.warnings.extend(warning);
            loc
        });
        let mut entities = EntityCache::for_snapshot(&snapshot.dir);
        let ground_truth = plugin_ground_truth(row);
        let repo_root = std::fs::canonicalize(&snapshot.dir)
            .unwrap_or_else(|_| snapshot.dir.clone())
            .display()
            .to_string();

        for &index in pending {
            let explorer = &self.explorers[index];
            let mut request = Request::new(row.instance_id.clone(), issue.to_string(), max_k);
            request.repo_root = Some(repo_root.clone());
            request.line_budget = config.line_budget;
            if explorer.sees_ground_truth {
                request.ground_truth = Some(ground_truth.clone());
            }
            let call_started = Instant::now();
            let answer = std::panic::catch_unwind(AssertUnwindSafe(|| {
                explorer.explorer.explore(&request, services.as_ref())
            }))
            .unwrap_or_else(|panic| {
                Err(format!(
                    "explorer panicked: {}",
                    swex_plugin::__private::panic_message(&*panic)
                ))
            });
            let timings = Timings {
                snapshot_ms: snapshot.materialised_ms,
                index_ms,
                explore_ms: Timings::ms(call_started.elapsed()),
            };
            event.calls += 1;
            let rows = match answer {
                Ok(answer) => {
                    let regions: Vec<Region> = answer
                        .regions
                        .iter()
                        .map(|r| Region::new(r.path.clone(), r.start, r.end))
                        .collect();
                    // Every predicted file's real length, for the honest counting next to the
                    // reference's (which knows only ground-truth files).
                    let (lengths, _) = FileLineCounts::from_paths(
                        &snapshot.dir,
                        regions.iter().map(|r| r.path.as_str()),
                    );
                    config
                        .top_ks
                        .iter()
                        .map(|&k| {
                            let cut = &regions[..regions.len().min(k)];
                            let real = truth.score_real(cut, &ScoreOptions::default(), &lengths);
                            let mut result = ResultRow {
                                instance_id: row.instance_id.clone(),
                                explorer: explorer.name.clone(),
                                top_k: Some(k),
                                regions: cut.to_vec(),
                                metrics: truth.score(cut, &ScoreOptions::default()),
                                num_regions: cut.len(),
                                real_metrics: Some(real.metrics),
                                lines_returned: Some(real.lines_returned),
                                line_budget: config.line_budget,
                                error: None,
                                explorer_config: explorer.config.clone(),
                                dropped: answer.dropped,
                                notes: answer.notes.clone(),
                                produced_by: Some(producer(explorer, max_k, config.line_budget)),
                                shard: config.shard.map(|s| s.label()),
                                extra: Default::default(),
                                timings: Some(timings),
                            };
                            if let Some(loc) = &loc {
                                let values = loc.score(cut, &mut entities, &config.loc_ks);
                                locmetrics::set_row(&mut result, &values);
                            }
                            result
                        })
                        .collect()
                }
                Err(reason) => {
                    event.failures.push((explorer.name.clone(), reason.clone()));
                    failure_rows(row, explorer, config, &reason, Some(timings), loc.as_ref())
                }
            };
            emit(rows)?;
        }
        event.seconds = started.elapsed().as_secs_f64();
        Ok((written, event))
    }
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

/// One failure row per k: no regions, zero metrics, the reason in `error`.
fn failure_rows(
    row: &BenchRow,
    explorer: &BenchExplorer,
    config: &RunConfig,
    reason: &str,
    timings: Option<Timings>,
    loc: Option<&LocTruth>,
) -> Vec<ResultRow> {
    let max_k = *config.top_ks.last().expect("checked non-empty");
    // A failed answer is an empty list: 0 at every level that has gold (as LocAgent scores a
    // missing prediction).
    let loc_values =
        loc.map(|loc| locmetrics::score(&Default::default(), &loc.truth, &config.loc_ks));
    config
        .top_ks
        .iter()
        .map(|&k| {
            let mut result = ResultRow {
                instance_id: row.instance_id.clone(),
                explorer: explorer.name.clone(),
                top_k: Some(k),
                regions: Vec::new(),
                metrics: Metrics::default(),
                num_regions: 0,
                real_metrics: Some(Metrics::default()),
                lines_returned: Some(0),
                line_budget: config.line_budget,
                error: Some(reason.to_string()),
                explorer_config: explorer.config.clone(),
                dropped: Default::default(),
                notes: Vec::new(),
                produced_by: Some(producer(explorer, max_k, config.line_budget)),
                shard: config.shard.map(|s| s.label()),
                extra: Default::default(),
                timings,
            };
            if let Some(values) = &loc_values {
                locmetrics::set_row(&mut result, values);
            }
            result
        })
        .collect()
}

/// The ground truth as the plugin request carries it: the benchmark row's object, unchanged.
fn plugin_ground_truth(row: &BenchRow) -> swex_plugin::GroundTruth {
    let value = serde_json::to_value(&row.ground_truth).expect("ground truth serialises");
    serde_json::from_value(value).expect("the plugin's ground truth reads any benchmark object")
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
