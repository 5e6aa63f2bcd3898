//! Path hints: a path as an issue or a traceback writes it (`/usr/lib/python3/site-packages/x/y.py`,
//! `C:\proj\src\a.py`, `./src/x.rs`) and the snapshot files it can name.
//!
//! - [`normalize_path_hint`]: the written path as a repository-relative hint.
//! - [`ends_with_path`] and [`path_suffixes`]: the one notion of one path naming another — equal,
//!   or a suffix that starts after a `/` (`db/models.py` names `django/db/models.py`, `models.py`
//!   does too, `els.py` does not). Readers that count every file a hint names (the `swex`
//!   explorer's mentions, the benchmark's path rule) look suffixes up by hash with these.
//! - [`resolve_path_hint`]: the files of a snapshot a hint names best — those that end with the
//!   longest suffix of the hint's components any file ends with, shortest path first — with one
//!   named difference, [`BareName`].
//!
//! ```
//! use swex_text::hints::{BareName, normalize_path_hint, resolve_path_hint};
//!
//! let files = ["django/db/models/query.py", "django/db/models/sql/query.py", "setup.py"];
//! let hint = normalize_path_hint("/usr/lib/python3/site-packages/django/db/models/query.py");
//! assert_eq!(hint, "django/db/models/query.py");
//! assert_eq!(resolve_path_hint(&hint, files, BareName::Any), ["django/db/models/query.py"]);
//! assert_eq!(resolve_path_hint("query.py", files, BareName::Any).len(), 2);
//! assert!(resolve_path_hint("query.py", files, BareName::Unique).is_empty());
//! ```

/// Normalises a path as written in an issue into a repository-relative hint: backslashes become
/// `/`; a `file://` or `webpack://` scheme, a drive letter, leading `/` and `./`, and everything
/// up to the last `site-packages/`, `dist-packages/` or `node_modules/` are removed.
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

/// Whether `suffix` names `path`: equal to it, or a suffix of it that starts after a `/`.
pub fn ends_with_path(path: &str, suffix: &str) -> bool {
    path.len() >= suffix.len()
        && path.ends_with(suffix)
        && (path.len() == suffix.len() || path.as_bytes()[path.len() - suffix.len() - 1] == b'/')
}

/// `path` and each of its suffixes that starts after a `/`, longest first, of at most `max_len`
/// bytes: every `suffix` for which [`ends_with_path`]`(path, suffix)` holds (but the empty one).
pub fn path_suffixes(path: &str, max_len: usize) -> impl Iterator<Item = &str> {
    let starts = std::iter::once(0).chain(path.match_indices('/').map(|(i, _)| i + 1));
    starts
        .map(move |start| &path[start..])
        .filter(move |suffix| suffix.len() <= max_len)
}

/// What a hint that comes down to a bare file name (`query.py`) may resolve to. The readers
/// differ on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BareName {
    /// Every file of that name, shortest path first: the index's `resolve_path`, whose caller
    /// sees the list and chooses.
    Any,
    /// The file of that name only when there is one: the `graph` explorer seeds PageRank with the
    /// file it resolves, and a guess among several `utils.py` or `__init__.py` would seed the
    /// wrong part of the graph.
    Unique,
}

/// The files among `paths` that a hint names best: its components (empty ones and `.` left
/// out) are dropped from the front until some file ends with what is left ([`ends_with_path`]);
/// those files, shortest path first (then by path). A hint down to its file name resolves by
/// `bare`. Give it a hint through [`normalize_path_hint`] first when it is written text.
pub fn resolve_path_hint<'a>(
    hint: &str,
    paths: impl IntoIterator<Item = &'a str, IntoIter: Clone>,
    bare: BareName,
) -> Vec<&'a str> {
    let paths = paths.into_iter();
    let components: Vec<&str> = hint
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    for skip in 0..components.len() {
        let suffix = components[skip..].join("/");
        let mut found: Vec<&str> = paths
            .clone()
            .filter(|path| ends_with_path(path, &suffix))
            .collect();
        if skip + 1 == components.len() && bare == BareName::Unique && found.len() > 1 {
            return Vec::new();
        }
        if !found.is_empty() {
            found.sort_by_key(|path| (path.len(), *path));
            return found;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_paths_become_hints() {
        for (input, expected) in [
            (
                "/usr/lib/python3/site-packages/django/db/models/query.py",
                "django/db/models/query.py",
            ),
            ("./src/x.rs", "src/x.rs"),
            ("C:\\proj\\src\\a.py", "proj/src/a.py"),
            ("file:///app/index.js", "app/index.js"),
            ("webpack:///./src/app.js", "src/app.js"),
            ("lib/a.js", "lib/a.js"),
        ] {
            assert_eq!(normalize_path_hint(input), expected, "{input}");
        }
    }

    #[test]
    fn suffixes_start_after_a_slash() {
        for (path, suffix, expected) in [
            ("django/db/models.py", "django/db/models.py", true),
            ("django/db/models.py", "db/models.py", true),
            ("django/db/models.py", "models.py", true),
            ("django/db/models.py", "els.py", false),
            ("django/db/models.py", "b/models.py", false),
            ("models.py", "db/models.py", false),
        ] {
            assert_eq!(ends_with_path(path, suffix), expected, "{path} {suffix}");
        }
        let all: Vec<&str> = path_suffixes("a/b/c.py", usize::MAX).collect();
        assert_eq!(all, ["a/b/c.py", "b/c.py", "c.py"]);
        let short: Vec<&str> = path_suffixes("a/b/c.py", 6).collect();
        assert_eq!(short, ["b/c.py", "c.py"]);
        for suffix in all {
            assert!(ends_with_path("a/b/c.py", suffix));
        }
    }

    /// One row per hint: what it resolves to with any bare name, and with unique ones only.
    #[test]
    fn hints_resolve_by_their_longest_suffix() {
        let files = [
            "django/db/models/query.py",
            "django/db/models/sql/query.py",
            "tests/queries/models.py",
            "setup.py",
        ];
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "usr/lib/python3/django/db/models/query.py",
                &["django/db/models/query.py"],
                &["django/db/models/query.py"],
            ),
            (
                "sql/query.py",
                &["django/db/models/sql/query.py"],
                &["django/db/models/sql/query.py"],
            ),
            // Two files of that name: a list, or nothing.
            (
                "query.py",
                &["django/db/models/query.py", "django/db/models/sql/query.py"],
                &[],
            ),
            (
                "elsewhere/query.py",
                &["django/db/models/query.py", "django/db/models/sql/query.py"],
                &[],
            ),
            ("./setup.py", &["setup.py"], &["setup.py"]),
            (
                "proj/tests/./queries/models.py",
                &["tests/queries/models.py"],
                &["tests/queries/models.py"],
            ),
            ("nothing/here.py", &[], &[]),
            ("", &[], &[]),
        ];
        for (hint, any, unique) in cases {
            assert_eq!(
                resolve_path_hint(hint, files, BareName::Any),
                *any,
                "{hint} any"
            );
            assert_eq!(
                resolve_path_hint(hint, files, BareName::Unique),
                *unique,
                "{hint} unique"
            );
        }
    }
}
