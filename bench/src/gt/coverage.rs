//! How much of an existing ground truth the reads of some trajectories cover, and why the rest
//! is missed.
//!
//! For each benchmark row with trajectories, the core lines (`read_core_regions`, resolved with
//! the file's line count and clipped to it) are compared with the union of the lines the
//! trajectories read under a [`ReadPolicy`]. Every missed line gets one cause, tried in order:
//! 1. inside a discarded read (its [`super::reads::DiscardReason`]: filtered out by the
//!    pipeline, unmappable and why, rejected action, …);
//! 2. read only under the other policy (the policies disagree about a command);
//! 3. the file was read, but not these lines;
//! 4. the file's path occurs in some action's text, but no read of it was recognised;
//! 5. the file is never mentioned (e.g. a region the official builder added by other means).

use super::intervals::LineSet;
use super::reads::{self, Extraction, ReadPolicy};
use super::repo::RepoView;
use super::trajectory::{Action, Trajectory};
use crate::dataset::BenchRow;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MissCause {
    OtherPolicyOnly(ReadPolicyName),
    /// The discard reason, explanation included.
    Discarded(String),
    OtherLinesOfFile,
    MentionedNotRead,
    NeverMentioned,
}

/// A policy name that orders and hashes (for grouping causes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadPolicyName(pub &'static str);

impl fmt::Display for MissCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MissCause::OtherPolicyOnly(p) => write!(f, "read only under the {} policy", p.0),
            MissCause::Discarded(reason) => write!(f, "discarded read: {reason}"),
            MissCause::OtherLinesOfFile => f.write_str("file read, other lines"),
            MissCause::MentionedNotRead => f.write_str("file mentioned, no read recognised"),
            MissCause::NeverMentioned => f.write_str("file never mentioned"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    pub path: String,
    pub lines: LineSet,
    pub cause: MissCause,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceCoverage {
    pub instance_id: String,
    pub trajectories: usize,
    pub core_lines: u64,
    pub covered_lines: u64,
    /// Core lines past the end of their file, left out of `core_lines`.
    pub clipped_lines: u64,
    pub misses: Vec<Miss>,
}

impl InstanceCoverage {
    pub fn fraction(&self) -> f64 {
        if self.core_lines == 0 {
            1.0
        } else {
            self.covered_lines as f64 / self.core_lines as f64
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CoverageReport {
    pub policy: ReadPolicy,
    pub instances: Vec<InstanceCoverage>,
    /// Rows that could not be measured, with the reason.
    pub skipped: Vec<(String, String)>,
}

impl CoverageReport {
    pub fn core_lines(&self) -> u64 {
        self.instances.iter().map(|i| i.core_lines).sum()
    }

    pub fn covered_lines(&self) -> u64 {
        self.instances.iter().map(|i| i.covered_lines).sum()
    }

    /// Covered / core lines, pooled over instances.
    pub fn fraction(&self) -> f64 {
        let core = self.core_lines();
        if core == 0 {
            1.0
        } else {
            self.covered_lines() as f64 / core as f64
        }
    }

    /// Mean of the per-instance fractions.
    pub fn mean_instance_fraction(&self) -> f64 {
        if self.instances.is_empty() {
            return 1.0;
        }
        self.instances
            .iter()
            .map(InstanceCoverage::fraction)
            .sum::<f64>()
            / self.instances.len() as f64
    }

    /// Missed lines per cause, largest first.
    pub fn misses_by_cause(&self) -> Vec<(MissCause, u64)> {
        let mut by: BTreeMap<MissCause, u64> = BTreeMap::new();
        for m in self.instances.iter().flat_map(|i| &i.misses) {
            *by.entry(m.cause.clone()).or_default() += m.lines.len();
        }
        let mut v: Vec<_> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// Measure the coverage of `row`'s core by the reads of `trajectories`.
pub fn measure_instance(
    row: &BenchRow,
    trajectories: &[&Trajectory],
    repo: &dyn RepoView,
    policy: ReadPolicy,
) -> InstanceCoverage {
    let other = match policy {
        ReadPolicy::Reference => ReadPolicy::Shown,
        ReadPolicy::Shown => ReadPolicy::Reference,
    };
    let main: Vec<Extraction> = trajectories
        .iter()
        .map(|t| reads::extract(t, repo, policy))
        .collect();
    let alternative: Vec<Extraction> = trajectories
        .iter()
        .map(|t| reads::extract(t, repo, other))
        .collect();
    let union = |extractions: &[Extraction], path: &str| {
        extractions
            .iter()
            .fold(LineSet::new(), |acc, e| acc.union(&e.lines_of(path)))
    };

    let mut core: BTreeMap<String, LineSet> = BTreeMap::new();
    let mut clipped = 0u64;
    for region in &row.ground_truth.read_core_regions {
        let count = repo.line_count(&region.path);
        let lines = resolve_region(region.start, region.end, count);
        let kept = match count {
            Some(c) => lines.clip(c),
            None => lines.clone(),
        };
        clipped += lines.len() - kept.len();
        let entry = core.entry(region.path.clone()).or_default();
        *entry = entry.union(&kept);
    }

    let mentions: Vec<String> = trajectories
        .iter()
        .flat_map(|t| t.steps.iter())
        .filter_map(|s| match &s.action {
            Action::Shell { command } => Some(command.clone()),
            Action::Rejected { text } => Some(text.clone()),
            Action::View { path, .. } | Action::Edit { path } => Some(path.clone()),
            Action::Window { path, .. } => path.clone(),
            Action::Other => None,
        })
        .collect();

    let mut core_lines = 0;
    let mut covered_lines = 0;
    let mut misses = Vec::new();
    for (path, lines) in &core {
        let read = union(&main, path);
        let covered = lines.intersection(&read);
        core_lines += lines.len();
        covered_lines += covered.len();
        let mut missing = lines.difference(&read);
        if missing.is_empty() {
            continue;
        }
        let mut attribute = |missing: &mut LineSet, by: &LineSet, cause: MissCause| {
            let part = missing.intersection(by);
            if !part.is_empty() {
                *missing = missing.difference(&part);
                misses.push(Miss {
                    path: path.clone(),
                    lines: part,
                    cause,
                });
            }
        };
        for discard in main.iter().flat_map(|e| &e.discards) {
            if discard.path.as_deref() == Some(path.as_str())
                && let Some(l) = &discard.lines
            {
                attribute(
                    &mut missing,
                    l,
                    MissCause::Discarded(discard.reason.to_string()),
                );
            }
        }
        attribute(
            &mut missing,
            &union(&alternative, path),
            MissCause::OtherPolicyOnly(ReadPolicyName(other.name())),
        );
        if missing.is_empty() {
            continue;
        }
        let cause = if !read.is_empty() {
            MissCause::OtherLinesOfFile
        } else if mentions.iter().any(|m| m.contains(path.as_str())) {
            MissCause::MentionedNotRead
        } else {
            MissCause::NeverMentioned
        };
        misses.push(Miss {
            path: path.clone(),
            lines: missing,
            cause,
        });
    }
    InstanceCoverage {
        instance_id: row.instance_id.clone(),
        trajectories: trajectories.len(),
        core_lines,
        covered_lines,
        clipped_lines: clipped,
        misses,
    }
}

/// A ground-truth region's lines, resolved like the reference evaluator: `end == -1` is the end
/// of the file and a negative start counts from the end (both need the line count).
fn resolve_region(start: i64, end: i64, count: Option<u64>) -> LineSet {
    let interval = if end == -1 || start < 0 {
        let Some(c) = count.filter(|&c| c >= 1) else {
            return LineSet::new();
        };
        let c = c as i64;
        let e = if end == -1 { c } else { end };
        let s = if start < 0 { c + start + 1 } else { start };
        super::intervals::Interval::new(s.clamp(1, c) as u64, e.clamp(1, c) as u64)
    } else if end < 1 {
        None
    } else {
        super::intervals::Interval::new(start.max(1) as u64, end as u64)
    };
    LineSet::from_interval(interval)
}

/// Measure every row that has trajectories. `view_for` gives the snapshot view of an instance
/// (`None`: skipped, reported).
pub fn measure(
    rows: &[BenchRow],
    trajectories: &BTreeMap<String, Vec<Trajectory>>,
    view_for: &dyn Fn(&str) -> Option<Box<dyn RepoView>>,
    policy: ReadPolicy,
) -> CoverageReport {
    let mut instances = Vec::new();
    let mut skipped = Vec::new();
    for row in rows {
        let Some(trajs) = trajectories.get(&row.instance_id) else {
            skipped.push((row.instance_id.clone(), "no trajectory".to_string()));
            continue;
        };
        let Some(view) = view_for(&row.instance_id) else {
            skipped.push((
                row.instance_id.clone(),
                "no snapshot or line counts".to_string(),
            ));
            continue;
        };
        let refs: Vec<&Trajectory> = trajs.iter().collect();
        instances.push(measure_instance(row, &refs, view.as_ref(), policy));
    }
    CoverageReport {
        policy,
        instances,
        skipped,
    }
}
