//! What a merged result set lacks or mixes, found before `swex merge` writes anything.
//!
//! Shards of a run record their shard (`i-of-N`) in every row, and every row records what produced
//! it ([`ProducedBy`]). [`check`] groups the merged rows by (explorer, k) and finds:
//! - **missing shards**: shard `i` of `N` absent from a group whose other shards are there (a shard
//!   that the benchmark leaves empty, when the benchmark is known, is not missing);
//! - **mixed producers**: rows of one explorer made by different builds, configs or ks (or rows
//!   that do not say, next to rows that do);
//! - **unknown instances**: rows whose instance is not in the benchmark;
//! - **missing instances**: benchmark instances without a row in a group.
//!
//! The caller decides what is fatal (`swex merge`: missing shards unless allowed, mixed producers
//! unless `{run}` keeps them apart) and reports the rest. This module knows rows and shards; it
//! reads and writes nothing.

use crate::results::{ProducedBy, ResultRow};
use crate::runner::Shard;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Findings for one (explorer, k) group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupCheck {
    pub explorer: String,
    pub top_k: usize,
    /// Shard count `N` of the group's rows (none when unsharded); several means mixed splits.
    pub shard_counts: BTreeSet<usize>,
    /// Shard indexes (0-based) of `N` with no row, when `N` is unique.
    pub missing_shards: Vec<usize>,
    /// Benchmark instances without a row (only when the benchmark is known).
    pub missing_instances: Vec<String>,
}

/// Everything [`check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeCheck {
    pub groups: Vec<GroupCheck>,
    /// Instances of rows that are not in the benchmark (only when it is known), sorted.
    pub unknown_instances: Vec<String>,
    /// Explorers whose rows were made by more than one producer, with what differs.
    pub mixed_producers: Vec<(String, Vec<String>)>,
}

impl MergeCheck {
    /// Groups with missing shards, or with rows of different shard splits.
    pub fn shard_problems(&self) -> impl Iterator<Item = &GroupCheck> {
        self.groups
            .iter()
            .filter(|g| !g.missing_shards.is_empty() || g.shard_counts.len() > 1)
    }
}

/// Checks merged `rows`. `bench_ids` are the benchmark's instance ids in order, when known.
pub fn check(rows: &[ResultRow], bench_ids: Option<&[String]>) -> MergeCheck {
    let mut by_group: BTreeMap<(&str, usize), Vec<&ResultRow>> = BTreeMap::new();
    for row in rows {
        let k = row.top_k.expect("merged rows have a top_k");
        by_group.entry((&row.explorer, k)).or_default().push(row);
    }
    let mut result = MergeCheck::default();
    for ((explorer, top_k), group) in &by_group {
        let mut check = GroupCheck {
            explorer: explorer.to_string(),
            top_k: *top_k,
            ..GroupCheck::default()
        };
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        for row in group {
            if let Some(shard) = row.shard.as_deref().and_then(parse_label) {
                check.shard_counts.insert(shard.count);
                seen.insert(shard.index);
            }
        }
        if let [count] = check.shard_counts.iter().copied().collect::<Vec<_>>()[..] {
            check.missing_shards = (0..count)
                .filter(|index| !seen.contains(index))
                .filter(|&index| {
                    // A shard the benchmark leaves empty writes no rows: not missing.
                    bench_ids.is_none_or(|ids| {
                        Shard { index, count }
                            .select(ids)
                            .into_iter()
                            .any(|keep| keep)
                    })
                })
                .collect();
        }
        if let Some(ids) = bench_ids {
            let present: HashSet<&str> = group.iter().map(|r| r.instance_id.as_str()).collect();
            check.missing_instances = ids
                .iter()
                .filter(|id| !present.contains(id.as_str()))
                .cloned()
                .collect();
        }
        result.groups.push(check);
    }
    if let Some(ids) = bench_ids {
        let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
        result.unknown_instances = rows
            .iter()
            .map(|r| r.instance_id.as_str())
            .filter(|id| !known.contains(id))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(str::to_string)
            .collect();
    }
    let mut producers: BTreeMap<&str, Vec<Option<&ProducedBy>>> = BTreeMap::new();
    for row in rows {
        let list = producers.entry(&row.explorer).or_default();
        if !list.contains(&row.produced_by.as_ref()) {
            list.push(row.produced_by.as_ref());
        }
    }
    for (explorer, list) in producers {
        if let [first, second, ..] = list[..] {
            let differences = match (first, second) {
                (Some(a), Some(b)) => a.differences(b),
                _ => vec!["some rows do not record what produced them".to_string()],
            };
            result
                .mixed_producers
                .push((explorer.to_string(), differences));
        }
    }
    result
}

/// `i-of-N` → the shard.
fn parse_label(label: &str) -> Option<Shard> {
    let (index, count) = label.split_once("-of-")?;
    format!("{index}/{count}").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, explorer: &str, k: usize, shard: Option<&str>, build: &str) -> ResultRow {
        serde_json::from_value(serde_json::json!({
            "instance_id": id, "explorer": explorer, "top_k": k, "shard": shard,
            "produced_by": {"build": build, "config_digest": "blake3:0", "request_top_k": 5},
        }))
        .unwrap()
    }

    #[test]
    fn shards_instances_and_producers() {
        let ids: Vec<String> = (0..5).map(|i| format!("i-{i}")).collect();
        // Shards of 3 over 5 ids: 0 = {i-0, i-3}, 1 = {i-1, i-4}, 2 = {i-2}. Shard 1 is missing.
        let rows = [
            row("i-0", "a", 5, Some("0-of-3"), "b1"),
            row("i-3", "a", 5, Some("0-of-3"), "b1"),
            row("i-2", "a", 5, Some("2-of-3"), "b1"),
            row("zz", "a", 5, Some("2-of-3"), "b1"),
        ];
        let found = check(&rows, Some(&ids));
        assert_eq!(found.groups[0].missing_shards, [1]);
        assert_eq!(found.groups[0].missing_instances, ["i-1", "i-4"]);
        assert_eq!(found.unknown_instances, ["zz"]);
        assert!(found.mixed_producers.is_empty());
        assert_eq!(found.shard_problems().count(), 1);

        // Shards of 8 over 5 ids: 5, 6 and 7 are empty, so only 0..5 are required.
        let rows: Vec<ResultRow> = (0..5)
            .map(|i| row(&format!("i-{i}"), "a", 5, Some(&format!("{i}-of-8")), "b1"))
            .collect();
        assert_eq!(check(&rows, Some(&ids)).shard_problems().count(), 0);
        assert_eq!(check(&rows, None).groups[0].missing_shards, [5, 6, 7]);

        let mut mixed = rows.clone();
        mixed.push(row("i-0", "a", 10, Some("0-of-4"), "b2"));
        let found = check(&mixed, Some(&ids));
        assert_eq!(found.groups[1].shard_counts, BTreeSet::from([4]));
        assert_eq!(found.groups[1].missing_shards, [1, 2, 3]);
        assert_eq!(found.mixed_producers.len(), 1);
        assert!(found.mixed_producers[0].1[0].contains("explorer build"));
    }
}
