//! SWE-Explore benchmark rows and result rows: the reference schema as serde types, and the loaders
//! every command shares (`swex score`, the benchmark runner, the ground-truth builder).
//!
//! The types mirror the reference release's JSONL rows field for field, so that rows written by
//! swex (for instance by `swex gt build`) are read by the reference tools and vice versa. Fields that
//! swex does not interpret are kept in `extra` and written back unchanged.
//!
//! Line numbers are signed on purpose: ground-truth and result rows in the wild use `end = -1` for
//! "to the end of the file" and negative starts for "that many lines before the end"; the metrics
//! resolve them (see `docs/metrics.md`, "Resolving a region"). The loaders reject only what the
//! reference gives no meaning: an `end` below -1, non-integer line numbers, rows without an id or
//! ground truth, and duplicate ids.
//!
//! Loading is strict by default: the first bad row is an [`InputError`] naming file, line and field.
//! With [`LoadOptions::lenient`] bad rows are skipped and returned in the loader's `skipped` list
//! with the same detail ([`Skipped`]: every bad row counted by reason, the first
//! [`SKIPPED_KEPT`] kept in full, so that a file of junk costs bounded memory), so that callers
//! can say how many were skipped and why. A UTF-8 byte-order mark at the start of a file is
//! accepted (editors on Windows write one); a line that is not valid UTF-8 is a bad row naming
//! its line, not an unreadable file. Rows left out on
//! purpose (another `dataset`, empty core) are listed too: nothing is dropped silently.
//!
//! This module knows file formats only; it knows nothing about metrics or explorers.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use swex_engine::snapshot::PlainName;

use crate::input::{self, Lines, MAX_DOCUMENT_BYTES, ReadError, TextError};

/// A region as it appears in ground truth and result rows: `path` is repository-relative with `/`
/// separators, `start`/`end` are 1-based and inclusive, `end == -1` means "to the end of the file".
///
/// Deserialises from an object `{path, start, end}` or, as the reference evaluator also accepts,
/// from an array `[path, start, end]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Region {
    pub path: String,
    pub start: i64,
    pub end: i64,
}

impl Region {
    pub fn new(path: impl Into<String>, start: i64, end: i64) -> Self {
        Region {
            path: path.into(),
            start,
            end,
        }
    }
}

/// The `ground_truth` object of a benchmark row.
///
/// Every list may be absent or `null` (the reference reads each with `.get(key) or []`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_core_files: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_core_regions: Vec<Region>,
    /// Per model: files read by that model only (outside the core).
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_optional_files_map: BTreeMap<String, Vec<String>>,
    /// Per model: regions read by that model only (outside the core).
    #[serde(default, deserialize_with = "null_as_default")]
    pub read_optional_regions_map: BTreeMap<String, Vec<Region>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub modified_core_files: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub main_files: Vec<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl GroundTruth {
    /// The optional regions: the union (concatenation, in map order) over all models.
    pub fn optional_regions(&self) -> impl Iterator<Item = &Region> {
        self.read_optional_regions_map.values().flatten()
    }

    /// The optional files: the union over all models.
    pub fn optional_files(&self) -> impl Iterator<Item = &String> {
        self.read_optional_files_map.values().flatten()
    }

    /// Paths named by core or optional regions: exactly the files the reference counts lines of.
    pub fn region_paths(&self) -> BTreeSet<&str> {
        self.read_core_regions
            .iter()
            .chain(self.optional_regions())
            .map(|r| r.path.as_str())
            .collect()
    }

    /// Whether the row has core regions; the reference skips rows without them by default.
    pub fn has_core(&self) -> bool {
        !self.read_core_regions.is_empty()
    }
}

/// One benchmark row (`bench.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub instance_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_statement: Option<String>,
    #[serde(default)]
    pub ground_truth: GroundTruth,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl BenchRow {
    /// The snapshot folder of this row under `repos_root`, resolved the way the reference runner
    /// does (`_resolve_repo_dir`), with one addition: when the row's `repo_dir` names no existing
    /// folder, `repos_root/<instance_id>` is tried before giving up.
    ///
    /// - `repo_dir` absolute: used as is.
    /// - `repo_dir` relative: `repos_root/repo_dir` if that is a folder; else, when its first
    ///   component is the name of `repos_root` itself (`repos/x` with `--repos /data/repos`),
    ///   `repos_root/<rest>`.
    /// - no `repo_dir`: the first folder among `repos_root/<instance_id>`, `repos_root/<repo>`,
    ///   `repos_root/<org>__<repo>`, `repos_root/<org>-<repo>`, `repos_root/<org>`, where
    ///   `<org>__<repo>-<number>` is the instance id (the reference's older layouts).
    ///
    /// Names taken from the instance id are joined only when they are [`PlainName`]s, so an id
    /// such as `../../x` or `a__..-1` never names a folder outside `repos_root`. (`repo_dir` is a
    /// path the benchmark gives on purpose, absolute or not, and is only ever read, as the
    /// reference reads it.)
    ///
    /// Returns `None` when no candidate is an existing folder.
    pub fn snapshot_dir(&self, repos_root: &Path) -> Option<PathBuf> {
        let under = |name: &str| PlainName::new(name).ok().map(|name| repos_root.join(name));
        let by_id = under(&self.instance_id);
        if let Some(repo_dir) = self.repo_dir.as_deref().filter(|d| !d.is_empty()) {
            let given = Path::new(repo_dir);
            let resolved = if given.is_absolute() {
                given.to_path_buf()
            } else {
                let rooted = repos_root.join(given);
                let mut parts = given.components();
                let first_is_root_name = repos_root
                    .file_name()
                    .is_some_and(|name| parts.next().map(|c| c.as_os_str()) == Some(name));
                if !rooted.is_dir() && first_is_root_name {
                    repos_root.join(parts.as_path())
                } else {
                    rooted
                }
            };
            return [Some(resolved), by_id]
                .into_iter()
                .flatten()
                .find(|p| p.is_dir());
        }
        let (org, rest) = self.instance_id.split_once("__")?;
        let repo = rest.rsplit_once('-').map_or(rest, |(name, _)| name);
        [
            by_id,
            under(repo),
            under(&format!("{org}__{repo}")),
            under(&format!("{org}-{repo}")),
            under(org),
        ]
        .into_iter()
        .flatten()
        .find(|p| p.is_dir())
    }
}

/// `null` reads as the default value (the reference's `.get(key) or []`).
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// What is wrong with a row; used to count skipped rows by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowErrorKind {
    MalformedJson,
    NotAnObject,
    MissingField,
    WrongType,
    BadLineNumber,
    DuplicateId,
    InvalidUtf8,
    TooDeep,
}

impl RowErrorKind {
    pub fn describe(self) -> &'static str {
        match self {
            RowErrorKind::MalformedJson => "malformed JSON",
            RowErrorKind::NotAnObject => "not a JSON object",
            RowErrorKind::MissingField => "missing field",
            RowErrorKind::WrongType => "wrong type",
            RowErrorKind::BadLineNumber => "bad line number",
            RowErrorKind::DuplicateId => "duplicate id",
            RowErrorKind::InvalidUtf8 => "invalid UTF-8",
            RowErrorKind::TooDeep => "nested too deep",
        }
    }
}

/// One bad row of a JSONL file: its 1-based line, the offending field (a path such as
/// `ground_truth.read_core_regions[3].end`) when there is one, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    pub line: usize,
    pub field: Option<String>,
    pub kind: RowErrorKind,
    pub message: String,
}

impl RowError {
    /// The error without its line number: "field `x`: message".
    pub fn detail(&self) -> String {
        RowErrorBody(self).to_string()
    }
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, RowErrorBody(self))
    }
}

/// Errors of the loaders. Every variant names the file; row errors also name line and field.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{}: {}", path.display(), error.line, RowErrorBody(error))]
    Row { path: PathBuf, error: RowError },
    /// A whole-document JSON file (issue map, line counts) that is not what it should be.
    #[error("{}: {message}", path.display())]
    Document { path: PathBuf, message: String },
    /// A row or a file over the limits of [`crate::input`].
    #[error(transparent)]
    TooLarge(ReadError),
}

impl From<ReadError> for InputError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Io { path, source } => InputError::Io { path, source },
            other => InputError::TooLarge(other),
        }
    }
}

/// A row error without its line number (the `Row` variant prints `file:line:` itself).
struct RowErrorBody<'a>(&'a RowError);

impl fmt::Display for RowErrorBody<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(field) = &self.0.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.0.message)
    }
}

/// Bad rows kept in full by a lenient load; the others are only counted.
pub const SKIPPED_KEPT: usize = 1000;

/// The bad rows a lenient load skipped: all counted by reason, the first [`SKIPPED_KEPT`] kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    kept: Vec<RowError>,
    total: usize,
    by_kind: BTreeMap<RowErrorKind, usize>,
}

impl Skipped {
    pub fn push(&mut self, error: RowError) {
        self.total += 1;
        *self.by_kind.entry(error.kind).or_default() += 1;
        if self.kept.len() < SKIPPED_KEPT {
            self.kept.push(error);
        }
    }

    /// Bad rows skipped, all of them.
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The first [`SKIPPED_KEPT`] bad rows, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &RowError> {
        self.kept.iter()
    }
}

/// Rows skipped by a lenient load, counted by reason: `"2 malformed JSON, 1 duplicate id"`.
pub fn summarize_skipped(skipped: &Skipped) -> String {
    let reasons: Vec<String> = skipped
        .by_kind
        .iter()
        .map(|(kind, n)| format!("{n} {}", kind.describe()))
        .collect();
    reasons.join(", ")
}

// ---------------------------------------------------------------------------------------------
// JSONL reading shared by the row loaders
// ---------------------------------------------------------------------------------------------

/// A whole document as text, at most [`MAX_DOCUMENT_BYTES`]: a leading byte-order mark dropped,
/// invalid UTF-8 named by line.
fn read_to_string(path: &Path) -> Result<String, InputError> {
    input::read_text(path, MAX_DOCUMENT_BYTES).map_err(|e| match e {
        TextError::Read(e) => InputError::from(e),
        TextError::NotUtf8 { path, line } => InputError::Document {
            path,
            message: format!("line {line}: not valid UTF-8"),
        },
    })
}

/// Why a line is not UTF-8: the first bad byte and its column (1-based, in bytes).
fn invalid_utf8(line: &[u8], error: std::str::Utf8Error) -> String {
    let at = error.valid_up_to();
    format!(
        "not valid UTF-8 (byte 0x{:02x} at column {}; is the file in another encoding?)",
        line[at],
        at + 1
    )
}

/// Reads the non-blank lines of a JSONL file and parses each with `parse`. Strict: the first bad
/// row is an error. Lenient: bad rows go to the returned skip list.
fn read_jsonl<T>(
    path: &Path,
    lenient: bool,
    mut parse: impl FnMut(usize, serde_json::Value) -> Result<T, RowError>,
) -> Result<(Vec<T>, Skipped), InputError> {
    let mut lines = Lines::open(path)?;
    let mut rows = Vec::new();
    let mut skipped = Skipped::default();
    // Lines as `str::lines` cuts them (`\n`, and a `\r` before it), decoded one by one, each at
    // most `MAX_ROW_BYTES` (a longer one stops the load, lenient or not).
    while let Some(line) = lines.next_line()? {
        let raw = line.bytes.strip_suffix(b"\r").unwrap_or(line.bytes);
        let line_no = line.number;
        let line = match std::str::from_utf8(raw) {
            Ok(line) => line,
            Err(e) => {
                let error = RowError {
                    line: line_no,
                    field: None,
                    kind: RowErrorKind::InvalidUtf8,
                    message: invalid_utf8(raw, e),
                };
                if lenient {
                    skipped.push(error);
                    continue;
                }
                return Err(InputError::Row {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let parsed = parse_row(line_no, line).and_then(|value| {
            if value.is_object() {
                parse(line_no, value)
            } else {
                Err(RowError {
                    line: line_no,
                    field: None,
                    kind: RowErrorKind::NotAnObject,
                    message: "expected a JSON object".into(),
                })
            }
        });
        match parsed {
            Ok(row) => rows.push(row),
            Err(error) if lenient => skipped.push(error),
            Err(error) => {
                return Err(InputError::Row {
                    path: path.to_path_buf(),
                    error,
                });
            }
        }
    }
    Ok((rows, skipped))
}

/// One row as JSON: deeper than [`input::MAX_JSON_DEPTH`] is said so (the parser would only call
/// it a recursion limit), anything else the parser refuses is malformed.
fn parse_row(line: usize, text: &str) -> Result<serde_json::Value, RowError> {
    if let Some(message) = input::too_deep(text.as_bytes()) {
        return Err(RowError {
            line,
            field: None,
            kind: RowErrorKind::TooDeep,
            message,
        });
    }
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| RowError {
        line,
        field: None,
        kind: RowErrorKind::MalformedJson,
        message: format!("malformed JSON: {e}"),
    })
}

/// Deserialises `value` into `T`, turning serde's error into a [`RowError`] that names the field.
fn deserialize_row<T: serde::de::DeserializeOwned>(
    line: usize,
    prefix: &str,
    value: serde_json::Value,
) -> Result<T, RowError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let mut field = join_field(prefix, if path == "." { "" } else { &path });
        // A region given as an array `[path, start, end]`: name its elements like the object form.
        for (index, name) in [("][0]", ".path"), ("][1]", ".start"), ("][2]", ".end")] {
            if field.ends_with(index) {
                field.truncate(field.len() - 3);
                field.push_str(name);
            }
        }
        let (kind, message) = if let Some(name) = missing_field_name(&inner) {
            field = join_field(&field, name);
            (RowErrorKind::MissingField, "missing".to_string())
        } else if field.ends_with(".start") || field.ends_with(".end") {
            let message = inner.replace("expected i64", "expected an integer line number");
            (RowErrorKind::BadLineNumber, message)
        } else {
            (RowErrorKind::WrongType, inner)
        };
        RowError {
            line,
            field: (!field.is_empty()).then_some(field),
            kind,
            message,
        }
    })
}

fn join_field(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) if rest.starts_with('[') => format!("{prefix}{rest}"),
        (false, false) => format!("{prefix}.{rest}"),
    }
}

/// serde reports a missing field as "missing field `name`"; take the name out so the field path
/// can name it.
fn missing_field_name(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
}

/// The reference gives `end` a meaning for `-1` (end of file) and for every value >= 1; a value
/// below -1 means nothing and is rejected. Negative starts are offsets from the end of the file.
fn check_region(line: usize, field: &str, region: &Region) -> Result<(), RowError> {
    if region.end < -1 {
        return Err(RowError {
            line,
            field: Some(format!("{field}.end")),
            kind: RowErrorKind::BadLineNumber,
            message: format!(
                "{} is not a line number (use -1 for \"to the end of the file\")",
                region.end
            ),
        });
    }
    Ok(())
}

fn required_string(line: usize, value: &serde_json::Value, key: &str) -> Result<(), RowError> {
    match value.get(key) {
        None | Some(serde_json::Value::Null) => Err(RowError {
            line,
            field: Some(key.into()),
            kind: RowErrorKind::MissingField,
            message: "missing".into(),
        }),
        Some(serde_json::Value::String(s)) if s.is_empty() => Err(RowError {
            line,
            field: Some(key.into()),
            kind: RowErrorKind::MissingField,
            message: "empty".into(),
        }),
        Some(serde_json::Value::String(_)) => Ok(()),
        Some(other) => Err(RowError {
            line,
            field: Some(key.into()),
            kind: RowErrorKind::WrongType,
            message: format!("expected a string, found {other}"),
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Benchmark files
// ---------------------------------------------------------------------------------------------

/// How a benchmark file is read.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Skip bad rows (listed in `skipped`) instead of failing on the first.
    pub lenient: bool,
    /// Keep only rows whose `dataset` field equals this.
    pub dataset: Option<String>,
    /// Keep rows without core regions (the reference skips them by default).
    pub keep_empty_core: bool,
}

/// A loaded benchmark file: the rows to use, in file order, and everything left out with the reason.
#[derive(Debug, Clone, Default)]
pub struct Benchmark {
    pub path: PathBuf,
    pub rows: Vec<BenchRow>,
    /// Bad rows skipped by a lenient load.
    pub skipped: Skipped,
    /// Ids of valid rows left out because their `dataset` differs from the one asked for.
    pub excluded_by_dataset: Vec<String>,
    /// Ids of valid rows left out because they have no core regions.
    pub excluded_empty_core: Vec<String>,
    index: HashMap<String, usize>,
}

impl Benchmark {
    /// Reads a reference-format benchmark file (JSONL, one row per instance).
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Benchmark, InputError> {
        let mut first_line_of: HashMap<String, usize> = HashMap::new();
        let (rows, skipped) = read_jsonl(path, options.lenient, |line, value| {
            required_string(line, &value, "instance_id")?;
            match value.get("ground_truth") {
                Some(gt) if gt.is_object() => {}
                Some(serde_json::Value::Null) | None => {
                    return Err(RowError {
                        line,
                        field: Some("ground_truth".into()),
                        kind: RowErrorKind::MissingField,
                        message: "missing".into(),
                    });
                }
                Some(other) => {
                    return Err(RowError {
                        line,
                        field: Some("ground_truth".into()),
                        kind: RowErrorKind::WrongType,
                        message: format!("expected an object, found {}", json_kind(other)),
                    });
                }
            }
            let row: BenchRow = deserialize_row(line, "", value)?;
            let gt = &row.ground_truth;
            for (i, region) in gt.read_core_regions.iter().enumerate() {
                check_region(
                    line,
                    &format!("ground_truth.read_core_regions[{i}]"),
                    region,
                )?;
            }
            for (model, regions) in &gt.read_optional_regions_map {
                for (i, region) in regions.iter().enumerate() {
                    let field = format!("ground_truth.read_optional_regions_map.{model}[{i}]");
                    check_region(line, &field, region)?;
                }
            }
            if let Some(first) = first_line_of.get(&row.instance_id) {
                return Err(RowError {
                    line,
                    field: Some("instance_id".into()),
                    kind: RowErrorKind::DuplicateId,
                    message: format!("duplicate id `{}` (first on line {first})", row.instance_id),
                });
            }
            first_line_of.insert(row.instance_id.clone(), line);
            Ok(row)
        })?;

        let mut benchmark = Benchmark {
            path: path.to_path_buf(),
            skipped,
            ..Benchmark::default()
        };
        for row in rows {
            if let Some(wanted) = &options.dataset
                && row.dataset.as_deref() != Some(wanted.as_str())
            {
                benchmark.excluded_by_dataset.push(row.instance_id);
            } else if !options.keep_empty_core && !row.ground_truth.has_core() {
                benchmark.excluded_empty_core.push(row.instance_id);
            } else {
                benchmark
                    .index
                    .insert(row.instance_id.clone(), benchmark.rows.len());
                benchmark.rows.push(row);
            }
        }
        Ok(benchmark)
    }

    /// The row of an instance kept by the load.
    pub fn get(&self, instance_id: &str) -> Option<&BenchRow> {
        self.index.get(instance_id).map(|&i| &self.rows[i])
    }

    /// Whether the id belongs to a valid row that the load left out on purpose (dataset filter or
    /// empty core), as opposed to an id the file does not have at all.
    pub fn excluded(&self, instance_id: &str) -> bool {
        self.excluded_by_dataset.iter().any(|id| id == instance_id)
            || self.excluded_empty_core.iter().any(|id| id == instance_id)
    }

    /// Fills in issue texts from an issue map. Like the reference runner, a non-empty text in the
    /// map takes precedence over the row's own `problem_statement`.
    pub fn join_issues(&mut self, issues: &IssueMap) -> IssueJoin {
        let mut join = IssueJoin::default();
        for row in &mut self.rows {
            if let Some(text) = issues.get(&row.instance_id).filter(|t| !t.is_empty()) {
                row.problem_statement = Some(text.clone());
                join.from_map += 1;
            } else if row.problem_statement.as_deref().is_none_or(str::is_empty) {
                join.missing.push(row.instance_id.clone());
            }
        }
        join
    }

    /// Ids of kept rows that have no issue text.
    pub fn rows_without_issue(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.problem_statement.as_deref().is_none_or(str::is_empty))
            .map(|r| r.instance_id.as_str())
            .collect()
    }
}

/// What [`Benchmark::join_issues`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueJoin {
    /// Rows whose issue text now comes from the map.
    pub from_map: usize,
    /// Rows with no issue text, neither in the row nor in the map.
    pub missing: Vec<String>,
}

/// Issue texts by instance id: a JSON object `{instance_id: text}` (`--issue-map`).
pub type IssueMap = HashMap<String, String>;

/// Reads an issue map file.
pub fn load_issue_map(path: &Path) -> Result<IssueMap, InputError> {
    load_json_document(path, "issue map: a JSON object {instance_id: issue text}")
}

/// Reads a whole-document JSON file into `T`; errors name the file, the position and the key path.
pub(crate) fn load_json_document<T: serde::de::DeserializeOwned>(
    path: &Path,
    expected: &str,
) -> Result<T, InputError> {
    let text = read_to_string(path)?;
    let document_error = |message: String| InputError::Document {
        path: path.to_path_buf(),
        message,
    };
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let value: T = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let at = error.path().to_string();
        let inner = error.into_inner();
        let position = format!("line {}, column {}", inner.line(), inner.column());
        if at == "." {
            document_error(format!("{position}: {inner} (expected {expected})"))
        } else {
            document_error(format!(
                "{position}: key `{at}`: {inner} (expected {expected})"
            ))
        }
    })?;
    deserializer
        .end()
        .map_err(|e| document_error(format!("trailing content after the JSON value: {e}")))?;
    Ok(value)
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

// ---------------------------------------------------------------------------------------------
// Result (prediction) files
// ---------------------------------------------------------------------------------------------

/// What an explorer produced for one instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The ranked regions, best first.
    Regions(Vec<Region>),
    /// The explorer failed on this instance (the row has an `error`).
    Failed(String),
}

/// One result row: `{instance_id, explorer, regions, ...}` as the reference runner writes it, or
/// `{instance_id, explorer, error, ...}` for a failure.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionRow {
    pub instance_id: String,
    pub explorer: String,
    pub outcome: Outcome,
    /// Every other field (`metrics`, `num_regions`, `token_usage`, ...), unchanged.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The 1-based line of the row in its file.
    pub line: usize,
}

#[derive(Deserialize)]
struct RawPrediction {
    instance_id: String,
    explorer: String,
    #[serde(default)]
    regions: Option<Vec<Region>>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

/// A loaded result file. Rows keep file order; one file may hold several explorers.
#[derive(Debug, Clone, Default)]
pub struct Predictions {
    pub path: PathBuf,
    pub rows: Vec<PredictionRow>,
    /// Bad rows skipped by a lenient load.
    pub skipped: Skipped,
}

impl Predictions {
    /// Reads a result file. A row is a failure when its `error` is present and not `null`,
    /// `false` or `""`; otherwise it must have `regions`. The same (instance, explorer) twice is an
    /// error (lenient: the later row is skipped).
    pub fn load(path: &Path, lenient: bool) -> Result<Predictions, InputError> {
        let mut first_line_of: HashMap<(String, String), usize> = HashMap::new();
        let (rows, skipped) = read_jsonl(path, lenient, |line, value| {
            required_string(line, &value, "instance_id")?;
            required_string(line, &value, "explorer")?;
            let raw: RawPrediction = deserialize_row(line, "", value)?;
            let outcome = match raw.error.as_ref().and_then(failure_message) {
                Some(message) => Outcome::Failed(message),
                None => {
                    let regions = raw.regions.ok_or_else(|| RowError {
                        line,
                        field: Some("regions".into()),
                        kind: RowErrorKind::MissingField,
                        message: "missing (a row without `error` must list its regions)".into(),
                    })?;
                    for (i, region) in regions.iter().enumerate() {
                        check_region(line, &format!("regions[{i}]"), region)?;
                    }
                    Outcome::Regions(regions)
                }
            };
            let key = (raw.instance_id.clone(), raw.explorer.clone());
            if let Some(first) = first_line_of.get(&key) {
                return Err(RowError {
                    line,
                    field: Some("instance_id".into()),
                    kind: RowErrorKind::DuplicateId,
                    message: format!(
                        "duplicate row for instance `{}` and explorer `{}` (first on line {first})",
                        key.0, key.1
                    ),
                });
            }
            first_line_of.insert(key, line);
            Ok(PredictionRow {
                instance_id: raw.instance_id,
                explorer: raw.explorer,
                outcome,
                extra: raw.extra,
                line,
            })
        })?;
        Ok(Predictions {
            path: path.to_path_buf(),
            rows,
            skipped,
        })
    }
}

/// The failure message of an `error` field, or `None` when the field means "no error".
fn failure_message(error: &serde_json::Value) -> Option<String> {
    match error {
        serde_json::Value::Null | serde_json::Value::Bool(false) => None,
        serde_json::Value::String(s) if s.is_empty() => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}
