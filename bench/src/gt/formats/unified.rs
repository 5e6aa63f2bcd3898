//! The reference release's unified trajectory format: `{info: {instance_id, model, submission,
//! config?}, traj: [chat messages]}`, which its converters produce from mini-swe-agent, SWE-agent,
//! OpenHands and other datasets.
//!
//! Assistant messages carry commands either as ```` ```bash ```` blocks in `content` (the first
//! block counts, as in the reference builder: the conversion no longer says whether the harness
//! ran it) or as `tool_calls` (`execute_bash`/`bash` with `{command}`, `str_replace_editor` with
//! `{command, path, view_range}`). A command's output is the `tool` message answering its call, or
//! the next message.

use super::chat;
use crate::gt::trajectory::{
    Action, Format, FormatError, Observation, ParsedTrajectory, Step, TrajectoryReader,
};
use serde_json::Value;

pub struct Unified;

impl TrajectoryReader for Unified {
    fn format(&self) -> Format {
        Format::Unified
    }

    fn detects(&self, doc: &Value) -> bool {
        doc.get("traj").is_some_and(Value::is_array)
    }

    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError> {
        let (messages, turns) = chat::assistant_turns(doc, "traj")?;
        let mut steps = Vec::new();
        for index in turns {
            let message = &messages[index];
            let next = messages.get(index + 1);
            let text = chat::message_text(message);
            if let Some(command) = chat::fenced_blocks(&text, &chat::BASH_BLOCK).first() {
                steps.push(Step {
                    index,
                    action: Action::Shell {
                        command: command.to_string(),
                    },
                    observation: next.map(|m| chat::mini_swe_observation(&chat::message_text(m))),
                    cwd: None,
                });
            }
            let calls = match message.get("tool_calls") {
                None | Some(Value::Null) => continue,
                Some(Value::Array(calls)) => calls,
                Some(_) => {
                    return Err(FormatError::new(
                        format!("/traj/{index}/tool_calls"),
                        "expected a list of tool calls",
                    ));
                }
            };
            for call in calls {
                let name = chat::tool_call_name(call);
                let args = chat::tool_call_arguments(call);
                let action = if chat::is_shell_tool(name) {
                    match args.get("command").and_then(Value::as_str) {
                        Some(command) => Action::Shell {
                            command: command.to_string(),
                        },
                        None => continue,
                    }
                } else if chat::is_editor_tool(name) {
                    chat::editor_action(&args)
                } else {
                    continue;
                };
                if action == Action::Other {
                    continue;
                }
                let id = call.get("id").and_then(Value::as_str);
                let answer = messages[index + 1..]
                    .iter()
                    .take_while(|m| chat::role(m) != "assistant")
                    .find(|m| id.is_some() && m.get("tool_call_id").and_then(Value::as_str) == id)
                    .or(next);
                steps.push(Step {
                    index,
                    action,
                    observation: answer.map(|m| Observation::plain(chat::message_text(m))),
                    cwd: None,
                });
            }
        }
        let text = |pointer: &str| {
            doc.pointer(pointer)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let workdir = text("/info/config/environment/cwd").or_else(|| {
            steps.iter().find_map(|s| match &s.action {
                Action::View { path, .. } | Action::Edit { path } => {
                    let rest = path.strip_prefix("/workspace/")?;
                    let dir = rest.split('/').next().filter(|d| !d.is_empty())?;
                    Some(format!("/workspace/{dir}"))
                }
                _ => None,
            })
        });
        Ok(vec![ParsedTrajectory {
            instance_id: text("/info/instance_id"),
            model: text("/info/model"),
            workdir,
            submission: text("/info/submission"),
            steps,
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_blocks_and_tool_calls() {
        let doc = json!({
            "info": {"instance_id": "o__r-4", "model": "qwen", "submission": ""},
            "traj": [
                {"role": "user", "content": "fix"},
                {"role": "assistant", "content": "```bash\nnl -ba a.py | sed -n '1,5p'\n```"},
                {"role": "user", "content": "out"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "t1", "function": {"name": "str_replace_editor", "arguments": {"command": "view", "path": "/workspace/o__r__0.1/b.py", "view_range": [2, 8]}}},
                    {"id": "t2", "function": {"name": "execute_bash", "arguments": "{\"command\": \"cat c.py\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "t2", "content": "C"},
                {"role": "tool", "tool_call_id": "t1", "content": "B"}
            ]
        });
        assert!(Unified.detects(&doc));
        let t = &Unified.read(&doc).unwrap()[0];
        assert_eq!(t.workdir.as_deref(), Some("/workspace/o__r__0.1"));
        assert_eq!(t.submission, None);
        let got: Vec<(Action, String)> = t
            .steps
            .iter()
            .map(|s| (s.action.clone(), s.observation.clone().unwrap().text))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Action::Shell {
                        command: "nl -ba a.py | sed -n '1,5p'".into()
                    },
                    "out".into()
                ),
                (
                    Action::View {
                        path: "/workspace/o__r__0.1/b.py".into(),
                        range: Some((2, 8))
                    },
                    "B".into()
                ),
                (
                    Action::Shell {
                        command: "cat c.py".into()
                    },
                    "C".into()
                ),
            ]
        );
    }
}
