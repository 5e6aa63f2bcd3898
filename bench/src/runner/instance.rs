//! One instance of a run, as named steps: open its snapshot and services once, prepare what
//! scores its answers, then ask each pending explorer and append the rows of every k.
//!
//! Only a failure to write is an error here; a missing snapshot or issue text, an explorer error
//! or panic become failure rows with the reason, so the run goes on.

use super::{BenchExplorer, InstanceEvent, PreparedSnapshot, Run, RunConfig, producer};
use crate::dataset::{BenchRow, Region};
use crate::linecounts::FileLineCounts;
use crate::locmetrics::{self, EntityCache, LocTruth};
use crate::metrics::{Metrics, PreparedTruth, ScoreOptions};
use crate::results::{ResultRow, ResultsError, Timings};
use crate::runner::output::ResultSink;
use std::time::Instant;
use swex_plugin::Request;
use swex_plugin_host::{RawServices, ValidatedResponse};

/// The rows one instance appends and what it reports, while its explorers run.
struct Progress<'r> {
    sink: &'r ResultSink,
    event: InstanceEvent,
    written: usize,
    started: Instant,
}

impl Progress<'_> {
    /// Appends `rows`, leaving out keys already written (an explorer resumed for one k only).
    fn emit(&mut self, rows: Vec<ResultRow>) -> Result<(), ResultsError> {
        let missing: Vec<ResultRow> = rows
            .into_iter()
            .filter(|r| !self.sink.contains(&r.key()))
            .collect();
        self.written += missing.len();
        self.sink.append(&missing)
    }

    fn finish(mut self) -> (usize, InstanceEvent) {
        self.event.seconds = self.started.elapsed().as_secs_f64();
        (self.written, self.event)
    }
}

/// An instance's snapshot and services, shared by its explorers.
struct Opened<'r> {
    issue: &'r str,
    snapshot: PreparedSnapshot,
    services: Box<dyn RawServices>,
    index_ms: f64,
}

/// What scores an instance's answers: the reference metrics' truth, the localization metrics'
/// (rows whose ground truth comes from a fix) and the request's view of the snapshot.
struct Scoring {
    truth: PreparedTruth,
    loc: Option<LocTruth>,
    entities: EntityCache,
    ground_truth: swex_plugin::GroundTruth,
    repo_root: String,
}

impl Run<'_> {
    /// Runs the pending explorers of one instance and appends their rows. Only a failure to write
    /// is an error; everything else becomes rows.
    pub(super) fn run_instance(
        &self,
        row: &BenchRow,
        pending: &[usize],
        sink: &ResultSink,
    ) -> Result<(usize, InstanceEvent), ResultsError> {
        let mut progress = Progress {
            sink,
            event: InstanceEvent {
                instance_id: row.instance_id.clone(),
                calls: 0,
                failures: Vec::new(),
                warnings: Vec::new(),
                seconds: 0.0,
            },
            written: 0,
            started: Instant::now(),
        };
        match self.open_instance(row, &mut progress.event) {
            Ok(opened) => {
                let mut scoring = Scoring::prepare(row, &opened.snapshot, &mut progress.event);
                for &index in pending {
                    let explorer = &self.explorers[index];
                    let rows =
                        self.explorer_rows(row, explorer, &opened, &mut scoring, &mut progress);
                    progress.emit(rows)?;
                }
            }
            Err(reason) => self.fail_pending(row, pending, &reason, &mut progress)?,
        }
        Ok(progress.finish())
    }

    /// The issue text, the snapshot and its services; warnings of opening go to `event`.
    fn open_instance<'r>(
        &self,
        row: &'r BenchRow,
        event: &mut InstanceEvent,
    ) -> Result<Opened<'r>, String> {
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
        Ok(Opened {
            issue,
            snapshot,
            services,
            index_ms,
        })
    }

    /// Failure rows for every pending explorer when the instance could not be opened.
    fn fail_pending(
        &self,
        row: &BenchRow,
        pending: &[usize],
        reason: &str,
        progress: &mut Progress<'_>,
    ) -> Result<(), ResultsError> {
        let loc = LocTruth::prepare(row, None).map(|(loc, _)| loc);
        for &index in pending {
            let explorer = &self.explorers[index];
            progress
                .event
                .failures
                .push((explorer.name.clone(), reason.to_owned()));
            progress.emit(failure_rows(
                row,
                explorer,
                &self.config,
                reason,
                None,
                loc.as_ref(),
            ))?;
        }
        Ok(())
    }

    /// Asks one explorer and turns its answer, or its failure, into the rows of every k.
    fn explorer_rows(
        &self,
        row: &BenchRow,
        explorer: &BenchExplorer,
        opened: &Opened<'_>,
        scoring: &mut Scoring,
        progress: &mut Progress<'_>,
    ) -> Vec<ResultRow> {
        let request = self.request(row, explorer, opened.issue, scoring);
        let call_started = Instant::now();
        let answer = explorer.answer(&request, opened.services.as_ref());
        let timings = Timings {
            snapshot_ms: opened.snapshot.materialised_ms,
            index_ms: opened.index_ms,
            explore_ms: Timings::ms(call_started.elapsed()),
        };
        progress.event.calls += 1;
        match answer {
            Ok(answer) => self.answer_rows(row, explorer, &answer, opened, scoring, timings),
            Err(reason) => {
                progress
                    .event
                    .failures
                    .push((explorer.name.clone(), reason.clone()));
                failure_rows(
                    row,
                    explorer,
                    &self.config,
                    &reason,
                    Some(timings),
                    scoring.loc.as_ref(),
                )
            }
        }
    }

    /// The request of one call: the largest k, the snapshot root, the run's line budget, and the
    /// ground truth for an explorer that may see it.
    fn request(
        &self,
        row: &BenchRow,
        explorer: &BenchExplorer,
        issue: &str,
        scoring: &Scoring,
    ) -> Request {
        let max_k = *self.config.top_ks.last().expect("checked non-empty");
        let mut request = Request::new(row.instance_id.clone(), issue.to_string(), max_k);
        request.repo_root = Some(scoring.repo_root.clone());
        request.line_budget = self.config.line_budget;
        if explorer.sees_ground_truth {
            request.ground_truth = Some(scoring.ground_truth.clone());
        }
        request
    }

    /// An answer cut at every k and scored: the reference counting, every predicted file's real
    /// length, and the localization metrics when the truth has them.
    fn answer_rows(
        &self,
        row: &BenchRow,
        explorer: &BenchExplorer,
        answer: &ValidatedResponse,
        opened: &Opened<'_>,
        scoring: &mut Scoring,
        timings: Timings,
    ) -> Vec<ResultRow> {
        let config = &self.config;
        let max_k = *config.top_ks.last().expect("checked non-empty");
        let regions: Vec<Region> = answer
            .regions
            .iter()
            .map(|r| Region::new(r.path.clone(), r.start, r.end))
            .collect();
        // Every predicted file's real length, for the honest counting next to the reference's
        // (which knows only ground-truth files).
        let (lengths, _) = FileLineCounts::from_paths(
            &opened.snapshot.dir,
            regions.iter().map(|r| r.path.as_str()),
        );
        config
            .top_ks
            .iter()
            .map(|&k| {
                let cut = &regions[..regions.len().min(k)];
                let real = scoring
                    .truth
                    .score_real(cut, &ScoreOptions::default(), &lengths);
                let mut result = ResultRow {
                    instance_id: row.instance_id.clone(),
                    explorer: explorer.name.clone(),
                    top_k: Some(k),
                    regions: cut.to_vec(),
                    metrics: scoring.truth.score(cut, &ScoreOptions::default()),
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
                if let Some(loc) = &scoring.loc {
                    let values = loc.score(cut, &mut scoring.entities, &config.loc_ks);
                    locmetrics::set_row(&mut result, &values);
                }
                result
            })
            .collect()
    }
}

impl Scoring {
    /// Line counts of the ground-truth files (what is missing or escapes the snapshot becomes a
    /// warning), the localization truth, and the snapshot's canonical root for requests.
    fn prepare(row: &BenchRow, snapshot: &PreparedSnapshot, event: &mut InstanceEvent) -> Scoring {
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
        let repo_root = std::fs::canonicalize(&snapshot.dir)
            .unwrap_or_else(|_| snapshot.dir.clone())
            .display()
            .to_string();
        Scoring {
            truth,
            loc,
            entities: EntityCache::for_snapshot(&snapshot.dir),
            ground_truth: plugin_ground_truth(row),
            repo_root,
        }
    }
}

/// One failure row per k: no regions, zero metrics, the reason in `error`.
pub(super) fn failure_rows(
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
