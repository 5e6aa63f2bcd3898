//! SWE-agent trajectories (`<instance_id>.traj`), both the classic 0.x interface (`open`,
//! `goto`, `scroll_*`, `search_file`, `edit a:b`) and 1.x (`str_replace_editor` and plain bash).
//!
//! Shape: `{trajectory: [{action, observation, state, thought, response}], history, info:
//! {submission, model_stats}, replay_config?, environment?}`. `state` (an object, or a JSON string
//! in 0.x) records `open_file` and `working_dir` after the step; `replay_config` (a JSON string)
//! names the model (`agent.model.name`) and the instance (`problem_statement.id`).

use super::chat;
use crate::gt::shell;
use crate::gt::trajectory::{
    Action, Format, FormatError, Observation, ParsedTrajectory, Step, TrajectoryReader,
};
use serde_json::Value;

pub struct SweAgent;

impl TrajectoryReader for SweAgent {
    fn format(&self) -> Format {
        Format::SweAgent
    }

    fn detects(&self, doc: &Value) -> bool {
        doc.get("trajectory")
            .and_then(Value::as_array)
            .is_some_and(|steps| {
                steps.is_empty()
                    || steps[0].get("action").is_some() && steps[0].get("observation").is_some()
            })
    }

    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError> {
        let items = doc
            .get("trajectory")
            .and_then(Value::as_array)
            .ok_or_else(|| FormatError::new("/trajectory", "expected a list of steps"))?;
        let mut steps = Vec::new();
        // The state after the previous step is the one this step starts in.
        let mut open_file: Option<String> = None;
        let mut cwd: Option<String> = None;
        let mut workdir: Option<String> = None;
        for (index, item) in items.iter().enumerate() {
            let action_text = item.get("action").and_then(Value::as_str).ok_or_else(|| {
                FormatError::new(format!("/trajectory/{index}/action"), "expected a string")
            })?;
            let observation = item
                .get("observation")
                .and_then(Value::as_str)
                .map(Observation::plain);
            steps.push(Step {
                index,
                action: parse_action(action_text, open_file.as_deref()),
                observation,
                cwd: cwd.clone(),
            });
            let state = state_of(item);
            if let Some(file) = state.get("open_file").and_then(Value::as_str) {
                open_file = (file != "n/a" && !file.is_empty()).then(|| file.to_string());
            }
            if let Some(dir) = state.get("working_dir").and_then(Value::as_str) {
                workdir.get_or_insert_with(|| dir.to_string());
                cwd = Some(dir.to_string());
            }
        }
        let replay: Value = doc
            .get("replay_config")
            .map(|v| match v {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            })
            .unwrap_or(Value::Null);
        let text = |v: &Value, pointer: &str| {
            v.pointer(pointer)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        Ok(vec![ParsedTrajectory {
            instance_id: text(&replay, "/problem_statement/id")
                .or_else(|| text(doc, "/instance_id")),
            model: text(&replay, "/agent/model/name").or_else(|| text(doc, "/info/model_name")),
            workdir,
            submission: text(doc, "/info/submission"),
            steps,
        }])
    }
}

fn state_of(item: &Value) -> Value {
    match item.get("state") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// Translate one SWE-agent action line into an [`Action`].
fn parse_action(text: &str, open_file: Option<&str>) -> Action {
    let first_line = text.lines().next().unwrap_or("").trim();
    let verb = first_line.split_whitespace().next().unwrap_or("");
    match verb {
        "open" | "goto" | "scroll_up" | "scroll_down" | "search_file" => {
            let words = first_words(first_line);
            let path = match verb {
                "open" => words.get(1).cloned(),
                // `search_file TERM [FILE]`: without FILE it searches the open file.
                "search_file" => words.get(2).cloned().or(open_file.map(str::to_string)),
                _ => open_file.map(str::to_string),
            };
            Action::Window {
                path,
                opens: verb == "open",
            }
        }
        "edit" => match open_file {
            Some(path) => Action::Edit {
                path: path.to_string(),
            },
            None => Action::Other,
        },
        "submit" | "exit_forfeit" | "exit_cost" | "exit_context" | "exit_error" | "exit_format" => {
            Action::Other
        }
        _ if chat::is_editor_tool(verb) => editor_command(text),
        _ => Action::Shell {
            command: text.to_string(),
        },
    }
}

fn first_words(line: &str) -> Vec<String> {
    shell::parse(line)
        .into_iter()
        .next()
        .and_then(|p| p.commands.into_iter().next())
        .map(|c| c.words.into_iter().map(|w| w.text).collect())
        .unwrap_or_default()
}

/// `str_replace_editor view PATH [--view_range A B]`, `str_replace_editor str_replace PATH …`.
fn editor_command(text: &str) -> Action {
    let words = first_words(text);
    let mut args = serde_json::Map::new();
    if let Some(command) = words.get(1) {
        args.insert("command".into(), Value::from(command.as_str()));
    }
    if let Some(path) = words.get(2) {
        args.insert("path".into(), Value::from(path.as_str()));
    }
    if let Some(at) = words.iter().position(|w| w == "--view_range") {
        let numbers: Vec<Value> = words[at + 1..]
            .iter()
            .take(2)
            .map(|w| Value::from(w.trim_matches(|c| c == '[' || c == ']' || c == ',')))
            .collect();
        args.insert("view_range".into(), Value::Array(numbers));
    }
    chat::editor_action(&args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classic_and_editor_actions() {
        let doc = json!({
            "environment": "swe_main",
            "replay_config": "{\"agent\": {\"model\": {\"name\": \"gpt-4o\"}}, \"problem_statement\": {\"id\": \"o__r-2\"}}",
            "info": {"submission": "diff --git a/x.py b/x.py\n"},
            "trajectory": [
                {"action": "open src/x.py 120\n", "observation": "[File: /o__r/src/x.py (300 lines total)]\n71:a", "state": "{\"open_file\": \"/o__r/src/x.py\", \"working_dir\": \"/o__r\"}"},
                {"action": "scroll_down\n", "observation": "...", "state": {"open_file": "/o__r/src/x.py", "working_dir": "/o__r"}},
                {"action": "edit 10:12\n    x = 1\nend_of_edit\n", "observation": "...", "state": {}},
                {"action": "str_replace_editor view /testbed/y.py  --view_range 5 9", "observation": "..."},
                {"action": "grep -n foo src/x.py", "observation": "3:foo"},
                {"action": "submit", "observation": ""}
            ]
        });
        assert!(SweAgent.detects(&doc));
        let t = &SweAgent.read(&doc).unwrap()[0];
        assert_eq!(t.instance_id.as_deref(), Some("o__r-2"));
        assert_eq!(t.model.as_deref(), Some("gpt-4o"));
        assert_eq!(t.workdir.as_deref(), Some("/o__r"));
        let actions: Vec<Action> = t.steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(
            actions,
            vec![
                Action::Window {
                    path: Some("src/x.py".into()),
                    opens: true
                },
                Action::Window {
                    path: Some("/o__r/src/x.py".into()),
                    opens: false
                },
                Action::Edit {
                    path: "/o__r/src/x.py".into()
                },
                Action::View {
                    path: "/testbed/y.py".into(),
                    range: Some((5, 9))
                },
                Action::Shell {
                    command: "grep -n foo src/x.py".into()
                },
                Action::Other,
            ]
        );
        assert_eq!(t.steps[0].cwd, None);
        assert_eq!(t.steps[1].cwd.as_deref(), Some("/o__r"));
    }
}
