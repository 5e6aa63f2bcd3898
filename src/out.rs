//! Terminal output that a closed pipe cannot turn into a panic.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`swex explorers | head -1`), and
//! Rust ignores `SIGPIPE`, so every command would end with a backtrace and exit 101. swex cannot
//! simply restore the default `SIGPIPE` either: the host writes to isolated workers through pipes,
//! and a worker that died must be an error for one instance, not a signal that kills the run. So
//! the CLI prints through these macros instead:
//!
//! - `outln!`/`out!` write to stdout; when its reader has gone (`EPIPE`) the process exits
//!   quietly with status 0, as ripgrep does: the reader asked for no more. Any other write error
//!   (a full disk behind a redirection) is reported on stderr with status 2, since output was lost.
//! - `errln!`/`err!` write to stderr and ignore every error: diagnostics that nobody can read
//!   must not stop the work (a `swex bench` whose progress reader went away still finishes and
//!   writes its results).
//!
//! Text that comes from data — file names of a checkout, paths in ground truth, explorer names,
//! plugin descriptions, error messages quoting them — goes through [`shown`] before it is
//! printed: a file named `a.py\n b.py:1-9` must not forge a second line of `swex explore`'s
//! output, and one named with `ESC [ 2 J` must not drive the terminal. JSON output needs none of
//! this (serde escapes).

use std::borrow::Cow;
use std::io::Write;

/// `text` with every control character (C0, DEL, C1) and every bidirectional-override character
/// written as an escape (`\n`, `\t`, `\r`, `\u{1b}`, `\u{202e}`), and `\` doubled when
/// anything was escaped, so that the result is one line that shows what the name really is.
pub fn shown(text: &str) -> Cow<'_, str> {
    let needs =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if needs(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Writes to stdout: see the module documentation.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    let result = std::io::stdout().lock().write_fmt(args);
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "error: writing to stdout: {e}");
        std::process::exit(2);
    }
}

/// Writes to stderr, ignoring errors: see the module documentation.
pub fn stderr(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `println!` to stdout, exiting quietly when the reader has gone.
macro_rules! outln {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` to stdout, exiting quietly when the reader has gone.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::out::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::out::stderr(format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn control_characters_are_escaped_and_nothing_else() {
        for (input, expected) in [
            ("app/models.py", "app/models.py"),
            ("dir\\file.py", "dir\\file.py"),
            ("café/ünï.py", "café/ünï.py"),
            ("a\nb.py:1-9", "a\\nb.py:1-9"),
            ("tab\there", "tab\\there"),
            ("cr\r", "cr\\r"),
            ("\u{1b}[2J.py", "\\u{1b}[2J.py"),
            ("del\u{7f}", "del\\u{7f}"),
            ("c1\u{9b}", "c1\\u{9b}"),
            ("rtl\u{202e}yp.exe", "rtl\\u{202e}yp.exe"),
            ("back\\slash\n", "back\\\\slash\\n"),
        ] {
            assert_eq!(shown(input), expected, "{input:?}");
        }
    }
}
