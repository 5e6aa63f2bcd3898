//! One snapshot: a commit's tree written into a folder, atomically, with a sidecar marker.
//!
//! For a target `P/<name>`, the work happens next to it in `P/.swex/`:
//! - `P/.swex/tmp/<name>.<pid>.<n>`: the folder being written; renamed to `P/<name>` when complete.
//! - `P/.swex/<name>.json`: the [`SnapshotMarker`] (commit, counts, skipped paths). It lives outside
//!   the tree so explorers, which walk `P/<name>`, never see it.
//!
//! A snapshot is complete when both the folder and its marker exist. The publish order (old folder
//! moved aside and its marker removed, new marker written, new folder renamed into place) means a
//! process killed at any point leaves either no snapshot or a complete one; temporary folders of
//! dead processes are removed by the next run that targets the same name.
//!
//! Writing never follows a symlink: regular files are created with `O_EXCL`, every directory is
//! created before the first symlink, and symlinks are created last.

use super::SnapshotError;
use super::git::{BlobAnswer, EntryKind, GitDir};
use super::paths::{NameError, NameProblem, PlainName, RefusalReason, SymlinkTable, sanitize};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What writing one snapshot did. Paths are the tree's paths (lossy UTF-8 if git's bytes are not).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The full hash of the commit written.
    pub commit: String,
    /// Regular files written (executables included).
    pub files: u64,
    /// Bytes of regular files written.
    pub bytes: u64,
    /// Symlinks created (each resolves inside the snapshot).
    pub symlinks: u64,
    /// Entries whose blob is absent from the git directory (partial copies), not written.
    pub missing_blobs: Vec<String>,
    /// Entries refused as unsafe or unrepresentable, with the reason.
    pub refused: Vec<RefusedEntry>,
    /// Submodule entries (commits of other repositories), not written.
    pub submodules: Vec<String>,
}

/// A tree entry that was not written, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedEntry {
    pub path: String,
    pub reason: RefusalReason,
}

/// The sidecar that says a snapshot folder is complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMarker {
    /// Marker format version.
    pub format: u32,
    /// The revision as requested (the report holds the resolved hash).
    pub requested: String,
    /// The git directory it was read from.
    pub git_dir: String,
    /// The swex-engine version that wrote it.
    pub made_by: String,
    pub report: Report,
}

const MARKER_FORMAT: u32 = 1;

/// The outcome of [`materialize`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Materialized {
    /// The snapshot was written now.
    Made(Report),
    /// A complete snapshot of the same commit was already there; nothing was written.
    AlreadyThere(Report),
}

impl Materialized {
    pub fn report(&self) -> &Report {
        match self {
            Materialized::Made(report) | Materialized::AlreadyThere(report) => report,
        }
    }
}

/// Where a snapshot, its marker and its temporary folders live.
#[derive(Debug, Clone)]
pub struct SnapshotLayout {
    target: PathBuf,
    name: String,
    state_dir: PathBuf,
}

/// What is at a snapshot's target before we write.
enum Existing {
    Nothing,
    Complete(SnapshotMarker),
    Unmarked(String),
}

impl SnapshotLayout {
    /// The layout for `target`, whose last component must be a [`PlainName`] (it names the
    /// marker, and `.swex` must stay the state folder).
    pub fn new(target: &Path) -> Result<SnapshotLayout, SnapshotError> {
        let not_utf8 = || NameError {
            name: target.display().to_string(),
            problem: NameProblem::NotUtf8,
        };
        let name = match target.file_name() {
            Some(name) => PlainName::new(name.to_str().ok_or_else(not_utf8)?)?,
            // `x/..`, `/`: no last component at all.
            None => PlainName::new(target.display().to_string())?,
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(SnapshotLayout {
            target: target.to_path_buf(),
            name: name.as_str().to_string(),
            state_dir: parent.join(".swex"),
        })
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The sidecar marker file: `<parent>/.swex/<name>.json`.
    pub fn marker_path(&self) -> PathBuf {
        self.state_dir.join(format!("{}.json", self.name))
    }

    fn tmp_dir(&self) -> PathBuf {
        self.state_dir.join("tmp")
    }

    /// A fresh temporary path next to the target, named `<name>.<pid>.<n>` so that leftovers can
    /// be told apart from the work of a live process.
    fn fresh_tmp(&self, suffix: &str) -> PathBuf {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        self.tmp_dir()
            .join(format!("{}.{}.{n}{suffix}", self.name, std::process::id()))
    }

    /// The complete snapshot's marker, if the snapshot is complete.
    pub fn read_marker(&self) -> Option<SnapshotMarker> {
        match self.existing() {
            Existing::Complete(marker) => Some(marker),
            _ => None,
        }
    }

    fn existing(&self) -> Existing {
        if fs::symlink_metadata(&self.target).is_err() {
            return Existing::Nothing;
        }
        let marker_path = self.marker_path();
        let text = match fs::read_to_string(&marker_path) {
            Ok(text) => text,
            Err(e) => return Existing::Unmarked(e.to_string()),
        };
        match serde_json::from_str::<SnapshotMarker>(&text) {
            Ok(marker) => Existing::Complete(marker),
            Err(e) => Existing::Unmarked(format!("unreadable marker: {e}")),
        }
    }

    /// Removes temporary folders left for this name by processes that no longer run.
    pub fn clean_leftovers(&self) -> Result<(), SnapshotError> {
        clean_dead_leftovers(&self.tmp_dir(), Some(&self.name))
    }
}

/// Removes every temporary folder (and marker) left in `<out>/.swex/tmp` by processes that no
/// longer run, whatever snapshot it was for. A batch calls this first, so leftovers of instances
/// that are complete, and will not be rebuilt, go too.
pub fn clean_all_leftovers(out: &Path) -> Result<(), SnapshotError> {
    clean_dead_leftovers(&out.join(".swex").join("tmp"), None)
}

fn clean_dead_leftovers(dir: &Path, only: Option<&str>) -> Result<(), SnapshotError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(SnapshotError::io(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(SnapshotError::io(dir))?;
        let file_name = entry.file_name();
        let Some((name, pid)) = file_name.to_str().and_then(parse_tmp_name) else {
            continue;
        };
        if only.is_none_or(|only| only == name) && !process_is_alive(pid) {
            remove_any(&entry.path())?;
        }
    }
    Ok(())
}

/// `<name>.<pid>.<n>[.old]` → (name, pid).
fn parse_tmp_name(file_name: &str) -> Option<(&str, u32)> {
    let base = [".old", ".json"]
        .iter()
        .find_map(|suffix| file_name.strip_suffix(suffix))
        .unwrap_or(file_name);
    let mut parts = base.rsplitn(3, '.');
    let _n: u64 = parts.next()?.parse().ok()?;
    let pid: u32 = parts.next()?.parse().ok()?;
    Some((parts.next()?, pid))
}

/// Whether a process with `pid` runs. Our own process counts as alive (its other threads may be
/// writing); elsewhere `/proc` answers on Linux. Without `/proc`, other pids count as dead, which
/// is only wrong if two swex processes write the same snapshot at once.
fn process_is_alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

fn remove_any(path: &Path) -> Result<(), SnapshotError> {
    let result = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    result.map_err(SnapshotError::io(path))
}

/// Writes the tree of `rev` in `git` to `target`, atomically. An existing complete snapshot of the
/// same commit is kept (quickly: no git call when `rev` is the full hash it records); a different
/// commit, or a folder without a marker, is an error unless `force`.
pub fn materialize(
    git: &GitDir,
    rev: &str,
    target: &Path,
    force: bool,
) -> Result<Materialized, SnapshotError> {
    let layout = SnapshotLayout::new(target)?;
    let existing = layout.existing();
    if let Existing::Complete(marker) = &existing
        && marker.report.commit.eq_ignore_ascii_case(rev)
    {
        return Ok(Materialized::AlreadyThere(marker.report.clone()));
    }
    let commit = git.resolve_commit(rev)?;
    match existing {
        Existing::Complete(marker) if marker.report.commit == commit => {
            return Ok(Materialized::AlreadyThere(marker.report));
        }
        Existing::Complete(marker) if !force => {
            return Err(SnapshotError::ExistsAtOtherCommit {
                target: target.to_path_buf(),
                existing: marker.report.commit,
                wanted: commit,
            });
        }
        Existing::Unmarked(detail) if !force => {
            return Err(SnapshotError::ExistsUnmarked {
                target: target.to_path_buf(),
                marker: layout.marker_path(),
                detail,
            });
        }
        _ => {}
    }

    layout.clean_leftovers()?;
    let tmp = layout.fresh_tmp("");
    fs::create_dir_all(&tmp).map_err(SnapshotError::io(&tmp))?;
    let report = match write_tree(git, &commit, &tmp) {
        Ok(report) => report,
        Err(e) => {
            let _ = remove_any(&tmp);
            return Err(e);
        }
    };
    let marker = SnapshotMarker {
        format: MARKER_FORMAT,
        requested: rev.to_string(),
        git_dir: git.path().display().to_string(),
        made_by: format!("swex-engine {}", env!("CARGO_PKG_VERSION")),
        report,
    };
    if let Err(e) = publish(&layout, &tmp, &marker) {
        let _ = remove_any(&tmp);
        return Err(e);
    }
    Ok(Materialized::Made(marker.report))
}

/// Moves a finished temporary folder into place. Order matters for crash safety: see the module
/// documentation.
fn publish(
    layout: &SnapshotLayout,
    tmp: &Path,
    marker: &SnapshotMarker,
) -> Result<(), SnapshotError> {
    let target = layout.target();
    let marker_path = layout.marker_path();
    let mut old = None;
    if fs::symlink_metadata(target).is_ok() {
        let aside = layout.fresh_tmp(".old");
        fs::rename(target, &aside).map_err(SnapshotError::io(target))?;
        old = Some(aside);
    }
    match fs::remove_file(&marker_path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(SnapshotError::io(&marker_path)(e));
        }
        _ => {}
    }
    let marker_tmp = layout.fresh_tmp(".json");
    let json = serde_json::to_vec_pretty(marker).expect("a marker always serialises");
    fs::write(&marker_tmp, json).map_err(SnapshotError::io(&marker_tmp))?;
    fs::rename(&marker_tmp, &marker_path).map_err(SnapshotError::io(&marker_path))?;
    fs::rename(tmp, target).map_err(SnapshotError::io(target))?;
    if let Some(old) = old {
        remove_any(&old)?;
    }
    Ok(())
}

/// A tree entry that will be written, with its file-system path.
struct Planned<'a> {
    kind: EntryKind,
    object: &'a str,
    git_path: &'a [u8],
    path: PathBuf,
}

/// Writes every safe entry of `commit` into the existing, empty folder `root` (not atomic: see
/// [`materialize`]).
fn write_tree(git: &GitDir, commit: &str, root: &Path) -> Result<Report, SnapshotError> {
    let entries = git.list_tree(commit)?;
    let mut report = Report {
        commit: commit.to_string(),
        ..Report::default()
    };
    let mut planned = Vec::with_capacity(entries.len());
    for entry in &entries {
        let shown = String::from_utf8_lossy(&entry.path).into_owned();
        if entry.kind == EntryKind::Submodule {
            report.submodules.push(shown);
            continue;
        }
        match sanitize(&entry.path) {
            Ok(path) => planned.push(Planned {
                kind: entry.kind,
                object: &entry.object,
                git_path: &entry.path,
                path,
            }),
            Err(reason) => report.refused.push(RefusedEntry {
                path: shown,
                reason,
            }),
        }
    }

    let mut dirs = DirMaker::new(root);
    let mut links: Vec<(usize, Vec<u8>)> = Vec::new();
    let ids: Vec<&str> = planned.iter().map(|p| p.object).collect();
    git.stream_blobs(&ids, |index, answer| {
        let entry = &planned[index];
        let content = match answer {
            BlobAnswer::Missing => {
                report
                    .missing_blobs
                    .push(String::from_utf8_lossy(entry.git_path).into_owned());
                return Ok(());
            }
            BlobAnswer::Present { content, .. } => content,
        };
        if entry.kind == EntryKind::Symlink {
            let mut target = Vec::new();
            content
                .take(MAX_LINK_TARGET)
                .read_to_end(&mut target)
                .map_err(SnapshotError::io(&entry.path))?;
            links.push((index, target));
            return Ok(());
        }
        let written = dirs.parent_of(&entry.path).and_then(|()| {
            write_file(
                &root.join(&entry.path),
                entry.kind == EntryKind::Executable,
                content,
            )
        });
        match written {
            Ok(bytes) => {
                report.files += 1;
                report.bytes += bytes;
            }
            Err(e) if is_conflict(&e) => report.refused.push(RefusedEntry {
                path: String::from_utf8_lossy(entry.git_path).into_owned(),
                reason: RefusalReason::Conflict,
            }),
            Err(e) => return Err(SnapshotError::io(root.join(&entry.path))(e)),
        }
        Ok(())
    })?;

    write_symlinks(root, &planned, &links, &mut dirs, &mut report)?;
    Ok(report)
}

/// Symlink targets longer than this are refused (Linux's `PATH_MAX`).
const MAX_LINK_TARGET: u64 = 4096;

/// Creates the symlinks whose targets stay inside the snapshot. All their parent directories are
/// created before the first symlink, so no directory creation can pass through a symlink.
fn write_symlinks(
    root: &Path,
    planned: &[Planned<'_>],
    links: &[(usize, Vec<u8>)],
    dirs: &mut DirMaker,
    report: &mut Report,
) -> Result<(), SnapshotError> {
    let mut table = SymlinkTable::default();
    for (index, target) in links {
        table.insert(planned[*index].git_path.to_vec(), target.clone());
    }
    let mut accepted = Vec::new();
    for (index, target) in links {
        let entry = &planned[*index];
        let verdict = if target.len() as u64 >= MAX_LINK_TARGET {
            Err(RefusalReason::Unrepresentable)
        } else {
            table.check(entry.git_path, target)
        };
        let verdict = match verdict.map(|()| dirs.parent_of(&entry.path)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if is_conflict(&e) => Err(RefusalReason::Conflict),
            Ok(Err(e)) => return Err(SnapshotError::io(root.join(&entry.path))(e)),
            Err(reason) => Err(reason),
        };
        match verdict {
            Ok(()) => accepted.push((entry, target)),
            Err(reason) => report.refused.push(RefusedEntry {
                path: String::from_utf8_lossy(entry.git_path).into_owned(),
                reason,
            }),
        }
    }
    for (entry, target) in accepted {
        let path = root.join(&entry.path);
        match make_symlink(target, &path) {
            Ok(()) => report.symlinks += 1,
            Err(e) if is_conflict(&e) => report.refused.push(RefusedEntry {
                path: String::from_utf8_lossy(entry.git_path).into_owned(),
                reason: RefusalReason::Conflict,
            }),
            Err(e) if e.kind() == io::ErrorKind::Unsupported => report.refused.push(RefusedEntry {
                path: String::from_utf8_lossy(entry.git_path).into_owned(),
                reason: RefusalReason::Unrepresentable,
            }),
            Err(e) => return Err(SnapshotError::io(path)(e)),
        }
    }
    Ok(())
}

/// An entry collides with another entry of the same (malformed) tree.
fn is_conflict(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory
    )
}

/// Creates each parent directory once (a snapshot has thousands of files in few folders).
struct DirMaker {
    root: PathBuf,
    made: HashSet<PathBuf>,
}

impl DirMaker {
    fn new(root: &Path) -> DirMaker {
        DirMaker {
            root: root.to_path_buf(),
            made: HashSet::new(),
        }
    }

    fn parent_of(&mut self, relative: &Path) -> io::Result<()> {
        let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(());
        };
        if self.made.contains(parent) {
            return Ok(());
        }
        fs::create_dir_all(self.root.join(parent))?;
        self.made.insert(parent.to_path_buf());
        Ok(())
    }
}

/// Creates `path` (which must not exist: `O_EXCL` also refuses to follow a symlink there) and
/// copies `content` into it. Returns the bytes written.
fn write_file(path: &Path, executable: bool, content: &mut dyn Read) -> io::Result<u64> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    let mut file = options.open(path)?;
    io::copy(content, &mut file)
}

#[cfg(unix)]
fn make_symlink(target: &[u8], path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), path)
}

#[cfg(not(unix))]
fn make_symlink(_target: &[u8], _path: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symlinks are only created on Unix",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmp_names_round_trip() {
        assert_eq!(
            parse_tmp_name("django__django-1.42.7"),
            Some(("django__django-1", 42))
        );
        assert_eq!(parse_tmp_name("a.b.42.7.old"), Some(("a.b", 42)));
        assert_eq!(parse_tmp_name("a.b.42.7.json"), Some(("a.b", 42)));
        assert_eq!(parse_tmp_name("a.b.x.7"), None);
        assert_eq!(parse_tmp_name("README"), None);
    }
}
