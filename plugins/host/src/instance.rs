//! [`ExplorerInstance`]: one created explorer, called in process.

use crate::error::HostError;
use crate::plugin::{ExplorerPlugin, call_failure};
use std::ffi::c_void;
use swex_plugin::abi::{SWEX_OK, SwexBuffer, SwexBytes};
use swex_plugin::{Request, Response};
use swex_plugin_serve::{RawServices, ServicesTable};

/// An explorer created by [`ExplorerPlugin::instantiate`]; destroyed on drop. `Send + Sync`:
/// the ABI requires `explore` to accept concurrent calls.
pub struct ExplorerInstance {
    plugin: ExplorerPlugin,
    handle: *mut c_void,
}

// SAFETY: the ABI makes plugins accept `explore` from any thread, concurrently, and `destroy`
// from the thread that drops the last reference.
unsafe impl Send for ExplorerInstance {}
// SAFETY: as above.
unsafe impl Sync for ExplorerInstance {}

impl std::fmt::Debug for ExplorerInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExplorerInstance")
            .field("plugin", &self.plugin.name())
            .finish()
    }
}

impl ExplorerInstance {
    pub(crate) fn new(plugin: ExplorerPlugin, handle: *mut c_void) -> ExplorerInstance {
        ExplorerInstance { plugin, handle }
    }

    pub fn plugin(&self) -> &ExplorerPlugin {
        &self.plugin
    }

    pub fn name(&self) -> &str {
        self.plugin.name()
    }

    /// Runs one request through the C boundary: request and response as JSON, services through
    /// a C table built over `services`.
    pub fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<Response, HostError> {
        crate::check_request(self.name(), request)?;
        let request_json = serde_json::to_vec(request).expect("a Request serializes");
        let response = self.explore_json(&request_json, services)?;
        serde_json::from_slice(&response).map_err(|e| HostError::BadResponse {
            explorer: self.name().to_owned(),
            message: format!(
                "{e}; the response starts with {:?}",
                String::from_utf8_lossy(&response[..response.len().min(200)])
            ),
        })
    }

    /// Like [`ExplorerInstance::explore`] with the request and response as raw JSON bytes.
    pub fn explore_json(
        &self,
        request_json: &[u8],
        services: &dyn RawServices,
    ) -> Result<Vec<u8>, HostError> {
        let table = ServicesTable::new(services);
        let explore = self.plugin.vtable().explore.expect("checked on load");
        let mut out = SwexBuffer::EMPTY;
        // SAFETY: the handle is live (destroyed only on drop); the request and table outlive the
        // call.
        let status = unsafe {
            explore(
                self.handle,
                SwexBytes::from_slice(request_json),
                table.as_ptr(),
                &mut out,
            )
        };
        let bytes = self.plugin.take_buffer(out);
        if status == SWEX_OK {
            Ok(bytes)
        } else {
            Err(HostError::Explore {
                explorer: self.name().to_owned(),
                failure: call_failure(status),
                message: String::from_utf8_lossy(&bytes).into_owned(),
            })
        }
    }
}

impl Drop for ExplorerInstance {
    fn drop(&mut self) {
        let destroy = self.plugin.vtable().destroy.expect("checked on load");
        // SAFETY: the handle came from this plugin's create and is destroyed exactly once.
        unsafe { destroy(self.handle) };
    }
}
