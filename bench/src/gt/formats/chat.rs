//! Pieces shared by the chat-message formats (mini-swe-agent v1/v2, the unified format):
//! message text, fenced command blocks, tool-call arguments, editor tool calls and
//! mini-swe-agent's observation wrapping.

use crate::gt::trajectory::{Action, Elided, FormatError, Observation};
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// The chat messages of a trajectory, the list under `key` (`messages`, `traj`), and the indices
/// of the assistant's among them, in order: what each chat format reads its steps from (the
/// list whole, for the replies that follow a turn). Every message must be an object; the first
/// that is not is the error, at its pointer.
pub fn assistant_turns<'a>(
    doc: &'a Value,
    key: &str,
) -> Result<(&'a [Value], Vec<usize>), FormatError> {
    let messages = doc
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| FormatError::new(format!("/{key}"), "expected a list of messages"))?;
    let mut turns = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if !message.is_object() {
            return Err(FormatError::new(
                format!("/{key}/{index}"),
                "expected a message object",
            ));
        }
        if role(message) == "assistant" {
            turns.push(index);
        }
    }
    Ok((messages, turns))
}

/// The plain text of a chat message's `content`: a string, or the text parts of a list.
pub fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

pub fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Bodies of fenced blocks with the given info string (```` ```bash ````), in order.
pub fn fenced_blocks<'a>(text: &'a str, pattern: &Regex) -> Vec<&'a str> {
    pattern
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect()
}

/// mini-swe-agent v1's action pattern (and the reference builder's): ```` ```bash ```` blocks.
pub static BASH_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```bash\s*\n(.*?)\n```").expect("valid regex"));

/// mini-swe-agent v2's text-based action pattern, also accepting v1's `bash` tag.
pub static MSWEA_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)```(?:mswea_bash_command|bash)\s*\n(.*?)\n```").expect("valid regex")
});

/// A tool call's `function.arguments`, whether stored as an object or as a JSON string.
pub fn tool_call_arguments(call: &Value) -> Map<String, Value> {
    match call.pointer("/function/arguments") {
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

pub fn tool_call_name(call: &Value) -> &str {
    call.pointer("/function/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Names of the bash tool across harnesses.
pub fn is_shell_tool(name: &str) -> bool {
    matches!(name, "bash" | "execute_bash" | "run_command" | "shell")
}

/// Names of the file editor tool across harnesses (`str_replace_editor` in OpenHands and
/// SWE-agent, `file_editor` in later OpenHands).
pub fn is_editor_tool(name: &str) -> bool {
    matches!(name, "str_replace_editor" | "file_editor" | "edit_file")
}

/// An editor tool call's action: `view` (with `view_range`) reads, `str_replace`/`insert`/
/// `create`/`edit` change a file, anything else (`undo_edit`) is neither.
pub fn editor_action(args: &Map<String, Value>) -> Action {
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if path.is_empty() {
        return Action::Other;
    }
    match args.get("command").and_then(Value::as_str).unwrap_or("") {
        "view" => Action::View {
            path,
            range: args.get("view_range").and_then(view_range),
        },
        "str_replace" | "insert" | "create" | "edit" => Action::Edit { path },
        _ => Action::Other,
    }
}

/// `[start, end]` as numbers or numeric strings.
pub fn view_range(value: &Value) -> Option<(i64, i64)> {
    let items = value.as_array()?;
    let number = |v: &Value| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    };
    match items.as_slice() {
        [start, end, ..] => Some((number(start)?, number(end)?)),
        _ => None,
    }
}

/// Remove mini-swe-agent's observation wrapping: `<returncode>…</returncode>` and
/// `<output>…</output>`, or `<output_head>…</output_head>` + `<output_tail>…</output_tail>` when
/// the harness elided the middle of a long output. Text without these tags is kept whole.
pub fn mini_swe_observation(text: &str) -> Observation {
    fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
        let start = text.find(open)? + open.len();
        let end = start + text[start..].rfind(close)?;
        Some(
            text[start..end]
                .strip_prefix('\n')
                .unwrap_or(&text[start..end]),
        )
    }
    if let (Some(head), Some(tail)) = (
        between(text, "<output_head>", "</output_head>"),
        between(text, "<output_tail>", "</output_tail>"),
    ) {
        return Observation {
            text: format!("{head}\n{tail}"),
            elided: Some(Elided {
                head: head.to_string(),
                tail: tail.to_string(),
            }),
        };
    }
    match between(text, "<output>", "</output>") {
        Some(output) => Observation::plain(output),
        None => Observation::plain(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn observation_wrapping() {
        let o = mini_swe_observation("<returncode>0</returncode>\n<output>\n1\tx\n</output>");
        assert_eq!(o, Observation::plain("1\tx\n"));
        let o = mini_swe_observation(
            "<returncode>0</returncode>\n<warning>long</warning><output_head>\na\nb\n</output_head>\n<elided_chars>\n9 characters elided\n</elided_chars>\n<output_tail>\ny\nz\n</output_tail>",
        );
        let elided = o.elided.expect("elided");
        assert_eq!(
            (elided.head.as_str(), elided.tail.as_str()),
            ("a\nb\n", "y\nz\n")
        );
        assert_eq!(mini_swe_observation("plain"), Observation::plain("plain"));
    }

    #[test]
    fn editor_calls() {
        let view = |v: Value| editor_action(v.as_object().unwrap());
        assert_eq!(
            view(json!({"command": "view", "path": "/testbed/a.py", "view_range": [3, -1]})),
            Action::View {
                path: "/testbed/a.py".into(),
                range: Some((3, -1))
            }
        );
        assert_eq!(
            view(json!({"command": "view", "path": "/testbed/a.py", "view_range": ["3", "9"]})),
            Action::View {
                path: "/testbed/a.py".into(),
                range: Some((3, 9))
            }
        );
        assert_eq!(
            view(json!({"command": "str_replace", "path": "a.py"})),
            Action::Edit {
                path: "a.py".into()
            }
        );
        assert_eq!(
            view(json!({"command": "undo_edit", "path": "a.py"})),
            Action::Other
        );
    }

    #[test]
    fn blocks_and_arguments() {
        let text = "THOUGHT\n```bash\ncat a.py\n```\nand\n```bash\nls\n```";
        assert_eq!(fenced_blocks(text, &BASH_BLOCK), vec!["cat a.py", "ls"]);
        let call = json!({"function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}});
        assert_eq!(tool_call_arguments(&call)["command"], "ls");
        assert_eq!(
            message_text(&json!({"content": [{"type": "text", "text": "hi"}]})),
            "hi"
        );
    }
}
