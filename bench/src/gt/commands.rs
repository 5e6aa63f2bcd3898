//! What the file-reading programs agents use do to a stream of lines, modelled on their command
//! lines: `cat`, `nl`, `less`, `more`, `head`, `tail`, `sed`, `grep`/`egrep`/`fgrep`/`rg`/
//! `git grep`, and the line-preserving filters that may follow them in a pipeline.
//!
//! A pipeline is evaluated into a [`Stream`]: exactly which file lines its output holds when the
//! command line decides it (`sed -n '10,20p' f`, `nl -ba f | head -n 5`), or which lines it
//! *may* hold plus how the output numbers them when only the output decides it
//! (`nl -ba f | grep -A3 foo`, `grep -n foo f`). Reading the observation and resolving paths
//! belong to [`super::reads`]; this module only parses options and composes line selections.

use super::intervals::{Interval, LineSet};
use super::shell::{SimpleCommand, Word};

/// How the lines of a stream are numbered in the output text, and how a number maps back to a
/// file line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    pub style: PrefixStyle,
    /// Stream position (1-based) → file line, when the numbered stream was a known sequence.
    pub map: Option<Vec<Interval>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixStyle {
    /// `nl`, `cat -n`: optional spaces, the number, then `sep` (a tab by default).
    Counter { sep: String },
    /// `grep -n` on one input: the number then `:` (match) or `-` (context).
    GrepNumber,
}

/// The lines a pipeline stage outputs, as far as its command line tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stream {
    /// Exactly the lines of `seq`, in order. `repeats`: some lines are printed more than once
    /// (`sed -n '1,5p;3,8p'`), so positions no longer match `seq` one to one.
    Lines {
        seq: Vec<Interval>,
        repeats: bool,
        prefixes: Vec<Prefix>,
    },
    /// Some of the lines of `seq`, order kept; which ones only the output tells, through a
    /// `prefixes` entry with a map.
    Subset {
        seq: Vec<Interval>,
        prefixes: Vec<Prefix>,
    },
    /// Lines of several files, each output line starting with its path
    /// (`path:12:text`, or `path:text` when not `numbered`).
    Tagged { numbered: bool },
    /// Output lines cannot be traced back to file lines.
    Opaque(String),
}

/// The file operands a source command reads, with what it does to each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub files: Vec<Word>,
    pub kind: SourceKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// A program that prints (part of) a file's content (`cat`, `nl`, `head`, `tail`, `sed`,
    /// `less`, `more`): the selection it makes and the numbering it adds.
    Content(Selector),
    /// A search (`grep`, `rg`): the options that decide its output format.
    Search(SearchOptions),
}

/// A content program's selection, evaluated once the file's (or stream's) line count is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Every line, numbered by `prefix` when the program numbers lines (`nl -ba`, `cat -n`).
    Whole { prefix: Option<PrefixStyle> },
    /// `head -n N`
    First(u64),
    /// `head -n -N`
    AllButLast(u64),
    /// `tail -n N`
    Last(u64),
    /// `tail -n +N`
    From(u64),
    /// `sed [-n] SCRIPT`
    Sed(SedScript),
    /// The command prints something of the file, but what cannot be told (`sed -n '/re/p'`,
    /// `head -c 100`).
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    pub numbered: bool,
    /// Output lines start with the file's path.
    pub with_filename: bool,
    /// No lines are printed (`-l`, `-L`, `-c`, `-q`).
    pub no_lines: bool,
    /// Only part of each line is printed (`-o`), so content prefixes are lost.
    pub only_matching: bool,
    pub recursive: bool,
}

/// What a command does in the middle of a pipeline, to the stream it receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Passes lines through, maybe changing their text but keeping prefixes (`cat`, `cat -A`,
    /// `less`, `tee`).
    Identity,
    /// Numbers its input lines (`nl -ba`, `cat -n`).
    Number(PrefixStyle),
    /// Keeps lines by position, like a content selector applied to the stream.
    Position(Selector),
    /// Keeps some lines by content (`grep`), numbering them by position when `numbered`.
    Search {
        numbered: bool,
        no_lines: bool,
        only_matching: bool,
    },
    /// Keeps or reorders lines without changing them (`sort`, `uniq`, `tac`).
    Reorder,
    /// Output no longer traceable (`awk`, `cut`, `wc`, `python`, …).
    Opaque(String),
}

/// Options of a program: which short options take an argument, which long ones do.
struct OptionSpec {
    short_with_arg: &'static str,
    long_with_arg: &'static [&'static str],
    /// `-5` means a count (head/tail lines, grep context).
    numeric_flag: bool,
}

/// A parsed option: its name (`n`, `line-number`, `#` for `-5`) and argument.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opt {
    name: String,
    value: Option<String>,
}

/// Split `words` (program excluded) into options and operands, getopt-style.
fn getopt(words: &[Word], spec: &OptionSpec) -> (Vec<Opt>, Vec<Word>) {
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < words.len() {
        let word = &words[i];
        let text = word.text.as_str();
        i += 1;
        if only_operands || text == "-" || !text.starts_with('-') || text.len() == 1 {
            operands.push(word.clone());
            continue;
        }
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => options.push(Opt {
                    name: name.to_string(),
                    value: Some(value.to_string()),
                }),
                None if spec.long_with_arg.contains(&long) => {
                    options.push(Opt {
                        name: long.to_string(),
                        value: words.get(i).map(|w| w.text.clone()),
                    });
                    i += 1;
                }
                None => options.push(Opt {
                    name: long.to_string(),
                    value: None,
                }),
            }
            continue;
        }
        let cluster: Vec<char> = text[1..].chars().collect();
        let mut j = 0;
        while j < cluster.len() {
            let c = cluster[j];
            if spec.numeric_flag && c.is_ascii_digit() {
                let digits: String = cluster[j..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                j += digits.len();
                options.push(Opt {
                    name: "#".into(),
                    value: Some(digits),
                });
                continue;
            }
            if spec.short_with_arg.contains(c) {
                let rest: String = cluster[j + 1..].iter().collect();
                let value = if rest.is_empty() {
                    let v = words.get(i).map(|w| w.text.clone());
                    i += 1;
                    v
                } else {
                    Some(rest)
                };
                options.push(Opt {
                    name: c.to_string(),
                    value,
                });
                break;
            }
            options.push(Opt {
                name: c.to_string(),
                value: None,
            });
            j += 1;
        }
    }
    (options, operands)
}

fn has(options: &[Opt], names: &[&str]) -> bool {
    options.iter().any(|o| names.contains(&o.name.as_str()))
}

fn value<'a>(options: &'a [Opt], names: &[&str]) -> Option<&'a str> {
    options
        .iter()
        .rev()
        .find(|o| names.contains(&o.name.as_str()))
        .and_then(|o| o.value.as_deref())
}

/// The program a command runs, looking through wrappers (`sudo`, `command`, `timeout 5`,
/// `xargs`): `(name, arguments, reads_file_list_from_stdin)`.
pub fn program(command: &SimpleCommand) -> Option<(String, &[Word], bool)> {
    let mut words = command.words.as_slice();
    let mut from_xargs = false;
    loop {
        let first = words.first()?;
        let name = first
            .text
            .rsplit('/')
            .next()
            .unwrap_or(&first.text)
            .to_string();
        match name.as_str() {
            "sudo" | "command" | "nice" | "nohup" | "stdbuf" => words = &words[1..],
            "env" => {
                // env [-i] [NAME=VALUE]… COMMAND…
                let skip = 1 + words[1..]
                    .iter()
                    .take_while(|w| w.text.starts_with('-') || w.text.contains('='))
                    .count();
                words = words.get(skip..)?;
            }
            "timeout" => {
                // timeout [options] DURATION COMMAND…
                let skip = words[1..]
                    .iter()
                    .position(|w| !w.text.starts_with('-'))
                    .map_or(words.len(), |p| p + 2);
                words = words.get(skip..)?;
            }
            "xargs" => {
                from_xargs = true;
                let skip = 1 + words[1..]
                    .iter()
                    .take_while(|w| w.text.starts_with('-'))
                    .count();
                words = words.get(skip..)?;
            }
            "git" if words.get(1).is_some_and(|w| w.text == "grep") => {
                return Some(("git-grep".into(), &words[2..], from_xargs));
            }
            _ => return Some((name, &words[1..], from_xargs)),
        }
    }
}

/// The source a pipeline's first command reads, if it reads files named on its command line.
/// `None` for programs that read no file operands (they may still be filters of stdin).
pub fn source(name: &str, args: &[Word]) -> Option<Source> {
    let (kind, files) = match name {
        "cat" | "less" | "more" | "bat" | "batcat" => {
            let (options, files) = getopt(
                args,
                &OptionSpec {
                    short_with_arg: "",
                    long_with_arg: &[],
                    numeric_flag: false,
                },
            );
            let prefix = (has(&options, &["n", "number"])
                && !has(&options, &["b", "number-nonblank"]))
            .then(|| PrefixStyle::Counter { sep: "\t".into() });
            if has(&options, &["s", "squeeze-blank"]) {
                (
                    SourceKind::Content(Selector::Unknown("cat -s drops blank lines".into())),
                    files,
                )
            } else {
                (SourceKind::Content(Selector::Whole { prefix }), files)
            }
        }
        "nl" => {
            let (options, files) = getopt(args, &nl_spec());
            (
                SourceKind::Content(Selector::Whole {
                    prefix: nl_prefix(&options),
                }),
                files,
            )
        }
        "head" | "tail" => {
            let (options, files) = getopt(args, &head_tail_spec());
            (
                SourceKind::Content(head_tail_selector(name, &options)),
                files,
            )
        }
        "sed" => {
            let (options, mut operands) = getopt(args, &sed_spec());
            if has(&options, &["i", "in-place"]) {
                return None; // an edit, not a read
            }
            let script = match value(&options, &["e", "expression"]) {
                Some(_) => options
                    .iter()
                    .filter(|o| o.name == "e" || o.name == "expression")
                    .filter_map(|o| o.value.clone())
                    .collect::<Vec<_>>()
                    .join("\n"),
                None if has(&options, &["f", "file"]) => String::new(),
                None => {
                    if operands.is_empty() {
                        return None;
                    }
                    operands.remove(0).text
                }
            };
            let quiet = has(&options, &["n", "quiet", "silent"]);
            let selector = if has(&options, &["f", "file", "z", "null-data"]) {
                Selector::Unknown("sed script not on the command line".into())
            } else {
                match SedScript::parse(&script, quiet) {
                    Ok(s) => Selector::Sed(s),
                    Err(why) => Selector::Unknown(why),
                }
            };
            (SourceKind::Content(selector), operands)
        }
        "grep" | "egrep" | "fgrep" | "rg" | "git-grep" => {
            let (_, files, search) = search_options(name, args);
            let files: Vec<Word> = files.into_iter().filter(|w| w.text != "-").collect();
            // A recursive search without operands searches the working directory.
            return (!files.is_empty() || search.recursive).then_some(Source {
                files,
                kind: SourceKind::Search(search),
            });
        }
        _ => return None,
    };
    let files: Vec<Word> = files.into_iter().filter(|w| w.text != "-").collect();
    (!files.is_empty()).then_some(Source { files, kind })
}

/// A search run by `xargs` over file names read from stdin (`find … | xargs grep -n x`): xargs
/// passes many files at once, so grep prefixes each output line with its file.
pub fn xargs_search(name: &str, args: &[Word]) -> Option<SearchOptions> {
    if !matches!(name, "grep" | "egrep" | "fgrep" | "rg") {
        return None;
    }
    let (_, _, mut search) = search_options(name, args);
    search.with_filename = !search.no_lines;
    Some(search)
}

/// What a command does to the stream it receives on stdin.
pub fn filter(name: &str, args: &[Word]) -> Filter {
    match name {
        "cat" | "less" | "more" | "tee" | "bat" | "batcat" => {
            let (options, _) = getopt(
                args,
                &OptionSpec {
                    short_with_arg: "",
                    long_with_arg: &[],
                    numeric_flag: false,
                },
            );
            if name == "cat"
                && has(&options, &["n", "number"])
                && !has(&options, &["b", "number-nonblank"])
            {
                Filter::Number(PrefixStyle::Counter { sep: "\t".into() })
            } else if has(&options, &["s", "squeeze-blank", "b", "number-nonblank"]) {
                Filter::Opaque(format!("{name} with line-dropping options"))
            } else {
                Filter::Identity
            }
        }
        "nl" => {
            let (options, _) = getopt(args, &nl_spec());
            match nl_prefix(&options) {
                Some(style) => Filter::Number(style),
                // `nl` without `-ba` leaves blank lines unnumbered: positions stay, numbers lie.
                None => Filter::Identity,
            }
        }
        "head" | "tail" => {
            let (options, _) = getopt(args, &head_tail_spec());
            Filter::Position(head_tail_selector(name, &options))
        }
        "sed" => {
            let (options, operands) = getopt(args, &sed_spec());
            if has(&options, &["f", "file", "z", "null-data", "i", "in-place"]) {
                return Filter::Opaque("sed script not on the command line".into());
            }
            let script = if has(&options, &["e", "expression"]) {
                options
                    .iter()
                    .filter(|o| o.name == "e" || o.name == "expression")
                    .filter_map(|o| o.value.clone())
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                match operands.first() {
                    Some(w) => w.text.clone(),
                    None => return Filter::Opaque("sed without a script".into()),
                }
            };
            match SedScript::parse(&script, has(&options, &["n", "quiet", "silent"])) {
                Ok(s) if s.substitutes => Filter::Opaque("sed substitutes text".into()),
                Ok(s) => Filter::Position(Selector::Sed(s)),
                Err(why) => Filter::Opaque(why),
            }
        }
        "grep" | "egrep" | "fgrep" | "rg" => {
            let (_, _, search) = search_options(name, args);
            Filter::Search {
                numbered: search.numbered,
                no_lines: search.no_lines,
                only_matching: search.only_matching,
            }
        }
        "sort" | "uniq" | "tac" | "shuf" => Filter::Reorder,
        other => Filter::Opaque(format!("`{other}` output not traced")),
    }
}

fn nl_spec() -> OptionSpec {
    OptionSpec {
        short_with_arg: "bdfhilnsvw",
        long_with_arg: &[
            "body-numbering",
            "section-delimiter",
            "footer-numbering",
            "header-numbering",
            "line-increment",
            "join-blank-lines",
            "number-format",
            "number-separator",
            "starting-line-number",
            "number-width",
        ],
        numeric_flag: false,
    }
}

/// `nl` numbers every line with the line's position only with `-b a`, start 1 and step 1.
fn nl_prefix(options: &[Opt]) -> Option<PrefixStyle> {
    let body = value(options, &["b", "body-numbering"]).unwrap_or("t");
    let start = value(options, &["v", "starting-line-number"]).unwrap_or("1");
    let step = value(options, &["i", "line-increment"]).unwrap_or("1");
    let sep = value(options, &["s", "number-separator"]).unwrap_or("\t");
    (body == "a" && start == "1" && step == "1" && !sep.is_empty()).then(|| PrefixStyle::Counter {
        sep: sep.to_string(),
    })
}

fn head_tail_spec() -> OptionSpec {
    OptionSpec {
        short_with_arg: "ncs",
        long_with_arg: &[
            "lines",
            "bytes",
            "sleep-interval",
            "pid",
            "max-unchanged-stats",
        ],
        numeric_flag: true,
    }
}

fn head_tail_selector(name: &str, options: &[Opt]) -> Selector {
    if has(options, &["c", "bytes"]) {
        return Selector::Unknown(format!("{name} counts bytes"));
    }
    let count = value(options, &["n", "lines", "#"]).unwrap_or("10");
    let (sign, digits) = match count.chars().next() {
        Some(c @ ('+' | '-')) => (Some(c), &count[1..]),
        _ => (None, count),
    };
    let Ok(n) = digits.parse::<u64>() else {
        return Selector::Unknown(format!("{name} count `{count}`"));
    };
    match (name, sign) {
        ("head", Some('-')) => Selector::AllButLast(n),
        ("head", _) => Selector::First(n),
        ("tail", Some('+')) => Selector::From(n.max(1)),
        _ => Selector::Last(n),
    }
}

fn sed_spec() -> OptionSpec {
    OptionSpec {
        short_with_arg: "efl",
        long_with_arg: &["expression", "file", "line-length"],
        numeric_flag: false,
    }
}

fn search_options(name: &str, args: &[Word]) -> (Vec<Opt>, Vec<Word>, SearchOptions) {
    let spec = if name == "rg" {
        OptionSpec {
            short_with_arg: "efmABCgtTjMErd",
            long_with_arg: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "glob",
                "iglob",
                "type",
                "type-not",
                "threads",
                "max-columns",
                "encoding",
                "replace",
                "max-depth",
                "color",
                "colors",
                "sort",
                "sortr",
                "pre",
                "type-add",
                "ignore-file",
                "max-filesize",
                "path-separator",
                "context-separator",
            ],
            numeric_flag: false,
        }
    } else {
        OptionSpec {
            short_with_arg: "efmABCdD",
            long_with_arg: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "binary-files",
                "devices",
                "directories",
                "label",
                "group-separator",
            ],
            numeric_flag: true,
        }
    };
    let (options, mut operands) = getopt(args, &spec);
    // The pattern is the first operand unless given with -e/-f.
    if !has(&options, &["e", "regexp", "f", "file"]) && !operands.is_empty() {
        operands.remove(0);
    }
    let recursive = name == "rg"
        || name == "git-grep"
        || has(&options, &["r", "R", "recursive", "dereference-recursive"]);
    let numbered = if name == "rg" {
        has(&options, &["n", "line-number"]) && !has(&options, &["N", "no-line-number"])
    } else {
        has(&options, &["n", "line-number"])
    };
    let with_filename =
        if has(&options, &["h", "no-filename"]) || (name == "rg" && has(&options, &["I"])) {
            false
        } else {
            has(&options, &["H", "with-filename"])
                || operands.len() > 1
                || (recursive && !(operands.len() == 1 && looks_like_file(&operands[0].text)))
                || (name == "git-grep")
        };
    let search = SearchOptions {
        numbered,
        with_filename,
        no_lines: has(
            &options,
            &[
                "l",
                "L",
                "c",
                "q",
                "files-with-matches",
                "files-without-match",
                "count",
                "quiet",
                "silent",
                "files",
            ],
        ),
        only_matching: has(&options, &["o", "only-matching"]),
        recursive,
    };
    (options, operands, search)
}

/// A recursive search of a single operand prints no file names when the operand is a file; the
/// command line alone cannot tell a file from a directory, so a name with an extension is taken
/// for a file.
fn looks_like_file(operand: &str) -> bool {
    let name = operand.rsplit('/').next().unwrap_or(operand);
    name.contains('.') && !name.starts_with('.') && name != ".."
}

/// A `sed` script reduced to the line selection it makes: which lines it prints and whether it
/// prints some more than once. Supported: addresses `N`, `$`, `N,M`, `N,$`, `N,+K`, optional `!`,
/// commands `p`, `d`, `q`, `Q`, `=`-free, and `s///` (text changes, lines kept); anything else
/// (regex addresses, blocks, hold space) makes the selection unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SedScript {
    quiet: bool,
    commands: Vec<SedCommand>,
    /// The script rewrites text (`s`), so numbering prefixes may no longer be intact.
    pub substitutes: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SedCommand {
    range: Option<(SedAddr, Option<SedAddr>)>,
    negate: bool,
    op: char,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SedAddr {
    Line(u64),
    Last,
    Plus(u64),
}

impl SedScript {
    pub fn parse(script: &str, quiet: bool) -> Result<SedScript, String> {
        let mut commands = Vec::new();
        let mut substitutes = false;
        let chars: Vec<char> = script.chars().collect();
        let mut i = 0;
        let unknown = |what: &str| Err(format!("sed script with {what}"));
        let number = |i: &mut usize| -> Option<u64> {
            let start = *i;
            while *i < chars.len() && chars[*i].is_ascii_digit() {
                *i += 1;
            }
            chars[start..*i].iter().collect::<String>().parse().ok()
        };
        while i < chars.len() {
            while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
                i += 1;
            }
            if i >= chars.len() {
                break;
            }
            let first = match chars[i] {
                '$' => {
                    i += 1;
                    Some(SedAddr::Last)
                }
                c if c.is_ascii_digit() => number(&mut i).map(SedAddr::Line),
                '/' | '\\' => return unknown("regex addresses"),
                _ => None,
            };
            let mut second = None;
            if first.is_some() && chars.get(i) == Some(&',') {
                i += 1;
                second = match chars.get(i) {
                    Some('$') => {
                        i += 1;
                        Some(SedAddr::Last)
                    }
                    Some('+') => {
                        i += 1;
                        number(&mut i).map(SedAddr::Plus)
                    }
                    Some(c) if c.is_ascii_digit() => number(&mut i).map(SedAddr::Line),
                    _ => return unknown("an unsupported address"),
                };
            }
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            let mut negate = false;
            if chars.get(i) == Some(&'!') {
                negate = true;
                i += 1;
            }
            let Some(&op) = chars.get(i) else {
                return unknown("a missing command");
            };
            i += 1;
            match op {
                'p' | 'd' | 'q' | 'Q' => {}
                's' => {
                    // s<d>re<d>rep<d>flags: skip to the third delimiter, then the flags.
                    let Some(&delim) = chars.get(i) else {
                        return unknown("a malformed s command");
                    };
                    i += 1;
                    let mut seen = 0;
                    while i < chars.len() && seen < 2 {
                        if chars[i] == '\\' {
                            i += 2;
                            continue;
                        }
                        if chars[i] == delim {
                            seen += 1;
                        }
                        i += 1;
                    }
                    let flags_start = i;
                    while i < chars.len() && chars[i] != ';' && chars[i] != '\n' {
                        i += 1;
                    }
                    let flags: String = chars[flags_start..i].iter().collect();
                    if flags.contains('p') || flags.contains('w') || flags.contains('e') {
                        return unknown("s///p, w or e");
                    }
                    substitutes = true;
                    continue;
                }
                _ => return unknown(&format!("command `{op}`")),
            }
            commands.push(SedCommand {
                range: first.map(|f| (f, second)),
                negate,
                op,
            });
        }
        Ok(SedScript {
            quiet,
            commands,
            substitutes,
        })
    }

    /// The lines printed from a stream of `count` lines: a sequence of position intervals and
    /// whether some position is printed more than once.
    pub fn select(&self, count: u64) -> (Vec<Interval>, bool) {
        // Quit commands end the stream; `Nq` still prints line N, `NQ` does not.
        let mut stop = count;
        for c in &self.commands {
            if let ('q' | 'Q', Some((addr, None)), false) = (c.op, c.range, c.negate) {
                let at = match addr {
                    SedAddr::Line(n) => n,
                    SedAddr::Last | SedAddr::Plus(_) => count,
                };
                let last_printed = if c.op == 'q' {
                    at
                } else {
                    at.saturating_sub(1)
                };
                stop = stop.min(last_printed);
            }
        }
        let range_lines = |c: &SedCommand| -> Vec<Interval> {
            let selected = match c.range {
                None => Interval::new(1, count).into_iter().collect::<Vec<_>>(),
                Some((first, second)) => {
                    let start = match first {
                        SedAddr::Line(n) => n,
                        SedAddr::Last | SedAddr::Plus(_) => count,
                    };
                    let end = match second {
                        None => start,
                        Some(SedAddr::Line(m)) => m.max(start), // `5,3p` prints line 5
                        Some(SedAddr::Last) => count,
                        Some(SedAddr::Plus(k)) => start + k,
                    };
                    Interval::new(start.max(1), end.min(count))
                        .into_iter()
                        .collect()
                }
            };
            if c.negate {
                let set = LineSet::from_intervals(selected);
                LineSet::whole(count).difference(&set).intervals().to_vec()
            } else {
                selected
            }
        };
        let mut printed: Vec<Interval> = Vec::new();
        let mut deleted = LineSet::new();
        for c in &self.commands {
            match c.op {
                'p' => printed.extend(range_lines(c)),
                'd' => deleted = deleted.union(&LineSet::from_intervals(range_lines(c))),
                _ => {}
            }
        }
        let auto = if self.quiet {
            LineSet::new()
        } else {
            LineSet::whole(count).difference(&deleted)
        };
        let limit = LineSet::whole(stop);
        let mut all: Vec<Interval> = auto.intervals().to_vec();
        all.extend(printed.iter().copied());
        let union = LineSet::from_intervals(all.iter().copied()).intersection(&limit);
        let total: u64 = all
            .iter()
            .filter_map(|iv| Interval::new(iv.start, iv.end.min(stop)))
            .map(|iv| iv.line_count())
            .sum();
        (union.intervals().to_vec(), total > union.len())
    }
}

impl Selector {
    /// The positions (1-based) this selector prints from a stream of `count` lines, and whether
    /// some are printed twice. `Err` when unknown.
    pub fn positions(&self, count: u64) -> Result<(Vec<Interval>, bool), String> {
        let one = |iv: Option<Interval>| Ok((iv.into_iter().collect(), false));
        match self {
            Selector::Whole { .. } => one(Interval::new(1, count)),
            Selector::First(n) => one(Interval::new(1, (*n).min(count))),
            Selector::AllButLast(n) => one(Interval::new(1, count.saturating_sub(*n))),
            Selector::Last(n) => one(Interval::new(count.saturating_sub(*n) + 1, count)),
            Selector::From(n) => one(Interval::new(*n, count)),
            Selector::Sed(script) => Ok(script.select(count)),
            Selector::Unknown(why) => Err(why.clone()),
        }
    }
}

/// Position `p` (1-based) of the sequence `seq`.
pub fn nth_line(seq: &[Interval], p: u64) -> Option<u64> {
    let mut remaining = p.checked_sub(1)?;
    for iv in seq {
        if remaining < iv.line_count() {
            return Some(iv.start + remaining);
        }
        remaining -= iv.line_count();
    }
    None
}

/// The sub-sequence of `seq` at positions `positions` (ascending, 1-based).
pub fn pick(seq: &[Interval], positions: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    for pos in positions {
        // Walk the sequence once per position interval; sequences are short.
        let mut offset = 0u64;
        for iv in seq {
            let first = offset + 1;
            let last = offset + iv.line_count();
            let lo = pos.start.max(first);
            let hi = pos.end.min(last);
            if lo <= hi {
                out.push(Interval {
                    start: iv.start + (lo - first),
                    end: iv.start + (hi - first),
                });
            }
            offset = last;
        }
    }
    out
}

pub fn seq_len(seq: &[Interval]) -> u64 {
    seq.iter().map(Interval::line_count).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gt::shell;

    fn words(line: &str) -> (String, Vec<Word>) {
        let cmd = shell::parse(line).remove(0).commands.remove(0);
        let (name, args, _) = program(&cmd).unwrap();
        (name, args.to_vec())
    }

    /// The source selection of `line` on a 100-line file, as `a-b` intervals, or the reason.
    fn selection(line: &str) -> String {
        let (name, args) = words(line);
        let src = source(&name, &args).expect("a source");
        match src.kind {
            SourceKind::Content(sel) => match sel.positions(100) {
                Ok((ivs, repeats)) => {
                    let s = ivs
                        .iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(",");
                    if repeats { format!("{s} (repeats)") } else { s }
                }
                Err(why) => format!("unknown: {why}"),
            },
            SourceKind::Search(s) => format!("{s:?}"),
        }
    }

    #[test]
    fn content_selections() {
        let cases = [
            ("cat a.py", "1-100"),
            ("nl -ba a.py", "1-100"),
            ("head a.py", "1-10"),
            ("head -n 20 a.py", "1-20"),
            ("head -20 a.py", "1-20"),
            ("head -n20 a.py", "1-20"),
            ("head --lines=5 a.py", "1-5"),
            ("head -n -30 a.py", "1-70"),
            ("tail -n 5 a.py", "96-100"),
            ("tail -5 a.py", "96-100"),
            ("tail -n +90 a.py", "90-100"),
            ("sed -n '10,20p' a.py", "10-20"),
            ("sed -n 10,20p a.py", "10-20"),
            ("sed -n '5p' a.py", "5-5"),
            ("sed -n '95,$p' a.py", "95-100"),
            ("sed -n '10,+4p' a.py", "10-14"),
            ("sed -n -e '1,3p' -e '7p' a.py", "1-3,7-7"),
            ("sed -n '1,3p;7,8p' a.py", "1-3,7-8"),
            ("sed -n '1,5p;3,8p' a.py", "1-8 (repeats)"),
            ("sed -n '20,30p;31q' a.py", "20-30"),
            ("sed '10q' a.py", "1-10"),
            ("sed '1,90d' a.py", "91-100"),
            (
                "sed -n '/def x/,/^$/p' a.py",
                "unknown: sed script with regex addresses",
            ),
            ("head -c 100 a.py", "unknown: head counts bytes"),
            ("cat -s a.py", "unknown: cat -s drops blank lines"),
        ];
        for (line, expected) in cases {
            assert_eq!(selection(line), expected, "{line}");
        }
    }

    #[test]
    fn search_options_decide_output_format() {
        let s = |line: &str| {
            let (name, args) = words(line);
            let src = source(&name, &args);
            src.map(|s| match s.kind {
                SourceKind::Search(o) => (s.files.len(), o.numbered, o.with_filename, o.no_lines),
                _ => unreachable!(),
            })
        };
        assert_eq!(s("grep -n foo a.py"), Some((1, true, false, false)));
        assert_eq!(s("grep -rn foo pkg"), Some((1, true, true, false)));
        assert_eq!(s("grep -rn foo pkg/a.py"), Some((1, true, false, false)));
        assert_eq!(s("grep -n foo a.py b.py"), Some((2, true, true, false)));
        assert_eq!(s("grep -nH foo a.py"), Some((1, true, true, false)));
        assert_eq!(s("grep -l foo a.py b.py"), Some((2, false, true, true)));
        assert_eq!(s("grep -e foo -n a.py"), Some((1, true, false, false)));
        assert_eq!(s("grep -A 5 -n foo a.py"), Some((1, true, false, false)));
        assert_eq!(s("grep -nC3 'a b' a.py"), Some((1, true, false, false)));
        assert_eq!(s("rg -n foo src"), Some((1, true, true, false)));
        assert_eq!(s("rg foo a.py"), Some((1, false, false, false)));
        assert_eq!(s("git grep -n foo"), Some((0, true, true, false)));
        assert_eq!(s("grep -rn foo"), Some((0, true, true, false)));
        assert_eq!(s("grep foo"), None);
    }

    #[test]
    fn filters() {
        let f = |line: &str| {
            let (name, args) = words(line);
            filter(&name, &args)
        };
        assert_eq!(
            f("sed -n '10,20p'"),
            Filter::Position(Selector::Sed(SedScript::parse("10,20p", true).unwrap()))
        );
        assert_eq!(f("head -n 3"), Filter::Position(Selector::First(3)));
        assert_eq!(
            f("grep -n foo"),
            Filter::Search {
                numbered: true,
                no_lines: false,
                only_matching: false
            }
        );
        assert_eq!(
            f("nl -ba"),
            Filter::Number(PrefixStyle::Counter { sep: "\t".into() })
        );
        assert_eq!(f("cat -A"), Filter::Identity);
        assert!(matches!(f("sed 's/a/b/'"), Filter::Opaque(_)));
        assert!(matches!(f("awk '{print $1}'"), Filter::Opaque(_)));
        assert_eq!(f("sort"), Filter::Reorder);
    }

    #[test]
    fn wrappers() {
        let cmd = shell::parse("xargs grep -n foo")
            .remove(0)
            .commands
            .remove(0);
        let (name, _, from_xargs) = program(&cmd).unwrap();
        assert_eq!((name.as_str(), from_xargs), ("grep", true));
        let cmd = shell::parse("timeout 5 cat a.py")
            .remove(0)
            .commands
            .remove(0);
        assert_eq!(program(&cmd).unwrap().0, "cat");
    }

    #[test]
    fn sequences() {
        let seq = [
            Interval::new(10, 12).unwrap(),
            Interval::new(20, 21).unwrap(),
        ];
        assert_eq!(nth_line(&seq, 1), Some(10));
        assert_eq!(nth_line(&seq, 4), Some(20));
        assert_eq!(nth_line(&seq, 6), None);
        let picked = pick(&seq, &[Interval::new(2, 4).unwrap()]);
        assert_eq!(
            picked,
            vec![
                Interval::new(11, 12).unwrap(),
                Interval::new(20, 20).unwrap()
            ]
        );
        assert_eq!(seq_len(&seq), 5);
    }
}
