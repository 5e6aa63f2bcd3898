//! Running an explorer in process through its C vtable, as a host does: `create` with the config,
//! `explore` with the request as JSON and a services table over a backend, the answer decoded,
//! `destroy`. For plugin authors' tests and for hosts that embed explorers without loading them.

use crate::services::{RawServices, ServicesTable};
use std::ffi::c_void;
use swex_plugin::abi::{SWEX_OK, SwexBuffer, SwexBytes, SwexExplorerVTable, SwexVTableGetter};
use swex_plugin::{Explorer, Request, Response};

/// A failed `create` or `explore` call: the status code the explorer returned (see
/// `swex_plugin::abi`) and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExploreError {
    /// `create` or `explore`.
    pub call: &'static str,
    /// The ABI status code: the one the explorer returned (`SWEX_ERR_INVALID_INPUT` for a config
    /// or request it refused, `SWEX_ERR_FAILED`, `SWEX_ERR_PANIC` for a panic caught at its
    /// boundary; see `swex_plugin::abi`), never `SWEX_OK`. Errors found on this side use the same
    /// codes: a vtable without `create`, `explore` or `destroy` is `SWEX_ERR_INVALID_INPUT` (with
    /// `call` = `create`), an answer that is not a valid response `SWEX_ERR_FAILED` (with `call` =
    /// `explore`).
    pub status: i32,
    /// The explorer's message (UTF-8, invalid bytes replaced), or what was wrong with the vtable
    /// or the answer.
    pub message: String,
}

impl std::fmt::Display for ExploreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed (status {}): {}",
            self.call, self.status, self.message
        )
    }
}

impl std::error::Error for ExploreError {}

/// Runs explorer `E` once: created with `config`, asked `request`, served by `services`.
pub fn explore<E: Explorer>(
    config: &serde_json::Value,
    request: &Request,
    services: &dyn RawServices,
) -> Result<Response, ExploreError> {
    run(
        &swex_plugin::__private::vtable::<E>(),
        config,
        request,
        services,
    )
}

/// [`explore`] for an explorer given by its vtable getter (`swex_explorer_vtable` of a crate that
/// used `export_vtable!`/`export_explorer!`).
pub fn explore_vtable(
    getter: SwexVTableGetter,
    config: &serde_json::Value,
    request: &Request,
    services: &dyn RawServices,
) -> Result<Response, ExploreError> {
    // SAFETY: a getter returns a pointer to a static table (the export macros' contract).
    let vtable = unsafe { &*getter() };
    run(vtable, config, request, services)
}

fn failure(call: &'static str, status: i32, bytes: Vec<u8>) -> ExploreError {
    ExploreError {
        call,
        status,
        message: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Takes a buffer the plugin filled and releases it with the plugin's `free_buffer`.
fn take(vtable: &SwexExplorerVTable, buffer: SwexBuffer) -> Vec<u8> {
    // SAFETY: the plugin filled `buffer` (or left it empty); it is copied before being freed.
    let bytes = unsafe { buffer.as_slice() }.to_vec();
    if let Some(free) = vtable.free_buffer {
        // SAFETY: the buffer came from this plugin and is released once.
        unsafe { free(buffer) };
    }
    bytes
}

fn run(
    vtable: &SwexExplorerVTable,
    config: &serde_json::Value,
    request: &Request,
    services: &dyn RawServices,
) -> Result<Response, ExploreError> {
    let missing = |what: &str| ExploreError {
        call: "create",
        status: swex_plugin::abi::SWEX_ERR_INVALID_INPUT,
        message: format!("the vtable has no {what}"),
    };
    let create = vtable.create.ok_or_else(|| missing("create"))?;
    let explore = vtable.explore.ok_or_else(|| missing("explore"))?;
    let destroy = vtable.destroy.ok_or_else(|| missing("destroy"))?;
    let config = serde_json::to_vec(config).expect("a JSON value serializes");
    let mut instance: *mut c_void = std::ptr::null_mut();
    let mut error = SwexBuffer::EMPTY;
    // SAFETY: the config outlives the call; both out pointers are valid.
    let status = unsafe { create(SwexBytes::from_slice(&config), &mut instance, &mut error) };
    if status != SWEX_OK {
        return Err(failure("create", status, take(vtable, error)));
    }
    let request = serde_json::to_vec(request).expect("a Request serializes");
    let table = ServicesTable::new(services);
    let mut out = SwexBuffer::EMPTY;
    // SAFETY: `instance` came from `create`; the request and the table outlive the call.
    let status = unsafe {
        explore(
            instance,
            SwexBytes::from_slice(&request),
            table.as_ptr(),
            &mut out,
        )
    };
    let bytes = take(vtable, out);
    // SAFETY: `instance` came from `create` and is destroyed once, after `explore` returned.
    unsafe { destroy(instance) };
    if status != SWEX_OK {
        return Err(failure("explore", status, bytes));
    }
    serde_json::from_slice(&bytes).map_err(|e| ExploreError {
        call: "explore",
        status: swex_plugin::abi::SWEX_ERR_FAILED,
        message: format!("the response is not valid JSON: {e}"),
    })
}
