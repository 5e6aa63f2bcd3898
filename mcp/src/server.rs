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
use crate::repos::{Freshness, Repos};
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
use swex_plugin_host::{EngineBackend, ExplorerHandle};

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
                repos: Repos::new(&options.repos)?,
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
        arguments: Option<serde_json::Map<String, Value>>,
        progress: &dyn Progress,
    ) -> Result<Answer, ToolError> {
        let repo_arg = arguments
            .as_ref()
            .and_then(|a| a.get("repo"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let repo = self.inner.repos.resolve(repo_arg.as_deref())?;
        // Arguments are checked before any index work, so a bad call answers at once.
        enum Call {
            Explore(tools::ExploreArgs),
            Search(tools::SearchToolArgs),
            Definition(tools::DefinitionArgs),
            References(tools::ReferencesArgs),
            Neighbours(tools::NeighboursToolArgs),
            Read(tools::ReadArgs),
        }
        let call = match name {
            "explore" => Call::Explore(tools::parse_args(name, arguments)?),
            "search" => Call::Search(tools::parse_args(name, arguments)?),
            "definition" => Call::Definition(tools::parse_args(name, arguments)?),
            "references" => Call::References(tools::parse_args(name, arguments)?),
            "neighbours" => Call::Neighbours(tools::parse_args(name, arguments)?),
            "read" => Call::Read(tools::parse_args(name, arguments)?),
            other => return Err(ToolError::Internal(format!("no tool {other}"))),
        };
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
        let ctx = Ctx {
            index: &index,
            backend: &backend,
            given_root: &repo.given,
        };
        let mut answer = match call {
            Call::Explore(args) => tools::explore(&ctx, &self.inner.explorer, args),
            Call::Search(args) => tools::search(&ctx, args),
            Call::Definition(args) => tools::definition(&ctx, args),
            Call::References(args) => tools::references(&ctx, args),
            Call::Neighbours(args) => tools::neighbours(&ctx, args),
            Call::Read(args) => tools::read(&ctx, args),
        }?;
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
        Ok(answer)
    }

    fn tool_list() -> Vec<Tool> {
        TOOLS
            .iter()
            .map(|spec| {
                let schema = match (spec.schema)() {
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
            match &result {
                Ok(_) => log(&format!(
                    "{tool}: {:.1} ms",
                    started.elapsed().as_secs_f64() * 1e3
                )),
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
/// in-flight work is cancelled then. Logs go to stderr.
pub fn serve_stdio(options: ServerOptions) -> Result<(), ServeError> {
    let warm = options.warm;
    let server = SwexServer::new(options)?;
    let protocol_out = take_stdout().map_err(ServeError::Stdout)?;
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
        let input = StopAtEof {
            inner: tokio::io::stdin(),
            shutdown: server.inner.shutdown.clone(),
        };
        let transport = (input, tokio::fs::File::from_std(protocol_out));
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
    // Blocking work still running (an index build) has been told to stop; do not wait long.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    result
}

/// The client's input; its end (the client closed it, or died) is the end of the session, so
/// work in flight is told to stop at once rather than after the SDK's drain of pending answers.
struct StopAtEof<R> {
    inner: R,
    shutdown: Arc<AtomicBool>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for StopAtEof<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let ended = match &polled {
            std::task::Poll::Ready(Ok(())) => buf.filled().len() == before,
            std::task::Poll::Ready(Err(_)) => true,
            std::task::Poll::Pending => false,
        };
        if ended && buf.remaining() > 0 {
            self.shutdown.store(true, Ordering::Relaxed);
        }
        polled
    }
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
