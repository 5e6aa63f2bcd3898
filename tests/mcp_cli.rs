//! `swex mcp` spoken to over raw pipes: stdout carries only protocol messages (also when the
//! input is garbage), malformed requests get JSON-RPC errors and the session goes on, and a
//! client that goes away mid-call (its pipes close, as when it is killed) leaves the server to
//! stop its work and exit cleanly. The official Python client drives it in tests/mcp_client.rs.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn swex() -> &'static str {
    env!("CARGO_BIN_EXE_swex")
}

fn write(root: &Path, path: &str, text: &str) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, text).unwrap();
}

fn small_repo(root: &Path) {
    write(
        root,
        "app/models.py",
        "class QuerySet:\n    def bulk_create(self, objs, batch_size=None):\n        return objs\n",
    );
    write(
        root,
        "app/views.py",
        "from app.models import QuerySet\n\n\ndef render(request):\n    return QuerySet().bulk_create([request])\n",
    );
}

/// 1,500 files of 30 functions each: big enough that the first call on it (which builds the
/// index) is still running when the test acts mid-call.
fn big_repo(root: &Path) {
    for i in 0..1500 {
        let body: String = (0..30)
            .map(|j| format!("def function_{i}_{j}(value):\n    return value + {j}\n\n"))
            .collect();
        write(root, &format!("pkg{}/module_{i}.py", i % 20), &body);
    }
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Server {
    fn start(args: &[&str], cache: &Path) -> Server {
        let mut child = Command::new(swex())
            .arg("mcp")
            .args(args)
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    /// The next stdout line, which must be one JSON-RPC message.
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// The response to request `id`, skipping notifications.
    fn response(&self, id: i64) -> Value {
        loop {
            let message = self.receive();
            if message["id"] == json!(id) {
                return message;
            }
            assert!(message.get("id").is_none(), "unexpected response {message}");
        }
    }

    fn initialize(&mut self) {
        self.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"}
            }
        }));
        let response = self.response(1);
        assert_eq!(
            response["result"]["serverInfo"]["name"], "swex",
            "{response}"
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Waits for a progress notification of `token` whose message contains `text`, while the
    /// call it belongs to is still running (no answer may come first).
    fn await_progress(&self, token: &str, text: &str) {
        loop {
            let message = self.receive();
            assert!(
                message.get("id").is_none(),
                "the call ended before the test acted mid-call: {message}"
            );
            if message["method"] == "notifications/progress" {
                assert_eq!(message["params"]["progressToken"], token, "{message}");
                let said = message["params"]["message"].as_str().unwrap_or_default();
                if said.contains(text) {
                    return;
                }
            }
        }
    }

    /// Closes the pipes and waits for the exit; returns (success, stderr).
    fn wait_exit(mut self, within: Duration) -> (bool, String) {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                self.child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr)
                    .unwrap();
                return (status.success(), stderr);
            }
            if started.elapsed() > within {
                let _ = self.child.kill();
                panic!("the server did not exit within {within:?} of its client going away");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

#[test]
fn malformed_input_gets_errors_and_stdout_stays_protocol_only() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    small_repo(repo.path());
    let mut server = Server::start(&[repo.path().to_str().unwrap()], cache.path());
    // Lines that are not JSON get a parse error (id null, as JSON-RPC says), before the
    // handshake too.
    server.send_raw("this is not json");
    let response = server.receive();
    assert_eq!(response["error"]["code"], -32700, "{response}");
    assert_eq!(response["id"], Value::Null, "{response}");
    server.initialize();
    server.send_raw("{\"truncated\": ");
    let response = server.receive();
    assert_eq!(response["error"]["code"], -32700, "{response}");
    // Well-formed JSON of the wrong shape: invalid params, with the request's id.
    server.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "oops"}));
    let response = server.response(7);
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // An unknown method and an unknown tool: JSON-RPC errors with a clear message.
    server.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/frobnicate"}));
    assert!(server.response(8).get("error").is_some());
    server.send(call(9, "frobnicate", json!({})));
    let response = server.response(9);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("unknown tool `frobnicate`") && message.contains("explore"),
        "{response}"
    );
    // A tool error, then a good call: the session is alive throughout.
    server.send(call(10, "read", json!({"path": "../../etc/passwd"})));
    let response = server.response(10);
    assert_eq!(response["result"]["isError"], true, "{response}");
    server.send(call(11, "definition", json!({"name": "bulk_create"})));
    let response = server.response(11);
    assert_eq!(
        response["result"]["structuredContent"]["total"], 1,
        "{response}"
    );
    let (ok, stderr) = server.wait_exit(Duration::from_secs(20));
    assert!(ok, "exit status; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_client_that_goes_away_mid_call_leaves_the_server_to_exit_cleanly() {
    // A repository big enough that the first call (which builds its index) is still running
    // when the client disappears.
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    big_repo(repo.path());
    let mut server = Server::start(&["--lazy", repo.path().to_str().unwrap()], cache.path());
    server.initialize();
    server.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "function_7_3"},
            "_meta": {"progressToken": "build"}
        }}),
    );
    // Mid-call for sure: the index build has reported that it is analysing files.
    server.await_progress("build", "analyze");
    let started = Instant::now();
    let (ok, stderr) = server.wait_exit(Duration::from_secs(30));
    assert!(ok, "exit status; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The index build in flight was stopped, not waited for.
    assert!(
        stderr.contains("search: work stopped after cancellation"),
        "{stderr}"
    );
    eprintln!("exited {:?} after the client went away", started.elapsed());
}

/// The error code of a JSON-RPC error answer, or the tool error text of a tool result.
fn outcome(response: &Value) -> String {
    if let Some(code) = response["error"]["code"].as_i64() {
        return format!(
            "{code} {}",
            response["error"]["message"].as_str().unwrap_or("")
        );
    }
    if response["result"]["isError"] == true {
        return format!(
            "tool error {}",
            response["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
        );
    }
    "ok".into()
}

#[test]
fn the_server_serves_only_the_repositories_it_was_given() {
    let repo = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    small_repo(repo.path());
    write(
        other.path(),
        "secret.txt",
        "the other repository's secret\n",
    );
    let mut server = Server::start(&["--lazy", repo.path().to_str().unwrap()], cache.path());
    server.initialize();
    let other_dir = other.path().to_str().unwrap();
    let cases = [
        (
            call(2, "read", json!({"path": "secret.txt", "repo": other_dir})),
            "tool error `",
        ),
        (
            call(3, "read", json!({"path": "passwd", "repo": "/etc"})),
            "tool error `/etc` is not served",
        ),
        (
            call(4, "search", json!({"query": "root", "repo": "/etc"})),
            "tool error `/etc` is not served",
        ),
        (
            call(5, "search", json!({"query": "root", "under": "/etc"})),
            "tool error `/etc` is outside the repository",
        ),
        (
            call(6, "search", json!({"query": "root", "under": "../.."})),
            "tool error `../..` is outside the repository",
        ),
        (
            call(
                7,
                "read",
                json!({"path": "app/models.py", "repo": repo.path()}),
            ),
            "ok",
        ),
    ];
    for (i, (request, expected)) in cases.into_iter().enumerate() {
        server.send(request);
        let got = outcome(&server.response(i as i64 + 2));
        assert!(got.starts_with(expected), "call {}: {got}", i + 2);
    }
    let (ok, stderr) = server.wait_exit(Duration::from_secs(20));
    assert!(ok, "{stderr}");
    // Nothing of the other directories was indexed: only the served repository's cache exists.
    assert!(!stderr.contains("/etc:"), "{stderr}");

    // With --allow-any-repo, another directory is served on request.
    let mut server = Server::start(
        &["--lazy", "--allow-any-repo", repo.path().to_str().unwrap()],
        cache.path(),
    );
    server.initialize();
    server.send(call(
        2,
        "read",
        json!({"path": "secret.txt", "repo": other_dir}),
    ));
    let response = server.response(2);
    assert_eq!(outcome(&response), "ok", "{response}");
    assert_eq!(
        response["result"]["structuredContent"]["lines"][0],
        "the other repository's secret"
    );
    let (ok, stderr) = server.wait_exit(Duration::from_secs(20));
    assert!(ok, "{stderr}");
}

#[test]
fn every_request_gets_one_answer_with_its_id_and_answers_are_bounded() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    small_repo(repo.path());
    // A file of long lines: 2000 lines of 400 bytes, 800 kB in one `read` without a cap.
    let long: String = (0..2000)
        .map(|i| format!("{i}{}\n", "y".repeat(400)))
        .collect();
    write(repo.path(), "data/long.txt", &long);
    let mut server = Server::start(&[repo.path().to_str().unwrap()], cache.path());
    server.initialize();
    // `arguments` of the wrong JSON type: invalid params (-32602) with the id, not -32601.
    for (id, arguments) in [(2, json!("app/models.py")), (3, json!([1])), (4, json!(5))] {
        server.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": "read", "arguments": arguments}}));
        let got = outcome(&server.response(id));
        assert!(
            got.starts_with("-32602 invalid params: arguments must be an object"),
            "{got}"
        );
    }
    // A message over the size limit: refused with its id, read in bounded memory.
    let huge = "x".repeat(5 << 20);
    server.send(call(5, "search", json!({"query": huge})));
    let got = outcome(&server.response(5));
    assert!(got.starts_with("-32600 message of"), "{got}");
    // A text argument over the tool's limit: a tool error naming the field.
    server.send(call(6, "search", json!({"query": "q".repeat(20_000)})));
    let got = outcome(&server.response(6));
    assert!(
        got.contains("query: 20000 bytes is over the limit"),
        "{got}"
    );
    // Answers are capped: by default, and lower when asked.
    for (id, max_bytes) in [(7, None), (8, Some(4096))] {
        let mut arguments = json!({"path": "data/long.txt"});
        if let Some(max) = max_bytes {
            arguments["max_bytes"] = json!(max);
        }
        server.send(call(id, "read", arguments));
        let response = server.response(id);
        let cap = max_bytes.unwrap_or(64 * 1024);
        let result = &response["result"];
        let size = result["content"][0]["text"].as_str().unwrap().len()
            + result["structuredContent"].to_string().len();
        assert!(size <= cap, "{size} bytes over {cap}");
        assert_eq!(
            result["structuredContent"]["truncated"]["max_bytes"], cap,
            "{response}"
        );
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("answer cut at")
        );
    }
    server.send(call(
        9,
        "read",
        json!({"path": "app/models.py", "max_bytes": 10}),
    ));
    let got = outcome(&server.response(9));
    assert!(
        got.starts_with("tool error bad arguments for `read`: max_bytes"),
        "{got}"
    );
    let (ok, stderr) = server.wait_exit(Duration::from_secs(20));
    assert!(ok, "{stderr}");
}

#[test]
fn a_second_request_with_an_id_in_flight_is_refused_with_that_id() {
    // A repository big enough that the first call (which builds its index) is in flight when
    // the second arrives: its progress notifications say so.
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    big_repo(repo.path());
    let mut server = Server::start(&["--lazy", repo.path().to_str().unwrap()], cache.path());
    server.initialize();
    server.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "definition", "arguments": {"name": "function_7_3"},
            "_meta": {"progressToken": "build"}
        }}),
    );
    server.await_progress("build", "");
    server.send(call(2, "read", json!({"path": "pkg0/module_0.py"})));
    // The refusal comes first (the build is still running), with the id; then the first call's
    // answer.
    let refused = loop {
        let message = server.receive();
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(refused["id"], 2, "{refused}");
    let got = outcome(&refused);
    assert!(
        got.starts_with("-32600 request id 2 is already in flight"),
        "{got}"
    );
    let answer = server.response(2);
    assert_eq!(outcome(&answer), "ok", "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["total"], 1,
        "{answer}"
    );
    // Answered, the id is free again.
    server.send(call(2, "read", json!({"path": "pkg0/module_0.py"})));
    assert_eq!(outcome(&server.response(2)), "ok");
    let (ok, stderr) = server.wait_exit(Duration::from_secs(30));
    assert!(ok, "{stderr}");
}
