//! [`fit_answer`]: every answer within a byte cap, so that one call can never flood an agent's
//! context (or the pipe) however large the file, the line or the query behind it.
//!
//! An answer is sent twice over, as text and as structured content, so the cap counts both: the
//! text gets at most half and is cut at a line boundary with a note saying how to get the rest;
//! the structured content gets the remainder and is cut by [`fit_value`], which keeps every
//! small field whole and shortens the large ones (arrays lose their last elements, long strings
//! their tail), then says so in a top-level `truncated` object. An answer within the cap is
//! returned unchanged, byte for byte.

use crate::tools::Answer;
use serde_json::{Value, json};

/// The cap when a call gives no `max_bytes`: about 16k tokens, what agents take from one tool
/// call without complaint.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024;
/// The smallest cap a call may ask for: below it even a short answer's note does not fit.
pub const MIN_MAX_BYTES: usize = 1024;
/// The largest cap a call may ask for.
pub const MAX_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Room kept in each half for the notes that say what was cut.
const NOTE_ROOM: usize = 200;

/// Bytes of a value as JSON (compact, as it goes over the wire).
fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// `answer` cut to at most `max_bytes` bytes of text plus structured JSON.
pub fn fit_answer(answer: Answer, max_bytes: usize) -> Answer {
    let text_bytes = answer.text.len();
    let structured_bytes = json_len(&answer.structured);
    if text_bytes.saturating_add(structured_bytes) <= max_bytes {
        return answer;
    }
    let text_share = (max_bytes / 2).saturating_sub(NOTE_ROOM);
    let mut text = cut_text(&answer.text, text_share);
    if text.len() < text_bytes {
        text.push_str(&format!(
            "… answer cut at {max_bytes} bytes (max_bytes; this answer had {}): ask for less (a narrower range, a lower limit) or raise max_bytes\n",
            text_bytes + structured_bytes
        ));
    }
    let structured_share = max_bytes
        .saturating_sub(text.len())
        .saturating_sub(NOTE_ROOM);
    let mut structured = fit_value(&answer.structured, structured_share);
    if let Value::Object(map) = &mut structured {
        map.insert(
            "truncated".into(),
            json!({ "max_bytes": max_bytes, "bytes": text_bytes + structured_bytes }),
        );
    }
    Answer { text, structured }
}

/// The longest prefix of `text` of at most `max` bytes that ends at a line end (or, when its
/// first line is longer than that, at a character boundary).
fn cut_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(newline) => text[..=newline].to_owned(),
        None => format!("{}\n", &text[..end]),
    }
}

/// `value` shortened until its JSON takes at most `budget` bytes (or as close as its shape
/// allows: an object's keys are never dropped). Small parts are kept whole; arrays keep a
/// prefix of their elements, strings a prefix of their characters.
pub fn fit_value(value: &Value, budget: usize) -> Value {
    // One pass can overshoot by the skeletons of the fields it had to shorten (`"k":[]`); a
    // few passes with the overshoot taken off the budget bring it within.
    let mut aim = budget;
    let mut cut = shorten(value, aim);
    for _ in 0..8 {
        let size = json_len(&cut);
        if size <= budget || aim == 0 {
            break;
        }
        aim = aim.saturating_sub(size - budget);
        cut = shorten(value, aim);
    }
    cut
}

fn shorten(value: &Value, budget: usize) -> Value {
    if json_len(value) <= budget {
        return value.clone();
    }
    match value {
        Value::String(s) => {
            // Escapes can make the JSON longer than the string: halve until it fits.
            let mut keep = budget.saturating_sub(2).min(s.len());
            loop {
                while !s.is_char_boundary(keep) {
                    keep -= 1;
                }
                let cut = Value::String(s[..keep].to_owned());
                if keep == 0 || json_len(&cut) <= budget {
                    return cut;
                }
                keep /= 2;
            }
        }
        Value::Array(items) => {
            let mut kept = Vec::new();
            let mut used = 2; // []
            for item in items {
                let size = json_len(item) + 1; // and a comma
                if used + size <= budget {
                    kept.push(item.clone());
                    used += size;
                } else {
                    // The first element that does not fit may fit in part (a long line).
                    let room = budget.saturating_sub(used + 1);
                    if room >= 64 && !matches!(item, Value::Number(_) | Value::Bool(_)) {
                        kept.push(shorten(item, room));
                    }
                    break;
                }
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            // Smallest fields first, each kept whole while it fits; the largest share what is
            // left, so a cut falls on the bulk (lines, hits), never on a name or a count.
            let mut fields: Vec<(&String, &Value, usize)> = map
                .iter()
                .map(|(k, v)| (k, v, json_len(v) + k.len() + 4))
                .collect();
            fields.sort_by_key(|(_, _, size)| *size);
            let mut left = budget.saturating_sub(2);
            let mut out = serde_json::Map::new();
            for (key, field, size) in fields {
                if size <= left {
                    out.insert(key.clone(), field.clone());
                    left -= size;
                } else {
                    let room = left.saturating_sub(key.len() + 4);
                    let cut = shorten(field, room);
                    left = left.saturating_sub(json_len(&cut) + key.len() + 4);
                    out.insert(key.clone(), cut);
                }
            }
            // Keys in their original order (where the map keeps one).
            let mut ordered = serde_json::Map::new();
            for key in map.keys() {
                if let Some(v) = out.remove(key) {
                    ordered.insert(key.clone(), v);
                }
            }
            Value::Object(ordered)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str, structured: Value) -> Answer {
        Answer {
            text: text.to_owned(),
            structured,
        }
    }

    fn total(a: &Answer) -> usize {
        a.text.len() + json_len(&a.structured)
    }

    #[test]
    fn an_answer_within_the_cap_is_unchanged() {
        let small = answer("a.py:1-2\n", json!({"path": "a.py", "lines": ["x", "y"]}));
        let fitted = fit_answer(
            answer(&small.text, small.structured.clone()),
            DEFAULT_MAX_BYTES,
        );
        assert_eq!(fitted.text, small.text);
        assert_eq!(fitted.structured, small.structured);
    }

    #[test]
    fn many_lines_are_cut_to_the_cap_with_a_note() {
        // A `read` of 2000 lines of 26 kB each: 52 MB before the cap.
        let line = "x".repeat(26_000);
        let lines: Vec<String> = (0..2000).map(|_| line.clone()).collect();
        let text: String = (1..=2000).map(|i| format!("{i}| {line}\n")).collect();
        let big = answer(
            &text,
            json!({"path": "big.txt", "start": 1, "end": 2000, "total_lines": 2000, "lines": lines}),
        );
        for cap in [MIN_MAX_BYTES, 10_000, DEFAULT_MAX_BYTES, 1_000_000] {
            let fitted = fit_answer(answer(&big.text, big.structured.clone()), cap);
            assert!(total(&fitted) <= cap, "cap {cap}: {} bytes", total(&fitted));
            assert!(fitted.text.contains("answer cut at"), "{}", fitted.text);
            let s = &fitted.structured;
            // Small fields whole, the bulk cut, and the cut said.
            assert_eq!(s["path"], "big.txt");
            assert_eq!(s["total_lines"], 2000);
            assert_eq!(s["truncated"]["max_bytes"], cap);
            assert!(s["lines"].as_array().unwrap().len() < 2000);
        }
    }

    #[test]
    fn text_is_cut_at_a_line_end_and_strings_at_a_character_boundary() {
        assert_eq!(cut_text("ab\ncd\nef\n", 7), "ab\ncd\n");
        assert_eq!(cut_text("abcdef", 4), "abcd\n");
        assert_eq!(cut_text("ééé", 3), "é\n");
        let cut = fit_value(&json!("ééééé"), 6);
        assert_eq!(cut, json!("éé"));
        // Escapes count: a string of quotes doubles in JSON.
        let quotes = fit_value(&json!("\"".repeat(100)), 50);
        assert!(json_len(&quotes) <= 50, "{quotes}");
    }

    #[test]
    fn nested_values_keep_their_keys() {
        let value = json!({
            "query": "q".repeat(5000),
            "hits": [{"path": "a", "lines": ["l".repeat(3000)]}, {"path": "b"}],
            "total": 2,
        });
        let cut = fit_value(&value, 2000);
        assert!(json_len(&cut) <= 2000, "{}", json_len(&cut));
        let mut keys: Vec<&String> = cut.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["hits", "query", "total"]);
        assert_eq!(cut["total"], 2);
    }
}
