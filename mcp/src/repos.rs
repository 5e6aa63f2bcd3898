//! [`Repos`]: the repositories a server serves, each with its index kept open and fresh.
//!
//! A repository is opened on its first call (building what the cache lacks, with progress), and
//! every later call first asks [`Engine::refresh`] whether the tree changed since: by stat, so
//! edits made between calls are in the next answer, and only changed files are read again. Calls
//! on one repository wait for each other only while its index is opened or refreshed; queries run
//! on an `Arc` of the current index, so a refresh never disturbs a query in flight.

use crate::error::ToolError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use swex_engine::index::{Engine, IndexError, Progress, Refresh, RefreshReport, SnapshotIndex};

/// One served repository.
pub struct Repo {
    /// Canonical root.
    pub root: PathBuf,
    /// The root as it was given (an agent may name files through a symlinked path).
    pub given: PathBuf,
    /// Its directory name, by which calls can also name it.
    pub name: String,
    index: Mutex<Option<Arc<SnapshotIndex>>>,
}

/// What bringing an index up to date did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Freshness {
    /// Opened on this call (built, or reused from the cache).
    Opened { ms: f64 },
    /// Nothing changed since the last call.
    Current,
    /// Files changed since the last call; the index was refreshed.
    Refreshed(RefreshReport),
}

impl Repo {
    fn new(given: &Path) -> Result<Repo, ToolError> {
        let root = std::fs::canonicalize(given).map_err(|e| {
            ToolError::UnknownRepository(format!("repository {}: {e}", given.display()))
        })?;
        if !root.is_dir() {
            return Err(ToolError::UnknownRepository(format!(
                "repository {} is not a directory",
                given.display()
            )));
        }
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string());
        Ok(Repo {
            root,
            given: given.to_path_buf(),
            name,
            index: Mutex::new(None),
        })
    }

    /// The index, opened or refreshed so that it matches the tree now.
    pub fn fresh_index(
        &self,
        engine: &Engine,
        progress: &dyn Progress,
    ) -> Result<(Arc<SnapshotIndex>, Freshness), ToolError> {
        // A panic while refreshing must not poison the repository for every later call.
        let mut slot = self.index.lock().unwrap_or_else(|e| e.into_inner());
        let root = || self.root.display().to_string();
        let failed = |source: IndexError| match source {
            IndexError::Cancelled => ToolError::Cancelled,
            source @ IndexError::Scan(_) => ToolError::Repository {
                root: root(),
                source,
            },
            source => ToolError::Index {
                root: root(),
                source,
            },
        };
        match slot.as_ref() {
            None => {
                let started = std::time::Instant::now();
                let index = engine
                    .open_with_progress(&self.root, progress)
                    .map_err(failed)?;
                *slot = Some(index.clone());
                let ms = started.elapsed().as_secs_f64() * 1e3;
                Ok((index, Freshness::Opened { ms }))
            }
            Some(index) => match engine
                .refresh_with_progress(index, progress)
                .map_err(failed)?
            {
                Refresh::Unchanged => Ok((index.clone(), Freshness::Current)),
                Refresh::Updated { index, report } => {
                    *slot = Some(index.clone());
                    Ok((index, Freshness::Refreshed(report)))
                }
            },
        }
    }

    /// Whether the index has been opened.
    pub fn is_open(&self) -> bool {
        self.index
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

/// Which directories a server answers on.
///
/// An MCP server acts for an agent that may follow instructions injected into what it reads, so
/// by default it serves only the repositories the user named at start; a call naming any other
/// directory is refused. [`RepoScope::AnyDirectory`] (`swex mcp --allow-any-repo`) lets a call
/// name any directory, which is then indexed and served: unsafe with agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepoScope {
    /// Only the repositories given at start.
    #[default]
    Given,
    /// Any directory a call names (and the user can read).
    AnyDirectory,
}

/// The served repositories; the first is the default.
pub struct Repos {
    served: Mutex<Vec<Arc<Repo>>>,
    scope: RepoScope,
}

impl Repos {
    /// Serves `roots` (each must be a directory); calls may name other directories only with
    /// [`RepoScope::AnyDirectory`].
    pub fn new(roots: &[PathBuf], scope: RepoScope) -> Result<Repos, ToolError> {
        let mut served: Vec<Arc<Repo>> = Vec::new();
        for root in roots {
            let repo = Repo::new(root)?;
            if !served.iter().any(|r| r.root == repo.root) {
                served.push(Arc::new(repo));
            }
        }
        Ok(Repos {
            served: Mutex::new(served),
            scope,
        })
    }

    pub fn list(&self) -> Vec<Arc<Repo>> {
        self.served
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The repository a call names: none → the default; a served repository's name or root (as
    /// given or canonical); any other directory only with [`RepoScope::AnyDirectory`], and it is
    /// then served from then on. The refusal is decided before anything is read or indexed.
    pub fn resolve(&self, name: Option<&str>) -> Result<Arc<Repo>, ToolError> {
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        let names = |served: &[Arc<Repo>]| {
            served
                .iter()
                .map(|r| format!("{} ({})", r.name, r.root.display()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
            return served.first().cloned().ok_or_else(|| {
                ToolError::UnknownRepository(
                    "this server has no default repository: name one with `repo`".into(),
                )
            });
        };
        let path = Path::new(name);
        // By name, or by the path it was served under (which may be gone: the call then says
        // the repository vanished, not that it is unknown).
        if let Some(repo) = served
            .iter()
            .find(|r| r.name == name || r.given == path || r.root == path)
        {
            return Ok(repo.clone());
        }
        let root = std::fs::canonicalize(path).ok();
        if let Some(repo) = served.iter().find(|r| Some(&r.root) == root.as_ref()) {
            return Ok(repo.clone());
        }
        if self.scope == RepoScope::Given {
            return Err(ToolError::NotServed {
                repo: name.to_owned(),
                served: names(&served),
            });
        }
        if root.is_none() {
            return Err(ToolError::UnknownRepository(format!(
                "no repository `{name}`: it is neither a served repository ({}) nor an existing directory",
                names(&served)
            )));
        }
        let repo = Arc::new(Repo::new(path)?);
        served.push(repo.clone());
        Ok(repo)
    }
}
