//! The one list of the benchmark's metrics: each metric's name, which way is better, whether it is
//! one of the reference evaluator's 17 or an extra of ours, and where the summaries show it.
//!
//! Everything that names a metric reads this list: [`crate::metrics::Metrics::NAMES`] (the order
//! of the result rows' `metrics` object, the CSV columns and the score table), the key-metric
//! views of the reports and of `swex bench`'s end-of-run table ([`KEY_NAMES`], with their short
//! labels), the reports' real-length and trade-off views ([`REAL_LENGTH_VIEW`], [`TRADEOFF_VIEW`]),
//! and LocAgent's localization metrics ([`crate::locmetrics::METRICS`]). docs/metrics.md
//! carries the same list as a table, checked against this one by a test.
//!
//! ```
//! use swex_bench::metric_list::{Direction, Kind, METRICS};
//!
//! let noise = METRICS.iter().find(|m| m.name == "noise_file_rate").unwrap();
//! assert_eq!(noise.direction, Direction::Lower);
//! assert_eq!(noise.kind, Kind::Reference);
//! ```

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Higher,
    Lower,
}

impl Direction {
    /// The word the docs use.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
        }
    }
}

/// Where a metric comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One of the 17 metrics of the reference evaluator, computed exactly as it does (each is also
    /// counted with every predicted file's real length, `real_metrics`).
    Reference,
    /// Ours: what the reference counting cannot see (the lines an answer costs its reader).
    Extra,
    /// LocAgent's localization metrics, per level and k (`<level>_<name>@<k>`).
    Localization,
}

impl Kind {
    /// The word the docs use.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Reference => "reference",
            Kind::Extra => "extra",
            Kind::Localization => "localization",
        }
    }
}

/// One metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricInfo {
    /// Its key in result rows, JSON and CSV.
    pub name: &'static str,
    pub direction: Direction,
    pub kind: Kind,
    /// Its short label when it is a key metric: shown in the breakdown tables, the key-metrics
    /// chart and `swex bench`'s end-of-run table; `None` for the others.
    pub label: Option<&'static str>,
}

const fn reference(
    name: &'static str,
    direction: Direction,
    label: Option<&'static str>,
) -> MetricInfo {
    MetricInfo {
        name,
        direction,
        kind: Kind::Reference,
        label,
    }
}

const fn other(name: &'static str, direction: Direction, kind: Kind) -> MetricInfo {
    MetricInfo {
        name,
        direction,
        kind,
        label: None,
    }
}

use Direction::{Higher, Lower};

/// Every metric. The reference ones come first, in the reference evaluator's order (the order of
/// its result rows and of ours).
pub const METRICS: [MetricInfo; 23] = [
    reference("precision", Higher, Some("P")),
    reference("recall", Higher, Some("R")),
    reference("f1_score", Higher, Some("F1")),
    reference("hit_file_rate", Higher, Some("hitF")),
    reference("noise_file_rate", Lower, None),
    reference("hit_region_rate", Higher, Some("hitR")),
    reference("noise_region_rate", Lower, None),
    reference("weighted_core_coverage", Higher, Some("WCC")),
    reference("context_efficiency", Higher, None),
    reference("optional_coverage", Higher, None),
    reference("ndcg_at_100", Higher, None),
    reference("ndcg_at_300", Higher, None),
    reference("ndcg_at_500", Higher, Some("nDCG@500")),
    reference("recall_at_100", Higher, None),
    reference("recall_at_300", Higher, None),
    reference("recall_at_500", Higher, Some("R@500")),
    reference("first_useful_hit", Higher, Some("FUH")),
    other("lines_returned", Lower, Kind::Extra),
    other("acc", Higher, Kind::Localization),
    other("hit", Higher, Kind::Localization),
    other("recall", Higher, Kind::Localization),
    other("ndcg", Higher, Kind::Localization),
    other("map", Higher, Kind::Localization),
];

const fn count(kind: Kind, key_only: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < METRICS.len() {
        let m = &METRICS[i];
        if m.kind as u8 == kind as u8 && (!key_only || m.label.is_some()) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// How many reference metrics there are (17).
pub const REFERENCE_COUNT: usize = count(Kind::Reference, false);
const KEY_COUNT: usize = count(Kind::Reference, true);

const fn names<const N: usize>(kind: Kind, key_only: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let mut n = 0;
    let mut i = 0;
    while i < METRICS.len() {
        let m = &METRICS[i];
        if m.kind as u8 == kind as u8 && (!key_only || m.label.is_some()) {
            out[n] = m.name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The reference metrics' names, in the reference order.
pub const REFERENCE_NAMES: [&str; REFERENCE_COUNT] = names(Kind::Reference, false);

/// The key metrics (those with a label), in the reference order.
pub const KEY_NAMES: [&str; KEY_COUNT] = names(Kind::Reference, true);

/// The key metrics with their short labels, in the reference order.
pub fn key_labels() -> impl Iterator<Item = (&'static str, &'static str)> {
    METRICS
        .iter()
        .filter(|m| m.kind == Kind::Reference)
        .filter_map(|m| Some((m.name, m.label?)))
}

/// The localization metrics' names (each per level and k), in LocAgent's order.
pub const LOCALIZATION_NAMES: [&str; count(Kind::Localization, false)] =
    names(Kind::Localization, false);

/// The reference metrics of the reports' real-length tables, in their column order: what a
/// reader of the answer gets per line read (a presentation order, not the reference one).
pub const REAL_LENGTH_VIEW: [&str; 9] = [
    "hit_file_rate",
    "recall",
    "precision",
    "context_efficiency",
    "recall_at_100",
    "recall_at_500",
    "ndcg_at_500",
    "first_useful_hit",
    "noise_file_rate",
];

/// The reference metrics of the reports' trade-off charts (each counted with real lengths,
/// against the lines returned), in chart order.
pub const TRADEOFF_VIEW: [&str; 8] = [
    "recall",
    "precision",
    "context_efficiency",
    "hit_file_rate",
    "recall_at_100",
    "recall_at_500",
    "ndcg_at_500",
    "first_useful_hit",
];

/// The metric of `kind` called `name`.
pub fn find(kind: Kind, name: &str) -> Option<&'static MetricInfo> {
    METRICS.iter().find(|m| m.kind == kind && m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_kind() {
        for (i, a) in METRICS.iter().enumerate() {
            for b in &METRICS[i + 1..] {
                assert!(a.kind != b.kind || a.name != b.name, "{} twice", a.name);
            }
        }
    }

    #[test]
    fn the_derived_lists_follow_the_table() {
        assert_eq!(REFERENCE_COUNT, 17);
        assert_eq!(REFERENCE_NAMES[0], "precision");
        assert_eq!(REFERENCE_NAMES[16], "first_useful_hit");
        let keys: Vec<&str> = key_labels().map(|(n, _)| n).collect();
        assert_eq!(keys, KEY_NAMES);
        assert_eq!(LOCALIZATION_NAMES, ["acc", "hit", "recall", "ndcg", "map"]);
        assert_eq!(
            find(Kind::Extra, "lines_returned").unwrap().direction,
            Lower
        );
    }

    #[test]
    fn the_views_name_reference_metrics_once() {
        for view in [&REAL_LENGTH_VIEW[..], &TRADEOFF_VIEW[..]] {
            for (i, name) in view.iter().enumerate() {
                assert!(find(Kind::Reference, name).is_some(), "{name}");
                assert!(!view[..i].contains(name), "{name} twice");
            }
        }
    }
}
