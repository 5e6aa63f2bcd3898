//! Path globs: swex's one glob syntax, for every `path_glob` and `under` filter of every backend.
//!
//! Syntax: `*` (any characters but `/`), `**` (any number of directories when it is a whole
//! segment: `a/**/b` matches `a/b` and `a/x/y/b`; elsewhere any characters, `/` included), `?`
//! (one character but `/`), `[abc]`, `[a-z]`, `[!abc]` or `[^abc]` (one character of, or not of, a
//! set; a negated set also matches `/`), `{a,b}` (alternatives, not nested; each may hold the
//! other wildcards). `\` has no special meaning: paths use `/`. A pattern without `/` matches the
//! file name anywhere in the tree (`*.py`, `test_*.py`), like `.gitignore`; with a `/` it matches
//! the whole repository-relative path (`django/db/**/*.py`; a leading `/` only anchors).
//! [`escape`] makes any text a glob that matches just that text.
//!
//! Matching is a simulation of the pattern's automaton over the path: time linear in the path
//! times the pattern, whatever the wildcards (no backtracking blow-up).
//!
//! ```
//! use swex_text::Glob;
//! let glob = Glob::new("*.{py,pyi}").unwrap();
//! assert!(glob.is_match("pkg/mod.pyi"));
//! assert!(!glob.is_match("pkg/mod.pyc"));
//! ```

use std::fmt;

/// A compiled glob.
#[derive(Clone)]
pub struct Glob {
    pattern: String,
    program: Vec<Op>,
    match_file_name: bool,
    /// The paths (or names) the pattern matches, sorted, when it has no wildcard but one group of
    /// alternatives and one-character sets (an [`escape`]d path, a list of them in `{…}`):
    /// matched by lookup instead of by running the automaton on every path of a snapshot.
    literals: Option<Vec<String>>,
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Glob").field(&self.pattern).finish()
    }
}

/// A glob that does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    pub pattern: String,
    pub reason: &'static str,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid glob {:?}: {}", self.pattern, self.reason)
    }
}

impl std::error::Error for GlobError {}

/// One instruction of the pattern's automaton (a Thompson NFA as a program).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// This character.
    Char(char),
    /// Any character but `/` (`?`).
    AnyButSlash,
    /// A character of (or, negated, not of) a set of ranges (`[a-z_]`).
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    /// Continue at both targets (the first is tried first; order does not change the result).
    Split(usize, usize),
    /// Continue at the target.
    Jump(usize),
    /// Any run of characters but `/` (`*`): loops on itself.
    StarButSlash,
    /// Any run of characters (`**` inside a segment).
    Star,
    /// The whole path has been matched.
    Match,
}

impl Glob {
    /// Compiles `pattern`. Errors: empty pattern, unclosed `[` or `{`, nested `{`.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let error = |reason| GlobError {
            pattern: pattern.to_owned(),
            reason,
        };
        if pattern.is_empty() {
            return Err(error("empty pattern"));
        }
        let match_file_name = !pattern.contains('/');
        let body: Vec<char> = pattern
            .strip_prefix('/')
            .unwrap_or(pattern)
            .chars()
            .collect();
        let mut program = Vec::new();
        // Alternatives under construction: the `Split` of each `,` and the `Jump`s to the end.
        let mut group: Option<(usize, Vec<usize>)> = None;
        let mut i = 0;
        while i < body.len() {
            let c = body[i];
            match c {
                '*' if body.get(i + 1) == Some(&'*') => {
                    let at_segment_start = i == 0 || body[i - 1] == '/';
                    if at_segment_start && body.get(i + 2) == Some(&'/') {
                        // `**/`: nothing, or any run of characters ending with `/`.
                        let split = program.len();
                        program.push(Op::Split(split + 1, 0));
                        program.push(Op::Star);
                        program.push(Op::Char('/'));
                        program[split] = Op::Split(split + 1, program.len());
                        i += 3;
                    } else {
                        program.push(Op::Star);
                        i += 2;
                    }
                    continue;
                }
                '*' => program.push(Op::StarButSlash),
                '?' => program.push(Op::AnyButSlash),
                '[' => {
                    let close = body[i + 1..]
                        .iter()
                        .position(|&c| c == ']')
                        .ok_or_else(|| error("unclosed '['"))?;
                    program.push(class(&body[i + 1..i + 1 + close]));
                    i += close + 2;
                    continue;
                }
                '{' if group.is_some() => return Err(error("nested '{'")),
                '{' => {
                    group = Some((program.len(), Vec::new()));
                    program.push(Op::Split(program.len() + 1, 0));
                }
                ',' if group.is_some() => {
                    let (split, jumps) = group.as_mut().expect("in a group");
                    jumps.push(program.len());
                    program.push(Op::Jump(0));
                    // The previous alternative's split leads to this one's split when it fails.
                    let next = program.len();
                    program[*split] = match program[*split] {
                        Op::Split(first, _) => Op::Split(first, next),
                        _ => unreachable!("a group starts with a split"),
                    };
                    *split = next;
                    program.push(Op::Split(next + 1, 0));
                }
                '}' if group.is_some() => {
                    let (split, jumps) = group.take().expect("in a group");
                    let end = program.len();
                    // The last alternative has no further one: its split only goes on.
                    program[split] = match program[split] {
                        Op::Split(first, _) => Op::Split(first, first),
                        _ => unreachable!("a group starts with a split"),
                    };
                    for jump in jumps {
                        program[jump] = Op::Jump(end);
                    }
                }
                other => program.push(Op::Char(other)),
            }
            i += 1;
        }
        if group.is_some() {
            return Err(error("unclosed '{'"));
        }
        program.push(Op::Match);
        Ok(Glob {
            pattern: pattern.to_owned(),
            program,
            match_file_name,
            literals: literal_alternatives(&body),
        })
    }

    /// The glob matching the files under directory `dir` (`""`, `"."` or `"/"`: every file),
    /// whatever characters its name holds; a leading `./` and surrounding `/` are ignored.
    pub fn under(dir: &str) -> Result<Glob, GlobError> {
        let dir = dir.trim_matches('/');
        let dir = dir.strip_prefix("./").unwrap_or(dir);
        if dir.is_empty() || dir == "." {
            return Glob::new("/**");
        }
        Glob::new(&format!("/{}/**", escape(dir)))
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether a repository-relative `/` path matches.
    pub fn is_match(&self, path: &str) -> bool {
        let subject = if self.match_file_name {
            path.rsplit('/').next().unwrap_or(path)
        } else {
            path
        };
        match &self.literals {
            Some(literals) => literals
                .binary_search_by(|literal| literal.as_str().cmp(subject))
                .is_ok(),
            None => self.run(subject),
        }
    }

    /// Runs the automaton: the set of live instructions advances one character at a time.
    fn run(&self, text: &str) -> bool {
        let mut current = StateSet::new(self.program.len());
        let mut next = StateSet::new(self.program.len());
        self.add(&mut current, 0);
        for c in text.chars() {
            if current.is_empty() {
                return false;
            }
            next.clear();
            for index in 0..current.len() {
                let pc = current.get(index);
                let advance = match &self.program[pc] {
                    Op::Char(expected) => (*expected == c).then_some(pc + 1),
                    Op::AnyButSlash => (c != '/').then_some(pc + 1),
                    Op::Class { negated, ranges } => {
                        let inside = ranges.iter().any(|&(low, high)| low <= c && c <= high);
                        (inside != *negated).then_some(pc + 1)
                    }
                    // A star consumes the character and stays (its closure also went on).
                    Op::StarButSlash => (c != '/').then_some(pc),
                    Op::Star => Some(pc),
                    Op::Split(..) | Op::Jump(_) | Op::Match => None,
                };
                if let Some(target) = advance {
                    self.add(&mut next, target);
                }
            }
            std::mem::swap(&mut current, &mut next);
        }
        (0..current.len()).any(|index| self.program[current.get(index)] == Op::Match)
    }

    /// Adds `pc` and everything reachable from it without consuming a character.
    fn add(&self, set: &mut StateSet, pc: usize) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if !set.insert(pc) {
                continue;
            }
            match self.program[pc] {
                Op::Split(first, second) => {
                    stack.push(second);
                    stack.push(first);
                }
                Op::Jump(target) => stack.push(target),
                // A star may also match nothing.
                Op::StarButSlash | Op::Star => stack.push(pc + 1),
                _ => {}
            }
        }
    }
}

/// `[...]`'s body: `!` or `^` first negates; `x-y` is a range; `-` first or last is itself.
/// What a pattern body (a valid one: [`Glob::new`] checked it) matches when it is literal text
/// but for one `{…}` group of literal alternatives and one-character sets (`[*]`); `None` when it
/// has a wildcard, a wider set or two groups.
fn literal_alternatives(body: &[char]) -> Option<Vec<String>> {
    let (mut prefix, mut suffix) = (String::new(), String::new());
    let mut alternatives: Option<Vec<String>> = None;
    let mut in_group = false;
    let mut i = 0;
    while i < body.len() {
        let c = match body[i] {
            '*' | '?' => return None,
            '[' => {
                let close = i + 1 + body[i + 1..].iter().position(|&c| c == ']')?;
                let Op::Class {
                    negated: false,
                    ranges,
                } = class(&body[i + 1..close])
                else {
                    return None;
                };
                let [(low, high)] = ranges[..] else {
                    return None;
                };
                if low != high {
                    return None;
                }
                i = close + 1;
                push_literal(low, in_group, &mut alternatives, &mut prefix, &mut suffix);
                continue;
            }
            '{' if alternatives.is_some() => return None,
            '{' => {
                alternatives = Some(vec![String::new()]);
                in_group = true;
                i += 1;
                continue;
            }
            ',' if in_group => {
                alternatives.as_mut()?.push(String::new());
                i += 1;
                continue;
            }
            '}' if in_group => {
                in_group = false;
                i += 1;
                continue;
            }
            c => c,
        };
        push_literal(c, in_group, &mut alternatives, &mut prefix, &mut suffix);
        i += 1;
    }
    let mut literals: Vec<String> = match alternatives {
        None => vec![prefix],
        Some(alternatives) => alternatives
            .into_iter()
            .map(|alternative| format!("{prefix}{alternative}{suffix}"))
            .collect(),
    };
    literals.sort_unstable();
    literals.dedup();
    Some(literals)
}

/// Appends a literal character to the part of the pattern being read: the text before the group,
/// the group's current alternative, or the text after it.
fn push_literal(
    c: char,
    in_group: bool,
    alternatives: &mut Option<Vec<String>>,
    prefix: &mut String,
    suffix: &mut String,
) {
    match alternatives {
        Some(alternatives) if in_group => alternatives
            .last_mut()
            .expect("a group has an alternative")
            .push(c),
        Some(_) => suffix.push(c),
        None => prefix.push(c),
    }
}

fn class(body: &[char]) -> Op {
    let (negated, body) = match body.first() {
        Some('!' | '^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            ranges.push((body[i], body[i + 2]));
            i += 3;
        } else {
            ranges.push((body[i], body[i]));
            i += 1;
        }
    }
    Op::Class { negated, ranges }
}

/// A glob matching exactly `text`: every wildcard character is put in a one-character set.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // `]` outside a set is an ordinary character.
            '*' | '?' | '[' | '{' | '}' | ',' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// A set of instruction indices, in insertion order, with O(1) membership (sparse set).
struct StateSet {
    dense: Vec<usize>,
    sparse: Vec<usize>,
}

impl StateSet {
    fn new(capacity: usize) -> StateSet {
        StateSet {
            dense: Vec::with_capacity(capacity),
            sparse: vec![usize::MAX; capacity],
        }
    }

    fn insert(&mut self, pc: usize) -> bool {
        let slot = self.sparse[pc];
        if slot < self.dense.len() && self.dense[slot] == pc {
            return false;
        }
        self.sparse[pc] = self.dense.len();
        self.dense.push(pc);
        true
    }

    fn clear(&mut self) {
        self.dense.clear();
    }

    fn len(&self) -> usize {
        self.dense.len()
    }

    fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    fn get(&self, index: usize) -> usize {
        self.dense[index]
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
        // A literal pattern's lookup answers what its automaton answers.
        for path in matching.iter().chain(not_matching) {
            let subject = if glob.match_file_name {
                path.rsplit('/').next().unwrap_or(path)
            } else {
                path
            };
            assert_eq!(
                glob.is_match(path),
                glob.run(subject),
                "{pattern} on {path}"
            );
        }
    }

    #[test]
    fn literal_patterns_are_matched_by_lookup() {
        let literals = |pattern: &str| Glob::new(pattern).unwrap().literals;
        let paths = ["a/b.py", "setup.py", "x[1]/{y,z}.js"];
        let escaped: Vec<String> = paths.iter().map(|p| escape(p)).collect();
        let list = format!("/{{{}}}", escaped.join(","));
        let mut sorted = paths.map(String::from).to_vec();
        sorted.sort();
        assert_eq!(literals(&list), Some(sorted));
        check(
            &list,
            &paths,
            &["b.py", "pkg/setup.py", "a/b.pyc", "x1/y.js", "x[1]/y.js"],
        );
        check("x{,_test}.go", &["x.go", "pkg/x_test.go"], &["x_.go"]);
        assert_eq!(
            literals("x{,_test}.go"),
            Some(vec!["x.go".to_owned(), "x_test.go".to_owned()])
        );
        check("setup.py", &["setup.py", "pkg/setup.py"], &["setup.pyc"]);
        check("/[*]/a", &["*/a"], &["x/a"]);
        // Wildcards, wider sets and two groups run the automaton.
        for pattern in [
            "*.py",
            "a?",
            "a[bc]",
            "[!a]",
            "{a,b}{c,d}",
            "src/**",
            "[a-c]",
        ] {
            assert_eq!(literals(pattern), None, "{pattern}");
        }
    }

    #[test]
    fn glob_cases() {
        check("*.py", &["a.py", "x/y/b.py", ".py"], &["a.pyc", "a.py/x"]);
        check("test_*.py", &["tests/test_a.py"], &["tests/a_test.py"]);
        check(
            "django/db/**/*.py",
            &["django/db/a.py", "django/db/x/y/b.py"],
            &["django/a.py", "django/dbx/a.py"],
        );
        check(
            "**/models.py",
            &["models.py", "a/b/models.py"],
            &["a/models.pyx", "amodels.py"],
        );
        check("src/*.rs", &["src/a.rs"], &["src/x/a.rs", "lib/src/a.rs"]);
        check(
            "src/**",
            &["src/a.rs", "src/x/a.rs"],
            &["lib/src/a.rs", "src"],
        );
        check("/src/**", &["src/a.rs"], &["lib/src/a.rs"]);
        check("/setup.py", &["setup.py"], &["pkg/setup.py"]);
        check("src/a**b", &["src/ab", "src/a/x/b"], &["src/a/x/c", "ab"]);
        check("a**b", &["ab", "x/ayb"], &["a/x/b"]);
        check("*.{js,ts}", &["a.js", "b/c.ts"], &["a.rs", "a.jsts"]);
        check("*.{py,pyi}", &["m.py", "pkg/m.pyi"], &["m.pyc", "m.p"]);
        check(
            "{src,lib}/*.{c,h}",
            &["src/a.c", "lib/b.h"],
            &["bin/a.c", "src/a.o"],
        );
        check("x{,_test}.go", &["x.go", "x_test.go"], &["x_.go"]);
        check("{a*,b?}.c", &["a.c", "abc.c", "bx.c"], &["b.c", "c.c"]);
        check("?.c", &["a.c"], &["ab.c", ".c"]);
        check("[ab]*.c", &["a1.c", "b.c"], &["c.c"]);
        check("[!ab]*.c", &["c.c"], &["a.c"]);
        check("[^ab]*.c", &["c.c"], &["b.c"]);
        check("[a-c]x", &["bx"], &["dx"]);
        check("[-z]", &["-", "z"], &["a"]);
        check("a+b(c).txt", &["a+b(c).txt"], &["aab(c).txt"]);
        check("données/*.txt", &["données/é.txt"], &["donnees/e.txt"]);
    }

    #[test]
    fn bad_globs_are_errors() {
        for (pattern, reason) in [
            ("", "empty pattern"),
            ("[abc", "unclosed '['"),
            ("{a,b", "unclosed '{'"),
            ("{a,{b}}", "nested '{'"),
        ] {
            assert_eq!(Glob::new(pattern).unwrap_err().reason, reason, "{pattern}");
        }
    }

    #[test]
    fn escaped_directories_match_literally() {
        for dir in ["a[1]", "b{x,y}", "c*d?", "e]f", "plain/sub", "/lead/"] {
            let glob = Glob::under(dir).unwrap();
            let dir = dir.trim_matches('/');
            assert!(glob.is_match(&format!("{dir}/f.py")), "{dir}");
            assert!(glob.is_match(&format!("{dir}/x/f.py")), "{dir}");
            assert!(!glob.is_match(&format!("{dir}x/f.py")), "{dir}");
            assert!(!glob.is_match(&format!("other/{dir}/f.py")), "{dir}");
        }
        assert!(!Glob::under("a[1]").unwrap().is_match("a1/f.py"));
        assert!(Glob::under("").unwrap().is_match("any/f.py"));
        assert!(Glob::under(".").unwrap().is_match("any/f.py"));
        assert!(Glob::under("./src/").unwrap().is_match("src/f.py"));
    }

    /// Many stars against a long path that almost matches: linear, not exponential.
    #[test]
    fn no_backtracking_blow_up() {
        let glob = Glob::new(&format!("{}b", "*a".repeat(40))).unwrap();
        assert!(!glob.is_match(&"a".repeat(5000)));
        assert!(glob.is_match(&format!("{}b", "a".repeat(5000))));
    }
}
