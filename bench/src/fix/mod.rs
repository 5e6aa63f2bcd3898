//! Ground truth from the fix: what a fix patch (or a row's list of edited lines) says a
//! localizer should find — the files it changes, the pre-fix lines it edits, and the definitions
//! (functions, methods, classes) it edits or adds.
//!
//! - [`patch`]: unified diffs read into files and hunks, the pre-fix lines they edit, applied to a
//!   pre-fix text.
//! - [`truth`]: [`FixTruth`], stored in a bench row's `ground_truth.fix`; files and lines come
//!   from the patch alone, definitions from the engine's tree-sitter definitions
//!   ([`swex_engine::lang`]) of the files at the base commit, when their text is at hand (at
//!   import with `--repos`, or when a run scores with the snapshot).
//! - [`entities`]: the one rule that maps lines of a file to definitions (`path:Class.method`),
//!   shared by the gold and by the answers scored against it.
//!
//! The rules are written down in docs/dataset.md. This module knows no dataset schema and no
//! metric.

pub mod entities;
pub mod patch;
pub mod truth;

pub use entities::{Entities, Entity};
pub use patch::{FilePatch, PatchError};
pub use truth::{Definitions, FixError, FixTruth};
