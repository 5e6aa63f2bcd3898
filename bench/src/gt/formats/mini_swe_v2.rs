//! mini-swe-agent 2.x trajectories (`<instance_id>.traj.json`, `trajectory_format:
//! "mini-swe-agent-1.1"`).
//!
//! Messages keep the model's native shape plus an `extra` field. The commands a step ran are in
//! `extra.actions` (`[{command, tool_call_id?}]`); older or hand-made files may only have the
//! native `tool_calls` (a `bash` tool with `{command}` arguments) or, with text-based models,
//! ```` ```mswea_bash_command ```` blocks. Outputs come back as `role: "tool"` messages matched by
//! `tool_call_id`, or as the next `user` message. Responses-API message shapes (`output` items)
//! are not read.

use super::chat;
use super::mini_swe_v1::{TAG as V1_TAG, mini_swe_metadata};
use crate::gt::trajectory::{
    Action, Format, FormatError, Observation, ParsedTrajectory, Step, TrajectoryReader,
};
use serde_json::Value;

pub struct MiniSweAgentV2;

impl TrajectoryReader for MiniSweAgentV2 {
    fn format(&self) -> Format {
        Format::MiniSweAgentV2
    }

    fn detects(&self, doc: &Value) -> bool {
        if !doc.get("messages").is_some_and(Value::is_array) {
            return false;
        }
        match doc.get("trajectory_format").and_then(Value::as_str) {
            Some(tag) => tag.starts_with("mini-swe-agent-") && tag != V1_TAG,
            None => doc
                .pointer("/info/mini_version")
                .and_then(Value::as_str)
                .is_some_and(|v| !v.starts_with("1.") && !v.starts_with("0.")),
        }
    }

    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError> {
        let (messages, turns) = chat::assistant_turns(doc, "messages")?;
        let mut steps = Vec::new();
        for index in turns {
            let message = &messages[index];
            for (command, call_id) in commands(message, index)? {
                let observation = observation_for(messages, index, call_id.as_deref());
                let action = match command {
                    Ok(command) => Action::Shell { command },
                    Err(text) => Action::Rejected { text },
                };
                steps.push(Step {
                    index,
                    action,
                    observation,
                    cwd: None,
                });
            }
        }
        Ok(vec![mini_swe_metadata(doc, steps)])
    }
}

/// The commands of one assistant message with their tool-call ids. `Err(text)` marks blocks the
/// harness refused (text-based models must give exactly one).
type Commands = Vec<(Result<String, String>, Option<String>)>;

fn commands(message: &Value, index: usize) -> Result<Commands, FormatError> {
    if let Some(actions) = message.pointer("/extra/actions") {
        let actions = actions.as_array().ok_or_else(|| {
            FormatError::new(
                format!("/messages/{index}/extra/actions"),
                "expected a list",
            )
        })?;
        return actions
            .iter()
            .enumerate()
            .map(|(i, action)| {
                let command = action
                    .get("command")
                    .and_then(Value::as_str)
                    .or_else(|| action.as_str())
                    .ok_or_else(|| {
                        FormatError::new(
                            format!("/messages/{index}/extra/actions/{i}/command"),
                            "expected the action's command as a string",
                        )
                    })?;
                let id = action
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Ok((Ok(command.to_string()), id))
            })
            .collect();
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        return Ok(calls
            .iter()
            .filter(|call| chat::is_shell_tool(chat::tool_call_name(call)))
            .filter_map(|call| {
                let args = chat::tool_call_arguments(call);
                let command = args.get("command")?.as_str()?.to_string();
                let id = call.get("id").and_then(Value::as_str).map(str::to_string);
                Some((Ok(command), id))
            })
            .collect());
    }
    let text = chat::message_text(message);
    let blocks = chat::fenced_blocks(&text, &chat::MSWEA_BLOCK);
    Ok(match blocks.as_slice() {
        [] => Vec::new(),
        [command] => vec![(Ok(command.to_string()), None)],
        _ => vec![(Err(blocks.join("\n")), None)],
    })
}

/// The output of a command: the `tool` message answering `call_id`, else the next non-assistant
/// message.
fn observation_for(messages: &[Value], index: usize, call_id: Option<&str>) -> Option<Observation> {
    let following = messages[index + 1..]
        .iter()
        .take_while(|m| chat::role(m) != "assistant");
    let answer = match call_id {
        Some(id) => following
            .clone()
            .find(|m| m.get("tool_call_id").and_then(Value::as_str) == Some(id))
            .or_else(|| following.clone().next()),
        None => following.clone().next(),
    }?;
    Some(chat::mini_swe_observation(&chat::message_text(answer)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_actions_tool_calls_and_text_blocks() {
        let doc = json!({
            "trajectory_format": "mini-swe-agent-1.1",
            "info": {"config": {"model": {"model_name": "m2"}, "environment": {"cwd": "/testbed"}}},
            "messages": [
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": null,
                 "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"cat a.py\"}"}},
                                {"id": "c2", "function": {"name": "bash", "arguments": "{\"command\": \"cat b.py\"}"}}],
                 "extra": {"actions": [{"command": "cat a.py", "tool_call_id": "c1"},
                                       {"command": "cat b.py", "tool_call_id": "c2"}]}},
                {"role": "tool", "tool_call_id": "c2", "content": "B"},
                {"role": "tool", "tool_call_id": "c1", "content": "A"},
                {"role": "assistant", "tool_calls": [{"id": "c3", "function": {"name": "bash", "arguments": {"command": "ls"}}}]},
                {"role": "tool", "tool_call_id": "c3", "content": "<returncode>0</returncode><output>\nx</output>"},
                {"role": "assistant", "content": "```mswea_bash_command\nhead a.py\n```"},
                {"role": "user", "content": "out"},
                {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}}
            ]
        });
        assert!(MiniSweAgentV2.detects(&doc));
        let t = &MiniSweAgentV2.read(&doc).unwrap()[0];
        let got: Vec<(usize, Action, String)> = t
            .steps
            .iter()
            .map(|s| {
                (
                    s.index,
                    s.action.clone(),
                    s.observation.clone().unwrap().text,
                )
            })
            .collect();
        let shell = |c: &str| Action::Shell { command: c.into() };
        assert_eq!(
            got,
            vec![
                (1, shell("cat a.py"), "A".into()),
                (1, shell("cat b.py"), "B".into()),
                (4, shell("ls"), "x".into()),
                (6, shell("head a.py"), "out".into()),
            ]
        );
    }

    #[test]
    fn v1_tag_is_not_v2() {
        let doc = json!({"trajectory_format": "mini-swe-agent-1", "messages": []});
        assert!(!MiniSweAgentV2.detects(&doc));
    }
}
