//! The scanner: which files of a snapshot get indexed, and their text.
//!
//! [`walk`] lists every regular file under a root, in path order, with repository-relative `/`
//! paths and a [`FileStamp`] (size, mtime, ctime, inode) for the cache's stat fast path. It skips
//! `.git` (and `.hg`, `.svn`) directories, never follows a symlink out of the root or into a
//! directory (no cycles, no duplicates), and turns everything it cannot or will not index into a
//! [`Diagnostic`]: files above the size limit, special files, unreadable directories, non-UTF-8
//! names. Symlinks to regular files inside the root are indexed under their own path.
//!
//! [`CheckoutRoot`] holds the one symlink rule of swex: a path of a checkout is read only when
//! it resolves, through every symlink on the way, to a place inside the root. [`walk`], the plugin
//! host's plain-file backend (`--no-index`) and the line counts of `swex score --repos` all ask it,
//! so none of them follows a link out of the snapshot, and each says so in a diagnostic
//! ([`DiagnosticKind::SymlinkEscapes`]).
//!
//! [`load`] reads one file: binary files (a NUL byte in the first 8 KiB) and files that grew past
//! the limit become diagnostics; invalid UTF-8 is decoded lossily and reported; the language comes
//! from [`crate::lang::detect_language`]. Neither function fails because of a bad file; only an
//! unusable root is an error.
//!
//! The scanner knows nothing about caches, analyses or indexes.

use crate::analysis::Language;
use crate::lang;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

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
    /// or renaming an entry changes its mtime; stamped before it is read) and each file left out
    /// for its size. A listing rule that reads a file (an ignore file) must add that file here:
    /// [`crate::index`]'s refresh walks again when any of them changes, and otherwise re-reads
    /// only the listed files whose stamps changed.
    pub watched: Vec<Watched>,
    /// Wall-clock time just before the first stat, in nanoseconds since the Unix epoch: a stamp
    /// whose mtime is not clearly older than this may hide a later change in the same clock
    /// tick (see [`crate::cache::RACY_WINDOW_NS`]).
    pub started_at_ns: i64,
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
    let mut pending: Vec<(PathBuf, String)> = vec![(canonical_root.clone(), String::new())];
    while let Some((dir, relative_dir)) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) => {
                result.diagnostics.push(Diagnostic {
                    path: relative_dir.clone(),
                    kind: DiagnosticKind::Unreadable,
                    message: format!("directory not readable: {err}"),
                });
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    result.diagnostics.push(Diagnostic {
                        path: relative_dir.clone(),
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
                result.diagnostics.push(Diagnostic {
                    path: relative(&name.to_string_lossy()),
                    kind: DiagnosticKind::NonUtf8Path,
                    message: "file name is not valid UTF-8".into(),
                });
                continue;
            };
            let path = relative(name);
            let abs_path = entry.path();
            visit(
                &checkout,
                abs_path,
                path,
                options,
                &mut pending,
                &mut result,
            );
        }
    }
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    result
        .diagnostics
        .sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
    Ok(result)
}

fn visit(
    checkout: &CheckoutRoot,
    abs_path: PathBuf,
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
    let metadata = match std::fs::symlink_metadata(&abs_path) {
        Ok(m) => m,
        Err(err) => return diagnose(DiagnosticKind::Unreadable, format!("cannot stat: {err}")),
    };
    let file_type = metadata.file_type();
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

/// Reads and decodes one file found by [`walk`].
pub fn load(entry: &FileEntry, options: &ScanOptions) -> Loaded {
    let diagnostic = |kind, message: String| Diagnostic {
        path: entry.path.clone(),
        kind,
        message,
    };
    let bytes = match std::fs::read(&entry.abs_path) {
        Ok(bytes) => bytes,
        Err(err) => {
            return Loaded::Skipped(diagnostic(
                DiagnosticKind::Unreadable,
                format!("cannot read: {err}"),
            ));
        }
    };
    if bytes.len() as u64 > options.max_file_size {
        return Loaded::Skipped(diagnostic(
            DiagnosticKind::TooLarge,
            format!(
                "{} bytes, above the {} byte limit",
                bytes.len(),
                options.max_file_size
            ),
        ));
    }
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
        let loaded: Vec<Loaded> = result.files.iter().map(|f| load(f, &options)).collect();
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
        // Vanishes between the walk and the read.
        fs::remove_file(dir.path().join("gone.py")).unwrap();
        match load(&result.files[0], &options) {
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
                match load(&result.files[1], &options) {
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
