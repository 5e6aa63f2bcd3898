//! swex-mcp: swex as a tool inside coding agents, over the Model Context Protocol (stdio), built
//! on the official Rust SDK (`rmcp`).
//!
//! - [`server`]: the handler ([`SwexServer`]) and [`serve_stdio`]. Calls run on blocking threads,
//!   can be cancelled, and report progress while an index is first built. Faults are answered as
//!   tool errors and never end the server; stdout carries protocol messages only.
//! - [`repos`]: the served repositories. Indexes stay open between calls, and every call first
//!   brings its repository's index up to date by stat ([`swex_engine::index::Engine::refresh`]),
//!   so edits made between calls are in the next answer.
//! - [`tools`]: `explore` (through the configured explorer, as `swex explore` runs it),
//!   `search`, `definition`, `references`, `neighbours` and `read` (through the plugin host's
//!   engine backend, the services explorers use): arguments with JSON schemas, answers as compact
//!   text plus the same data as structured content.
//! - [`error`]: [`ToolError`], one message per way a call can fail.
//!
//! Invariants: writes nothing to stdout but protocol messages (logs go to stderr); knows the
//! engine, the plugin host and MCP, not the CLI or the benchmark.
//!
//! # Example
//!
//! ```no_run
//! use swex_mcp::{ServerOptions, serve_stdio};
//! # fn explorer() -> swex_plugin_host::ExplorerHandle { unimplemented!() }
//! serve_stdio(ServerOptions {
//!     repos: vec![".".into()],
//!     engine: swex_engine::index::EngineConfig::default(),
//!     explorer: explorer(), // e.g. the registry's `swex`, instantiated
//!     warm: true,
//!     scope: swex_mcp::RepoScope::Given, // only the repositories above
//! })?;
//! # Ok::<(), swex_mcp::ServeError>(())
//! ```

pub mod error;
pub mod fit;
pub mod gate;
pub mod repos;
pub mod server;
pub mod tools;

pub use error::ToolError;
pub use repos::RepoScope;
pub use server::{INSTRUCTIONS, ServeError, ServerOptions, SwexServer, serve_stdio};
