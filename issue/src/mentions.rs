//! The `graph` explorer's reading of an issue: traceback frames, file paths and code
//! identifiers, the names it seeds its PageRank with. Pure text work; it knows nothing of the
//! snapshot (the explorer resolves the names through the services).
//!
//! Frames come from [`crate::frames`], reordered as the explorer weighs them (Python frames
//! first, later frames nearer the error). Paths and identifiers keep this reading's own rules —
//! a path needs a word boundary before it and one of fewer extensions; identifiers are ASCII,
//! ordered by mention count, backticked mentions counting double — because the parser's
//! ([`crate::parse()`]) name 22 of the 66 dev issues' paths differently and would move the
//! explorer's answers.

use crate::clues::{Frame, FrameStyle};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// The names an issue mentions, each kind in order of first mention.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueNames {
    /// Traceback frames, Python's first; other styles' functions by their last name only.
    pub frames: Vec<Frame>,
    /// File paths (`django/db/models/query.py`, `query.py`), without traceback frames' paths.
    pub paths: Vec<String>,
    /// Code-like identifiers and dotted names, most mentioned first (ties: first mention).
    pub identifiers: Vec<String>,
}

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
    let frames = crate::frames::extract_frames(issue);
    let (python, others): (Vec<_>, Vec<_>) = frames
        .into_iter()
        .partition(|f| f.style == FrameStyle::Python);
    names.frames = python;
    let mut frame_paths: HashSet<String> = names.frames.iter().map(|f| f.path.clone()).collect();
    for mut frame in others {
        if !frame_paths.insert(frame.path.clone()) {
            continue;
        }
        // The method name alone: definitions are looked up by their last name.
        frame.function = frame
            .function
            .as_deref()
            .map(|f| f.rsplit(['.', ':']).next().unwrap_or("").to_owned())
            .filter(|f| !f.is_empty());
        names.frames.push(frame);
    }
    let frame_suffixes = Suffixes::new(names.frames.iter().map(|f| f.path.as_str()));
    let mut seen_paths = HashSet::new();
    for captures in PATH.captures_iter(issue) {
        let path = captures[1].trim_start_matches("./").to_owned();
        if !frame_suffixes.is_suffix_of_any(&path) && seen_paths.insert(path.clone()) {
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

/// Whether a string ends some string of a set: the set reversed and sorted, so that a suffix of
/// one is a prefix of a neighbour of its own reversal (logarithmic per question).
struct Suffixes {
    reversed: Vec<String>,
}

impl Suffixes {
    fn new<'a>(strings: impl Iterator<Item = &'a str>) -> Suffixes {
        let mut reversed: Vec<String> = strings.map(|s| s.chars().rev().collect()).collect();
        reversed.sort();
        reversed.dedup();
        Suffixes { reversed }
    }

    fn is_suffix_of_any(&self, suffix: &str) -> bool {
        let wanted: String = suffix.chars().rev().collect();
        let from = self
            .reversed
            .partition_point(|r| r.as_str() < wanted.as_str());
        self.reversed
            .get(from)
            .is_some_and(|r| r.starts_with(&wanted))
    }
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
            The bulk_create call uses batch_size.\n    at render (src/view.js:12:3)\n";
        let names = parse(issue);
        let frames: Vec<(&str, u32, Option<&str>)> = names
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line.unwrap_or(0), f.function.as_deref()))
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

    #[test]
    fn suffixes() {
        let set = Suffixes::new(["/a/b/query.py", "x.js", "/a/b/query.py"].into_iter());
        for (suffix, expected) in [
            ("query.py", true),
            ("b/query.py", true),
            ("/a/b/query.py", true),
            ("uery.py", true),
            ("c/query.py", false),
            ("x.js", true),
            ("y.js", false),
            ("", true),
        ] {
            assert_eq!(set.is_suffix_of_any(suffix), expected, "{suffix:?}");
        }
    }

    /// Thousands of distinct frames and paths: sets and sorted suffixes, not pairwise scans.
    #[test]
    fn long_logs_are_read_in_one_pass() {
        let mut issue = String::new();
        for n in 0..20_000 {
            issue.push_str(&format!(
                "  File \"/srv/app/mod_{n}.py\", line {n}, in handler_{n}\nsee pkg/other_{n}.py\n"
            ));
        }
        let names = parse(&issue);
        assert_eq!(names.frames.len(), 20_000);
        assert_eq!(names.paths.len(), 20_000);
        assert_eq!(names.paths[0], "pkg/other_0.py");
    }
}
