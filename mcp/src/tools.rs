//! The tools: their arguments (with JSON schemas and descriptions an agent can act on), what
//! they ask of the index, and their answers — compact text for the agent to read, with the same
//! data as structured content.
//!
//! Every tool takes an optional `repo`. Queries go through the plugin host's engine backend
//! ([`EngineBackend`], the services explorers use), `explore` through the configured explorer;
//! exact reference lines come from the index's file analyses.

use crate::error::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use swex_engine::index::SnapshotIndex;
use swex_plugin::Request;
use swex_plugin::types::{
    CodeSearchArgs, DefinitionsArgs, Direction, NeighboursArgs, NodeRef, ReadLinesArgs,
};
use swex_plugin_host::{EngineBackend, ExplorerHandle, ServiceBackend};
use swex_plugin_serve::RawServices;

/// Most regions `explore` returns.
pub const MAX_TOP_K: usize = 50;
/// Most results of `search`, `definition`, `references` and `neighbours`.
pub const MAX_LIMIT: usize = 200;
/// Most lines one `read` returns.
pub const MAX_READ_LINES: u32 = 2000;
/// Lines of region text `explore` includes when asked for text without a budget.
pub const DEFAULT_TEXT_LINES: u64 = 400;
/// Longest line shown in text answers (longer ones are cut with `…`).
const MAX_LINE_CHARS: usize = 300;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreArgs {
    /// The issue or task in plain words: a bug report, a feature request, an error message or a
    /// traceback. The more identifiers, paths and error text, the better.
    pub issue: String,
    /// How many regions to return (default 5, at most 50).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// The most lines you want to read in total; the explorer plans regions for it, and included
    /// text stops there.
    #[serde(default)]
    pub budget: Option<u64>,
    /// Include each region's lines (numbered), up to `budget` lines in total (400 without a
    /// budget). Default false: paths, line ranges and reasons only.
    #[serde(default)]
    pub include_text: bool,
    /// Repository: a served repository's name or path, or another directory (default: the
    /// server's first repository).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchToolArgs {
    /// What to look for: identifiers (`bulk_create batch_size`), a phrase, or an error message.
    /// CamelCase and snake_case names are split into words, so partial names match.
    pub query: String,
    /// How many hits (default 10, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only files under this directory (repository-relative, e.g. `src/db`).
    #[serde(default)]
    pub under: Option<String>,
    /// Repository (default: the server's first).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefinitionArgs {
    /// The symbol: a bare name (`save`), a qualified one (`Model.save`, `a::b::f`) or a dotted
    /// suffix of a module path (`models.base.Model`).
    pub name: String,
    /// How many definitions (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Repository (default: the server's first).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    /// The symbol whose uses you want: bare (`save`) or qualified (`Model.save`).
    pub symbol: String,
    /// The file that defines it, when the name is defined in several places.
    #[serde(default)]
    pub path: Option<String>,
    /// How many references (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Repository (default: the server's first).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeighboursToolArgs {
    /// A file of the repository (repository-relative).
    pub path: String,
    /// A definition in that file (`Class.method`, or a bare name unique in the file); without it,
    /// the file itself.
    #[serde(default)]
    pub symbol: Option<String>,
    /// How many neighbours (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Repository (default: the server's first).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file, repository-relative (an absolute path inside the repository also works).
    pub path: String,
    /// First line, 1-based (default 1).
    #[serde(default)]
    pub start: Option<u32>,
    /// Last line, inclusive (default: the end of the file; at most 2000 lines per call).
    #[serde(default)]
    pub end: Option<u32>,
    /// Repository (default: the server's first).
    #[serde(default)]
    pub repo: Option<String>,
}

/// A tool's answer: text for the agent, the same data structured.
pub struct Answer {
    pub text: String,
    pub structured: Value,
}

/// A call's arguments as the client sent them.
pub type Arguments = Option<serde_json::Map<String, Value>>;

/// A tool's decoded arguments, ready to run once the repository's index is fresh.
pub type Prepared = Box<dyn FnOnce(&Ctx<'_>) -> Result<Answer, ToolError> + Send>;

/// A tool's arguments type, which knows how to run the tool: the one place a tool's arguments
/// meet its handler, so that [`TOOLS`] can declare each tool in one row.
pub trait ToolArgs: serde::de::DeserializeOwned + JsonSchema + Send + 'static {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError>;
}

fn prepare<A: ToolArgs>(tool: &str, arguments: Arguments) -> Result<Prepared, ToolError> {
    let args: A = parse_args(tool, arguments)?;
    Ok(Box::new(move |ctx: &Ctx<'_>| args.run(ctx)))
}

/// One tool: how it is listed to clients and how a call of it is decoded and run. Adding a
/// tool is a row of [`TOOLS`], its arguments type with [`ToolArgs`], and its row in
/// docs/mcp.md's table (a test checks the two lists agree).
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    /// Decodes a call's arguments into the work to run (before any index work, so a bad call
    /// answers at once).
    pub prepare: fn(&str, Arguments) -> Result<Prepared, ToolError>,
    /// The longest text argument the tool takes, in bytes: longer ones are refused before any
    /// work, so a call's cost is bounded by what the tool needs, not by what a client sends.
    pub max_text_bytes: usize,
}

/// The longest issue `explore` takes (a long traceback and log fit many times over).
pub const MAX_ISSUE_BYTES: usize = 1024 * 1024;
/// The longest query, name, path or other text argument of every other tool.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;

/// The argument every tool takes besides its own: the most bytes its answer may have.
pub const MAX_BYTES_ARG: &str = "max_bytes";

/// A tool's schema with the arguments every tool shares added (`max_bytes`), so that they are
/// declared once.
pub fn schema_with_shared_args(spec: &ToolSpec) -> Value {
    let mut schema = (spec.schema)();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            MAX_BYTES_ARG.into(),
            json!({
                "description": format!(
                    "The most bytes the answer may take, text and structured content together (default {}, {}-{}); a longer answer is cut and says so.",
                    crate::fit::DEFAULT_MAX_BYTES,
                    crate::fit::MIN_MAX_BYTES,
                    crate::fit::MAX_MAX_BYTES
                ),
                "type": ["integer", "null"],
                "format": "uint",
                "minimum": crate::fit::MIN_MAX_BYTES,
                "maximum": crate::fit::MAX_MAX_BYTES,
            }),
        );
    }
    schema
}

/// The tool named `name`.
pub fn tool_spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialize")
}

/// The tools, in the order they are listed.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "explore",
        title: "Find the code a task needs",
        description: "Given an issue or task (bug report, feature request, error message, traceback), returns the ranked code regions to read first (path:start-end, with why each was chosen). Call it first on a new task, then `read` the regions. Set include_text to get their lines right away, and budget to bound how many lines you want in total.",
        schema: schema_of::<ExploreArgs>,
        prepare: prepare::<ExploreArgs>,
        max_text_bytes: MAX_ISSUE_BYTES,
    },
    ToolSpec {
        name: "search",
        title: "Search the code",
        description: "Ranked code chunks (functions, classes, windows of text files) matching a query of identifiers, words or an error message, each with its best matching lines. Use it to find where something is handled when you know words that must appear there; for where a name is defined, use `definition`.",
        schema: schema_of::<SearchToolArgs>,
        prepare: prepare::<SearchToolArgs>,
        max_text_bytes: MAX_TEXT_BYTES,
    },
    ToolSpec {
        name: "definition",
        title: "Where a symbol is defined",
        description: "Where a function, method, class or constant is defined: path:start-end, kind, qualified name and its first line. Accepts a bare name (`save`), a qualified one (`Model.save`) or a dotted module suffix.",
        schema: schema_of::<DefinitionArgs>,
        prepare: prepare::<DefinitionArgs>,
        max_text_bytes: MAX_TEXT_BYTES,
    },
    ToolSpec {
        name: "references",
        title: "Where a symbol is used",
        description: "Where a symbol is used (calls, type uses, accesses), resolved through the code graph: each using definition with the exact lines. Give `path` when the name is defined in several files.",
        schema: schema_of::<ReferencesArgs>,
        prepare: prepare::<ReferencesArgs>,
        max_text_bytes: MAX_TEXT_BYTES,
    },
    ToolSpec {
        name: "neighbours",
        title: "Code related to a file or definition",
        description: "The code graph around a file or a definition in it: what it imports and what imports it, its tests (or what it tests), what it uses and what uses it. Use it to see what a change may affect.",
        schema: schema_of::<NeighboursToolArgs>,
        prepare: prepare::<NeighboursToolArgs>,
        max_text_bytes: MAX_TEXT_BYTES,
    },
    ToolSpec {
        name: "read",
        title: "Read lines of a file",
        description: "Numbered lines of a file of the repository (at most 2000 per call). Paths are repository-relative; paths outside the repository are refused.",
        schema: schema_of::<ReadArgs>,
        prepare: prepare::<ReadArgs>,
        max_text_bytes: MAX_TEXT_BYTES,
    },
];

impl ToolArgs for ExploreArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        explore(ctx, self)
    }
}

impl ToolArgs for SearchToolArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        search(ctx, self)
    }
}

impl ToolArgs for DefinitionArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        definition(ctx, self)
    }
}

impl ToolArgs for ReferencesArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        references(ctx, self)
    }
}

impl ToolArgs for NeighboursToolArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        neighbours(ctx, self)
    }
}

impl ToolArgs for ReadArgs {
    fn run(self, ctx: &Ctx<'_>) -> Result<Answer, ToolError> {
        read(ctx, self)
    }
}

/// Takes the shared `max_bytes` argument out of a call's arguments: the answer's byte cap.
pub fn take_max_bytes(
    tool: &str,
    arguments: &mut Option<serde_json::Map<String, Value>>,
) -> Result<usize, ToolError> {
    use crate::fit::{DEFAULT_MAX_BYTES, MAX_MAX_BYTES, MIN_MAX_BYTES};
    let given = arguments.as_mut().and_then(|a| a.remove(MAX_BYTES_ARG));
    match given {
        None | Some(Value::Null) => Ok(DEFAULT_MAX_BYTES),
        Some(value) => match value.as_u64() {
            Some(n) if (MIN_MAX_BYTES as u64..=MAX_MAX_BYTES as u64).contains(&n) => Ok(n as usize),
            _ => Err(ToolError::bad(
                tool,
                format!(
                    "{MAX_BYTES_ARG}: {value} is not a whole number from {MIN_MAX_BYTES} to {MAX_MAX_BYTES}"
                ),
            )),
        },
    }
}

/// Decodes a tool's arguments, naming the tool and the field in errors. Text arguments longer
/// than the tool's [`ToolSpec::max_text_bytes`] are refused first.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<T, ToolError> {
    let max_text = tool_spec(tool).map_or(MAX_TEXT_BYTES, |spec| spec.max_text_bytes);
    if let Some(arguments) = &arguments {
        for (field, value) in arguments {
            if let Value::String(text) = value
                && text.len() > max_text
            {
                return Err(ToolError::bad(
                    tool,
                    format!(
                        "{field}: {} bytes is over the limit of {max_text} bytes",
                        text.len()
                    ),
                ));
            }
        }
    }
    let value = Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            ToolError::bad(tool, inner)
        } else {
            ToolError::bad(tool, format!("{path}: {inner}"))
        }
    })
}

/// The limit a call asked for, or the default, checked against the maximum.
fn limit(tool: &str, asked: Option<usize>, default: usize, max: usize) -> Result<usize, ToolError> {
    match asked.unwrap_or(default) {
        0 => Err(ToolError::bad(tool, "limit must be at least 1")),
        n if n > max => Err(ToolError::bad(tool, format!("limit {n} is above {max}"))),
        n => Ok(n),
    }
}

fn required_text<'a>(tool: &str, field: &str, value: &'a str) -> Result<&'a str, ToolError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        Err(ToolError::bad(tool, format!("{field} is empty")))
    } else {
        Ok(trimmed)
    }
}

/// A path argument as a repository-relative path (`/` separators, no `.` parts; empty for the
/// root itself). Accepts `./a`, `a\\b` and absolute paths inside the repository (under its
/// canonical root or the root as it was given); refuses `..` and absolute paths elsewhere. The
/// one rule for every path a tool takes (`path`, `under`).
pub fn relative_path(
    root: &std::path::Path,
    given_root: &std::path::Path,
    path: &str,
) -> Result<String, ToolError> {
    let outside = || ToolError::OutsideRepository {
        path: path.to_owned(),
        root: root.display().to_string(),
    };
    let raw = path.trim().replace('\\', "/");
    let relative = if raw.starts_with('/') {
        let absolute = std::path::Path::new(&raw);
        let inside = absolute
            .strip_prefix(root)
            .or_else(|_| absolute.strip_prefix(given_root))
            .map_err(|_| outside())?;
        inside.to_string_lossy().replace('\\', "/")
    } else {
        raw
    };
    let mut parts = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(outside()),
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// A path argument as a repository-relative path of an indexed file ([`relative_path`], and the
/// index must hold the file).
pub fn repo_path(
    index: &SnapshotIndex,
    given_root: &std::path::Path,
    path: &str,
) -> Result<String, ToolError> {
    let root = index.root();
    let relative = relative_path(root, given_root, path)?;
    if relative.is_empty() {
        return Err(ToolError::bad("read", format!("`{path}` names no file")));
    }
    if index.file(&relative).is_none() {
        return Err(ToolError::NoSuchFile {
            path: relative,
            root: root.display().to_string(),
        });
    }
    Ok(relative)
}

fn clip(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
    format!("{cut}…")
}

/// `  12| text` lines, the number right-aligned to the widest.
fn numbered(out: &mut String, start: u32, lines: &[String]) {
    let width = (start as usize + lines.len()).to_string().len();
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(out, "{:>width$}| {}", start as usize + i, clip(line));
    }
}

/// The server's view of one call: the index and its backend.
pub struct Ctx<'a> {
    pub index: &'a Arc<SnapshotIndex>,
    /// The explorer `explore` asks.
    pub explorer: &'a ExplorerHandle,
    pub backend: &'a EngineBackend,
    /// The backend as the explorer sees it: every service call first checks whether the call
    /// was cancelled, so a cancelled `explore` stops at the explorer's next service call.
    pub explorer_services: &'a dyn RawServices,
    pub given_root: &'a std::path::Path,
}

pub fn explore(ctx: &Ctx<'_>, args: ExploreArgs) -> Result<Answer, ToolError> {
    let explorer = ctx.explorer;
    let tool = "explore";
    let issue = required_text(tool, "issue", &args.issue)?;
    let top_k = match args.top_k.unwrap_or(5) {
        0 => return Err(ToolError::bad(tool, "top_k must be at least 1")),
        k if k > MAX_TOP_K => {
            return Err(ToolError::bad(
                tool,
                format!("top_k {k} is above {MAX_TOP_K}"),
            ));
        }
        k => k,
    };
    if args.budget == Some(0) {
        return Err(ToolError::bad(tool, "budget must be at least 1 line"));
    }
    let mut request = Request::new("mcp", issue, top_k);
    request.line_budget = args.budget;
    request.repo_root = Some(ctx.index.root().display().to_string());
    let answer = explorer.explore_validated(&request, ctx.explorer_services)?;
    let mut text = String::new();
    let mut regions = Vec::new();
    let mut text_left = args.budget.unwrap_or(DEFAULT_TEXT_LINES);
    let _ = writeln!(
        text,
        "{} regions from {} in {}",
        answer.regions.len(),
        explorer.name(),
        ctx.index.root().display()
    );
    for (rank, region) in answer.regions.iter().enumerate() {
        let total = ctx.index.file(&region.path).map_or(0, |f| f.line_count);
        let start = region.start.max(1) as u32;
        let end = if region.end == -1 {
            total
        } else {
            (region.end.max(0) as u32).min(total)
        };
        let score = region
            .score
            .map(|s| format!("  score {s:.3}"))
            .unwrap_or_default();
        let whole = if region.end == -1 && start == 1 {
            " (whole file)"
        } else {
            ""
        };
        let _ = writeln!(
            text,
            "{}. {}:{start}-{end}{whole}{score}{}",
            rank + 1,
            region.path,
            region
                .why
                .as_deref()
                .map(|w| format!("  — {w}"))
                .unwrap_or_default()
        );
        let mut entry = json!({
            "path": region.path,
            "start": start,
            "end": end,
            "score": region.score,
            "why": region.why,
        });
        if args.include_text && start <= end {
            let shown = u64::from(end - start + 1).min(text_left) as u32;
            if shown > 0 {
                let lines = ctx
                    .index
                    .read_lines(&region.path, start, start + shown - 1)
                    .map_err(|source| ToolError::Index {
                        root: ctx.index.root().display().to_string(),
                        source,
                    })?;
                numbered(&mut text, start, &lines);
                entry["text"] = json!(lines.join("\n"));
                text_left -= u64::from(shown);
            }
            if shown < end - start + 1 {
                let from = start + shown;
                let _ = writeln!(
                    text,
                    "   … lines {from}-{end} not shown (budget reached): read {} {from}-{end}",
                    region.path
                );
            }
        }
        regions.push(entry);
    }
    for note in &answer.notes {
        let _ = writeln!(text, "note: {note}");
    }
    if answer.regions.is_empty() {
        let _ = writeln!(
            text,
            "nothing found: try `search` with identifiers or error text from the issue"
        );
    }
    Ok(Answer {
        text,
        structured: json!({
            "explorer": explorer.name(),
            "regions": regions,
            "notes": answer.notes,
            "dropped": answer.dropped.invalid(),
        }),
    })
}

/// Up to `max` lines of `lines` (numbered from `start`) that contain a query word, else the first
/// non-blank one.
fn best_lines(lines: &[String], start: u32, words: &[String], max: usize) -> Vec<(u32, String)> {
    let mut picked: Vec<(u32, String)> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| {
            let lower = line.to_lowercase();
            words.iter().any(|w| lower.contains(w.as_str()))
        })
        .take(max)
        .map(|(i, line)| (start + i as u32, line.clone()))
        .collect();
    if picked.is_empty()
        && let Some((i, line)) = lines.iter().enumerate().find(|(_, l)| !l.trim().is_empty())
    {
        picked.push((start + i as u32, line.clone()));
    }
    picked
}

/// Lowercase words of a query worth highlighting (identifier parts of 3+ characters).
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

pub fn search(ctx: &Ctx<'_>, args: SearchToolArgs) -> Result<Answer, ToolError> {
    let tool = "search";
    let query = required_text(tool, "query", &args.query)?;
    let limit = limit(tool, args.limit, 10, MAX_LIMIT)?;
    let under = match args.under.as_deref() {
        None => None,
        Some(dir) => Some(relative_path(ctx.index.root(), ctx.given_root, dir)?)
            .filter(|dir| !dir.is_empty()),
    };
    // The host's ranked code search (one best span per file, definitions first, tests and docs
    // demoted unless asked for); dense scores off, so an answer costs milliseconds.
    let result = ctx.backend.code_search(CodeSearchArgs {
        query: query.to_owned(),
        limit,
        under,
        dense: Some("off".into()),
        ..CodeSearchArgs::default()
    })?;
    let words = query_words(query);
    let mut text = String::new();
    let _ = writeln!(text, "{} hits for {query:?}", result.hits.len());
    let mut hits = Vec::new();
    for hit in &result.hits {
        let name = hit.name.as_deref().unwrap_or("");
        let kind = hit.kind.as_deref().unwrap_or("");
        let _ = writeln!(
            text,
            "{}:{}-{}  {kind} {name}  {:.2}",
            hit.path, hit.start, hit.end, hit.score
        );
        let lines = ctx
            .index
            .read_lines(&hit.path, hit.start, hit.end)
            .unwrap_or_default();
        let best = best_lines(&lines, hit.start, &words, 3);
        for (line, content) in &best {
            let _ = writeln!(text, "    {line}| {}", clip(content.trim_end()));
        }
        hits.push(json!({
            "path": hit.path,
            "start": hit.start,
            "end": hit.end,
            "kind": hit.kind,
            "name": hit.name,
            "score": hit.score,
            "lines": best.iter().map(|(n, l)| json!({"line": n, "text": l})).collect::<Vec<_>>(),
        }));
    }
    if result.hits.is_empty() {
        let _ = writeln!(text, "no hits: try other words, or `definition` for a name");
    }
    Ok(Answer {
        text,
        structured: json!({ "query": query, "hits": hits }),
    })
}

pub fn definition(ctx: &Ctx<'_>, args: DefinitionArgs) -> Result<Answer, ToolError> {
    let tool = "definition";
    let name = required_text(tool, "name", &args.name)?;
    let limit = limit(tool, args.limit, 20, MAX_LIMIT)?;
    let found = ctx.backend.definitions(DefinitionsArgs::new(name))?;
    let total = found.definitions.len();
    let mut text = String::new();
    let _ = writeln!(text, "{total} definitions of {name:?}");
    let mut definitions = Vec::new();
    for d in found.definitions.iter().take(limit) {
        let first = ctx
            .index
            .read_lines(&d.path, d.start, d.start)
            .ok()
            .and_then(|l| l.into_iter().next())
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "{}:{}-{}  {} {}\n    {}| {}",
            d.path,
            d.start,
            d.end,
            d.kind,
            d.qualified_name,
            d.start,
            clip(first.trim_end())
        );
        definitions.push(json!({
            "path": d.path,
            "start": d.start,
            "end": d.end,
            "kind": d.kind,
            "name": d.name,
            "qualified_name": d.qualified_name,
            "line": first,
        }));
    }
    if total > limit {
        let _ = writeln!(text, "… {} more (raise limit)", total - limit);
    }
    if total == 0 {
        let _ = writeln!(
            text,
            "no definition: check the spelling, or `search` for it (it may come from a dependency)"
        );
    }
    Ok(Answer {
        text,
        structured: json!({ "name": name, "total": total, "definitions": definitions }),
    })
}

pub fn references(ctx: &Ctx<'_>, args: ReferencesArgs) -> Result<Answer, ToolError> {
    let tool = "references";
    let symbol = required_text(tool, "symbol", &args.symbol)?;
    let limit = limit(tool, args.limit, 50, MAX_LIMIT)?;
    let path = args
        .path
        .as_deref()
        .map(|p| repo_path(ctx.index, ctx.given_root, p))
        .transpose()?;
    let mut targets = ctx
        .backend
        .definitions(DefinitionsArgs::new(symbol))?
        .definitions;
    if let Some(path) = &path {
        targets.retain(|d| &d.path == path);
    }
    if targets.is_empty() {
        return Err(ToolError::bad(
            tool,
            match &path {
                Some(path) => format!("no definition of `{symbol}` in `{path}`"),
                None => format!("no definition of `{symbol}`; see `definition`"),
            },
        ));
    }
    const MAX_TARGETS: usize = 10;
    if targets.len() > MAX_TARGETS {
        let files: std::collections::BTreeSet<&str> =
            targets.iter().map(|d| d.path.as_str()).collect();
        return Err(ToolError::bad(
            tool,
            format!(
                "`{symbol}` has {} definitions in {} files; give `path` (one of {}) or a qualified name",
                targets.len(),
                files.len(),
                files.into_iter().take(8).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let bare = symbol
        .rsplit(['.', ':', '#', '\\'])
        .next()
        .unwrap_or(symbol)
        .to_owned();
    let mut text = String::new();
    let mut found = Vec::new();
    for target in &targets {
        let mut asked = NeighboursArgs::new(NodeRef::definition(
            target.path.clone(),
            target.qualified_name.clone(),
        ));
        asked.edge_kinds = vec!["references".into()];
        asked.direction = Direction::In;
        let neighbours = ctx.backend.graph_neighbours(asked)?;
        for n in neighbours.neighbours {
            // The exact lines: uses of the bare name inside the using node.
            let lines: Vec<u32> = ctx
                .index
                .analysis(&n.node.path)
                .map(|a| {
                    let mut lines: Vec<u32> = a
                        .references
                        .iter()
                        .filter(|r| {
                            r.name == bare && r.line >= n.node.start && r.line <= n.node.end
                        })
                        .map(|r| r.line)
                        .collect();
                    lines.dedup();
                    lines
                })
                .unwrap_or_default();
            found.push((target, n.node, lines));
        }
    }
    let total = found.len();
    let _ = writeln!(
        text,
        "{total} uses of {}",
        targets
            .iter()
            .map(|t| format!("{} ({}:{})", t.qualified_name, t.path, t.start))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut entries = Vec::new();
    for (target, node, lines) in found.iter().take(limit) {
        let what = node.name.as_deref().unwrap_or("(module level)");
        let _ = writeln!(
            text,
            "{}:{}-{}  in {} {what}",
            node.path, node.start, node.end, node.kind
        );
        let mut shown = Vec::new();
        for &line in lines.iter().take(5) {
            let content = ctx
                .index
                .read_lines(&node.path, line, line)
                .ok()
                .and_then(|l| l.into_iter().next())
                .unwrap_or_default();
            let _ = writeln!(text, "    {line}| {}", clip(content.trim()));
            shown.push(json!({"line": line, "text": content}));
        }
        entries.push(json!({
            "target": target.qualified_name,
            "path": node.path,
            "start": node.start,
            "end": node.end,
            "kind": node.kind,
            "name": node.name,
            "lines": shown,
        }));
    }
    if total > limit {
        let _ = writeln!(text, "… {} more (raise limit)", total - limit);
    }
    if total == 0 {
        let _ = writeln!(
            text,
            "no uses found in the code graph (dynamic uses are not resolved: try `search`)"
        );
    }
    Ok(Answer {
        text,
        structured: json!({ "symbol": symbol, "total": total, "references": entries }),
    })
}

pub fn neighbours(ctx: &Ctx<'_>, args: NeighboursToolArgs) -> Result<Answer, ToolError> {
    let tool = "neighbours";
    let path = repo_path(ctx.index, ctx.given_root, &args.path)?;
    let limit = limit(tool, args.limit, 50, MAX_LIMIT)?;
    let symbol = args
        .symbol
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let node = match symbol {
        Some(symbol) => NodeRef::definition(path.clone(), symbol),
        None => NodeRef::file(path.clone()),
    };
    let mut asked = NeighboursArgs::new(node);
    asked.direction = Direction::Both;
    let result = ctx.backend.graph_neighbours(asked)?;
    // Grouped by relation, in a fixed order; a file's own definitions are not neighbours.
    let relation = |edge: &str, direction: Direction| -> Option<&'static str> {
        Some(match (edge, direction) {
            ("imports", Direction::Out) => "imports",
            ("imports", Direction::In) => "imported by",
            ("tests", Direction::Out) => "tests",
            ("tests", Direction::In) => "tested by",
            ("references", Direction::Out) => "uses",
            ("references", Direction::In) => "used by",
            ("contains", Direction::In) => "defined in",
            _ => return None,
        })
    };
    let order = [
        "defined in",
        "imports",
        "imported by",
        "tests",
        "tested by",
        "uses",
        "used by",
    ];
    let mut groups: BTreeMap<usize, Vec<&swex_plugin::types::GraphNode>> = BTreeMap::new();
    for n in &result.neighbours {
        if let Some(name) = relation(&n.edge, n.direction) {
            let rank = order.iter().position(|o| *o == name).unwrap_or(order.len());
            let group = groups.entry(rank).or_default();
            if !group.contains(&&n.node) {
                group.push(&n.node);
            }
        }
    }
    let total: usize = groups.values().map(Vec::len).sum();
    let mut text = String::new();
    let subject = match symbol {
        Some(s) => format!("{s} in {path}"),
        None => path.clone(),
    };
    let _ = writeln!(text, "{total} neighbours of {subject}");
    let mut shown = 0usize;
    let mut structured = serde_json::Map::new();
    for (rank, nodes) in &groups {
        let name = order[*rank];
        let _ = writeln!(text, "{name}:");
        let mut entries = Vec::new();
        for node in nodes {
            if shown >= limit {
                break;
            }
            shown += 1;
            let label = node.name.as_deref().unwrap_or("");
            let _ = writeln!(
                text,
                "  {}:{}-{}  {} {label}",
                node.path, node.start, node.end, node.kind
            );
            entries.push(json!(node));
        }
        structured.insert(name.replace(' ', "_"), Value::Array(entries));
    }
    if total > shown {
        let _ = writeln!(text, "… {} more (raise limit)", total - shown);
    }
    Ok(Answer {
        text,
        structured: json!({ "subject": subject, "total": total, "neighbours": structured }),
    })
}

pub fn read(ctx: &Ctx<'_>, args: ReadArgs) -> Result<Answer, ToolError> {
    let tool = "read";
    let path = repo_path(ctx.index, ctx.given_root, &args.path)?;
    let total = ctx.index.file(&path).map_or(0, |f| f.line_count);
    let start = args.start.unwrap_or(1);
    if start == 0 {
        return Err(ToolError::bad(
            tool,
            "start is 1-based: use 1 for the first line",
        ));
    }
    let end = args.end.unwrap_or(u32::MAX);
    if end < start {
        return Err(ToolError::bad(
            tool,
            format!("end {end} is before start {start}"),
        ));
    }
    if start > total.max(1) {
        return Err(ToolError::bad(
            tool,
            format!("start {start} is past the end of {path} ({total} lines)"),
        ));
    }
    let end = end.min(total).min(start.saturating_add(MAX_READ_LINES - 1));
    let result = ctx
        .backend
        .read_lines(ReadLinesArgs::new(path.clone()).lines(start, i64::from(end)))?;
    let mut text = String::new();
    let _ = writeln!(text, "{path}:{start}-{end} of {total} lines");
    numbered(&mut text, result.start, &result.lines);
    if end < total {
        let _ = writeln!(text, "… lines {}-{total} not shown", end + 1);
    }
    Ok(Answer {
        text,
        structured: json!({
            "path": path,
            "start": start,
            "end": end,
            "total_lines": total,
            "lines": result.lines,
        }),
    })
}

/// What every answer also says about the index it came from.
#[derive(Serialize)]
pub struct IndexNote<'a> {
    pub repo: String,
    pub files: usize,
    pub freshness: &'a crate::repos::Freshness,
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_engine::index::{Engine, EngineConfig};

    #[test]
    fn path_arguments() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("app")).unwrap();
        std::fs::write(repo.path().join("app/models.py"), "x = 1\n").unwrap();
        let engine = Engine::new(EngineConfig {
            cache_dir: cache.path().to_path_buf(),
            ..EngineConfig::default()
        });
        let index = engine.open(repo.path()).unwrap();
        let root = index.root().display().to_string();
        let check = |given: &str, expected: Result<&str, &str>| {
            let got = repo_path(&index, repo.path(), given).map_err(|e| match e {
                ToolError::OutsideRepository { .. } => "outside",
                ToolError::NoSuchFile { .. } => "no such file",
                ToolError::BadArguments { .. } => "bad",
                _ => "other",
            });
            assert_eq!(got.as_deref().map_err(|e| *e), expected, "{given:?}");
        };
        check("app/models.py", Ok("app/models.py"));
        check("./app/models.py", Ok("app/models.py"));
        check("app//models.py", Ok("app/models.py"));
        check("app\\models.py", Ok("app/models.py"));
        check(" app/models.py ", Ok("app/models.py"));
        check(&format!("{root}/app/models.py"), Ok("app/models.py"));
        check(
            &format!("{}/app/models.py", repo.path().display()),
            Ok("app/models.py"),
        );
        check("../app/models.py", Err("outside"));
        check("app/../../x", Err("outside"));
        check("/etc/passwd", Err("outside"));
        check(&format!("{root}/../x"), Err("outside"));
        check("", Err("bad"));
        check(".", Err("bad"));
        check("app/missing.py", Err("no such file"));
        check("app", Err("no such file"));
    }

    #[test]
    fn the_docs_list_every_tool_in_order() {
        let docs = include_str!("../../docs/mcp.md");
        let section = &docs[docs.find("## Tools").unwrap()..];
        let documented: Vec<&str> = section
            .lines()
            .take_while(|l| !l.starts_with("## ") || l.starts_with("## Tools"))
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        let declared: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(
            documented, declared,
            "docs/mcp.md's tool table and TOOLS disagree"
        );
    }

    #[test]
    fn argument_errors_name_the_field() {
        let check = |arguments: Value, expected: &str| {
            let map = arguments.as_object().cloned();
            let err = parse_args::<SearchToolArgs>("search", map).unwrap_err();
            assert!(
                err.to_string().contains(expected),
                "{err} lacks {expected:?}"
            );
        };
        check(json!({}), "missing field `query`");
        check(json!({"query": 5}), "query: invalid type");
        check(json!({"query": "x", "limit": -1}), "limit");
        check(json!({"query": "x", "limt": 2}), "unknown field `limt`");
    }
}
