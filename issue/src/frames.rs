//! Traceback frames and source locations: the one reader of stack traces for every consumer.
//!
//! [`extract_frames`] reads, in text order: Python `File "x.py", line N, in f`, and IPython's
//! `File ~/x.py:N, in f` and `~/x.py in f(…)` (its line from the `---> N` mark below); JavaScript
//! `at f (x.js:12:3)`; Rust `panicked at src/x.rs:12:5` and backtrace `at src/x.rs:12:5` lines
//! (the function from the line above); Java `at a.b.C.m(C.java:42)`; Go `/path/x.go:12 +0x1d`
//! with the function from the line above; and generic compiler/pytest locations
//! `path.ext:12[:5]` with a known source extension ([`crate::paths::has_path_extension`]).
//! A location already read as part of a richer frame is not reported again.
//!
//! Work is linear in the text (each syntax is one regex pass; overlaps are checked against the
//! two neighbouring spans only).

use crate::clues::{Frame, FrameStyle};
use crate::paths::has_path_extension;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// A pattern with a cheap test that every text it can match passes: text failing the test is
/// not searched, so the pattern is never compiled for it. Compiling these patterns (Unicode
/// classes) costs up to a millisecond each, once per process, and most issues hold no traceback
/// of most kinds; a one-shot `swex explore` pays it on every issue.
struct Gated {
    /// True for every text the pattern can match (false positives only cost the compile).
    may_match: fn(&str) -> bool,
    regex: LazyLock<Regex>,
}

impl Gated {
    fn captures_iter<'t>(&self, text: &'t str) -> impl Iterator<Item = regex::Captures<'t>> {
        (self.may_match)(text)
            .then(|| self.regex.captures_iter(text))
            .into_iter()
            .flatten()
    }
}

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid regex")
}

static PY_FRAME: Gated = Gated {
    may_match: |text| text.contains("File \""),
    regex: LazyLock::new(|| {
        compile(r#"File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<func>[^\s]+))?"#)
    }),
};
/// IPython 8 and later: `File ~/lib/python3.9/site-packages/xarray/core/dataset.py:4001, in
/// Dataset.merge(self, other)` (the path unquoted, the line after a colon).
static IPYTHON_FRAME: Gated = Gated {
    may_match: |text| text.contains("File ") && text.contains(".py:"),
    regex: LazyLock::new(|| {
        compile(r#"File (?P<path>[^\s",]+\.py):(?P<line>\d+)(?:, in (?P<func>[^\s(]+))?"#)
    }),
};
/// IPython before 8 and Jupyter front-ends: a line `~/lib/…/dataset.py in merge(self, other)` or
/// `[/usr/…/_validation.py](https://localhost:8080/#) in _aggregate(scores)` heads a frame whose
/// source lines follow, the failing one marked `---> 123` ([`IPYTHON_ARROW`]).
static IPYTHON_OLD_FRAME: Gated = Gated {
    may_match: may_head_old_ipython_frame,
    regex: LazyLock::new(|| {
        compile(
            r"(?m)^[ \t]*\[?(?P<path>[^\s\[\]()]+\.py)\]?(?:\([^)\n]*\))?[ \t]+in[ \t]+(?P<func>[\w.<>]+)(?:\(|[ \t]*$)",
        )
    }),
};
/// Whether some `.py` in `text` is followed as [`IPYTHON_OLD_FRAME`] needs: an optional `]`, an
/// optional `(…)` on the same line, then blanks and `in`. The `(…)` is looked for within
/// [`GATE_PARENTHESIS_BYTES`] only, so a long line of `.py(` that nothing closes is read in
/// linear time; a longer one lets the pattern run (false positives only cost its compile).
fn may_head_old_ipython_frame(text: &str) -> bool {
    text.match_indices(".py").any(|(at, _)| {
        let mut rest = &text[at + 3..];
        rest = rest.strip_prefix(']').unwrap_or(rest);
        if let Some(inner) = rest.strip_prefix('(') {
            let window = &inner.as_bytes()[..inner.len().min(GATE_PARENTHESIS_BYTES)];
            match window.iter().position(|&b| b == b')' || b == b'\n') {
                Some(end) if window[end] == b')' => rest = &inner[end + 1..],
                Some(_) => {}
                None => return true,
            }
        }
        let after_blanks = rest.trim_start_matches([' ', '\t']);
        after_blanks.len() < rest.len() && after_blanks.starts_with("in")
    })
}

/// How far the gate of [`IPYTHON_OLD_FRAME`] looks for the `)` after a path's `(`.
const GATE_PARENTHESIS_BYTES: usize = 256;

/// The marked line of an old IPython frame: `---> 123     x = f()`.
static IPYTHON_ARROW: LazyLock<Regex> = LazyLock::new(|| compile(r"(?m)^[ \t]*-+>[ \t]*(\d+)"));
static JAVA_FRAME: Gated = Gated {
    // Every JVM frame names its source file.
    may_match: |text| {
        [".java:", ".kt:", ".scala:", ".groovy:"]
            .iter()
            .any(|source| text.contains(source))
    },
    regex: LazyLock::new(|| {
        compile(
            r"(?m)^\s*at (?P<func>[\w$.<>/]+)\((?P<file>[\w$-]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)",
        )
    }),
};
static AT_FRAME: Gated = Gated {
    // `^\s*at `: some line is `at ` after white space (`\s` and `trim_start` agree on what that
    // is; a run of `\s` across line ends leaves a line that starts so).
    may_match: |text| {
        text.lines()
            .any(|line| line.trim_start().starts_with("at "))
    },
    // `at f (path:L:C)`, `at path:L:C`; Rust backtraces use the second form too.
    regex: LazyLock::new(|| {
        compile(
            r"(?m)^\s*at (?:(?P<func>[^\n(]+?) \()?(?P<path>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$",
        )
    }),
};
static RUST_PANIC: Gated = Gated {
    may_match: |text| text.contains("panicked at "),
    regex: LazyLock::new(|| {
        compile(r"panicked at (?:'[^'\n]*', )?(?P<path>[^\s:]+\.rs):(?P<line>\d+):(?P<col>\d+)")
    }),
};
static RUST_BACKTRACE_FUNC: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^\s*\d+:\s+(?P<func>\S+)\s*$"));
static GO_LOCATION: Gated = Gated {
    may_match: |text| text.contains(".go:"),
    regex: LazyLock::new(|| {
        compile(r"(?m)^\s*(?P<path>[^\s:]+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")
    }),
};
static GO_FUNC: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^(?P<func>[\w./*()\[\]-]+)\(.*\)\s*$"));
static LOCATION: Gated = Gated {
    // `:` then a digit (`\d` is Unicode decimal digits, all of them `char::is_numeric`).
    may_match: |text| {
        text.split(':')
            .skip(1)
            .any(|after| after.chars().next().is_some_and(char::is_numeric))
    },
    regex: LazyLock::new(|| {
        compile(
            r"(?P<path>(?:[A-Za-z]:)?[\w./\\-]*\w\.[A-Za-z0-9]+):(?P<line>\d+)(?::(?P<col>\d+))?",
        )
    }),
};

/// Whether `line` heads a Python frame of any style: `File "x.py", line N`, IPython's
/// `File ~/x.py:N, in f` or `~/x.py in f(…)`.
pub fn heads_python_frame(line: &str) -> bool {
    [&PY_FRAME, &IPYTHON_FRAME, &IPYTHON_OLD_FRAME]
        .iter()
        .any(|gated| gated.captures_iter(line).next().is_some())
}

/// IPython's frames, new and old style ([`IPYTHON_FRAME`], [`IPYTHON_OLD_FRAME`]), with their
/// spans in `text`, as Python frames. An old-style frame's line is the first `--->` mark between
/// its head and the next frame's.
fn ipython_frames(text: &str) -> Vec<(usize, usize, Frame)> {
    let function = |caps: &regex::Captures| {
        caps.name("func")
            .map(|f| f.as_str().to_string())
            .filter(|f| !f.starts_with('<'))
    };
    let mut frames = Vec::new();
    for caps in IPYTHON_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let frame = Frame {
            style: FrameStyle::Python,
            path: caps["path"].to_string(),
            line: parse_u32(caps.name("line")),
            column: None,
            function: function(&caps),
        };
        frames.push((m.start(), m.end(), frame));
    }
    let heads: Vec<regex::Captures> = IPYTHON_OLD_FRAME.captures_iter(text).collect();
    for (index, caps) in heads.iter().enumerate() {
        let m = caps.get(0).expect("group 0");
        let next = heads
            .get(index + 1)
            .map_or(text.len(), |c| c.get(0).expect("group 0").start());
        let line = IPYTHON_ARROW
            .captures(&text[m.end()..next])
            .and_then(|arrow| arrow[1].parse().ok());
        let frame = Frame {
            style: FrameStyle::Python,
            path: caps["path"].to_string(),
            line,
            column: None,
            function: function(caps),
        };
        frames.push((m.start(), m.end(), frame));
    }
    frames
}

/// JVM frames (`at a.b.C.m(C.java:42)`) with their spans in `text`; the path is the package's
/// folders and the file.
fn jvm_frames(text: &str) -> Vec<(usize, usize, Frame)> {
    let mut frames = Vec::new();
    for caps in JAVA_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let qualified = caps["func"]
            .rsplit('/')
            .next()
            .unwrap_or(&caps["func"])
            .to_string();
        // `a.b.C.m` (or `a.b.C$Inner.m`): the package is every segment before the class.
        let segments: Vec<&str> = qualified.split('.').collect();
        let file = &caps["file"];
        let (package, function) = if segments.len() >= 2 {
            let class = segments[segments.len() - 2].split('$').next().unwrap_or("");
            let method = segments[segments.len() - 1];
            (
                segments[..segments.len() - 2].join("/"),
                format!("{class}.{method}"),
            )
        } else {
            (String::new(), qualified.clone())
        };
        let path = if package.is_empty() {
            file.to_string()
        } else {
            format!("{package}/{file}")
        };
        frames.push((
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Java,
                path,
                line: parse_u32(caps.name("line")),
                column: None,
                function: Some(function),
            },
        ));
    }
    frames
}

/// The last non-empty line of `text` before byte `at` (where Rust and Go name a frame's
/// function, above its location).
fn line_before(text: &str, at: usize) -> &str {
    text[..at]
        .trim_end_matches(['\n', '\r'])
        .rsplit('\n')
        .next()
        .unwrap_or("")
}

fn parse_u32(m: Option<regex::Match>) -> Option<u32> {
    m.and_then(|m| m.as_str().parse().ok())
}

/// All traceback frames and source locations of `text`, in text order, without duplicates (a
/// location already read as part of a richer frame is not reported again as a bare location).
pub fn extract_frames(text: &str) -> Vec<Frame> {
    let mut found = Spans::default();
    let mut add = |start: usize, end: usize, frame: Frame| found.insert(start, end, frame);
    for caps in PY_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let function = caps
            .name("func")
            .map(|f| f.as_str().to_string())
            .filter(|f| !f.starts_with('<'));
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Python,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: None,
                function,
            },
        );
    }
    for (start, end, frame) in ipython_frames(text) {
        add(start, end, frame);
    }
    for (start, end, frame) in jvm_frames(text) {
        add(start, end, frame);
    }
    for caps in RUST_PANIC.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Rust,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function: None,
            },
        );
    }
    for caps in AT_FRAME.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let path = caps["path"].to_string();
        let (style, function) = if path.ends_with(".rs") {
            // Rust backtraces put the function on the line above: `  12: crate::module::f`.
            let previous = line_before(text, m.start());
            let function = RUST_BACKTRACE_FUNC
                .captures(previous)
                .map(|c| c["func"].trim_end_matches("::{{closure}}").to_string());
            (FrameStyle::Rust, function)
        } else {
            let function = caps.name("func").map(|f| clean_js_function(f.as_str()));
            (FrameStyle::JavaScript, function.filter(|f| !f.is_empty()))
        };
        add(
            m.start(),
            m.end(),
            Frame {
                style,
                path,
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function,
            },
        );
    }
    for caps in GO_LOCATION.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let previous = line_before(text, m.start());
        let function = GO_FUNC
            .captures(previous.trim())
            .map(|c| clean_go_function(&c["func"]));
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Go,
                path: caps["path"].to_string(),
                line: parse_u32(caps.name("line")),
                column: None,
                function,
            },
        );
    }
    for caps in LOCATION.captures_iter(text) {
        let m = caps.get(0).expect("group 0");
        let path = &caps["path"];
        if !has_path_extension(path) || path.contains("://") {
            continue;
        }
        add(
            m.start(),
            m.end(),
            Frame {
                style: FrameStyle::Location,
                path: path.to_string(),
                line: parse_u32(caps.name("line")),
                column: parse_u32(caps.name("col")),
                function: None,
            },
        );
    }
    found.into_frames()
}

/// Frames keyed by the text span they were read from, pairwise disjoint: a span overlapping one
/// already taken is dropped (the richer syntaxes are read first). Each insertion looks at the
/// two neighbours only, so reading a huge log stays linear-logarithmic.
#[derive(Default)]
struct Spans {
    by_start: BTreeMap<usize, (usize, Frame)>,
}

impl Spans {
    fn insert(&mut self, start: usize, end: usize, frame: Frame) {
        let before = self.by_start.range(..=start).next_back();
        if before.is_some_and(|(_, (before_end, _))| start < *before_end) {
            return;
        }
        let after = self.by_start.range(start..).next();
        if after.is_some_and(|(after_start, _)| *after_start < end) {
            return;
        }
        self.by_start.insert(start, (end, frame));
    }

    fn into_frames(self) -> Vec<Frame> {
        self.by_start
            .into_values()
            .map(|(_, frame)| frame)
            .collect()
    }
}

fn clean_js_function(raw: &str) -> String {
    let mut f = raw.trim();
    for prefix in ["async ", "new "] {
        if let Some(rest) = f.strip_prefix(prefix) {
            f = rest;
        }
    }
    // `Object.<anonymous>` and `[as alias]` decorations say nothing about the definition.
    let f = f.split(" [as ").next().unwrap_or(f);
    let f = f.trim_end_matches(".<anonymous>");
    if f == "<anonymous>" || f == "Object" {
        return String::new();
    }
    f.strip_prefix("Object.").unwrap_or(f).to_string()
}

/// `main.(*Server).Serve` gives `Server.Serve`; `net/http.HandlerFunc.ServeHTTP` gives
/// `HandlerFunc.ServeHTTP`; `main.main` gives `main`.
fn clean_go_function(raw: &str) -> String {
    let last_path_segment = raw.rsplit('/').next().unwrap_or(raw);
    // Drop the package name.
    let without_package = last_path_segment
        .split_once('.')
        .map(|(_, rest)| rest)
        .unwrap_or(last_path_segment);
    without_package.replace("(*", "").replace(['(', ')'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(
        style: FrameStyle,
        path: &str,
        line: Option<u32>,
        column: Option<u32>,
        function: Option<&str>,
    ) -> Frame {
        Frame {
            style,
            path: path.to_string(),
            line,
            column,
            function: function.map(str::to_string),
        }
    }

    fn check_frames(text: &str, expected: &[Frame]) {
        assert_eq!(extract_frames(text), expected, "frames of:\n{text}");
    }

    #[test]
    fn python_traceback() {
        check_frames(
            r#"Traceback (most recent call last):
  File "/usr/lib/python3.8/site-packages/django/db/models/query.py", line 1320, in _fetch_all
    self._result_cache = list(self._iterable_class(self))
  File "manage.py", line 22, in <module>
    main()
ValueError: boom"#,
            &[
                frame(
                    FrameStyle::Python,
                    "/usr/lib/python3.8/site-packages/django/db/models/query.py",
                    Some(1320),
                    None,
                    Some("_fetch_all"),
                ),
                frame(FrameStyle::Python, "manage.py", Some(22), None, None),
            ],
        );
    }

    /// IPython's two styles and Jupyter's linked one are Python frames; an old-style frame's line
    /// is its `--->` mark, the next frame's mark not taken for it.
    #[test]
    fn ipython_traceback() {
        check_frames(
            "File ~/miniconda3/lib/python3.9/site-packages/xarray/core/dataset.py:4001, in Dataset.merge(self, other)\n\
             Cell In[3], line 1\n",
            &[frame(
                FrameStyle::Python,
                "~/miniconda3/lib/python3.9/site-packages/xarray/core/dataset.py",
                Some(4001),
                None,
                Some("Dataset.merge"),
            )],
        );
        check_frames(
            "<ipython-input-2-9b7b> in <module>\n\
             ----> 1 est.fit(X)\n\
             \n\
             ~/sklearn/ensemble/_bagging.py in fit(self, X, y)\n    \
             243         return self\n\
             --> 244     def _fit(self):\n\
             \n\
             [/usr/local/lib/python3.9/dist-packages/sklearn/model_selection/_validation.py](https://localhost:8080/#) in _aggregate(scores)\n\
             ValueError: boom\n",
            &[
                frame(
                    FrameStyle::Python,
                    "~/sklearn/ensemble/_bagging.py",
                    Some(244),
                    None,
                    Some("fit"),
                ),
                frame(
                    FrameStyle::Python,
                    "/usr/local/lib/python3.9/dist-packages/sklearn/model_selection/_validation.py",
                    None,
                    None,
                    Some("_aggregate"),
                ),
            ],
        );
        // Prose that names a file and says `in` is no frame head unless a call or the line's end
        // follows.
        check_frames("see setup.py in the root for details\n", &[]);
    }

    #[test]
    fn javascript_stack() {
        check_frames(
            "TypeError: x is undefined\n    at parseConfig (src/config.js:12:3)\n    at Object.<anonymous> (/app/index.js:5:10)\n    at async Server.start (lib/server.ts:40:7)\n    at lib/util.js:1:2\n",
            &[
                frame(
                    FrameStyle::JavaScript,
                    "src/config.js",
                    Some(12),
                    Some(3),
                    Some("parseConfig"),
                ),
                frame(
                    FrameStyle::JavaScript,
                    "/app/index.js",
                    Some(5),
                    Some(10),
                    None,
                ),
                frame(
                    FrameStyle::JavaScript,
                    "lib/server.ts",
                    Some(40),
                    Some(7),
                    Some("Server.start"),
                ),
                frame(
                    FrameStyle::JavaScript,
                    "lib/util.js",
                    Some(1),
                    Some(2),
                    None,
                ),
            ],
        );
    }

    #[test]
    fn rust_panic_and_backtrace() {
        check_frames(
            "thread 'main' panicked at src/parser.rs:12:5:\nindex out of bounds\nstack backtrace:\n   3: mycrate::parser::parse\n             at ./src/parser.rs:12:5\n",
            &[
                frame(FrameStyle::Rust, "src/parser.rs", Some(12), Some(5), None),
                frame(
                    FrameStyle::Rust,
                    "./src/parser.rs",
                    Some(12),
                    Some(5),
                    Some("mycrate::parser::parse"),
                ),
            ],
        );
        check_frames(
            "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:4:37",
            &[frame(
                FrameStyle::Rust,
                "src/main.rs",
                Some(4),
                Some(37),
                None,
            )],
        );
    }

    #[test]
    fn java_stack() {
        check_frames(
            "java.lang.NullPointerException\n\tat com.example.app.Service.handle(Service.java:42)\n\tat com.example.app.Main$Inner.run(Main.java:7)\n\tat java.base/java.lang.Thread.run(Thread.java:829)\n",
            &[
                frame(
                    FrameStyle::Java,
                    "com/example/app/Service.java",
                    Some(42),
                    None,
                    Some("Service.handle"),
                ),
                frame(
                    FrameStyle::Java,
                    "com/example/app/Main.java",
                    Some(7),
                    None,
                    Some("Main.run"),
                ),
                frame(
                    FrameStyle::Java,
                    "java/lang/Thread.java",
                    Some(829),
                    None,
                    Some("Thread.run"),
                ),
            ],
        );
    }

    #[test]
    fn go_panic() {
        check_frames(
            "panic: runtime error\n\ngoroutine 1 [running]:\nmain.(*Server).Serve(0xc000010000)\n\t/home/u/app/server.go:27 +0x1d\nmain.main()\n\t/home/u/app/main.go:9 +0x25\n",
            &[
                frame(
                    FrameStyle::Go,
                    "/home/u/app/server.go",
                    Some(27),
                    None,
                    Some("Server.Serve"),
                ),
                frame(
                    FrameStyle::Go,
                    "/home/u/app/main.go",
                    Some(9),
                    None,
                    Some("main"),
                ),
            ],
        );
    }

    #[test]
    fn bare_locations() {
        check_frames(
            "tests/test_views.py:42: AssertionError\nsrc/lib.c:10:3: error: expected ';'\nversion 3.2:1 is fine",
            &[
                frame(
                    FrameStyle::Location,
                    "tests/test_views.py",
                    Some(42),
                    None,
                    None,
                ),
                frame(FrameStyle::Location, "src/lib.c", Some(10), Some(3), None),
            ],
        );
    }

    /// Overlapping candidates are resolved against the neighbours only, whatever the order in
    /// which the syntaxes find them.
    #[test]
    fn spans_keep_the_first_reader_of_each_stretch() {
        let mut spans = Spans::default();
        let f = |path: &str| frame(FrameStyle::Location, path, None, None, None);
        spans.insert(10, 20, f("a"));
        spans.insert(30, 40, f("b"));
        spans.insert(15, 25, f("overlaps a"));
        spans.insert(25, 35, f("overlaps b"));
        spans.insert(0, 10, f("before a"));
        spans.insert(20, 30, f("between"));
        spans.insert(5, 45, f("covers all"));
        spans.insert(40, 41, f("after b"));
        let paths: Vec<String> = spans.into_frames().into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["before a", "a", "between", "b", "after b"]);
    }

    /// A gate never hides a match: every text a pattern matches passes its gate (edge cases of
    /// white space, line ends and Unicode digits included), and prose without frames passes
    /// none, so their patterns are not compiled for it.
    #[test]
    fn gates_pass_every_text_their_pattern_matches() {
        let gated: [(&str, &Gated); 8] = [
            ("python", &PY_FRAME),
            ("ipython", &IPYTHON_FRAME),
            ("old ipython", &IPYTHON_OLD_FRAME),
            ("jvm", &JAVA_FRAME),
            ("at", &AT_FRAME),
            ("rust panic", &RUST_PANIC),
            ("go", &GO_LOCATION),
            ("location", &LOCATION),
        ];
        let texts = [
            r#"  File "a/b.py", line 3, in f"#,
            "File ~/lib/x/core.py:40, in Dataset.merge(self)",
            "~/lib/x/core.py in merge(self, other)",
            "~/lib/x/core.py\t in merge",
            "[/usr/x/_validation.py](https://localhost:8080/#) in agg(s)",
            "/usr/x/v.py] \tin f(",
            "a.py(3)  in f(",
            "\tat org.x.Y.run(Y.java:12)",
            "Exception\n\tat com.a.B$C.m(B.kt:7)",
            "    at f (src/a.js:1:2)",
            "x\r\n  \r\n\u{2003}at src/main.rs:4:9",
            "\n\n\tat f (a.js:1:2)\r",
            "thread 'main' panicked at 'boom', src/lib.rs:10:5",
            "thread 'main' panicked at src/lib.rs:10:5:",
            "main.main()\n\t/home/u/app/main.go:12 +0x1d",
            "src/x.c:12:5: error",
            "tests/test_x.py:\u{663}\u{664}: AssertionError",
            "C:\\proj\\a.cpp:9",
        ];
        for text in texts {
            for (name, gate) in &gated {
                assert!(
                    !gate.regex.is_match(text) || (gate.may_match)(text),
                    "the {name} gate hides a match in {text:?}"
                );
            }
        }
        // Each text above is matched by some pattern (the check is not vacuous).
        for text in texts {
            assert!(
                gated.iter().any(|(_, gate)| gate.regex.is_match(text)),
                "no pattern matches {text:?}"
            );
        }
        let prose =
            "The plot is wrong at times when the axis is shared.\nSee the docs: 3 examples.";
        for (name, gate) in &gated {
            assert!(
                !(gate.may_match)(prose),
                "the {name} gate passes plain prose"
            );
        }
    }
}
