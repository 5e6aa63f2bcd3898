//! The [`Explorer`] trait: what a Rust plugin implements.

use crate::error::ExplorerError;
use crate::services::Services;
use crate::types::{Request, Response};
use std::ffi::CStr;

/// An explorer: given an issue and a snapshot (reached through [`Services`]), the code regions
/// to read, best first.
///
/// # The contract
///
/// - **Lifecycle.** The host calls [`Explorer::create`] once with the explorer's config (JSON
///   `null` when none was given), then [`Explorer::explore`] any number of times, then drops the
///   instance. One instance may serve many instances of a benchmark, across snapshots: keep
///   per-snapshot state keyed by [`Request::repo_root`]/`instance_id`, or none at all.
/// - **Ordering.** [`Response::regions`] is ranked, best first. The host keeps the order, drops
///   invalid regions (paths outside the snapshot, absolute or with `..`, nonexistent files,
///   intervals that are empty or reversed; `end = -1` means "to the end of the file") and cuts the
///   list to `top_k`. Returning more than `top_k` is allowed; duplicates are kept (they count
///   against the reader's budget in the metrics, so avoid them).
/// - **Line budget.** [`Request::line_budget`], when set, bounds the lines of the answer, counted
///   with real file lengths (a whole-file region costs its file's line count, a line two regions
///   share counts once). Plan within it; the host cuts an answer that does not fit (the region that
///   passes the budget keeps its first lines, the later ones are dropped) and counts the cut.
/// - **Determinism.** The same request on the same snapshot with the same config must give the
///   same response. Randomised explorers take their seed from the config or the request.
/// - **Thread safety.** `explore` takes `&self` and may be called concurrently from several
///   threads (the trait requires `Send + Sync`). Use interior mutability with care, or none.
/// - **Services.** `services` is valid only during the call. Every call may fail; a failure of
///   kind `Unavailable` means the host lacks that index (fall back, and say so in
///   [`Response::notes`]). Service calls may themselves be made from any thread while `explore`
///   runs.
/// - **Memory.** Nothing to do in Rust: [`crate::export_explorer!`] moves the JSON across the
///   boundary and each side frees what it allocated.
/// - **Errors.** Return [`ExplorerError`] for anything the caller should see; the host counts the
///   instance as failed, with the message, and goes on. A panic is caught at the boundary and
///   reported the same way (unless the plugin is built with `panic = "abort"`: then only the
///   host's isolated mode survives it).
/// - **Printing.** Do not print to stdout: in isolated mode it is redirected to stderr, and in
///   the CLI it mixes with the results. Use stderr for diagnostics.
pub trait Explorer: Send + Sync + Sized + 'static {
    /// The explorer's name, as users select it (`--explorer NAME`): `[a-z0-9_-]+`.
    const NAME: &'static CStr;
    /// One line saying what the explorer does.
    const DESCRIPTION: &'static CStr;

    /// Builds an instance from its config (JSON `null` when none was given).
    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError>;

    /// Answers one request.
    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError>;
}

/// Decodes an explorer's config into a typed struct, naming the offending field on error.
/// `null` decodes as the struct's `Default`.
pub fn parse_config<T>(config: &serde_json::Value) -> Result<T, ExplorerError>
where
    T: serde::de::DeserializeOwned + Default,
{
    if config.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(config.clone()).map_err(|e| ExplorerError::InvalidConfig(e.to_string()))
}
