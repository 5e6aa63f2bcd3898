//! No function of the workspace's own code is longer than [`MAX_LINES`] lines: a longer one is a
//! chapter that should read as the list of its steps, each a function whose name says what it
//! does. Tests are exempt (`tests/` folders, `#[cfg(test)]` modules and functions): a data-driven
//! test may well be one long table. Data tables belong in `const`s and `static`s, which are not
//! functions.
//!
//! A function's length is from the line of its `fn` to the line of its closing brace. The scan is
//! a small Rust lexer (comments, strings, raw strings, byte and char literals, lifetimes), enough
//! to match braces without a parser; `the_scanner_*` tests below hold it to the cases that matter.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 150;

/// Folders never scanned: build output, fixtures and tests.
const SKIPPED_DIRS: &[&str] = &["target", "tests", "fixtures", ".git", "node_modules"];

#[test]
fn no_function_outside_tests_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(root, &mut files);
    assert!(
        files.len() > 50,
        "the scan found only {} files",
        files.len()
    );
    let mut long = Vec::new();
    let test_files = test_module_files(&files);
    for file in files.iter().filter(|f| !test_files.contains(f)) {
        let source = std::fs::read_to_string(file).unwrap();
        for function in functions(&source) {
            if function.lines > MAX_LINES {
                let relative = file.strip_prefix(root).unwrap().display();
                long.push(format!(
                    "{relative}:{} fn {} ({} lines)",
                    function.line, function.name, function.lines
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

/// Every `.rs` file under `dir`, outside [`SKIPPED_DIRS`].
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            let name = entry.file_name();
            if !SKIPPED_DIRS.iter().any(|skip| name == *skip) {
                rust_files(&path, out);
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Files of `#[cfg(test)] mod name;` declarations: `name.rs` or `name/mod.rs` next to the
/// declaring file (its folder, for `mod.rs`, `lib.rs` and `main.rs`; else the folder named
/// after it).
fn test_module_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(file).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy();
        let dir = file.parent().unwrap();
        let dir = if ["mod", "lib", "main"].contains(&stem.as_ref()) {
            dir.to_path_buf()
        } else {
            dir.join(stem.as_ref())
        };
        for name in scan(&source).test_module_declarations {
            found.push(dir.join(format!("{name}.rs")));
            found.push(dir.join(&name).join("mod.rs"));
        }
    }
    found
}

/// One function of a file.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    /// The line of its `fn`, from 1.
    line: usize,
    lines: usize,
}

fn functions(source: &str) -> Vec<Function> {
    scan(source).functions
}

#[derive(Default)]
struct Scan {
    functions: Vec<Function>,
    /// `#[cfg(test)] mod name;`: a test module in a file of its own.
    test_module_declarations: Vec<String>,
}

/// A token that matters for brace matching: an identifier or keyword, or one punctuation
/// character (kept with its line).
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Punct(char),
}

/// Functions with a body outside `#[cfg(test)]` items, and the test modules declared in files of
/// their own.
fn scan(source: &str) -> Scan {
    let tokens = tokenize(source);
    let mut scan = Scan::default();
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens, i) {
            i = skip_test_item(&tokens, i + 7, &mut scan);
            continue;
        }
        if let (Token::Ident(fn_word), Some((Token::Ident(name), _))) =
            (&tokens[i].0, tokens.get(i + 1))
            && fn_word == "fn"
            && let Some(open) = body_start(&tokens, i + 2)
        {
            let close = matching_brace(&tokens, open);
            scan.functions.push(Function {
                name: name.clone(),
                line: tokens[i].1,
                lines: tokens[close].1 - tokens[i].1 + 1,
            });
        }
        i += 1;
    }
    scan
}

/// Whether `#[cfg(test)]` starts at `i`.
fn is_cfg_test(tokens: &[(Token, usize)], i: usize) -> bool {
    let expected = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.len() >= i + expected.len()
        && tokens[i..i + expected.len()]
            .iter()
            .map(|(token, _)| token)
            .eq(expected.iter())
}

/// Skips the item after a `#[cfg(test)]` (from `i`): its block, if it has one before a `;`.
/// Records `mod name;`. Returns where scanning goes on.
fn skip_test_item(tokens: &[(Token, usize)], mut i: usize, scan: &mut Scan) -> usize {
    let mut depth = 0i32;
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Punct('(' | '[') => depth += 1,
            Token::Punct(')' | ']') => depth -= 1,
            Token::Punct('{') if depth == 0 => return matching_brace(tokens, i) + 1,
            Token::Punct(';') if depth == 0 => {
                if let [(Token::Ident(word), _), (Token::Ident(name), _)] = &tokens[i - 2..i]
                    && word == "mod"
                {
                    scan.test_module_declarations.push(name.clone());
                }
                return i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The `{` that opens the body of a function whose signature starts at `i`, or `None` for a
/// declaration without a body (`fn f();` in a trait or `extern` block).
fn body_start(tokens: &[(Token, usize)], mut i: usize) -> Option<usize> {
    let mut depth = 0i32;
    while i < tokens.len() {
        match tokens[i].0 {
            Token::Punct('(' | '[') => depth += 1,
            Token::Punct(')' | ']') => depth -= 1,
            Token::Punct(';') if depth == 0 => return None,
            Token::Punct('{') if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the `}` closing the `{` at `open` (the last token when unbalanced).
fn matching_brace(tokens: &[(Token, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, (token, _)) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    tokens.len() - 1
}

/// Identifiers and punctuation with their lines; whitespace, comments, string, byte, char and
/// number literals and lifetimes' quotes dropped. Tokens are found by byte position, turned into
/// lines at the end (literals and comments may span lines).
fn tokenize(source: &str) -> Vec<(Token, usize)> {
    let bytes = source.as_bytes();
    let mut tokens: Vec<(Token, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let rest = &bytes[i..];
        let after_ident = i > 0 && is_ident_byte(bytes[i - 1]);
        let len = if c.is_ascii_whitespace() {
            1
        } else if rest.starts_with(b"//") {
            rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            block_comment_len(rest)
        } else if let Some(len) = (!after_ident).then(|| raw_string_len(rest)).flatten() {
            len
        } else if c == b'"' || (!after_ident && prefixed_quote(rest, b'"')) {
            quoted_len(rest, b'"')
        } else if c == b'\'' || (!after_ident && prefixed_quote(rest, b'\'')) {
            char_literal_len(rest)
        } else if is_ident_byte(c) {
            let len = rest.iter().take_while(|&&b| is_ident_byte(b)).count();
            if !c.is_ascii_digit() {
                tokens.push((Token::Ident(source[i..i + len].to_owned()), i));
            }
            len
        } else {
            let ch = source[i..].chars().next().unwrap();
            tokens.push((Token::Punct(ch), i));
            ch.len_utf8()
        };
        i += len;
    }
    let mut line = 1;
    let mut position = 0;
    for (_, at) in &mut tokens {
        line += bytes[position..*at].iter().filter(|&&b| b == b'\n').count();
        position = *at;
        *at = line;
    }
    tokens
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// `b"`, `c"`, `b'`: a literal prefix right before the quote.
fn prefixed_quote(rest: &[u8], quote: u8) -> bool {
    matches!(rest, [b'b' | b'c', q, ..] if *q == quote)
}

/// `/* … */`, nested.
fn block_comment_len(rest: &[u8]) -> usize {
    let mut depth = 0;
    let mut i = 0;
    while i < rest.len() {
        if rest[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if rest[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    rest.len()
}

/// `r"…"`, `r#"…"#`, `br##"…"##`, `cr"…"`: its length, if one starts here.
fn raw_string_len(rest: &[u8]) -> Option<usize> {
    let prefix = match rest {
        [b'r', ..] => 1,
        [b'b' | b'c', b'r', ..] => 2,
        _ => return None,
    };
    let hashes = rest[prefix..].iter().take_while(|&&b| b == b'#').count();
    if rest.get(prefix + hashes) != Some(&b'"') {
        return None;
    }
    let body = prefix + hashes + 1;
    let mut closing = vec![b'"'];
    closing.extend(std::iter::repeat_n(b'#', hashes));
    let end = rest[body..]
        .windows(closing.len())
        .position(|w| w == closing.as_slice())
        .map_or(rest.len(), |at| body + at + closing.len());
    Some(end)
}

/// A quoted literal with backslash escapes (after an optional one-letter prefix).
fn quoted_len(rest: &[u8], quote: u8) -> usize {
    let start = rest.iter().position(|&b| b == quote).unwrap() + 1;
    let mut i = start;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    rest.len()
}

/// A char or byte literal (`'a'`, `'\n'`, `'\u{1F600}'`, `b'"'`), or a lifetime or label
/// (`'a`, `'static`), which is only its quote.
fn char_literal_len(rest: &[u8]) -> usize {
    let start = rest.iter().position(|&b| b == b'\'').unwrap() + 1;
    let body = &rest[start..];
    let closes_at = match body {
        [b'\\', ..] => body
            .iter()
            .skip(2)
            .position(|&b| b == b'\'')
            .map(|at| at + 2),
        _ => {
            // One character, possibly several bytes of UTF-8.
            let width = match body.first() {
                Some(&b) if b >= 0xF0 => 4,
                Some(&b) if b >= 0xE0 => 3,
                Some(&b) if b >= 0xC0 => 2,
                _ => 1,
            };
            (body.get(width) == Some(&b'\'')).then_some(width)
        }
    };
    match closes_at {
        Some(at) => start + at + 1,
        None => start, // a lifetime: the identifier after it is scanned as usual
    }
}

#[test]
fn the_scanner_skips_braces_in_literals_and_comments_and_test_items() {
    let source = r####"
fn short() {
    let s = "}}}"; let c = '}'; let b = b'{'; let r = r#"{ "}" "#;
    // }
    /* } /* nested } */ } */
    let l: &'static str = "\"{";
    let escaped = '\'';
}
fn declared();
#[cfg(test)]
mod tests {
    fn hidden() {}
}
#[cfg(test)]
mod elsewhere;
fn generic<T: Fn() -> u32>(f: T) -> [u8; 2] where T: Clone {
    let _ = |x: u8| { x };
    [0, 1]
}
"####;
    let scan = scan(source);
    assert_eq!(
        scan.functions,
        [
            Function {
                name: "short".into(),
                line: 2,
                lines: 7
            },
            Function {
                name: "generic".into(),
                line: 16,
                lines: 4
            },
        ]
    );
    assert_eq!(scan.test_module_declarations, ["elsewhere"]);
}

#[test]
fn the_scanner_measures_a_long_function() {
    let body = "    let x = 1;\n".repeat(MAX_LINES);
    let source = format!("fn long() {{\n{body}}}\n");
    assert_eq!(
        functions(&source),
        [Function {
            name: "long".into(),
            line: 1,
            lines: MAX_LINES + 2
        }]
    );
}
