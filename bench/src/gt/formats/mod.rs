//! Trajectory formats: one module per format, each with a [`TrajectoryReader`], and the detection
//! that picks the reader for a document.
//!
//! Detection is structural and ordered: the tagged formats first (mini-swe-agent's
//! `trajectory_format`), then the shapes with a distinctive key (`trajectory`, `traj`), then
//! OpenHands event lists. A document no reader claims is reported with its top-level shape and
//! the shapes that would have been accepted.

mod chat;
pub mod mini_swe_v1;
pub mod mini_swe_v2;
pub mod openhands;
pub mod swe_agent;
pub mod unified;

use super::trajectory::TrajectoryReader;
use serde_json::Value;

/// Every reader, in detection order.
pub fn readers() -> [&'static dyn TrajectoryReader; 5] {
    [
        &mini_swe_v1::MiniSweAgentV1,
        &mini_swe_v2::MiniSweAgentV2,
        &swe_agent::SweAgent,
        &unified::Unified,
        &openhands::OpenHands,
    ]
}

/// A document none of the readers recognises.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trajectory format: {shape}; expected one of: {expected}")]
pub struct UnknownFormat {
    /// The document's top-level shape, e.g. `object with keys [a, b]`.
    pub shape: String,
    pub expected: String,
}

/// The reader for `doc`.
pub fn detect(doc: &Value) -> Result<&'static dyn TrajectoryReader, UnknownFormat> {
    readers()
        .into_iter()
        .find(|r| r.detects(doc))
        .ok_or_else(|| UnknownFormat {
            shape: shape_of(doc),
            expected: readers()
                .iter()
                .map(|r| format!("{} ({})", r.format(), r.format().signature()))
                .collect::<Vec<_>>()
                .join("; "),
        })
}

fn shape_of(doc: &Value) -> String {
    match doc {
        Value::Object(map) => {
            let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
            keys.sort_unstable();
            let shown = keys.iter().take(12).copied().collect::<Vec<_>>().join(", ");
            let more = if keys.len() > 12 { ", …" } else { "" };
            format!("object with keys [{shown}{more}]")
        }
        Value::Array(items) => format!("list of {} items", items.len()),
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Null => "null".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gt::trajectory::Format;
    use serde_json::json;

    fn check(doc: Value, expected: Option<Format>) {
        assert_eq!(
            detect(&doc).ok().map(|r| r.format()),
            expected,
            "doc: {doc}"
        );
    }

    #[test]
    fn detection() {
        check(
            json!({"trajectory_format": "mini-swe-agent-1", "messages": [], "info": {}}),
            Some(Format::MiniSweAgentV1),
        );
        check(
            json!({"messages": [], "info": {"mini_version": "1.15.0"}}),
            Some(Format::MiniSweAgentV1),
        );
        check(
            json!({"trajectory_format": "mini-swe-agent-1.1", "messages": []}),
            Some(Format::MiniSweAgentV2),
        );
        check(
            json!({"messages": [], "info": {"mini_version": "2.0.0"}}),
            Some(Format::MiniSweAgentV2),
        );
        check(
            json!({"trajectory": [{"action": "ls", "observation": ""}], "info": {}}),
            Some(Format::SweAgent),
        );
        check(json!({"info": {}, "traj": []}), Some(Format::Unified));
        check(
            json!([{"action": "run", "args": {"command": "ls"}}]),
            Some(Format::OpenHands),
        );
        check(
            json!({"history": [{"observation": "run", "content": ""}]}),
            Some(Format::OpenHands),
        );
        check(json!({"foo": 1}), None);
        check(json!([1, 2]), None);
    }

    #[test]
    fn unknown_format_names_shape_and_expectations() {
        let err = detect(&json!({"b": 1, "a": 2})).err().unwrap();
        assert_eq!(err.shape, "object with keys [a, b]");
        assert!(err.to_string().contains("mini-swe-agent v1"));
        assert!(err.to_string().contains("OpenHands"));
    }
}
