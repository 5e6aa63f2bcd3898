//! [`export_explorer!`](crate::export_explorer): turns an [`Explorer`] into the C vtable.
//!
//! The glue functions here are generic over the explorer type and `extern "C"`; the macro
//! instantiates them for one type and puts them in a static table. Every one of them catches
//! panics, so no unwind ever crosses the boundary.

use crate::abi::*;
use crate::error::ExplorerError;
use crate::explorer::Explorer;
use crate::services::Services;
use crate::types::Request;
use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Exports an [`Explorer`] as a plugin.
///
/// `export_explorer!(MyExplorer);` defines, in the invoking crate:
/// - `pub extern "C" fn swex_explorer_vtable() -> *const SwexExplorerVTable`, the getter (see
///   [`export_vtable!`](crate::export_vtable));
/// - the unmangled entry symbol `swex_explorer_v1` (see [`export_entry!`](crate::export_entry))
///   that a host finds with `dlopen` in the crate's `cdylib`.
///
/// That is all a plugin in its own crate needs. An explorer that is also linked into a program
/// next to other explorers (swex's built-ins) must not define the entry symbol in the linked
/// crate — two crates exporting the same unmangled symbol cannot be linked into one program — so
/// it splits the two: the explorer crate (an `rlib`) calls `export_vtable!(MyExplorer)`, and a
/// thin `cdylib` crate that the program never depends on calls
/// `export_entry!(my_explorer::swex_explorer_vtable)`. No feature switches anything, so every
/// build of the workspace yields both the program and loadable libraries.
#[macro_export]
macro_rules! export_explorer {
    ($explorer:ty) => {
        $crate::export_vtable!($explorer);
        $crate::export_entry!(swex_explorer_vtable);
    };
}

/// Defines `pub extern "C" fn swex_explorer_vtable() -> *const SwexExplorerVTable` for an
/// [`Explorer`]: the getter a host that links the crate registers (built-in explorers), with a
/// mangled (crate-local) name, so any number of explorer crates link into one program.
#[macro_export]
macro_rules! export_vtable {
    ($explorer:ty) => {
        /// This explorer's vtable: the getter built-in registration uses.
        pub extern "C" fn swex_explorer_vtable() -> *const $crate::abi::SwexExplorerVTable {
            static VTABLE: $crate::abi::SwexExplorerVTable =
                $crate::__private::vtable::<$explorer>();
            &VTABLE
        }
    };
}

/// Defines the unmangled plugin entry symbol `swex_explorer_v1` (see
/// `swex_plugin::abi::SWEX_ENTRY_SYMBOL`) returning what `$getter` (a path to a vtable getter made
/// by [`export_vtable!`](crate::export_vtable)) returns. Use it once per `cdylib`, in a crate
/// that no program links next to other explorers.
#[macro_export]
macro_rules! export_entry {
    ($getter:path) => {
        /// The plugin entry symbol (see `swex_plugin::abi::SWEX_ENTRY_SYMBOL`).
        #[unsafe(no_mangle)]
        pub extern "C" fn swex_explorer_v1() -> *const $crate::abi::SwexExplorerVTable {
            $getter()
        }
    };
}

/// The vtable of explorer `E` (used by the macro; public for tests and hosts that embed
/// explorers directly).
pub const fn vtable<E: Explorer>() -> SwexExplorerVTable {
    SwexExplorerVTable {
        abi_version: SWEX_ABI_VERSION,
        struct_size: std::mem::size_of::<SwexExplorerVTable>() as u32,
        name: E::NAME.as_ptr(),
        description: E::DESCRIPTION.as_ptr(),
        create: Some(create::<E>),
        explore: Some(explore::<E>),
        free_buffer: Some(free_buffer),
        destroy: Some(destroy::<E>),
    }
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

fn write_out(out: *mut SwexBuffer, bytes: Vec<u8>) {
    if !out.is_null() {
        // SAFETY: the host passed a writable SwexBuffer.
        unsafe { out.write(SwexBuffer::from_vec(bytes)) };
    }
}

fn parse_json(bytes: &[u8], what: &str) -> Result<serde_json::Value, ExplorerError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ExplorerError::InvalidConfig(format!("{what} is not valid JSON: {e}")))
}

unsafe extern "C" fn create<E: Explorer>(
    config: SwexBytes,
    out_instance: *mut *mut c_void,
    out_error: *mut SwexBuffer,
) -> i32 {
    if out_instance.is_null() {
        write_out(out_error, b"create: out_instance is null".to_vec());
        return SWEX_ERR_INVALID_INPUT;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the host passes `len` readable bytes, valid during the call.
        let config = parse_json(unsafe { config.as_slice() }, "the config")?;
        E::create(&config)
    }));
    match result {
        Ok(Ok(explorer)) => {
            let handle = Box::into_raw(Box::new(explorer)) as *mut c_void;
            // SAFETY: checked non-null above.
            unsafe { out_instance.write(handle) };
            SWEX_OK
        }
        Ok(Err(error)) => {
            write_out(out_error, error.to_string().into_bytes());
            error.status()
        }
        Err(payload) => {
            write_out(
                out_error,
                format!("create panicked: {}", panic_message(&*payload)).into_bytes(),
            );
            SWEX_ERR_PANIC
        }
    }
}

unsafe extern "C" fn explore<E: Explorer>(
    instance: *mut c_void,
    request: SwexBytes,
    services: *const SwexServices,
    out: *mut SwexBuffer,
) -> i32 {
    if instance.is_null() {
        write_out(out, b"explore: instance is null".to_vec());
        return SWEX_ERR_INVALID_INPUT;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `instance` came from `create::<E>` and is not destroyed while explore runs.
        let explorer = unsafe { &*(instance as *const E) };
        // SAFETY: the host passes `len` readable bytes, valid during the call.
        let request: Request = serde_json::from_slice(unsafe { request.as_slice() })
            .map_err(|e| ExplorerError::InvalidRequest(format!("request JSON: {e}")))?;
        // SAFETY: the host's table is valid during the call.
        let Some(services) = (unsafe { Services::from_raw(services) }) else {
            return Err(ExplorerError::InvalidRequest(
                "the host passed no services table".to_owned(),
            ));
        };
        let response = explorer.explore(&request, &services)?;
        serde_json::to_vec(&response)
            .map_err(|e| ExplorerError::failed(format!("encoding the response: {e}")))
    }));
    match result {
        Ok(Ok(json)) => {
            write_out(out, json);
            SWEX_OK
        }
        Ok(Err(error)) => {
            write_out(out, error.to_string().into_bytes());
            error.status()
        }
        Err(payload) => {
            write_out(
                out,
                format!("explore panicked: {}", panic_message(&*payload)).into_bytes(),
            );
            SWEX_ERR_PANIC
        }
    }
}

unsafe extern "C" fn free_buffer(buffer: SwexBuffer) {
    // SAFETY: every buffer this plugin hands out comes from `SwexBuffer::from_vec`.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { buffer.free_rust() }));
}

unsafe extern "C" fn destroy<E: Explorer>(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    // A panicking Drop must not unwind into the host; the instance is gone either way.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `instance` came from `create::<E>` and is destroyed once.
        drop(unsafe { Box::from_raw(instance as *mut E) });
    }));
}
