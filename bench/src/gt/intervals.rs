//! Sets of 1-based line numbers kept as sorted, disjoint, non-adjacent closed intervals.
//!
//! The ground-truth builder unions the reads of one trajectory, intersects them across
//! trajectories (core) and subtracts the core from per-model unions (optional); all three are set
//! operations on lines of one file, done here on intervals so that a 10 000-line file costs a few
//! words. This module knows nothing about files, paths or trajectories.

use std::fmt;

/// A closed interval of 1-based line numbers, `start <= end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
}

impl Interval {
    /// `None` when `start > end` or `start == 0` (line numbers are 1-based).
    pub fn new(start: u64, end: u64) -> Option<Self> {
        (start >= 1 && start <= end).then_some(Interval { start, end })
    }

    pub fn line_count(&self) -> u64 {
        self.end - self.start + 1
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

/// A set of line numbers. Invariant: intervals sorted by start, disjoint and not adjacent
/// (`a.end + 1 < b.start`), so equal sets have equal representations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LineSet {
    intervals: Vec<Interval>,
}

impl LineSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// All lines `1..=count` (empty when `count == 0`).
    pub fn whole(count: u64) -> Self {
        Self::from_interval(Interval::new(1, count))
    }

    pub fn from_interval(interval: Option<Interval>) -> Self {
        LineSet {
            intervals: interval.into_iter().collect(),
        }
    }

    pub fn from_intervals(intervals: impl IntoIterator<Item = Interval>) -> Self {
        let mut all: Vec<Interval> = intervals.into_iter().collect();
        all.sort();
        let mut merged: Vec<Interval> = Vec::with_capacity(all.len());
        for next in all {
            match merged.last_mut() {
                Some(last) if next.start <= last.end.saturating_add(1) => {
                    last.end = last.end.max(next.end)
                }
                _ => merged.push(next),
            }
        }
        LineSet { intervals: merged }
    }

    pub fn from_lines(lines: impl IntoIterator<Item = u64>) -> Self {
        Self::from_intervals(lines.into_iter().filter_map(|l| Interval::new(l, l)))
    }

    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// Number of lines in the set.
    pub fn len(&self) -> u64 {
        self.intervals.iter().map(Interval::line_count).sum()
    }

    pub fn contains(&self, line: u64) -> bool {
        let idx = self.intervals.partition_point(|iv| iv.end < line);
        self.intervals.get(idx).is_some_and(|iv| iv.start <= line)
    }

    pub fn union(&self, other: &LineSet) -> LineSet {
        Self::from_intervals(self.intervals.iter().chain(&other.intervals).copied())
    }

    pub fn intersection(&self, other: &LineSet) -> LineSet {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < self.intervals.len() && j < other.intervals.len() {
            let (a, b) = (self.intervals[i], other.intervals[j]);
            if let Some(common) = Interval::new(a.start.max(b.start), a.end.min(b.end)) {
                out.push(common);
            }
            if a.end < b.end {
                i += 1;
            } else {
                j += 1;
            }
        }
        LineSet { intervals: out }
    }

    pub fn difference(&self, other: &LineSet) -> LineSet {
        let mut out = Vec::new();
        let mut j = 0;
        for &a in &self.intervals {
            let mut start = a.start;
            while j < other.intervals.len() && other.intervals[j].end < start {
                j += 1;
            }
            let mut k = j;
            while start <= a.end {
                match other.intervals.get(k) {
                    Some(b) if b.start <= a.end => {
                        if b.start > start {
                            out.push(Interval {
                                start,
                                end: b.start - 1,
                            });
                        }
                        start = b.end.saturating_add(1);
                        k += 1;
                    }
                    _ => {
                        out.push(Interval { start, end: a.end });
                        break;
                    }
                }
            }
        }
        LineSet { intervals: out }
    }

    /// The lines of the set that are `<= count` (reads past the end of a file show nothing).
    pub fn clip(&self, count: u64) -> LineSet {
        self.intersection(&LineSet::whole(count))
    }
}

impl fmt::Display for LineSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, iv) in self.intervals.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{iv}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(spec: &[(u64, u64)]) -> LineSet {
        LineSet::from_intervals(spec.iter().map(|&(s, e)| Interval::new(s, e).unwrap()))
    }

    #[test]
    fn merges_overlapping_and_adjacent() {
        assert_eq!(
            set(&[(5, 9), (1, 3), (4, 4), (20, 22)]).to_string(),
            "1-9,20-22"
        );
    }

    #[test]
    fn intersection_and_difference() {
        let a = set(&[(1, 10), (20, 30)]);
        let b = set(&[(5, 25)]);
        assert_eq!(a.intersection(&b).to_string(), "5-10,20-25");
        assert_eq!(a.difference(&b).to_string(), "1-4,26-30");
        assert_eq!(b.difference(&a).to_string(), "11-19");
        assert_eq!(a.difference(&set(&[(1, 30)])).to_string(), "");
        assert_eq!(
            set(&[(1, 10)])
                .difference(&set(&[(3, 3), (5, 6)]))
                .to_string(),
            "1-2,4-4,7-10"
        );
    }

    #[test]
    fn contains_len_clip() {
        let a = set(&[(1, 3), (7, 9)]);
        assert!(a.contains(1) && a.contains(8) && !a.contains(5) && !a.contains(10));
        assert_eq!(a.len(), 6);
        assert_eq!(a.clip(8).to_string(), "1-3,7-8");
        assert!(LineSet::whole(0).is_empty());
    }
}
