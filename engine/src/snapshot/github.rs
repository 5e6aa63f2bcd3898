//! Fetching one commit from GitHub into a local cache mirror, for users with network access.
//!
//! The cache is a folder of bare repositories named `<owner>+<name>` (one of the layouts
//! [`super::RepoLocator`] searches). Each fetch is `git fetch --depth 1` of the one commit, with all
//! its blobs: a blob-less fetch would make every later read go back to the network object by
//! object. The fetched commit is kept under `refs/swex/<hash>` so that `git gc` does not drop it.
//!
//! This module never runs unless asked (`--from-github`); tests point it at a `file://` base.

use super::SnapshotError;
use super::git::GitDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Fetches commits of `owner/name` repositories from `<base_url>/<owner>/<name>` into `cache`.
#[derive(Debug)]
pub struct GithubFetcher {
    cache: PathBuf,
    base_url: String,
    /// Fetches into one cache are serialised: git's shallow-file lock would make concurrent fetches
    /// into the same repository fail, and the network is the bottleneck anyway.
    lock: Mutex<()>,
}

impl GithubFetcher {
    /// A fetcher from `https://github.com` into `cache`.
    pub fn new(cache: PathBuf) -> GithubFetcher {
        GithubFetcher::with_base_url(cache, "https://github.com".into())
    }

    /// A fetcher from another host (or a `file://` folder laid out `<owner>/<name>`).
    pub fn with_base_url(cache: PathBuf, base_url: String) -> GithubFetcher {
        GithubFetcher {
            cache,
            base_url: base_url.trim_end_matches('/').to_string(),
            lock: Mutex::new(()),
        }
    }

    /// The default cache: `<user cache dir>/swex/mirrors` (e.g. `~/.cache/swex/mirrors`).
    pub fn default_cache() -> Option<PathBuf> {
        dirs::cache_dir().map(|dir| dir.join("swex").join("mirrors"))
    }

    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// The cache mirror of `repo` (`owner/name`).
    pub fn mirror_path(&self, repo: &str) -> Result<PathBuf, SnapshotError> {
        let (owner, name) = split_repo(repo)?;
        Ok(self.cache.join(format!("{owner}+{name}")))
    }

    /// Makes sure `commit` of `repo` is in the cache mirror and returns the mirror.
    pub fn fetch(&self, repo: &str, commit: &str) -> Result<GitDir, SnapshotError> {
        let (owner, name) = split_repo(repo)?;
        let mirror = self.mirror_path(repo)?;
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !mirror.join("HEAD").exists() {
            init_bare(&mirror)?;
        }
        let git = GitDir::open(&mirror)?;
        if git.resolve_commit(commit).is_ok() {
            return Ok(git);
        }
        let url = format!("{}/{owner}/{name}", self.base_url);
        let fetch_error = |stderr: String| SnapshotError::Fetch {
            url: url.clone(),
            commit: commit.to_string(),
            stderr,
        };
        let out = git
            .command()
            .env("GIT_TERMINAL_PROMPT", "0")
            .args([
                "fetch",
                "--quiet",
                "--depth",
                "1",
                "--no-tags",
                "--end-of-options",
            ])
            .args([url.as_str(), commit])
            .output()
            .map_err(|source| SnapshotError::GitSpawn { source })?;
        if !out.status.success() {
            return Err(fetch_error(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        let hash = git
            .resolve_commit("FETCH_HEAD")
            .map_err(|e| fetch_error(e.to_string()))?;
        let out = git
            .command()
            .args(["update-ref", &format!("refs/swex/{hash}"), &hash])
            .output()
            .map_err(|source| SnapshotError::GitSpawn { source })?;
        if !out.status.success() {
            return Err(fetch_error(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(git)
    }
}

/// `owner/name` → (owner, name), each one plain component.
pub(crate) fn split_repo(repo: &str) -> Result<(&str, &str), SnapshotError> {
    let invalid = || SnapshotError::InvalidRepo {
        repo: repo.to_string(),
    };
    let (owner, name) = repo.split_once('/').ok_or_else(invalid)?;
    // A path component (the mirror folder is named after both parts) in GitHub's alphabet.
    let plain = |part: &str| {
        super::PlainName::new(part).is_ok()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !plain(owner) || !plain(name) {
        return Err(invalid());
    }
    Ok((owner, name))
}

/// `git init --bare` into a temporary sibling, renamed into place: a killed run leaves no
/// half-initialised mirror.
fn init_bare(mirror: &Path) -> Result<(), SnapshotError> {
    let parent = mirror.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(SnapshotError::io(parent))?;
    let tmp = parent.join(format!(
        ".{}.init.{}",
        mirror.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    let out = Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(&tmp)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| SnapshotError::GitSpawn { source })?;
    if !out.status.success() {
        return Err(SnapshotError::GitFailed {
            git_dir: tmp,
            command: "init --bare".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    std::fs::rename(&tmp, mirror).map_err(SnapshotError::io(mirror))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_names_are_owner_slash_name() {
        assert_eq!(split_repo("django/django").ok(), Some(("django", "django")));
        assert_eq!(split_repo("a-b/c.d_e").ok(), Some(("a-b", "c.d_e")));
        for bad in [
            "django", "a/b/c", "/b", "a/", "../x", "a/..", "a b/c", "a/.git",
        ] {
            assert!(split_repo(bad).is_err(), "{bad}");
        }
    }
}
