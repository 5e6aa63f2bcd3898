//! Which tree entries may be written, and where: the path sanitizer, the symlink-target check, and
//! [`PlainName`], the one check for names from input data that become a path component.
//!
//! A tree comes from a repository we do not trust: git itself refuses to check out some hostile
//! trees, but a crafted tree can still name `../x`, `/etc/x`, `a//b` or `.git/hooks/x`, and a
//! symlink can point anywhere. Both checks here are pure functions of the tree (no file system
//! access), so they are exact and testable: an entry is written only if its path is a plain
//! relative path, and a symlink only if its target, resolved through the tree's own symlinks,
//! stays inside the snapshot.
//!
//! Input data names folders and files too: a benchmark row's `instance_id` becomes
//! `<out>/<instance_id>`, a result row's `explorer` becomes `results/<explorer>/top5.jsonl`. Such a
//! name is turned into a [`PlainName`] once, where it enters, and only a `PlainName` is ever joined
//! to a path, so `../../x` or `/abs` cannot reach a `join` (which would leave the folder, or replace
//! it outright for an absolute name).

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// A name from input data that is safe as one path component: non-empty, at most
/// [`MAX_NAME_BYTES`] bytes, not starting with `.` (so not `.`, `..` or a hidden state folder such
/// as `.swex`), and without `/`, `\`, NUL or other control characters.
///
/// ```
/// use swex_engine::snapshot::PlainName;
/// assert_eq!(PlainName::new("django__django-11099").unwrap().as_str(), "django__django-11099");
/// assert!(PlainName::new("../../x").is_err());
/// assert!(PlainName::new("/etc").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlainName(String);

/// The longest name accepted, in bytes (`NAME_MAX` of Linux and macOS file systems).
pub const MAX_NAME_BYTES: usize = 255;

/// A name that cannot be used as a path component, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} cannot be a file or folder name: {problem}")]
pub struct NameError {
    pub name: String,
    pub problem: NameProblem,
}

/// What is wrong with a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    Empty,
    TooLong,
    /// Starts with `.`: `.`, `..`, or a hidden name such as `.swex`.
    LeadingDot,
    /// Holds `/` or `\`: more than one component, or an absolute path.
    Separator,
    /// Holds NUL or another control character.
    Control,
    /// Not valid UTF-8 (only a path's last component can be).
    NotUtf8,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameProblem::Empty => "it is empty",
            NameProblem::TooLong => "it is longer than 255 bytes",
            NameProblem::LeadingDot => "it starts with `.`",
            NameProblem::Separator => "it holds a path separator (`/` or `\\`)",
            NameProblem::Control => "it holds a control character",
            NameProblem::NotUtf8 => "it is not valid UTF-8",
        })
    }
}

impl PlainName {
    pub fn new(name: impl Into<String>) -> Result<PlainName, NameError> {
        let name = name.into();
        let problem = if name.is_empty() {
            Some(NameProblem::Empty)
        } else if name.len() > MAX_NAME_BYTES {
            Some(NameProblem::TooLong)
        } else if name.starts_with('.') {
            Some(NameProblem::LeadingDot)
        } else if name.contains(['/', '\\']) {
            Some(NameProblem::Separator)
        } else if name.chars().any(char::is_control) {
            Some(NameProblem::Control)
        } else if !matches!(
            Path::new(&name).components().collect::<Vec<_>>()[..],
            [Component::Normal(_)]
        ) {
            // What the platform itself calls more than one plain component (a drive prefix on
            // Windows): caught by the rules above on Unix, kept as the last word everywhere.
            Some(NameProblem::Separator)
        } else {
            None
        };
        match problem {
            Some(problem) => Err(NameError { name, problem }),
            None => Ok(PlainName(name)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PlainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<Path> for PlainName {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl AsRef<str> for PlainName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Why an entry was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalReason {
    /// The path starts with `/`.
    AbsolutePath,
    /// The path is empty or has an empty component (`a//b`, trailing `/`).
    EmptyComponent,
    /// The path has a `.` or `..` component.
    DotComponent,
    /// The path has a `.git` component (any case): it would plant files git treats as its own.
    GitComponent,
    /// The path cannot be represented by this platform's file names (non-UTF-8 off Unix).
    Unrepresentable,
    /// A symlink whose target is absolute or leaves the snapshot.
    SymlinkOutside,
    /// A symlink whose resolution loops (more than [`MAX_SYMLINK_HOPS`] hops).
    SymlinkLoop,
    /// The path is already taken by another entry of the same tree (a malformed tree).
    Conflict,
}

/// The number of symlink hops followed while resolving a target, as Linux's `MAXSYMLINKS`.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// The relative file-system path of a tree entry, or why it must not be written.
pub fn sanitize(path: &[u8]) -> Result<PathBuf, RefusalReason> {
    if path.first() == Some(&b'/') {
        return Err(RefusalReason::AbsolutePath);
    }
    for component in path.split(|&b| b == b'/') {
        match component {
            b"" => return Err(RefusalReason::EmptyComponent),
            b"." | b".." => return Err(RefusalReason::DotComponent),
            c if c.eq_ignore_ascii_case(b".git") => return Err(RefusalReason::GitComponent),
            _ => {}
        }
    }
    to_native(path)
}

#[cfg(unix)]
fn to_native(path: &[u8]) -> Result<PathBuf, RefusalReason> {
    use std::os::unix::ffi::OsStrExt;
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(path)))
}

#[cfg(not(unix))]
fn to_native(path: &[u8]) -> Result<PathBuf, RefusalReason> {
    let text = std::str::from_utf8(path).map_err(|_| RefusalReason::Unrepresentable)?;
    if text.contains(['\\', ':']) {
        return Err(RefusalReason::Unrepresentable);
    }
    Ok(text.split('/').collect())
}

/// The symlinks of one tree (path → target, both raw bytes), to resolve targets through them.
#[derive(Debug, Default)]
pub struct SymlinkTable {
    targets: HashMap<Vec<u8>, Vec<u8>>,
}

impl SymlinkTable {
    pub fn insert(&mut self, path: Vec<u8>, target: Vec<u8>) {
        self.targets.insert(path, target);
    }

    /// Checks that the symlink at `link` with `target` resolves inside the snapshot, following the
    /// tree's other symlinks the way the kernel would. Components that name nothing in the table
    /// are taken as plain directories: if they do not exist, the kernel fails the lookup, which
    /// cannot leave the snapshot either.
    pub fn check(&self, link: &[u8], target: &[u8]) -> Result<(), RefusalReason> {
        let mut position: Vec<&[u8]> = link.split(|&b| b == b'/').collect();
        position.pop(); // a relative target starts from the link's own directory
        let mut hops = 0;
        self.walk(&mut position, target, &mut hops)
    }

    fn walk<'a>(
        &'a self,
        position: &mut Vec<&'a [u8]>,
        target: &'a [u8],
        hops: &mut usize,
    ) -> Result<(), RefusalReason> {
        if target.is_empty() || target.first() == Some(&b'/') {
            return Err(RefusalReason::SymlinkOutside);
        }
        for component in target.split(|&b| b == b'/') {
            match component {
                b"" | b"." => {}
                b".." => {
                    position.pop().ok_or(RefusalReason::SymlinkOutside)?;
                }
                name => {
                    position.push(name);
                    if let Some(next) = self.targets.get(&position.join(&b'/')) {
                        *hops += 1;
                        if *hops > MAX_SYMLINK_HOPS {
                            return Err(RefusalReason::SymlinkLoop);
                        }
                        position.pop();
                        self.walk(position, next, hops)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_name(name: &str, expected: Result<(), NameProblem>) {
        let got = PlainName::new(name)
            .map(|n| assert_eq!(n.as_str(), name))
            .map_err(|e| e.problem);
        assert_eq!(got, expected, "name {name:?}");
    }

    #[test]
    fn plain_names_are_one_harmless_component() {
        use NameProblem::*;
        check_name("astropy__astropy-12907", Ok(()));
        check_name("bm25-ref", Ok(()));
        check_name("a.b", Ok(()));
        check_name("x..y", Ok(()));
        check_name("café", Ok(()));
        check_name(&"a".repeat(255), Ok(()));
        check_name("", Err(Empty));
        check_name(&"a".repeat(256), Err(TooLong));
        check_name(".", Err(LeadingDot));
        check_name("..", Err(LeadingDot));
        check_name(".swex", Err(LeadingDot));
        check_name("../../x", Err(LeadingDot));
        check_name("/etc", Err(Separator));
        check_name("/", Err(Separator));
        check_name("a/b", Err(Separator));
        check_name("a/../../x", Err(Separator));
        check_name("a\\b", Err(Separator));
        check_name("a\nb", Err(Control));
        check_name("a\0b", Err(Control));
        check_name("a\u{1b}[31m", Err(Control));
    }

    fn check_path(path: &[u8], expected: Result<&str, RefusalReason>) {
        let got = sanitize(path);
        let expected = expected.map(PathBuf::from);
        assert_eq!(got, expected, "path {:?}", String::from_utf8_lossy(path));
    }

    #[test]
    fn sanitizer_accepts_plain_relative_paths_only() {
        check_path(b"README.md", Ok("README.md"));
        check_path(b"a/b/c.py", Ok("a/b/c.py"));
        check_path(b".github/workflows/ci.yml", Ok(".github/workflows/ci.yml"));
        check_path(b"a/.gitignore", Ok("a/.gitignore"));
        check_path(b"a/..b/c", Ok("a/..b/c"));
        check_path(b"a/git/c", Ok("a/git/c"));
        check_path(b"/etc/passwd", Err(RefusalReason::AbsolutePath));
        check_path(b"", Err(RefusalReason::EmptyComponent));
        check_path(b"a//b", Err(RefusalReason::EmptyComponent));
        check_path(b"a/", Err(RefusalReason::EmptyComponent));
        check_path(b"../x", Err(RefusalReason::DotComponent));
        check_path(b"a/../../x", Err(RefusalReason::DotComponent));
        check_path(b"a/./b", Err(RefusalReason::DotComponent));
        check_path(b"..", Err(RefusalReason::DotComponent));
        check_path(b".git/hooks/pre-commit", Err(RefusalReason::GitComponent));
        check_path(b"sub/.GIT/config", Err(RefusalReason::GitComponent));
    }

    #[cfg(unix)]
    #[test]
    fn sanitizer_keeps_non_utf8_names_on_unix() {
        use std::os::unix::ffi::OsStrExt;
        let path = sanitize(b"dir/caf\xe9.txt").expect("non-UTF-8 is representable on Unix");
        assert_eq!(path.as_os_str().as_bytes(), b"dir/caf\xe9.txt");
    }

    fn check_link(
        table: &[(&str, &str)],
        link: &str,
        target: &str,
        expected: Result<(), RefusalReason>,
    ) {
        let mut links = SymlinkTable::default();
        for (path, to) in table {
            links.insert(path.as_bytes().to_vec(), to.as_bytes().to_vec());
        }
        assert_eq!(
            links.check(link.as_bytes(), target.as_bytes()),
            expected,
            "{link} -> {target} with {table:?}"
        );
    }

    #[test]
    fn symlink_targets_must_resolve_inside() {
        use RefusalReason::{SymlinkLoop, SymlinkOutside};
        check_link(&[], "link", "README", Ok(()));
        check_link(&[], "a/link", "../README", Ok(()));
        check_link(&[], "a/b/link", "../../c/./d", Ok(()));
        check_link(&[], "a/link", "missing/dir/x", Ok(()));
        check_link(&[], "link", ".", Ok(()));
        check_link(&[], "link", "..", Err(SymlinkOutside));
        check_link(&[], "a/link", "../../x", Err(SymlinkOutside));
        check_link(&[], "link", "/etc/passwd", Err(SymlinkOutside));
        check_link(&[], "link", "", Err(SymlinkOutside));
        check_link(&[], "a/link", "b/../../../x", Err(SymlinkOutside));
        // Through another symlink: `up` points at the root, so `up/..` leaves it.
        check_link(&[("up", ".")], "link", "up/../x", Err(SymlinkOutside));
        check_link(&[("a/b/deep", "../..")], "link", "a/b/deep/x", Ok(()));
        check_link(
            &[("a/b/deep", "../..")],
            "link",
            "a/b/deep/..",
            Err(SymlinkOutside),
        );
        check_link(&[("esc", "/tmp")], "link", "esc/x", Err(SymlinkOutside));
        // Lexically `x/..` is the root, but through `x` it is `d1/d2/..`: still inside.
        check_link(&[("x", "d1/d2")], "link", "x/..", Ok(()));
        check_link(&[("p", "q"), ("q", "p")], "link", "p/x", Err(SymlinkLoop));
        check_link(&[("self", "self")], "self", "self", Err(SymlinkLoop));
    }
}
