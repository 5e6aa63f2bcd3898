//! Base commits from trajectories (`--trajectories DIR`): the commit map the SWE-Explore
//! reference builds for its release rows (`instance_id → base_commit`), read from what a folder
//! of trajectories and commit maps says.
//!
//! Every `*.json`, `*.traj` and `*.jsonl` file under the folder (recursively, in name order;
//! symlinks are not followed) is one of:
//! - a **commit map**: one JSON object whose values are all full commit hashes, keyed by id (the
//!   reference's `commit_map.json`, built from the task datasets);
//! - a **trajectory** (one JSON object, or one per line of a `.jsonl` file): its id is
//!   `instance_id`, `info.instance_id` or `instance.instance_id` (else the file name without
//!   `.traj.json`, `.traj` or `.json`), and its base commit the first full commit hash among
//!   the metadata fields `base_commit`, `info.base_commit`, `instance.base_commit` (OpenHands'
//!   output rows carry the task row there) and SWE-agent's `replay_config` (JSON text)
//!   `env.repo.base_commit`. A trajectory without one is remembered with the reason, so a row
//!   that needed it says why it has none.
//!
//! Only recorded fields are read, never tool output: the hashes a run prints (a version string's
//! `+g1a2b3c4`, `git stash`'s `HEAD is now at 1a2b3c4`) are abbreviated and may name a commit the
//! agent made itself. mini-swe-agent trajectories (`trajectory_format` `mini-swe-agent-1`, as the
//! Gemini runs of `../shared/data/trajectories`) record the run's configuration (the container
//! image, not a commit) and the messages only, so they give no base commit.
//!
//! Two sources that give one id different commits are a problem, and neither is used.

use super::{ImportError, Problem};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A base commit a trajectory folder gives an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub commit: String,
    /// The file (and line) it was read from.
    pub at: String,
    /// The repository the trajectory names (`repo` or `info.repo`, as `owner/name`), if any.
    pub repo: Option<String>,
}

/// What a trajectory folder says about base commits.
#[derive(Debug, Default)]
pub struct Trajectories {
    found: BTreeMap<String, Found>,
    /// Ids with trajectories but no usable base commit, and why.
    without: BTreeMap<String, String>,
    /// Files read.
    pub files: usize,
}

/// What the folder says about one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    Commit(&'a Found),
    /// Trajectories name the id but give no base commit: why.
    NoCommit(&'a str),
    /// Nothing in the folder names the id.
    Unknown,
}

impl Trajectories {
    /// Reads every trajectory and commit map under `dir`; what cannot be read is a problem.
    pub fn read(dir: &Path, problems: &mut Vec<Problem>) -> Result<Trajectories, ImportError> {
        let mut files = Vec::new();
        walk(dir, &mut files)?;
        let mut out = Trajectories::default();
        for file in files {
            out.files += 1;
            let shown = file.display().to_string();
            let problem = |reason: String| Problem {
                at: shown.clone(),
                instance_id: None,
                reason: format!("trajectory: {reason}"),
            };
            let is_lines = file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
            if is_lines {
                let rows = match super::read_objects(&file) {
                    Ok(rows) => rows,
                    Err(ImportError::Io { source, .. }) => {
                        problems.push(problem(source.to_string()));
                        continue;
                    }
                    Err(ImportError::Format { message, .. }) => {
                        problems.push(problem(message));
                        continue;
                    }
                };
                for (at, parsed) in rows {
                    match parsed {
                        Ok(object) => out.add(read_one(object, &at, None), &at, problems),
                        Err(reason) => problems.push(Problem {
                            at,
                            instance_id: None,
                            reason: format!("trajectory: {reason}"),
                        }),
                    }
                }
                continue;
            }
            let bytes = match crate::input::read_document(&file, crate::input::MAX_DOCUMENT_BYTES) {
                Ok(bytes) => bytes,
                Err(e) => {
                    problems.push(problem(e.to_string()));
                    continue;
                }
            };
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(object)) => {
                    let stem = file_stem(&file);
                    out.add(read_one(object, &shown, stem.as_deref()), &shown, problems);
                }
                Ok(other) => problems.push(problem(format!(
                    "not a JSON object but {}",
                    super::schema::kind(&other)
                ))),
                Err(e) => problems.push(problem(format!("malformed JSON: {e}"))),
            }
        }
        Ok(out)
    }

    /// What the folder says about a row known by any of `ids` (the first that it names).
    pub fn lookup(&self, ids: &[String]) -> Lookup<'_> {
        if let Some(found) = ids.iter().find_map(|id| self.found.get(id)) {
            return Lookup::Commit(found);
        }
        match ids.iter().find_map(|id| self.without.get(id)) {
            Some(why) => Lookup::NoCommit(why),
            None => Lookup::Unknown,
        }
    }

    /// Ids given a base commit.
    pub fn commits(&self) -> usize {
        self.found.len()
    }

    fn add(&mut self, entry: Entry, at: &str, problems: &mut Vec<Problem>) {
        match entry {
            Entry::Map(pairs) => {
                for (id, commit) in pairs {
                    self.found_commit(
                        id,
                        Found {
                            commit,
                            at: at.to_string(),
                            repo: None,
                        },
                        problems,
                    );
                }
            }
            Entry::Trajectory {
                id,
                commit: Ok(found),
            } => self.found_commit(id, found, problems),
            Entry::Trajectory {
                id,
                commit: Err(why),
            } => {
                self.without
                    .entry(id)
                    .or_insert_with(|| format!("{at}: {why}"));
            }
            Entry::Neither(reason) => problems.push(Problem {
                at: at.to_string(),
                instance_id: None,
                reason: format!("trajectory: {reason}"),
            }),
        }
    }

    fn found_commit(&mut self, id: String, found: Found, problems: &mut Vec<Problem>) {
        if let Some(why) = self.without.get(&id)
            && why.starts_with("the trajectories disagree")
        {
            return;
        }
        match self.found.get(&id) {
            None => {
                self.without.remove(&id);
                self.found.insert(id, found);
            }
            Some(first) if first.commit == found.commit => {}
            Some(first) => {
                problems.push(Problem {
                    at: found.at.clone(),
                    instance_id: Some(id.clone()),
                    reason: format!(
                        "trajectory: base commit {} here, {} in {}: neither is used",
                        found.commit, first.commit, first.at
                    ),
                });
                self.found.remove(&id);
                self.without.insert(
                    id,
                    "the trajectories disagree on its base commit (reported above)".into(),
                );
            }
        }
    }
}

/// What one JSON object of the folder is.
enum Entry {
    Map(Vec<(String, String)>),
    Trajectory {
        id: String,
        commit: Result<Found, String>,
    },
    Neither(String),
}

/// A full commit hash (SHA-1 or SHA-256 object name).
fn is_commit(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The fields that make an object a trajectory.
const TRAJECTORY_FIELDS: [&str; 6] = [
    "messages",
    "traj",
    "trajectory",
    "history",
    "info",
    "instance",
];

fn read_one(object: Map<String, Value>, at: &str, stem: Option<&str>) -> Entry {
    let is_map = !object.is_empty() && object.values().all(|v| v.as_str().is_some_and(is_commit));
    if is_map {
        return Entry::Map(
            object
                .into_iter()
                .filter_map(|(id, v)| Some((id, v.as_str()?.to_string())))
                .collect(),
        );
    }
    if !TRAJECTORY_FIELDS.iter().any(|f| object.contains_key(*f)) {
        let mut seen: Vec<&str> = object.keys().map(String::as_str).collect();
        seen.sort_unstable();
        let more = seen.len().saturating_sub(8);
        seen.truncate(8);
        return Entry::Neither(format!(
            "neither a trajectory (a field of {}) nor a commit map (every value a full commit hash): fields seen {}{}",
            TRAJECTORY_FIELDS.join(", "),
            seen.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let nested = |outer: &str, inner: &str| object.get(outer).and_then(|o| o.get(inner)).cloned();
    let text_of = |value: Option<Value>| value.and_then(|v| v.as_str().map(str::to_string));
    let id = text_of(object.get("instance_id").cloned())
        .or_else(|| text_of(nested("info", "instance_id")))
        .or_else(|| text_of(nested("instance", "instance_id")))
        .or_else(|| stem.map(str::to_string));
    let Some(id) = id.filter(|id| !id.is_empty()) else {
        return Entry::Neither("a trajectory without an instance id".into());
    };
    let format = trajectory_format(&object);
    // SWE-agent keeps its run configuration as JSON text.
    let replay = object.get("replay_config").and_then(|c| match c {
        Value::String(text) => serde_json::from_str::<Value>(text).ok(),
        other => Some(other.clone()),
    });
    let candidates = [
        ("base_commit", object.get("base_commit").cloned()),
        ("info.base_commit", nested("info", "base_commit")),
        ("instance.base_commit", nested("instance", "base_commit")),
        (
            "replay_config env.repo.base_commit",
            replay
                .as_ref()
                .and_then(|r| r.get("env")?.get("repo")?.get("base_commit"))
                .cloned(),
        ),
    ];
    let repo = text_of(object.get("repo").cloned())
        .or_else(|| text_of(nested("info", "repo")))
        .or_else(|| text_of(nested("instance", "repo")))
        .filter(|r| r.contains('/'));
    let mut rejected = Vec::new();
    for (field, value) in candidates {
        match value {
            Some(Value::String(commit)) if is_commit(&commit) => {
                return Entry::Trajectory {
                    id,
                    commit: Ok(Found {
                        commit,
                        at: at.to_string(),
                        repo,
                    }),
                };
            }
            Some(Value::Null) | None => {}
            Some(other) => rejected.push(format!("{field} {other} is not a full commit hash")),
        }
    }
    let why = if rejected.is_empty() {
        match format {
            "mini-swe-agent" => "a mini-swe-agent trajectory records no base commit (its config names a container image, its messages only abbreviated hashes)".to_string(),
            format => format!("a {format} trajectory without a base commit field"),
        }
    } else {
        format!("a {format} trajectory whose {}", rejected.join(", "))
    };
    Entry::Trajectory {
        id,
        commit: Err(why),
    }
}

/// The trajectory format, as messages name it.
fn trajectory_format(object: &Map<String, Value>) -> &'static str {
    let declared = object
        .get("trajectory_format")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if declared.starts_with("mini-swe-agent") {
        "mini-swe-agent"
    } else if object.contains_key("replay_config") {
        "SWE-agent"
    } else if object.contains_key("traj") && object.contains_key("info") {
        "SWE-Explore"
    } else if object.contains_key("instance") || object.contains_key("history") {
        "OpenHands"
    } else {
        "trajectory"
    }
}

fn file_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    [".traj.json", ".json", ".traj"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .map(str::to_string)
}

/// The files of `dir` a trajectory or commit map may be in, recursively, in name order.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImportError> {
    let io = |source| ImportError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let kind = entry.file_type().map_err(io)?;
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, out)?;
        } else if kind.is_file() {
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            if [".json", ".traj", ".jsonl"]
                .iter()
                .any(|e| name.ends_with(e))
            {
                out.push(path);
            }
        }
    }
    Ok(())
}
