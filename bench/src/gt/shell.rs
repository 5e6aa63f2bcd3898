//! A small parser for the shell command lines agents run: enough structure to tell which
//! programs read which files and where their output went.
//!
//! It splits a command line into pipelines (on `&&`, `||`, `;`, `&`, newlines, parentheses) and
//! pipelines into simple commands (on `|`, `|&`); it removes quoting, skips comments and
//! here-document bodies, separates redirections from arguments, drops leading `VAR=value`
//! assignments and marks words whose value depends on expansion (`$x`, `$(…)`, globs), because the
//! file such a word names cannot be known without running the shell.
//!
//! It does not evaluate anything: no variables, no globbing, no control flow (`if`/`for` bodies
//! are parsed as plain commands and keywords are dropped), no aliases or functions.

/// One word of a simple command after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// The word contains an unquoted expansion (`$`, backquote, `*`, `?`, `[`, `{`), so `text` is
    /// not necessarily its value.
    pub expands: bool,
}

/// Where a redirection sends or takes data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>>`, `>|` (file descriptor 1 unless given).
    Output,
    /// `&>`, `&>>`, `>&file`: both stdout and stderr.
    OutputAndError,
    /// `<`.
    Input,
    /// `<<`, `<<-`, `<<<`: data written inline.
    InlineInput,
    /// `n>&m`, `n<&m`: duplication, no file involved.
    Duplicate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub fd: Option<u32>,
    pub kind: RedirectKind,
    pub target: String,
}

/// A program invocation: its words (program first) and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The program name without directories (`/usr/bin/cat` → `cat`), if any.
    pub fn program(&self) -> Option<&str> {
        let first = self.words.first()?;
        Some(first.text.rsplit('/').next().unwrap_or(&first.text))
    }

    /// Whether the command's standard output goes somewhere other than the pipe or terminal.
    pub fn stdout_redirected(&self) -> bool {
        self.redirects.iter().any(|r| match r.kind {
            RedirectKind::Output => r.fd.unwrap_or(1) == 1,
            RedirectKind::OutputAndError => true,
            _ => false,
        })
    }
}

/// Commands joined by pipes; the last command's output is what the agent sees.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pipeline {
    pub commands: Vec<SimpleCommand>,
}

impl Pipeline {
    /// Whether the pipeline's final output reaches the observation (is not redirected away).
    pub fn output_visible(&self) -> bool {
        self.commands.last().is_some_and(|c| !c.stdout_redirected())
    }
}

/// Words that start or continue compound commands; they carry no program of their own.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
    "esac", "{", "}", "!", "time",
];

/// Parse a command line into pipelines, in order. Never fails: malformed input (an unclosed quote,
/// a missing here-document end) is read as far as it goes.
pub fn parse(input: &str) -> Vec<Pipeline> {
    let mut parser = Parser {
        chars: input.chars().collect(),
        pos: 0,
        pending_heredocs: Vec::new(),
    };
    parser.run()
}

enum Token {
    Word(Word),
    /// `|` or `|&`
    Pipe,
    /// `&&`, `||`, `;`, `&`, newline, `(`, `)`
    Separator,
    Redirect {
        fd: Option<u32>,
        kind: RedirectKind,
        heredoc: Option<HeredocStart>,
    },
}

struct HeredocStart {
    strip_tabs: bool,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Here-document delimiters whose bodies start after the next newline.
    pending_heredocs: Vec<(String, bool)>,
}

impl Parser {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn run(&mut self) -> Vec<Pipeline> {
        let mut pipelines = Vec::new();
        let mut pipeline = Pipeline::default();
        let mut command = SimpleCommand::default();
        let mut expect_redirect_target: Option<(Option<u32>, RedirectKind, Option<HeredocStart>)> =
            None;

        fn finish_command(pipeline: &mut Pipeline, command: &mut SimpleCommand) {
            // Drop leading keywords and `VAR=value` assignments; they are not the program.
            let cmd = std::mem::take(command);
            let mut words = cmd.words.into_iter().peekable();
            let mut kept = Vec::new();
            let mut leading = true;
            for w in words.by_ref() {
                if leading && (KEYWORDS.contains(&w.text.as_str()) || is_assignment(&w.text)) {
                    continue;
                }
                leading = false;
                kept.push(w);
            }
            if !kept.is_empty() || !cmd.redirects.is_empty() {
                pipeline.commands.push(SimpleCommand {
                    words: kept,
                    redirects: cmd.redirects,
                });
            }
        }

        while let Some(token) = self.next_token() {
            // A redirection takes the next word as its target; without one it is ignored and
            // the token handled normally.
            if let Some((fd, kind, heredoc)) = expect_redirect_target.take()
                && let Token::Word(word) = &token
            {
                if let Some(start) = heredoc {
                    // Quoting the delimiter only disables expansion in the body.
                    self.pending_heredocs
                        .push((word.text.clone(), start.strip_tabs));
                }
                command.redirects.push(Redirect {
                    fd,
                    kind,
                    target: word.text.clone(),
                });
                continue;
            }
            match token {
                Token::Word(word) => command.words.push(word),
                Token::Redirect { fd, kind, heredoc } => {
                    expect_redirect_target = Some((fd, kind, heredoc))
                }
                Token::Pipe => finish_command(&mut pipeline, &mut command),
                Token::Separator => {
                    finish_command(&mut pipeline, &mut command);
                    if !pipeline.commands.is_empty() {
                        pipelines.push(std::mem::take(&mut pipeline));
                    }
                }
            }
        }
        finish_command(&mut pipeline, &mut command);
        if !pipeline.commands.is_empty() {
            pipelines.push(pipeline);
        }
        pipelines
    }

    /// After a newline: skip the bodies of here-documents announced on the line just ended.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.pending_heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return;
                }
                let start = self.pos;
                while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.pos < self.chars.len() {
                    self.pos += 1; // the newline
                }
                let candidate = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if candidate == delimiter {
                    break;
                }
            }
        }
    }

    fn next_token(&mut self) -> Option<Token> {
        loop {
            let c = self.peek(0)?;
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.skip_heredoc_bodies();
                    return Some(Token::Separator);
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ';' | '(' | ')' => {
                    self.pos += 1;
                    return Some(Token::Separator);
                }
                '&' => {
                    if self.peek(1) == Some('>') {
                        self.pos += 2;
                        if self.peek(0) == Some('>') {
                            self.pos += 1;
                        }
                        return Some(Token::Redirect {
                            fd: None,
                            kind: RedirectKind::OutputAndError,
                            heredoc: None,
                        });
                    }
                    self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    return Some(Token::Separator);
                }
                '|' => {
                    return Some(match self.peek(1) {
                        Some('|') => {
                            self.pos += 2;
                            Token::Separator
                        }
                        Some('&') => {
                            self.pos += 2;
                            Token::Pipe
                        }
                        _ => {
                            self.pos += 1;
                            Token::Pipe
                        }
                    });
                }
                '<' | '>' => return Some(self.redirect(None)),
                c if c.is_ascii_digit() => {
                    // `2>` is a redirection of fd 2; `2x` is a word.
                    let mut end = self.pos;
                    while self.chars.get(end).is_some_and(|c| c.is_ascii_digit()) {
                        end += 1;
                    }
                    if matches!(self.chars.get(end), Some('<' | '>')) {
                        let fd: String = self.chars[self.pos..end].iter().collect();
                        self.pos = end;
                        return Some(self.redirect(fd.parse().ok()));
                    }
                    return Some(Token::Word(self.word()));
                }
                _ => return Some(Token::Word(self.word())),
            }
        }
    }

    fn redirect(&mut self, fd: Option<u32>) -> Token {
        let c = self.chars[self.pos];
        self.pos += 1;
        if c == '<' {
            if self.peek(0) == Some('<') {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    self.pos += 1;
                    return Token::Redirect {
                        fd,
                        kind: RedirectKind::InlineInput,
                        heredoc: None,
                    };
                }
                let strip_tabs = self.peek(0) == Some('-');
                if strip_tabs {
                    self.pos += 1;
                }
                return Token::Redirect {
                    fd,
                    kind: RedirectKind::InlineInput,
                    heredoc: Some(HeredocStart { strip_tabs }),
                };
            }
            if self.peek(0) == Some('&') {
                self.pos += 1;
                return Token::Redirect {
                    fd,
                    kind: RedirectKind::Duplicate,
                    heredoc: None,
                };
            }
            return Token::Redirect {
                fd,
                kind: RedirectKind::Input,
                heredoc: None,
            };
        }
        // '>'
        if matches!(self.peek(0), Some('>' | '|')) {
            self.pos += 1;
        }
        if self.peek(0) == Some('&') {
            self.pos += 1;
            // `>&2` duplicates a descriptor; `>&file` sends both streams to a file.
            let digits = self.peek(0).is_some_and(|c| c.is_ascii_digit() || c == '-');
            return Token::Redirect {
                fd,
                kind: if digits {
                    RedirectKind::Duplicate
                } else {
                    RedirectKind::OutputAndError
                },
                heredoc: None,
            };
        }
        Token::Redirect {
            fd,
            kind: RedirectKind::Output,
            heredoc: None,
        }
    }

    /// Read one word, removing quotes and noting expansions.
    fn word(&mut self) -> Word {
        let mut text = String::new();
        let mut expands = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => text.push(next),
                        None => {}
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        text.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        match c {
                            '"' => {
                                self.pos += 1;
                                break;
                            }
                            '\\' if matches!(self.peek(1), Some('"' | '\\' | '$' | '`' | '\n')) => {
                                if self.peek(1) != Some('\n') {
                                    text.push(self.chars[self.pos + 1]);
                                }
                                self.pos += 2;
                            }
                            '$' | '`' => {
                                expands = true;
                                self.expansion(&mut text);
                            }
                            _ => {
                                text.push(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('\'') => {
                    // ANSI-C quoting: treat as single quotes with escapes kept verbatim.
                    self.pos += 2;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        match c {
                            '\'' => break,
                            '\\' => {
                                if let Some(n) = self.peek(0) {
                                    text.push('\\');
                                    text.push(n);
                                    self.pos += 1;
                                }
                            }
                            _ => text.push(c),
                        }
                    }
                }
                '$' | '`' => {
                    expands = true;
                    self.expansion(&mut text);
                }
                '*' | '?' | '[' | '{' => {
                    expands = true;
                    text.push(c);
                    self.pos += 1;
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        Word { text, expands }
    }

    /// Copy an expansion (`$x`, `${…}`, `$(…)`, `` `…` ``) verbatim into `text`, consuming nested
    /// parentheses and quotes so that operators inside it do not end the word.
    fn expansion(&mut self, text: &mut String) {
        let c = self.chars[self.pos];
        if c == '`' {
            text.push(c);
            self.pos += 1;
            while let Some(c) = self.peek(0) {
                text.push(c);
                self.pos += 1;
                if c == '\\' {
                    if let Some(n) = self.peek(0) {
                        text.push(n);
                        self.pos += 1;
                    }
                } else if c == '`' {
                    break;
                }
            }
            return;
        }
        // '$'
        text.push('$');
        self.pos += 1;
        let (open, close) = match self.peek(0) {
            Some('(') => ('(', ')'),
            Some('{') => ('{', '}'),
            _ => {
                while let Some(c) = self.peek(0) {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        text.push(c);
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                return;
            }
        };
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            text.push(c);
            self.pos += 1;
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '\'' || c == '"' => quote = Some(c),
                None if c == open => depth += 1,
                None if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                None => {}
            }
        }
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Render pipelines compactly: commands joined by ` | `, pipelines by ` ;; `, words by
    /// spaces, expanding words marked with `~`, redirections as `>target`.
    fn render(input: &str) -> String {
        parse(input)
            .iter()
            .map(|p| {
                p.commands
                    .iter()
                    .map(|c| {
                        let mut parts: Vec<String> = c
                            .words
                            .iter()
                            .map(|w| {
                                if w.expands {
                                    format!("~{}", w.text)
                                } else {
                                    w.text.clone()
                                }
                            })
                            .collect();
                        for r in &c.redirects {
                            let op = match r.kind {
                                RedirectKind::Output => ">",
                                RedirectKind::OutputAndError => "&>",
                                RedirectKind::Input => "<",
                                RedirectKind::InlineInput => "<<",
                                RedirectKind::Duplicate => ">&",
                            };
                            let fd = r.fd.map(|f| f.to_string()).unwrap_or_default();
                            parts.push(format!("{fd}{op}{}", r.target));
                        }
                        parts.join(" ")
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect::<Vec<_>>()
            .join(" ;; ")
    }

    fn check(input: &str, expected: &str) {
        assert_eq!(render(input), expected, "input: {input:?}");
    }

    #[test]
    fn separators_and_pipes() {
        check("cd /testbed && cat a.py", "cd /testbed ;; cat a.py");
        check("a || b; c & d", "a ;; b ;; c ;; d");
        check(
            "nl -ba f.py | sed -n '10,20p'",
            "nl -ba f.py | sed -n 10,20p",
        );
        check("cat f |& grep x", "cat f | grep x");
        check("ls\ncat x\n\n", "ls ;; cat x");
        check("(cd sub && cat y)", "cd sub ;; cat y");
    }

    #[test]
    fn quoting() {
        check(r#"grep -n "def foo(" 'a b.py'"#, "grep -n def foo( a b.py");
        check(r"cat a\ b.py", "cat a b.py");
        check(r#"echo "x \"y\" \$z""#, r#"echo x "y" $z"#);
        check("sed -n $'1,2p' f", r"sed -n 1,2p f");
        check("grep 'a;b|c' f", "grep a;b|c f");
    }

    #[test]
    fn expansions_are_marked() {
        check("cat $F", "cat ~$F");
        check("cat \"$(find . -name x.py)\"", "cat ~$(find . -name x.py)");
        check("cat src/*.py", "cat ~src/*.py");
        check(
            "grep -n x $(git ls-files | grep py)",
            "grep -n x ~$(git ls-files | grep py)",
        );
    }

    #[test]
    fn redirections() {
        check("cat a.py > /tmp/out", "cat a.py >/tmp/out");
        check(
            "python x.py 2>&1 | tail -n 5",
            "python x.py 2>&1 | tail -n 5",
        );
        check("grep x f 2>/dev/null", "grep x f 2>/dev/null");
        check("make &> log", "make &>log");
        check("sort < in.txt", "sort <in.txt");
        assert!(parse("cat a > b")[0].commands[0].stdout_redirected());
        assert!(!parse("cat a 2> b")[0].commands[0].stdout_redirected());
        assert!(!parse("cat a 2>&1")[0].commands[0].stdout_redirected());
    }

    #[test]
    fn heredoc_bodies_are_skipped() {
        check(
            "cat <<'EOF' > reproduce.py\nprint(open('a/b.py').read()) && x\nEOF\npython reproduce.py",
            "cat <<EOF >reproduce.py ;; python reproduce.py",
        );
        check(
            "cat <<-END > x\n\tcat a.py\n\tEND\ncat b.py",
            "cat <<END >x ;; cat b.py",
        );
        check("python - <<EOF\nimport x\nEOF", "python - <<EOF");
        check("grep x <<< 'a b'", "grep x <<a b");
    }

    #[test]
    fn assignments_keywords_comments() {
        check("FOO=1 BAR=2 python x.py", "python x.py");
        check(
            "for f in a.py b.py; do cat $f; done",
            "f in a.py b.py ;; cat ~$f",
        );
        check("# look first\ncat a.py # trailing", "cat a.py");
        check("if true; then cat a.py; fi", "true ;; cat a.py");
    }

    #[test]
    fn program_name() {
        let p = parse("/usr/bin/cat x");
        assert_eq!(p[0].commands[0].program(), Some("cat"));
    }
}
