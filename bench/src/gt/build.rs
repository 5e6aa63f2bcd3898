//! Aggregating trajectories into benchmark rows, as the reference `bench_build.py` does.
//!
//! Per instance, with every trajectory's reads merged per file:
//! - core (`read_core_regions`, `read_core_files`): the lines every trajectory read — files read
//!   by all trajectories, their line sets intersected;
//! - optional (`read_optional_*_map`): per model, the union of that model's reads minus the core;
//! - `modified_core_files`: files every trajectory modified (submission diff and editor edits);
//! - `main_files`: core files that are also modified core files;
//! - `read_step_info`: every counted read with its trajectory, step and interval (provenance).
//!
//! Whole-file reads are resolved to the snapshot's line count and every read is clipped to it, so
//! rows never carry `end = -1`. Trajectories are filtered by the harness verdict
//! (`resolved.json`) when one is given, and instances with fewer than `min_trajectories` are
//! skipped, each with a reason in the [`BuildReport`].
//!
//! [`build`] streams: each file is loaded and each of its trajectories reduced to
//! [`TrajectoryReads`] against its instance's snapshot before the next, in parallel, so a large
//! collection needs memory for its reads, not for its trajectories. This module knows nothing
//! about how a trajectory's commands become reads ([`super::reads`]).

use super::intervals::LineSet;
use super::load::{self, Problem};
use super::reads::{self, Extraction, ReadPolicy};
use super::repo::{RepoView, SnapshotDir};
use super::trajectory::Trajectory;
use crate::dataset::{BenchRow, GroundTruth, Region};
use rayon::prelude::*;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use swex_engine::snapshot::PlainName;

/// `PATTERN=NAME`: trajectories whose file path matches the regex `PATTERN` are attributed to
/// model `NAME`, overriding the model the file records.
#[derive(Debug, Clone)]
pub struct ModelRule {
    pub pattern: Regex,
    pub name: String,
}

impl std::str::FromStr for ModelRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (pattern, name) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("`{s}`: expected PATTERN=NAME"))?;
        if name.is_empty() {
            return Err(format!("`{s}`: empty model name"));
        }
        let pattern = Regex::new(pattern).map_err(|e| format!("`{s}`: invalid pattern: {e}"))?;
        Ok(ModelRule {
            pattern,
            name: name.to_string(),
        })
    }
}

/// Harness verdicts: which instances a run resolved. Read from `{instance_id: bool}`, a list of
/// resolved ids, or a SWE-bench report with `resolved_ids`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts {
    resolved: BTreeMap<String, bool>,
}

impl Verdicts {
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let mut resolved = BTreeMap::new();
        let ids = |items: &Vec<Value>, into: &mut BTreeMap<String, bool>| -> Result<(), String> {
            for item in items {
                let id = item.as_str().ok_or("resolved ids must be strings")?;
                into.insert(id.to_string(), true);
            }
            Ok(())
        };
        match value {
            Value::Object(map) if map.get("resolved_ids").is_some_and(Value::is_array) => {
                ids(
                    map["resolved_ids"].as_array().expect("checked"),
                    &mut resolved,
                )?;
                if let Some(Value::Array(unresolved)) = map.get("unresolved_ids") {
                    for id in unresolved.iter().filter_map(Value::as_str) {
                        resolved.insert(id.to_string(), false);
                    }
                }
            }
            Value::Object(map) => {
                for (id, v) in map {
                    let ok = v
                        .as_bool()
                        .ok_or_else(|| format!("`{id}`: expected true or false"))?;
                    resolved.insert(id.clone(), ok);
                }
            }
            Value::Array(items) => ids(items, &mut resolved)?,
            _ => return Err("expected an object {instance_id: bool} or a list of ids".into()),
        }
        Ok(Verdicts { resolved })
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = crate::input::read_text(path, crate::input::MAX_DOCUMENT_BYTES)
            .map_err(|e| e.reason())?;
        let value: Value = serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))?;
        Self::from_json(&value)
    }

    /// `Some(true)` resolved, `Some(false)` not, `None` not listed.
    pub fn get(&self, instance_id: &str) -> Option<bool> {
        self.resolved.get(instance_id).copied()
    }
}

/// Which verdicts apply to which trajectories: a `resolved.json` found at the top of a trajectory
/// directory applies to the files under it; a global one to all.
#[derive(Debug, Clone, Default)]
pub struct VerdictScopes {
    scopes: Vec<(Option<PathBuf>, Verdicts)>,
}

impl VerdictScopes {
    pub fn global(verdicts: Verdicts) -> Self {
        VerdictScopes {
            scopes: vec![(None, verdicts)],
        }
    }

    pub fn add_directory(&mut self, dir: PathBuf, verdicts: Verdicts) {
        self.scopes.push((Some(dir), verdicts));
    }

    pub fn is_empty(&self) -> bool {
        self.scopes.is_empty()
    }

    /// The verdict for a trajectory, from the innermost scope that contains its file. `None`
    /// when no scope applies (the trajectory is kept) — `Some(None)` when a scope applies but
    /// does not list the instance.
    pub fn verdict(&self, trajectory: &Trajectory, instance_id: &str) -> Option<Option<bool>> {
        self.scopes
            .iter()
            .filter(|(scope, _)| {
                scope
                    .as_ref()
                    .is_none_or(|d| trajectory.source.starts_with(d))
            })
            .max_by_key(|(scope, _)| scope.as_ref().map_or(0, |d| d.components().count()))
            .map(|(_, v)| v.get(instance_id))
    }
}

#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub policy: ReadPolicy,
    pub min_trajectories: usize,
    pub model_rules: Vec<ModelRule>,
    pub verdicts: VerdictScopes,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            policy: ReadPolicy::Reference,
            min_trajectories: 1,
            model_rules: Vec::new(),
            verdicts: VerdictScopes::default(),
        }
    }
}

/// Where the snapshot of an instance lives.
pub trait SnapshotSource: Sync {
    /// The snapshot view and the `repo_dir` to record in the row, or `None` when absent.
    fn snapshot(&self, instance_id: &str) -> Option<(Box<dyn RepoView>, String)>;
    /// Where the snapshot was looked for, for "missing repository" reports.
    fn describe(&self, instance_id: &str) -> String;
}

/// Snapshots in the reference layout: `<root>/<instance_id>`.
pub struct SnapshotRoot {
    pub root: PathBuf,
}

impl SnapshotSource for SnapshotRoot {
    fn snapshot(&self, instance_id: &str) -> Option<(Box<dyn RepoView>, String)> {
        // Only a plain name is joined: an id such as `../x` names no snapshot.
        let dir = self.root.join(PlainName::new(instance_id).ok()?);
        dir.is_dir().then(|| {
            let label = dir.display().to_string();
            (Box::new(SnapshotDir::new(dir)) as Box<dyn RepoView>, label)
        })
    }

    fn describe(&self, instance_id: &str) -> String {
        self.root.join(instance_id).display().to_string()
    }
}

/// An instance that produced no row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub instance_id: String,
    pub reason: String,
}

/// What happened to the inputs.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    pub problems: Vec<Problem>,
    pub skipped: Vec<Skipped>,
    pub trajectories_read: usize,
    pub trajectories_used: usize,
    /// Trajectories dropped because the harness did not resolve their instance.
    pub unresolved: usize,
    /// Trajectories without an instance id (neither in the file nor in its name).
    pub anonymous: usize,
}

/// Progress events, for a caller that shows progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Loaded { done: usize, total: usize },
    Built { done: usize, total: usize },
}

/// Load every file, in parallel. Problems are returned in file order.
pub fn load_all(
    files: &[PathBuf],
    progress: &(dyn Fn(Progress) + Sync),
) -> (Vec<Trajectory>, Vec<Problem>) {
    let done = AtomicUsize::new(0);
    let loaded: Vec<(Vec<Trajectory>, Vec<Problem>)> = files
        .par_iter()
        .map(|f| {
            let result = load::load_file(f);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(Progress::Loaded {
                done: n,
                total: files.len(),
            });
            result
        })
        .collect();
    let mut trajectories = Vec::new();
    let mut problems = Vec::new();
    for (t, p) in loaded {
        trajectories.extend(t);
        problems.extend(p);
    }
    (trajectories, problems)
}

/// The model a trajectory is attributed to.
pub fn model_of(trajectory: &Trajectory, rules: &[ModelRule]) -> String {
    let path = trajectory.source.display().to_string();
    rules
        .iter()
        .find(|r| r.pattern.is_match(&path))
        .map(|r| r.name.clone())
        .or_else(|| trajectory.model.clone())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Group trajectories by instance, dropping those whose run did not resolve the instance.
pub fn group(
    trajectories: Vec<Trajectory>,
    options: &BuildOptions,
    report: &mut BuildReport,
) -> BTreeMap<String, Vec<Trajectory>> {
    let mut groups: BTreeMap<String, Vec<Trajectory>> = BTreeMap::new();
    let mut unlisted: BTreeMap<String, usize> = BTreeMap::new();
    report.trajectories_read += trajectories.len();
    for t in trajectories {
        let Some(id) = t.instance_id.clone() else {
            report.anonymous += 1;
            report.problems.push(anonymous_problem(&t));
            continue;
        };
        match options.verdicts.verdict(&t, &id) {
            Some(Some(false)) => {
                report.unresolved += 1;
                continue;
            }
            Some(None) => {
                *unlisted.entry(id).or_default() += 1;
                report.unresolved += 1;
                continue;
            }
            _ => {}
        }
        groups.entry(id).or_default().push(t);
    }
    for (id, n) in unlisted {
        report.skipped.push(Skipped {
            instance_id: id,
            reason: format!("{n} trajectories not listed in the resolved verdicts"),
        });
    }
    groups
}

/// Provenance of one counted read, as in the reference's `read_step_info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRead {
    pub traj_path: String,
    pub step_idx: usize,
    pub start: u64,
    pub end: u64,
}

/// What one trajectory contributes to its instance's row: its reads merged per file, its
/// model and where it came from. Small compared with the trajectory itself, so a large collection
/// can be read trajectory by trajectory.
#[derive(Debug, Clone)]
pub struct TrajectoryReads {
    pub model: String,
    pub source: String,
    /// The checkout path the trajectory records (`/testbed`), if any.
    pub workdir: Option<String>,
    pub extraction: Extraction,
    /// Union of the reads per file.
    pub files: BTreeMap<String, LineSet>,
}

impl TrajectoryReads {
    pub fn new(trajectory: &Trajectory, repo: &dyn RepoView, options: &BuildOptions) -> Self {
        let extraction = reads::extract(trajectory, repo, options.policy);
        let mut files: BTreeMap<String, LineSet> = BTreeMap::new();
        for read in &extraction.reads {
            let entry = files.entry(read.path.clone()).or_default();
            *entry = entry.union(&read.lines);
        }
        TrajectoryReads {
            model: model_of(trajectory, &options.model_rules),
            source: trajectory.source.display().to_string(),
            workdir: trajectory.workdir.clone(),
            extraction,
            files,
        }
    }
}

/// Build the row of one instance from its trajectories and snapshot.
pub fn build_instance(
    instance_id: &str,
    trajectories: &[Trajectory],
    repo: &dyn RepoView,
    repo_dir: &str,
    options: &BuildOptions,
) -> BenchRow {
    let per_trajectory: Vec<TrajectoryReads> = trajectories
        .iter()
        .map(|t| TrajectoryReads::new(t, repo, options))
        .collect();
    aggregate(instance_id, &per_trajectory, repo_dir, options)
}

/// Aggregate the reads of an instance's trajectories into its row.
pub fn aggregate(
    instance_id: &str,
    per_trajectory: &[TrajectoryReads],
    repo_dir: &str,
    options: &BuildOptions,
) -> BenchRow {
    // Core: lines every trajectory read.
    let mut core: BTreeMap<String, LineSet> = per_trajectory
        .first()
        .map(|t| t.files.clone())
        .unwrap_or_default();
    for t in per_trajectory.iter().skip(1) {
        core = core
            .into_iter()
            .filter_map(|(path, lines)| {
                let common = lines.intersection(t.files.get(&path)?);
                (!common.is_empty()).then_some((path, common))
            })
            .collect();
    }

    // Optional: per model, its union minus the core.
    let mut by_model: BTreeMap<String, BTreeMap<String, LineSet>> = BTreeMap::new();
    for t in per_trajectory {
        let union = by_model.entry(t.model.clone()).or_default();
        for (path, lines) in &t.files {
            let entry = union.entry(path.clone()).or_default();
            *entry = entry.union(lines);
        }
    }
    let mut optional_regions = BTreeMap::new();
    let mut optional_files = BTreeMap::new();
    for (model, files) in by_model {
        let leftovers: BTreeMap<String, LineSet> = files
            .into_iter()
            .filter_map(|(path, lines)| {
                let rest = match core.get(&path) {
                    Some(c) => lines.difference(c),
                    None => lines,
                };
                (!rest.is_empty()).then_some((path, rest))
            })
            .collect();
        optional_files.insert(model.clone(), leftovers.keys().cloned().collect());
        optional_regions.insert(model, regions(&leftovers));
    }

    let mut modified: Option<BTreeSet<String>> = None;
    for t in per_trajectory {
        modified = Some(match modified {
            None => t.extraction.modified.clone(),
            Some(m) => m.intersection(&t.extraction.modified).cloned().collect(),
        });
    }
    let modified_core_files: Vec<String> = modified.unwrap_or_default().into_iter().collect();
    let main_files: Vec<String> = core
        .keys()
        .filter(|p| modified_core_files.contains(p))
        .cloned()
        .collect();

    let mut step_info: BTreeMap<String, Vec<StepRead>> = BTreeMap::new();
    for t in per_trajectory {
        for read in &t.extraction.reads {
            for iv in read.lines.intervals() {
                step_info
                    .entry(read.path.clone())
                    .or_default()
                    .push(StepRead {
                        traj_path: t.source.clone(),
                        step_idx: read.step,
                        start: iv.start,
                        end: iv.end,
                    });
            }
        }
    }

    let core_regions = regions(&core);
    let mut meta = serde_json::Map::new();
    meta.insert("num_trajectories".into(), per_trajectory.len().into());
    meta.insert("num_read_core".into(), core.len().into());
    meta.insert("num_read_core_regions".into(), core_regions.len().into());
    meta.insert("num_modified_core".into(), modified_core_files.len().into());
    meta.insert("num_main".into(), main_files.len().into());
    meta.insert("read_policy".into(), options.policy.name().into());

    let mut extra = serde_json::Map::new();
    let workdir = per_trajectory
        .iter()
        .find_map(|t| t.workdir.clone())
        .unwrap_or_else(|| super::paths::DEFAULT_ROOT.to_string());
    extra.insert("repo_path".into(), workdir.into());
    extra.insert(
        "read_step_info".into(),
        serde_json::to_value(step_info).expect("plain data serialises"),
    );
    extra.insert("meta".into(), Value::Object(meta));

    BenchRow {
        instance_id: instance_id.to_string(),
        repo: None,
        base_commit: None,
        dataset: None,
        repo_dir: Some(repo_dir.to_string()),
        problem_statement: None,
        ground_truth: GroundTruth {
            read_core_files: core.keys().cloned().collect(),
            read_core_regions: core_regions,
            read_optional_files_map: optional_files,
            read_optional_regions_map: optional_regions,
            modified_core_files,
            main_files,
            extra: serde_json::Map::new(),
        },
        extra,
    }
}

fn regions(files: &BTreeMap<String, LineSet>) -> Vec<Region> {
    files
        .iter()
        .flat_map(|(path, lines)| {
            lines.intervals().iter().map(move |iv| Region {
                path: path.clone(),
                start: iv.start as i64,
                end: iv.end as i64,
            })
        })
        .collect()
}

/// One trajectory read and extracted while streaming through the files.
struct Extracted {
    instance_id: String,
    reads: TrajectoryReads,
}

/// What streaming one file produced.
#[derive(Default)]
struct FileOutcome {
    extracted: Vec<Extracted>,
    problems: Vec<Problem>,
    read: usize,
    unresolved: usize,
    anonymous: usize,
    /// Instances whose verdicts do not list them, with trajectory counts.
    unlisted: BTreeMap<String, usize>,
    /// Instances without a snapshot, with trajectory counts.
    no_snapshot: BTreeMap<String, usize>,
}

/// Build one row per instance (sorted by instance id) from trajectory files. Files are read in
/// parallel and each trajectory is reduced to its reads right away (against its instance's
/// snapshot), so memory holds reads, not trajectories.
pub fn build(
    files: &[PathBuf],
    snapshots: &dyn SnapshotSource,
    options: &BuildOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> (Vec<BenchRow>, BuildReport) {
    type View = Option<(Arc<dyn RepoView>, String)>;
    let views: Mutex<HashMap<String, View>> = Mutex::new(HashMap::new());
    let view_of = |id: &str| -> View {
        let mut views = views.lock().expect("no panics while holding the lock");
        views
            .entry(id.to_string())
            .or_insert_with(|| {
                snapshots
                    .snapshot(id)
                    .map(|(v, label)| (Arc::from(v), label))
            })
            .clone()
    };
    let done = AtomicUsize::new(0);
    let outcomes: Vec<FileOutcome> = files
        .par_iter()
        .map(|file| {
            let (trajectories, problems) = load::load_file(file);
            let mut outcome = FileOutcome {
                problems,
                read: trajectories.len(),
                ..FileOutcome::default()
            };
            for t in trajectories {
                let Some(id) = t.instance_id.clone() else {
                    outcome.anonymous += 1;
                    outcome.problems.push(anonymous_problem(&t));
                    continue;
                };
                match options.verdicts.verdict(&t, &id) {
                    Some(Some(false)) => {
                        outcome.unresolved += 1;
                        continue;
                    }
                    Some(None) => {
                        outcome.unresolved += 1;
                        *outcome.unlisted.entry(id).or_default() += 1;
                        continue;
                    }
                    _ => {}
                }
                match view_of(&id) {
                    Some((view, _)) => outcome.extracted.push(Extracted {
                        reads: TrajectoryReads::new(&t, view.as_ref(), options),
                        instance_id: id,
                    }),
                    None => *outcome.no_snapshot.entry(id).or_default() += 1,
                }
            }
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(Progress::Loaded {
                done: n,
                total: files.len(),
            });
            outcome
        })
        .collect();

    let mut report = BuildReport::default();
    let mut groups: BTreeMap<String, Vec<TrajectoryReads>> = BTreeMap::new();
    let mut unlisted: BTreeMap<String, usize> = BTreeMap::new();
    let mut no_snapshot: BTreeMap<String, usize> = BTreeMap::new();
    for outcome in outcomes {
        report.problems.extend(outcome.problems);
        report.trajectories_read += outcome.read;
        report.unresolved += outcome.unresolved;
        report.anonymous += outcome.anonymous;
        for (id, n) in outcome.unlisted {
            *unlisted.entry(id).or_default() += n;
        }
        for (id, n) in outcome.no_snapshot {
            *no_snapshot.entry(id).or_default() += n;
        }
        for e in outcome.extracted {
            groups.entry(e.instance_id).or_default().push(e.reads);
        }
    }
    for (id, n) in unlisted {
        report.skipped.push(Skipped {
            instance_id: id,
            reason: format!("{n} trajectories not listed in the resolved verdicts"),
        });
    }
    for (id, n) in no_snapshot {
        report.skipped.push(Skipped {
            reason: format!(
                "no repository snapshot at {} ({n} trajectories unused)",
                snapshots.describe(&id)
            ),
            instance_id: id,
        });
    }

    let total = groups.len();
    let done = AtomicUsize::new(0);
    let rows: Vec<Result<(BenchRow, usize), Skipped>> = groups
        .par_iter_mut()
        .map(|(id, reads)| {
            // Files are read in parallel: restore a stable trajectory order.
            reads.sort_by(|a, b| a.source.cmp(&b.source));
            let outcome = if reads.len() < options.min_trajectories {
                Err(Skipped {
                    instance_id: id.clone(),
                    reason: format!(
                        "{} trajectories, fewer than --min-trajectories {}",
                        reads.len(),
                        options.min_trajectories
                    ),
                })
            } else {
                let label = view_of(id).map(|(_, label)| label).unwrap_or_default();
                Ok((aggregate(id, reads, &label, options), reads.len()))
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(Progress::Built { done: n, total });
            outcome
        })
        .collect();
    let mut built = Vec::new();
    for row in rows {
        match row {
            Ok((row, used)) => {
                report.trajectories_used += used;
                built.push(row);
            }
            Err(skipped) => report.skipped.push(skipped),
        }
    }
    report
        .skipped
        .sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
    (built, report)
}

fn anonymous_problem(t: &Trajectory) -> Problem {
    Problem::new(
        &t.source,
        Some(format!("record {}", t.record)),
        "no instance id in the trajectory or its file name",
    )
}
