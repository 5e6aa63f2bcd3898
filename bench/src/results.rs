//! Result rows of a benchmark run and the crash-safe JSONL files that hold them.
//!
//! A [`ResultRow`] is the reference runner's row (`instance_id, explorer, regions, metrics,
//! num_regions`) plus what swex adds: `top_k`, the explorer's configuration, the validation's drop
//! counts and notes, an `error` for a failed explorer call, what produced the row
//! ([`ProducedBy`]: explorer build, config digest, the k asked for) and its shard, and `timings`. Rows serialise with a
//! fixed key order and serde_json's shortest round-trip float formatting, and `timings` is the
//! last key, so the same inputs give byte-identical lines up to that key
//! ([`ResultRow::canonical_line`] drops it).
//!
//! [`ResultFile`] appends rows so that a crash at any moment loses at most the row being written:
//! - each row is one `write` of a complete line, on a file opened for appending; `fsync` runs every
//!   [`SYNC_EVERY_ROWS`] rows or [`SYNC_EVERY`], and on [`ResultFile::finish`];
//! - on open, a torn last line (no trailing newline, or not valid JSON) is cut off, and reported;
//! - a key (instance, explorer, top-k) already in the file cannot be appended again, so a resumed
//!   run cannot write duplicates.
//!
//! Reading ([`read_results`]) tolerates nothing silently: a malformed line anywhere is an error
//! naming file and line (only [`ResultFile::open`] repairs a torn *last* line, because that is what
//! a crash leaves), and so is a second row with the same key.
//!
//! This module knows the row format and files; it knows nothing about explorers or how rows are
//! produced.

use crate::dataset::Region;
use crate::input::{self, Lines, MAX_JSONL_BYTES, MAX_ROW_BYTES, ReadError};
use crate::metrics::Metrics;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Rows appended between two `fsync`s at most.
pub const SYNC_EVERY_ROWS: usize = 256;
/// Time between two `fsync`s at most (checked when a row is appended).
pub const SYNC_EVERY: Duration = Duration::from_secs(2);

/// How long the parts of one explorer call took, in milliseconds (rounded to microseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Materialising the snapshot from git (0 when it was already there).
    #[serde(default)]
    pub snapshot_ms: f64,
    /// Opening the snapshot's services (walk, index open or build), shared by the explorers of
    /// the instance.
    #[serde(default)]
    pub index_ms: f64,
    /// The explorer's call, at the largest k.
    #[serde(default)]
    pub explore_ms: f64,
}

impl Timings {
    /// Milliseconds of a duration, rounded to microseconds so that rows stay short.
    pub fn ms(duration: Duration) -> f64 {
        (duration.as_secs_f64() * 1e6).round() / 1e3
    }
}

/// Regions dropped by output validation, by reason (see `swex_plugin_host::validate`).
pub type DropCounts = swex_plugin_host::DropCounts;

/// One result row: what one explorer answered for one instance, cut at one `top_k`, and scored.
///
/// A failed call is a row with `error` set, no regions and zero metrics, so that tools reading
/// only the reference fields still see every instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    pub instance_id: String,
    pub explorer: String,
    /// Rows of the reference runner have no `top_k` (it is in their file name); readers fill it
    /// in (see [`read_results`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    #[serde(default)]
    pub regions: Vec<Region>,
    #[serde(default)]
    pub metrics: Metrics,
    #[serde(default)]
    pub num_regions: usize,
    /// The metrics counted with every predicted file's real length (a whole-file region costs
    /// its file's lines), next to the reference counting in `metrics`; absent in rows scored
    /// without the snapshot (the reference runner's rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_metrics: Option<Metrics>,
    /// Distinct lines the regions hold, counted with real lengths (with `real_metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_returned: Option<u64>,
    /// The line budget the explorer was asked to respect (absent: none was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The configuration the explorer was created with (`null` when none).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub explorer_config: serde_json::Value,
    /// Regions the validation dropped (only written when some were).
    #[serde(default, skip_serializing_if = "no_drops")]
    pub dropped: DropCounts,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What produced the row (absent in rows of the reference runner and of swex before 16.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<ProducedBy>,
    /// The shard of the run that wrote the row (`i-of-N`), when it was sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Fields swex does not know (`token_usage` of reference rows, ...), kept as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Always the last key: everything before it is deterministic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
}

fn no_drops(drops: &DropCounts) -> bool {
    *drops == DropCounts::default()
}

/// What produced a row, as `swex bench` records it in every row. Rows of one result set must
/// agree on it: a resumed run continues a file only when this is equal to its own, and `swex
/// merge` refuses to put rows of two producers in one file, so answers of another explorer build,
/// config or k are never averaged together.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProducedBy {
    /// The explorer's code: the digest of its plugin library, or of the swex executable for a
    /// built-in (`swex_plugin_host::ExplorerPlugin::build_identity`).
    pub build: String,
    /// The digest of the explorer's configuration ([`config_digest`]).
    pub config_digest: String,
    /// The k the explorer was asked for: the largest k of the run (each row is a cut of that one
    /// answer, and an explorer may answer differently when asked for more).
    pub request_top_k: usize,
    /// The line budget the explorer was asked to respect (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_budget: Option<u64>,
}

impl ProducedBy {
    /// A short stable id of this producer for `explorer`: the `{run}` placeholder of output
    /// templates, so that rows of different runs can be kept in files of their own.
    pub fn run_id(&self, explorer: &str) -> String {
        let mut hasher = blake3::Hasher::new();
        for part in [explorer, &self.build, &self.config_digest] {
            hasher.update(part.as_bytes());
            hasher.update(b"\0");
        }
        hasher.update(&(self.request_top_k as u64).to_le_bytes());
        if let Some(budget) = self.line_budget {
            hasher.update(b"budget\0");
            hasher.update(&budget.to_le_bytes());
        }
        hasher.finalize().to_hex()[..12].to_string()
    }

    /// What differs between the producer of existing rows (`self`) and `wanted`, in words.
    pub fn differences(&self, wanted: &ProducedBy) -> Vec<String> {
        let mut out = Vec::new();
        if self.build != wanted.build {
            out.push(format!(
                "explorer build: the rows were made by {}, this run uses {}",
                self.build, wanted.build
            ));
        }
        if self.config_digest != wanted.config_digest {
            out.push(format!(
                "explorer config: the rows have {}, this run {}",
                self.config_digest, wanted.config_digest
            ));
        }
        if self.request_top_k != wanted.request_top_k {
            out.push(format!(
                "top-k asked for: the rows are cuts of answers at k = {}, this run asks for k = {}",
                self.request_top_k, wanted.request_top_k
            ));
        }
        if self.line_budget != wanted.line_budget {
            let show = |b: Option<u64>| b.map_or("none".to_string(), |b| format!("{b} lines"));
            out.push(format!(
                "line budget: the rows were asked for {}, this run asks for {}",
                show(self.line_budget),
                show(wanted.line_budget)
            ));
        }
        out
    }
}

/// `blake3:<16 hex>` of an explorer configuration as canonical JSON (object keys sorted at every
/// level, no spaces), so that `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` are the same config.
pub fn config_digest(config: &serde_json::Value) -> String {
    fn canonical(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(key.clone()).to_string());
                    out.push(':');
                    canonical(&map[key], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(item, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut text = String::new();
    canonical(config, &mut text);
    format!("blake3:{}", &blake3::hash(text.as_bytes()).to_hex()[..16])
}

/// What identifies a row: at most one per (instance, explorer, k) in a result set.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKey {
    pub instance_id: String,
    pub explorer: String,
    pub top_k: usize,
}

impl std::fmt::Display for RowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "instance `{}`, explorer `{}`, top-k {}",
            self.instance_id, self.explorer, self.top_k
        )
    }
}

impl ResultRow {
    /// The row's key. Panics only for a row without `top_k`, which [`read_results`] never yields.
    pub fn key(&self) -> RowKey {
        RowKey {
            instance_id: self.instance_id.clone(),
            explorer: self.explorer.clone(),
            top_k: self.top_k.expect("rows in a result set have a top_k"),
        }
    }

    pub fn is_failure(&self) -> bool {
        self.error.is_some()
    }

    /// The row as one JSON line, without the trailing newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a result row serialises")
    }

    /// The line without `timings`: equal for equal inputs.
    pub fn canonical_line(&self) -> String {
        let mut row = self.clone();
        row.timings = None;
        row.to_line()
    }
}

/// Errors of result files. Each names the file; row errors name the line.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    BadLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}:{line}: a second row for {key} (first on line {first})", path.display())]
    DuplicateInFile {
        path: PathBuf,
        line: usize,
        first: usize,
        key: RowKey,
    },
    #[error("{}: refusing to append a second row for {key}", path.display())]
    DuplicateAppend { path: PathBuf, key: RowKey },
    #[error(
        "{}: a row for instance `{instance_id}` has no `top_k`, and the file does not fix one",
        path.display()
    )]
    MissingTopK { path: PathBuf, instance_id: String },
    #[error(
        "{} already holds {rows} result rows; pass --resume to continue it, or --overwrite to start \
         over",
        path.display()
    )]
    ExistsNotEmpty { path: PathBuf, rows: usize },
    /// A row or a file over the limits of [`crate::input`].
    #[error(transparent)]
    TooLarge(ReadError),
}

impl From<ReadError> for ResultsError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Io { path, source } => ResultsError::Io { path, source },
            other => ResultsError::TooLarge(other),
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One parsed line: the row and its 1-based line number.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedRow {
    pub row: ResultRow,
    pub line: usize,
}

/// Parses one non-blank line. A row without `top_k` gets `default_top_k`; without either it is an
/// error (the reference runner's rows carry k only in their file name, see [`top_k_from_path`]).
fn parse_line(
    path: &Path,
    line_no: usize,
    line: &str,
    default_top_k: Option<usize>,
) -> Result<ResultRow, ResultsError> {
    let bad = |message: String| ResultsError::BadLine {
        path: path.to_path_buf(),
        line: line_no,
        message,
    };
    if let Some(message) = input::too_deep(line.as_bytes()) {
        return Err(bad(message));
    }
    let mut deserializer = serde_json::Deserializer::from_str(line);
    let mut row: ResultRow = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let at = e.path().to_string();
        if at == "." {
            bad(format!("not a result row: {}", e.into_inner()))
        } else {
            bad(format!("field `{at}`: {}", e.into_inner()))
        }
    })?;
    deserializer
        .end()
        .map_err(|e| bad(format!("trailing content after the row: {e}")))?;
    if row.instance_id.is_empty() {
        return Err(bad("field `instance_id`: empty".into()));
    }
    if row.explorer.is_empty() {
        return Err(bad("field `explorer`: empty".into()));
    }
    match (row.top_k, default_top_k) {
        (Some(0), _) => return Err(bad("field `top_k`: must be at least 1".into())),
        (Some(_), _) => {}
        (None, Some(k)) => row.top_k = Some(k),
        (None, None) => {
            return Err(bad(
                "no `top_k` field, and the file name does not say it (`top<k>.jsonl`, `name-top<k>.jsonl`)".into(),
            ));
        }
    }
    Ok(row)
}

/// The k of a reference-style file name, whose stem ends in `top<k>` after a separator or at its
/// start: `top10.jsonl` → 10, `results/x/top5.jsonl` → 5, `dev.cosil-top5.jsonl` → 5.
pub fn top_k_from_path(path: &Path) -> Option<usize> {
    let stem = path.file_stem()?.to_str()?;
    let digits_from = stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (head, digits) = stem.split_at(digits_from);
    let before = head.strip_suffix("top")?;
    if before
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric())
    {
        return None;
    }
    digits.parse().ok().filter(|&k| k > 0)
}

/// Reads a result file, strictly: every non-blank line must be a complete row, each key at most
/// once. Rows without `top_k` take it from the file name (`top<k>.jsonl`).
pub fn read_results(path: &Path) -> Result<Vec<LocatedRow>, ResultsError> {
    let default_top_k = top_k_from_path(path);
    let mut rows = Vec::new();
    let mut first_line: HashMap<RowKey, usize> = HashMap::new();
    // Each line at most `MAX_ROW_BYTES`, the file at most `MAX_JSONL_BYTES` (crate::input).
    let mut lines = Lines::open(path)?;
    while let Some(line) = lines.next_line()? {
        let line_no = line.number;
        let text = std::str::from_utf8(line.bytes).map_err(|_| ResultsError::BadLine {
            path: path.to_path_buf(),
            line: line_no,
            message: "not valid UTF-8".into(),
        })?;
        if text.trim().is_empty() {
            continue;
        }
        if !line.terminated && serde_json::from_str::<serde_json::Value>(text).is_err() {
            return Err(ResultsError::BadLine {
                path: path.to_path_buf(),
                line: line_no,
                message: "incomplete last line (an interrupted run?); `swex bench --resume` \
                          repairs it"
                    .into(),
            });
        }
        let row = parse_line(path, line_no, text, default_top_k)?;
        let key = row.key();
        if let Some(&first) = first_line.get(&key) {
            return Err(ResultsError::DuplicateInFile {
                path: path.to_path_buf(),
                line: line_no,
                first,
                key,
            });
        }
        first_line.insert(key, line_no);
        rows.push(LocatedRow { row, line: line_no });
    }
    Ok(rows)
}

/// How [`ResultFile::open`] treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Keep its rows (repairing a torn last line) and append the missing ones.
    Resume,
    /// Start an empty file; an existing non-empty one is an error.
    Create,
    /// Start an empty file, replacing an existing one.
    Overwrite,
}

/// What [`ResultFile::open`] found in an existing file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recovered {
    /// The complete rows already there, in file order.
    pub rows: Vec<ResultRow>,
    /// A torn last line that was cut off: its 1-based line number and byte length.
    pub torn_line: Option<(usize, usize)>,
}

/// A result file open for crash-safe appending. See the module documentation.
#[derive(Debug)]
pub struct ResultFile {
    path: PathBuf,
    file: File,
    keys: HashSet<RowKey>,
    unsynced_rows: usize,
    last_sync: Instant,
    default_top_k: Option<usize>,
}

impl ResultFile {
    /// Opens (creating folders as needed) `path` for appending. `default_top_k` is the k of rows
    /// without a `top_k` field (reference rows), normally the k of the file name.
    pub fn open(
        path: &Path,
        mode: OpenMode,
        default_top_k: Option<usize>,
    ) -> Result<(ResultFile, Recovered), ResultsError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        let existing = match input::read_document(path, MAX_JSONL_BYTES) {
            Ok(bytes) => bytes,
            Err(ReadError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        };
        let (recovered, keep_bytes) = match mode {
            OpenMode::Overwrite => (Recovered::default(), 0),
            OpenMode::Create | OpenMode::Resume => {
                let (recovered, keep) = recover(path, &existing, default_top_k)?;
                if mode == OpenMode::Create && !recovered.rows.is_empty() {
                    return Err(ResultsError::ExistsNotEmpty {
                        path: path.to_path_buf(),
                        rows: recovered.rows.len(),
                    });
                }
                (recovered, keep)
            }
        };
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(io_error(path))?;
        if keep_bytes as u64 != existing.len() as u64 || mode == OpenMode::Overwrite {
            file.set_len(keep_bytes as u64).map_err(io_error(path))?;
            file.sync_all().map_err(io_error(path))?;
        }
        file.seek(SeekFrom::End(0)).map_err(io_error(path))?;
        let keys = recovered.rows.iter().map(ResultRow::key).collect();
        Ok((
            ResultFile {
                path: path.to_path_buf(),
                file,
                keys,
                unsynced_rows: 0,
                last_sync: Instant::now(),
                default_top_k,
            },
            recovered,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn contains(&self, key: &RowKey) -> bool {
        self.keys.contains(key)
    }

    /// Appends one row as one write of one complete line. A key already in the file is refused.
    pub fn append(&mut self, row: &ResultRow) -> Result<(), ResultsError> {
        let mut row_with_k;
        let row = if row.top_k.is_none() {
            row_with_k = row.clone();
            row_with_k.top_k =
                Some(
                    self.default_top_k
                        .ok_or_else(|| ResultsError::MissingTopK {
                            path: self.path.clone(),
                            instance_id: row.instance_id.clone(),
                        })?,
                );
            &row_with_k
        } else {
            row
        };
        let key = row.key();
        if self.keys.contains(&key) {
            return Err(ResultsError::DuplicateAppend {
                path: self.path.clone(),
                key,
            });
        }
        let mut line = row.to_line();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(io_error(&self.path))?;
        self.keys.insert(key);
        self.unsynced_rows += 1;
        if self.unsynced_rows >= SYNC_EVERY_ROWS || self.last_sync.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    /// Flushes appended rows to stable storage.
    pub fn sync(&mut self) -> Result<(), ResultsError> {
        if self.unsynced_rows > 0 {
            self.file.sync_data().map_err(io_error(&self.path))?;
            self.unsynced_rows = 0;
        }
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Syncs and closes.
    pub fn finish(mut self) -> Result<(), ResultsError> {
        self.sync()
    }
}

/// Parses the existing content of a file being opened for appending: complete rows, and how many
/// bytes to keep (everything but a torn last line).
fn recover(
    path: &Path,
    bytes: &[u8],
    default_top_k: Option<usize>,
) -> Result<(Recovered, usize), ResultsError> {
    let mut recovered = Recovered::default();
    // Line starts and ends (exclusive, without the newline); the last may lack its newline.
    let mut lines: Vec<(usize, usize, bool)> = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push((start, i, true));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        lines.push((start, bytes.len(), false));
    }
    let mut keep = bytes.len();
    let mut first_line: HashMap<RowKey, usize> = HashMap::new();
    let count = lines.len();
    if let Some(first) = lines.first_mut()
        && bytes[first.0..first.1].starts_with(input::BOM)
    {
        first.0 += input::BOM.len();
    }
    for (index, &(from, to, terminated)) in lines.iter().enumerate() {
        let line_no = index + 1;
        if to - from > MAX_ROW_BYTES {
            return Err(ReadError::RowTooLarge {
                path: path.to_path_buf(),
                line: line_no,
                limit: MAX_ROW_BYTES,
            }
            .into());
        }
        let is_last = index + 1 == count;
        let parsed = std::str::from_utf8(&bytes[from..to])
            .map_err(|_| ResultsError::BadLine {
                path: path.to_path_buf(),
                line: line_no,
                message: "not valid UTF-8".into(),
            })
            .and_then(|text| {
                if text.trim().is_empty() {
                    Ok(None)
                } else {
                    parse_line(path, line_no, text, default_top_k).map(Some)
                }
            });
        // A crash can leave only the last line incomplete: no newline, or garbage in a line whose
        // write was cut short. Anything wrong before it was not made by a crash.
        let torn = is_last && (!terminated || parsed.is_err());
        if torn {
            keep = from;
            recovered.torn_line = Some((line_no, to - from));
            break;
        }
        let Some(row) = parsed? else { continue };
        let key = row.key();
        if let Some(&first) = first_line.get(&key) {
            return Err(ResultsError::DuplicateInFile {
                path: path.to_path_buf(),
                line: line_no,
                first,
                key,
            });
        }
        first_line.insert(key, line_no);
        recovered.rows.push(row);
    }
    Ok((recovered, keep))
}

/// Rewrites a result file with its rows in a new order, atomically (temporary file, fsync,
/// rename): a crash leaves the old file or the new one, never a mix.
pub fn rewrite_ordered(path: &Path, rows: &[ResultRow]) -> Result<(), ResultsError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = File::create(&tmp)?;
        let mut text = String::new();
        for row in rows {
            text.push_str(&row.to_line());
            text.push('\n');
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        ResultsError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A row that two inputs of [`merge`] both have, with different content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    pub key: RowKey,
    pub first: (PathBuf, usize),
    pub second: (PathBuf, usize),
}

/// Errors of [`merge`].
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(
        "conflicting rows for {}: {}:{} and {}:{} differ (apart from timings); refusing to merge",
        .0.key, .0.first.0.display(), .0.first.1, .0.second.0.display(), .0.second.1
    )]
    Conflict(Box<MergeConflict>),
}

/// What [`merge`] produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// The rows, in the order asked for.
    pub rows: Vec<ResultRow>,
    /// Rows present in more than one input with the same content (kept once).
    pub identical_duplicates: usize,
}

/// Merges result files (typically the shards of one run): every key once. The same key in two
/// inputs is kept once when the rows are equal apart from timings, and is an error otherwise.
/// Rows are ordered by `instance_rank` (instances it does not know last, by id), then explorer in
/// first-appearance order, then k.
pub fn merge(
    inputs: &[PathBuf],
    instance_rank: &dyn Fn(&str) -> Option<usize>,
) -> Result<Merged, MergeError> {
    let mut merged = Merged::default();
    let mut seen: HashMap<RowKey, (usize, PathBuf, usize)> = HashMap::new();
    let mut explorers: Vec<String> = Vec::new();
    for path in inputs {
        for located in read_results(path)? {
            let key = located.row.key();
            if let Some((index, first_path, first_line)) = seen.get(&key) {
                if merged.rows[*index].canonical_line() == located.row.canonical_line() {
                    merged.identical_duplicates += 1;
                    continue;
                }
                return Err(MergeError::Conflict(Box::new(MergeConflict {
                    key,
                    first: (first_path.clone(), *first_line),
                    second: (path.clone(), located.line),
                })));
            }
            if !explorers.contains(&located.row.explorer) {
                explorers.push(located.row.explorer.clone());
            }
            seen.insert(key, (merged.rows.len(), path.clone(), located.line));
            merged.rows.push(located.row);
        }
    }
    merged.rows.sort_by(|a, b| {
        let rank = |r: &ResultRow| {
            (
                instance_rank(&r.instance_id).unwrap_or(usize::MAX),
                r.instance_id.clone(),
                explorers.iter().position(|e| *e == r.explorer),
                r.top_k,
            )
        };
        rank(a).cmp(&rank(b))
    });
    Ok(merged)
}
