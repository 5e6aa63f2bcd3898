//! swex-plugin-serve: the serving side of the explorer contract, without the engine.
//!
//! A host serves a snapshot to explorers through the C services table; this crate is everything
//! about that which does not need an index, so that a plugin author can test a plugin against a
//! snapshot without building the engine (tantivy, ONNX Runtime, ten C grammars):
//!
//! - [`ServiceBackend`]: the typed Rust side of the services — a backend implements what it can
//!   answer, the rest answer `Unavailable`; every backend is a [`RawServices`] (JSON in, JSON
//!   out), and [`ServicesTable`] is the C table over one.
//! - [`files`]: the file services (`list_files`, `file_info`, `read_lines`, `grep`) written once
//!   over any source of files.
//! - [`MemoryBackend`]: a snapshot held in memory.
//! - [`validate()`]: what the host does to every answer (drop and count invalid regions, keep the
//!   order, cut to `top_k`).
//! - [`explore`]: run an [`Explorer`](swex_plugin::Explorer) type in process, through its C
//!   vtable, against any backend — the same path a host takes.
//! - [`conformance`]: the services contract as data — a fixture snapshot and the expected answer
//!   (or error kind) of every service call — checked against every backend.
//!
//! The host (`swex-plugin-host`) adds plugin loading, isolation and the filesystem and engine
//! backends on top. Invariant: no engine, no printing; knows the services contract, not the CLI or
//! the benchmark.
//!
//! # Example
//!
//! ```
//! use std::ffi::CStr;
//! use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services};
//! use swex_plugin::types::GrepArgs;
//! use swex_plugin_serve::MemoryBackend;
//!
//! struct Mains;
//! impl Explorer for Mains {
//!     const NAME: &'static CStr = c"mains";
//!     const DESCRIPTION: &'static CStr = c"files that define main";
//!     fn create(_: &serde_json::Value) -> Result<Self, ExplorerError> { Ok(Mains) }
//!     fn explore(&self, _: &Request, services: &Services<'_>) -> Result<Response, ExplorerError> {
//!         let found = services.grep(&GrepArgs::new(r"def main\(", 10))?;
//!         Ok(Response::new(found.matches.into_iter()
//!             .map(|m| Region::new(m.path, m.line.into(), m.line as i64 + 10)).collect()))
//!     }
//! }
//!
//! let snapshot = MemoryBackend::new([("app/cli.py", "import sys\n\ndef main():\n    pass\n")]);
//! let answer = swex_plugin_serve::explore::<Mains>(
//!     &serde_json::Value::Null, &Request::new("t", "main crashes", 5), &snapshot)?;
//! assert_eq!((answer.regions[0].path.as_str(), answer.regions[0].start), ("app/cli.py", 3));
//! # Ok::<(), swex_plugin_serve::ExploreError>(())
//! ```

#![warn(missing_docs)]

mod backend;
pub mod conformance;
mod explore;
pub mod files;
mod memory;
mod services;
mod validate;

pub use backend::ServiceBackend;
pub use explore::{ExploreError, explore, explore_vtable};
pub use memory::MemoryBackend;
pub use services::{RawServices, ServicesTable};
pub use validate::{DropCounts, ValidatedResponse, enforce_budget, validate, validate_answer};
