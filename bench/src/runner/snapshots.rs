//! Where an instance's snapshot comes from, and how its services are opened.
//!
//! [`SnapshotSource`] finds `repos/<instance_id>` (or the other layouts the reference resolves,
//! see [`BenchRow::snapshot_dir`]); with a [`RepoLocator`] it materialises a missing snapshot on
//! the fly from a local git directory with the engine's snapshot module (atomic and idempotent, so
//! concurrent or interrupted runs are safe).
//!
//! [`ServicesOpener`] turns a snapshot folder into the services explorers call. The runner opens
//! them once per instance, shares them between that instance's explorers and drops them when the
//! instance is done, so at most `workers` snapshots are open at once whatever the benchmark size.
//! [`FsOpener`] serves straight from the folder (what the reference baselines need); an opener
//! over the engine's cached indexes plugs in the same way.
//!
//! This module knows snapshots and services; it knows nothing about explorers or result files.

use crate::dataset::BenchRow;
use std::path::{Path, PathBuf};
use std::time::Instant;
use swex_engine::snapshot::{PlainName, RepoLocator, materialize};
use swex_plugin_host::{FsBackend, RawServices};

/// Finds (and, with a locator, makes) instance snapshots.
#[derive(Debug)]
pub struct SnapshotSource {
    /// The snapshot folder: `repos/<instance_id>`.
    pub repos: PathBuf,
    /// When set, a missing snapshot is materialised into `repos/<instance_id>` at `base_commit`.
    pub locator: Option<RepoLocator>,
}

/// A snapshot ready for an instance.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedSnapshot {
    pub dir: PathBuf,
    /// Milliseconds spent materialising it (0 when it was there).
    pub materialised_ms: f64,
    /// Blobs missing from the git directory, skipped while materialising.
    pub missing_blobs: usize,
}

impl SnapshotSource {
    /// The snapshot of `row`, materialised first when missing and a locator is set.
    pub fn prepare(&self, row: &BenchRow) -> Result<PreparedSnapshot, String> {
        // `repos/<instance_id>` first: the reference's resolution only tries it for ids of the
        // `org__repo-N` form.
        // The id names a folder only when it is a plain name (`../../x` must not reach a join).
        let name = PlainName::new(row.instance_id.as_str());
        let by_id = name.as_ref().ok().map(|name| self.repos.join(name));
        let found = row
            .snapshot_dir(&self.repos)
            .or_else(|| by_id.filter(|dir| dir.is_dir()));
        if let Some(dir) = found {
            return Ok(PreparedSnapshot {
                dir,
                materialised_ms: 0.0,
                missing_blobs: 0,
            });
        }
        let Some(locator) = &self.locator else {
            return Err(format!(
                "no snapshot of {} under {} (make it with `swex snapshot`, or pass --git-dir)",
                row.instance_id,
                self.repos.display()
            ));
        };
        let (Some(repo), Some(commit)) = (row.repo.as_deref(), row.base_commit.as_deref()) else {
            return Err(format!(
                "cannot materialise {}: the row has no `repo` or `base_commit`",
                row.instance_id
            ));
        };
        let name = name.map_err(|e| format!("cannot materialise a snapshot: instance id {e}"))?;
        let started = Instant::now();
        let target = self.repos.join(&name);
        let git = locator.locate(repo, commit).map_err(|e| e.to_string())?;
        let made = materialize(&git, commit, &target, false).map_err(|e| e.to_string())?;
        Ok(PreparedSnapshot {
            dir: target,
            materialised_ms: crate::results::Timings::ms(started.elapsed()),
            missing_blobs: made.report().missing_blobs.len(),
        })
    }
}

/// Opens the services of a snapshot folder.
pub trait ServicesOpener: Send + Sync {
    /// A short name for messages and docs (`filesystem`, `engine`).
    fn name(&self) -> &str;
    /// The services, and warnings about the snapshot (unreadable files, ...).
    fn open(&self, dir: &Path) -> Result<(Box<dyn RawServices>, Vec<String>), String>;
}

/// Services straight from the snapshot folder ([`FsBackend`]): file listing, reading and grep.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsOpener;

impl ServicesOpener for FsOpener {
    fn name(&self) -> &str {
        "filesystem"
    }

    fn open(&self, dir: &Path) -> Result<(Box<dyn RawServices>, Vec<String>), String> {
        if !dir.is_dir() {
            return Err(format!("{} is not a folder", dir.display()));
        }
        let backend = FsBackend::new(dir);
        // Walk now, so that the walk is timed as opening rather than as the first explorer's call.
        let _ = backend.files();
        let warnings = backend.diagnostics().to_vec();
        Ok((Box::new(backend), warnings))
    }
}

/// An opener from a function, for backends defined elsewhere: e.g. an engine backend over
/// `Engine::open(dir)`, whose indexes come from the engine's content-addressed cache.
pub struct FnOpener<F> {
    pub name: String,
    pub open: F,
}

impl<F> ServicesOpener for FnOpener<F>
where
    F: Fn(&Path) -> Result<(Box<dyn RawServices>, Vec<String>), String> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&self, dir: &Path) -> Result<(Box<dyn RawServices>, Vec<String>), String> {
        (self.open)(dir)
    }
}
