//! Path globs for filtering files (`grep`, lexical search filters).
//!
//! Syntax: `*` (any characters but `/`), `**` (any number of directories), `?`, `[abc]`,
//! `[!abc]`, `{a,b}` (alternatives, not nested). A pattern without `/` matches the file name
//! anywhere in the tree (`*.py`, `test_*.py`), like `.gitignore`; with a `/` it matches the whole
//! repository-relative path (`django/db/**/*.py`; a leading `/` is ignored).

use regex::Regex;

/// A compiled glob.
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: String,
    regex: Regex,
    match_file_name: bool,
}

/// A glob that does not compile (unbalanced `[` or `{`).
#[derive(Debug, thiserror::Error)]
#[error("invalid glob {pattern:?}: {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub reason: String,
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let error = |reason: &str| GlobError {
            pattern: pattern.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = pattern.strip_prefix('/').unwrap_or(pattern);
        let match_file_name = !trimmed.contains('/');
        let mut regex = String::from("^");
        let chars: Vec<char> = trimmed.chars().collect();
        let mut i = 0;
        let mut in_braces = false;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    let at_segment_start = i == 0 || chars[i - 1] == '/';
                    let followed_by_slash = chars.get(i + 2) == Some(&'/');
                    if at_segment_start && followed_by_slash {
                        regex.push_str("(?:.*/)?");
                        i += 3;
                    } else {
                        regex.push_str(".*");
                        i += 2;
                    }
                    continue;
                }
                '*' => regex.push_str("[^/]*"),
                '?' => regex.push_str("[^/]"),
                '[' => {
                    let close = chars[i + 1..]
                        .iter()
                        .position(|&c| c == ']')
                        .ok_or_else(|| error("unclosed '['"))?;
                    let body: String = chars[i + 1..i + 1 + close].iter().collect();
                    let body = match body.strip_prefix('!') {
                        Some(rest) => format!("^{rest}"),
                        None => body,
                    };
                    regex.push('[');
                    regex.push_str(&body.replace('\\', "\\\\").replace('[', "\\["));
                    regex.push(']');
                    i += close + 2;
                    continue;
                }
                '{' if !in_braces => {
                    in_braces = true;
                    regex.push_str("(?:");
                }
                ',' if in_braces => regex.push('|'),
                '}' if in_braces => {
                    in_braces = false;
                    regex.push(')');
                }
                '{' => return Err(error("nested '{'")),
                other => regex.push_str(&regex::escape(&other.to_string())),
            }
            i += 1;
        }
        if in_braces {
            return Err(error("unclosed '{'"));
        }
        regex.push('$');
        let regex = Regex::new(&regex).map_err(|e| error(&e.to_string()))?;
        Ok(Glob {
            pattern: pattern.to_string(),
            regex,
            match_file_name,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether a repository-relative `/` path matches.
    pub fn is_match(&self, path: &str) -> bool {
        if self.match_file_name {
            self.regex.is_match(path.rsplit('/').next().unwrap_or(path))
        } else {
            self.regex.is_match(path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pattern: &str, matching: &[&str], not_matching: &[&str]) {
        let glob = Glob::new(pattern).unwrap();
        for path in matching {
            assert!(glob.is_match(path), "{pattern} should match {path}");
        }
        for path in not_matching {
            assert!(!glob.is_match(path), "{pattern} should not match {path}");
        }
    }

    #[test]
    fn glob_cases() {
        check("*.py", &["a.py", "x/y/b.py"], &["a.pyc", "a.py/x"]);
        check("test_*.py", &["tests/test_a.py"], &["tests/a_test.py"]);
        check(
            "django/db/**/*.py",
            &["django/db/a.py", "django/db/x/y/b.py"],
            &["django/a.py"],
        );
        check(
            "**/models.py",
            &["models.py", "a/b/models.py"],
            &["a/models.pyx"],
        );
        check("src/*.rs", &["src/a.rs"], &["src/x/a.rs"]);
        check("/src/**", &["src/a.rs", "src/x/a.rs"], &["lib/src/a.rs"]);
        check("*.{js,ts}", &["a.js", "b/c.ts"], &["a.rs"]);
        check("?.c", &["a.c"], &["ab.c"]);
        check("[ab]*.c", &["a1.c", "b.c"], &["c.c"]);
        check("[!ab]*.c", &["c.c"], &["a.c"]);
        check("a+b(c).txt", &["a+b(c).txt"], &["aab(c).txt"]);
    }

    #[test]
    fn bad_globs_are_errors() {
        for pattern in ["[abc", "{a,b", "{a,{b}}"] {
            assert!(Glob::new(pattern).is_err(), "{pattern}");
        }
    }
}
