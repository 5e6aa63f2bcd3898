//! swex-plugin-host: finds, loads, checks and runs explorer plugins, serves them a snapshot, and
//! validates what they answer.
//!
//! - [`Registry`] (module `registry`): built-in explorers plus plugins discovered through
//!   `--plugin PATH`, `SWEX_PLUGIN_PATH` and the plugins folder.
//! - [`ExplorerPlugin`] (module `plugin`): a checked vtable — loaded with libloading or registered
//!   from a built-in getter, ABI version and table size checked before any other call, libraries
//!   never unloaded. [`ExplorerInstance`]: a created explorer called in process; panics in the
//!   plugin come back as errors.
//! - [`IsolatedExplorer`] (module `isolated`, child side in `worker`): an explorer in a child
//!   process speaking the public worker protocol (docs/protocol.md) with a time limit; crashes,
//!   aborts, hangs and garbage cost one failed call. [`CommandExplorer`] (module `command`): an
//!   explorer that is a program rather than a library — a Python file (run by the Python SDK
//!   built into this crate), a manifest or an executable — always run that way.
//! - [`FsBackend`] answers the services from a snapshot directory, [`EngineBackend`] from the
//!   engine's index of it. The services contract itself — [`RawServices`] / [`ServiceBackend`],
//!   the C table, [`validate`] (and [`validate_answer`], which also holds an answer to the
//!   request's line budget with real file lengths, as every host path that runs an explorer does),
//!   [`MemoryBackend`] and the conformance suite both backends pass — is the engine-free crate
//!   `swex-plugin-serve`, re-exported here.
//!
//! [`ExplorerHandle`] puts the in-process and isolated paths behind one call.
//!
//! Invariants: no printing (errors are values; the isolated worker's diagnostics go to its own
//! stderr); knows the plugin ABI and the services, not the benchmark format or the CLI.
//!
//! # Example
//!
//! ```no_run
//! use swex_plugin_host::{FsBackend, Registry, DiscoveryOptions};
//! # fn builtins() -> Vec<swex_plugin::abi::SwexVTableGetter> { Vec::new() }
//! let mut registry = Registry::with_builtins(&builtins())?;
//! registry.discover(&DiscoveryOptions::from_env(vec!["./libmy_explorer.so".into()]))?;
//! let swex_plugin_host::Registered::Plugin(plugin) = &registry.find("my-explorer")?.explorer
//! else { unreachable!("a library") };
//! let explorer = plugin.instantiate(&serde_json::Value::Null)?;
//! let snapshot = FsBackend::new("/path/to/checkout");
//! let request = swex_plugin::Request::new("adhoc", "crash in parse_url", 5);
//! let answer = swex_plugin_host::ExplorerHandle::InProcess(explorer)
//!     .explore_validated(&request, &snapshot)?;
//! for region in &answer.regions {
//!     println!("{}:{}-{}", region.path, region.start, region.end);
//! }
//! # Ok::<(), swex_plugin_host::HostError>(())
//! ```

pub mod command;
mod engine_backend;
mod error;
mod fs_backend;
mod instance;
pub mod isolated;
mod plugin;
mod registry;
pub mod worker;

pub use command::{CommandExplorer, CommandKind};
pub use engine_backend::EngineBackend;
pub use error::{CallFailure, HostError};
pub use fs_backend::FsBackend;
pub use instance::ExplorerInstance;
pub use isolated::{
    IsolatedExplorer, IsolatedOptions, PROTOCOL_VERSION, PluginTarget, WorkerCommand,
};
pub use plugin::{ExplorerPlugin, PluginSource};
pub use registry::{
    DiscoveryOptions, Origin, PLUGIN_PATH_ENV, Registered, Registry, RegistryEntry,
    default_plugin_dir, is_library,
};
/// The serving side shared with plugin authors' tests (crate `swex-plugin-serve`).
pub use swex_plugin_serve::{
    DropCounts, MemoryBackend, RawServices, ServiceBackend, ValidatedResponse, enforce_budget,
    validate, validate_answer,
};

use swex_plugin::{Request, Response};

/// Checks what the host promises every explorer about a request before sending it: `top_k` in
/// `1..=MAX_TOP_K` (so that no explorer sizes anything by an absurd count).
pub fn check_request(explorer: &str, request: &Request) -> Result<(), HostError> {
    if !(1..=swex_plugin::MAX_TOP_K).contains(&request.top_k) {
        return Err(HostError::BadRequest {
            explorer: explorer.to_owned(),
            message: format!(
                "top_k {} is outside 1..={}",
                request.top_k,
                swex_plugin::MAX_TOP_K
            ),
        });
    }
    Ok(())
}

/// An explorer ready to answer, in process or in a worker.
#[derive(Debug)]
pub enum ExplorerHandle {
    InProcess(ExplorerInstance),
    Isolated(IsolatedExplorer),
}

impl ExplorerHandle {
    pub fn name(&self) -> &str {
        match self {
            ExplorerHandle::InProcess(instance) => instance.name(),
            ExplorerHandle::Isolated(isolated) => isolated.name(),
        }
    }

    /// The explorer's raw answer.
    pub fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<Response, HostError> {
        match self {
            ExplorerHandle::InProcess(instance) => instance.explore(request, services),
            ExplorerHandle::Isolated(isolated) => isolated.explore(request, services),
        }
    }

    /// The answer after [`validate_answer`] against the snapshot `services` serves.
    pub fn explore_validated(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, HostError> {
        let response = self.explore(request, services)?;
        Ok(validate_answer(request, response, services))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_outside_the_top_k_bound_are_refused() {
        for (top_k, ok) in [
            (0, false),
            (1, true),
            (swex_plugin::MAX_TOP_K, true),
            (swex_plugin::MAX_TOP_K + 1, false),
            (1 << 32, false),
            (usize::MAX, false),
        ] {
            let request = Request::new("i", "issue", top_k);
            assert_eq!(check_request("x", &request).is_ok(), ok, "top_k {top_k}");
        }
    }
}
