//! Which tree entries may be written, and where: the path sanitizer and the symlink-target check.
//!
//! A tree comes from a repository we do not trust: git itself refuses to check out some hostile
//! trees, but a crafted tree can still name `../x`, `/etc/x`, `a//b` or `.git/hooks/x`, and a
//! symlink can point anywhere. Both checks here are pure functions of the tree (no file system
//! access), so they are exact and testable: an entry is written only if its path is a plain
//! relative path, and a symlink only if its target, resolved through the tree's own symlinks,
//! stays inside the snapshot.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;

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
