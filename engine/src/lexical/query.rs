//! The issue query builder: turns free issue text into structured clues and weighted terms.
//!
//! [`build_issue_query`] extracts, in order of first appearance:
//! - **traceback frames** ([`Frame`]): Python `File "x.py", line N, in f`; JavaScript
//!   `at f (x.js:12:3)`; Rust `panicked at src/x.rs:12:5` and backtrace `at src/x.rs:12:5` lines;
//!   Java `at a.b.C.m(C.java:42)`; Go `/path/x.go:12 +0x1d` with the function from the line above;
//!   and generic compiler/pytest locations `path.ext:12[:5]`. Explorers can use them directly
//!   (path hint, line, function);
//! - **file paths** (`foo/bar.py`, `bar.py`, `django/contrib/admin`), also as normalised hints
//!   ([`normalize_path_hint`]: `site-packages/` prefixes and leading `/`, `./` removed);
//! - **identifiers** that look like code: `CamelCase`, `snake_case`, `dotted.names`,
//!   `module::paths`, `calls(`;
//! - **code spans**: Markdown backtick spans and fenced blocks, reST ``literals``;
//! - **weighted terms** for lexical search: every word that is not a stop word, with prose words
//!   down-weighted relative to code-like tokens, and repeated terms up-weighted (logarithmically).
//!
//! The builder knows nothing about any index: terms are plain text which the lexical index
//! analyses with its own analyzer ([`crate::lexical::tokenizer`]).

use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Which traceback syntax a frame was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameStyle {
    Python,
    JavaScript,
    Rust,
    Java,
    Go,
    /// A bare `path.ext:line[:column]` location (compiler errors, pytest summaries).
    Location,
}

/// One stack frame or source location named by the issue.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Frame {
    pub style: FrameStyle,
    /// The path as written (absolute or relative; Java frames give `package/dirs/File.java`).
    pub path: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// The function, cleaned of decorations (`C.m` for Java, `T.Foo` for Go methods), when known.
    pub function: Option<String>,
}

/// A search term with its weight (1.0 for an ordinary code-like term).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WeightedTerm {
    pub text: String,
    pub weight: f32,
}

/// Everything the builder extracts from one issue text.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IssueQuery {
    pub frames: Vec<Frame>,
    /// Paths as written, de-duplicated.
    pub paths: Vec<String>,
    pub identifiers: Vec<String>,
    pub code_spans: Vec<String>,
    /// Sorted by weight, heaviest first; at most [`QueryOptions::max_terms`].
    pub terms: Vec<WeightedTerm>,
}

/// Weights of the term categories and the term cap.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueryOptions {
    pub prose_weight: f32,
    pub code_weight: f32,
    pub path_weight: f32,
    pub frame_weight: f32,
    pub max_terms: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            prose_weight: 0.3,
            code_weight: 1.0,
            path_weight: 1.5,
            frame_weight: 2.0,
            max_terms: 96,
        }
    }
}

/// [`build_issue_query_with`] with default options.
pub fn build_issue_query(text: &str) -> IssueQuery {
    build_issue_query_with(text, &QueryOptions::default())
}

/// File extensions that make a dotted word a file path.
const PATH_EXTENSIONS: &[&str] = &[
    "py", "pyi", "pyx", "pxd", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs",
    "java", "kt", "kts", "scala", "groovy", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "rb",
    "php", "cs", "swift", "m", "mm", "sh", "bash", "zsh", "pl", "pm", "lua", "r", "jl", "ex",
    "exs", "erl", "hs", "ml", "md", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml", "json",
    "xml", "html", "htm", "css", "scss", "less", "sql", "proto", "gradle", "lock", "mk", "cmake",
    "tpl", "j2", "jinja", "jinja2", "po", "pot", "vue", "svelte", "dart", "tf", "gemspec", "rake",
    "ipynb", "csv", "tsv", "conf",
];

fn has_path_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !stem.ends_with('/')
            && PATH_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// English stop words and words too common in issue prose to discriminate.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "did", "do", "does", "doing", "don", "down", "during",
    "each", "else", "etc", "even", "ever", "every", "few", "for", "from", "further", "get", "gets",
    "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "like", "ll",
    "may", "me", "might", "more", "most", "much", "must", "my", "need", "needs", "no", "nor",
    "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "ours", "out",
    "over", "own", "per", "please", "quite", "rather", "re", "really", "same", "see", "seems",
    "she", "should", "since", "so", "some", "still", "such", "than", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "though", "through",
    "thus", "to", "too", "under", "until", "up", "upon", "us", "use", "used", "using", "ve",
    "very", "via", "was", "we", "well", "were", "what", "when", "where", "whether", "which",
    "while", "who", "whom", "why", "will", "with", "within", "without", "would", "yet", "you",
    "your", "yours", // Code words that match nearly every chunk of their language.
    "self", "def", "return", "import", "class", "none", "true", "false", "null", "nil", "var",
    "const", "function", "elif", "pass", "try", "except", "raise", "lambda",
    // Issue boilerplate.
    "thanks", "hi", "hello", "e.g", "i.e",
];

fn is_stop_word(word_lower: &str) -> bool {
    STOP_WORDS.contains(&word_lower)
}

static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<func>[^\s]+))?"#)
        .expect("valid regex")
});
static JAVA_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*at (?P<func>[\w$.<>/]+)\((?P<file>[\w$-]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)",
    )
    .expect("valid regex")
});
static AT_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    // `at f (path:L:C)`, `at path:L:C`; Rust backtraces use the second form too.
    Regex::new(r"(?m)^\s*at (?:(?P<func>[^\n(]+?) \()?(?P<path>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$")
        .expect("valid regex")
});
static RUST_PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"panicked at (?:'[^'\n]*', )?(?P<path>[^\s:]+\.rs):(?P<line>\d+):(?P<col>\d+)")
        .expect("valid regex")
});
static RUST_BACKTRACE_FUNC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\d+:\s+(?P<func>\S+)\s*$").expect("valid regex"));
static GO_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?P<path>[^\s:]+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")
        .expect("valid regex")
});
static GO_FUNC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<func>[\w./*()\[\]-]+)\(.*\)\s*$").expect("valid regex"));
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?P<path>(?:[A-Za-z]:)?[\w./\\-]*\w\.[A-Za-z0-9]+):(?P<line>\d+)(?::(?P<col>\d+))?",
    )
    .expect("valid regex")
});
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:https?|ftp|file)://[^\s)>\]]+").expect("valid regex"));
static FENCED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[^\n]*\n(.*?)```").expect("valid regex"));
static INLINE_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"``([^`\n]+)``|`([^`\n]+)`").expect("valid regex"));
static WORD: LazyLock<Regex> = LazyLock::new(|| {
    // Identifier-ish words with dotted / `::` / path parts; a trailing `(` marks a call.
    Regex::new(r"[A-Za-z_][\w$-]*(?:(?:\.|::|/)[A-Za-z_0-9][\w$-]*)*(?P<call>\()?")
        .expect("valid regex")
});

/// Builds the [`IssueQuery`] of an issue text.
pub fn build_issue_query_with(text: &str, options: &QueryOptions) -> IssueQuery {
    let mut query = IssueQuery {
        frames: extract_frames(text),
        ..IssueQuery::default()
    };
    let mut terms = TermCollector::default();

    // URLs: only a file path inside a source-browser link is worth keeping.
    let mut prose = URL
        .replace_all(text, |caps: &regex::Captures| {
            let url = &caps[0];
            match url_file_path(url) {
                Some(path) => format!(" {path} "),
                None => " ".to_string(),
            }
        })
        .into_owned();

    // Code spans: everything inside counts as code.
    let mut spans = Vec::new();
    for caps in FENCED.captures_iter(&prose) {
        spans.push(caps[1].trim().to_string());
    }
    let without_fences = FENCED.replace_all(&prose, " ").into_owned();
    for caps in INLINE_CODE.captures_iter(&without_fences) {
        let span = caps
            .get(1)
            .or_else(|| caps.get(2))
            .map(|m| m.as_str().trim());
        if let Some(span) = span.filter(|s| !s.is_empty()) {
            spans.push(span.to_string());
        }
    }
    prose = INLINE_CODE.replace_all(&without_fences, " ").into_owned();

    for frame in &query.frames {
        push_unique(&mut query.paths, frame.path.clone());
        terms.add_words(&path_stem(&frame.path), options.frame_weight);
        if let Some(function) = &frame.function {
            terms.add_identifier(function, options.frame_weight);
        }
    }
    for span in &spans {
        collect_words(span, true, options, &mut query, &mut terms);
    }
    collect_words(&prose, false, options, &mut query, &mut terms);
    query.code_spans = spans;
    query.terms = terms.finish(options.max_terms);
    query
}

/// Walks the words of `text`, classifying each as path, identifier or prose.
fn collect_words(
    text: &str,
    in_code: bool,
    options: &QueryOptions,
    query: &mut IssueQuery,
    terms: &mut TermCollector,
) {
    for caps in WORD.captures_iter(text) {
        let whole = caps.get(0).expect("group 0");
        let is_call = caps.name("call").is_some();
        let word = whole.as_str().trim_end_matches('(');
        let word = word.trim_end_matches(['.', '-', '/']);
        if word.is_empty() {
            continue;
        }
        // `response.json()` is a call, not a file.
        if !is_call && looks_like_path(word) {
            push_unique(&mut query.paths, word.to_string());
            terms.add_identifier(&normalize_path_hint(word), options.path_weight);
            continue;
        }
        // Slashes that are not a path ("and/or", "input/output") are just separators.
        for word in word.split('/').filter(|w| !w.is_empty()) {
            classify_word(word, in_code || is_call, options, query, terms);
        }
    }
}

fn classify_word(
    word: &str,
    in_code: bool,
    options: &QueryOptions,
    query: &mut IssueQuery,
    terms: &mut TermCollector,
) {
    let lower = word.to_lowercase();
    if is_stop_word(&lower) {
        return;
    }
    if is_code_like(word) || (in_code && word.chars().any(|c| c.is_alphabetic())) {
        if is_code_like(word) {
            push_unique(&mut query.identifiers, word.to_string());
        }
        terms.add_identifier(word, options.code_weight);
    } else if word.len() >= 3 && !word.chars().all(|c| c.is_ascii_digit()) {
        terms.add_words(word, options.prose_weight);
    }
}

/// True for words a person would not write in prose: `snake_case`, `camelCase`, `PascalCase`
/// with two humps, `dotted.names`, `a::b`, `CONST_NAME`.
pub fn is_code_like(word: &str) -> bool {
    if word.contains("::") {
        return true;
    }
    if word.contains('.') {
        // Dotted names need identifier parts of which at least one is longer than a letter
        // (`e.g`, `i.e` and version numbers are not code).
        let parts: Vec<&str> = word.split('.').collect();
        return parts.len() >= 2
            && parts.iter().all(|p| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            })
            && parts.iter().filter(|p| p.len() > 1).count() >= 2;
    }
    let core = word.trim_matches('_');
    if core.contains('_') && core.chars().any(|c| c.is_alphabetic()) {
        return true;
    }
    if word.starts_with("__") && word.ends_with("__") && word.len() > 4 {
        return true;
    }
    let chars: Vec<char> = word.chars().collect();
    // camelCase / PascalCase with an inner capital after a lower-case letter.
    let inner_hump = chars
        .windows(2)
        .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    if inner_hump {
        return true;
    }
    // Letters mixed with digits inside a word (`utf8`, `sha256`, `int64`).
    let has_digit = chars.iter().any(|c| c.is_ascii_digit());
    has_digit && chars.iter().filter(|c| c.is_alphabetic()).count() >= 2 && chars[0].is_alphabetic()
}

fn looks_like_path(word: &str) -> bool {
    if has_path_extension(word) {
        // `e.g.` style prose is excluded by requiring a real stem of two characters or a slash.
        let stem = word.rsplit_once('.').map(|(s, _)| s).unwrap_or(word);
        return stem.len() >= 2 || word.contains('/');
    }
    // Extension-less paths need two slashes between identifier segments (`django/contrib/admin`);
    // one slash is too often prose (`and/or`).
    word.matches('/').count() >= 2
        && word
            .split('/')
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)))
}

/// The file path inside a source-browser URL (`…/blob/<ref>/a/b.py#L10` gives `a/b.py`).
fn url_file_path(url: &str) -> Option<String> {
    let url = url.split(['#', '?']).next().unwrap_or(url);
    for marker in ["/blob/", "/tree/", "/src/", "/raw/"] {
        if let Some((_, rest)) = url.split_once(marker) {
            // Skip the ref (branch, tag or commit).
            let path = rest.split_once('/').map(|(_, p)| p)?;
            if has_path_extension(path) {
                return Some(path.to_string());
            }
        }
    }
    None
}

/// Normalises a path as written in an issue into a repository-relative hint: backslashes become
/// `/`; a `file://` scheme, drive letter, leading `/` and `./`, and everything up to the last
/// `site-packages/`, `dist-packages/` or `node_modules/` are removed.
pub fn normalize_path_hint(path: &str) -> String {
    let mut p = path.replace('\\', "/");
    for scheme in ["file://", "webpack:///", "webpack://"] {
        if let Some(rest) = p.strip_prefix(scheme) {
            p = rest.to_string();
        }
    }
    if p.len() >= 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic() {
        p = p[2..].to_string();
    }
    for marker in ["site-packages/", "dist-packages/", "node_modules/"] {
        if let Some(index) = p.rfind(marker) {
            p = p[index + marker.len()..].to_string();
        }
    }
    let mut p = p.as_str();
    loop {
        if let Some(rest) = p.strip_prefix("./") {
            p = rest;
        } else if let Some(rest) = p.strip_prefix('/') {
            p = rest;
        } else {
            break;
        }
    }
    p.to_string()
}

fn path_stem(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(stem, _)| stem)
        .unwrap_or(name)
        .to_string()
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn parse_u32(m: Option<regex::Match>) -> Option<u32> {
    m.and_then(|m| m.as_str().parse().ok())
}

/// All traceback frames and source locations of `text`, in text order, without duplicates (a
/// location already read as part of a richer frame is not reported again as a bare location).
pub fn extract_frames(text: &str) -> Vec<Frame> {
    let mut found: Vec<(usize, usize, Frame)> = Vec::new();
    let mut add = |start: usize, end: usize, frame: Frame| {
        if !found.iter().any(|(s, e, _)| start < *e && *s < end) {
            found.push((start, end, frame));
        }
    };
    for caps in PY_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let function = caps
            .name("func")
            .map(|f| f.as_str().to_string())
            .filter(|f| !f.starts_with('<'));
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Python,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: None,
                function,
            },
        );
    }
    for caps in JAVA_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let qualified = caps["func"]
            .rsplit('/')
            .next()
            .unwrap_or(&caps["func"])
            .to_string();
        // `a.b.C.m` (or `a.b.C$Inner.m`): the package is every segment before the class.
        let segments: Vec<&str> = qualified.split('.').collect();
        let file = &caps["file"];
        let (package, function) = if segments.len() >= 2 {
            let class = segments[segments.len() - 2].split('$').next().unwrap_or("");
            let method = segments[segments.len() - 1];
            (
                segments[..segments.len() - 2].join("/"),
                format!("{class}.{method}"),
            )
        } else {
            (String::new(), qualified.clone())
        };
        let path = if package.is_empty() {
            file.to_string()
        } else {
            format!("{package}/{file}")
        };
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Java,
                path,
                line: parse_u32(caps.name("line")),
                column: None,
                function: Some(function),
            },
        );
    }
    for caps in RUST_PANIC.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Rust,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function: None,
            },
        );
    }
    for caps in AT_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let path = caps["path"].to_string();
        let (style, function) = if path.ends_with(".rs") {
            // Rust backtraces put the function on the line above: `  12: crate::module::f`.
            let before = &text[..m.start()];
            let previous = before
                .trim_end_matches(['\n', '\r'])
                .rsplit('\n')
                .next()
                .unwrap_or("");
            let function = RUST_BACKTRACE_FUNC
                .captures(previous)
                .map(|c| c["func"].trim_end_matches("::{{closure}}").to_string());
            (FrameStyle::Rust, function)
        } else {
            let function = caps.name("func").map(|f| clean_js_function(f.as_str()));
            (FrameStyle::JavaScript, function.filter(|f| !f.is_empty()))
        };
        add(
            m.start(),
            m.end(),
            Frame {
                style,
                path,
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function,
            },
        );
    }
    for caps in GO_LOCATION.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let before = &text[..m.start()];
        let previous = before
            .trim_end_matches(['\n', '\r'])
            .rsplit('\n')
            .next()
            .unwrap_or("");
        let function = GO_FUNC
            .captures(previous.trim())
            .map(|c| clean_go_function(&c["func"]));
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Go,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: None,
                function,
            },
        );
    }
    for caps in LOCATION.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let path = &caps["path"];
        if !has_path_extension(path) || path.contains("://") {
            continue;
        }
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Location,
                path: path.to_string(),
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function: None,
            },
        );
    }
    found.sort_by_key(|(start, _, _)| *start);
    found.into_iter().map(|(_, _, frame)| frame).collect()
}

fn clean_js_function(raw: &str) -> String {
    let mut f = raw.trim();
    for prefix in ["async ", "new "] {
        if let Some(rest) = f.strip_prefix(prefix) {
            f = rest;
        }
    }
    // `Object.<anonymous>` and `[as alias]` decorations say nothing about the definition.
    let f = f.split(" [as ").next().unwrap_or(f);
    let f = f.trim_end_matches(".<anonymous>");
    if f == "<anonymous>" || f == "Object" {
        return String::new();
    }
    f.strip_prefix("Object.").unwrap_or(f).to_string()
}

/// `main.(*Server).Serve` gives `Server.Serve`; `net/http.HandlerFunc.ServeHTTP` gives
/// `HandlerFunc.ServeHTTP`; `main.main` gives `main`.
fn clean_go_function(raw: &str) -> String {
    let last_path_segment = raw.rsplit('/').next().unwrap_or(raw);
    // Drop the package name.
    let without_package = last_path_segment
        .split_once('.')
        .map(|(_, rest)| rest)
        .unwrap_or(last_path_segment);
    without_package.replace("(*", "").replace(['(', ')'], "")
}

/// Accumulates weighted terms keyed by lower-cased text: the weight of a term is the largest
/// category weight it was seen with, times `1 + ln(occurrences)` (capped at 3×).
#[derive(Default)]
struct TermCollector {
    terms: HashMap<String, (usize, String, f32, u32)>,
    next_order: usize,
}

impl TermCollector {
    fn add_identifier(&mut self, text: &str, weight: f32) {
        let text = text.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if text.is_empty() {
            return;
        }
        self.add(text, weight);
    }

    /// Adds each plain word of `text` (used for prose and file stems).
    fn add_words(&mut self, text: &str, weight: f32) {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            let lower = word.to_lowercase();
            if word.len() >= 2 && !is_stop_word(&lower) {
                self.add(word, weight);
            }
        }
    }

    fn add(&mut self, text: &str, weight: f32) {
        let key = text.to_lowercase();
        let order = self.next_order;
        let entry = self
            .terms
            .entry(key)
            .or_insert_with(|| (order, text.to_string(), weight, 0));
        if entry.3 == 0 {
            self.next_order += 1;
        }
        entry.2 = entry.2.max(weight);
        entry.3 += 1;
    }

    fn finish(self, max_terms: usize) -> Vec<WeightedTerm> {
        let mut terms: Vec<(usize, WeightedTerm)> = self
            .terms
            .into_values()
            .map(|(order, text, weight, count)| {
                let factor = (1.0 + (count as f32).ln()).min(3.0);
                (
                    order,
                    WeightedTerm {
                        text,
                        weight: weight * factor,
                    },
                )
            })
            .collect();
        terms.sort_by(|a, b| b.1.weight.total_cmp(&a.1.weight).then(a.0.cmp(&b.0)));
        terms.truncate(max_terms);
        terms.into_iter().map(|(_, term)| term).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(
        style: FrameStyle,
        path: &str,
        line: Option<u32>,
        column: Option<u32>,
        function: Option<&str>,
    ) -> Frame {
        Frame {
            style,
            path: path.to_string(),
            line,
            column,
            function: function.map(str::to_string),
        }
    }

    fn check_frames(text: &str, expected: &[Frame]) {
        assert_eq!(extract_frames(text), expected, "frames of:\n{text}");
    }

    #[test]
    fn python_traceback() {
        check_frames(
            r#"Traceback (most recent call last):
  File "/usr/lib/python3.8/site-packages/django/db/models/query.py", line 1320, in _fetch_all
    self._result_cache = list(self._iterable_class(self))
  File "manage.py", line 22, in <module>
    main()
ValueError: boom"#,
            &[
                frame(
                    FrameStyle::Python,
                    "/usr/lib/python3.8/site-packages/django/db/models/query.py",
                    Some(1320),
                    None,
                    Some("_fetch_all"),
                ),
                frame(FrameStyle::Python, "manage.py", Some(22), None, None),
            ],
        );
    }

    #[test]
    fn javascript_stack() {
        check_frames(
            "TypeError: x is undefined\n    at parseConfig (src/config.js:12:3)\n    at Object.<anonymous> (/app/index.js:5:10)\n    at async Server.start (lib/server.ts:40:7)\n    at lib/util.js:1:2\n",
            &[
                frame(
                    FrameStyle::JavaScript,
                    "src/config.js",
                    Some(12),
                    Some(3),
                    Some("parseConfig"),
                ),
                frame(
                    FrameStyle::JavaScript,
                    "/app/index.js",
                    Some(5),
                    Some(10),
                    None,
                ),
                frame(
                    FrameStyle::JavaScript,
                    "lib/server.ts",
                    Some(40),
                    Some(7),
                    Some("Server.start"),
                ),
                frame(
                    FrameStyle::JavaScript,
                    "lib/util.js",
                    Some(1),
                    Some(2),
                    None,
                ),
            ],
        );
    }

    #[test]
    fn rust_panic_and_backtrace() {
        check_frames(
            "thread 'main' panicked at src/parser.rs:12:5:\nindex out of bounds\nstack backtrace:\n   3: mycrate::parser::parse\n             at ./src/parser.rs:12:5\n",
            &[
                frame(FrameStyle::Rust, "src/parser.rs", Some(12), Some(5), None),
                frame(
                    FrameStyle::Rust,
                    "./src/parser.rs",
                    Some(12),
                    Some(5),
                    Some("mycrate::parser::parse"),
                ),
            ],
        );
        check_frames(
            "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:4:37",
            &[frame(
                FrameStyle::Rust,
                "src/main.rs",
                Some(4),
                Some(37),
                None,
            )],
        );
    }

    #[test]
    fn java_stack() {
        check_frames(
            "java.lang.NullPointerException\n\tat com.example.app.Service.handle(Service.java:42)\n\tat com.example.app.Main$Inner.run(Main.java:7)\n\tat java.base/java.lang.Thread.run(Thread.java:829)\n",
            &[
                frame(
                    FrameStyle::Java,
                    "com/example/app/Service.java",
                    Some(42),
                    None,
                    Some("Service.handle"),
                ),
                frame(
                    FrameStyle::Java,
                    "com/example/app/Main.java",
                    Some(7),
                    None,
                    Some("Main.run"),
                ),
                frame(
                    FrameStyle::Java,
                    "java/lang/Thread.java",
                    Some(829),
                    None,
                    Some("Thread.run"),
                ),
            ],
        );
    }

    #[test]
    fn go_panic() {
        check_frames(
            "panic: runtime error\n\ngoroutine 1 [running]:\nmain.(*Server).Serve(0xc000010000)\n\t/home/u/app/server.go:27 +0x1d\nmain.main()\n\t/home/u/app/main.go:9 +0x25\n",
            &[
                frame(
                    FrameStyle::Go,
                    "/home/u/app/server.go",
                    Some(27),
                    None,
                    Some("Server.Serve"),
                ),
                frame(
                    FrameStyle::Go,
                    "/home/u/app/main.go",
                    Some(9),
                    None,
                    Some("main"),
                ),
            ],
        );
    }

    #[test]
    fn bare_locations() {
        check_frames(
            "tests/test_views.py:42: AssertionError\nsrc/lib.c:10:3: error: expected ';'\nversion 3.2:1 is fine",
            &[
                frame(
                    FrameStyle::Location,
                    "tests/test_views.py",
                    Some(42),
                    None,
                    None,
                ),
                frame(FrameStyle::Location, "src/lib.c", Some(10), Some(3), None),
            ],
        );
    }

    #[test]
    fn path_hints() {
        for (input, expected) in [
            (
                "/usr/lib/python3/site-packages/django/db/models/query.py",
                "django/db/models/query.py",
            ),
            ("./src/x.rs", "src/x.rs"),
            ("C:\\proj\\src\\a.py", "proj/src/a.py"),
            ("file:///app/index.js", "app/index.js"),
            ("lib/a.js", "lib/a.js"),
        ] {
            assert_eq!(normalize_path_hint(input), expected, "{input}");
        }
    }

    fn term_texts(query: &IssueQuery) -> Vec<&str> {
        query.terms.iter().map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn identifiers_paths_and_spans() {
        let query = build_issue_query(
            "When calling `QuerySet.bulk_create()` on a model, django/db/models/query.py fails. \
             The get_or_create method and myVar are fine, also see models.py and \
             https://github.com/django/django/blob/main/django/db/utils.py#L10. \
             Use crate::io::Read too, e.g. this.",
        );
        assert_eq!(query.code_spans, vec!["QuerySet.bulk_create()"]);
        assert_eq!(
            query.paths,
            vec![
                "django/db/models/query.py",
                "models.py",
                "django/db/utils.py"
            ]
        );
        assert_eq!(
            query.identifiers,
            vec![
                "QuerySet.bulk_create",
                "get_or_create",
                "myVar",
                "crate::io::Read"
            ]
        );
        let texts = term_texts(&query);
        // Code-like terms outweigh prose; stop words are gone.
        let weight = |t: &str| query.terms.iter().find(|x| x.text == t).map(|x| x.weight);
        assert!(weight("get_or_create").unwrap() > weight("calling").unwrap());
        assert!(
            !texts
                .iter()
                .any(|t| t.eq_ignore_ascii_case("the") || *t == "e.g")
        );
        assert!(weight("django/db/models/query.py").unwrap() >= 1.5);
    }

    #[test]
    fn repeated_terms_weigh_more() {
        let query = build_issue_query("migration migration migration squash");
        let w = |t: &str| query.terms.iter().find(|x| x.text == t).unwrap().weight;
        assert!(w("migration") > w("squash"));
        assert!(w("migration") <= 3.0 * QueryOptions::default().prose_weight);
    }

    #[test]
    fn frames_feed_terms() {
        let query = build_issue_query(
            "Traceback:\n  File \"/x/site-packages/django/forms/formsets.py\", line 5, in full_clean\n",
        );
        assert_eq!(query.frames.len(), 1);
        // The frame's file stem and function lead the terms.
        let mut top: Vec<&str> = term_texts(&query)[0..2].to_vec();
        top.sort();
        assert_eq!(top, ["formsets", "full_clean"]);
        // The traceback path enters as a repository-relative hint, not with its prefix.
        assert!(term_texts(&query).contains(&"django/forms/formsets.py"));
    }

    #[test]
    fn code_like_words() {
        for (word, expected) in [
            ("snake_case", true),
            ("camelCase", true),
            ("QuerySet", true),
            ("Django", false),
            ("models.Model", true),
            ("e.g", false),
            ("a::b", true),
            ("__init__", true),
            ("utf8", true),
            ("hello", false),
            ("HTTP", false),
            ("MAX_SIZE", true),
        ] {
            assert_eq!(is_code_like(word), expected, "{word}");
        }
    }
}
