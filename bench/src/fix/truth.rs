//! [`FixTruth`]: the localization ground truth of a fix, as stored in a bench row's
//! `ground_truth.fix`.
//!
//! - `files`: the pre-existing files the fix changes (modified, deleted or renamed: their pre-fix
//!   paths), in patch order; `new_files`: the files it creates, apart (nothing can find them at
//!   the base commit).
//! - `lines`: per pre-existing file, the pre-fix lines it edits as 1-based closed spans
//!   ([`super::patch`] says which): `str.splitlines()` lines of the pre-fix text (swex's one notion
//!   of a line, `swex_text::lines`) once [`FixTruth::add_definitions`] has read it, the patch's
//!   `\n` lines before (the same lines unless the file holds a lone `\r`, a form feed or another
//!   boundary `\n` lines do not break at).
//! - `functions` / `modules` (when the files' pre-fix text was at hand): `edited` — the entities
//!   ([`super::entities`]) that own an edited pre-fix line, or hold a pure insertion strictly
//!   inside them; `added` — entities of the post-fix files whose name no pre-fix entity of the same
//!   file has (`null` when the post-fix text is unknown: a row without a patch).
//!
//! The gold of the peers' metrics is `files` (file level), `modules.edited` and
//! `functions.edited`, as LocAgent's evaluator reads `file_changes` / `edited_modules` /
//! `edited_entities`.

use super::entities::Entities;
use super::patch::{self, FilePatch};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Edited and added entity names of one level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definitions {
    pub edited: Vec<String>,
    /// `None`: the post-fix text was not known.
    #[serde(default)]
    pub added: Option<Vec<String>>,
}

/// The ground truth of a fix (`ground_truth.fix` of a bench row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixTruth {
    pub files: Vec<String>,
    #[serde(default)]
    pub new_files: Vec<String>,
    #[serde(default)]
    pub lines: BTreeMap<String, Vec<[u64; 2]>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functions: Option<Definitions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<Definitions>,
}

/// Why the definitions of a fix could not be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    #[error("{0}")]
    Patch(#[from] patch::PatchError),
    #[error("the patch does not apply to the base commit: {path}: {reason}")]
    DoesNotApply { path: String, reason: String },
    #[error("{path}: not a file at the base commit")]
    MissingFile { path: String },
}

/// Sorted distinct lines as closed spans.
pub fn spans(lines: &[u64]) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &line in lines {
        match out.last_mut() {
            Some(span) if line <= span[1] + 1 => span[1] = span[1].max(line),
            _ => out.push([line, line]),
        }
    }
    out
}

impl FixTruth {
    /// Files and lines from a parsed patch (no file contents needed).
    pub fn from_patch(files: &[FilePatch]) -> FixTruth {
        let mut truth = FixTruth::default();
        for file in files {
            let path = file.path().to_string();
            if file.is_new() {
                if !truth.new_files.contains(&path) {
                    truth.new_files.push(path);
                }
                continue;
            }
            if !truth.files.contains(&path) {
                truth.files.push(path.clone());
            }
            let edited = file.edited_lines();
            if !edited.is_empty() {
                let entry = truth.lines.entry(path).or_default();
                let mut all: Vec<u64> = entry
                    .iter()
                    .flat_map(|s| s[0]..=s[1])
                    .chain(edited)
                    .collect();
                all.sort_unstable();
                all.dedup();
                *entry = spans(&all);
            }
        }
        truth
    }

    /// Files and lines from a row that lists them (the `edits` of `../shared/data/train`): every
    /// file named in `patch_files` without edited lines is a new file.
    pub fn from_edits(patch_files: &[String], edits: &BTreeMap<String, Vec<[u64; 2]>>) -> FixTruth {
        let mut truth = FixTruth::default();
        for path in patch_files.iter().chain(edits.keys()) {
            let known = truth.files.contains(path) || truth.new_files.contains(path);
            if known {
                continue;
            }
            if edits.get(path).is_some_and(|e| !e.is_empty()) {
                truth.files.push(path.clone());
            } else {
                truth.new_files.push(path.clone());
            }
        }
        for (path, list) in edits {
            let mut all: Vec<u64> = list.iter().flat_map(|s| s[0].max(1)..=s[1]).collect();
            all.sort_unstable();
            all.dedup();
            if !all.is_empty() {
                truth.lines.insert(path.clone(), spans(&all));
            }
        }
        truth
    }

    /// Adds `functions` and `modules` from the files' pre-fix text (`read(path)`, `None` when the
    /// file is not at the base commit) and, when the patch is given, the post-fix text; and turns
    /// `lines` from the patch's `\n` lines into the text's `str.splitlines()` lines (so call it
    /// once: [`Self::has_definitions`] says whether it ran).
    pub fn add_definitions(
        &mut self,
        patch: Option<&[FilePatch]>,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), FixError> {
        let mut edited = Vec::new();
        let mut edited_modules = Vec::new();
        let mut added: Option<(Vec<String>, Vec<String>)> = patch.map(|_| Default::default());
        let push = |list: &mut Vec<String>, name: &str| {
            if !list.iter().any(|n| n == name) {
                list.push(name.to_string());
            }
        };
        for path in &self.files {
            let old = read(path).ok_or_else(|| FixError::MissingFile { path: path.clone() })?;
            let before = Entities::of_text(path, &old);
            let file_patch = patch.and_then(|p| p.iter().find(|f| !f.is_new() && f.path() == path));
            // The patch (and the `edits` read from one) number `\n` lines; from here on the
            // lines are the pre-fix text's splitlines lines, as the entities and every metric.
            let newline_spans = swex_text::newline_line_spans(&old);
            let listed: Vec<u64> = self
                .lines
                .get(path)
                .into_iter()
                .flatten()
                .flat_map(|s| s[0]..=s[1])
                .flat_map(|line| {
                    match usize::try_from(line - 1)
                        .ok()
                        .and_then(|i| newline_spans.get(i))
                    {
                        Some(&[first, last]) => u64::from(first)..=u64::from(last),
                        None => line..=line,
                    }
                })
                .collect();
            // With the patch, insertions claim only the entity they fall strictly inside; with
            // listed lines alone, every listed line claims its owner.
            let (claimed, insertions, mut lines) = match file_patch {
                Some(_) => {
                    let (mut claimed, mut after, mut lines) = (Vec::new(), Vec::new(), Vec::new());
                    for fp in patch
                        .into_iter()
                        .flatten()
                        .filter(|f| !f.is_new() && f.path() == path)
                    {
                        let (removed, insertions) = fp.claims_in(&newline_spans);
                        claimed.extend(removed);
                        after.extend(insertions.iter().map(|&(a, _)| a));
                        lines.extend(fp.edited_lines_in(&newline_spans));
                    }
                    (claimed, after, lines)
                }
                None => (listed.clone(), Vec::new(), listed),
            };
            lines.sort_unstable();
            lines.dedup();
            if !lines.is_empty() {
                self.lines.insert(path.clone(), spans(&lines));
            }
            for line in claimed {
                if let Some(e) = before.owner(line) {
                    push(&mut edited, &e.name);
                    push(&mut edited_modules, &e.module);
                }
            }
            for after in insertions {
                if let Some(e) = before.insertion_owner(after) {
                    push(&mut edited, &e.name);
                    push(&mut edited_modules, &e.module);
                }
            }
            if let (Some(fp), Some((added, added_modules))) = (file_patch, added.as_mut())
                && let Some(new_path) = fp.new_path.as_deref()
            {
                let new = fp.apply(&old).map_err(|e| FixError::DoesNotApply {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                let after = Entities::of_text(new_path, &new);
                let old_names: BTreeSet<&str> = before
                    .entities
                    .iter()
                    .map(|e| e.name.split_once(':').map_or("", |(_, n)| n))
                    .collect();
                let old_modules: BTreeSet<&str> = before
                    .entities
                    .iter()
                    .map(|e| e.module.split_once(':').map_or("", |(_, n)| n))
                    .collect();
                for e in &after.entities {
                    let (_, name) = e.name.split_once(':').unwrap_or_default();
                    if !old_names.contains(name) {
                        push(added, &e.name);
                    }
                    let (_, module) = e.module.split_once(':').unwrap_or_default();
                    if !old_modules.contains(module) {
                        push(added_modules, &e.module);
                    }
                }
            }
        }
        if let (Some(files), Some((added, added_modules))) = (patch, added.as_mut()) {
            for fp in files.iter().filter(|f| f.is_new() && !f.binary) {
                let path = fp.path();
                let new = fp.apply("").map_err(|e| FixError::DoesNotApply {
                    path: path.to_string(),
                    reason: e.to_string(),
                })?;
                for e in &Entities::of_text(path, &new).entities {
                    push(added, &e.name);
                    push(added_modules, &e.module);
                }
            }
        }
        let (added, added_modules) = added.map_or((None, None), |(a, m)| (Some(a), Some(m)));
        self.functions = Some(Definitions { edited, added });
        self.modules = Some(Definitions {
            edited: edited_modules,
            added: added_modules,
        });
        Ok(())
    }

    /// Whether definitions were found already.
    pub fn has_definitions(&self) -> bool {
        self.functions.is_some()
    }
}

impl FixTruth {
    /// The fix truth a bench row's ground truth carries (`ground_truth.fix`), if any.
    pub fn of(gt: &crate::dataset::GroundTruth) -> Option<Result<FixTruth, String>> {
        gt.extra.get("fix").filter(|v| !v.is_null()).map(|v| {
            serde_json::from_value(v.clone()).map_err(|e| format!("ground_truth.fix: {e}"))
        })
    }
}

/// Reads repository files of a snapshot folder through the engine's one bounded, symlink-safe
/// reader ([`swex_engine::scan::CheckoutRoot::read`]), files up to the size whose lines the
/// benchmark counts ([`crate::linecounts::MAX_COUNTED_FILE_SIZE`]); invalid UTF-8 is replaced.
pub fn snapshot_reader(dir: &std::path::Path) -> impl Fn(&str) -> Option<String> + use<> {
    let root = swex_engine::scan::CheckoutRoot::new(dir).ok();
    move |path: &str| {
        let root = root.as_ref()?;
        let bytes = root
            .read(
                std::path::Path::new(path),
                crate::linecounts::MAX_COUNTED_FILE_SIZE,
            )
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}
