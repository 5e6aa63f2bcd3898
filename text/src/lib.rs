//! swex-text: the text semantics every part of swex shares.
//!
//! - [`lines`]: lines as Python's `str.splitlines()` yields them (the lines the benchmark scores):
//!   [`split_lines`], [`line_count`], [`bytes_line_count`] (the reference's count of a file's
//!   bytes) and [`LineIndex`] (byte offsets ↔ line numbers).
//! - [`python`]: [`decode_utf8_ignore`] (`errors="ignore"`), Python's whitespace
//!   ([`python::split_whitespace`], [`python::is_blank`]).
//! - [`glob`]: the one path-glob syntax of every backend ([`Glob`]).
//! - [`paths`]: what a repository path says about a file ([`paths::path_role`]: test, docs,
//!   example, vendored, generated or bundled, declaration stub, barrel).
//! - [`stopwords`]: every stop-word list, one named [`stopwords::StopList`] each.
//! - [`identifiers`]: identifiers split into words on `_`, `-` and camelCase
//!   ([`identifiers::identifier_parts`], with a named [`identifiers::Digits`] rule) and squashed
//!   for comparison ([`identifiers::squash`]); CJK runs ([`identifiers::is_cjk`],
//!   [`identifiers::set_apart_cjk_runs`]).
//! - [`stems`]: whether two words are one up to inflection ([`stems::same_word`], with a named
//!   [`stems::Inflection`]); a file's stem is [`paths::file_stem`] (named [`paths::Extension`])
//!   and [`paths::module_stem`].
//! - [`subjects`]: the subject a test file names ([`subjects::subject_stem`], one named
//!   [`subjects::TestNaming`] per convention, and the explorer's language-blind pairing).
//! - [`hints`]: paths as issues write them, made repository-relative
//!   ([`hints::normalize_path_hint`]) and resolved to snapshot files
//!   ([`hints::resolve_path_hint`], named [`hints::BareName`]); one path naming another
//!   ([`hints::ends_with_path`], [`hints::path_suffixes`]).
//!
//! Invariant: std only, no dependencies — the plugin SDK re-exports this crate as
//! `swex_plugin::text`, and a plugin author depends on the SDK alone. Nothing here knows about
//! files, indexes or the benchmark; every function is total (no panics on any input).
//!
//! # Example
//!
//! ```
//! use swex_text::{Glob, LineIndex, line_count, split_lines};
//!
//! let text = "first\r\nsecond\x0cthird";
//! assert_eq!(split_lines(text), ["first", "second", "third"]);
//! assert_eq!(line_count(text), 3);
//! assert_eq!(LineIndex::new(text).line_of_byte(8), 2);
//! assert!(Glob::new("*.{py,pyi}").unwrap().is_match("pkg/stub.pyi"));
//! ```

pub mod glob;
pub mod hints;
pub mod identifiers;
pub mod lines;
pub mod paths;
pub mod python;
pub mod stems;
pub mod stopwords;
pub mod subjects;

pub use glob::{Glob, GlobError};
pub use lines::{
    LineIndex, bytes_line_count, line_count, newline_line_count, newline_line_spans, split_lines,
};
pub use python::decode_utf8_ignore;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary (for
/// cutting long lines without splitting a character).
pub fn cut_to_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_on_character_boundaries() {
        for (text, max, expected) in [
            ("abc", 5, "abc"),
            ("abc", 2, "ab"),
            ("aé", 2, "a"),
            ("aé", 3, "aé"),
            ("日本", 4, "日"),
            ("", 0, ""),
        ] {
            assert_eq!(super::cut_to_bytes(text, max), expected, "{text:?} {max}");
        }
    }
}
