//! OpenHands event logs: the agent's actions and the environment's observations as events.
//!
//! Accepted shapes: a list of events (a saved trajectory), an evaluation record
//! `{instance_id, history: [events], test_result: {git_patch}, metadata: {llm_config: {model}}}`
//! (one line of `output.jsonl`), and the older `history` of `[action, observation]` pairs.
//! Events: `{id, source, action: "run"|"read"|"edit"|…, args}` and `{id, cause, observation,
//! content, extras: {metadata: {working_dir}}}`. A `read` is a file view (`view_range` 1-based,
//! or the legacy 0-based `start`/`end`), `edit` changes a file unless its `command` is `view`,
//! `run` is a shell command; IPython cells and browsing are not read.

use super::chat;
use crate::gt::trajectory::{
    Action, Format, FormatError, Observation, ParsedTrajectory, Step, TrajectoryReader,
};
use serde_json::Value;

pub struct OpenHands;

impl TrajectoryReader for OpenHands {
    fn format(&self) -> Format {
        Format::OpenHands
    }

    fn detects(&self, doc: &Value) -> bool {
        let events = match doc {
            Value::Array(events) => events,
            Value::Object(record) => match record.get("history").and_then(Value::as_array) {
                Some(events) => events,
                None => return false,
            },
            _ => return false,
        };
        events.iter().take(20).any(|e| {
            let e = match e {
                Value::Array(pair) => pair.first().unwrap_or(&Value::Null),
                other => other,
            };
            e.get("action").is_some_and(Value::is_string)
                || e.get("observation").is_some_and(Value::is_string)
        })
    }

    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError> {
        let (events, base) = match doc {
            Value::Array(events) => (events, ""),
            _ => (
                doc.get("history")
                    .and_then(Value::as_array)
                    .ok_or_else(|| FormatError::new("/history", "expected a list of events"))?,
                "/history",
            ),
        };
        // Flatten `[action, observation]` pairs, keeping each event's pointer for errors.
        let mut flat: Vec<(String, &Value)> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            match e {
                Value::Array(pair) => {
                    for (j, inner) in pair.iter().enumerate() {
                        flat.push((format!("{base}/{i}/{j}"), inner));
                    }
                }
                Value::Object(_) => flat.push((format!("{base}/{i}"), e)),
                _ => {
                    return Err(FormatError::new(
                        format!("{base}/{i}"),
                        "expected an event object",
                    ));
                }
            }
        }

        let mut steps = Vec::new();
        let mut workdir: Option<String> = None;
        let mut cwd: Option<String> = None;
        for (index, (pointer, event)) in flat.iter().enumerate() {
            if let Some(dir) = event
                .pointer("/extras/metadata/working_dir")
                .and_then(Value::as_str)
            {
                workdir.get_or_insert_with(|| dir.to_string());
                cwd = Some(dir.to_string());
            }
            let Some(kind) = event.get("action").and_then(Value::as_str) else {
                continue;
            };
            let args = event.get("args").cloned().unwrap_or(Value::Null);
            let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
            let action = match kind {
                "run" => {
                    let command = args.get("command").and_then(Value::as_str).ok_or_else(|| {
                        FormatError::new(format!("{pointer}/args/command"), "expected a string")
                    })?;
                    Action::Shell {
                        command: command.to_string(),
                    }
                }
                "read" if !arg("path").is_empty() => Action::View {
                    path: arg("path").to_string(),
                    range: args
                        .get("view_range")
                        .and_then(chat::view_range)
                        .or_else(|| legacy_range(&args)),
                },
                "edit" => match args.as_object() {
                    Some(map) if arg("command") == "view" => chat::editor_action(map),
                    _ if !arg("path").is_empty() => Action::Edit {
                        path: arg("path").to_string(),
                    },
                    _ => Action::Other,
                },
                _ => Action::Other,
            };
            if action == Action::Other {
                continue;
            }
            let observation = observation_for(&flat, index, event.get("id"));
            steps.push(Step {
                index,
                action,
                observation,
                cwd: cwd.clone(),
            });
        }
        if workdir.is_none() {
            workdir = steps.iter().find_map(|s| match &s.action {
                Action::View { path, .. } | Action::Edit { path } => workspace_root(path),
                _ => None,
            });
        }
        let text = |pointer: &str| {
            doc.pointer(pointer)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        Ok(vec![ParsedTrajectory {
            instance_id: text("/instance_id"),
            model: text("/metadata/llm_config/model").or_else(|| text("/metadata/model_name")),
            workdir,
            submission: text("/test_result/git_patch"),
            steps,
        }])
    }
}

/// Legacy `FileReadAction` bounds: 0-based `start`, exclusive `end`, `-1` = end of file.
fn legacy_range(args: &Value) -> Option<(i64, i64)> {
    let start = args.get("start").and_then(Value::as_i64).unwrap_or(0);
    let end = args.get("end").and_then(Value::as_i64).unwrap_or(-1);
    (start > 0 || end >= 0).then_some((start + 1, end))
}

/// `/workspace/<dir>` of a path under it.
fn workspace_root(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/workspace/")?;
    let dir = rest.split('/').next().filter(|d| !d.is_empty())?;
    Some(format!("/workspace/{dir}"))
}

/// The observation caused by the action event at `index`: the event whose `cause` is the action's
/// `id`, else the next observation before the next action.
fn observation_for(
    events: &[(String, &Value)],
    index: usize,
    id: Option<&Value>,
) -> Option<Observation> {
    let following = events[index + 1..].iter().map(|(_, e)| *e);
    let by_cause = id.and_then(|id| {
        following
            .clone()
            .find(|e| e.get("cause") == Some(id) && e.get("observation").is_some())
    });
    let event = by_cause.or_else(|| {
        following
            .take_while(|e| e.get("action").is_none())
            .find(|e| e.get("observation").is_some())
    })?;
    Some(Observation::plain(
        event.get("content").and_then(Value::as_str).unwrap_or(""),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_events_and_records() {
        let events = json!([
            {"id": 1, "source": "user", "action": "message", "args": {"content": "fix"}},
            {"id": 2, "source": "agent", "action": "run", "args": {"command": "grep -n foo a.py"}},
            {"id": 3, "cause": 2, "observation": "run", "content": "4:foo", "extras": {"metadata": {"working_dir": "/workspace/o__r__1.0"}}},
            {"id": 4, "source": "agent", "action": "read", "args": {"path": "/workspace/o__r__1.0/a.py", "start": 0, "end": -1, "view_range": [1, 20], "impl_source": "oh_aci"}},
            {"id": 5, "cause": 4, "observation": "read", "content": "..."},
            {"id": 6, "source": "agent", "action": "edit", "args": {"path": "/workspace/o__r__1.0/a.py", "command": "str_replace"}},
            {"id": 7, "source": "agent", "action": "read", "args": {"path": "/workspace/o__r__1.0/b.py", "start": 10, "end": 20}}
        ]);
        assert!(OpenHands.detects(&events));
        let t = &OpenHands.read(&events).unwrap()[0];
        assert_eq!(t.workdir.as_deref(), Some("/workspace/o__r__1.0"));
        let got: Vec<(usize, Action)> = t
            .steps
            .iter()
            .map(|s| (s.index, s.action.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    1,
                    Action::Shell {
                        command: "grep -n foo a.py".into()
                    }
                ),
                (
                    3,
                    Action::View {
                        path: "/workspace/o__r__1.0/a.py".into(),
                        range: Some((1, 20))
                    }
                ),
                (
                    5,
                    Action::Edit {
                        path: "/workspace/o__r__1.0/a.py".into()
                    }
                ),
                (
                    6,
                    Action::View {
                        path: "/workspace/o__r__1.0/b.py".into(),
                        range: Some((11, 20))
                    }
                ),
            ]
        );
        assert_eq!(t.steps[0].observation.as_ref().unwrap().text, "4:foo");

        let record = json!({
            "instance_id": "o__r-3",
            "metadata": {"llm_config": {"model": "claude"}},
            "test_result": {"git_patch": "diff --git a/a.py b/a.py\n"},
            "history": [[{"id": 1, "action": "run", "args": {"command": "ls"}}, {"id": 2, "cause": 1, "observation": "run", "content": "a.py"}]]
        });
        assert!(OpenHands.detects(&record));
        let t = &OpenHands.read(&record).unwrap()[0];
        assert_eq!(t.instance_id.as_deref(), Some("o__r-3"));
        assert_eq!(t.model.as_deref(), Some("claude"));
        assert_eq!(t.steps[0].observation.as_ref().unwrap().text, "a.py");
    }
}
