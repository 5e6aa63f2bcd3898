//! `swex dataset import`: SWE-bench-family task files as they are published → bench rows that
//! `swex snapshot` and `swex bench` take as they are, with ground truth from the fix
//! ([`crate::fix`]).
//!
//! Input: JSON lines, one JSON array of objects, or Parquet (`.parquet`, read with the `parquet`
//! crate's record API) per file. Each row is read through the first
//! schema of [`schema::SCHEMAS`] that recognises it. Nothing is dropped silently: every row that
//! cannot be read or used is a [`Problem`] naming its file, line (or array index), id when known,
//! and reason; rows equal to an earlier row of the same id are counted as duplicates, rows that
//! differ from it are problems.
//!
//! A bench row written here has `dataset` = the schema name, `repo`, `base_commit`,
//! `problem_statement`, `language` when the task says it, the fix `patch` when it had one, the
//! task's test lists as JSON arrays ([`schema::TEST_LISTS`]), and a
//! `ground_truth` whose core files, modified files and main files are the pre-existing files the
//! fix changes, whose core regions are its edited pre-fix lines, and whose `fix` is the
//! [`FixTruth`]. Definitions are added when the base commit's files can be read (`--repos`),
//! else when a run scores the row with its snapshot.
//!
//! With a release file, the output is its rows joined with the task rows; trajectories
//! ([`trajectories`]) give base commits where the task files have none.

pub mod literal;
pub mod schema;
pub mod trajectories;

use crate::dataset::{BenchRow, GroundTruth, Region};
use crate::fix::{FixTruth, patch};
use schema::{FixSource, Task};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use trajectories::{Lookup, Trajectories};

/// One row that was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `file:line` (JSON lines) or `file[index]` (a JSON array).
    pub at: String,
    pub instance_id: Option<String>,
    pub reason: String,
}

/// What an import made.
#[derive(Debug, Default)]
pub struct Imported {
    pub rows: Vec<BenchRow>,
    pub problems: Vec<Problem>,
    /// Rows read, per schema name.
    pub by_schema: BTreeMap<&'static str, usize>,
    /// Rows (task or release rows) equal to an earlier row of the same id, left out.
    pub duplicates: usize,
    /// Rows whose definitions were found from the base commit's files.
    pub with_definitions: usize,
    /// With a release file: task rows no release row asked for (not written).
    pub unused_tasks: usize,
    /// With trajectories: the files read, the ids they give a base commit, and the rows that took
    /// theirs from them.
    pub trajectory_files: usize,
    pub trajectory_commits: usize,
    pub commits_from_trajectories: usize,
}

/// Options of an import.
#[derive(Debug, Default, Clone)]
pub struct ImportOptions {
    /// Snapshot folders `repos/<instance_id>` at each row's base commit: definitions are found
    /// at import and a patch that does not apply is a problem.
    pub repos: Option<PathBuf>,
    /// SWE-Explore release rows (reference schema, ground truth kept): the output is these rows,
    /// joined with the task rows of the same id for `repo`, `base_commit`, the issue text and the
    /// fix.
    pub release: Option<PathBuf>,
    /// Trajectories and commit maps ([`trajectories`]): the base commit of a task row that has
    /// none, and of a release row without a task row.
    pub trajectories: Option<PathBuf>,
}

/// A file that cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: String, message: String },
}

/// Reads every task file and makes bench rows.
pub fn import(files: &[PathBuf], options: &ImportOptions) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new(); // id → (content, row index)
    let mut failed: BTreeMap<String, String> = BTreeMap::new(); // id → why its task row failed
    let trajectories = match &options.trajectories {
        Some(dir) => {
            let read = Trajectories::read(dir, &mut out.problems)?;
            out.trajectory_files = read.files;
            out.trajectory_commits = read.commits();
            Some(read)
        }
        None => None,
    };
    for file in files {
        for (at, parsed) in read_objects(file)? {
            let row = match parsed {
                Ok(row) => row,
                Err(reason) => {
                    out.problems.push(Problem {
                        at,
                        instance_id: None,
                        reason,
                    });
                    continue;
                }
            };
            let id = row
                .get("instance_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            let problem = |reason: String, id: Option<String>| Problem {
                at: at.clone(),
                instance_id: id,
                reason,
            };
            let schema = match schema::recognise(&row) {
                Ok(schema) => schema,
                Err(reason) => {
                    out.problems.push(problem(reason, id));
                    continue;
                }
            };
            let mut task = match (schema.read)(&row) {
                Ok(task) => task,
                Err(reason) => {
                    out.problems.push(problem(reason, id));
                    continue;
                }
            };
            let id = Some(task.instance_id.clone());
            let content = serde_json::to_string(&row).unwrap_or_default();
            if let Some((earlier, _)) = seen.get(&task.instance_id) {
                if *earlier == content {
                    out.duplicates += 1;
                } else {
                    out.problems.push(problem(
                        "the same instance id twice with different content (the first is kept)"
                            .into(),
                        id,
                    ));
                }
                continue;
            }
            // A task without a base commit takes the one its trajectories give.
            let (mut no_commit_note, mut commit_from_trajectory) = (None, false);
            if let Some(trajectories) = &trajectories
                && task.base_commit.as_deref().is_none_or(str::is_empty)
            {
                match trajectories.lookup(&task_ids(&task.instance_id)) {
                    Lookup::Commit(found) => {
                        task.base_commit = Some(found.commit.clone());
                        commit_from_trajectory = true;
                    }
                    Lookup::NoCommit(why) => no_commit_note = Some(format!(" ({why})")),
                    Lookup::Unknown => {
                        no_commit_note = Some(" (and no trajectory names it)".to_string());
                    }
                }
            }
            match bench_row(schema.name, task, options) {
                Ok((row, defined)) => {
                    *out.by_schema.entry(schema.name).or_default() += 1;
                    out.with_definitions += usize::from(defined);
                    out.commits_from_trajectories += usize::from(commit_from_trajectory);
                    seen.insert(row.instance_id.clone(), (content, out.rows.len()));
                    out.rows.push(row);
                }
                Err(mut reason) => {
                    if reason == NO_BASE_COMMIT
                        && let Some(note) = &no_commit_note
                    {
                        reason.push_str(note);
                    }
                    failed.insert(id.clone().unwrap_or_default(), reason.clone());
                    // A row with an error is still remembered, so a second copy is a duplicate.
                    seen.insert(id.clone().unwrap_or_default(), (content, usize::MAX));
                    out.problems.push(problem(reason, id));
                }
            }
        }
    }
    if let Some(release) = &options.release {
        join_release(&mut out, release, &failed, trajectories.as_ref())?;
    }
    Ok(out)
}

/// Why a task row without a base commit is not imported.
const NO_BASE_COMMIT: &str = "no base commit";

/// The ids a release row's task row may have: the same, with SWE-bench Pro's `instance_`
/// prefix, or without it.
fn task_ids(id: &str) -> [String; 2] {
    match id.strip_prefix("instance_") {
        Some(bare) => [id.to_string(), bare.to_string()],
        None => [id.to_string(), format!("instance_{id}")],
    }
}

/// Replaces `out.rows` (the task rows) by the release rows joined with them.
fn join_release(
    out: &mut Imported,
    release: &Path,
    failed: &BTreeMap<String, String>,
    trajectories: Option<&Trajectories>,
) -> Result<(), ImportError> {
    let mut tasks: BTreeMap<String, BenchRow> = std::mem::take(&mut out.rows)
        .into_iter()
        .map(|r| (r.instance_id.clone(), r))
        .collect();
    let mut joined = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new(); // release id → its row's JSON
    for (at, parsed) in read_objects(release)? {
        let object = match parsed {
            Ok(object) => object,
            Err(reason) => {
                out.problems.push(Problem {
                    at,
                    instance_id: None,
                    reason: format!("release row: {reason}"),
                });
                continue;
            }
        };
        // A release row twice: an identical copy is counted, a different one is a problem (the
        // first is kept), as for task rows.
        if let Some(id) = object.get("instance_id").and_then(Value::as_str) {
            let content = serde_json::to_string(&object).unwrap_or_default();
            match seen.get(id) {
                Some(first) if *first == content => {
                    out.duplicates += 1;
                    continue;
                }
                Some(_) => {
                    out.problems.push(Problem {
                        at,
                        instance_id: Some(id.to_string()),
                        reason: "release row: the same instance id twice with different content (the first is kept)".into(),
                    });
                    continue;
                }
                None => {
                    seen.insert(id.to_string(), content);
                }
            }
        }
        let mut row: BenchRow = match serde_json::from_value(Value::Object(object)) {
            Ok(row) => row,
            Err(e) => {
                out.problems.push(Problem {
                    at,
                    instance_id: None,
                    reason: format!("release row: {e}"),
                });
                continue;
            }
        };
        let candidates = task_ids(&row.instance_id);
        let Some(task) = candidates.iter().find_map(|id| tasks.remove(id)) else {
            let reason = match candidates.iter().find_map(|id| failed.get(id)) {
                Some(why) => format!("its task row was not imported: {why}"),
                None => {
                    let missing =
                        format!("no task row with id {} or {}", candidates[0], candidates[1]);
                    match trajectories.map(|t| t.lookup(&candidates)) {
                        Some(Lookup::Commit(found)) => match without_task_row(&mut row, found) {
                            Ok(()) => {
                                out.commits_from_trajectories += 1;
                                joined.push(row);
                                continue;
                            }
                            Err(why) => format!("{missing}; {why}"),
                        },
                        Some(Lookup::NoCommit(why)) => {
                            format!("{missing}, and its trajectory gives no base commit: {why}")
                        }
                        Some(Lookup::Unknown) => format!("{missing}, and no trajectory names it"),
                        None => missing,
                    }
                }
            };
            out.problems.push(Problem {
                at,
                instance_id: Some(row.instance_id.clone()),
                reason,
            });
            continue;
        };
        let mut conflict = None;
        for (name, mine, theirs) in [
            ("repo", &mut row.repo, &task.repo),
            ("base_commit", &mut row.base_commit, &task.base_commit),
        ] {
            match mine.as_deref().filter(|v| !v.is_empty()) {
                None => mine.clone_from(theirs),
                Some(value) if Some(value) != theirs.as_deref() => {
                    conflict = Some(format!(
                        "the release row's {name} {value} differs from the task row's {}",
                        theirs.as_deref().unwrap_or("(none)")
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(reason) = conflict {
            out.problems.push(Problem {
                at,
                instance_id: Some(row.instance_id.clone()),
                reason,
            });
            continue;
        }
        if row
            .problem_statement
            .as_deref()
            .is_none_or(|t| t.trim().is_empty())
        {
            row.problem_statement = task.problem_statement.clone();
        }
        // The release's ground truth is kept; the fix's is added beside it for the peers' metrics.
        if let Some(fix) = task.ground_truth.extra.get("fix") {
            row.ground_truth.extra.insert("fix".into(), fix.clone());
        }
        let tests = schema::TEST_LISTS.iter().map(|(name, _)| *name);
        for key in ["patch", "language"].into_iter().chain(tests) {
            if let (false, Some(value)) = (row.extra.contains_key(key), task.extra.get(key)) {
                row.extra.insert(key.into(), value.clone());
            }
        }
        joined.push(row);
    }
    out.unused_tasks = tasks.len();
    out.rows = joined;
    Ok(())
}

/// A release row without a task row, with the base commit its trajectories give: written with
/// its own ground truth (no fix) when it has a repository and an issue text of its own.
fn without_task_row(row: &mut BenchRow, found: &trajectories::Found) -> Result<(), String> {
    if let Some(own) = row.base_commit.as_deref().filter(|c| !c.is_empty())
        && own != found.commit
    {
        return Err(format!(
            "the release row's base_commit {own} differs from {}'s {}",
            found.at, found.commit
        ));
    }
    if row.repo.as_deref().is_none_or(str::is_empty) {
        row.repo.clone_from(&found.repo);
    }
    let from = format!("its base commit is in {}", found.at);
    if row.repo.is_none() {
        return Err(format!("{from}, but no repository is"));
    }
    if row
        .problem_statement
        .as_deref()
        .is_none_or(|t| t.trim().is_empty())
    {
        return Err(format!("{from}, but the release row has no issue text"));
    }
    row.base_commit = Some(found.commit.clone());
    Ok(())
}

/// The rows of a file: JSON lines, or a JSON array of objects.
/// A row's place (`file:line` or `file[index]`) and its object, or why it is none.
type Located = (String, Result<Map<String, Value>, String>);

fn read_objects(path: &Path) -> Result<Vec<Located>, ImportError> {
    let shown = path.display().to_string();
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    {
        return read_parquet(path);
    }
    // Task files are read with the cap of every input named on the command line.
    let bytes =
        crate::input::read_document(path, crate::input::MAX_JSONL_BYTES).map_err(|e| match e {
            crate::input::ReadError::Io { source, .. } => ImportError::Io {
                path: shown.clone(),
                source,
            },
            other => ImportError::Format {
                path: shown.clone(),
                message: other.to_string(),
            },
        })?;
    let text = String::from_utf8(bytes).map_err(|e| ImportError::Format {
        path: shown.clone(),
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let as_object = |value: Value| match value {
        Value::Object(map) => Ok(map),
        other => Err(format!("not a JSON object but {}", schema::kind(&other))),
    };
    if text.trim_start().starts_with('[') {
        let values: Vec<Value> = serde_json::from_str(text).map_err(|e| ImportError::Format {
            path: shown.clone(),
            message: format!("not a JSON array: {e}"),
        })?;
        return Ok(values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("{shown}[{i}]"), as_object(v)))
            .collect());
    }
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let parsed = serde_json::from_str::<Value>(line)
                .map_err(|e| format!("malformed JSON: {e}"))
                .and_then(as_object);
            (format!("{shown}:{}", i + 1), parsed)
        })
        .collect())
}

/// The rows of a Parquet file (as the Hugging Face copies of the datasets are published), each
/// read as JSON through the `parquet` crate's record API: strings, numbers, lists and structs
/// become JSON values, so every schema reads them as it reads JSON lines. Places are
/// `file#row N` (1-based).
fn read_parquet(path: &Path) -> Result<Vec<Located>, ImportError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let shown = path.display().to_string();
    let format = |e: parquet::errors::ParquetError| ImportError::Format {
        path: shown.clone(),
        message: format!("not a readable Parquet file: {e}"),
    };
    let file = std::fs::File::open(path).map_err(|source| ImportError::Io {
        path: shown.clone(),
        source,
    })?;
    let reader = SerializedFileReader::new(file).map_err(format)?;
    let rows = reader.get_row_iter(None).map_err(format)?;
    Ok(rows
        .enumerate()
        .map(|(i, row)| {
            let object = match row {
                Ok(row) => match row.to_json_value() {
                    Value::Object(map) => Ok(map),
                    other => Err(format!("not a record but {}", schema::kind(&other))),
                },
                Err(e) => Err(format!("unreadable row: {e}")),
            };
            (format!("{shown}#row {}", i + 1), object)
        })
        .collect())
}

/// The bench row of a task, and whether its definitions were found.
fn bench_row(
    dataset: &str,
    task: Task,
    options: &ImportOptions,
) -> Result<(BenchRow, bool), String> {
    if task.issue.trim().is_empty() {
        return Err("no issue text".into());
    }
    if task.base_commit.as_deref().is_none_or(str::is_empty) {
        return Err(NO_BASE_COMMIT.into());
    }
    let (mut truth, patch_text, parsed) = match &task.fix {
        Some(FixSource::Patch(text)) => {
            let parsed =
                patch::parse(text).map_err(|e| format!("the fix patch cannot be read: {e}"))?;
            (
                FixTruth::from_patch(&parsed),
                Some(text.clone()),
                Some(parsed),
            )
        }
        Some(FixSource::Edits { patch_files, edits }) => {
            (FixTruth::from_edits(patch_files, edits), None, None)
        }
        None => return Err("no fix (patch or edits)".into()),
    };
    if truth.files.is_empty() {
        return Err(format!(
            "the fix changes no pre-existing file (new files: {})",
            if truth.new_files.is_empty() {
                "none".to_string()
            } else {
                truth.new_files.join(", ")
            }
        ));
    }
    let mut row = BenchRow {
        instance_id: task.instance_id,
        repo: task.repo,
        base_commit: task.base_commit,
        dataset: Some(dataset.to_string()),
        repo_dir: None,
        problem_statement: Some(task.issue),
        ground_truth: GroundTruth::default(),
        extra: Map::new(),
    };
    let mut defined = false;
    if let Some(repos) = &options.repos {
        let dir = row.snapshot_dir(repos).ok_or_else(|| {
            format!(
                "no snapshot folder under {} (run `swex snapshot` first)",
                repos.display()
            )
        })?;
        truth
            .add_definitions(parsed.as_deref(), &crate::fix::truth::snapshot_reader(&dir))
            .map_err(|e| e.to_string())?;
        defined = true;
    }
    if let Some(language) = task.language {
        row.extra.insert("language".into(), Value::String(language));
    }
    if let Some(text) = patch_text {
        row.extra.insert("patch".into(), Value::String(text));
    }
    for (name, list) in task.tests {
        row.extra.insert(name.into(), Value::from(list));
    }
    fill_ground_truth(&mut row.ground_truth, &truth);
    Ok((row, defined))
}

/// The SWE-Explore side of a fix's ground truth: core files, modified and main files = the
/// changed pre-existing files; core regions = the edited pre-fix lines; `fix` = the whole truth.
pub fn fill_ground_truth(gt: &mut GroundTruth, truth: &FixTruth) {
    gt.read_core_files = truth.files.clone();
    gt.modified_core_files = truth.files.clone();
    gt.main_files = truth.files.clone();
    gt.read_core_regions = truth
        .files
        .iter()
        .flat_map(|path| {
            truth
                .lines
                .get(path)
                .into_iter()
                .flatten()
                .map(move |s| Region::new(path.clone(), s[0] as i64, s[1] as i64))
        })
        .collect();
    gt.extra.insert(
        "fix".into(),
        serde_json::to_value(truth).unwrap_or(Value::Null),
    );
}
