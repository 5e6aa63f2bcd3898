//! [`SwexServer`]: the MCP server handler, and [`serve_stdio`], which runs it over stdin/stdout.
//!
//! Each `tools/call` runs on a blocking thread: first the repository's index is brought up to date
//! ([`crate::repos`]), then the tool runs ([`crate::tools`]). The call's cancellation token (a
//! client's `notifications/cancelled`, or the end of the session) reaches the engine through
//! [`Progress::is_cancelled`], so a first index build stops; progress notifications are sent while
//! an index is built when the client gave a progress token.
//!
//! Faults never end the server: bad arguments, paths outside the repository, a vanished
//! repository, a failing or panicking explorer are answered as tool errors (`isError`, with a
//! message); an unknown tool as a JSON-RPC error naming the known ones. Only protocol messages go
//! to stdout: [`serve_stdio`] moves the process's stdout to stderr before serving, so a stray
//! print (from a plugin, say) cannot corrupt the stream.

use crate::error::ToolError;
use crate::fit::fit_answer;
use crate::gate::{Gate, Output, pump_input, pump_output};
use crate::repos::{Freshness, RepoScope, Repos};
use crate::tools::{self, Answer, Ctx, TOOLS};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use swex_engine::index::{Engine, EngineConfig, Progress, Stage};
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};
use swex_plugin_host::{EngineBackend, ExplorerHandle};
use swex_plugin_serve::RawServices;

/// What the agent is told at initialisation (also in docs/mcp.md): when to call which tool.
pub const INSTRUCTIONS: &str = "swex finds the code a task needs in this repository, from a local index kept fresh on every call (your edits are seen by the next call).\n\
- Start a task with `explore`, giving the issue or task text (error messages and tracebacks help): it returns the ranked regions to read first, with why.\n\
- `search` for words or identifiers you expect in the code; `definition` for where a name is defined; `references` for where it is used; `neighbours` for a file's imports, importers, tests and callers.\n\
- `read` a region's lines (path:start-end from any answer).\n\
Paths are relative to the repository root. Answers are text with the same data as structured content.";

/// How a server is set up.
pub struct ServerOptions {
    /// Repositories served; the first is the default for calls that name none.
    pub repos: Vec<PathBuf>,
    pub engine: EngineConfig,
    /// The explorer `explore` asks (created by the caller from the plugin host's registry).
    pub explorer: ExplorerHandle,
    /// Open the repositories' indexes at start, before the first call.
    pub warm: bool,
    /// Which directories calls may name ([`RepoScope::Given`]: only `repos`).
    pub scope: RepoScope,
}

struct Inner {
    engine: Engine,
    repos: Repos,
    explorer: ExplorerHandle,
    /// Set when the session ends: work still running stops at its next check.
    shutdown: Arc<AtomicBool>,
}

/// The MCP server (cheap to clone; all clones share the indexes).
#[derive(Clone)]
pub struct SwexServer {
    inner: Arc<Inner>,
}

/// Errors that stop [`serve_stdio`] (never a tool call's fault).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Setup(#[from] ToolError),
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("preparing stdout: {0}")]
    Stdout(std::io::Error),
    #[error("MCP session: {0}")]
    Session(String),
}

/// Sends engine progress as MCP progress notifications, and asks the call's token whether to
/// stop.
struct CallProgress {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    runtime: tokio::runtime::Handle,
    cancelled: Arc<AtomicBool>,
    shutdown: Arc<AtomicBool>,
    sent: std::sync::Mutex<(Option<Stage>, Instant)>,
}

impl Progress for CallProgress {
    fn report(&self, stage: Stage, done: u64, total: u64) {
        let Some(token) = &self.token else {
            return;
        };
        // At most one notification per stage change or every 100 ms.
        {
            let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
            let same_stage = sent.0 == Some(stage);
            if same_stage && sent.1.elapsed().as_millis() < 100 && done < total {
                return;
            }
            *sent = (Some(stage), Instant::now());
        }
        let stage_name = format!("{stage:?}").to_lowercase();
        let mut param = ProgressNotificationParam::new(token.clone(), done as f64)
            .with_message(format!("indexing: {stage_name} {done}/{total}"));
        if total > 0 {
            param = param.with_total(total as f64);
        }
        let peer = self.peer.clone();
        self.runtime.spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || self.shutdown.load(Ordering::Relaxed)
    }
}

/// No progress; stops when the session ends.
struct ShutdownOnly(Arc<AtomicBool>);

impl Progress for ShutdownOnly {
    fn report(&self, _: Stage, _: u64, _: u64) {}

    fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

fn log(message: &str) {
    eprintln!("swex mcp: {message}");
}

impl SwexServer {
    pub fn new(options: ServerOptions) -> Result<SwexServer, ToolError> {
        let server = SwexServer {
            inner: Arc::new(Inner {
                engine: Engine::new(options.engine),
                repos: Repos::new(&options.repos, options.scope)?,
                explorer: options.explorer,
                shutdown: Arc::new(AtomicBool::new(false)),
            }),
        };
        Ok(server)
    }

    /// Tells work still running to stop (the session is over).
    pub fn shut_down(&self) {
        self.inner.shutdown.store(true, Ordering::Relaxed);
    }

    /// Opens every served repository's index (the first answers then skip the open).
    pub fn warm_up(&self) {
        let stop = ShutdownOnly(self.inner.shutdown.clone());
        for repo in self.inner.repos.list() {
            let started = Instant::now();
            match repo.fresh_index(&self.inner.engine, &stop) {
                Ok((index, _)) => log(&format!(
                    "{}: {} files indexed in {:.0} ms",
                    repo.root.display(),
                    index.files().len(),
                    started.elapsed().as_secs_f64() * 1e3
                )),
                Err(err) => log(&format!("{}: {err}", repo.root.display())),
            }
        }
    }

    /// Runs one tool call to completion on the current thread.
    pub fn call_blocking(
        &self,
        name: &str,
        mut arguments: Option<serde_json::Map<String, Value>>,
        progress: &dyn Progress,
    ) -> Result<Answer, ToolError> {
        let max_bytes = tools::take_max_bytes(name, &mut arguments)?;
        let repo_arg = arguments
            .as_ref()
            .and_then(|a| a.get("repo"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let repo = self.inner.repos.resolve(repo_arg.as_deref())?;
        // Arguments are checked before any index work, so a bad call answers at once.
        let spec =
            tools::tool_spec(name).ok_or_else(|| ToolError::Internal(format!("no tool {name}")))?;
        let work = (spec.prepare)(name, arguments)?;
        let (index, freshness) = repo.fresh_index(&self.inner.engine, progress)?;
        if let Freshness::Refreshed(report) = &freshness {
            log(&format!(
                "{}: refreshed ({} changed, {} added, {} removed) in {:.1} ms",
                repo.name,
                report.changed.len(),
                report.added.len(),
                report.removed.len(),
                report.timings_ms.total
            ));
        }
        let backend = EngineBackend::new(index.clone());
        let explorer_services = CancellableServices {
            inner: &backend,
            progress,
        };
        let ctx = Ctx {
            index: &index,
            explorer: &self.inner.explorer,
            backend: &backend,
            explorer_services: &explorer_services,
            given_root: &repo.given,
        };
        let answer = work(&ctx);
        if progress.is_cancelled() {
            // The work ended because it was told to stop: whatever it made is not an answer.
            return Err(ToolError::Cancelled);
        }
        let mut answer = answer?;
        if let Value::Object(map) = &mut answer.structured {
            map.insert(
                "index".into(),
                serde_json::to_value(tools::IndexNote {
                    repo: index.root().display().to_string(),
                    files: index.files().len(),
                    freshness: &freshness,
                })
                .unwrap_or(Value::Null),
            );
        }
        Ok(fit_answer(answer, max_bytes))
    }

    fn tool_list() -> Vec<Tool> {
        TOOLS
            .iter()
            .map(|spec| {
                let schema = match tools::schema_with_shared_args(spec) {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(spec.name, spec.description, Arc::new(schema))
                    .with_title(spec.title)
                    .with_annotations(
                        ToolAnnotations::with_title(spec.title)
                            .read_only(true)
                            .destructive(false)
                            .idempotent(true)
                            .open_world(false),
                    )
            })
            .collect()
    }
}

/// The services an explorer sees during one call: the engine backend's, each refused once the
/// call is cancelled or the session ends, so a cancelled `explore` stops at the explorer's next
/// service call instead of running to the end. (The explorer's own work between two service
/// calls cannot be interrupted; it is linear in the issue, which is capped.)
struct CancellableServices<'a> {
    inner: &'a EngineBackend,
    progress: &'a dyn Progress,
}

impl RawServices for CancellableServices<'_> {
    fn call(&self, service: ServiceId, args: &[u8]) -> Result<Vec<u8>, ServiceError> {
        if self.progress.is_cancelled() {
            return Err(ServiceError::new(
                service,
                ServiceErrorKind::Failed,
                "the call was cancelled",
            ));
        }
        RawServices::call(self.inner, service, args)
    }

    fn contains_file(&self, path: &str) -> bool {
        RawServices::contains_file(self.inner, path)
    }

    fn line_count(&self, path: &str) -> Option<u64> {
        RawServices::line_count(self.inner, path)
    }
}

fn error_result(err: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(err.to_string())])
}

impl ServerHandler for SwexServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("swex", env!("CARGO_PKG_VERSION"))
                    .with_title("swex: the code a task needs"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tool_list()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        Self::tool_list().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !TOOLS.iter().any(|t| t.name == name) {
            let known: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; the tools are {}", known.join(", ")),
                None,
            ));
        }
        let cancelled = Arc::new(AtomicBool::new(false));
        let progress = CallProgress {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token(),
            runtime: tokio::runtime::Handle::current(),
            cancelled: cancelled.clone(),
            shutdown: self.inner.shutdown.clone(),
            sent: std::sync::Mutex::new((None, Instant::now())),
        };
        let server = self.clone();
        let arguments = request.arguments;
        let tool = name.clone();
        // Logged here: when the session ends nobody awaits the answer, but the log still tells
        // how the work ended.
        let work = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let result = server.call_blocking(&tool, arguments, &progress);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            match &result {
                Ok(_) => log(&format!("{tool}: {ms:.1} ms")),
                Err(ToolError::Cancelled) => {
                    log(&format!(
                        "{tool}: work stopped after cancellation, {ms:.1} ms"
                    ));
                }
                Err(err) => log(&format!("{tool}: {err}")),
            }
            result
        });
        let outcome = tokio::select! {
            joined = work => joined,
            () = context.ct.cancelled() => {
                // The blocking work sees the flag at its next check and stops.
                cancelled.store(true, Ordering::Relaxed);
                log(&format!("{name}: cancelled"));
                return Ok(error_result(&ToolError::Cancelled).into());
            }
        };
        let result = match outcome {
            Ok(Ok(answer)) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(answer.text)]);
                result.structured_content = Some(answer.structured);
                result
            }
            Ok(Err(err)) => error_result(&err),
            Err(join) => {
                let err = ToolError::Internal(if join.is_panic() {
                    "the tool panicked; the server is still running".into()
                } else {
                    join.to_string()
                });
                log(&format!("{name}: {err}"));
                error_result(&err)
            }
        };
        Ok(result.into())
    }
}

/// Serves `options` over stdin/stdout until the client closes stdin (or the session fails);
/// in-flight work is cancelled then and not waited for. Logs go to stderr.
///
/// Messages pass the [`gate`](crate::gate) both ways: client lines are checked (size, JSON,
/// duplicate ids, `tools/call` shape) before the SDK reads them through a pipe, and the SDK's
/// lines go out through the gate, which notes the answered ids.
pub fn serve_stdio(options: ServerOptions) -> Result<(), ServeError> {
    let warm = options.warm;
    let server = SwexServer::new(options)?;
    let protocol_out = take_stdout().map_err(ServeError::Stdout)?;
    let (sdk_in, to_sdk) = std::io::pipe().map_err(ServeError::Stdout)?;
    let (from_sdk, sdk_out) = std::io::pipe().map_err(ServeError::Stdout)?;
    let gate = Arc::new(Gate::new());
    let output: Output = Arc::new(std::sync::Mutex::new(Box::new(protocol_out)));
    {
        let (gate, output) = (gate.clone(), output.clone());
        let shutdown = server.inner.shutdown.clone();
        // Not joined: when the SDK ends the session first, it may still wait on stdin.
        std::thread::Builder::new()
            .name("mcp-gate-in".into())
            .spawn(move || pump_input(&gate, std::io::stdin(), to_sdk, &output, &shutdown))
            .map_err(ServeError::Runtime)?;
    }
    let (written, all_written) = std::sync::mpsc::channel::<()>();
    {
        let (gate, output) = (gate.clone(), output.clone());
        std::thread::Builder::new()
            .name("mcp-gate-out".into())
            .spawn(move || {
                pump_output(&gate, from_sdk, &output);
                let _ = written.send(());
            })
            .map_err(ServeError::Runtime)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async {
        if warm {
            let warming = server.clone();
            tokio::task::spawn_blocking(move || warming.warm_up());
        }
        let transport = (
            tokio::fs::File::from_std(pipe_file(sdk_in)),
            tokio::fs::File::from_std(pipe_file(sdk_out)),
        );
        let running = server
            .clone()
            .serve(transport)
            .await
            .map_err(|e| ServeError::Session(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| ServeError::Session(e.to_string()))?;
        log(&format!("session ended: {reason:?}"));
        Ok(())
    });
    server.shut_down();
    // Work still running (an index build, an explorer) has been told to stop and stops at its
    // next check; what it writes to the cache is atomic, so it is not waited for.
    runtime.shutdown_background();
    // The runtime held the SDK's end of the output pipe: the last answers go out, then the
    // writer ends (waited for briefly: a blocking task still holding the pipe must not keep
    // the process alive).
    let _ = all_written.recv_timeout(std::time::Duration::from_secs(2));
    result
}

/// A pipe end as a file, for tokio's file I/O.
#[cfg(unix)]
fn pipe_file(end: impl Into<std::os::fd::OwnedFd>) -> std::fs::File {
    std::fs::File::from(end.into())
}

#[cfg(not(unix))]
fn pipe_file(end: impl Into<std::os::windows::io::OwnedHandle>) -> std::fs::File {
    std::fs::File::from(end.into())
}

/// The process's stdout for protocol messages only: returns a handle on it and points file
/// descriptor 1 at stderr, so anything else printed to stdout lands in the log.
#[cfg(unix)]
fn take_stdout() -> std::io::Result<std::fs::File> {
    use std::io::Write as _;
    use std::os::fd::{AsRawFd, FromRawFd};
    std::io::stdout().flush()?;
    let stdout = std::io::stdout().as_raw_fd();
    let stderr = std::io::stderr().as_raw_fd();
    // SAFETY: plain descriptor calls; `dup` returns a new descriptor this function then owns.
    unsafe {
        let protocol = libc::dup(stdout);
        if protocol < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::dup2(stderr, stdout) < 0 {
            let err = std::io::Error::last_os_error();
            libc::close(protocol);
            return Err(err);
        }
        Ok(std::fs::File::from_raw_fd(protocol))
    }
}

#[cfg(not(unix))]
fn take_stdout() -> std::io::Result<std::fs::File> {
    use std::os::windows::io::{AsRawHandle, FromRawHandle};
    // No descriptor games on Windows: the protocol keeps stdout itself.
    let handle = std::io::stdout().as_raw_handle();
    // SAFETY: the handle is the process's stdout, valid for its lifetime.
    Ok(unsafe { std::fs::File::from_raw_handle(handle) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use swex_plugin::{Explorer, ExplorerError, Request, Response, Services};

    /// Calls services until one fails: without cancellation reaching the services, it would
    /// run as long as the host lets it.
    struct Looper;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    impl Explorer for Looper {
        const NAME: &'static std::ffi::CStr = c"looper";
        const DESCRIPTION: &'static std::ffi::CStr = c"calls services until one fails";
        fn create(_: &Value) -> Result<Self, ExplorerError> {
            Ok(Looper)
        }
        fn explore(&self, _: &Request, services: &Services<'_>) -> Result<Response, ExplorerError> {
            for _ in 0..100_000 {
                CALLS.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = services.list_files(None) {
                    return Err(ExplorerError::Failed(e.to_string()));
                }
            }
            Ok(Response::new(Vec::new()))
        }
    }

    mod looper {
        swex_plugin::export_vtable!(super::Looper);
    }

    /// Cancelled after `after` questions.
    struct CancelAfter {
        asked: AtomicUsize,
        after: usize,
    }

    impl Progress for CancelAfter {
        fn report(&self, _: Stage, _: u64, _: u64) {}
        fn is_cancelled(&self) -> bool {
            self.asked.fetch_add(1, Ordering::Relaxed) >= self.after
        }
    }

    #[test]
    fn a_cancelled_explore_stops_at_the_explorers_next_service_call() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("a.py"), "x = 1\n").unwrap();
        let plugin =
            swex_plugin_host::ExplorerPlugin::builtin(looper::swex_explorer_vtable).unwrap();
        let server = SwexServer::new(ServerOptions {
            repos: vec![repo.path().to_path_buf()],
            engine: EngineConfig {
                cache_dir: cache.path().to_path_buf(),
                ..EngineConfig::default()
            },
            explorer: ExplorerHandle::InProcess(plugin.instantiate(&Value::Null).unwrap()),
            warm: false,
            scope: RepoScope::Given,
        })
        .unwrap();
        let arguments = serde_json::json!({"issue": "anything"});
        let cancel = CancelAfter {
            asked: AtomicUsize::new(0),
            after: 50,
        };
        let result = server.call_blocking("explore", arguments.as_object().cloned(), &cancel);
        assert!(
            matches!(result, Err(ToolError::Cancelled)),
            "{:?}",
            result.err()
        );
        let calls = CALLS.load(Ordering::Relaxed);
        assert!(
            calls < 100,
            "the explorer went on for {calls} service calls"
        );
    }

    #[test]
    fn only_the_given_repositories_are_served() {
        let served = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let given = Repos::new(&[served.path().to_path_buf()], RepoScope::Given).unwrap();
        let name = served.path().file_name().unwrap().to_str().unwrap();
        let check = |repos: &Repos, asked: &str, expected: &str| {
            let got = match repos.resolve(Some(asked)) {
                Ok(repo) => format!("ok {}", repo.root.display()),
                Err(ToolError::NotServed { .. }) => "not served".into(),
                Err(ToolError::UnknownRepository(_)) => "unknown".into(),
                Err(other) => format!("{other}"),
            };
            assert!(got.starts_with(expected), "{asked}: {got}");
        };
        let root = std::fs::canonicalize(served.path()).unwrap();
        let ok = format!("ok {}", root.display());
        check(&given, name, &ok);
        check(&given, served.path().to_str().unwrap(), &ok);
        check(&given, &format!("{}/.", served.path().display()), &ok);
        check(&given, "/etc", "not served");
        check(&given, other.path().to_str().unwrap(), "not served");
        check(&given, "/no/such/dir", "not served");
        check(
            &given,
            &format!("{}/..", served.path().display()),
            "not served",
        );
        assert_eq!(given.list().len(), 1, "a refused call serves nothing new");
        let any = Repos::new(&[served.path().to_path_buf()], RepoScope::AnyDirectory).unwrap();
        let other_root = std::fs::canonicalize(other.path()).unwrap();
        check(
            &any,
            other.path().to_str().unwrap(),
            &format!("ok {}", other_root.display()),
        );
        check(&any, "/no/such/dir", "unknown");
        assert_eq!(any.list().len(), 2);
    }
}
