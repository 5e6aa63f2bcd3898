//! Host errors: everything that can go wrong finding, loading, checking and running a plugin.
//! Each message names the plugin (its name or library path) so a failed benchmark instance can be
//! traced to its cause.

use std::path::PathBuf;
use thiserror::Error;

/// How an explorer call failed inside the plugin, from its status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFailure {
    /// `SWEX_ERR_INVALID_INPUT`: the plugin refused the config or request.
    InvalidInput,
    /// `SWEX_ERR_FAILED`: the plugin reported an error.
    Failed,
    /// `SWEX_ERR_PANIC`: the plugin panicked; the panic was caught at the boundary.
    Panic,
    /// A status code outside the ABI.
    UnknownStatus(i32),
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::InvalidInput => f.write_str("rejected its input"),
            CallFailure::Failed => f.write_str("failed"),
            CallFailure::Panic => f.write_str("panicked"),
            CallFailure::UnknownStatus(code) => write!(f, "returned unknown status {code}"),
        }
    }
}

#[derive(Debug, Error)]
pub enum HostError {
    #[error("cannot load plugin library {path}: {message}")]
    Load { path: PathBuf, message: String },

    #[error(
        "{path} is not a swex plugin: it has no `{symbol}` symbol (for a built-in explorer, load the \
         library of its `plugin` crate, e.g. libswex_explorer_bm25_plugin.so, not the explorer crate's)"
    )]
    MissingSymbol { path: PathBuf, symbol: String },

    #[error(
        "plugin {plugin} speaks plugin ABI version {found}, this swex speaks ABI version {expected}: \
         rebuild the plugin against swex-plugin (ABI version {expected})"
    )]
    AbiMismatch {
        plugin: String,
        found: u32,
        expected: u32,
    },

    #[error(
        "explorer {explorer} speaks worker protocol version {found}, this swex speaks version \
         {expected} (docs/protocol.md): update the explorer's SDK or swex"
    )]
    ProtocolMismatch {
        explorer: String,
        found: u32,
        expected: u32,
    },

    #[error("{path} is not an explorer swex can run: {message}")]
    BadCommand { path: PathBuf, message: String },

    #[error("plugin {plugin} has a malformed vtable: {message}")]
    BadVTable { plugin: String, message: String },

    #[error("explorer {explorer}: create {failure}: {message}")]
    Create {
        explorer: String,
        failure: CallFailure,
        message: String,
    },

    #[error("explorer {explorer}: explore {failure}: {message}")]
    Explore {
        explorer: String,
        failure: CallFailure,
        message: String,
    },

    #[error("explorer {explorer} returned an invalid response: {message}")]
    BadResponse { explorer: String, message: String },

    #[error("explorer {explorer}: refusing to send an invalid request: {message}")]
    BadRequest { explorer: String, message: String },

    #[error("no explorer named `{name}`; available: {}", available.join(", "))]
    UnknownExplorer {
        name: String,
        available: Vec<String>,
    },

    #[error("explorer {explorer} (isolated): {reason}")]
    Worker { explorer: String, reason: String },

    #[error(
        "explorer {explorer} (isolated): no answer within {seconds:.1} s; the worker was killed"
    )]
    Timeout { explorer: String, seconds: f64 },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl HostError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> HostError {
        HostError::Io {
            context: context.into(),
            source,
        }
    }
}
