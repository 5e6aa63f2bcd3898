//! The explorers of a run, as the runner sees them: a name for the rows, the configuration to
//! record, whether the explorer may see the ground truth, and something that answers requests.
//!
//! [`Explore`] is the one call the runner makes. The plugin host's [`ExplorerHandle`] implements
//! it: one in-process instance shared by all workers (the ABI makes `explore` reentrant), or an
//! isolated explorer, whose worker processes serve one call each at a time. Tests implement
//! [`Explore`] directly.
//!
//! This module knows the host's explorer handles; it knows nothing about benchmark files.

use std::panic::AssertUnwindSafe;
use swex_plugin::Request;
use swex_plugin_host::{ExplorerHandle, RawServices, ValidatedResponse};

/// Answers one request on one snapshot: regions after validation (cut to `request.top_k`), or the
/// reason of the failure.
pub trait Explore: Send + Sync {
    fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, String>;
}

/// An explorer taking part in a run.
pub struct BenchExplorer {
    /// The `explorer` field of its rows.
    pub name: String,
    /// The configuration it was created with, recorded in every row (`explorer_config`).
    pub config: serde_json::Value,
    /// What identifies its code (`ExplorerPlugin::build_identity`), recorded in every row's
    /// `produced_by`: a resumed run refuses files whose rows another build made.
    pub build: String,
    /// Whether requests carry the instance's ground truth (the oracle needs it; nothing else
    /// should see it).
    pub sees_ground_truth: bool,
    pub explorer: Box<dyn Explore>,
}

impl std::fmt::Debug for BenchExplorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchExplorer")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("build", &self.build)
            .field("sees_ground_truth", &self.sees_ground_truth)
            .finish()
    }
}

impl BenchExplorer {
    /// The explorer's answer to `request`; a panic of the call (an [`Explore`] written in Rust
    /// may panic) is a failure with its message, like any other.
    pub fn answer(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, String> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.explorer.explore(request, services)
        }))
        .unwrap_or_else(|panic| {
            Err(format!(
                "explorer panicked: {}",
                swex_plugin::__private::panic_message(&*panic)
            ))
        })
    }
}

/// The host's handle answers through [`ExplorerHandle::explore_validated`]: in process, or in
/// isolated workers, one per concurrent call.
impl Explore for ExplorerHandle {
    fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, String> {
        self.explore_validated(request, services)
            .map_err(|e| e.to_string())
    }
}
