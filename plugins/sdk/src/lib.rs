//! swex-plugin: the explorer plugin contract.
//!
//! An explorer gets an issue text and a repository snapshot and answers the code regions to read,
//! best first. This crate is everything a plugin author needs:
//!
//! - [`abi`]: the versioned C ABI — the vtable a plugin exports under `swex_explorer_v1`, the
//!   services table the host passes in, status codes, byte buffers. Mirrored by the C header
//!   `include/swex_plugin.h` for plugins written in C.
//! - [`types`]: the JSON that crosses it — [`Request`], [`Response`], [`Region`] and the
//!   arguments and results of every service.
//! - [`Explorer`]: the Rust trait (its documentation states the contract), [`Services`]: the safe
//!   view of the services table, and [`export_explorer!`]: the macro that builds the vtable.
//! - [`text`]: Python-compatible line splitting and whitespace (the `swex-text` crate), so
//!   explorers see the same lines the benchmark counts, and the text rules swex's own readers
//!   share (path roles, stop words, identifier splitting, stemming, test naming, path hints).
//!
//! Invariant: this crate knows nothing about tantivy, fastembed, libloading or the engine; it
//! depends on std, serde, serde_json and swex-text (std only) only. A plugin author depends on this crate alone.
//!
//! # Example
//!
//! ```
//! use std::ffi::CStr;
//! use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services};
//!
//! /// Points at the first lines of every file whose name appears in the issue.
//! struct NamedFiles;
//!
//! impl Explorer for NamedFiles {
//!     const NAME: &'static CStr = c"named-files";
//!     const DESCRIPTION: &'static CStr = c"files whose name the issue mentions";
//!
//!     fn create(_config: &serde_json::Value) -> Result<Self, ExplorerError> {
//!         Ok(NamedFiles)
//!     }
//!
//!     fn explore(&self, request: &Request, services: &Services<'_>) -> Result<Response, ExplorerError> {
//!         let mut regions = Vec::new();
//!         for file in services.list_files(None)? {
//!             let name = file.path.rsplit('/').next().unwrap_or(&file.path);
//!             if request.issue.contains(name) {
//!                 regions.push(Region::new(file.path.clone(), 1, 50).with_why("named in the issue"));
//!             }
//!         }
//!         regions.truncate(request.top_k);
//!         Ok(Response::new(regions))
//!     }
//! }
//!
//! swex_plugin::export_explorer!(NamedFiles);
//! ```

#![warn(missing_docs)]

pub mod abi;
pub mod error;
pub mod explorer;
mod export;
pub mod services;
pub mod types;

/// Python-compatible lines, whitespace and decoding, path globs, and the shared text rules
/// (path roles, stop words, identifier splitting, stemming, test naming, path hints): the
/// `swex-text` crate, so explorers see the same lines the benchmark counts and read paths and
/// names as the engine does.
pub use swex_text as text;

pub use error::{ExplorerError, ServiceError, ServiceErrorKind};
pub use explorer::{Explorer, parse_config};
pub use services::Services;
pub use types::{
    DEFAULT_LINE_BUDGET, GroundTruth, MAX_TOP_K, Region, Request, Response, ServiceId,
};

/// Support for [`export_explorer!`]; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{panic_message, vtable};
}
