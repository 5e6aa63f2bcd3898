//! The task-file schemas `swex dataset import` reads, one table ([`SCHEMAS`]): how each is
//! recognised and where each of a bench row's fields comes from. Adding a schema is a row here
//! and a fixture in `bench/tests/data/import/`.

use serde_json::{Map, Value};

/// Where the fix comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixSource {
    /// A unified diff.
    Patch(String),
    /// Per-file pre-fix line spans and the list of changed files (`../shared/data/train`).
    Edits {
        patch_files: Vec<String>,
        edits: std::collections::BTreeMap<String, Vec<[u64; 2]>>,
    },
}

/// A task row read through its schema: what a bench row needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub instance_id: String,
    pub repo: Option<String>,
    pub base_commit: Option<String>,
    /// Empty when the row has none.
    pub issue: String,
    pub fix: Option<FixSource>,
    pub language: Option<String>,
    /// The task's test lists that it has ([`TEST_LISTS`]), by bench name, in table order.
    pub tests: Vec<(&'static str, Vec<String>)>,
}

/// The test lists of a task, kept in the bench row as JSON arrays of strings under the first
/// name: (bench row field, the names task files publish it under). SWE-bench writes them as JSON
/// text in a string, SWE-bench Pro as a Python literal in a string ([`super::literal`]); an array
/// is taken as it is.
pub static TEST_LISTS: &[(&str, &[&str])] = &[
    ("fail_to_pass", &["FAIL_TO_PASS", "fail_to_pass"]),
    ("pass_to_pass", &["PASS_TO_PASS", "pass_to_pass"]),
    (
        "selected_test_files_to_run",
        &["selected_test_files_to_run"],
    ),
];

/// One schema: its name (the bench row's `dataset`), the fields that must all be there for a row
/// to be read with it, a further check, and the reader.
pub struct Schema {
    pub name: &'static str,
    /// What it is, for `--help` and the docs.
    pub about: &'static str,
    pub required: &'static [&'static str],
    pub accepts: fn(&Map<String, Value>) -> bool,
    pub read: fn(&Map<String, Value>) -> Result<Task, String>,
}

/// The schemas, tried in this order; the first that accepts a row reads it.
pub static SCHEMAS: &[Schema] = &[
    Schema {
        name: "multi-swe-bench",
        about: "Multi-SWE-bench: org, repo, number, base.sha, resolved_issues (the issue text), fix_patch",
        required: &["org", "repo", "number", "base", "fix_patch"],
        accepts: |_| true,
        read: read_multi_swe_bench,
    },
    Schema {
        name: "swex-train",
        about: "the rows of ../shared/data/train: instance_id, repo, base_commit, problem_statement, patch_files, edits",
        required: &[
            "instance_id",
            "repo",
            "base_commit",
            "problem_statement",
            "patch_files",
            "edits",
        ],
        accepts: |_| true,
        read: read_train,
    },
    Schema {
        name: "swe-bench-pro",
        about: "SWE-bench Pro: `instance_` ids, patch, problem_statement, base_commit, repo_language; list fields may be Python literal strings",
        required: &[
            "instance_id",
            "repo",
            "base_commit",
            "patch",
            "problem_statement",
        ],
        accepts: |row| str_field(row, "instance_id").is_some_and(|id| id.starts_with("instance_")),
        read: read_swe_bench,
    },
    Schema {
        name: "swe-bench",
        about: "SWE-bench, Lite, Verified and Multilingual: instance_id, repo, base_commit, patch, problem_statement",
        required: &[
            "instance_id",
            "repo",
            "base_commit",
            "patch",
            "problem_statement",
        ],
        accepts: |_| true,
        read: read_swe_bench,
    },
];

/// The schema that reads `row`, or an error naming the fields seen.
pub fn recognise(row: &Map<String, Value>) -> Result<&'static Schema, String> {
    SCHEMAS
        .iter()
        .find(|s| s.required.iter().all(|f| row.contains_key(*f)) && (s.accepts)(row))
        .ok_or_else(|| {
            let mut seen: Vec<&str> = row.keys().map(String::as_str).collect();
            seen.sort_unstable();
            format!(
                "unknown schema: fields seen {}; known: {}",
                seen.join(", "),
                SCHEMAS
                    .iter()
                    .map(|s| format!("{} ({})", s.name, s.required.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        })
}

fn str_field<'a>(row: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    row.get(name).and_then(Value::as_str)
}

fn text(row: &Map<String, Value>, name: &str) -> Result<String, String> {
    match row.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) | None => Ok(String::new()),
        Some(other) => Err(format!("`{name}` is {}, not a string", kind(other))),
    }
}

/// A JSON value's kind as messages name it (`a string`, `an object`).
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A list of strings: a JSON array, or a string holding one as JSON text or as a Python literal.
/// `None` when the row has no such field (or it is null or an empty string).
fn string_list(row: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, String> {
    match row.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("`{name}` holds {}, not a string", kind(other))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => match serde_json::from_str::<Vec<String>>(s) {
            Ok(list) => Ok(Some(list)),
            Err(_) => super::literal::str_list(s).map(Some).map_err(|e| {
                format!(
                    "`{name}` is a string but not a list of strings as JSON or a Python literal: {e}"
                )
            }),
        },
        Some(other) => Err(format!(
            "`{name}` is {}, not a list of strings",
            kind(other)
        )),
    }
}

/// The test lists of [`TEST_LISTS`] a row has.
fn test_lists(row: &Map<String, Value>) -> Result<Vec<(&'static str, Vec<String>)>, String> {
    let mut out = Vec::new();
    for (bench_name, names) in TEST_LISTS {
        for name in *names {
            if let Some(list) = string_list(row, name)? {
                out.push((*bench_name, list));
                break;
            }
        }
    }
    Ok(out)
}

fn read_swe_bench(row: &Map<String, Value>) -> Result<Task, String> {
    let instance_id = text(row, "instance_id")?;
    let language = str_field(row, "repo_language")
        .or_else(|| str_field(row, "language"))
        .map(str::to_string);
    Ok(Task {
        instance_id,
        repo: Some(pro_repo(&text(row, "repo")?)),
        base_commit: Some(text(row, "base_commit")?),
        issue: text(row, "problem_statement")?,
        fix: Some(FixSource::Patch(text(row, "patch")?)),
        language,
        tests: test_lists(row)?,
    })
}

/// SWE-bench Pro names some repositories `owner__name` or with a URL; bench rows say `owner/name`.
fn pro_repo(repo: &str) -> String {
    let repo = repo.trim().trim_end_matches(".git");
    let repo = repo.strip_prefix("https://github.com/").unwrap_or(repo);
    match repo.split_once("__") {
        Some((owner, name)) if !repo.contains('/') => format!("{owner}/{name}"),
        _ => repo.to_string(),
    }
}

fn read_multi_swe_bench(row: &Map<String, Value>) -> Result<Task, String> {
    let org = text(row, "org")?;
    let repo = text(row, "repo")?;
    let number = match row.get("number") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => return Err("`number` is neither a number nor a string".into()),
    };
    let base_commit = row
        .get("base")
        .and_then(|b| b.get("sha"))
        .and_then(Value::as_str)
        .ok_or("`base.sha` is missing")?
        .to_string();
    // The issue text: the resolved issues' titles and bodies, in order.
    let mut issue = String::new();
    if let Some(Value::Array(issues)) = row.get("resolved_issues") {
        for item in issues {
            for field in ["title", "body"] {
                if let Some(part) = item
                    .get(field)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    if !issue.is_empty() {
                        issue.push('\n');
                    }
                    issue.push_str(part);
                }
            }
        }
    }
    let instance_id = match str_field(row, "instance_id") {
        Some(id) => id.to_string(),
        None => format!("{org}__{repo}-{number}"),
    };
    Ok(Task {
        instance_id,
        repo: Some(format!("{org}/{repo}")),
        base_commit: Some(base_commit),
        issue,
        fix: Some(FixSource::Patch(text(row, "fix_patch")?)),
        language: str_field(row, "language").map(str::to_string),
        tests: Vec::new(),
    })
}

fn read_train(row: &Map<String, Value>) -> Result<Task, String> {
    let patch_files: Vec<String> = serde_json::from_value(row["patch_files"].clone())
        .map_err(|e| format!("`patch_files`: {e}"))?;
    let edits: std::collections::BTreeMap<String, Vec<[u64; 2]>> =
        serde_json::from_value(row["edits"].clone()).map_err(|e| format!("`edits`: {e}"))?;
    Ok(Task {
        instance_id: text(row, "instance_id")?,
        repo: Some(text(row, "repo")?),
        base_commit: Some(text(row, "base_commit")?),
        issue: text(row, "problem_statement")?,
        fix: Some(FixSource::Edits { patch_files, edits }),
        language: str_field(row, "language").map(str::to_string),
        tests: Vec::new(),
    })
}
