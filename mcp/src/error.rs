//! [`ToolError`]: why a tool call failed, as a message an agent can act on.

use swex_engine::index::IndexError;
use swex_plugin::ServiceError;
use swex_plugin_host::HostError;

/// Every way a tool call can fail. None of them stops the server.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema, or a value is out of range.
    #[error("bad arguments for `{tool}`: {message}")]
    BadArguments { tool: String, message: String },
    /// A path that leaves the repository (`..`, an absolute path elsewhere).
    #[error("`{path}` is outside the repository {root}; give a path relative to it")]
    OutsideRepository { path: String, root: String },
    /// A path inside the repository that the index does not hold.
    #[error(
        "no file `{path}` in the index of {root} (it may not exist, or be binary, too large or ignored)"
    )]
    NoSuchFile { path: String, root: String },
    /// `repo` names a directory the server was not started on (see `RepoScope`).
    #[error(
        "`{repo}` is not served: this server answers only on the repositories it was started with ({served}); start `swex mcp` with that repository (or with --allow-any-repo, which is unsafe with agents)"
    )]
    NotServed { repo: String, served: String },
    /// `repo` names nothing the server serves or can open.
    #[error("{0}")]
    UnknownRepository(String),
    /// The repository's directory is gone or unreadable.
    #[error("repository {root} is not available: {source}")]
    Repository {
        root: String,
        #[source]
        source: IndexError,
    },
    #[error("index of {root}: {source}")]
    Index {
        root: String,
        #[source]
        source: IndexError,
    },
    /// The explorer failed (error, panic, bad response).
    #[error("explorer: {0}")]
    Explorer(#[from] HostError),
    /// A service of the index refused the request.
    #[error("{0}")]
    Service(#[from] ServiceError),
    /// The client cancelled the request, or the server is shutting down.
    #[error("cancelled")]
    Cancelled,
    /// A bug or a panic inside the server; the server keeps running.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    pub(crate) fn bad(tool: &str, message: impl Into<String>) -> ToolError {
        ToolError::BadArguments {
            tool: tool.to_owned(),
            message: message.into(),
        }
    }
}
