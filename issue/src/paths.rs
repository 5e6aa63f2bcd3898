//! File paths in issue text: which words are paths and the paths inside source-browser links.
//! (A path as written made a repository-relative hint is `swex_text::hints::normalize_path_hint`.)

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// File extensions that make a dotted word a file path.
pub const PATH_EXTENSIONS: &[&str] = &[
    "py", "pyi", "pyx", "pxd", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs",
    "java", "kt", "kts", "scala", "groovy", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "rb",
    "php", "cs", "swift", "m", "mm", "sh", "bash", "zsh", "pl", "pm", "lua", "r", "jl", "ex",
    "exs", "erl", "hs", "ml", "md", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml", "json",
    "xml", "html", "htm", "css", "scss", "less", "sql", "proto", "gradle", "lock", "mk", "cmake",
    "tpl", "j2", "jinja", "jinja2", "po", "pot", "vue", "svelte", "dart", "tf", "gemspec", "rake",
    "ipynb", "csv", "tsv", "conf",
];

/// Whether `word` ends with `.ext` of a known extension after a non-empty stem that is not a
/// directory (`a/.py` is not a file name).
pub fn has_path_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !stem.ends_with('/')
            && PATH_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// Whether a word of an issue is a file path: a known extension after a stem of two characters
/// or with a directory (`e.g.`-style prose is not), or, without an extension, two slashes between
/// name segments (`django/contrib/admin`; one slash is too often prose, `and/or`).
pub fn looks_like_path(word: &str) -> bool {
    if has_path_extension(word) {
        // `e.g.` style prose is excluded by requiring a real stem of two characters or a slash.
        let stem = word.rsplit_once('.').map(|(s, _)| s).unwrap_or(word);
        return stem.len() >= 2 || word.contains('/');
    }
    // Extension-less paths need two slashes between identifier segments (`django/contrib/admin`);
    // one slash is too often prose (`and/or`).
    word.matches('/').count() >= 2
        && word
            .split('/')
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)))
}

static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:https?|ftp|file)://[^\s)>\]`]+").expect("valid regex"));

/// `text` with each link (`https://…`, `ftp://…`, `file://…`) replaced by the file path inside it
/// when it is a source-browser link ([`url_file_path`]), else by a space: a link's host, user
/// names, hashes and image ids (`user-images.githubusercontent.com/…/a87e482fab0.png`) are not
/// words of the issue. A link ends at white space, `)`, `>`, `]` or a backtick (the end of the
/// code span it is written in). Borrowed when the text holds no link.
pub fn links_as_paths(text: &str) -> Cow<'_, str> {
    URL.replace_all(text, |caps: &regex::Captures| {
        match url_file_path(&caps[0]) {
            Some(path) => format!(" {path} "),
            None => " ".to_string(),
        }
    })
}

/// The file path inside a source-browser URL (`…/blob/<ref>/a/b.py#L10` gives `a/b.py`).
pub fn url_file_path(url: &str) -> Option<String> {
    let url = url.split(['#', '?']).next().unwrap_or(url);
    for marker in ["/blob/", "/tree/", "/src/", "/raw/"] {
        if let Some((_, rest)) = url.split_once(marker) {
            // Skip the ref (branch, tag or commit).
            let path = rest.split_once('/').map(|(_, p)| p)?;
            if has_path_extension(path) {
                return Some(path.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_words() {
        for (word, expected) in [
            ("django/db/models/query.py", true),
            ("models.py", true),
            ("a.py", false),
            ("x/a.py", true),
            ("e.g", false),
            ("django/contrib/admin", true),
            ("and/or", false),
            ("setup.cfg", true),
            ("v1.2", false),
        ] {
            assert_eq!(looks_like_path(word), expected, "{word}");
        }
        assert_eq!(
            url_file_path("https://github.com/o/r/blob/main/src/a.py#L10").as_deref(),
            Some("src/a.py")
        );
        assert_eq!(url_file_path("https://example.com/x"), None);
    }

    /// One row per case: the text, and the text with its links read.
    #[test]
    fn links_leave_only_their_file_paths() {
        for (text, expected) in [
            (
                "see https://github.com/o/r/blob/main/src/a.py#L10 here",
                "see  src/a.py  here",
            ),
            (
                "![image](https://user-images.githubusercontent.com/1/a87e482fab0.png)",
                "![image]( )",
            ),
            // A link in a code span ends at its closing backtick.
            ("run `curl http://example.com/x` now", "run `curl  ` now"),
            ("<https://docs.rs/regex>, ok", "< >, ok"),
            ("no link: example.com/x", "no link: example.com/x"),
        ] {
            assert_eq!(links_as_paths(text), expected, "{text}");
        }
    }
}
