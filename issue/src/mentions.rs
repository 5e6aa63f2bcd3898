//! The `graph` explorer's reading of an issue: traceback frames, file paths and code
//! identifiers, the names it seeds its PageRank with. Pure text work; it knows nothing of the
//! snapshot (the explorer resolves the names through the services).
//!
//! Frames come from [`crate::frames`], reordered as the explorer weighs them (Python frames
//! first, later frames nearer the error); a name is code-like by [`crate::words::is_code_like`];
//! path extensions are the parser's ([`crate::paths::PATH_EXTENSIONS`]), and so are the reading
//! of links ([`crate::paths::links_as_paths`]) and of the body as it renders, without its
//! environment ([`crate::environment::issue_as_read`]). What
//! this reading does its own way: a path needs a word boundary before it; identifiers are ASCII,
//! at least three characters, not a name every program has, and ordered by mention count,
//! backticked mentions counting double (the explorer seeds the most mentioned 25); the parser
//! ([`crate::parse()`]) names 22 of the 66 dev issues' paths differently and lists names by
//! first mention.

use crate::clues::{Frame, FrameStyle};
use crate::environment::issue_as_read;
use crate::paths::{has_path_extension, links_as_paths};
use crate::words::is_code_like;
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use swex_text::stopwords::StopList;

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

/// A path after a word boundary (start, space, backtick, quote or bracket), ending in one of the
/// parser's extensions ([`crate::paths::PATH_EXTENSIONS`]).
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    let extensions = crate::paths::PATH_EXTENSIONS.join("|");
    Regex::new(&format!(
        r"(?:^|[\s`'(\[<])((?:[\w.-]+/)*[\w-]+\.(?:{extensions}))\b"
    ))
    .expect("regex")
});
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*").expect("regex")
});

/// Whether a token is a name worth seeding: written like code ([`is_code_like`], the parser's
/// rule), three characters or more, and not a name every program has (`self`, `None`,
/// `ValueError`: [`StopList::IssueNames`]).
fn is_name(token: &str) -> bool {
    token.len() >= 3
        && is_code_like(token)
        && !StopList::IssueNames
            .words()
            .iter()
            .any(|word| word.eq_ignore_ascii_case(token))
}

/// Reads the names out of an issue.
pub fn parse(issue: &str) -> IssueNames {
    let issue = &*issue_as_read(issue);
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
    // Names and paths are read without the issue's links, as the parser reads them: a
    // source-browser link leaves its file path, any other link nothing (`github.com`,
    // `user-images.githubusercontent.com` name nothing of the repository).
    let text = links_as_paths(issue);
    for captures in PATH.captures_iter(&text) {
        let path = captures[1].trim_start_matches("./").to_owned();
        if !frame_suffixes.is_suffix_of_any(&path) && seen_paths.insert(path.clone()) {
            names.paths.push(path);
        }
    }
    // Count mentions; backticked spans count double (the author marked them as code).
    let mut counts: HashMap<String, (u32, usize)> = HashMap::new();
    let mut note = |token: &str, weight: u32, position: usize| {
        let token = token.trim_matches(|c: char| c == '.' || c == ':');
        if !is_name(token) || has_path_extension(token) {
            return;
        }
        let entry = counts.entry(token.to_owned()).or_insert((0, position));
        entry.0 += weight;
    };
    for found in IDENTIFIER.find_iter(&text) {
        let backticked = text[..found.start()].ends_with('`');
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
    fn links_give_their_file_paths_and_no_names() {
        let names = parse(
            "`Session.send` fails, see https://github.com/psf/requests/blob/main/src/requests/sessions.py#L10 \
             and https://docs.python-requests.org/en/latest/user_guide.html\n",
        );
        assert_eq!(names.paths, ["src/requests/sessions.py"]);
        assert_eq!(names.identifiers, ["Session.send"]);
    }

    #[test]
    fn names_worth_seeding() {
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
            ("j.at", true),
            ("ValueError", false),
            ("isinstance", false),
            ("utf8", true),
        ] {
            assert_eq!(is_name(token), expected, "{token}");
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
