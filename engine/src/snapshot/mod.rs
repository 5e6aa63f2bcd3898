//! Snapshots: a repository's tree at one commit, materialised from a local git directory.
//!
//! - [`git`] reads a git directory through the `git` CLI (which must be on `PATH`): resolve a
//!   commit, list its tree, stream its blobs. Missing blobs (partial copies) are answers, not errors.
//! - [`paths`] decides which entries may be written: no `..`, absolute, empty or `.git` components,
//!   and symlinks only when their target resolves inside the snapshot.
//! - [`materialize`] writes one snapshot atomically (temporary sibling folder, then rename) and
//!   records it in a sidecar marker *outside* the tree, so explorers never see it.
//! - [`batch`] runs many snapshots (benchmark instances), finds each repository's git directory
//!   ([`RepoLocator`]), is idempotent and resumable, and reports per instance.
//! - [`github`] fetches a commit from GitHub into a local cache mirror, for users with network.
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
