//! The scanner: which files of a snapshot get indexed, and their text.
//!
//! [`walk`] lists every regular file under a root, in path order, with repository-relative `/`
//! paths and a [`FileStamp`] (size, mtime, ctime, inode) for the cache's stat fast path. It skips
//! `.git` (and `.hg`, `.svn`) directories, never follows a symlink out of the root or into a
//! directory (no cycles, no duplicates), and turns everything it cannot or will not index into a
//! [`Diagnostic`]: files above the size limit, special files, unreadable directories, non-UTF-8
//! names. Symlinks to regular files inside the root are indexed under their own path.
//!
//! [`CheckoutRules`] decides which files of a checkout are its content, by the kind of checkout:
//! - a snapshot made by `swex snapshot` (its marker sits next to it) is exactly a commit's tree:
//!   everything is indexed, whatever its own `.gitignore` files say (they name files of the
//!   developers' work trees, not of this tree);
//! - in a git work tree, every file git tracks is content (a committed file that matches a
//!   pattern is still code), and an untracked file is content unless an ignore rule matches it;
//! - any other folder: every file no ignore rule matches.
//!
//! Ignore rules, with the `ignore` crate's gitignore matcher (ripgrep's), highest precedence
//! first: `.swexignore`, then `.ignore` (explicit instructions to search tools: they apply to
//! tracked files too), then `.gitignore`, then the work tree's `.git/info/exclude` and the
//! `.gitignore` files of folders above the root; within one kind the nearest folder wins. A
//! checkout with none of these at its root gets a built-in list of well-known output folders
//! instead ([`BUILTIN_IGNORES`]: `node_modules/`, `target/`, `.venv/`, `__pycache__/`, …). Git's
//! global `core.excludesFile` is not read, so that an index does not depend on who builds it.
//! What the rules left out is counted by rule ([`IgnoreReport`]), never listed file by file.
//!
//! [`CheckoutRoot`] holds the one symlink rule of swex: a path of a checkout is read only when
//! it resolves, through every symlink on the way, to a place inside the root. [`walk`], the plugin
//! host's plain-file backend (`--no-index`) and the line counts of `swex score --repos` all ask it,
//! so none of them follows a link out of the snapshot, and each says so in a diagnostic
//! ([`DiagnosticKind::SymlinkEscapes`]). It is also the one reader of a checkout's files
//! ([`CheckoutRoot::open`], [`CheckoutRoot::read`]): race-free against symlinks swapped in,
//! regular files only, never blocking, never more bytes than a limit (its documentation says
//! exactly what it guarantees).
//!
//! [`load`] reads one file through it: binary files (a NUL byte in the first 8 KiB), files that
//! grew past the limit and files replaced since the walk become diagnostics; invalid UTF-8 is decoded lossily and reported; the language comes
//! from [`crate::lang::detect_language`]. Neither function fails because of a bad file; only an
//! unusable root is an error.
//!
//! The scanner knows nothing about caches, analyses or indexes.

use crate::analysis::Language;
use crate::lang;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Default limit above which files are not indexed (1 MiB): larger files are data or generated.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 20;

/// Bytes inspected for a NUL byte to call a file binary (git's heuristic).
pub const BINARY_SNIFF_LEN: usize = 8 << 10;

/// Directories never descended into.
const SKIPPED_DIRS: &[&str] = &[".git", ".hg", ".svn"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanOptions {
    /// Files larger than this (bytes) are skipped with a diagnostic.
    pub max_file_size: u64,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// Why a file is not indexed, or indexed with a caveat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// A NUL byte in the first 8 KiB. Not indexed.
    Binary,
    /// Larger than the size limit. Not indexed.
    TooLarge,
    /// Could not be read (permissions, vanished, I/O error). Not indexed.
    Unreadable,
    /// Not valid UTF-8; indexed with invalid sequences replaced.
    InvalidUtf8,
    /// A symlink whose target is outside the root. Not followed.
    SymlinkEscapes,
    /// A symlink to a directory. Not followed (avoids cycles and duplicates).
    SymlinkToDirectory,
    /// A symlink whose target does not exist.
    BrokenSymlink,
    /// A FIFO, socket or device. Not indexed.
    NotRegularFile,
    /// A file name that is not valid UTF-8. Not indexed.
    NonUtf8Path,
    /// The parser reported syntax errors; chunks are still produced.
    SyntaxErrors,
}

impl DiagnosticKind {
    /// False for caveats on files that are still indexed.
    pub fn skips_file(self) -> bool {
        !matches!(
            self,
            DiagnosticKind::InvalidUtf8 | DiagnosticKind::SyntaxErrors
        )
    }
}

/// Something about one file that a user may want to know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Repository-relative path (lossy for non-UTF-8 names).
    pub path: String,
    pub kind: DiagnosticKind,
    pub message: String,
}

impl Diagnostic {
    /// The diagnostic of a binary file (also recreated from the cache without reading the file).
    pub fn binary(path: &str) -> Diagnostic {
        Diagnostic {
            path: path.to_string(),
            kind: DiagnosticKind::Binary,
            message: "binary (NUL byte in the first 8 KiB)".into(),
        }
    }

    /// The diagnostic of a file whose parser reported syntax errors (still indexed).
    pub fn syntax_errors(path: &str) -> Diagnostic {
        Diagnostic {
            path: path.to_string(),
            kind: DiagnosticKind::SyntaxErrors,
            message: "syntax errors; chunks may be coarse".into(),
        }
    }

    /// The diagnostic of a file decoded lossily.
    pub fn invalid_utf8(path: &str) -> Diagnostic {
        Diagnostic {
            path: path.to_string(),
            kind: DiagnosticKind::InvalidUtf8,
            message: "invalid UTF-8; decoded with replacements".into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Errors that stop a scan: only the root itself.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("cannot read snapshot root {path}: {source}")]
    Root {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("snapshot root {0} is not a directory")]
    NotADirectory(String),
}

/// A checkout's root folder, resolved once: see the module documentation for the rule.
///
/// It is also the one reader of a checkout's files: [`CheckoutRoot::open`] and
/// [`CheckoutRoot::read`]. Every read of a file inside a checkout or snapshot (the index build,
/// the index's `read_lines` and `grep` behind `swex mcp`'s `read` and `search`, the plugin host's
/// plain-file backend, the benchmark's line counts and the ground truth's snapshot view) goes
/// through them, and they guarantee, whatever happens to the tree meanwhile:
///
/// - **Containment.** The file opened is inside the root. On Linux the kernel is first asked to
///   open the path beneath a descriptor of the root (`openat2` with `RESOLVE_BENEATH`, which
///   refuses every step out); otherwise, and for whatever that refuses, the path is resolved one
///   component at a time from the root's descriptor (`openat` with `O_NOFOLLOW` on every
///   component, directories and the last one alike), so no component can be a symlink the kernel
///   follows behind our back: a symlink met on the way, or swapped in after any check, is read
///   with `readlinkat` and followed by hand, and `..` pops the directories opened so far. A link
///   or `..` that leaves the root is refused ([`ReadRefused::Outside`]); one that leaves and comes
///   back (`../root/x`, an absolute link into the root, as [`CheckoutRoot::resolve`] allows) is
///   resolved by the OS only to decide, then opened again from the root by the same rule. So a
///   file swapped for a symlink to `/etc/passwd`, or a folder swapped for a symlink to `/`, is
///   never opened, however the swaps race with the read.
/// - **Regular files only, never blocking.** The last component is opened with `O_NONBLOCK` and
///   `O_NOCTTY` and refused unless `fstat` of the opened file says it is a regular file, so a FIFO,
///   socket or device swapped in neither blocks the reader nor is read
///   ([`ReadRefused::NotRegular`]).
/// - **Bounded memory.** [`CheckoutFile::read_to_limit`] never trusts the reported size: it
///   refuses a file that reports more than the limit without reading it, and reads at most
///   `limit + 1` bytes of any other into a buffer never larger than that, so files that report
///   size 0 but stream (`/proc`, `/sys`) or grow while read end as [`ReadRefused::TooLarge`].
/// - **Identity, where the caller knows it.** [`CheckoutFile::stamp`] is the opened file's own
///   (`fstat`) stamp; [`load`] refuses a file whose inode is not the one [`walk`] listed
///   ([`ReadRefused::Replaced`]).
///
/// Not covered: a directory already opened on the way that is *renamed* out of the root while a
/// read is under way (the read then finishes in that directory, which was inside when entered),
/// hard links (a hard link is the file itself, wherever its other names are), and mounts inside
/// the checkout. Elsewhere than Unix the path is resolved ([`CheckoutRoot::resolve`]) and then
/// opened, which is checked but not race-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutRoot {
    canonical: PathBuf,
}

/// Why [`CheckoutRoot::resolve`] will not lead to a path.
#[derive(Debug)]
pub enum Unfollowed {
    /// It resolves to this place, outside the root.
    Outside(PathBuf),
    /// It resolves to nothing (a dangling symlink, a missing file).
    Broken(std::io::Error),
}

impl Unfollowed {
    /// The diagnostic of the symlink at `path` (repository-relative) that was not followed.
    pub fn diagnostic(&self, path: &str) -> Diagnostic {
        let (kind, message) = match self {
            Unfollowed::Outside(target) => (
                DiagnosticKind::SymlinkEscapes,
                format!(
                    "symlink points outside the snapshot ({}), not followed",
                    target.display()
                ),
            ),
            Unfollowed::Broken(err) => (
                DiagnosticKind::BrokenSymlink,
                format!("symlink target missing: {err}"),
            ),
        };
        Diagnostic {
            path: path.to_string(),
            kind,
            message,
        }
    }
}

/// Why [`CheckoutRoot::open`] or [`CheckoutRoot::read`] gave no bytes.
#[derive(Debug, thiserror::Error)]
pub enum ReadRefused {
    /// The path leads out of the root (through a symlink or `..`) to this place.
    #[error("leads outside the snapshot ({}), not followed", .0.display())]
    Outside(PathBuf),
    /// The path names a FIFO, socket, device or directory.
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// More bytes than the limit: `reported` when the file said so before any byte was read,
    /// `None` when it reported less and streamed or grew past the limit while read.
    #[error("{}", too_large_message(*.reported, *.limit))]
    TooLarge { reported: Option<u64>, limit: u64 },
    /// The file opened is not the one the caller listed (it was replaced since).
    #[error("replaced since it was listed")]
    Replaced,
    /// The file cannot be opened or read (missing, dangling link, permissions, I/O).
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
}

fn too_large_message(reported: Option<u64>, limit: u64) -> String {
    match reported {
        Some(size) => format!("{size} bytes, above the {limit} byte limit"),
        None => format!("more than {limit} bytes when read, above the limit"),
    }
}

impl ReadRefused {
    /// The diagnostic of the file at `path` (repository-relative) that was not read.
    pub fn diagnostic(&self, path: &str) -> Diagnostic {
        let kind = match self {
            ReadRefused::Outside(_) => DiagnosticKind::SymlinkEscapes,
            ReadRefused::NotRegular(_) => DiagnosticKind::NotRegularFile,
            ReadRefused::TooLarge { .. } => DiagnosticKind::TooLarge,
            ReadRefused::Replaced | ReadRefused::Io(_) => DiagnosticKind::Unreadable,
        };
        Diagnostic {
            path: path.to_string(),
            kind,
            message: self.to_string(),
        }
    }

    /// As an I/O error (the I/O error itself, when it is one).
    pub fn into_io(self) -> std::io::Error {
        match self {
            ReadRefused::Io(err) => err,
            other => std::io::Error::other(other.to_string()),
        }
    }
}

/// A regular file of a checkout, opened by [`CheckoutRoot::open`].
#[derive(Debug)]
pub struct CheckoutFile {
    file: std::fs::File,
    metadata: std::fs::Metadata,
}

impl CheckoutFile {
    /// The opened file's metadata (`fstat`).
    pub fn metadata(&self) -> &std::fs::Metadata {
        &self.metadata
    }

    /// The opened file's stamp (`fstat`), to compare with what a walk listed.
    pub fn stamp(&self) -> FileStamp {
        stamp_of(&self.metadata)
    }

    /// All the file's bytes, if there are at most `limit`; see [`CheckoutRoot`] for the bound.
    pub fn read_to_limit(self, limit: u64) -> Result<Vec<u8>, ReadRefused> {
        let reported = self.metadata.len();
        if reported > limit {
            return Err(ReadRefused::TooLarge {
                reported: Some(reported),
                limit,
            });
        }
        let (bytes, more) = read_bounded(self.file, reported, limit)?;
        if more {
            return Err(ReadRefused::TooLarge {
                reported: None,
                limit,
            });
        }
        Ok(bytes)
    }
}

/// Reads `source` until its end or `limit + 1` bytes, whichever comes first, into a buffer that
/// starts at `reported + 1` bytes and never grows past `limit + 1`; says whether it stopped
/// short of the end (more than `limit` bytes).
fn read_bounded(
    mut source: impl std::io::Read,
    reported: u64,
    limit: u64,
) -> std::io::Result<(Vec<u8>, bool)> {
    // One byte past the limit tells a file of exactly `limit` bytes from a longer one.
    let most = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    // The reported size and one byte to see the end: one allocation for a file that does not
    // change while read. A file that reports nothing (`/proc`, `/sys`) starts at 8 KiB.
    let first = match usize::try_from(reported).unwrap_or(usize::MAX) {
        0 => 8 << 10,
        size => size.saturating_add(1),
    };
    let mut bytes: Vec<u8> = Vec::with_capacity(first.min(most));
    loop {
        if bytes.len() >= most {
            return Ok((bytes, true));
        }
        if bytes.len() == bytes.capacity() {
            // Grow by doubling, from 8 KiB, never past `most`.
            let grown = bytes.capacity().saturating_mul(2).max(8 << 10).min(most);
            bytes.reserve_exact(grown - bytes.len());
        }
        let filled = bytes.len();
        bytes.resize(bytes.capacity().min(most), 0);
        let read = loop {
            match source.read(&mut bytes[filled..]) {
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match read {
            Ok(0) => {
                bytes.truncate(filled);
                return Ok((bytes, false));
            }
            Ok(n) => bytes.truncate(filled + n),
            Err(err) => return Err(err),
        }
    }
}

impl CheckoutRoot {
    /// Resolves `root` itself (which may be, or pass through, a symlink: the user chose it).
    pub fn new(root: &Path) -> std::io::Result<CheckoutRoot> {
        Ok(CheckoutRoot {
            canonical: root.canonicalize()?,
        })
    }

    /// The resolved root.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// Where `path` (relative to the root, or absolute under it) really is, when that is inside
    /// the root. Every symlink on the way is followed to decide, `..` included, as the kernel
    /// would: a link to a sibling checkout, to `/etc` or to `../..` is [`Unfollowed::Outside`].
    /// This only decides (what to list); reading is [`CheckoutRoot::open`]'s.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, Unfollowed> {
        let target = self
            .canonical
            .join(path)
            .canonicalize()
            .map_err(Unfollowed::Broken)?;
        if target.starts_with(&self.canonical) {
            Ok(target)
        } else {
            Err(Unfollowed::Outside(target))
        }
    }

    /// Opens the regular file at `path` (relative to the root, or absolute under it), by the
    /// rules of [`CheckoutRoot`]: never outside the root, never anything but a regular file,
    /// never blocking.
    pub fn open(&self, path: &Path) -> Result<CheckoutFile, ReadRefused> {
        let relative = if path.is_absolute() {
            path.strip_prefix(&self.canonical)
                .map_err(|_| ReadRefused::Outside(path.to_path_buf()))?
        } else {
            path
        };
        let file = beneath::open(&self.canonical, relative)?;
        let metadata = file.metadata()?;
        let file_type = metadata.file_type();
        if !file_type.is_file() {
            let kind = if file_type.is_dir() {
                "a directory"
            } else {
                "a FIFO, socket or device"
            };
            return Err(ReadRefused::NotRegular(kind));
        }
        Ok(CheckoutFile { file, metadata })
    }

    /// The bytes of the regular file at `path`, at most `limit` of them: [`CheckoutRoot::open`]
    /// then [`CheckoutFile::read_to_limit`].
    pub fn read(&self, path: &Path, limit: u64) -> Result<Vec<u8>, ReadRefused> {
        self.open(path)?.read_to_limit(limit)
    }
}

/// Opening a path beneath a root without following any symlink out of it (see [`CheckoutRoot`]).
#[cfg(unix)]
mod beneath {
    use super::ReadRefused;
    use rustix::fs::{CWD, Mode, OFlags, openat, readlinkat};
    use std::ffi::OsString;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::ffi::OsStringExt;
    use std::path::{Component, Path, PathBuf};

    /// Tests set it to check the component walk alone (as on Unix systems without `openat2`).
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(super) static WALK_ONLY: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Symlinks followed (and returns into the root) before giving up, as the kernel's 40.
    const MAX_LINKS: usize = 40;

    /// A folder on the way: opened only to resolve names in it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const DIR: OFlags = OFlags::PATH
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const DIR: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    /// The file itself: a FIFO opens at once (and is then refused), a terminal is not adopted.
    const FILE: OFlags = OFlags::RDONLY
        .union(OFlags::NOFOLLOW)
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY)
        .union(OFlags::CLOEXEC);

    /// The components of `path` still to resolve, next last.
    fn pending_of(path: &Path) -> Vec<OsString> {
        let mut pending: Vec<OsString> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_os_string()),
                Component::ParentDir => Some(OsString::from("..")),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
            })
            .collect();
        pending.reverse();
        pending
    }

    /// Where the kernel would take `path` (absolute), if that is inside `root`: the rest of the
    /// resolution restarts from the root with the answer, opened by the same rule.
    fn back_inside(root: &Path, path: &Path) -> Result<Vec<OsString>, ReadRefused> {
        let resolved = path.canonicalize()?;
        match resolved.strip_prefix(root) {
            Ok(inside) => Ok(pending_of(inside)),
            Err(_) => Err(ReadRefused::Outside(resolved)),
        }
    }

    /// The path of the remaining components `pending` under `base`.
    fn joined(base: &Path, pending: &[OsString]) -> PathBuf {
        let mut path = base.to_path_buf();
        path.extend(pending.iter().rev());
        path
    }

    pub(super) fn open(root: &Path, relative: &Path) -> Result<std::fs::File, ReadRefused> {
        let root_fd = openat(CWD, root, DIR.difference(OFlags::NOFOLLOW), Mode::empty())
            .map_err(std::io::Error::from)?;
        // Linux resolves the whole path in one call when asked to stay beneath the root
        // (`openat2` with `RESOLVE_BENEATH`: the kernel refuses any step out, symlinks and `..`
        // included, and any magic link). Whatever it refuses or cannot do (a symlink as the last
        // component, an absolute link, an escape, an older kernel) is decided by the walk below,
        // by the same rule, one component at a time.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if !relative.as_os_str().is_empty() && !WALK_ONLY.load(std::sync::atomic::Ordering::Relaxed)
        {
            use rustix::fs::{ResolveFlags, openat2};
            let beneath = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match openat2(&root_fd, relative, FILE, Mode::empty(), beneath) {
                Ok(fd) => return Ok(std::fs::File::from(fd)),
                // Nothing there beneath the root (a way out and back in is `EXDEV`, not this).
                Err(rustix::io::Errno::NOENT) => {
                    return Err(std::io::Error::from(rustix::io::Errno::NOENT).into());
                }
                Err(_) => {}
            }
        }
        // The folders entered below the root, innermost last, with their names.
        let mut dirs: Vec<(OwnedFd, OsString)> = Vec::new();
        let mut pending = pending_of(relative);
        let mut links = 0;
        if pending.is_empty() {
            return Err(ReadRefused::NotRegular("a directory"));
        }
        while let Some(name) = pending.pop() {
            if name == ".." {
                if dirs.pop().is_none() {
                    // Above the root: only a way back into it is followed.
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(too_many_links());
                    }
                    let above = root.parent().unwrap_or(root);
                    pending = back_inside(root, &joined(above, &pending))?;
                }
                continue;
            }
            let dir = dirs.last().map_or(root_fd.as_fd(), |(fd, _)| fd.as_fd());
            let last = pending.is_empty();
            let opened = openat(dir, &name, if last { FILE } else { DIR }, Mode::empty());
            let error = match opened {
                Ok(fd) if last => return Ok(std::fs::File::from(fd)),
                Ok(fd) => {
                    dirs.push((fd, name));
                    continue;
                }
                Err(error) => error,
            };
            // `O_NOFOLLOW` refused a symlink (ELOOP, or ENOTDIR with `O_DIRECTORY`): follow it
            // by hand. Anything else that failed is the answer.
            let Ok(target) = readlinkat(dir, &name, Vec::new()) else {
                return Err(std::io::Error::from(error).into());
            };
            links += 1;
            if links > MAX_LINKS {
                return Err(too_many_links());
            }
            let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
            if target.is_absolute() {
                // Inside the root, it is walked again from there; elsewhere, only a way back in.
                let whole = joined(&target, &pending);
                dirs.clear();
                pending = match whole.strip_prefix(root) {
                    Ok(inside) => pending_of(inside),
                    Err(_) => back_inside(root, &whole)?,
                };
            } else {
                pending.extend(pending_of(&target));
            }
        }
        // The path ended on a folder (`a/..`, a link to `.`).
        Err(ReadRefused::NotRegular("a directory"))
    }

    fn too_many_links() -> ReadRefused {
        ReadRefused::Io(std::io::Error::other("too many levels of symbolic links"))
    }
}

/// Opening a path beneath a root, checked but not race-free (see [`CheckoutRoot`]).
#[cfg(not(unix))]
mod beneath {
    use super::{CheckoutRoot, ReadRefused, Unfollowed};
    use std::path::Path;

    pub(super) fn open(root: &Path, relative: &Path) -> Result<std::fs::File, ReadRefused> {
        let checkout = CheckoutRoot {
            canonical: root.to_path_buf(),
        };
        match checkout.resolve(relative) {
            Ok(path) => Ok(std::fs::File::open(path)?),
            Err(Unfollowed::Outside(path)) => Err(ReadRefused::Outside(path)),
            Err(Unfollowed::Broken(err)) => Err(ReadRefused::Io(err)),
        }
    }
}

/// What the stat fast path compares to decide that a file has not changed since it was hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub inode: u64,
}

/// One regular file found by [`walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// Where to read it (inside the root, possibly through a symlink).
    pub abs_path: PathBuf,
    pub stamp: FileStamp,
}

/// A path whose change can change what [`walk`] lists, with its stamp at listing time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    pub abs_path: PathBuf,
    pub stamp: FileStamp,
}

/// Result of [`walk`].
#[derive(Debug, Default)]
pub struct WalkResult {
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    pub diagnostics: Vec<Diagnostic>,
    /// Every path whose change can change the listing: each directory listed (adding, removing
    /// or renaming an entry changes its mtime; stamped before it is read), each file left out
    /// for its size, and the files the ignore rules read outside the listing
    /// ([`CheckoutRules::sources`]). [`crate::index`]'s refresh walks again when any of them
    /// changes (or a listed ignore file does), and otherwise re-reads only the listed files whose
    /// stamps changed.
    pub watched: Vec<Watched>,
    /// Wall-clock time just before the first stat, in nanoseconds since the Unix epoch: a stamp
    /// whose mtime is not clearly older than this may hide a later change in the same clock
    /// tick (see [`crate::cache::RACY_WINDOW_NS`]).
    pub started_at_ns: i64,
    /// What the ignore rules left out, and why.
    pub ignored: IgnoreReport,
}

/// Lists the files of the tree at `root`. See the module docs for what is skipped.
pub fn walk(root: &Path, options: &ScanOptions) -> Result<WalkResult, ScanError> {
    let checkout = CheckoutRoot::new(root).map_err(|source| ScanError::Root {
        path: root.display().to_string(),
        source,
    })?;
    let canonical_root = checkout.path().to_path_buf();
    if !canonical_root.is_dir() {
        return Err(ScanError::NotADirectory(root.display().to_string()));
    }
    let mut result = WalkResult {
        started_at_ns: now_ns(),
        ..WalkResult::default()
    };
    // The root itself must be listable: an unreadable root is an error, not a diagnostic.
    let root_error = |source| ScanError::Root {
        path: root.display().to_string(),
        source,
    };
    let root_stamp = stamp_of(&std::fs::metadata(&canonical_root).map_err(root_error)?);
    std::fs::read_dir(&canonical_root).map_err(root_error)?;
    result.watched.push(Watched {
        abs_path: canonical_root.clone(),
        stamp: root_stamp,
    });
    let rules = CheckoutRules::new(&checkout);
    for source in rules.sources() {
        // A source that does not exist yet is watched through its folder, whose stamp changes
        // when it is created.
        let watched = std::iter::once(source.as_path())
            .chain(source.parent())
            .find_map(|path| Some((path, std::fs::metadata(path).ok()?)));
        if let Some((path, metadata)) = watched {
            result.watched.push(Watched {
                abs_path: path.to_path_buf(),
                stamp: stamp_of(&metadata),
            });
        }
    }
    let listing = Mutex::new(result);
    rayon::scope(|scope| {
        list_dir(
            scope,
            (&checkout, &rules),
            (canonical_root.clone(), String::new()),
            options,
            &listing,
        )
    });
    let mut result = listing.into_inner().unwrap_or_else(|p| p.into_inner());
    result.ignored = rules.report();
    // Directories are listed in parallel: what they found comes in any order.
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    result
        .diagnostics
        .sort_by(|a, b| (&a.path, a.kind, &a.message).cmp(&(&b.path, b.kind, &b.message)));
    result.watched.sort_by(|a, b| a.abs_path.cmp(&b.abs_path));
    Ok(result)
}

/// Lists the directory `dir` (`relative_dir` in the checkout) into `listing`, each of its
/// subdirectories as a task of its own: a walk's time is mostly `stat` calls, one per entry,
/// which run in parallel. (The order of what is found differs from run to run; [`walk`] sorts.)
fn list_dir<'s>(
    scope: &rayon::Scope<'s>,
    rules: (&'s CheckoutRoot, &'s CheckoutRules),
    (dir, relative_dir): (PathBuf, String),
    options: &'s ScanOptions,
    listing: &'s Mutex<WalkResult>,
) {
    let mut found = WalkResult::default();
    let mut subdirs: Vec<(PathBuf, String)> = Vec::new();
    match std::fs::read_dir(&dir) {
        Ok(entries) => list_entries(
            rules,
            (entries, &relative_dir),
            options,
            &mut subdirs,
            &mut found,
        ),
        Err(err) => found.diagnostics.push(Diagnostic {
            path: relative_dir.to_string(),
            kind: DiagnosticKind::Unreadable,
            message: format!("directory not readable: {err}"),
        }),
    }
    {
        let mut listing = listing.lock().unwrap_or_else(|p| p.into_inner());
        listing.files.append(&mut found.files);
        listing.diagnostics.append(&mut found.diagnostics);
        listing.watched.append(&mut found.watched);
    }
    for subdir in subdirs {
        scope.spawn(move |scope| list_dir(scope, rules, subdir, options, listing));
    }
}

/// The entries of one directory: files and diagnostics into `found`, subdirectories to list
/// into `subdirs`.
fn list_entries(
    (checkout, rules): (&CheckoutRoot, &CheckoutRules),
    (entries, relative_dir): (std::fs::ReadDir, &str),
    options: &ScanOptions,
    subdirs: &mut Vec<(PathBuf, String)>,
    found: &mut WalkResult,
) {
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                found.diagnostics.push(Diagnostic {
                    path: relative_dir.to_string(),
                    kind: DiagnosticKind::Unreadable,
                    message: format!("directory listing failed: {err}"),
                });
                continue;
            }
        };
        let name = entry.file_name();
        let relative = |name: &str| {
            if relative_dir.is_empty() {
                name.to_string()
            } else {
                format!("{relative_dir}/{name}")
            }
        };
        let Some(name) = name.to_str() else {
            found.diagnostics.push(Diagnostic {
                path: relative(&name.to_string_lossy()),
                kind: DiagnosticKind::NonUtf8Path,
                message: "file name is not valid UTF-8".into(),
            });
            continue;
        };
        let path = relative(name);
        let abs_path = entry.path();
        // Stat through the directory's handle (`fstatat`): the kernel resolves one name,
        // not every component of the absolute path again.
        let metadata = entry.metadata();
        visit(
            (checkout, rules),
            (abs_path, metadata),
            path,
            options,
            subdirs,
            found,
        );
    }
}

/// One entry of a listed directory, with its own metadata (a symlink's, not its target's).
fn visit(
    (checkout, rules): (&CheckoutRoot, &CheckoutRules),
    (abs_path, metadata): (PathBuf, std::io::Result<std::fs::Metadata>),
    path: String,
    options: &ScanOptions,
    pending: &mut Vec<(PathBuf, String)>,
    result: &mut WalkResult,
) {
    let mut diagnose = |kind, message: String| {
        result.diagnostics.push(Diagnostic {
            path: path.clone(),
            kind,
            message,
        })
    };
    let metadata = match metadata {
        Ok(m) => m,
        Err(err) => return diagnose(DiagnosticKind::Unreadable, format!("cannot stat: {err}")),
    };
    let file_type = metadata.file_type();
    // Ignore rules see the entry itself (a symlink is a file to git), before anything is resolved
    // or diagnosed: an ignored folder is not even listed.
    if rules.is_ignored(&path, file_type.is_dir()) {
        return;
    }
    let metadata = if file_type.is_symlink() {
        let target = match checkout.resolve(&abs_path) {
            Ok(target) => target,
            Err(unfollowed) => {
                let diagnostic = unfollowed.diagnostic(&path);
                return diagnose(diagnostic.kind, diagnostic.message);
            }
        };
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => {
                return diagnose(
                    DiagnosticKind::SymlinkToDirectory,
                    "symlink to a directory, not followed".into(),
                );
            }
            Ok(m) => m,
            Err(err) => return diagnose(DiagnosticKind::Unreadable, format!("cannot stat: {err}")),
        }
    } else {
        metadata
    };
    if metadata.is_dir() {
        let name = path.rsplit('/').next().unwrap_or(&path);
        if !SKIPPED_DIRS.contains(&name) {
            result.watched.push(Watched {
                abs_path: abs_path.clone(),
                stamp: stamp_of(&metadata),
            });
            pending.push((abs_path, path));
        }
        return;
    }
    if SKIPPED_DIRS.contains(&path.rsplit('/').next().unwrap_or(&path)) {
        // A `.git` *file* (worktrees, submodules) points at a git directory: not content.
        return;
    }
    if !metadata.is_file() {
        return diagnose(
            DiagnosticKind::NotRegularFile,
            "not a regular file (FIFO, socket or device)".into(),
        );
    }
    if metadata.len() > options.max_file_size {
        // Watched: shrinking below the limit lists it.
        result.watched.push(Watched {
            abs_path: abs_path.clone(),
            stamp: stamp_of(&metadata),
        });
        result.diagnostics.push(Diagnostic {
            message: format!(
                "{} bytes, above the {} byte limit",
                metadata.len(),
                options.max_file_size
            ),
            path,
            kind: DiagnosticKind::TooLarge,
        });
        return;
    }
    result.files.push(FileEntry {
        path,
        abs_path,
        stamp: stamp_of(&metadata),
    });
}

/// Wall-clock time in nanoseconds since the Unix epoch (0 before it).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The stamp of a file's (or directory's) metadata.
#[cfg(unix)]
pub fn stamp_of(metadata: &std::fs::Metadata) -> FileStamp {
    use std::os::unix::fs::MetadataExt;
    FileStamp {
        size: metadata.len(),
        mtime_ns: metadata.mtime().saturating_mul(1_000_000_000) + metadata.mtime_nsec(),
        ctime_ns: metadata.ctime().saturating_mul(1_000_000_000) + metadata.ctime_nsec(),
        inode: metadata.ino(),
    }
}

/// The stamp of a file's (or directory's) metadata.
#[cfg(not(unix))]
pub fn stamp_of(metadata: &std::fs::Metadata) -> FileStamp {
    let nanos = |t: std::io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64)
    };
    FileStamp {
        size: metadata.len(),
        mtime_ns: nanos(metadata.modified()),
        ctime_ns: nanos(metadata.created()),
        inode: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Ignore rules
// ---------------------------------------------------------------------------------------------

/// Patterns for a checkout without any ignore file at its root: folders that are build outputs,
/// caches or installed dependencies in every ecosystem swex reads.
pub const BUILTIN_IGNORES: &[&str] = &[
    "node_modules/",
    "target/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".eggs/",
    "*.egg-info/",
    ".gradle/",
    ".next/",
];

/// Ignore files inside a checkout larger than this (1 MiB) are not read.
const IGNORE_FILE_MAX_SIZE: u64 = 1 << 20;

/// Ignore files, highest precedence first, and whether they bind tracked files.
const IGNORE_FILES: [(&str, bool); 3] = [
    (".swexignore", true),
    (".ignore", true),
    (".gitignore", false),
];

/// What kind of checkout a root is; it decides which rules apply (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutKind {
    /// Made by `swex snapshot`: a commit's tree, indexed whole.
    Snapshot,
    /// Inside a git work tree: tracked files always, untracked ones unless ignored.
    GitWorkTree,
    /// Any other folder.
    #[default]
    Plain,
}

/// What the ignore rules left out of one walk, counted by rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreReport {
    pub checkout: CheckoutKind,
    /// Per rule (`.gitignore: /target`, `built-in: node_modules/`), sorted by rule.
    pub rules: Vec<IgnoredByRule>,
    /// Tracked files that a git ignore rule matches, kept because git tracks them.
    pub tracked_kept: usize,
    /// Why git's list of tracked files could not be read (then the ignore files alone decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_error: Option<String>,
}

/// What one rule left out: whole folders (not descended into) and single files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredByRule {
    pub rule: String,
    pub folders: usize,
    pub files: usize,
}

impl IgnoreReport {
    pub fn folders(&self) -> usize {
        self.rules.iter().map(|r| r.folders).sum()
    }

    pub fn files(&self) -> usize {
        self.rules.iter().map(|r| r.files).sum()
    }
}

/// The ignore rules of one checkout, for any walker of it: [`walk`], and the plugin host's
/// plain-file backend. Ask [`CheckoutRules::is_ignored`] about each entry top-down (a folder
/// before what it holds); the matchers of a folder are read the first time a path in it is asked
/// about.
pub struct CheckoutRules {
    root: PathBuf,
    /// The reader of the ignore files inside the checkout.
    checkout: CheckoutRoot,
    kind: CheckoutKind,
    /// Files git tracks under the root, and every folder that holds one.
    tracked: Option<(HashSet<String>, HashSet<String>)>,
    /// `.git/info/exclude` and the `.gitignore` files of folders above the root, nearest first.
    outer: Vec<Gitignore>,
    builtin: Option<Gitignore>,
    dirs: Mutex<HashMap<String, Arc<[Gitignore; 3]>>>,
    /// Folders a git rule ignores that are walked anyway because they hold tracked files, with
    /// the rule: what is untracked in them stays ignored (git never re-includes below an
    /// excluded folder).
    kept_dirs: Mutex<HashMap<String, String>>,
    counts: Mutex<BTreeMap<String, (usize, usize)>>,
    tracked_kept: std::sync::atomic::AtomicUsize,
    git_error: Option<String>,
    /// Files outside the listing the rules were read from (see [`CheckoutRules::sources`]).
    sources: Vec<PathBuf>,
}

impl CheckoutRules {
    /// The rules of the checkout at `checkout`. Runs `git ls-files` once in a git work tree.
    pub fn new(checkout: &CheckoutRoot) -> CheckoutRules {
        let root = checkout.path().to_path_buf();
        let mut rules = CheckoutRules {
            root: root.clone(),
            checkout: checkout.clone(),
            kind: CheckoutKind::Plain,
            tracked: None,
            outer: Vec::new(),
            builtin: None,
            dirs: Mutex::new(HashMap::new()),
            kept_dirs: Mutex::new(HashMap::new()),
            counts: Mutex::new(BTreeMap::new()),
            tracked_kept: std::sync::atomic::AtomicUsize::new(0),
            git_error: None,
            sources: Vec::new(),
        };
        if crate::snapshot::marker_at(&root).is_some() {
            rules.kind = CheckoutKind::Snapshot;
            return rules;
        }
        if let Some(top) = crate::snapshot::work_tree_top(&root) {
            rules.kind = CheckoutKind::GitWorkTree;
            // `.gitignore` files of the folders between the root and the work tree's top apply
            // inside the root too, nearest first; `.git/info/exclude` after them.
            for dir in root.ancestors().skip(1).take_while(|d| d.starts_with(top)) {
                rules.outer.push(matcher(dir, &[dir.join(".gitignore")]));
                rules.sources.push(dir.join(".gitignore"));
            }
            match git_tracked(&root) {
                Ok((tracked, common_dir)) => {
                    rules.tracked = Some(tracked);
                    let exclude = common_dir.join("info").join("exclude");
                    rules
                        .outer
                        .push(matcher(top, std::slice::from_ref(&exclude)));
                    // What git tracks is read from its index.
                    rules.sources.push(common_dir.join("index"));
                    rules.sources.push(exclude);
                }
                Err(message) => rules.git_error = Some(message),
            }
            rules.outer.retain(|m| !m.is_empty());
        }
        let has_ignore_file = IGNORE_FILES
            .iter()
            .any(|(name, _)| root.join(name).is_file())
            || !rules.outer.is_empty();
        if !has_ignore_file {
            let mut builder = GitignoreBuilder::new(&root);
            for pattern in BUILTIN_IGNORES {
                builder
                    .add_line(None, pattern)
                    .expect("the built-in patterns are valid globs");
            }
            rules.builtin = builder.build().ok();
        }
        rules
    }

    pub fn kind(&self) -> CheckoutKind {
        self.kind
    }

    /// The files outside the checkout's listing that the rules were read from (the `.gitignore`
    /// files of folders above the root, git's index and `.git/info/exclude`): a change in any of
    /// them can change what is content. (The ignore files inside the root are listed files.)
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// Whether a file of this name holds ignore rules for its folder.
    pub fn is_ignore_file(name: &str) -> bool {
        IGNORE_FILES.iter().any(|(file, _)| *file == name)
    }

    /// Whether the entry at `path` (root-relative, `/`-separated) is left out; counted when it is.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        if self.kind == CheckoutKind::Snapshot {
            return false;
        }
        let abs = self.root.join(path);
        let tracked = self.tracked.as_ref().is_some_and(|(files, dirs)| {
            if is_dir {
                dirs.contains(path)
            } else {
                files.contains(path)
            }
        });
        let levels: Vec<Arc<[Gitignore; 3]>> = parents(path).map(|dir| self.dir(dir)).collect();
        let mut verdict = None;
        'kinds: for (kind, (_, binds_tracked)) in IGNORE_FILES.iter().enumerate() {
            for level in &levels {
                match level[kind].matched(&abs, is_dir) {
                    Match::None => continue,
                    Match::Whitelist(_) => break 'kinds,
                    Match::Ignore(glob) => {
                        verdict = Some((*binds_tracked, self.label(glob.from(), glob.original())));
                        break 'kinds;
                    }
                }
            }
        }
        if verdict.is_none() && !tracked {
            let kept = self.kept_dirs.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(rule) = parents(path).find_map(|dir| kept.get(dir)) {
                verdict = Some((false, rule.clone()));
            }
        }
        if verdict.is_none() {
            let later = self.outer.iter().chain(&self.builtin);
            for matcher in later {
                match matcher.matched(&abs, is_dir) {
                    Match::None => continue,
                    Match::Whitelist(_) => break,
                    Match::Ignore(glob) => {
                        verdict = Some((false, self.label(glob.from(), glob.original())));
                        break;
                    }
                }
            }
        }
        let Some((binds_tracked, rule)) = verdict else {
            return false;
        };
        if tracked && !binds_tracked {
            if is_dir {
                self.kept_dirs
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(path.to_string(), rule);
            } else {
                self.tracked_kept
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return false;
        }
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let entry = counts.entry(rule).or_default();
        if is_dir {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
        true
    }

    /// What was left out so far.
    pub fn report(&self) -> IgnoreReport {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        IgnoreReport {
            checkout: self.kind,
            rules: counts
                .iter()
                .map(|(rule, &(folders, files))| IgnoredByRule {
                    rule: rule.clone(),
                    folders,
                    files,
                })
                .collect(),
            tracked_kept: self.tracked_kept.load(std::sync::atomic::Ordering::Relaxed),
            git_error: self.git_error.clone(),
        }
    }

    /// The matchers of folder `dir` (root-relative), read on first use.
    fn dir(&self, dir: &str) -> Arc<[Gitignore; 3]> {
        let mut dirs = self.dirs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = dirs.get(dir) {
            return Arc::clone(found);
        }
        let loaded: Arc<[Gitignore; 3]> =
            Arc::new(IGNORE_FILES.map(|(name, _)| self.inner_matcher(dir, name)));
        dirs.insert(dir.to_string(), Arc::clone(&loaded));
        loaded
    }

    /// The matcher of ignore file `name` in folder `dir` (root-relative), read like any file of
    /// the checkout ([`CheckoutRoot::read`]: bounded, never through a link out of the checkout,
    /// never a FIFO), line by line as [`GitignoreBuilder::add`] reads a file.
    fn inner_matcher(&self, dir: &str, name: &str) -> Gitignore {
        let abs_dir = self.root.join(dir);
        let mut builder = GitignoreBuilder::new(&abs_dir);
        let relative = Path::new(dir).join(name);
        if let Ok(bytes) = self.checkout.read(&relative, IGNORE_FILE_MAX_SIZE) {
            let from = abs_dir.join(name);
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                // Lines that are not UTF-8 are skipped, as `GitignoreBuilder::add` does.
                let Ok(line) = std::str::from_utf8(line) else {
                    continue;
                };
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = if i == 0 {
                    line.trim_start_matches('\u{feff}')
                } else {
                    line
                };
                // A bad pattern drops that pattern only (as git does).
                let _ = builder.add_line(Some(from.clone()), line);
            }
        }
        builder.build().unwrap_or_else(|_| Gitignore::empty())
    }

    /// `<ignore file, relative to the root when inside it>: <pattern>`.
    fn label(&self, from: Option<&Path>, pattern: &str) -> String {
        let source = match from {
            Some(file) => file
                .strip_prefix(&self.root)
                .unwrap_or(file)
                .display()
                .to_string(),
            None => "built-in".to_string(),
        };
        format!("{source}: {pattern}")
    }
}

/// The folders holding `path`, nearest first, root (`""`) last.
fn parents(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(path);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.rfind('/') {
            Some(i) => {
                rest = Some(&current[..i]);
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some("")
            }
        }
    })
}

/// One matcher from the ignore files that exist among `files`, rooted at `dir`. A bad pattern
/// drops that pattern only (as git does).
fn matcher(dir: &Path, files: &[PathBuf]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for file in files.iter().filter(|f| f.is_file()) {
        let _ = builder.add(file);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The files git tracks under `root` (root-relative) with every folder holding one, and git's
/// common directory (where `info/exclude` lives).
#[allow(clippy::type_complexity)]
fn git_tracked(root: &Path) -> Result<((HashSet<String>, HashSet<String>), PathBuf), String> {
    let git = |args: &[&str]| -> Result<Vec<u8>, String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(out.stdout)
    };
    let dirs = crate::snapshot::work_tree_top(root).and_then(crate::snapshot::work_tree_git_dirs);
    let common_dir = match dirs {
        Some(dirs) => dirs.common_dir,
        None => {
            let common = git(&["rev-parse", "--git-common-dir"])?;
            root.join(String::from_utf8_lossy(&common).trim())
        }
    };
    // Read from the work tree's index; what that does not read asks git.
    let listing = match crate::snapshot::read_tracked_paths(root) {
        Some(paths) => paths,
        None => git(&["ls-files", "-z", "--cached"])?
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            // A non-UTF-8 name is a diagnostic of the walk anyway.
            .filter_map(|p| std::str::from_utf8(p).ok().map(str::to_owned))
            .collect(),
    };
    let mut files = HashSet::new();
    let mut dirs = HashSet::new();
    for path in &listing {
        for dir in parents(path) {
            if !dirs.insert(dir.to_string()) {
                break;
            }
        }
        files.insert(path.to_string());
    }
    Ok(((files, dirs), common_dir))
}

/// The blake3 hash of a file's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ContentHash(pub [u8; 32]);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> ContentHash {
        ContentHash(*blake3::hash(bytes).as_bytes())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in &self.0[..8] {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// The bytes of a listed file, if it is still the file the walk listed.
fn read_listed(
    checkout: &CheckoutRoot,
    entry: &FileEntry,
    limit: u64,
) -> Result<Vec<u8>, ReadRefused> {
    let file = checkout.open(Path::new(&entry.path))?;
    // Inode 0: a platform without inodes, or an entry made without a walk.
    if entry.stamp.inode != 0 && file.stamp().inode != entry.stamp.inode {
        return Err(ReadRefused::Replaced);
    }
    file.read_to_limit(limit)
}

/// A file's decoded content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    pub text: String,
    pub content_hash: ContentHash,
    pub language: Option<Language>,
    /// Invalid UTF-8 was replaced (a [`DiagnosticKind::InvalidUtf8`] diagnostic accompanies it).
    pub lossy: bool,
}

/// Outcome of [`load`]: the text, or why the file is not indexed. A lossy decode gives both.
#[derive(Debug)]
pub enum Loaded {
    Text(LoadedFile, Option<Diagnostic>),
    Skipped(Diagnostic),
}

/// Reads and decodes one file found by [`walk`] in `checkout`, through the checkout's one reader
/// ([`CheckoutRoot::open`]): at most `options.max_file_size` bytes, and only the file the walk
/// listed (same inode; a file replaced since is [`DiagnosticKind::Unreadable`]).
pub fn load(checkout: &CheckoutRoot, entry: &FileEntry, options: &ScanOptions) -> Loaded {
    let bytes = match read_listed(checkout, entry, options.max_file_size) {
        Ok(bytes) => bytes,
        Err(refused) => return Loaded::Skipped(refused.diagnostic(&entry.path)),
    };
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_LEN)];
    if head.contains(&0) {
        return Loaded::Skipped(Diagnostic::binary(&entry.path));
    }
    let content_hash = ContentHash::of(&bytes);
    let language = lang::detect_language(&entry.path, head);
    match String::from_utf8(bytes) {
        Ok(text) => Loaded::Text(
            LoadedFile {
                text,
                content_hash,
                language,
                lossy: false,
            },
            None,
        ),
        Err(err) => {
            let text = String::from_utf8_lossy(err.as_bytes()).into_owned();
            Loaded::Text(
                LoadedFile {
                    text,
                    content_hash,
                    language,
                    lossy: true,
                },
                Some(Diagnostic::invalid_utf8(&entry.path)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, path: &str, bytes: &[u8]) {
        let abs = root.join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, bytes).unwrap();
    }

    fn kinds(result: &WalkResult) -> Vec<(String, DiagnosticKind)> {
        result
            .diagnostics
            .iter()
            .map(|d| (d.path.clone(), d.kind))
            .collect()
    }

    #[test]
    fn walk_lists_files_in_path_order_and_skips_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "b.py", b"x = 1\n");
        write(root, "a-b/x.py", b"");
        write(root, "a/z.md", b"# t\n");
        write(root, ".git/HEAD", b"ref: x\n");
        write(root, "sub/.git", b"gitdir: ../.git/modules/sub\n");
        let result = walk(root, &ScanOptions::default()).unwrap();
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a-b/x.py", "a/z.md", "b.py"]);
        assert!(result.diagnostics.is_empty());
    }

    #[test]
    fn a_walk_of_many_folders_is_the_same_every_time() {
        // Folders are listed in parallel; what the walk returns must not depend on which
        // thread finished first.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for a in 0..6 {
            for b in 0..6 {
                write(root, &format!("d{a}/e{b}/f.py"), b"x = 1\n");
                write(root, &format!("d{a}/e{b}/big.txt"), &[b'a'; 64]);
            }
            write(root, &format!("d{a}/g.py"), b"");
        }
        let options = ScanOptions { max_file_size: 32 };
        let summary =
            |result: &WalkResult| (result.files.clone(), result.watched.clone(), kinds(result));
        let first = walk(root, &options).unwrap();
        assert_eq!(first.files.len(), 6 * 6 + 6);
        assert_eq!(kinds(&first).len(), 6 * 6, "every big.txt is diagnosed");
        // The root, 6 + 36 folders and 36 files left out for their size.
        assert_eq!(first.watched.len(), 1 + 6 + 36 + 36);
        for _ in 0..8 {
            assert_eq!(summary(&walk(root, &options).unwrap()), summary(&first));
        }
    }

    #[test]
    fn huge_files_are_diagnosed_at_walk_time() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "big.txt", &vec![b'a'; 2048]);
        write(dir.path(), "ok.txt", b"fine\n");
        let options = ScanOptions {
            max_file_size: 1024,
        };
        let result = walk(dir.path(), &options).unwrap();
        assert_eq!(result.files.len(), 1);
        assert_eq!(
            kinds(&result),
            [("big.txt".into(), DiagnosticKind::TooLarge)]
        );
    }

    #[test]
    fn binary_and_lossy_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "blob.bin", b"abc\0def");
        write(dir.path(), "latin1.txt", b"caf\xe9\n");
        write(dir.path(), "main.py", b"print('hi')\n");
        let options = ScanOptions::default();
        let result = walk(dir.path(), &options).unwrap();
        let checkout = CheckoutRoot::new(dir.path()).unwrap();
        let loaded: Vec<Loaded> = result
            .files
            .iter()
            .map(|f| load(&checkout, f, &options))
            .collect();
        match &loaded[0] {
            Loaded::Skipped(d) => assert_eq!(d.kind, DiagnosticKind::Binary),
            other => panic!("blob.bin: {other:?}"),
        }
        match &loaded[1] {
            Loaded::Text(file, Some(d)) => {
                assert!(file.lossy);
                assert_eq!(file.text, "caf\u{fffd}\n");
                assert_eq!(d.kind, DiagnosticKind::InvalidUtf8);
            }
            other => panic!("latin1.txt: {other:?}"),
        }
        match &loaded[2] {
            Loaded::Text(file, None) => {
                assert_eq!(file.language, Some(Language::Python));
                assert_eq!(file.content_hash, ContentHash::of(b"print('hi')\n"));
            }
            other => panic!("main.py: {other:?}"),
        }
    }

    #[test]
    fn unreadable_files_are_diagnostics() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "gone.py", b"x\n");
        write(dir.path(), "locked.py", b"x\n");
        let options = ScanOptions::default();
        let result = walk(dir.path(), &options).unwrap();
        let checkout = CheckoutRoot::new(dir.path()).unwrap();
        // Vanishes between the walk and the read.
        fs::remove_file(dir.path().join("gone.py")).unwrap();
        match load(&checkout, &result.files[0], &options) {
            Loaded::Skipped(d) => assert_eq!(d.kind, DiagnosticKind::Unreadable),
            other => panic!("{other:?}"),
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let locked = dir.path().join("locked.py");
            fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
            // Root reads anything; the check only means something for other users.
            if fs::read(&locked).is_err() {
                match load(&checkout, &result.files[1], &options) {
                    Loaded::Skipped(d) => assert_eq!(d.kind, DiagnosticKind::Unreadable),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_never_escape_the_root() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.txt", b"secret\n");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "real/a.py", b"a = 1\n");
        symlink(outside.path().join("secret.txt"), root.join("escape.txt")).unwrap();
        symlink(outside.path(), root.join("escape_dir")).unwrap();
        symlink(root.join("real/a.py"), root.join("inside.py")).unwrap();
        symlink("real", root.join("loop")).unwrap();
        symlink("missing.py", root.join("dangling.py")).unwrap();
        let result = walk(root, &ScanOptions::default()).unwrap();
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["inside.py", "real/a.py"]);
        assert_eq!(
            kinds(&result),
            [
                ("dangling.py".into(), DiagnosticKind::BrokenSymlink),
                ("escape.txt".into(), DiagnosticKind::SymlinkEscapes),
                ("escape_dir".into(), DiagnosticKind::SymlinkEscapes),
                ("loop".into(), DiagnosticKind::SymlinkToDirectory),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn special_files_and_non_utf8_names() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        let name = std::ffi::OsStr::from_bytes(b"bad\xffname.py");
        fs::write(dir.path().join(name), b"x\n").unwrap();
        let result = walk(dir.path(), &ScanOptions::default()).unwrap();
        assert!(result.files.is_empty());
        let mut expected = vec![(
            "bad\u{fffd}name.py".to_string(),
            DiagnosticKind::NonUtf8Path,
        )];
        if status.is_ok_and(|s| s.success()) {
            expected.push(("pipe".into(), DiagnosticKind::NotRegularFile));
        }
        assert_eq!(kinds(&result), expected);
    }

    /// The reader follows links exactly as [`CheckoutRoot::resolve`] decides (inside, through
    /// folders, absolute, out and back in) and refuses every way out, whatever the link's form.
    #[cfg(unix)]
    #[test]
    fn the_reader_follows_links_inside_and_never_out() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.txt", b"secret\n");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let name = root.file_name().unwrap().to_str().unwrap().to_string();
        write(&root, "real/a.py", b"a = 1\n");
        symlink("real/a.py", root.join("rel.py")).unwrap();
        symlink(root.join("real/a.py"), root.join("abs.py")).unwrap();
        symlink(format!("../{name}/real/a.py"), root.join("back_in.py")).unwrap();
        symlink("real", root.join("dir_link")).unwrap();
        symlink("../real/../rel.py", root.join("real/chain.py")).unwrap();
        symlink(outside.path().join("secret.txt"), root.join("abs_out.txt")).unwrap();
        let depth = root.components().count();
        let up = "../".repeat(depth);
        let relative_out = format!("{up}{}/secret.txt", outside.path().display());
        symlink(&relative_out, root.join("rel_out.txt")).unwrap();
        symlink(outside.path(), root.join("out_dir")).unwrap();
        symlink("missing.py", root.join("dangling.py")).unwrap();
        symlink("loop_b", root.join("loop_a")).unwrap();
        symlink("loop_a", root.join("loop_b")).unwrap();
        let checkout = CheckoutRoot::new(&root).unwrap();
        let read = |path: &str| checkout.read(Path::new(path), 1 << 20);
        // With the kernel's `openat2` first (Linux), then with the component walk alone.
        for walk_only in [false, true] {
            beneath::WALK_ONLY.store(walk_only, std::sync::atomic::Ordering::Relaxed);
            the_reader_follows_links_inside_and_never_out_in(&checkout, &root, &read, &outside);
        }
        beneath::WALK_ONLY.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    #[cfg(unix)]
    fn the_reader_follows_links_inside_and_never_out_in(
        checkout: &CheckoutRoot,
        root: &Path,
        read: &dyn Fn(&str) -> Result<Vec<u8>, ReadRefused>,
        outside: &tempfile::TempDir,
    ) {
        for inside in [
            "real/a.py",
            "rel.py",
            "abs.py",
            "back_in.py",
            "dir_link/a.py",
            "real/chain.py",
            "./real/../real/a.py",
        ] {
            assert_eq!(read(inside).unwrap(), b"a = 1\n", "{inside}");
            assert!(checkout.resolve(Path::new(inside)).is_ok(), "{inside}");
        }
        assert_eq!(
            checkout.read(&root.join("abs.py"), 100).unwrap(),
            b"a = 1\n",
            "an absolute path under the root"
        );
        for out in [
            "abs_out.txt",
            "rel_out.txt",
            "out_dir/secret.txt",
            "../x/secret.txt",
        ] {
            match read(out) {
                Err(ReadRefused::Outside(_)) => {}
                Err(ReadRefused::Io(err)) if out == "../x/secret.txt" => {
                    assert_eq!(err.kind(), std::io::ErrorKind::NotFound)
                }
                other => panic!("{out}: {other:?}"),
            }
        }
        let outside_abs = outside.path().join("secret.txt");
        assert!(matches!(
            checkout.read(&outside_abs, 100),
            Err(ReadRefused::Outside(_))
        ));
        for broken in ["dangling.py", "missing.py", "loop_a", "real/a.py/x"] {
            assert!(
                matches!(read(broken), Err(ReadRefused::Io(_))),
                "{broken}: {:?}",
                read(broken)
            );
        }
        for folder in ["real", "dir_link", "real/..", ".", ""] {
            assert!(
                matches!(read(folder), Err(ReadRefused::NotRegular(_))),
                "{folder}: {:?}",
                read(folder)
            );
        }
        let diagnostic = read("abs_out.txt").unwrap_err().diagnostic("abs_out.txt");
        assert_eq!(diagnostic.kind, DiagnosticKind::SymlinkEscapes);
    }

    /// Limits: a file that reports more is refused unread; one that reports less but streams
    /// more (`/proc`) is refused after `limit + 1` bytes; the buffer never outgrows `limit + 1`.
    #[test]
    fn the_reader_never_reads_past_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ten.txt", b"0123456789");
        let checkout = CheckoutRoot::new(dir.path()).unwrap();
        let ten = Path::new("ten.txt");
        assert_eq!(checkout.read(ten, 10).unwrap(), b"0123456789");
        assert!(matches!(
            checkout.read(ten, 9),
            Err(ReadRefused::TooLarge {
                reported: Some(10),
                limit: 9
            })
        ));
        assert_eq!(
            checkout
                .read(ten, 0)
                .map_err(|e| e.to_string())
                .unwrap_err(),
            "10 bytes, above the 0 byte limit"
        );
        write(dir.path(), "empty.txt", b"");
        assert_eq!(checkout.read(Path::new("empty.txt"), 0).unwrap(), b"");

        #[cfg(target_os = "linux")]
        {
            // Reports size 0, streams its bytes.
            let proc_self = CheckoutRoot::new(Path::new("/proc/self")).unwrap();
            let status = proc_self.open(Path::new("status")).unwrap();
            assert_eq!(status.metadata().len(), 0);
            assert!(matches!(
                status.read_to_limit(16),
                Err(ReadRefused::TooLarge {
                    reported: None,
                    limit: 16
                })
            ));
            let whole = proc_self.read(Path::new("status"), 1 << 20).unwrap();
            assert!(whole.starts_with(b"Name:"), "{whole:?}");
            // smaps streams tens of kilobytes; a read stops after the limit.
            let smaps = proc_self.read(Path::new("smaps"), 1 << 10);
            assert!(
                matches!(smaps, Err(ReadRefused::TooLarge { reported: None, .. })),
                "{smaps:?}"
            );
        }
    }

    #[test]
    fn a_bounded_read_never_allocates_past_the_limit() {
        for limit in [0u64, 1, 100, 8 << 10, (8 << 10) + 3, 1 << 20] {
            let (bytes, _) = read_bounded(std::io::repeat(b'x'), 0, limit).unwrap();
            assert_eq!(bytes.len() as u64, limit + 1);
            assert!(
                bytes.capacity() as u64 <= limit + 1,
                "{limit}: {}",
                bytes.capacity()
            );
            let (bytes, _) = read_bounded(&b"abc"[..], 3, limit).unwrap();
            assert_eq!(bytes.len() as u64, limit.min(3) + u64::from(limit < 3));
        }
    }

    /// A FIFO in a checkout (listed as a regular file a moment ago, say) is refused at once,
    /// without a writer on the other end.
    #[cfg(unix)]
    #[test]
    fn the_reader_never_blocks_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.py");
        if !std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            return; // no mkfifo here
        }
        let checkout = CheckoutRoot::new(dir.path()).unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(checkout.read(Path::new("pipe.py"), 100));
        });
        let answer = receive
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("reading a FIFO must not block");
        assert!(
            matches!(answer, Err(ReadRefused::NotRegular(_))),
            "{answer:?}"
        );
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn paths(result: &WalkResult) -> Vec<&str> {
        result.files.iter().map(|f| f.path.as_str()).collect()
    }

    fn rules(report: &IgnoreReport) -> Vec<(&str, usize, usize)> {
        report
            .rules
            .iter()
            .map(|r| (r.rule.as_str(), r.folders, r.files))
            .collect()
    }

    #[test]
    fn ignore_files_decide_in_a_plain_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (".gitignore", "*.log\nbuild/\n!keep.log\n"),
            ("app.py", "x\n"),
            ("a.log", "x\n"),
            ("keep.log", "x\n"),
            ("build/out.py", "x\n"),
            ("src/build/gen.py", "x\n"),
            ("src/.gitignore", "local.py\n"),
            ("src/local.py", "x\n"),
            ("src/main.py", "x\n"),
            // `.ignore` outranks `.gitignore`; `.swexignore` outranks both.
            (".ignore", "docs/private/\n!a.log\n"),
            ("docs/private/p.md", "x\n"),
            ("docs/public.md", "x\n"),
            (".swexignore", "*.md\n!docs/public.md\nkeep.log\n"),
            // A checkout with ignore files does not get the built-in list.
            ("node_modules/m.js", "x\n"),
        ] {
            write(root, path, text.as_bytes());
        }
        let result = walk(root, &ScanOptions::default()).unwrap();
        assert_eq!(
            paths(&result),
            [
                ".gitignore",
                ".ignore",
                ".swexignore",
                "a.log",
                "app.py",
                "docs/public.md",
                "node_modules/m.js",
                "src/.gitignore",
                "src/main.py"
            ]
        );
        assert_eq!(result.ignored.checkout, CheckoutKind::Plain);
        assert_eq!(
            rules(&result.ignored),
            [
                (".gitignore: build/", 2, 0),
                (".ignore: docs/private/", 1, 0),
                (".swexignore: keep.log", 0, 1),
                ("src/.gitignore: local.py", 0, 1),
            ]
        );
    }

    /// Ignore files are read like any file of the checkout: one that is a symlink out of it is
    /// not read (its lines would otherwise show up as rules in the report), nor is a FIFO.
    #[cfg(unix)]
    #[test]
    fn ignore_files_are_read_by_the_checkout_reader() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret", b"top_secret_line.py\n");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "top_secret_line.py", b"x\n");
        write(root, "keep.py", b"x\n");
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join(".gitignore")).unwrap();
        let mkfifo = std::process::Command::new("mkfifo")
            .arg(root.join(".ignore"))
            .status();
        let (send, receive) = std::sync::mpsc::channel();
        let walked_root = root.to_path_buf();
        std::thread::spawn(move || {
            let _ = send.send(walk(&walked_root, &ScanOptions::default()).unwrap());
        });
        let result = receive
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a FIFO ignore file must not block the walk");
        assert_eq!(paths(&result), ["keep.py", "top_secret_line.py"]);
        assert!(result.ignored.rules.is_empty(), "{:?}", result.ignored);
        let mut expected = vec![(".gitignore".to_string(), DiagnosticKind::SymlinkEscapes)];
        if mkfifo.is_ok_and(|s| s.success()) {
            expected.push((".ignore".into(), DiagnosticKind::NotRegularFile));
        }
        assert_eq!(kinds(&result), expected);
    }

    #[test]
    fn without_ignore_files_well_known_output_folders_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in [
            "src/main.rs",
            "target/debug/build/x/out.rs",
            "node_modules/left-pad/index.js",
            "pkg/__pycache__/m.cpython-311.pyc",
            ".venv/lib/site.py",
            "lib/targets.py",
        ] {
            write(root, path, b"x\n");
        }
        let result = walk(root, &ScanOptions::default()).unwrap();
        assert_eq!(paths(&result), ["lib/targets.py", "src/main.rs"]);
        assert_eq!(
            rules(&result.ignored),
            [
                ("built-in: .venv/", 1, 0),
                ("built-in: __pycache__/", 1, 0),
                ("built-in: node_modules/", 1, 0),
                ("built-in: target/", 1, 0),
            ]
        );
    }

    #[test]
    fn git_tracked_files_are_always_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for (path, text) in [
            (".gitignore", "/target\n*.gen.py\n"),
            ("src/lib.rs", "x\n"),
            ("target/keep.rs", "x\n"),
            ("a.gen.py", "x\n"),
            ("vendor/big.py", "x\n"),
        ] {
            write(root, path, text.as_bytes());
        }
        git(root, &["add", "-f", "."]);
        git(root, &["commit", "-q", "-m", "one"]);
        for path in [
            "target/debug/out.rs",
            "b.gen.py",
            "new.py",
            "target/extra.rs",
        ] {
            write(root, path, b"x\n");
        }
        write(root, ".git/info/exclude", b"new_excluded.py\n");
        write(root, "new_excluded.py", b"x\n");
        let result = walk(root, &ScanOptions::default()).unwrap();
        assert_eq!(result.ignored.checkout, CheckoutKind::GitWorkTree);
        assert_eq!(
            paths(&result),
            [
                ".gitignore",
                "a.gen.py",
                "new.py",
                "src/lib.rs",
                "target/keep.rs",
                "vendor/big.py"
            ]
        );
        assert_eq!(
            rules(&result.ignored),
            [
                (".git/info/exclude: new_excluded.py", 0, 1),
                (".gitignore: *.gen.py", 0, 1),
                (".gitignore: /target", 1, 1),
            ]
        );
        assert_eq!(result.ignored.tracked_kept, 1, "a.gen.py");

        // `.swexignore` is an instruction to swex: it removes tracked files too.
        write(root, ".swexignore", b"vendor/\n");
        let result = walk(root, &ScanOptions::default()).unwrap();
        assert!(!paths(&result).contains(&"vendor/big.py"));
        // A folder inside the work tree gets the rules of the folders above it, for what is
        // inside it (the folder itself was asked for, so it is not ignored as a whole).
        write(root, "src/x.gen.py", b"x\n");
        let result = walk(&root.join("src"), &ScanOptions::default()).unwrap();
        assert_eq!(paths(&result), ["lib.rs"]);
        let outer = format!(
            "{}: *.gen.py",
            root.canonicalize().unwrap().join(".gitignore").display()
        );
        assert_eq!(rules(&result.ignored), [(outer.as_str(), 0, 1)]);
        let result = walk(&root.join("target"), &ScanOptions::default()).unwrap();
        assert_eq!(paths(&result), ["debug/out.rs", "extra.rs", "keep.rs"]);
    }

    #[test]
    fn a_swex_snapshot_is_indexed_as_its_git_tree() {
        let dir = tempfile::tempdir().unwrap();
        let snapshot = dir.path().join("repos/org__p-1");
        for path in ["src/a.py", "build/b.py", "node_modules/m.js", "x.log"] {
            write(&snapshot, path, b"x\n");
        }
        write(&snapshot, ".gitignore", b"build/\n*.log\n");
        write(
            dir.path(),
            "repos/.swex/org__p-1.json",
            br#"{"format": 1, "requested": "c", "git_dir": "g", "made_by": "t",
                "report": {"commit": "c", "files": 5, "bytes": 10, "symlinks": 0,
                           "missing_blobs": [], "refused": [], "submodules": []}}"#,
        );
        let result = walk(&snapshot, &ScanOptions::default()).unwrap();
        assert_eq!(result.ignored.checkout, CheckoutKind::Snapshot);
        assert_eq!(
            paths(&result),
            [
                ".gitignore",
                "build/b.py",
                "node_modules/m.js",
                "src/a.py",
                "x.log"
            ]
        );
        assert!(result.ignored.rules.is_empty());
    }

    #[test]
    fn missing_root_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            walk(&dir.path().join("nope"), &ScanOptions::default()),
            Err(ScanError::Root { .. })
        ));
        write(dir.path(), "f", b"");
        assert!(matches!(
            walk(&dir.path().join("f"), &ScanOptions::default()),
            Err(ScanError::NotADirectory(_))
        ));
    }
}
