//! swex-issue: what an issue text names — swex's one issue parser.
//!
//! Explorers, the engine's lexical search and the `issue_clues` service all read issues through
//! this crate, so that a traceback frame, a path or an identifier means the same everywhere:
//!
//! - [`clues`] (always compiled): the types — [`IssueClues`], [`Frame`], [`WeightedTerm`] — as
//!   the `issue_clues` service returns them; the plugin SDK re-exports them.
//! - with the `parse` feature (default; it brings `regex`):
//!   - [`environment`]: the reporter's environment listings (`numpy: 1.23.4`), not their words;
//!   - [`frames`]: traceback frames and source locations of six syntaxes, IPython's too;
//!   - [`markup`]: what a reader of the rendered issue sees (HTML comments of issue templates
//!     removed, code kept);
//!   - [`paths`]: which words are file paths and paths inside source-browser links (hints made
//!     repository-relative: `swex_text::hints`);
//!   - [`words`]: the one rule of a word written like code, acronyms, stop words;
//!   - [`parse`](mod@parse): [`parse()`] → [`IssueClues`], including the weighted terms the
//!     engine's lexical search runs;
//!   - [`ranking`]: the reading of the `swex` explorer's file ranking (title, segments and their
//!     weights, environment dumps removed, normalised words);
//!   - [`mentions`]: the reading of the `graph` explorer's seeds (names by mention count).
//!
//! All three readings take traceback frames from [`frames`], code spans from [`markup`], path
//! extensions from [`paths`] and code-likeness from [`words`]; the two explorer readings keep
//! their own tokens and path boundaries, and say why (see each module).
//!
//! Invariant: pure text work, linear in the text; it knows nothing about snapshots, indexes or
//! plugins.
//!
//! # Example
//!
//! ```
//! let clues = swex_issue::parse(
//!     "`QuerySet.bulk_create()` fails:\n  File \"django/db/models/query.py\", line 474, in bulk_create",
//! );
//! assert_eq!(clues.frames[0].path, "django/db/models/query.py");
//! assert_eq!(clues.identifiers, ["QuerySet.bulk_create", "bulk_create"]);
//! assert!(clues.terms.iter().any(|t| t.text == "bulk_create"));
//! ```

pub mod clues;
#[cfg(feature = "parse")]
pub mod environment;
#[cfg(feature = "parse")]
pub mod frames;
#[cfg(feature = "parse")]
pub mod markup;
#[cfg(feature = "parse")]
pub mod mentions;
#[cfg(feature = "parse")]
pub mod parse;
#[cfg(feature = "parse")]
pub mod paths;
#[cfg(feature = "parse")]
pub mod ranking;
#[cfg(feature = "parse")]
pub mod words;

pub use clues::{Frame, FrameStyle, IssueClues, IssueCluesArgs, WeightedTerm};
#[cfg(feature = "parse")]
pub use parse::{QueryOptions, parse, parse_with};
