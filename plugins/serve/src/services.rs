//! Serving explorers: the [`RawServices`] trait (JSON bytes in, JSON bytes out, one general
//! entry point for every service) and the C services table built on top of it.
//!
//! Three things implement `RawServices`: every typed [`crate::ServiceBackend`] (filesystem,
//! engine), and, inside an isolated worker process, the proxy that forwards each call to the
//! parent. The C table is the same for all of them, so a plugin cannot tell where its answers
//! come from.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use swex_plugin::__private::panic_message;
use swex_plugin::abi::{
    SWEX_ABI_VERSION, SWEX_ERR_PANIC, SWEX_OK, SwexBuffer, SwexBytes, SwexServiceFn, SwexServices,
};
use swex_plugin::types::{FileInfoArgs, FileInfoResult};
use swex_plugin::{ServiceError, ServiceId};

/// Answers service calls with raw JSON. Implementations must accept concurrent calls.
pub trait RawServices: Send + Sync {
    /// Runs one service: `args` is the JSON arguments, the result is the JSON result.
    fn call(&self, service: ServiceId, args: &[u8]) -> Result<Vec<u8>, ServiceError>;

    /// Whether `path` is a file of the snapshot (used to validate explorer output).
    fn contains_file(&self, path: &str) -> bool {
        let args = serde_json::to_vec(&FileInfoArgs {
            path: path.to_owned(),
        })
        .expect("FileInfoArgs serializes");
        self.call(ServiceId::FileInfo, &args).is_ok()
    }

    /// The real line count of a file of the snapshot (`None` when it is not one), to hold
    /// answers to a line budget.
    fn line_count(&self, path: &str) -> Option<u64> {
        let args = serde_json::to_vec(&FileInfoArgs {
            path: path.to_owned(),
        })
        .expect("FileInfoArgs serializes");
        let result = self.call(ServiceId::FileInfo, &args).ok()?;
        let info: FileInfoResult = serde_json::from_slice(&result).ok()?;
        info.file.line_count.map(u64::from)
    }
}

/// A C services table that forwards to a [`RawServices`]; valid as long as it lives.
pub struct ServicesTable<'a> {
    table: SwexServices,
    // The table's `context` is a thin pointer to this (fat) reference, so the reference needs a
    // stable address of its own: the box provides it. It must not drop while the table lives.
    #[allow(clippy::redundant_allocation)]
    _context: Box<&'a dyn RawServices>,
}

impl<'a> ServicesTable<'a> {
    /// A table over `services` with every slot set (the full current layout: `struct_size` is
    /// `size_of::<SwexServices>()`): each slot hands the raw JSON arguments to
    /// [`RawServices::call`] and returns its answer, or its error's status and message. Pass
    /// [`ServicesTable::as_ptr`] to a plugin's `explore`; the pointer is valid while the table lives.
    pub fn new(services: &'a dyn RawServices) -> ServicesTable<'a> {
        #[allow(clippy::redundant_allocation)]
        let context: Box<&'a dyn RawServices> = Box::new(services);
        let context_ptr = &*context as *const &dyn RawServices as *const c_void;
        let slot = |index: usize| -> Option<SwexServiceFn> { Some(TRAMPOLINES[index]) };
        let table = SwexServices {
            abi_version: SWEX_ABI_VERSION,
            struct_size: std::mem::size_of::<SwexServices>() as u32,
            context: context_ptr,
            free_buffer: Some(free_host_buffer),
            list_files: slot(0),
            file_info: slot(1),
            read_lines: slot(2),
            chunks: slot(3),
            lexical_search: slot(4),
            dense_search: slot(5),
            definitions: slot(6),
            graph_neighbours: slot(7),
            personalized_pagerank: slot(8),
            grep: slot(9),
            issue_clues: slot(10),
            code_search: slot(11),
            history_search: slot(12),
        };
        ServicesTable {
            table,
            _context: context,
        }
    }

    /// The table to pass to a plugin's `explore`; valid while `self` lives.
    pub fn as_ptr(&self) -> *const SwexServices {
        &self.table
    }
}

/// One trampoline per slot, in `ServiceId::ALL` order.
const TRAMPOLINES: [SwexServiceFn; ServiceId::ALL.len()] = [
    trampoline::<0>,
    trampoline::<1>,
    trampoline::<2>,
    trampoline::<3>,
    trampoline::<4>,
    trampoline::<5>,
    trampoline::<6>,
    trampoline::<7>,
    trampoline::<8>,
    trampoline::<9>,
    trampoline::<10>,
    trampoline::<11>,
    trampoline::<12>,
];

unsafe extern "C" fn trampoline<const INDEX: usize>(
    context: *const c_void,
    args: SwexBytes,
    out: *mut SwexBuffer,
) -> i32 {
    let service = ServiceId::ALL[INDEX];
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `context` is the `&dyn RawServices` box of a live ServicesTable.
        let services = unsafe { *(context as *const &dyn RawServices) };
        // SAFETY: the plugin passes `len` readable bytes, valid during the call.
        services.call(service, unsafe { args.as_slice() })
    }));
    let (status, bytes) = match result {
        Ok(Ok(bytes)) => (SWEX_OK, bytes),
        Ok(Err(error)) => (error.kind.status(), error.message.into_bytes()),
        Err(payload) => (
            SWEX_ERR_PANIC,
            format!(
                "the host panicked serving {service}: {}",
                panic_message(&*payload)
            )
            .into_bytes(),
        ),
    };
    if !out.is_null() {
        // SAFETY: the plugin passed a writable SwexBuffer.
        unsafe { out.write(SwexBuffer::from_vec(bytes)) };
    }
    status
}

unsafe extern "C" fn free_host_buffer(_context: *const c_void, buffer: SwexBuffer) {
    // SAFETY: every buffer the trampolines hand out comes from `SwexBuffer::from_vec`.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { buffer.free_rust() }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_plugin::Services;
    use swex_plugin::types::IssueClues;

    /// `issue_clues` is answered by every backend, through the C table as a plugin calls it, and
    /// a table of the first layout (without the slot) makes it `Unavailable`, not a crash.
    #[test]
    fn issue_clues_through_the_table_and_from_older_tables() {
        let backend = crate::MemoryBackend::new(Vec::<(String, Vec<u8>)>::new());
        let table = ServicesTable::new(&backend);
        // SAFETY: the table outlives `services`.
        let services = unsafe { Services::from_raw(table.as_ptr()) }.unwrap();
        let issue = "Crash in `Parser.feed()`:\n  File \"src/parse.py\", line 3, in feed\n";
        let clues: IssueClues = services.issue_clues(issue).unwrap();
        assert_eq!(clues, swex_issue::parse(issue));
        assert_eq!(clues.frames[0].path, "src/parse.py");
        assert_eq!(clues.identifiers, ["Parser.feed"]);

        let mut old = SwexServices { ..table.table };
        old.struct_size = std::mem::offset_of!(SwexServices, issue_clues) as u32;
        // SAFETY: `old` lives until the end of the test.
        let services = unsafe { Services::from_raw(&old) }.unwrap();
        let error = services.issue_clues(issue).unwrap_err();
        assert!(error.is_unavailable(), "{error}");
    }
}
