//! The C ABI: the `#[repr(C)]` tables and status codes that cross the plugin boundary.
//!
//! Everything here is mirrored field for field by `include/swex_plugin.h`; a test compiles that
//! header with `cc` and checks sizes and offsets against these definitions.
//!
//! Versioning: a table starts with `abi_version` and `struct_size`. `abi_version` changes only when
//! an existing field changes meaning or layout; new fields are only ever appended, and the reader of
//! a table checks `struct_size` before touching a field past the version-1 layout.
//!
//! Ownership: every byte buffer is freed by the side that allocated it. The plugin allocates the
//! buffers `create`/`explore` write into (`SwexExplorerVTable::free_buffer` releases them); the host
//! allocates service results (`SwexServices::free_buffer` releases them). Inputs (`SwexBytes`) are
//! borrowed for the duration of the call only.
//!
//! This module knows nothing about JSON: it moves bytes. What the bytes mean is in
//! [`crate::types`].

use std::ffi::{c_char, c_void};

/// The ABI version this crate speaks. A host refuses a plugin whose table carries another value.
pub const SWEX_ABI_VERSION: u32 = 1;

/// The symbol a plugin library exports: `const SwexExplorerVTable *swex_explorer_v1(void)`.
pub const SWEX_ENTRY_SYMBOL: &str = "swex_explorer_v1";

/// Success: the output buffer holds the JSON result.
pub const SWEX_OK: i32 = 0;
/// The input (config, request or service arguments) was not acceptable; the buffer holds a message.
pub const SWEX_ERR_INVALID_INPUT: i32 = 1;
/// The call failed for another reason; the buffer holds a message.
pub const SWEX_ERR_FAILED: i32 = 2;
/// A panic (or C++ exception) was caught at the boundary; the buffer holds its message.
pub const SWEX_ERR_PANIC: i32 = 3;
/// Service only: this service is not provided by the host's backend (e.g. dense search without a
/// dense index). Explorers may fall back to something else.
pub const SWEX_ERR_UNAVAILABLE: i32 = 4;
/// Service only: the path or symbol asked for does not exist in the snapshot.
pub const SWEX_ERR_NOT_FOUND: i32 = 5;

/// Borrowed input bytes (UTF-8 JSON), valid for the duration of one call. `ptr` may be null when
/// `len` is 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SwexBytes {
    /// First byte, or null when `len` is 0.
    pub ptr: *const u8,
    /// Number of bytes at `ptr`.
    pub len: usize,
}

impl SwexBytes {
    /// No bytes (null pointer, length 0): what an absent input is passed as.
    pub const EMPTY: SwexBytes = SwexBytes {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// Borrows `bytes` for a call; the slice must outlive every use of the result.
    pub fn from_slice(bytes: &[u8]) -> SwexBytes {
        SwexBytes {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    /// The bytes, as a slice (empty when `ptr` is null or `len` is 0).
    ///
    /// # Safety
    /// `ptr` must point to `len` readable bytes that outlive `'a` (or `len` must be 0).
    pub unsafe fn as_slice<'a>(self) -> &'a [u8] {
        if self.ptr.is_null() || self.len == 0 {
            &[]
        } else {
            // SAFETY: upheld by the caller.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

/// An owned output buffer. It must be released with the `free_buffer` of the side that filled it.
/// `ptr` is null when `len` is 0.
#[repr(C)]
#[derive(Debug)]
pub struct SwexBuffer {
    /// First byte, allocated by the side that filled the buffer; null when `len` is 0.
    pub ptr: *mut u8,
    /// Number of bytes at `ptr`.
    pub len: usize,
}

impl SwexBuffer {
    /// No bytes (null pointer, length 0): the value to initialise an output buffer with before a
    /// call, and what an empty result is.
    pub const EMPTY: SwexBuffer = SwexBuffer {
        ptr: std::ptr::null_mut(),
        len: 0,
    };

    /// Hands `bytes` over as a buffer that [`SwexBuffer::free_rust`] releases.
    pub fn from_vec(bytes: Vec<u8>) -> SwexBuffer {
        if bytes.is_empty() {
            return SwexBuffer::EMPTY;
        }
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        SwexBuffer {
            ptr: Box::into_raw(boxed) as *mut u8,
            len,
        }
    }

    /// Releases a buffer made by [`SwexBuffer::from_vec`] (by this copy of the SDK).
    ///
    /// # Safety
    /// `self` must come from `from_vec` and must not be used again.
    pub unsafe fn free_rust(self) {
        if !self.ptr.is_null() && self.len > 0 {
            // SAFETY: the pointer and length come from a leaked `Box<[u8]>` of exactly this size.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
        }
    }

    /// The bytes of the buffer, borrowed (empty when `ptr` is null or `len` is 0). Copy them
    /// before the buffer is freed.
    ///
    /// # Safety
    /// The buffer must be live (not yet freed).
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() || self.len == 0 {
            &[]
        } else {
            // SAFETY: upheld by the caller.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

/// `create(config_json, &instance, &error) -> status`. On success `*instance` is the plugin's
/// opaque handle; otherwise `*error` holds a UTF-8 message (free it with the vtable's
/// `free_buffer`).
pub type SwexCreateFn = unsafe extern "C" fn(
    config: SwexBytes,
    out_instance: *mut *mut c_void,
    out_error: *mut SwexBuffer,
) -> i32;

/// `explore(instance, request_json, services, &out) -> status`. On success `*out` holds the
/// response JSON, otherwise a UTF-8 message; either way free it with the vtable's `free_buffer`.
/// May be called concurrently from several threads on the same instance.
pub type SwexExploreFn = unsafe extern "C" fn(
    instance: *mut c_void,
    request: SwexBytes,
    services: *const SwexServices,
    out: *mut SwexBuffer,
) -> i32;

/// Releases a buffer the plugin allocated.
pub type SwexPluginFreeFn = unsafe extern "C" fn(buffer: SwexBuffer);

/// Destroys an instance made by `create`. Called once, after every `explore` on it returned.
pub type SwexDestroyFn = unsafe extern "C" fn(instance: *mut c_void);

/// The table a plugin exports (through `swex_explorer_v1()`). Version 1 layout; fields are only
/// ever appended.
#[repr(C)]
#[derive(Debug)]
pub struct SwexExplorerVTable {
    /// Must equal the host's [`SWEX_ABI_VERSION`]; checked before any other field is read.
    pub abi_version: u32,
    /// `sizeof(SwexExplorerVTable)` as the plugin was compiled: tells the host which appended
    /// fields exist.
    pub struct_size: u32,
    /// The explorer's name: static, NUL-terminated UTF-8 (`[a-z0-9_-]+` by convention).
    pub name: *const c_char,
    /// One line saying what the explorer does: static, NUL-terminated UTF-8, or null.
    pub description: *const c_char,
    /// [`SwexCreateFn`]: makes an instance from the JSON config. Required (the host refuses a
    /// table where it is null).
    pub create: Option<SwexCreateFn>,
    /// [`SwexExploreFn`]: answers one request on an instance. Required.
    pub explore: Option<SwexExploreFn>,
    /// [`SwexPluginFreeFn`]: releases the buffers `create` and `explore` wrote (results and error
    /// messages). Required.
    pub free_buffer: Option<SwexPluginFreeFn>,
    /// [`SwexDestroyFn`]: destroys an instance. Required.
    pub destroy: Option<SwexDestroyFn>,
}

// SAFETY: the table is immutable after construction; its pointers point to static strings and to
// functions, both of which may be shared across threads.
unsafe impl Sync for SwexExplorerVTable {}
// SAFETY: as above.
unsafe impl Send for SwexExplorerVTable {}

/// The signature of the entry symbol and of the built-in getters.
pub type SwexVTableGetter = extern "C" fn() -> *const SwexExplorerVTable;

/// Every service has this signature: `(context, args_json, &out) -> status`. On success `*out`
/// holds the result JSON, otherwise a UTF-8 message; either way free it with the services table's
/// `free_buffer`. Services may be called from any thread, concurrently, while `explore` runs;
/// the table and its context are valid only until `explore` returns.
pub type SwexServiceFn =
    unsafe extern "C" fn(context: *const c_void, args: SwexBytes, out: *mut SwexBuffer) -> i32;

/// Releases a buffer a service returned.
pub type SwexServiceFreeFn = unsafe extern "C" fn(context: *const c_void, buffer: SwexBuffer);

/// The services table the host passes to `explore`: what an explorer may ask of the snapshot and
/// its indexes. A null entry means "not provided by this host"; a provided entry may still answer
/// [`SWEX_ERR_UNAVAILABLE`] when its backend lacks the index. Version 1 layout; fields are only
/// ever appended.
#[repr(C)]
#[derive(Debug)]
pub struct SwexServices {
    /// The host's [`SWEX_ABI_VERSION`]; a plugin reads it, with `struct_size`, before anything
    /// else.
    pub abi_version: u32,
    /// `sizeof(SwexServices)` as the host was compiled: a slot whose offset is at or past it does
    /// not exist for this host (read it as null, i.e. `Unavailable`).
    pub struct_size: u32,
    /// Opaque host state; pass it back as the first argument of every call.
    pub context: *const c_void,
    /// [`SwexServiceFreeFn`]: releases every buffer a service wrote (result or error message).
    /// Always set by a swex host.
    pub free_buffer: Option<SwexServiceFreeFn>,
    /// `list_files`: [`ListFilesArgs`](crate::types::ListFilesArgs) →
    /// [`ListFilesResult`](crate::types::ListFilesResult). Null: not provided by this host.
    pub list_files: Option<SwexServiceFn>,
    /// `file_info`: [`FileInfoArgs`](crate::types::FileInfoArgs) →
    /// [`FileInfoResult`](crate::types::FileInfoResult).
    pub file_info: Option<SwexServiceFn>,
    /// `read_lines`: [`ReadLinesArgs`](crate::types::ReadLinesArgs) →
    /// [`ReadLinesResult`](crate::types::ReadLinesResult).
    pub read_lines: Option<SwexServiceFn>,
    /// `chunks`: [`ChunksArgs`](crate::types::ChunksArgs) →
    /// [`ChunksResult`](crate::types::ChunksResult).
    pub chunks: Option<SwexServiceFn>,
    /// `lexical_search`: [`SearchArgs`](crate::types::SearchArgs) →
    /// [`SearchResult`](crate::types::SearchResult).
    pub lexical_search: Option<SwexServiceFn>,
    /// `dense_search`: [`DenseSearchArgs`](crate::types::DenseSearchArgs) →
    /// [`SearchResult`](crate::types::SearchResult).
    pub dense_search: Option<SwexServiceFn>,
    /// `definitions`: [`DefinitionsArgs`](crate::types::DefinitionsArgs) →
    /// [`DefinitionsResult`](crate::types::DefinitionsResult).
    pub definitions: Option<SwexServiceFn>,
    /// `graph_neighbours`: [`NeighboursArgs`](crate::types::NeighboursArgs) →
    /// [`NeighboursResult`](crate::types::NeighboursResult).
    pub graph_neighbours: Option<SwexServiceFn>,
    /// `personalized_pagerank`: [`PageRankArgs`](crate::types::PageRankArgs) →
    /// [`PageRankResult`](crate::types::PageRankResult).
    pub personalized_pagerank: Option<SwexServiceFn>,
    /// `grep`: [`GrepArgs`](crate::types::GrepArgs) → [`GrepResult`](crate::types::GrepResult).
    /// The last slot of the version-1 layout.
    pub grep: Option<SwexServiceFn>,
    /// Appended after the first release: read `struct_size` before using it.
    pub issue_clues: Option<SwexServiceFn>,
    /// Appended after `issue_clues`: read `struct_size` before using it.
    pub code_search: Option<SwexServiceFn>,
    /// Appended after `code_search`: read `struct_size` before using it.
    pub history_search: Option<SwexServiceFn>,
}
