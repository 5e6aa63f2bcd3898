//! The explorers of a run, as the runner sees them: a name for the rows, the configuration to
//! record, whether the explorer may see the ground truth, and something that answers requests.
//!
//! [`Explore`] is the one call the runner makes. [`HostExplorer`] implements it over the plugin
//! host: one in-process instance shared by all workers (the ABI makes `explore` reentrant), or a
//! pool of isolated worker processes, one per concurrent call (an isolated worker serves one call
//! at a time). Tests implement [`Explore`] directly.
//!
//! This module knows the host's explorer handles; it knows nothing about benchmark files.

use std::sync::Mutex;
use swex_plugin::Request;
use swex_plugin_host::{
    ExplorerHandle, ExplorerInstance, HostError, IsolatedExplorer, RawServices, ValidatedResponse,
};

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

/// Makes a fresh isolated worker (for the pool of [`HostExplorer::Isolated`]).
pub type IsolatedFactory = Box<dyn Fn() -> Result<IsolatedExplorer, HostError> + Send + Sync>;

/// An explorer run through the plugin host.
pub enum HostExplorer {
    /// One instance in this process, called concurrently.
    InProcess(ExplorerInstance),
    /// Child processes: idle workers are reused; a call with no idle worker starts one.
    Isolated {
        start: IsolatedFactory,
        idle: Mutex<Vec<IsolatedExplorer>>,
    },
}

impl HostExplorer {
    pub fn isolated(start: IsolatedFactory) -> HostExplorer {
        HostExplorer::Isolated {
            start,
            idle: Mutex::new(Vec::new()),
        }
    }
}

impl Explore for HostExplorer {
    fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, String> {
        match self {
            HostExplorer::InProcess(instance) => {
                let response = instance
                    .explore(request, services)
                    .map_err(|e| e.to_string())?;
                Ok(swex_plugin_host::validate_answer(
                    request, response, services,
                ))
            }
            HostExplorer::Isolated { start, idle } => {
                let worker = idle.lock().expect("pool lock").pop();
                let worker = match worker {
                    Some(worker) => worker,
                    None => start().map_err(|e| e.to_string())?,
                };
                let handle = ExplorerHandle::Isolated(worker);
                let answer = handle
                    .explore_validated(request, services)
                    .map_err(|e| e.to_string());
                // A worker that failed a call restarts itself on the next one; keep it either way.
                if let ExplorerHandle::Isolated(worker) = handle {
                    idle.lock().expect("pool lock").push(worker);
                }
                answer
            }
        }
    }
}
