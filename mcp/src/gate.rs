//! The gate: JSON-RPC framing checked before the MCP SDK sees a message, so that what a client
//! sends is bounded and every request gets an answer that carries its id.
//!
//! `rmcp` reads the stream itself and is lenient in ways a server acting for an agent cannot be:
//! it buffers a line of any length, answers a `tools/call` whose `arguments` has the wrong JSON
//! type as an unknown method (-32601), drops unparsable lines without a word, and when two
//! requests in flight share an id it answers only one. The gate sits between stdin and the SDK
//! (and between the SDK and stdout) and decides per message ([`Gate::admit`]):
//!
//! - a line longer than [`MAX_MESSAGE_BYTES`] is never held in memory: it is skipped in constant
//!   space (its `id` is still read, by a streaming parse) and answered -32600;
//! - a line that is not JSON is answered -32700 (parse error, id `null`, as JSON-RPC requires);
//!   a batch (an array) -32600, since MCP has no batches;
//! - a request whose id is already in flight is answered -32600 naming the id; the first keeps
//!   its answer;
//! - a `tools/call` whose `params`, `name` or `arguments` has the wrong JSON type is answered
//!   -32602 (invalid params);
//! - everything else passes unchanged, byte for byte.
//!
//! An id is in flight from its request until the SDK's answer passes the gate on its way out
//! ([`Gate::answered`]) or the client cancels it (`notifications/cancelled`, after which the SDK
//! sends no answer). The end of the client's input sets the shutdown flag at once, so work in
//! flight stops at its next check.

use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The longest message a client may send: an `explore` issue at its limit
/// ([`crate::tools::MAX_ISSUE_BYTES`]) fits with room for JSON escapes.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC error codes the gate answers with.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Pass the line to the SDK unchanged.
    Forward,
    /// Answer this error message to the client; the SDK never sees the line.
    Answer(Value),
    /// Nothing to do (a blank line).
    Ignore,
}

/// The gate's state: the ids of requests awaiting an answer.
#[derive(Default)]
pub struct Gate {
    in_flight: Mutex<HashSet<String>>,
}

/// An id as a key: its JSON text, so `1` and `"1"` stay distinct as JSON-RPC wants.
fn key(id: &Value) -> String {
    id.to_string()
}

fn error(id: &Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a `tools/call`'s params do not have the shape MCP gives them, if they do not.
fn tools_call_shape(params: Option<&Value>) -> Option<String> {
    let Some(params) = params else {
        return Some("tools/call needs params {name, arguments}".into());
    };
    let Value::Object(params) = params else {
        return Some(format!(
            "params must be an object, not {}",
            type_name(params)
        ));
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        Some(other) => return Some(format!("name must be a string, not {}", type_name(other))),
        None => return Some("missing field `name`".into()),
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "arguments must be an object, not {}",
            type_name(other)
        )),
    }
}

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Decides one complete line from the client (without its newline).
    pub fn admit(&self, line: &[u8]) -> Verdict {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Verdict::Ignore;
        }
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(e) => {
                return Verdict::Answer(error(
                    &Value::Null,
                    PARSE_ERROR,
                    format!("parse error: not a JSON message ({e})"),
                ));
            }
        };
        let Value::Object(message) = message else {
            return Verdict::Answer(error(
                &Value::Null,
                INVALID_REQUEST,
                if message.is_array() {
                    "batches are not supported: send one message per line".into()
                } else {
                    format!(
                        "a message must be a JSON object, not {}",
                        type_name(&message)
                    )
                },
            ));
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            (Some(method), Some(id)) => self.admit_request(method, id, message.get("params")),
            (Some("notifications/cancelled"), None) => {
                if let Some(id) = message.get("params").and_then(|p| p.get("requestId")) {
                    self.lock().remove(&key(id));
                }
                Verdict::Forward
            }
            _ => Verdict::Forward,
        }
    }

    fn admit_request(&self, method: &str, id: &Value, params: Option<&Value>) -> Verdict {
        if !matches!(id, Value::String(_) | Value::Number(_)) {
            return Verdict::Answer(error(
                &Value::Null,
                INVALID_REQUEST,
                format!(
                    "a request id must be a string or a number, not {}",
                    type_name(id)
                ),
            ));
        }
        if method == "tools/call"
            && let Some(why) = tools_call_shape(params)
        {
            return Verdict::Answer(error(id, INVALID_PARAMS, format!("invalid params: {why}")));
        }
        if !self.lock().insert(key(id)) {
            return Verdict::Answer(error(
                id,
                INVALID_REQUEST,
                format!(
                    "request id {id} is already in flight: ids must be unique among requests awaiting an answer"
                ),
            ));
        }
        Verdict::Forward
    }

    /// The answer to an oversized line (of `bytes` bytes, whose id the streaming parse found).
    pub fn oversized(&self, id: Option<Value>, bytes: usize) -> Value {
        error(
            &id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            format!(
                "message of {bytes} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes (`explore` takes issues up to {} bytes)",
                crate::tools::MAX_ISSUE_BYTES
            ),
        )
    }

    /// Notes a line the SDK sends to the client: an answer ends its request's time in flight.
    pub fn answered(&self, line: &[u8]) {
        #[derive(Deserialize)]
        struct Reply {
            id: Option<Value>,
            result: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        if let Ok(Reply {
            id: Some(id),
            result,
            error,
        }) = serde_json::from_slice::<Reply>(line)
            && (result.is_some() || error.is_some())
        {
            self.lock().remove(&key(&id));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One line of input, read in bounded memory.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A line of at most `max` bytes, without its newline.
    Complete(Vec<u8>),
    /// A longer line, skipped; its size, and its `id` when a streaming parse found one.
    TooLong { bytes: usize, id: Option<Value> },
    /// The input ended.
    End,
}

/// Reads the next line of at most `max` bytes; a longer one is consumed without being kept.
pub fn read_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if line.is_empty() {
                Line::End
            } else {
                Line::Complete(line)
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(available.len());
        if line.len() + take > max {
            return skip_long_line(input, line);
        }
        line.extend_from_slice(&available[..take]);
        let consumed = take + usize::from(newline.is_some());
        input.consume(consumed);
        if newline.is_some() {
            return Ok(Line::Complete(line));
        }
    }
}

/// Consumes the rest of a line too long to keep, reading its top-level `id` on the way with a
/// streaming parse that holds no string but the id.
fn skip_long_line(input: &mut impl BufRead, head: Vec<u8>) -> std::io::Result<Line> {
    /// Reads `input` up to and including the next newline, counting the bytes.
    struct RestOfLine<'a, R> {
        input: &'a mut R,
        done: bool,
        bytes: usize,
    }
    impl<R: BufRead> Read for RestOfLine<'_, R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            let available = self.input.fill_buf()?;
            if available.is_empty() {
                self.done = true;
                return Ok(0);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let end = newline.unwrap_or(available.len());
            let n = end.min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            let reached_newline = newline.is_some() && n == end;
            self.input.consume(n + usize::from(reached_newline));
            self.done = reached_newline;
            self.bytes += n;
            Ok(n)
        }
    }
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    let head_len = head.len();
    let mut rest = RestOfLine {
        input,
        done: false,
        bytes: 0,
    };
    // Only an object has an id; anything else (an endless number, say) is not parsed at all.
    let is_object = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let id = if !is_object {
        None
    } else {
        let stream = std::io::Read::chain(&head[..], &mut rest);
        serde_json::from_reader::<_, IdOnly>(BufReader::with_capacity(64 * 1024, stream))
            .ok()
            .and_then(|m| m.id)
    };
    // Whatever the parse left of the line (it stops at the first error).
    std::io::copy(&mut rest, &mut std::io::sink())?;
    Ok(Line::TooLong {
        bytes: head_len + rest.bytes,
        id,
    })
}

/// Where the gate writes: the protocol stream, one whole line at a time.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn write_line(output: &Output, line: &[u8]) -> std::io::Result<()> {
    let mut out = output.lock().unwrap_or_else(|e| e.into_inner());
    out.write_all(line)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Runs the client → SDK half until the client's input ends: admitted lines go to `to_sdk`,
/// refused ones are answered on `output`. Sets `shutdown` when the input ends.
pub fn pump_input(
    gate: &Gate,
    input: impl Read,
    mut to_sdk: impl Write,
    output: &Output,
    shutdown: &AtomicBool,
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    loop {
        let answer = match read_line(&mut input, MAX_MESSAGE_BYTES) {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong { bytes, id }) => gate.oversized(id, bytes),
            Ok(Line::Complete(line)) => match gate.admit(&line) {
                Verdict::Ignore => continue,
                Verdict::Forward => {
                    let sent = to_sdk
                        .write_all(&line)
                        .and_then(|()| to_sdk.write_all(b"\n"))
                        .and_then(|()| to_sdk.flush());
                    if sent.is_err() {
                        break; // the session is over
                    }
                    continue;
                }
                Verdict::Answer(answer) => answer,
            },
        };
        if write_line(output, answer.to_string().as_bytes()).is_err() {
            break;
        }
    }
    shutdown.store(true, Ordering::Relaxed);
}

/// Runs the SDK → client half until the SDK closes its side: every line goes to `output`, and
/// answers end their request's time in flight first (so a client that reuses an id right after
/// its answer is never refused).
pub fn pump_output(gate: &Gate, from_sdk: impl Read, output: &Output) {
    let mut from_sdk = BufReader::new(from_sdk);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_sdk.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            line.pop();
        }
        gate.answered(&line);
        if write_line(output, &line).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(gate: &Gate, line: &str) -> String {
        match gate.admit(line.as_bytes()) {
            Verdict::Forward => "forward".into(),
            Verdict::Ignore => "ignore".into(),
            Verdict::Answer(e) => format!(
                "{} {} {}",
                e["id"], e["error"]["code"], e["error"]["message"]
            ),
        }
    }

    #[test]
    fn each_line_gets_its_verdict() {
        let gate = Gate::new();
        let call = |id: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
        };
        let cases: &[(String, &str)] = &[
            ("   ".into(), "ignore"),
            ("this is not json".into(), "null -32700"),
            (r#"{"truncated": "#.into(), "null -32700"),
            ("[1, 2]".into(), "null -32600 \"batches"),
            ("5".into(), "null -32600"),
            (
                call("1", r#"{"name":"read","arguments":{"path":"a"}}"#),
                "forward",
            ),
            (
                call("2", r#"{"name":"read","arguments":"a"}"#),
                "2 -32602 \"invalid params: arguments must be an object, not a string",
            ),
            (call("3", r#"{"name":"read","arguments":[1]}"#), "3 -32602"),
            (
                call("\"x\"", r#"{"name":5}"#),
                "\"x\" -32602 \"invalid params: name must be a string",
            ),
            (
                call("4", r#""oops""#),
                "4 -32602 \"invalid params: params must be an object",
            ),
            (
                call("5", r#"{"arguments":{}}"#),
                "5 -32602 \"invalid params: missing field `name`",
            ),
            (call("6", r#"{"name":"read"}"#), "forward"),
            (call("7", r#"{"name":"read","arguments":null}"#), "forward"),
            (
                call("null", r#"{"name":"read"}"#),
                "null -32600 \"a request id must be",
            ),
            // Request 1 is in flight: the same id again is refused with that id, the same
            // number as a string is another id.
            (
                call("1", r#"{"name":"read","arguments":{}}"#),
                "1 -32600 \"request id 1 is already in flight",
            ),
            (
                call("\"1\"", r#"{"name":"read","arguments":{}}"#),
                "forward",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
                "forward",
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#.into(),
                "forward",
            ),
        ];
        for (line, expected) in cases {
            let got = verdict(&gate, line);
            assert!(
                got.starts_with(expected),
                "{line}\n  got {got}\n  want {expected}…"
            );
        }
    }

    #[test]
    fn an_answer_or_a_cancellation_frees_the_id() {
        let gate = Gate::new();
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}}"#;
        assert_eq!(verdict(&gate, call), "forward");
        assert!(verdict(&gate, call).contains("already in flight"));
        // A notification or a request from the server does not answer anything.
        gate.answered(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
        gate.answered(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert!(verdict(&gate, call).contains("already in flight"));
        gate.answered(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(verdict(&gate, call), "forward");
        gate.answered(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#);
        assert_eq!(verdict(&gate, call), "forward");
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        assert_eq!(verdict(&gate, cancel), "forward");
        assert_eq!(verdict(&gate, call), "forward");
    }

    #[test]
    fn long_lines_are_skipped_in_bounded_memory_and_keep_their_id() {
        let big = "x".repeat(3000);
        let input = format!(
            "{{\"a\":1}}\n{{\"jsonrpc\":\"2.0\",\"id\":42,\"params\":{{\"q\":\"{big}\"}}}}\n{{\"params\":\"{big}\",\"id\":\"late\"}}\n\"{big}\n{{\"b\":2}}\nlast"
        );
        let mut reader = BufReader::with_capacity(256, input.as_bytes());
        let mut got = Vec::new();
        loop {
            match read_line(&mut reader, 1000).unwrap() {
                Line::End => break,
                line => got.push(line),
            }
        }
        assert_eq!(got[0], Line::Complete(b"{\"a\":1}".to_vec()));
        assert!(
            matches!(&got[1], Line::TooLong { id: Some(id), bytes } if *id == json!(42) && *bytes > 3000)
        );
        assert!(matches!(&got[2], Line::TooLong { id: Some(id), .. } if *id == json!("late")));
        // Not JSON at all (an unterminated string): skipped, no id, the next line intact.
        assert!(matches!(&got[3], Line::TooLong { id: None, bytes } if *bytes == 3001));
        assert_eq!(got[4], Line::Complete(b"{\"b\":2}".to_vec()));
        assert_eq!(got[5], Line::Complete(b"last".to_vec()));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn an_endless_line_is_read_in_constant_memory() {
        // 64 MiB of one line (like `/dev/zero` as input) against a 1 KiB limit: the reader must
        // stream through it, never hold it.
        struct Zeros(usize);
        impl Read for Zeros {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.0);
                buf[..n].fill(b'0');
                self.0 -= n;
                Ok(n)
            }
        }
        let mut reader = BufReader::with_capacity(4096, Zeros(64 << 20));
        match read_line(&mut reader, 1024).unwrap() {
            Line::TooLong { bytes, id } => {
                assert_eq!(bytes, 64 << 20);
                assert_eq!(id, None);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(read_line(&mut reader, 1024).unwrap(), Line::End);
    }
}
