//! Finding trajectory files and loading them into [`Trajectory`] values, with a [`Problem`] for
//! every file (or line of a JSONL file) that cannot be read, so one bad file never stops a run.
//!
//! Files considered: `*.traj.json`, `*.traj`, `*.json`, `*.jsonl`, found recursively under the
//! given directories (or given directly). A file named `resolved.json` is not a trajectory: it is
//! the SWE-bench harness verdict per instance for the runs in its directory, and is returned
//! separately. A `.jsonl` file holds one document per line; another file holds one
//! JSON document.

use super::formats;
use super::trajectory::Trajectory;
use crate::input::{self, Lines, MAX_DOCUMENT_BYTES};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// Something wrong with one input, reported and skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// Where in the file: `line 12`, `line 3 column 9`, a JSON pointer, or nothing.
    pub location: Option<String>,
    pub message: String,
}

impl Problem {
    pub fn new(
        file: impl Into<PathBuf>,
        location: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.into(),
            location,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(location) = &self.location {
            write!(f, ": {location}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The files found under the trajectory directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    pub trajectory_files: Vec<PathBuf>,
    /// `resolved.json` files found in the given directories (each applies to its directory).
    pub resolved_files: Vec<PathBuf>,
    pub problems: Vec<Problem>,
}

const RESOLVED_FILE: &str = "resolved.json";

fn is_trajectory_name(name: &str) -> bool {
    [".traj.json", ".traj", ".json", ".jsonl"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// Walk the given paths. Files are sorted so every run sees them in the same order.
pub fn discover(roots: &[PathBuf]) -> Discovery {
    let mut discovery = Discovery::default();
    for root in roots {
        if root.is_file() {
            discovery.trajectory_files.push(root.clone());
            continue;
        }
        if !root.is_dir() {
            discovery
                .problems
                .push(Problem::new(root, None, "no such file or directory"));
            continue;
        }
        let mut pending = vec![root.clone()];
        while let Some(dir) = pending.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(err) => {
                    discovery.problems.push(Problem::new(
                        &dir,
                        None,
                        format!("cannot list directory: {err}"),
                    ));
                    continue;
                }
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if path.is_dir() {
                    pending.push(path);
                } else if name == RESOLVED_FILE {
                    discovery.resolved_files.push(path);
                } else if is_trajectory_name(name) {
                    discovery.trajectory_files.push(path);
                }
            }
        }
    }
    discovery.trajectory_files.sort();
    discovery.trajectory_files.dedup();
    discovery.resolved_files.sort();
    discovery
}

/// The instance id a file name implies: `django__django-11099.traj.json` → `django__django-11099`.
pub fn instance_id_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = [".traj.json", ".traj", ".jsonl", ".json"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name);
    (!stem.is_empty()).then(|| stem.to_string())
}

/// Load every trajectory in one file. Instance ids missing from the document are taken from the
/// file name; models missing from it from the parent directory's name.
pub fn load_file(path: &Path) -> (Vec<Trajectory>, Vec<Problem>) {
    let bytes = match input::read_document(path, MAX_DOCUMENT_BYTES) {
        Ok(bytes) => bytes,
        Err(err) => return (Vec::new(), vec![Problem::new(path, None, err.reason())]),
    };
    let mut documents: Vec<(Option<usize>, Value)> = Vec::new();
    let mut problems = Vec::new();
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
    if is_jsonl {
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(doc) => documents.push((Some(i + 1), doc)),
                Err(err) => problems.push(Problem::new(
                    path,
                    Some(format!("line {} column {}", i + 1, err.column())),
                    format!("invalid JSON: {}", json_error_message(&err)),
                )),
            }
        }
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(doc) => documents.push((None, doc)),
            Err(err) => problems.push(Problem::new(
                path,
                Some(format!("line {} column {}", err.line(), err.column())),
                format!("invalid JSON: {}", json_error_message(&err)),
            )),
        }
    }

    let fallback_instance = instance_id_from_file_name(path);
    let fallback_model = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(str::to_string);
    let mut trajectories = Vec::new();
    for (line, doc) in documents {
        let location = |inner: Option<String>| match (line, inner) {
            (Some(l), Some(p)) => Some(format!("line {l} {p}")),
            (Some(l), None) => Some(format!("line {l}")),
            (None, inner) => inner,
        };
        let reader = match formats::detect(&doc) {
            Ok(reader) => reader,
            Err(err) => {
                problems.push(Problem::new(path, location(None), err.to_string()));
                continue;
            }
        };
        match reader.read(&doc) {
            Ok(parsed) => {
                for (record, t) in parsed.into_iter().enumerate() {
                    trajectories.push(Trajectory {
                        source: path.to_path_buf(),
                        record: line.map_or(record, |l| l - 1),
                        format: reader.format(),
                        // Within a JSONL file the file name names the collection, not an instance.
                        instance_id: t.instance_id.or_else(|| {
                            if is_jsonl {
                                None
                            } else {
                                fallback_instance.clone()
                            }
                        }),
                        model: t.model.or_else(|| fallback_model.clone()),
                        workdir: t.workdir,
                        submission: t.submission,
                        steps: t.steps,
                    });
                }
            }
            Err(err) => problems.push(Problem::new(
                path,
                location(Some(err.pointer.clone())),
                format!("malformed {} trajectory: {}", reader.format(), err.message),
            )),
        }
    }
    (trajectories, problems)
}

/// serde_json's message without its trailing " at line L column C" (the location is reported
/// separately).
fn json_error_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_from_names() {
        let id = |n: &str| instance_id_from_file_name(Path::new(n));
        assert_eq!(
            id("a/django__django-1.traj.json").as_deref(),
            Some("django__django-1")
        );
        assert_eq!(id("x__y-2.traj").as_deref(), Some("x__y-2"));
        assert_eq!(id("x__y-3.json").as_deref(), Some("x__y-3"));
    }

    #[test]
    fn bad_files_become_problems() {
        let dir = tempfile::tempdir().unwrap();
        let truncated = dir.path().join("t.traj.json");
        std::fs::write(&truncated, "{\"messages\": [").unwrap();
        let (t, p) = load_file(&truncated);
        assert!(t.is_empty());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].location.as_deref(), Some("line 1 column 14"));
        assert!(
            p[0].message.starts_with("invalid JSON: EOF while parsing"),
            "{}",
            p[0].message
        );

        let unknown = dir.path().join("u.json");
        std::fs::write(&unknown, "{\"foo\": 1}").unwrap();
        let (_, p) = load_file(&unknown);
        assert!(
            p[0].message
                .starts_with("unknown trajectory format: object with keys [foo]")
        );

        let lines = dir.path().join("o.jsonl");
        std::fs::write(&lines, "{\"instance_id\": \"a__b-1\", \"history\": [{\"action\": \"run\", \"args\": {\"command\": \"ls\"}}]}\n{oops\n").unwrap();
        let (t, p) = load_file(&lines);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].instance_id.as_deref(), Some("a__b-1"));
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].location.as_deref(), Some("line 2 column 2"));
    }

    #[test]
    fn discovery_separates_resolved_maps() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        for name in [
            "resolved.json",
            "a.traj.json",
            "sub/b.traj",
            "sub/resolved.json",
            "notes.txt",
        ] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        let d = discover(&[dir.path().to_path_buf(), dir.path().join("missing")]);
        let names: Vec<String> = d
            .trajectory_files
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, vec!["a.traj.json", "sub/b.traj"]);
        assert_eq!(
            d.resolved_files,
            vec![
                dir.path().join("resolved.json"),
                dir.path().join("sub/resolved.json")
            ]
        );
        assert_eq!(d.problems.len(), 1);
    }
}

/// A benchmark or line-count file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {location}{message}", path.display())]
pub struct InputFileError {
    pub path: PathBuf,
    /// `line N: ` or empty.
    pub location: String,
    pub message: String,
}

/// Rows of a benchmark JSONL file (the reference schema), each at most
/// [`input::MAX_ROW_BYTES`] and [`input::MAX_JSON_DEPTH`] deep, the file at most
/// [`input::MAX_JSONL_BYTES`].
pub fn load_bench_rows(path: &Path) -> Result<Vec<crate::dataset::BenchRow>, InputFileError> {
    let error = |location: String, message: String| InputFileError {
        path: path.to_path_buf(),
        location,
        message,
    };
    let mut lines = Lines::open(path).map_err(|e| error(String::new(), e.reason()))?;
    let mut rows = Vec::new();
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => return Err(error(String::new(), e.reason())),
        };
        let location = format!("line {}: ", line.number);
        let text = std::str::from_utf8(line.bytes)
            .map_err(|_| error(location.clone(), "not valid UTF-8".into()))?;
        if text.trim().is_empty() {
            continue;
        }
        if let Some(message) = input::too_deep(line.bytes) {
            return Err(error(location, message));
        }
        let row = serde_json::from_str(text).map_err(|e| error(location, e.to_string()))?;
        rows.push(row);
    }
    Ok(rows)
}

/// Line counts per instance and file: `{instance_id: {path: count}}` (`dev.line-counts.json`).
pub fn load_line_counts(
    path: &Path,
) -> Result<
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>,
    InputFileError,
> {
    let text = input::read_text(path, MAX_DOCUMENT_BYTES).map_err(|e| InputFileError {
        path: path.to_path_buf(),
        location: String::new(),
        message: e.reason(),
    })?;
    serde_json::from_str(&text).map_err(|e| InputFileError {
        path: path.to_path_buf(),
        location: format!("line {}: ", e.line()),
        message: format!("expected {{instance_id: {{path: line_count}}}}: {e}"),
    })
}
