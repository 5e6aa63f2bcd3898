//! swex's own worker, the Rust implementation of the worker protocol (docs/protocol.md, types in
//! [`crate::isolated`]; the Python SDK in `plugins/python` is its twin): [`run_worker`] loads one
//! explorer — a library or a built-in, named on its command line — and answers the parent's
//! requests over stdin/stdout. Service calls are forwarded to the parent, which holds the
//! snapshot.
//!
//! Before loading the plugin the worker keeps a private copy of its stdout for the protocol and
//! points file descriptor 1 at stderr (Unix), so whatever the plugin prints cannot be mistaken
//! for a message.

use crate::error::HostError;
use crate::isolated::{FromWorker, PROTOCOL_VERSION, PluginTarget, ToWorker};
use crate::plugin::ExplorerPlugin;
use std::fs::File;
use std::io::{BufRead, BufReader, Stdin, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use swex_plugin::abi::SwexVTableGetter;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};
use swex_plugin_serve::RawServices;

struct Channel {
    input: BufReader<Stdin>,
    output: File,
}

impl Channel {
    fn send(&mut self, message: &FromWorker) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).expect("protocol messages serialize");
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.output.flush()
    }

    /// The next message; `None` at end of input.
    fn receive(&mut self) -> Result<Option<ToWorker>, String> {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| format!("invalid message from the parent: {e}")),
            Err(e) => Err(format!("reading from the parent: {e}")),
        }
    }
}

/// Services that forward every call to the parent.
struct ProxyServices<'a> {
    channel: &'a Mutex<Channel>,
    next_id: AtomicU64,
}

impl RawServices for ProxyServices<'_> {
    fn call(&self, service: ServiceId, args: &[u8]) -> Result<Vec<u8>, ServiceError> {
        let failed =
            |message: String| ServiceError::new(service, ServiceErrorKind::Failed, message);
        let args: serde_json::Value = serde_json::from_slice(args).map_err(|e| {
            ServiceError::new(
                service,
                ServiceErrorKind::InvalidArgs,
                format!("not JSON: {e}"),
            )
        })?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // One exchange at a time: the answer to this call is the next message from the parent.
        let mut channel = self.channel.lock().unwrap_or_else(|p| p.into_inner());
        channel
            .send(&FromWorker::ServiceCall { id, service, args })
            .map_err(|e| failed(format!("writing to the parent: {e}")))?;
        match channel.receive().map_err(failed)? {
            Some(ToWorker::ServiceResult {
                id: answer_id,
                ok,
                error,
            }) if answer_id == id => match (ok, error) {
                (_, Some(error)) => Err(error),
                (Some(value), None) => Ok(serde_json::to_vec(&value).expect("JSON serializes")),
                (None, None) => Err(failed("the parent sent an empty service result".to_owned())),
            },
            Some(other) => Err(failed(format!(
                "unexpected message from the parent: {other:?}"
            ))),
            None => Err(failed("the parent closed the connection".to_owned())),
        }
    }
}

#[cfg(unix)]
fn protocol_output() -> std::io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain descriptor duplication; F_DUPFD_CLOEXEC keeps the protocol descriptor out of
    // processes the plugin may start.
    let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: descriptor 2 is our stderr; after this, prints to stdout go to stderr.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(not(unix))]
fn protocol_output() -> std::io::Result<File> {
    Err(std::io::Error::other(
        "isolated mode needs descriptor redirection, which this platform build does not have",
    ))
}

fn load(target: &PluginTarget, builtins: &[SwexVTableGetter]) -> Result<ExplorerPlugin, HostError> {
    match target {
        PluginTarget::Library(path) => ExplorerPlugin::load(path),
        PluginTarget::Builtin(name) => {
            let mut names = Vec::new();
            for getter in builtins {
                let plugin = ExplorerPlugin::builtin(*getter)?;
                if plugin.name() == name {
                    return Ok(plugin);
                }
                names.push(plugin.name().to_owned());
            }
            Err(HostError::UnknownExplorer {
                name: name.clone(),
                available: names,
            })
        }
    }
}

/// Runs the worker for `target` until the parent says `shutdown` or closes stdin. Returns the
/// process exit code: 0 after a clean shutdown, 1 when the explorer could not be loaded or
/// created or the parent speaks another protocol version, 2 on a protocol failure.
pub fn run_worker(target: &PluginTarget, builtins: &[SwexVTableGetter]) -> i32 {
    let output = match protocol_output() {
        Ok(output) => output,
        Err(e) => {
            eprintln!("swex plugin worker: cannot set up the protocol channel: {e}");
            return 2;
        }
    };
    let channel = Mutex::new(Channel {
        input: BufReader::new(std::io::stdin()),
        output,
    });
    let lock = || channel.lock().unwrap_or_else(|p| p.into_inner());

    let init = lock().receive();
    let config = match init {
        Ok(Some(ToWorker::Init { protocol, config })) if protocol == PROTOCOL_VERSION => config,
        Ok(Some(ToWorker::Init { protocol, .. })) => {
            let _ = lock().send(&FromWorker::Fatal {
                message: format!(
                    "the host speaks worker protocol version {protocol}, this worker speaks \
                     version {PROTOCOL_VERSION}"
                ),
            });
            return 1;
        }
        Ok(None) => return 0,
        Ok(Some(other)) => {
            eprintln!("swex plugin worker: expected init, got {other:?}");
            return 2;
        }
        Err(e) => {
            eprintln!("swex plugin worker: {e}");
            return 2;
        }
    };
    let instance = load(target, builtins).and_then(|plugin| plugin.instantiate(&config));
    let instance = match instance {
        Ok(instance) => instance,
        Err(e) => {
            let _ = lock().send(&FromWorker::Fatal {
                message: e.to_string(),
            });
            return 1;
        }
    };
    let ready = FromWorker::Ready {
        protocol: PROTOCOL_VERSION,
        name: instance.name().to_owned(),
        description: instance.plugin().description().to_owned(),
        abi_version: Some(instance.plugin().abi_version()),
    };
    if lock().send(&ready).is_err() {
        return 2;
    }

    let proxy = ProxyServices {
        channel: &channel,
        next_id: AtomicU64::new(1),
    };
    loop {
        let message = lock().receive();
        match message {
            Ok(Some(ToWorker::Explore { id, request })) => {
                let (response, error) = match instance.explore(&request, &proxy) {
                    Ok(response) => (Some(response), None),
                    Err(e) => (None, Some(e.to_string())),
                };
                let result = FromWorker::ExploreResult {
                    id,
                    response,
                    error,
                };
                if lock().send(&result).is_err() {
                    return 2;
                }
            }
            Ok(Some(ToWorker::Shutdown)) | Ok(None) => return 0,
            Ok(Some(other)) => {
                eprintln!("swex plugin worker: unexpected message {other:?}");
                return 2;
            }
            Err(e) => {
                eprintln!("swex plugin worker: {e}");
                return 2;
            }
        }
    }
}
