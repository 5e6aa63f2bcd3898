//! Many snapshots at once: one per benchmark instance, into `<out>/<instance_id>`.
//!
//! The batch is idempotent and resumable because each snapshot is (see [`super::materialize()`]):
//! running it again skips the complete snapshots and redoes only what is missing. One instance's
//! failure (unknown commit, no git directory) is recorded for that instance and the batch goes on.
//!
//! [`RepoLocator`] finds the git directory holding a repository's commits: an explicit map, folders
//! of mirrors in the usual layouts, a map from a benchmark repository to the repository that holds
//! its commits (a fork or copy), and, if enabled, a fetch from GitHub.

use super::SnapshotError;
use super::git::GitDir;
use super::github::{GithubFetcher, split_repo};
use super::materialize::{Materialized, Report, clean_all_leftovers, materialize};
use super::paths::PlainName;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One snapshot to make: repository `repo` (`owner/name`) at `commit`, into `<out>/<instance_id>`.
/// The id is a [`PlainName`]: whoever turns input rows into jobs checks it, so that no job can name
/// a folder outside `out`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotJob {
    pub instance_id: PlainName,
    pub repo: String,
    pub commit: String,
}

/// Finds the git directory for a repository.
#[derive(Debug, Default)]
pub struct RepoLocator {
    /// `owner/name` → git directory, given explicitly. Keys may be benchmark or holder names.
    pub git_dirs: BTreeMap<String, PathBuf>,
    /// Folders searched for mirrors, in order (see [`RepoLocator::mirror_candidates`]).
    pub mirror_dirs: Vec<PathBuf>,
    /// Benchmark repository → the repository that holds its commits (e.g. a fork).
    pub sources: BTreeMap<String, String>,
    /// When set, a commit not found locally is fetched into this fetcher's cache.
    pub github: Option<GithubFetcher>,
}

impl RepoLocator {
    /// The repository names to look for, holder first: `sources[repo]`, then `repo` itself.
    fn names<'a>(&'a self, repo: &'a str) -> Vec<&'a str> {
        let mut names = Vec::with_capacity(2);
        if let Some(holder) = self.sources.get(repo) {
            names.push(holder.as_str());
        }
        if !names.contains(&repo) {
            names.push(repo);
        }
        names
    }

    /// The paths a mirror of `owner/name` may have under `dir`, in the order they are tried:
    /// `dir/owner+name/repo`, `dir/owner+name`, `dir/owner/name.git`, `dir/owner/name`.
    pub fn mirror_candidates(dir: &Path, repo: &str) -> Result<Vec<PathBuf>, SnapshotError> {
        let (owner, name) = split_repo(repo)?;
        let flat = dir.join(format!("{owner}+{name}"));
        Ok(vec![
            flat.join("repo"),
            flat,
            dir.join(owner).join(format!("{name}.git")),
            dir.join(owner).join(name),
        ])
    }

    /// The git directory holding `commit` of `repo`. A local directory is used when it has the
    /// commit (or when fetching is off, so that the error names the commit); otherwise the commit is
    /// fetched from GitHub into the cache, if enabled.
    pub fn locate(&self, repo: &str, commit: &str) -> Result<GitDir, SnapshotError> {
        let names = self.names(repo);
        let mut tried = Vec::new();
        let mut local = None;
        'search: for name in &names {
            if let Some(path) = self.git_dirs.get(*name) {
                tried.push(path.clone());
                local = Some(GitDir::open(path)?);
                break 'search;
            }
            for dir in &self.mirror_dirs {
                for candidate in Self::mirror_candidates(dir, name)? {
                    if candidate.exists() {
                        tried.push(candidate.clone());
                        local = Some(GitDir::open(&candidate)?);
                        break 'search;
                    }
                    tried.push(candidate);
                }
            }
        }
        match (local, &self.github) {
            (Some(git), None) => Ok(git),
            (Some(git), Some(_)) if git.resolve_commit(commit).is_ok() => Ok(git),
            (_, Some(github)) => github.fetch(names[0], commit),
            (None, None) => Err(SnapshotError::NoGitDir {
                repo: repo.to_string(),
                tried,
            }),
        }
    }
}

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Snapshots go to `<out>/<instance_id>`, markers to `<out>/.swex/<instance_id>.json`.
    pub out: PathBuf,
    /// Replace snapshots at another commit, and folders without a marker.
    pub force: bool,
    /// Instances materialised at the same time (at least 1).
    pub jobs: usize,
}

/// What happened to one instance.
#[derive(Debug)]
pub enum InstanceOutcome {
    Made(Report),
    AlreadyThere(Report),
    Failed(SnapshotError),
}

/// One instance's outcome and how long it took.
#[derive(Debug)]
pub struct InstanceResult {
    pub instance_id: String,
    pub repo: String,
    pub outcome: InstanceOutcome,
    pub seconds: f64,
}

impl InstanceResult {
    pub fn report(&self) -> Option<&Report> {
        match &self.outcome {
            InstanceOutcome::Made(report) | InstanceOutcome::AlreadyThere(report) => Some(report),
            InstanceOutcome::Failed(_) => None,
        }
    }
}

/// Progress of a batch, for the caller to show.
#[derive(Debug)]
pub enum Progress<'a> {
    Started {
        index: usize,
        total: usize,
        job: &'a SnapshotJob,
    },
    Finished {
        index: usize,
        total: usize,
        result: &'a InstanceResult,
    },
}

/// Every instance's result, in job order.
#[derive(Debug, Default)]
pub struct BatchReport {
    pub results: Vec<InstanceResult>,
}

impl BatchReport {
    pub fn made(&self) -> usize {
        self.count(|o| matches!(o, InstanceOutcome::Made(_)))
    }

    pub fn already_there(&self) -> usize {
        self.count(|o| matches!(o, InstanceOutcome::AlreadyThere(_)))
    }

    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, InstanceOutcome::Failed(_)))
    }

    /// Missing blobs skipped, over all snapshots present (made now or before).
    pub fn missing_blobs(&self) -> usize {
        self.reports().map(|r| r.missing_blobs.len()).sum()
    }

    /// Regular files over all snapshots present.
    pub fn files(&self) -> u64 {
        self.reports().map(|r| r.files).sum()
    }

    /// Bytes of regular files over all snapshots present.
    pub fn bytes(&self) -> u64 {
        self.reports().map(|r| r.bytes).sum()
    }

    /// Entries refused as unsafe, over all snapshots present.
    pub fn refused(&self) -> usize {
        self.reports().map(|r| r.refused.len()).sum()
    }

    /// Submodules skipped, over all snapshots present.
    pub fn submodules(&self) -> usize {
        self.reports().map(|r| r.submodules.len()).sum()
    }

    fn reports(&self) -> impl Iterator<Item = &Report> {
        self.results.iter().filter_map(InstanceResult::report)
    }

    fn count(&self, pred: impl Fn(&InstanceOutcome) -> bool) -> usize {
        self.results.iter().filter(|r| pred(&r.outcome)).count()
    }
}

/// Materialises every job into `<out>/<instance_id>`, `options.jobs` at a time, after removing the
/// temporary folders of dead runs. Fails as a whole only for duplicate instance ids or an output
/// folder that cannot be created or cleaned; every other error belongs to its instance.
pub fn run_batch(
    jobs: &[SnapshotJob],
    locator: &RepoLocator,
    options: &BatchOptions,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<BatchReport, SnapshotError> {
    let mut seen = HashSet::new();
    for job in jobs {
        if !seen.insert(job.instance_id.as_str()) {
            return Err(SnapshotError::DuplicateInstance {
                instance_id: job.instance_id.to_string(),
            });
        }
    }
    std::fs::create_dir_all(&options.out).map_err(SnapshotError::io(&options.out))?;
    clean_all_leftovers(&options.out)?;

    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<InstanceResult>>> =
        Mutex::new(std::iter::repeat_with(|| None).take(total).collect());
    let workers = options.jobs.clamp(1, total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(index) else { break };
                    progress(Progress::Started { index, total, job });
                    let result = run_one(job, locator, options);
                    progress(Progress::Finished {
                        index,
                        total,
                        result: &result,
                    });
                    slots.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(result);
                }
            });
        }
    });
    let results = slots
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|slot| slot.expect("every job index is taken by exactly one worker"))
        .collect();
    Ok(BatchReport { results })
}

fn run_one(job: &SnapshotJob, locator: &RepoLocator, options: &BatchOptions) -> InstanceResult {
    let started = Instant::now();
    let target = options.out.join(&job.instance_id);
    let outcome = quick_check(job, &target).map(Ok).unwrap_or_else(|| {
        let git = locator.locate(&job.repo, &job.commit)?;
        materialize(&git, &job.commit, &target, options.force)
    });
    let outcome = match outcome {
        Ok(Materialized::Made(report)) => InstanceOutcome::Made(report),
        Ok(Materialized::AlreadyThere(report)) => InstanceOutcome::AlreadyThere(report),
        Err(e) => InstanceOutcome::Failed(e),
    };
    InstanceResult {
        instance_id: job.instance_id.to_string(),
        repo: job.repo.clone(),
        outcome,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// A complete snapshot recording exactly the requested hash needs no git directory at all, so a
/// re-run works even where the mirrors are gone.
fn quick_check(job: &SnapshotJob, target: &Path) -> Option<Materialized> {
    let layout = super::materialize::SnapshotLayout::new(target).ok()?;
    let marker = layout.read_marker()?;
    marker
        .report
        .commit
        .eq_ignore_ascii_case(&job.commit)
        .then_some(Materialized::AlreadyThere(marker.report))
}
