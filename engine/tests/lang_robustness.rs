//! The analysers never panic and always satisfy the chunk invariants, whatever they are fed:
//! truncated fixture files, random bytes, shuffled lines, and pathological shapes (deep nesting,
//! a single huge line, control characters), in every language.

mod support;

use support::{Fixture, check_invariants};
use swex_engine::analysis::Language;
use swex_engine::lang::{AnalyzeOptions, analyze};

const LANGUAGES: [Language; 20] = [
    Language::Python,
    Language::JavaScript,
    Language::TypeScript,
    Language::Tsx,
    Language::Go,
    Language::Rust,
    Language::Java,
    Language::C,
    Language::Cpp,
    Language::Ruby,
    Language::Php,
    Language::Kotlin,
    Language::Scala,
    Language::CSharp,
    Language::Swift,
    Language::Elixir,
    Language::Bash,
    Language::Haskell,
    Language::Lua,
    Language::Zig,
];

const FIXTURES: [&str; 19] = [
    "python",
    "javascript",
    "typescript",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "ruby",
    "php",
    "kotlin",
    "scala",
    "csharp",
    "swift",
    "elixir",
    "bash",
    "haskell",
    "lua",
    "zig",
];

/// xorshift64*: deterministic, dependency-free randomness for the tests.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn check(path: &str, language: Option<Language>, text: &str, options: &AnalyzeOptions) {
    let analysis = analyze(path, language, text, options);
    if let Err(problem) = check_invariants(text, &analysis) {
        panic!(
            "{path} ({language:?}), {} bytes: {problem}\ninput: {:?}",
            text.len(),
            text.chars().take(300).collect::<String>()
        );
    }
}

fn small_options() -> AnalyzeOptions {
    // Small limits exercise the splitting paths on small inputs.
    AnalyzeOptions {
        window_lines: 3,
        max_chunk_lines: 4,
    }
}

#[test]
fn truncated_fixture_files_still_satisfy_the_invariants() {
    for name in FIXTURES {
        for file in Fixture::load(name).files {
            let boundaries: Vec<usize> = file
                .text
                .char_indices()
                .map(|(i, _)| i)
                .chain([file.text.len()])
                .collect();
            let step = (boundaries.len() / 25).max(1);
            for &cut in boundaries.iter().step_by(step) {
                let prefix = &file.text[..cut];
                for options in [AnalyzeOptions::default(), small_options()] {
                    check(&file.path, file.analysis.language, prefix, &options);
                }
            }
        }
    }
}

#[test]
fn shuffled_fixture_lines_still_satisfy_the_invariants() {
    let mut random = Random(0x5eed_1234_abcd_0001);
    for name in FIXTURES {
        for file in Fixture::load(name).files {
            let mut lines: Vec<&str> = file.text.lines().collect();
            for _ in 0..5 {
                for i in (1..lines.len()).rev() {
                    lines.swap(i, random.below(i + 1));
                }
                let text = lines.join("\n");
                check(&file.path, file.analysis.language, &text, &small_options());
            }
        }
    }
}

#[test]
fn random_bytes_in_every_language_satisfy_the_invariants() {
    // Bytes weighted towards syntax: brackets, quotes, keywords' letters, line breaks of every
    // kind Python counts, and invalid UTF-8 (decoded lossily, as the scanner does).
    const ALPHABET: &[u8] = b"(){}[]<>\"'`#/*\\;:,.=+-!?&|@$%^~ \t\n\n\n\r\x0b\x0c\x1c\x85\xe2\x80\xa8\xffdefclassfnimportusestructpubletconstvarfunc_0123456789ABCXYZ";
    let mut random = Random(0x0dd_ba11_cafe_f00d);
    for language in LANGUAGES {
        for round in 0..40 {
            let len = random.below(1200);
            let bytes: Vec<u8> = (0..len)
                .map(|_| ALPHABET[random.below(ALPHABET.len())])
                .collect();
            let text = String::from_utf8_lossy(&bytes);
            let options = if round % 2 == 0 {
                AnalyzeOptions::default()
            } else {
                small_options()
            };
            check("random.src", Some(language), &text, &options);
        }
    }
    for round in 0..60 {
        let len = random.below(3000);
        let bytes: Vec<u8> = (0..len).map(|_| (random.next() & 0xff) as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        let path = if round % 2 == 0 {
            "notes.md"
        } else {
            "data.bin"
        };
        check(path, None, &text, &small_options());
        check(
            "random.py",
            Some(LANGUAGES[round % LANGUAGES.len()]),
            &text,
            &small_options(),
        );
    }
}

/// Vue and Svelte components (their scripts analysed in place, the rest blanked): random
/// pieces of markup, scripts opened and closed anywhere, multi-byte characters next to tags.
#[test]
fn random_components_satisfy_the_invariants() {
    const PIECES: &[&str] = &[
        "<script>",
        "<script lang=\"ts\">",
        "<script setup generic=\"T extends Record<string, unknown>\">",
        "<SCRIPT context='module'>",
        "<script src=\"x.js\"/>",
        "</script>",
        "</script >",
        "<script",
        "<template><p>{{ a }}</p></template>",
        "<style>p { color: red }</style>",
        "export default { data() { return { a: 1 } } }",
        "function f(x: number) { return x }",
        "const é = 'ü';",
        "日本",
        "\n",
        "\r\n",
        "\u{2028}",
        "{#each xs as x}<p>{x}</p>{/each}",
        "'",
        "\"",
        ">",
    ];
    let mut random = Random(0x5c21_97ed_c0de);
    for round in 0..200 {
        let text: String = (0..random.below(40))
            .map(|_| PIECES[random.below(PIECES.len())])
            .collect();
        let path = if round % 2 == 0 {
            "src/App.vue"
        } else {
            "src/App.svelte"
        };
        check(path, Some(Language::TypeScript), &text, &small_options());
    }
}

#[test]
fn pathological_shapes_satisfy_the_invariants() {
    let deep_parens = format!("x = {}1{}\n", "(".repeat(5_000), ")".repeat(5_000));
    let deep_braces = format!("fn f() {}{}\n", "{".repeat(5_000), "}".repeat(5_000));
    let unclosed = "{[(".repeat(3_000);
    let long_line = "a".repeat(50_000);
    let many_lines = "\n".repeat(5_000);
    let carriage_returns = "def f():\r    return 1\r\rclass A:\r    pass\r";
    let form_feeds = "def f():\n\x0c    return 1\n\x0c\nclass A:\n    pass";
    let nul_bytes = "int main() {\0 return 0; }\0\n";
    let deep_nested_defs: String = (0..300)
        .map(|depth| format!("{}def f{depth}():\n", "    ".repeat(depth)))
        .collect();
    let inputs: [&str; 10] = [
        &deep_parens,
        &deep_braces,
        &unclosed,
        &long_line,
        &many_lines,
        carriage_returns,
        form_feeds,
        nul_bytes,
        &deep_nested_defs,
        "",
    ];
    for language in LANGUAGES {
        for input in inputs {
            check(
                "pathological.src",
                Some(language),
                input,
                &AnalyzeOptions::default(),
            );
        }
    }
}

#[test]
fn syntax_errors_are_reported_and_still_chunked() {
    let text = "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self):\n        return 2\n";
    let analysis = analyze(
        "broken.py",
        Some(Language::Python),
        text,
        &AnalyzeOptions::default(),
    );
    assert!(analysis.has_syntax_errors);
    check_invariants(text, &analysis).expect("invariants");
    let names: Vec<&str> = analysis
        .definitions
        .iter()
        .map(|d| d.qualified_name.as_str())
        .collect();
    assert!(
        names.contains(&"ok") && names.contains(&"Fine.m"),
        "definitions around the error survive: {names:?}"
    );
}

#[test]
fn line_counts_and_chunks_follow_python_lines() {
    // Three `\n`-lines; Python's splitlines also breaks at the form feed and the lone `\r`, and
    // so do the chunks (the benchmark's lines).
    let text = "a = 1\x0cb = 2\nc = 3\rd = 4\ne = 5\n";
    let analysis = analyze(
        "x.py",
        Some(Language::Python),
        text,
        &AnalyzeOptions::default(),
    );
    assert_eq!(analysis.line_count, 5);
    assert_eq!(analysis.chunks.last().map(|c| c.end), Some(5));
    check_invariants(text, &analysis).expect("invariants");
}
