//! What an issue text names: traceback frames, file paths and code identifiers. Pure text work;
//! it knows nothing of the snapshot (the explorer resolves the names through the services).

use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A frame of a traceback or stack trace: the file as written, the line, the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub line: u32,
    pub function: Option<String>,
}

/// The names an issue mentions, each kind in order of first mention.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueNames {
    pub frames: Vec<Frame>,
    /// File paths (`django/db/models/query.py`, `query.py`), without traceback frames' paths.
    pub paths: Vec<String>,
    /// Code-like identifiers and dotted names, most mentioned first (ties: first mention).
    pub identifiers: Vec<String>,
}

static PYTHON_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][\w.<>]*))?"#).expect("regex")
});
/// `at f (x.js:12:3)`, `at a.b.C.m(C.java:42)`, `src/x.rs:12:5`, `/p/x.go:12`.
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:at ([\w$.<>]+) ?\()?([\w./\\-]*\w\.[A-Za-z]{1,5}):(\d+)").expect("regex")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s`'(\[<])((?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|cfg|toml|ini|txt|rst|md|json|ya?ml|html|css))\b")
        .expect("regex")
});
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*").expect("regex")
});

/// Words that look like code but name nothing of a repository.
const COMMON: &[&str] = &[
    "self",
    "cls",
    "None",
    "True",
    "False",
    "print",
    "len",
    "str",
    "int",
    "float",
    "dict",
    "list",
    "tuple",
    "set",
    "type",
    "object",
    "super",
    "isinstance",
    "range",
    "return",
    "import",
    "from",
    "def",
    "class",
    "lambda",
    "yield",
    "raise",
    "except",
    "Exception",
    "ValueError",
    "TypeError",
    "KeyError",
    "AttributeError",
    "IndexError",
    "RuntimeError",
    "assert",
    "args",
    "kwargs",
    "this",
    "null",
    "undefined",
    "function",
    "var",
    "let",
    "const",
    "new",
    "e.g",
    "i.e",
    "etc",
    "Traceback",
    "File",
    "line",
    "Error",
    "http",
    "https",
    "www",
    "com",
    "github",
];

/// Whether a token is code-like rather than prose: `snake_case`, `CamelCase`, `mixedCase`,
/// dotted or `::` paths, `__dunder__`.
fn is_code_like(token: &str) -> bool {
    if token.len() < 3 || COMMON.contains(&token) {
        return false;
    }
    if token.contains('.') || token.contains("::") {
        return token.split(['.', ':']).filter(|p| !p.is_empty()).all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        });
    }
    let has_lower = token.chars().any(|c| c.is_lowercase());
    let inner_upper = token.chars().skip(1).any(|c| c.is_uppercase());
    token.contains('_') && token.chars().any(char::is_alphanumeric) || has_lower && inner_upper
}

/// `query.py`, `models.Model.rst`: a file name, not a dotted code name.
fn looks_like_file_name(token: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "py", "pyi", "js", "jsx", "mjs", "ts", "tsx", "go", "rs", "java", "kt", "c", "h", "cc",
        "cpp", "hpp", "rb", "php", "cfg", "toml", "ini", "txt", "rst", "md", "json", "yml", "yaml",
        "html", "css", "so", "exe",
    ];
    token
        .rsplit_once('.')
        .is_some_and(|(_, extension)| EXTENSIONS.contains(&extension))
}

/// Reads the names out of an issue.
pub fn parse(issue: &str) -> IssueNames {
    let mut names = IssueNames::default();
    for captures in PYTHON_FRAME.captures_iter(issue) {
        names.frames.push(Frame {
            path: captures[1].to_owned(),
            line: captures[2].parse().unwrap_or(0),
            function: captures
                .get(3)
                .map(|m| m.as_str().to_owned())
                .filter(|f| !f.starts_with('<')),
        });
    }
    for captures in LOCATION.captures_iter(issue) {
        let path = captures[2].to_owned();
        if names.frames.iter().any(|f| f.path == path) {
            continue;
        }
        let function = captures
            .get(1)
            .map(|m| m.as_str().rsplit('.').next().unwrap_or("").to_owned())
            .filter(|f| !f.is_empty() && !f.starts_with('<'));
        names.frames.push(Frame {
            path,
            line: captures[3].parse().unwrap_or(0),
            function,
        });
    }
    for captures in PATH.captures_iter(issue) {
        let path = captures[1].trim_start_matches("./").to_owned();
        let in_frame = names.frames.iter().any(|f| f.path.ends_with(&path));
        if !in_frame && !names.paths.contains(&path) {
            names.paths.push(path);
        }
    }
    // Count mentions; backticked spans count double (the author marked them as code).
    let mut counts: HashMap<String, (u32, usize)> = HashMap::new();
    let mut note = |token: &str, weight: u32, position: usize| {
        let token = token.trim_matches(|c: char| c == '.' || c == ':');
        if !is_code_like(token) || looks_like_file_name(token) {
            return;
        }
        let entry = counts.entry(token.to_owned()).or_insert((0, position));
        entry.0 += weight;
    };
    for found in IDENTIFIER.find_iter(issue) {
        let backticked = issue[..found.start()].ends_with('`');
        note(
            found.as_str(),
            if backticked { 2 } else { 1 },
            found.start(),
        );
    }
    let mut identifiers: Vec<(String, (u32, usize))> = counts.into_iter().collect();
    identifiers.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    names.identifiers = identifiers.into_iter().map(|(name, _)| name).collect();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_frames_paths_and_identifiers() {
        let issue = "QuerySet.bulk_create() crashes with `batch_size` on SQLite.\n\
            See django/db/models/sql/compiler.py, and query.py (in the trace).\n\
            Traceback (most recent call last):\n  \
            File \"/usr/lib/python3/site-packages/django/db/models/query.py\", line 474, in bulk_create\n    \
            objs = list(objs)\n  \
            File \"<stdin>\", line 1, in <module>\n\
            Also at render (src/view.js:12:3). The bulk_create call uses batch_size.";
        let names = parse(issue);
        let frames: Vec<(&str, u32, Option<&str>)> = names
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.function.as_deref()))
            .collect();
        assert_eq!(
            frames,
            [
                (
                    "/usr/lib/python3/site-packages/django/db/models/query.py",
                    474,
                    Some("bulk_create")
                ),
                ("<stdin>", 1, None),
                ("src/view.js", 12, Some("render")),
            ]
        );
        // `query.py` is a frame's file already.
        assert_eq!(names.paths, ["django/db/models/sql/compiler.py"]);
        // `batch_size`: backticked (2) + once more; `bulk_create` three times.
        assert_eq!(
            &names.identifiers[..3],
            ["batch_size", "bulk_create", "QuerySet.bulk_create"]
        );
        assert!(
            !names
                .identifiers
                .iter()
                .any(|i| i == "Traceback" || i == "list")
        );
    }

    #[test]
    fn code_like_tokens() {
        for (token, expected) in [
            ("bulk_create", true),
            ("QuerySet", true),
            ("getUserName", true),
            ("models.Model", true),
            ("std::vec::Vec", true),
            ("__init__", true),
            ("query", false),
            ("Query", false),
            ("ab", false),
            ("self", false),
            ("version.1", false),
        ] {
            assert_eq!(is_code_like(token), expected, "{token}");
        }
    }
}
