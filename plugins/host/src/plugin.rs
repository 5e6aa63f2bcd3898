//! Loading plugins and checking their vtable: [`ExplorerPlugin`].
//!
//! The same checks run for a library opened with `dlopen` and for a built-in explorer linked
//! into the binary: both come down to a vtable getter. The ABI version and table size are read
//! before anything else in the table; a mismatch is refused with both versions named. Libraries
//! are never unloaded (their code may still be referenced by leaked instances or threads).

use crate::error::{CallFailure, HostError};
use crate::instance::ExplorerInstance;
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use swex_plugin::abi::{
    SWEX_ABI_VERSION, SWEX_ENTRY_SYMBOL, SWEX_OK, SwexBuffer, SwexBytes, SwexExplorerVTable,
    SwexVTableGetter,
};

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// Linked into this binary.
    Builtin,
    /// Loaded from a shared library.
    Library(PathBuf),
}

/// A checked explorer vtable with its metadata. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ExplorerPlugin {
    name: String,
    description: String,
    abi_version: u32,
    source: PluginSource,
    vtable: &'static SwexExplorerVTable,
}

impl ExplorerPlugin {
    /// Registers a built-in explorer through its vtable getter (no dlopen).
    pub fn builtin(getter: SwexVTableGetter) -> Result<ExplorerPlugin, HostError> {
        check_vtable(getter(), PluginSource::Builtin, "(built-in)")
    }

    /// Opens a plugin library, finds its entry symbol and checks its vtable. The library stays
    /// loaded for the life of the process.
    ///
    /// The path is made absolute first: the dynamic loader takes a bare name (`libx.so`) as a
    /// library to look up in its search path, so `--plugin libx.so` could load a same-named
    /// system library instead of the file in the current folder. A failed load says the loader's
    /// own reason (`dlerror`: a missing dependency, a wrong architecture, ...).
    pub fn load(path: &Path) -> Result<ExplorerPlugin, HostError> {
        let load_error = |message: String| HostError::Load {
            path: path.to_owned(),
            message,
        };
        if !path.is_file() {
            return Err(load_error("no such file".to_owned()));
        }
        let absolute = std::path::absolute(path).map_err(|e| load_error(e.to_string()))?;
        // SAFETY: loading a library runs its initialisers; that is what loading a plugin means.
        let library = unsafe { libloading::Library::new(&absolute) }
            .map_err(|e| load_error(error_chain(&e)))?;
        let symbol = format!("{SWEX_ENTRY_SYMBOL}\0");
        // SAFETY: the entry symbol's type is fixed by the ABI.
        let getter: SwexVTableGetter =
            match unsafe { library.get::<SwexVTableGetter>(symbol.as_bytes()) } {
                Ok(getter) => *getter,
                Err(_) => {
                    return Err(HostError::MissingSymbol {
                        path: path.to_owned(),
                        symbol: SWEX_ENTRY_SYMBOL.to_owned(),
                    });
                }
            };
        // Never unload: instances, threads and the static vtable itself point into the library.
        std::mem::forget(library);
        check_vtable(
            getter(),
            PluginSource::Library(absolute),
            &path.display().to_string(),
        )
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn abi_version(&self) -> u32 {
        self.abi_version
    }

    pub fn source(&self) -> &PluginSource {
        &self.source
    }

    /// What identifies this explorer's code, for result rows (so that rows of two builds never
    /// mix): `plugin <file> blake3:<hex>` of a library's bytes, or `built-in, swex <version>
    /// blake3:<hex>` of this executable's for a built-in (rebuilding swex changes it). The
    /// executable is hashed once per process.
    pub fn build_identity(&self) -> Result<String, HostError> {
        match &self.source {
            PluginSource::Library(path) => Ok(format!(
                "plugin {} {}",
                path.file_name().unwrap_or_default().to_string_lossy(),
                file_digest(path)?
            )),
            PluginSource::Builtin => {
                static EXECUTABLE: OnceLock<Result<String, (PathBuf, String)>> = OnceLock::new();
                let digest = EXECUTABLE.get_or_init(|| {
                    let exe = std::env::current_exe()
                        .map_err(|e| (PathBuf::from("(this executable)"), e.to_string()))?;
                    file_digest(&exe).map_err(|e| (exe, e.to_string()))
                });
                match digest {
                    Ok(digest) => Ok(format!(
                        "built-in, swex {} {digest}",
                        env!("CARGO_PKG_VERSION")
                    )),
                    Err((path, message)) => Err(HostError::Load {
                        path: path.clone(),
                        message: format!("reading it to identify the build: {message}"),
                    }),
                }
            }
        }
    }

    /// The library path, for dynamic plugins.
    pub fn library_path(&self) -> Option<&Path> {
        match &self.source {
            PluginSource::Builtin => None,
            PluginSource::Library(path) => Some(path),
        }
    }

    pub(crate) fn vtable(&self) -> &'static SwexExplorerVTable {
        self.vtable
    }

    /// Creates an instance with the given config (`null` for none).
    pub fn instantiate(&self, config: &serde_json::Value) -> Result<ExplorerInstance, HostError> {
        let config_json = if config.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(config).expect("a JSON value serializes")
        };
        let create = self.vtable.create.expect("checked in check_vtable");
        let mut handle = std::ptr::null_mut();
        let mut error = SwexBuffer::EMPTY;
        // SAFETY: the vtable passed check_vtable; the buffers outlive the call.
        let status =
            unsafe { create(SwexBytes::from_slice(&config_json), &mut handle, &mut error) };
        let message = self.take_buffer(error);
        if status != SWEX_OK {
            return Err(HostError::Create {
                explorer: self.name.clone(),
                failure: call_failure(status),
                message: String::from_utf8_lossy(&message).into_owned(),
            });
        }
        if handle.is_null() {
            return Err(HostError::Create {
                explorer: self.name.clone(),
                failure: CallFailure::Failed,
                message: "create reported success but returned no instance".to_owned(),
            });
        }
        Ok(ExplorerInstance::new(self.clone(), handle))
    }

    /// Copies a plugin-allocated buffer and frees it with the plugin's allocator.
    pub(crate) fn take_buffer(&self, buffer: SwexBuffer) -> Vec<u8> {
        // SAFETY: the buffer was filled by this plugin (or left empty) and is freed once.
        let bytes = unsafe { buffer.as_slice() }.to_vec();
        if !buffer.ptr.is_null() {
            let free = self.vtable.free_buffer.expect("checked in check_vtable");
            // SAFETY: as above.
            unsafe { free(buffer) };
        }
        bytes
    }
}

pub(crate) fn call_failure(status: i32) -> CallFailure {
    match status {
        swex_plugin::abi::SWEX_ERR_INVALID_INPUT => CallFailure::InvalidInput,
        swex_plugin::abi::SWEX_ERR_FAILED => CallFailure::Failed,
        swex_plugin::abi::SWEX_ERR_PANIC => CallFailure::Panic,
        other => CallFailure::UnknownStatus(other),
    }
}

fn check_vtable(
    vtable: *const SwexExplorerVTable,
    source: PluginSource,
    label: &str,
) -> Result<ExplorerPlugin, HostError> {
    let bad = |message: &str| HostError::BadVTable {
        plugin: label.to_owned(),
        message: message.to_owned(),
    };
    if vtable.is_null() {
        return Err(bad("the entry symbol returned a null vtable"));
    }
    // Only the two leading u32 fields are read before the version check: they sit at the same
    // place in every ABI version.
    // SAFETY: non-null, and every version of the table starts with these two fields.
    let (abi_version, struct_size) = unsafe { ((*vtable).abi_version, (*vtable).struct_size) };
    if abi_version != SWEX_ABI_VERSION {
        return Err(HostError::AbiMismatch {
            plugin: label.to_owned(),
            found: abi_version,
            expected: SWEX_ABI_VERSION,
        });
    }
    let minimum = std::mem::size_of::<SwexExplorerVTable>();
    if (struct_size as usize) < minimum {
        return Err(bad(&format!(
            "struct_size is {struct_size} bytes, ABI version {SWEX_ABI_VERSION} needs at least {minimum}"
        )));
    }
    // SAFETY: the version and size checks passed, so the whole version-1 table is there, and the
    // ABI says it lives as long as the library (which is never unloaded).
    let vtable: &'static SwexExplorerVTable = unsafe { &*vtable };
    let name = read_c_str(vtable.name).ok_or_else(|| bad("name is null or not UTF-8"))?;
    if name.is_empty() {
        return Err(bad("name is empty"));
    }
    let description = if vtable.description.is_null() {
        String::new()
    } else {
        read_c_str(vtable.description).ok_or_else(|| bad("description is not UTF-8"))?
    };
    let label = format!("{name} ({label})");
    let missing = |field: &str| HostError::BadVTable {
        plugin: label.clone(),
        message: format!("{field} is null"),
    };
    vtable.create.ok_or_else(|| missing("create"))?;
    vtable.explore.ok_or_else(|| missing("explore"))?;
    vtable.free_buffer.ok_or_else(|| missing("free_buffer"))?;
    vtable.destroy.ok_or_else(|| missing("destroy"))?;
    Ok(ExplorerPlugin {
        name,
        description,
        abi_version,
        source,
        vtable,
    })
}

/// An error and its sources, `: `-joined (libloading keeps `dlerror`'s text in the source).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = inner.source();
    }
    message
}

/// `blake3:<16 hex>` of a file's bytes.
fn file_digest(path: &Path) -> Result<String, HostError> {
    let mut hasher = blake3::Hasher::new();
    std::fs::File::open(path)
        .and_then(|file| hasher.update_reader(file).map(|_| ()))
        .map_err(|e| HostError::Load {
            path: path.to_owned(),
            message: format!("reading it to identify the build: {e}"),
        })?;
    Ok(format!("blake3:{}", &hasher.finalize().to_hex()[..16]))
}

fn read_c_str(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the ABI says these are NUL-terminated static strings.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .ok()
        .map(str::to_owned)
}
