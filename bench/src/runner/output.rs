//! Where rows go: the output template and the set of open result files.
//!
//! The template is a path with placeholders `{explorer}`, `{k}`, `{shard}` and `{run}` (the
//! reference's default is `results/{explorer}/top{k}.jsonl`). `{run}` is a short id of what
//! produces an explorer's rows ([`crate::results::ProducedBy::run_id`]: build, config, k asked
//! for), so that runs that differ write different files instead of mixing. Several (explorer, k) pairs may share a file when
//! the template leaves a placeholder out: rows carry both, so nothing is ambiguous.
//!
//! [`ResultSink`] opens every file of a run once, remembers which keys each already holds (for
//! `--resume`), and appends rows under one lock so that lines of concurrent workers never
//! interleave.

use crate::results::{OpenMode, Recovered, ResultFile, ResultRow, ResultsError, RowKey};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use swex_engine::snapshot::PlainName;

/// An output path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTemplate(pub String);

/// The reference runner's layout.
pub const DEFAULT_OUTPUT: &str = "results/{explorer}/top{k}.jsonl";

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error(
        "output template {template:?}: unknown placeholder {{{name}}} (use {{explorer}}, {{k}}, {{shard}}, {{run}})"
    )]
    UnknownPlaceholder { template: String, name: String },
    #[error("output template {template:?}: unbalanced braces")]
    Unbalanced { template: String },
}

impl OutputTemplate {
    /// Checks the placeholders.
    pub fn new(template: impl Into<String>) -> Result<OutputTemplate, TemplateError> {
        let template = template.into();
        let mut rest = template.as_str();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or_else(|| TemplateError::Unbalanced {
                template: template.clone(),
            })?;
            let name = &after[..close];
            if !matches!(name, "explorer" | "k" | "shard" | "run") {
                return Err(TemplateError::UnknownPlaceholder {
                    template: template.clone(),
                    name: name.to_string(),
                });
            }
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(TemplateError::Unbalanced { template });
        }
        Ok(OutputTemplate(template))
    }

    /// The path of the rows of `explorer` at `k` (`shard` is `i-of-N`, or empty without sharding;
    /// `run` the producer's run id). The explorer's name comes from input (the command line, a
    /// plugin, a result row), hence a [`PlainName`]: `{explorer}` can only ever fill one path
    /// component.
    pub fn path(&self, explorer: &PlainName, k: usize, shard: &str, run: &str) -> PathBuf {
        PathBuf::from(
            self.0
                .replace("{explorer}", explorer.as_str())
                .replace("{k}", &k.to_string())
                .replace("{shard}", shard)
                .replace("{run}", run),
        )
    }

    pub fn has(&self, placeholder: &str) -> bool {
        self.0.contains(&format!("{{{placeholder}}}"))
    }
}

/// The open result files of a run.
#[derive(Debug)]
pub struct ResultSink {
    files: Mutex<BTreeMap<PathBuf, ResultFile>>,
    routes: BTreeMap<(String, usize), PathBuf>,
}

/// What opening the files found.
#[derive(Debug, Default)]
pub struct OpenedFiles {
    /// Rows already present, by file.
    pub recovered: BTreeMap<PathBuf, Recovered>,
}

impl ResultSink {
    /// Opens the file of every (explorer, k) pair; `explorers` are (name, run id) pairs.
    pub fn open(
        template: &OutputTemplate,
        explorers: &[(PlainName, String)],
        top_ks: &[usize],
        shard: &str,
        mode: OpenMode,
    ) -> Result<(ResultSink, OpenedFiles), ResultsError> {
        let mut routes = BTreeMap::new();
        let mut files = BTreeMap::new();
        let mut opened = OpenedFiles::default();
        for (explorer, run) in explorers {
            for &k in top_ks {
                let path = template.path(explorer, k, shard, run);
                routes.insert((explorer.to_string(), k), path.clone());
                if files.contains_key(&path) {
                    continue;
                }
                // Reference rows without `top_k` can only be told apart by the file's k.
                let default_k = template.has("k").then_some(k);
                let (file, recovered) = ResultFile::open(&path, mode, default_k)?;
                files.insert(path.clone(), file);
                opened.recovered.insert(path, recovered);
            }
        }
        Ok((
            ResultSink {
                files: Mutex::new(files),
                routes,
            },
            opened,
        ))
    }

    fn route(&self, explorer: &str, k: usize) -> &Path {
        self.routes
            .get(&(explorer.to_string(), k))
            .expect("rows are only written for the explorers and ks the sink was opened for")
    }

    /// Whether the row of `key` is already written.
    pub fn contains(&self, key: &RowKey) -> bool {
        let path = self.route(&key.explorer, key.top_k);
        self.files.lock().expect("sink lock")[path].contains(key)
    }

    /// Appends the rows (normally all ks of one explorer call) under one lock.
    pub fn append(&self, rows: &[ResultRow]) -> Result<(), ResultsError> {
        let mut files = self.files.lock().expect("sink lock");
        for row in rows {
            let path = self.route(&row.explorer, row.top_k.expect("runner rows have top_k"));
            files
                .get_mut(path)
                .expect("every route has an open file")
                .append(row)?;
        }
        Ok(())
    }

    /// The paths written, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files
            .lock()
            .expect("sink lock")
            .keys()
            .cloned()
            .collect()
    }

    /// Syncs and closes every file.
    pub fn finish(self) -> Result<Vec<PathBuf>, ResultsError> {
        let files = self.files.into_inner().expect("sink lock");
        let paths = files.keys().cloned().collect();
        for file in files.into_values() {
            file.finish()?;
        }
        Ok(paths)
    }
}

/// `--shard i/N`: this process runs the instances whose position in the sorted list of selected
/// instance ids is `i` modulo `N` (0-based `i`, as Slurm array task ids and Kubernetes completion
/// indexes are). Every instance belongs to exactly one shard, and the shards differ in size by at
/// most one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

#[derive(Debug, thiserror::Error)]
#[error("--shard {0:?}: expected i/N with 0 <= i < N, e.g. 0/4")]
pub struct ShardError(String);

impl std::str::FromStr for Shard {
    type Err = ShardError;
    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(text.to_string());
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The `{shard}` placeholder's value: `0-of-4`.
    pub fn label(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }

    /// Which of `ids` this shard runs, as a keep-mask in the order given.
    pub fn select<S: AsRef<str>>(&self, ids: &[S]) -> Vec<bool> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by(|&a, &b| ids[a].as_ref().cmp(ids[b].as_ref()));
        let mut keep = vec![false; ids.len()];
        for (position, &index) in order.iter().enumerate() {
            keep[index] = position % self.count == self.index;
        }
        keep
    }
}
