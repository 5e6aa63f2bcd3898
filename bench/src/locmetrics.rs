//! The localization metrics of the field, as LocAgent's evaluator defines them (`eval_metric.py`,
//! used unchanged by SweRank): file-, module- and function-level Acc@k, Recall@k, NDCG@k and MAP@k
//! of a ranked list of distinct locations against the gold of a fix ([`crate::fix::FixTruth`]).
//!
//! Per instance and level, with gold `G` (instances whose gold is empty are not scored at that
//! level), the ranked list `P` cut at `K` = the largest k of the level, `hit(i)` = 1 when `P[i]`
//! is in `G`, and `g = min(|G|, K)`:
//! - Acc@k = 1 when `Σ_{i<k} hit(i) = min(g, k)` (every gold location within the first k, or the
//!   first k all gold when there are more than k), else 0;
//! - Hit@k = 1 when `Σ_{i<k} hit(i) > 0` (not LocAgent's: any gold location within the first k);
//! - Recall@k = `Σ_{i<k} hit(i) / g` — note `g`, not `|G|`: LocAgent divides by the gold cut at
//!   the largest k of the run;
//! - NDCG@k = DCG(hit[..k]) / DCG(ideal[..k]), DCG(x) = `Σ x_i / log2(i + 2)`, ideal = `g` ones;
//! - MAP@k = `Σ_{i<k, hit(i)} (Σ_{j≤i} hit(j)) / (i + 1)`, divided by **k** (LocAgent's
//!   `average_precision_at_k` divides by k, not by the number of gold locations).
//!
//! A missing or failed answer is an empty list (0 everywhere). Means are plain means over the
//! scored instances. LocAgent's list of filtered instances and its rounding to 4 decimals are not
//! applied.
//!
//! An answer's regions become ranked lists with [`rank_answer`]: files in order of first
//! appearance; definitions from the lines each region holds (the innermost entity of each line,
//! [`crate::fix::entities`]), region by region in rank order; a region that covers its whole file
//! claims no definition (it names the file, not a function in it).

use crate::dataset::Region;
use crate::fix::{Entities, FixTruth};
use std::collections::{BTreeMap, HashMap};

/// A level of the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    File,
    Module,
    Function,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::File, Level::Module, Level::Function];

    pub fn name(self) -> &'static str {
        match self {
            Level::File => "file",
            Level::Module => "module",
            Level::Function => "function",
        }
    }
}

/// A metric's per-instance value from the hits, `g` and `k`.
pub type MetricFn = fn(&[bool], usize, usize) -> f64;

/// The metrics, one table: name and per-instance value. The names are the metrics list's
/// localization rows, in its order ([`crate::metric_list::LOCALIZATION_NAMES`]; a test holds them
/// equal): the list says what they are, this table how to compute them.
pub const METRICS: [(&str, MetricFn); 5] = [
    ("acc", acc_at_k),
    ("hit", hit_at_k),
    ("recall", recall_at_k),
    ("ndcg", ndcg_at_k),
    ("map", map_at_k),
];

fn hits_within(hits: &[bool], k: usize) -> usize {
    hits.iter().take(k).filter(|&&h| h).count()
}

fn acc_at_k(hits: &[bool], gold: usize, k: usize) -> f64 {
    f64::from(u8::from(hits_within(hits, k) == gold.min(k)))
}

/// Not LocAgent's: 1 when any gold location is within the first k. Issue 22's and most
/// retrieval papers' "Acc@k" on one-file fixes, where it equals LocAgent's Acc@k.
fn hit_at_k(hits: &[bool], _gold: usize, k: usize) -> f64 {
    f64::from(u8::from(hits_within(hits, k) > 0))
}

fn recall_at_k(hits: &[bool], gold: usize, k: usize) -> f64 {
    if gold == 0 {
        0.0
    } else {
        hits_within(hits, k) as f64 / gold as f64
    }
}

fn dcg(values: impl Iterator<Item = bool>) -> f64 {
    // A fold from +0.0: `Iterator::sum` of no floats is -0.0, which would print as `-0`.
    values
        .enumerate()
        .filter(|(_, h)| *h)
        .fold(0.0, |acc, (i, _)| acc + 1.0 / ((i + 2) as f64).log2())
}

fn ndcg_at_k(hits: &[bool], gold: usize, k: usize) -> f64 {
    let ideal = dcg((0..k).map(|i| i < gold));
    if ideal == 0.0 {
        0.0
    } else {
        dcg(hits.iter().take(k).copied()) / ideal
    }
}

fn map_at_k(hits: &[bool], _gold: usize, k: usize) -> f64 {
    let mut found = 0usize;
    let mut sum = 0.0;
    for (i, &hit) in hits.iter().take(k).enumerate() {
        if hit {
            found += 1;
            sum += found as f64 / (i + 1) as f64;
        }
    }
    if k == 0 { 0.0 } else { sum / k as f64 }
}

/// The ks of each level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocKs {
    pub file: Vec<usize>,
    pub module: Vec<usize>,
    pub function: Vec<usize>,
}

impl Default for LocKs {
    /// File 1, 3, 5, 10; module and function 5, 10 (the points the field publishes).
    fn default() -> Self {
        LocKs {
            file: vec![1, 3, 5, 10],
            module: vec![5, 10],
            function: vec![5, 10],
        }
    }
}

impl LocKs {
    pub fn of(&self, level: Level) -> &[usize] {
        match level {
            Level::File => &self.file,
            Level::Module => &self.module,
            Level::Function => &self.function,
        }
    }

    /// Reads `file=1,3,5;function=5,10` (levels not named keep their defaults). Every k is ≥ 1.
    pub fn parse(text: &str) -> Result<LocKs, String> {
        let mut ks = LocKs::default();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (level, list) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected LEVEL=k,k"))?;
            let values = list
                .split(',')
                .map(|k| k.trim().parse::<usize>().ok().filter(|&k| k >= 1))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("`{part}`: every k is a whole number ≥ 1"))?;
            match level.trim() {
                "file" => ks.file = values,
                "module" => ks.module = values,
                "function" => ks.function = values,
                other => return Err(format!("`{other}`: the levels are file, module, function")),
            }
        }
        Ok(ks)
    }
}

/// The metric key of a level, metric and k: `file_acc@5`.
pub fn key(level: Level, metric: &str, k: usize) -> String {
    format!("{}_{metric}@{k}", level.name())
}

/// Where a key ([`key`]) is shown among others: by level (file, module, function), then by its
/// metric's place in [`METRICS`], then by k as a number (`acc@3` before `acc@10`). Unknown parts
/// go last.
pub fn display_order(key: &str) -> (usize, usize, usize) {
    let (name, k) = key.rsplit_once('@').unwrap_or((key, ""));
    let (level, metric) = name.split_once('_').unwrap_or((name, ""));
    (
        Level::ALL
            .iter()
            .position(|l| l.name() == level)
            .unwrap_or(Level::ALL.len()),
        METRICS
            .iter()
            .position(|(m, _)| *m == metric)
            .unwrap_or(METRICS.len()),
        k.parse().unwrap_or(usize::MAX),
    )
}

/// The keys shown per group and at the end of a run: Acc@k at every level, and the file-level
/// Hit@k (a gold file within the first k: the field's other "Acc@k").
pub fn is_headline(key: &str) -> bool {
    key.contains("_acc@") || key.starts_with("file_hit@")
}

/// Scores one ranked list of one level: `None` when the gold is empty (not scored).
pub fn score_level(
    level: Level,
    ranked: &[String],
    gold: &[String],
    ks: &[usize],
) -> Option<BTreeMap<String, f64>> {
    if gold.is_empty() || ks.is_empty() {
        return None;
    }
    let max_k = ks.iter().copied().max().unwrap_or(0);
    let hits: Vec<bool> = ranked
        .iter()
        .take(max_k)
        .map(|p| gold.contains(p))
        .collect();
    let g = gold.len().min(max_k);
    let mut out = BTreeMap::new();
    for &k in ks {
        for (name, metric) in METRICS {
            out.insert(key(level, name, k), metric(&hits, g, k));
        }
    }
    Some(out)
}

/// The gold of each level from a fix's ground truth (function and module levels only when its
/// definitions are known).
pub fn gold(truth: &FixTruth) -> [(Level, Vec<String>); 3] {
    let edited = |d: &Option<crate::fix::Definitions>| {
        d.as_ref().map(|d| d.edited.clone()).unwrap_or_default()
    };
    [
        (Level::File, truth.files.clone()),
        (Level::Module, edited(&truth.modules)),
        (Level::Function, edited(&truth.functions)),
    ]
}

/// An answer as ranked distinct files, modules and functions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranked {
    pub files: Vec<String>,
    pub modules: Vec<String>,
    pub functions: Vec<String>,
}

impl Ranked {
    pub fn of(&self, level: Level) -> &[String] {
        match level {
            Level::File => &self.files,
            Level::Module => &self.modules,
            Level::Function => &self.functions,
        }
    }
}

/// Maps an answer's regions to ranked lists (see the module docs). `entities(path)` gives a
/// predicted file's entities, `None` when it cannot be read (then its regions name the file only).
pub fn rank_answer(
    regions: &[Region],
    entities: &mut dyn FnMut(&str) -> Option<Entities>,
) -> Ranked {
    let mut ranked = Ranked::default();
    let mut cache: HashMap<String, Option<Entities>> = HashMap::new();
    let push = |list: &mut Vec<String>, name: &str| {
        if !list.iter().any(|n| n == name) {
            list.push(name.to_string());
        }
    };
    for region in regions {
        push(&mut ranked.files, &region.path);
        let file = cache
            .entry(region.path.clone())
            .or_insert_with(|| entities(&region.path));
        let Some(file) = file.as_ref() else { continue };
        let n = file.line_count as i64;
        let end = if region.end == -1 { n } else { region.end };
        let start = if region.start < 0 {
            n + region.start + 1
        } else {
            region.start
        };
        if start <= 1 && end >= n {
            continue; // the whole file: it names the file, not a definition in it
        }
        if end < 1 || start > end {
            continue;
        }
        for entity in file.owners(start.max(1) as u64, end as u64) {
            push(&mut ranked.functions, &entity.name);
            push(&mut ranked.modules, &entity.module);
        }
    }
    ranked
}

/// Scores an answer against a fix's gold at every level that has gold: the `loc_metrics` of a
/// result row.
pub fn score(ranked: &Ranked, truth: &FixTruth, ks: &LocKs) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (level, gold) in gold(truth) {
        if let Some(values) = score_level(level, ranked.of(level), &gold, ks.of(level)) {
            out.extend(values);
        }
    }
    out
}

/// Reads a repository file's text (`None`: not readable).
type FileReader = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Entities of a snapshot's files, each file parsed once.
pub struct EntityCache {
    read: Box<FileReader>,
    parsed: HashMap<String, Option<Entities>>,
}

impl EntityCache {
    /// Files from a snapshot folder (never through a link out of it).
    pub fn for_snapshot(dir: &std::path::Path) -> EntityCache {
        EntityCache {
            read: Box::new(crate::fix::truth::snapshot_reader(dir)),
            parsed: HashMap::new(),
        }
    }

    /// No files at hand: every path is unreadable (answers count at file level only).
    pub fn none() -> EntityCache {
        EntityCache {
            read: Box::new(|_: &str| None),
            parsed: HashMap::new(),
        }
    }

    /// The entities of `path`, `None` when it cannot be read.
    pub fn get(&mut self, path: &str) -> Option<Entities> {
        let read = &self.read;
        self.parsed
            .entry(path.to_string())
            .or_insert_with(|| read(path).map(|text| Entities::of_text(path, &text)))
            .clone()
    }
}

/// The gold of one instance, ready to score answers.
#[derive(Debug, Clone)]
pub struct LocTruth {
    pub truth: FixTruth,
}

impl LocTruth {
    /// The row's fix truth (`None`: the row has none). When it lacks definitions and the snapshot
    /// is given, they are found from the snapshot's files and the row's `patch`; the `String` is a
    /// warning when that fails (then only the file level is scored).
    pub fn prepare(
        row: &crate::dataset::BenchRow,
        snapshot: Option<&std::path::Path>,
    ) -> Option<(LocTruth, Option<String>)> {
        let mut truth = match FixTruth::of(&row.ground_truth)? {
            Ok(truth) => truth,
            Err(e) => {
                return Some((
                    LocTruth {
                        truth: FixTruth::default(),
                    },
                    Some(e),
                ));
            }
        };
        let mut warning = None;
        if let (false, Some(dir)) = (truth.has_definitions(), snapshot) {
            let patch = row
                .extra
                .get("patch")
                .and_then(|p| p.as_str())
                .map(crate::fix::patch::parse);
            let outcome = match patch {
                Some(Err(e)) => Err(e.to_string()),
                Some(Ok(files)) => truth
                    .add_definitions(Some(&files), &crate::fix::truth::snapshot_reader(dir))
                    .map_err(|e| e.to_string()),
                None => truth
                    .add_definitions(None, &crate::fix::truth::snapshot_reader(dir))
                    .map_err(|e| e.to_string()),
            };
            if let Err(e) = outcome {
                warning = Some(format!(
                    "definitions of the fix not found ({e}): only the file level is scored"
                ));
            }
        }
        Some((LocTruth { truth }, warning))
    }

    /// The `loc_metrics` of an answer (regions in rank order).
    pub fn score(
        &self,
        regions: &[Region],
        entities: &mut EntityCache,
        ks: &LocKs,
    ) -> BTreeMap<String, f64> {
        let ranked = rank_answer(regions, &mut |path| entities.get(path));
        score(&ranked, &self.truth, ks)
    }
}

/// The key of a result row's localization metrics (in its `extra` fields).
pub const ROW_KEY: &str = "loc_metrics";

/// A result row's localization metrics, if it has them.
pub fn of_row(row: &crate::results::ResultRow) -> Option<BTreeMap<String, f64>> {
    row.extra
        .get(ROW_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Sets a result row's localization metrics.
pub fn set_row(row: &mut crate::results::ResultRow, values: &BTreeMap<String, f64>) {
    row.extra.insert(
        ROW_KEY.into(),
        serde_json::to_value(values).unwrap_or_default(),
    );
}
