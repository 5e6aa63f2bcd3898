//! Isolated mode and the public worker protocol: an explorer in a child process, so that a plugin
//! that crashes, aborts, hangs or prints garbage costs one failed instance with a reason, never
//! the run.
//!
//! A worker is any program that speaks the protocol of docs/protocol.md (version
//! [`PROTOCOL_VERSION`], messages [`ToWorker`] and [`FromWorker`], machine-readable schema in
//! `plugins/protocol/schema.json`): swex's own `swex __plugin-worker` (which loads a library or a
//! built-in explorer, [`crate::worker::run_worker`]), a Python file run by the Python SDK
//! (`plugins/python`), or any executable. Parent and child speak JSON lines over the child's
//! stdin and stdout:
//!
//! ```text
//! parent → init {protocol, config}        child → ready {protocol, name, description} | fatal {message}
//! parent → explore {id, request}          child → service_call {id, service, args}   (0..n)
//! parent → service_result {id, ok|error}  child → explore_result {id, response|error}
//! parent → shutdown
//! ```
//!
//! Service calls are proxied to the parent, which alone holds the snapshot and its indexes.
//! Anything on the protocol channel that is not a valid message is a protocol failure (workers
//! move their own stdout aside so that an explorer's prints cannot corrupt it). Each call has a
//! time limit; on a timeout, a crash or a protocol failure the worker's whole process group is
//! killed and reaped, the call fails with the reason (exit status or signal, and the tail of the
//! worker's stderr), and the next call starts a fresh worker.
//!
//! A worker serves one call at a time, so an `IsolatedExplorer` keeps a pool: each call takes an
//! idle worker or starts one, and gives it back when the call ends with the worker sound. Calls
//! may come from many threads at once; there are never more workers than calls in flight at the
//! busiest moment (a benchmark run's `workers`, a server's concurrent calls).

use crate::error::{CallFailure, HostError};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use swex_plugin::{Request, Response, ServiceError, ServiceId};
use swex_plugin_serve::RawServices;

/// The version of the worker protocol this host speaks (docs/protocol.md). Sent in `init`;
/// a worker answers `ready` with the same number or `fatal` naming both.
pub const PROTOCOL_VERSION: u32 = 1;

/// Which explorer swex's own worker (`swex __plugin-worker`) should load: given on its command
/// line ([`PluginTarget::worker_args`]), so that `init` is the same for every worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginTarget {
    /// A built-in explorer of the worker binary, by name.
    Builtin(String),
    /// A plugin library.
    Library(PathBuf),
}

impl PluginTarget {
    /// The worker's arguments naming this target: `--builtin NAME` or `--library PATH`.
    pub fn worker_args(&self) -> Vec<OsString> {
        match self {
            PluginTarget::Builtin(name) => vec!["--builtin".into(), name.into()],
            PluginTarget::Library(path) => vec!["--library".into(), path.into()],
        }
    }

    /// The target named by a worker's arguments (the inverse of [`PluginTarget::worker_args`]).
    pub fn from_worker_args(args: &[OsString]) -> Option<PluginTarget> {
        match args {
            [flag, value] if flag == "--builtin" => {
                Some(PluginTarget::Builtin(value.to_string_lossy().into_owned()))
            }
            [flag, value] if flag == "--library" => Some(PluginTarget::Library(value.into())),
            _ => None,
        }
    }
}

impl std::fmt::Display for PluginTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginTarget::Builtin(name) => write!(f, "{name}"),
            PluginTarget::Library(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Parent → worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    /// The first message: the protocol version the host speaks and the explorer's config
    /// (`null` for none).
    Init {
        protocol: u32,
        #[serde(default)]
        config: serde_json::Value,
    },
    Explore {
        id: u64,
        request: Request,
    },
    ServiceResult {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ServiceError>,
    },
    Shutdown,
}

/// Worker → parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromWorker {
    /// The answer to `init`: the explorer is created and waits for requests.
    Ready {
        protocol: u32,
        name: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        description: String,
        /// The C ABI version of the library a swex worker loaded (absent for other workers).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        abi_version: Option<u32>,
    },
    Fatal {
        message: String,
    },
    ServiceCall {
        id: u64,
        service: ServiceId,
        args: serde_json::Value,
    },
    ExploreResult {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<Response>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// How to start a worker process.
#[derive(Debug, Clone, Default)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Working directory of the worker (default: ours). Python workers change to each request's
    /// `repo_root` themselves.
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
}

impl WorkerCommand {
    /// The running executable with the given arguments (e.g. `["__plugin-worker"]`).
    pub fn current_exe(args: &[&str]) -> Result<WorkerCommand, HostError> {
        let program = std::env::current_exe()
            .map_err(|e| HostError::io("finding the current executable", e))?;
        Ok(WorkerCommand {
            program,
            args: args.iter().map(OsString::from).collect(),
            ..WorkerCommand::default()
        })
    }

    /// swex's own worker for `target`: the running executable with `subcommand` and the
    /// target's arguments.
    pub fn swex_worker(
        subcommand: &str,
        target: &PluginTarget,
    ) -> Result<WorkerCommand, HostError> {
        let mut command = WorkerCommand::current_exe(&[subcommand])?;
        command.args.extend(target.worker_args());
        Ok(command)
    }
}

#[derive(Debug, Clone)]
pub struct IsolatedOptions {
    /// Time limit for starting the worker and for each explore call (service time included).
    pub timeout: Duration,
    /// Copy the worker's stderr to ours as it comes (it is always kept for failure reports).
    pub forward_stderr: bool,
}

impl Default for IsolatedOptions {
    fn default() -> Self {
        IsolatedOptions {
            timeout: Duration::from_secs(600),
            forward_stderr: false,
        }
    }
}

enum Incoming {
    Message(FromWorker),
    Garbage(String),
}

const STDERR_TAIL_BYTES: usize = 4096;

struct Worker {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Incoming>,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
}

/// Why a worker stopped answering.
enum Lost {
    Timeout,
    Crashed(String),
    Protocol(String),
}

impl Worker {
    fn spawn(command: &WorkerCommand, options: &IsolatedOptions) -> Result<Worker, HostError> {
        let mut process = Command::new(&command.program);
        process
            .args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &command.cwd {
            process.current_dir(cwd);
        }
        // Its own process group, so that a kill also reaches what the worker started (an agent
        // CLI, a shell): nothing outlives a failed call.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut process, 0);
        let mut child = process.spawn().map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "starting the worker: `{}` was not found (is it installed and on PATH?)",
                    command.program.display()
                )
            } else {
                format!("starting the worker {}", command.program.display())
            };
            HostError::io(what, e)
        })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");

        let (sender, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let incoming = match serde_json::from_str::<FromWorker>(&line) {
                    Ok(message) => Incoming::Message(message),
                    Err(_) => Incoming::Garbage(line),
                };
                if sender.send(incoming).is_err() {
                    break;
                }
            }
        });

        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr_tail);
        let forward = options.forward_stderr;
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                if forward {
                    let _ = std::io::stderr().write_all(&buffer[..n]);
                }
                let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                tail.extend(&buffer[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
        });

        Ok(Worker {
            child,
            stdin,
            messages,
            stderr_tail,
        })
    }

    fn send(&mut self, message: &ToWorker) -> Result<(), Lost> {
        let mut line = serde_json::to_vec(message).expect("protocol messages serialize");
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .and_then(|()| self.stdin.flush())
            .map_err(|_| self.crashed())
    }

    fn receive(&mut self, deadline: Instant) -> Result<FromWorker, Lost> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.messages.recv_timeout(wait) {
            Ok(Incoming::Message(message)) => Ok(message),
            Ok(Incoming::Garbage(line)) => Err(Lost::Protocol(format!(
                "the worker wrote something that is not a protocol message: {:?}",
                truncate(&line, 200)
            ))),
            Err(RecvTimeoutError::Timeout) => Err(Lost::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(self.crashed()),
        }
    }

    /// The worker closed its end: wait for its exit status and describe it.
    fn crashed(&mut self) -> Lost {
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    self.kill_group();
                    break self.child.wait().ok();
                }
            }
        };
        let what = match status {
            Some(status) => describe_exit(status),
            None => "the worker stopped answering".to_owned(),
        };
        Lost::Crashed(what)
    }

    fn stderr_tail(&self) -> String {
        // Give the stderr thread a moment to drain what the dying worker wrote last.
        std::thread::sleep(Duration::from_millis(20));
        let tail = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(6)..].join(" | ")
    }

    /// Kills the worker and everything it started, then reaps it (no zombie is left behind).
    fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.wait();
    }

    fn kill_group(&mut self) {
        #[cfg(unix)]
        {
            // The group's id is the worker's pid (`process_group(0)`); it is not reused while
            // the worker is unreaped or any member of the group lives.
            let group = -(self.child.id() as i32);
            // SAFETY: plain signal delivery to a process group we created.
            unsafe { libc::kill(group, libc::SIGKILL) };
        }
        let _ = self.child.kill();
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((index, _)) => &text[..index],
        None => text,
    }
}

/// "exited with status 3", "killed by signal 11 (SIGSEGV)".
pub fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("the worker was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("the worker exited with status {code}"),
        None => format!("the worker ended: {status}"),
    }
}

/// An explorer running in worker processes, one per call in flight (see the module docs).
pub struct IsolatedExplorer {
    command: WorkerCommand,
    config: serde_json::Value,
    options: IsolatedOptions,
    name: String,
    description: String,
    /// Workers between calls; a call takes one out, so the lock is never held during a call.
    idle: Mutex<Vec<Worker>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for IsolatedExplorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsolatedExplorer")
            .field("name", &self.name)
            .field("program", &self.command.program)
            .finish()
    }
}

impl IsolatedExplorer {
    /// Starts a worker, has it create its explorer with `config` and checks the handshake.
    /// Fails fast on a worker that cannot start, speaks another protocol version, cannot load
    /// its explorer or rejects its config.
    pub fn start(
        command: WorkerCommand,
        config: serde_json::Value,
        options: IsolatedOptions,
    ) -> Result<IsolatedExplorer, HostError> {
        let mut explorer = IsolatedExplorer {
            name: command.program.display().to_string(),
            description: String::new(),
            command,
            config,
            options,
            idle: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        };
        let (worker, name, description) = explorer.spawn()?;
        explorer.name = name;
        explorer.description = description;
        explorer.idle_workers().push(worker);
        Ok(explorer)
    }

    /// The name the worker gave in its `ready` message.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description the worker gave in its `ready` message (may be empty).
    pub fn description(&self) -> &str {
        &self.description
    }

    fn spawn(&self) -> Result<(Worker, String, String), HostError> {
        let mut worker = Worker::spawn(&self.command, &self.options)?;
        let deadline = Instant::now() + self.options.timeout;
        let init = ToWorker::Init {
            protocol: PROTOCOL_VERSION,
            config: self.config.clone(),
        };
        let answer = worker.send(&init).and_then(|()| worker.receive(deadline));
        match answer {
            Ok(FromWorker::Ready {
                protocol,
                name,
                description,
                ..
            }) if protocol == PROTOCOL_VERSION => Ok((worker, name, description)),
            Ok(FromWorker::Ready { protocol, name, .. }) => {
                worker.kill();
                Err(HostError::ProtocolMismatch {
                    explorer: name,
                    found: protocol,
                    expected: PROTOCOL_VERSION,
                })
            }
            Ok(FromWorker::Fatal { message }) => {
                worker.kill();
                Err(HostError::Create {
                    explorer: self.name.clone(),
                    failure: CallFailure::Failed,
                    message,
                })
            }
            Ok(other) => {
                worker.kill();
                Err(self.lost(
                    &worker,
                    Lost::Protocol(format!("unexpected first message {other:?}")),
                ))
            }
            Err(lost) => {
                worker.kill();
                Err(self.lost(&worker, lost))
            }
        }
    }

    fn lost(&self, worker: &Worker, lost: Lost) -> HostError {
        let reason = match lost {
            Lost::Timeout => {
                return HostError::Timeout {
                    explorer: self.name.clone(),
                    seconds: self.options.timeout.as_secs_f64(),
                };
            }
            Lost::Crashed(what) => what,
            Lost::Protocol(what) => what,
        };
        let tail = worker.stderr_tail();
        let reason = if tail.is_empty() {
            reason
        } else {
            format!("{reason}; its stderr ends with: {tail}")
        };
        HostError::Worker {
            explorer: self.name.clone(),
            reason,
        }
    }

    fn idle_workers(&self) -> std::sync::MutexGuard<'_, Vec<Worker>> {
        // A panic elsewhere while holding the lock leaves the list itself intact.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one request in a worker of its own (an idle one, else a new one), answering its
    /// service calls from `services`. On a failure of the worker the call fails and the worker is
    /// killed; a later call starts a fresh one.
    pub fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<Response, HostError> {
        crate::check_request(&self.name, request)?;
        let idle = self.idle_workers().pop();
        let mut worker = match idle {
            Some(worker) => worker,
            None => self.spawn()?.0,
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now() + self.options.timeout;
        match self.exchange(&mut worker, id, request, services, deadline) {
            Ok(result) => {
                self.idle_workers().push(worker);
                result
            }
            Err(lost) => {
                // Kill first so that the exit status and stderr are final.
                worker.kill();
                Err(self.lost(&worker, lost))
            }
        }
    }

    fn exchange(
        &self,
        worker: &mut Worker,
        id: u64,
        request: &Request,
        services: &dyn RawServices,
        deadline: Instant,
    ) -> Result<Result<Response, HostError>, Lost> {
        worker.send(&ToWorker::Explore {
            id,
            request: request.clone(),
        })?;
        loop {
            match worker.receive(deadline)? {
                FromWorker::ServiceCall {
                    id: call_id,
                    service,
                    args,
                } => {
                    let args = serde_json::to_vec(&args).expect("a JSON value serializes");
                    let (ok, error) = match services.call(service, &args) {
                        Ok(bytes) => match serde_json::from_slice(&bytes) {
                            Ok(value) => (Some(value), None),
                            Err(e) => (
                                None,
                                Some(ServiceError::new(
                                    service,
                                    swex_plugin::ServiceErrorKind::Failed,
                                    format!("the host produced invalid JSON: {e}"),
                                )),
                            ),
                        },
                        Err(error) => (None, Some(error)),
                    };
                    worker.send(&ToWorker::ServiceResult {
                        id: call_id,
                        ok,
                        error,
                    })?;
                }
                FromWorker::ExploreResult {
                    id: result_id,
                    response,
                    error,
                } if result_id == id => {
                    return Ok(match (response, error) {
                        (Some(response), None) => Ok(response),
                        (_, Some(message)) => Err(HostError::Explore {
                            explorer: self.name.clone(),
                            failure: CallFailure::Failed,
                            message,
                        }),
                        (None, None) => Err(HostError::BadResponse {
                            explorer: self.name.clone(),
                            message: "the worker sent neither a response nor an error".to_owned(),
                        }),
                    });
                }
                other => {
                    return Err(Lost::Protocol(format!(
                        "unexpected message while waiting for request {id}: {other:?}"
                    )));
                }
            }
        }
    }
}

impl Drop for IsolatedExplorer {
    /// Asks every worker to shut down, gives them two seconds together, then kills the rest.
    fn drop(&mut self) {
        let idle = self.idle.get_mut().unwrap_or_else(|p| p.into_inner());
        let mut workers = std::mem::take(idle);
        for worker in &mut workers {
            let _ = worker.send(&ToWorker::Shutdown);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            workers.retain_mut(|worker| !matches!(worker.child.try_wait(), Ok(Some(_))));
            if workers.is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for worker in &mut workers {
            worker.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_plugin::ServiceErrorKind;

    /// `plugins/protocol/schema.json` and these types say the same: the version, the services,
    /// the error kinds, and for every message its `type` and required fields.
    #[test]
    fn the_published_schema_matches_the_messages() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../protocol/schema.json")).unwrap();
        let defs = &schema["$defs"];
        assert_eq!(schema["protocol_version"], PROTOCOL_VERSION);
        let services: Vec<&str> = ServiceId::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(defs["service"]["enum"], serde_json::json!(services));
        let kinds: Vec<serde_json::Value> = [
            ServiceErrorKind::InvalidArgs,
            ServiceErrorKind::NotFound,
            ServiceErrorKind::Unavailable,
            ServiceErrorKind::Failed,
            ServiceErrorKind::Panic,
        ]
        .iter()
        .map(|k| serde_json::to_value(k).unwrap())
        .collect();
        assert_eq!(
            defs["service_error"]["properties"]["kind"]["enum"],
            serde_json::json!(kinds)
        );

        let error = ServiceError::new(ServiceId::Grep, ServiceErrorKind::InvalidArgs, "bad");
        let to_worker = [
            ToWorker::Init {
                protocol: PROTOCOL_VERSION,
                config: serde_json::Value::Null,
            },
            ToWorker::Explore {
                id: 1,
                request: Request::new("i", "issue", 5),
            },
            ToWorker::ServiceResult {
                id: 2,
                ok: None,
                error: Some(error),
            },
            ToWorker::Shutdown,
        ];
        let from_worker = [
            FromWorker::Ready {
                protocol: PROTOCOL_VERSION,
                name: "x".into(),
                description: String::new(),
                abi_version: None,
            },
            FromWorker::Fatal {
                message: "m".into(),
            },
            FromWorker::ServiceCall {
                id: 3,
                service: ServiceId::ReadLines,
                args: serde_json::json!({"path": "a.py"}),
            },
            FromWorker::ExploreResult {
                id: 1,
                response: Some(Response::new(vec![swex_plugin::Region::new("a.py", 1, 2)])),
                error: None,
            },
        ];
        let check = |side: &str, message: serde_json::Value| {
            let kind = message["type"].as_str().unwrap().to_owned();
            let refs: Vec<String> = defs[side]["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r["$ref"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("#/$defs/")
                        .to_owned()
                })
                .collect();
            assert!(refs.contains(&kind), "{side} lacks {kind}");
            let def = &defs[&kind];
            assert_eq!(def["properties"]["type"]["const"], kind);
            for field in def["required"].as_array().unwrap() {
                let field = field.as_str().unwrap();
                assert!(
                    message.get(field).is_some(),
                    "{kind} without {field}: {message}"
                );
            }
            for field in message.as_object().unwrap().keys() {
                assert!(
                    def["properties"].get(field).is_some(),
                    "{kind}.{field} is not in the schema"
                );
            }
            kind
        };
        let sent: Vec<String> = to_worker
            .iter()
            .map(|m| check("to_worker", serde_json::to_value(m).unwrap()))
            .collect();
        let received: Vec<String> = from_worker
            .iter()
            .map(|m| check("from_worker", serde_json::to_value(m).unwrap()))
            .collect();
        assert_eq!(sent.len() + received.len(), 8, "{sent:?} {received:?}");
        let request = serde_json::to_value(Request::new("i", "issue", 5)).unwrap();
        for field in defs["request"]["required"].as_array().unwrap() {
            assert!(request.get(field.as_str().unwrap()).is_some());
        }
    }
}
