//! mini-swe-agent 1.x trajectories (`<instance_id>.traj.json`).
//!
//! Shape: `{info: {config: {model: {model_name}, environment: {cwd}}, submission, mini_version},
//! messages: [{role, content}], trajectory_format: "mini-swe-agent-1", instance_id?}`.
//! Each assistant message holds its command in a ```` ```bash ```` block; the harness runs it
//! only when there is exactly one such block (otherwise it answers with a format error), and the
//! next `user` message carries the output in `<returncode>`/`<output>` tags.

use super::chat;
use crate::gt::trajectory::{
    Action, Format, FormatError, ParsedTrajectory, Step, TrajectoryReader,
};
use serde_json::Value;

pub struct MiniSweAgentV1;

pub(super) const TAG: &str = "mini-swe-agent-1";

impl TrajectoryReader for MiniSweAgentV1 {
    fn format(&self) -> Format {
        Format::MiniSweAgentV1
    }

    fn detects(&self, doc: &Value) -> bool {
        if !doc.get("messages").is_some_and(Value::is_array) {
            return false;
        }
        match doc.get("trajectory_format").and_then(Value::as_str) {
            Some(tag) => tag == TAG,
            // Files written before the tag existed: 1.x versions, or no tool calls at all.
            None => match doc.pointer("/info/mini_version").and_then(Value::as_str) {
                Some(version) => version.starts_with("1."),
                None => doc.get("info").is_some_and(Value::is_object),
            },
        }
    }

    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError> {
        let (messages, turns) = chat::assistant_turns(doc, "messages")?;
        let mut steps = Vec::new();
        for index in turns {
            let message = &messages[index];
            let text = chat::message_text(message);
            let blocks = chat::fenced_blocks(&text, &chat::BASH_BLOCK);
            let action = match blocks.as_slice() {
                [] => continue,
                [command] => Action::Shell {
                    command: command.to_string(),
                },
                _ => Action::Rejected {
                    text: blocks.join("\n"),
                },
            };
            let observation = messages
                .get(index + 1)
                .filter(|next| chat::role(next) != "assistant")
                .map(|next| chat::mini_swe_observation(&chat::message_text(next)));
            steps.push(Step {
                index,
                action,
                observation,
                cwd: None,
            });
        }
        Ok(vec![mini_swe_metadata(doc, steps)])
    }
}

/// Fields mini-swe-agent v1 and v2 share.
pub(super) fn mini_swe_metadata(doc: &Value, steps: Vec<Step>) -> ParsedTrajectory {
    let text = |pointer: &str| {
        doc.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    ParsedTrajectory {
        instance_id: text("/instance_id").or_else(|| text("/info/instance_id")),
        model: text("/info/config/model/model_name").or_else(|| text("/info/model")),
        workdir: text("/info/config/environment/cwd"),
        submission: text("/info/submission"),
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gt::trajectory::Observation;
    use serde_json::json;

    #[test]
    fn reads_commands_outputs_and_rejections() {
        let doc = json!({
            "trajectory_format": "mini-swe-agent-1",
            "instance_id": "o__r-1",
            "info": {"submission": "diff", "config": {"model": {"model_name": "m"}, "environment": {"cwd": "/testbed"}}},
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": "T\n```bash\ncat a.py\n```"},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"},
                {"role": "assistant", "content": "```bash\nls\n```\n```bash\npwd\n```"},
                {"role": "user", "content": "Please always provide EXACTLY ONE action"},
            ]
        });
        assert!(MiniSweAgentV1.detects(&doc));
        let t = &MiniSweAgentV1.read(&doc).unwrap()[0];
        assert_eq!(t.instance_id.as_deref(), Some("o__r-1"));
        assert_eq!(t.model.as_deref(), Some("m"));
        assert_eq!(t.workdir.as_deref(), Some("/testbed"));
        assert_eq!(t.steps.len(), 2);
        assert_eq!(t.steps[0].index, 2);
        assert_eq!(
            t.steps[0].action,
            Action::Shell {
                command: "cat a.py".into()
            }
        );
        assert_eq!(t.steps[0].observation, Some(Observation::plain("x\n")));
        assert!(matches!(t.steps[1].action, Action::Rejected { .. }));
    }

    #[test]
    fn rejects_non_object_messages() {
        let doc = json!({"trajectory_format": "mini-swe-agent-1", "info": {}, "messages": [1]});
        let err = MiniSweAgentV1.read(&doc).unwrap_err();
        assert_eq!(err.pointer, "/messages/0");
    }
}
