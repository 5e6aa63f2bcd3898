//! Terminal output that a closed pipe cannot turn into a panic.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`swex explorers | head -1`), and
//! Rust ignores `SIGPIPE`, so every command would end with a backtrace and exit 101. swex cannot
//! simply restore the default `SIGPIPE` either: the host writes to isolated workers through pipes,
//! and a worker that died must be an error for one instance, not a signal that kills the run. So
//! the CLI prints through these macros instead:
//!
//! - [`outln!`]/[`out!`] write to stdout; when its reader has gone (`EPIPE`) the process exits
//!   quietly with status 0, as ripgrep does: the reader asked for no more. Any other write error
//!   (a full disk behind a redirection) is reported on stderr with status 2, since output was lost.
//! - [`errln!`]/[`err!`] write to stderr and ignore every error: diagnostics that nobody can read
//!   must not stop the work (a `swex bench` whose progress reader went away still finishes and
//!   writes its results).

use std::io::Write;

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
