//! Snapshots: a repository's tree at one commit, materialised from a local git directory.
//!
//! - [`git`] reads a git directory through the `git` CLI (which must be on `PATH`): resolve a
//!   commit, list its tree, stream its blobs. Missing blobs (partial copies) are answers, not errors.
//! - [`paths`] decides which entries may be written: no `..`, absolute, empty or `.git` components,
//!   and symlinks only when their target resolves inside the snapshot.
//! - [`materialize()`] writes one snapshot atomically (temporary sibling folder, then rename) and
//!   records it in a sidecar marker *outside* the tree, so explorers never see it.
//! - [`batch`] runs many snapshots (benchmark instances), finds each repository's git directory
//!   ([`RepoLocator`]), is idempotent and resumable, and reports per instance.
//! - [`github`] fetches a commit from GitHub into a local cache mirror, for users with network.
//! - [`read_work_tree_head`] and [`read_tracked_paths`] read what an open of a git work tree needs
//!   (its `HEAD`, the files it tracks) from its git folders ([`work_tree_git_dirs`]: its own,
//!   a linked worktree's or a submodule's), without a `git` process; what they do not read (an
//!   unborn branch, reftable, split indexes, SHA-256) is left to the `git` CLI.
//!
//! This module knows git and file systems; it knows nothing about benchmark files (the caller turns
//! rows into [`SnapshotJob`]s) and does no printing (progress goes to a callback).

pub mod batch;
pub mod git;
pub mod github;
pub mod materialize;
pub mod paths;

pub use batch::{
    BatchOptions, BatchReport, InstanceOutcome, InstanceResult, Progress, RepoLocator, SnapshotJob,
    run_batch,
};
pub use git::GitDir;
pub use github::GithubFetcher;
pub use materialize::{
    Materialized, RefusedEntry, Report, SnapshotLayout, SnapshotMarker, materialize,
};
pub use paths::{NameError, NameProblem, PlainName, RefusalReason};

use std::path::{Path, PathBuf};

/// The marker of the `swex snapshot` folder at `root` (its sidecar `<parent>/.swex/<name>.json`),
/// when it is a complete snapshot: what the checkout rules and the repository history read to
/// tell a snapshot from a work tree.
pub fn marker_at(root: &Path) -> Option<SnapshotMarker> {
    SnapshotLayout::new(root).ok()?.read_marker()
}

/// The top of the git work tree that `root` is in: the nearest folder, `root` itself or above,
/// that holds a `.git`.
pub fn work_tree_top(root: &Path) -> Option<&Path> {
    root.ancestors().find(|dir| dir.join(".git").exists())
}

/// Where the work tree at `root` is in its repository, read from its git folders
/// ([`work_tree_git_dirs`]) without running `git`: what `git rev-parse --absolute-git-dir
/// --show-prefix --verify HEAD` prints. Every open of a work tree needs it (its history is keyed
/// by `HEAD`), and a `git` process costs 1.5 ms or more, a fair share of a one-shot answer.
///
/// Read for a repository's own work tree, a linked worktree (`git worktree add`) and a
/// submodule. `None` — the caller then asks `git` — for a `HEAD` that names a ref neither loose
/// nor in `packed-refs` (an unborn branch, the reftable format), a symbolic ref pointing at
/// another, an object id of a length git does not use, a `.git` that cannot be resolved.
pub fn read_work_tree_head(root: &Path) -> Option<WorkTreeHead> {
    let (dirs, prefix) = located_work_tree(root)?;
    let head = std::fs::read_to_string(dirs.git_dir.join("HEAD")).ok()?;
    let head = head.trim_end_matches(['\n', '\r']);
    let commit = match head.strip_prefix("ref: ") {
        Some(name) => resolve_ref(&dirs, name)?,
        None => head.to_owned(),
    };
    is_object_id(&commit).then_some(WorkTreeHead {
        git_dir: dirs.git_dir,
        prefix,
        commit,
    })
}

/// What [`read_work_tree_head`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTreeHead {
    /// The repository's git folder, absolute and canonical.
    pub git_dir: PathBuf,
    /// The work tree's folder in the repository, `/`-terminated (`""` at the top).
    pub prefix: String,
    /// The commit `HEAD` names.
    pub commit: String,
}

/// The git folders of the work tree `root` is in ([`work_tree_git_dirs`]), and `root`'s folder
/// in it as `git rev-parse --show-prefix` prints it (`/`-terminated, `""` at the top).
fn located_work_tree(root: &Path) -> Option<(GitDirs, String)> {
    let top = work_tree_top(root)?;
    let dirs = work_tree_git_dirs(top)?;
    let root = root.canonicalize().ok()?;
    let relative = root.strip_prefix(top.canonicalize().ok()?).ok()?;
    let mut prefix = String::new();
    for component in relative.components() {
        prefix.push_str(component.as_os_str().to_str()?);
        prefix.push('/');
    }
    Some((dirs, prefix))
}

/// The git folders of a work tree, canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    /// The work tree's own git folder, holding its `HEAD` and index (`git rev-parse
    /// --absolute-git-dir`).
    pub git_dir: PathBuf,
    /// The repository's common folder, holding the shared refs, `packed-refs`, `config` and
    /// `info/exclude` (`git rev-parse --git-common-dir`). The same as `git_dir` but in a linked
    /// worktree.
    pub common_dir: PathBuf,
}

/// The git folders of the work tree at `top`, read from its `.git` as git reads it: a folder (a
/// repository's own work tree), or a file `gitdir: <path>` (a linked worktree's or a submodule's;
/// the path relative to `top`), whose folder names its common folder in a `commondir` file when
/// it is a linked worktree's. `None` when `.git` is neither or does not resolve.
pub fn work_tree_git_dirs(top: &Path) -> Option<GitDirs> {
    let dot_git = top.join(".git");
    let kind = std::fs::symlink_metadata(&dot_git).ok()?.file_type();
    let git_dir = if kind.is_dir() {
        dot_git
    } else if kind.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text
            .strip_prefix("gitdir: ")?
            .trim_end_matches(['\n', '\r']);
        top.join(target) // an absolute target replaces `top`
    } else {
        return None;
    };
    let git_dir = git_dir.canonicalize().ok()?;
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => git_dir
            .join(text.trim_end_matches(['\n', '\r']))
            .canonicalize()
            .ok()?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => git_dir.clone(),
        Err(_) => return None,
    };
    Some(GitDirs {
        git_dir,
        common_dir,
    })
}

/// The object id a branch or other ref names: its loose file, else its line in `packed-refs`.
/// Refs of one worktree (`refs/worktree/`, `refs/bisect/`, `refs/rewritten/`) live in its own
/// folder and are never packed; every other ref lives in the common folder.
fn resolve_ref(dirs: &GitDirs, name: &str) -> Option<String> {
    let safe = name.starts_with("refs/")
        && !name.contains('\\')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if !safe {
        return None;
    }
    let per_worktree = ["refs/worktree/", "refs/bisect/", "refs/rewritten/"]
        .iter()
        .any(|folder| name.starts_with(folder));
    let home = if per_worktree {
        &dirs.git_dir
    } else {
        &dirs.common_dir
    };
    if let Ok(loose) = std::fs::read_to_string(home.join(name)) {
        let id = loose.trim_end_matches(['\n', '\r']);
        return is_object_id(id).then(|| id.to_owned());
    }
    if per_worktree {
        return None;
    }
    let packed = std::fs::read_to_string(dirs.common_dir.join("packed-refs")).ok()?;
    packed
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with('^'))
        .filter_map(|line| line.split_once(' '))
        .find(|&(_, ref_name)| ref_name == name)
        .and_then(|(id, _)| is_object_id(id).then(|| id.to_owned()))
}

/// The files git tracks under `root` (what `git -C root ls-files -z --cached` lists: paths
/// relative to `root`, `/`-separated, each once), read from the work tree's index
/// ([`work_tree_git_dirs`]: a repository's own work tree, a linked worktree or a submodule)
/// without running `git`. `None` — ask git — for what is not read here: no `.git` that
/// resolves, a SHA-256 repository, an index version other than 2–4, a split or sparse index,
/// anything malformed. Names that are not UTF-8 are left out, as the caller leaves them out of
/// git's answer.
pub fn read_tracked_paths(root: &Path) -> Option<Vec<String>> {
    let (dirs, prefix) = located_work_tree(root)?;
    let config = std::fs::read_to_string(dirs.common_dir.join("config")).unwrap_or_default();
    if config.to_ascii_lowercase().contains("objectformat") {
        return None; // SHA-256 ids are longer than the entries read below
    }
    let bytes = std::fs::read(dirs.git_dir.join("index")).ok()?;
    let paths = index_paths(&bytes)?;
    Some(
        paths
            .into_iter()
            .filter_map(|path| Some(path.strip_prefix(&prefix)?.to_owned()))
            .filter(|path| !path.is_empty())
            .collect(),
    )
}

/// The paths of a git index file's entries (format versions 2, 3 and 4, SHA-1), in order;
/// `None` for anything else (see [`read_tracked_paths`]).
fn index_paths(bytes: &[u8]) -> Option<Vec<String>> {
    const ENTRY_FIXED: usize = 62; // stat fields (40), object id (20), flags (2)
    let u32_at = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u16_at = |at: usize| Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut at = 12;
    let mut paths = Vec::with_capacity(count.min(bytes.len() / ENTRY_FIXED));
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let mode = u32_at(at + 24)?;
        if mode & 0o170000 == 0o040000 {
            return None; // a sparse index's directory entry
        }
        let flags = u16_at(at + 60)?;
        let extended = flags & 0x4000 != 0;
        if extended && version < 3 {
            return None;
        }
        let name_at = at + ENTRY_FIXED + if extended { 2 } else { 0 };
        let name = if version == 4 {
            // The previous path minus its last `strip` bytes, then this NUL-terminated suffix.
            let (strip, used) = offset_varint(bytes.get(name_at..)?)?;
            let suffix_at = name_at + used;
            let end = suffix_at + bytes.get(suffix_at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            previous.truncate(keep);
            previous.extend_from_slice(&bytes[suffix_at..end]);
            at = end + 1;
            previous.clone()
        } else {
            let end = name_at + bytes.get(name_at..)?.iter().position(|&b| b == 0)?;
            let name = bytes[name_at..end].to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at += (end - at + 8) & !7;
            name
        };
        if let Ok(path) = String::from_utf8(name) {
            paths.push(path);
        }
    }
    // Extensions: a split index keeps entries in another file.
    while at + 8 <= bytes.len().saturating_sub(20) {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" || signature == b"sdir" {
            return None;
        }
        at += 8 + u32_at(at + 4)? as usize;
    }
    paths.dedup();
    Some(paths)
}

/// Git's offset varint (index v4 path compression): each byte holds 7 bits, high bit set on all
/// but the last, and every continuation adds one. The value and the bytes it took.
fn offset_varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        if i > 0 {
            value = value.checked_add(1)?.checked_mul(128)?;
        }
        value |= usize::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// A SHA-1 or SHA-256 object id as git writes it: 40 or 64 lowercase hexadecimal digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64)
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Everything that can go wrong while making a snapshot. In a batch, each instance's error is
/// reported for that instance and the batch goes on.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot run `git` (is it installed and on PATH?): {source}")]
    GitSpawn { source: std::io::Error },
    #[error("{path} is not a git directory: {detail}")]
    NotAGitDir { path: PathBuf, detail: String },
    #[error("commit {commit:?} does not exist in {git_dir}")]
    UnknownCommit { git_dir: PathBuf, commit: String },
    #[error("`git {command}` failed in {git_dir}: {stderr}")]
    GitFailed {
        git_dir: PathBuf,
        command: String,
        stderr: String,
    },
    #[error("unexpected `git ls-tree` record {record:?}")]
    MalformedTreeListing { record: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{target} already holds commit {existing}, not {wanted}; pass --force to replace it")]
    ExistsAtOtherCommit {
        target: PathBuf,
        existing: String,
        wanted: String,
    },
    #[error(
        "{target} exists but has no snapshot marker at {marker} ({detail}); it was not made by \
         swex snapshot or was tampered with; pass --force to replace it"
    )]
    ExistsUnmarked {
        target: PathBuf,
        marker: PathBuf,
        detail: String,
    },
    #[error("invalid snapshot folder name: {0}")]
    InvalidName(#[from] NameError),
    #[error("instance {instance_id:?} appears more than once in the batch")]
    DuplicateInstance { instance_id: String },
    #[error("no git directory for {repo}; looked at: {}", display_paths(.tried))]
    NoGitDir { repo: String, tried: Vec<PathBuf> },
    #[error("invalid repository name {repo:?}: expected owner/name")]
    InvalidRepo { repo: String },
    #[error("fetching {commit} from {url} failed: {stderr}")]
    Fetch {
        url: String,
        commit: String,
        stderr: String,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nothing (no --git-dir, --mirrors or --from-github given)".into();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl SnapshotError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SnapshotError {
        let path = path.into();
        move |source| SnapshotError::Io { path, source }
    }
}
