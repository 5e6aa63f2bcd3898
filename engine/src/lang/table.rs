//! [`LANGUAGES`]: every language the engine parses, one row each — how it is detected
//! (extensions, file names, shebang interpreters, and the markup files whose `<script>` elements
//! hold it), its tree-sitter grammar and its analyser.
//!
//! Adding a language touches three files: a variant of [`Language`] and a row here, its analyser
//! module (declared in `lang/mod.rs`, its grammar crate in `engine/Cargo.toml`), and its row in
//! docs/lang-graph.md's language table (a test checks the docs against this table).
//! Detection ([`super::detect_language`]), parsing and analysis read this table and nothing
//! else; the code graph's per-language import resolution and test ↔ subject rules treat a
//! language they have no rule for as having no imports to resolve and no subject naming.

use super::extract::Grammar;
use super::{
    bash, c_family, csharp, elixir, go, haskell, java, javascript, kotlin, lua, php, python, ruby,
    rust, scala, swift, zig,
};
use serde::{Deserialize, Serialize};

/// Languages with a tree-sitter analyser (one row of [`LANGUAGES`] each). Every other text file
/// is chunked in line windows. The serde names are stored in caches and result rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Rust,
    Java,
    C,
    Cpp,
    Ruby,
    Php,
    Kotlin,
    Scala,
    CSharp,
    Swift,
    Elixir,
    Bash,
    Haskell,
    Lua,
    Zig,
}

/// One language the engine parses.
pub struct LanguageSpec {
    pub language: Language,
    /// Its name in docs and reports.
    pub name: &'static str,
    /// File extensions, without the dot, in lower case (matched case-insensitively, except that
    /// upper-case `.C` and `.H` are C++; `.h` is C unless the file's head shows C++).
    pub extensions: &'static [&'static str],
    /// Whole file names (`Rakefile`).
    pub file_names: &'static [&'static str],
    /// Interpreters a shebang line names (version suffixes such as `python3.11` are dropped
    /// before matching).
    pub interpreters: &'static [&'static str],
    /// The tree-sitter grammar.
    pub grammar: fn() -> tree_sitter::Language,
    /// The definitions, imports and references of a parsed file.
    pub(crate) analyser: &'static dyn Grammar,
    /// Extensions (lower case, without the dot) of markup files whose code in this language sits
    /// in `<script>` elements: Vue and Svelte single-file components. Such a file is this
    /// language, and everything outside its scripts is blanked before parsing (same bytes, same
    /// lines: `super::markup`), so its definitions sit where they are in the file.
    pub markup_extensions: &'static [&'static str],
}

/// Every language the engine parses, in the order of [`Language`].
pub static LANGUAGES: [LanguageSpec; 20] = [
    LanguageSpec {
        language: Language::Python,
        name: "Python",
        extensions: &["py", "pyi", "pyw"],
        file_names: &["SConstruct", "SConscript"],
        interpreters: &["python", "pypy"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        analyser: &python::Python,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::JavaScript,
        name: "JavaScript",
        extensions: &["js", "mjs", "cjs", "jsx"],
        file_names: &[],
        interpreters: &["node", "nodejs"],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        analyser: &javascript::JavaScript,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::TypeScript,
        name: "TypeScript",
        extensions: &["ts", "mts", "cts"],
        file_names: &[],
        interpreters: &["ts-node", "tsx", "deno", "bun"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        analyser: &javascript::JavaScript,
        markup_extensions: &["vue", "svelte"],
    },
    LanguageSpec {
        language: Language::Tsx,
        name: "TSX",
        extensions: &["tsx"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        analyser: &javascript::JavaScript,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Go,
        name: "Go",
        extensions: &["go"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        analyser: &go::Go,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Rust,
        name: "Rust",
        extensions: &["rs"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        analyser: &rust::Rust,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Java,
        name: "Java",
        extensions: &["java"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        analyser: &java::Java,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::C,
        name: "C",
        extensions: &["c", "h"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_c::LANGUAGE.into(),
        analyser: &c_family::CFamily,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Cpp,
        name: "C++",
        extensions: &[
            "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl", "cu", "cuh",
        ],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        analyser: &c_family::CFamily,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Ruby,
        name: "Ruby",
        extensions: &["rb", "rake", "gemspec", "ru", "rbi"],
        file_names: &[
            "Rakefile",
            "Gemfile",
            "Guardfile",
            "Capfile",
            "Vagrantfile",
            "Podfile",
            "Fastfile",
            "Brewfile",
            "Berksfile",
            "Thorfile",
            "Dangerfile",
            "config.ru",
        ],
        interpreters: &["ruby"],
        grammar: || tree_sitter_ruby::LANGUAGE.into(),
        analyser: &ruby::Ruby,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Php,
        name: "PHP",
        extensions: &["php", "phtml", "php3", "php4", "php5", "php7", "php8"],
        file_names: &[],
        interpreters: &["php"],
        grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
        analyser: &php::Php,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Kotlin,
        name: "Kotlin",
        extensions: &["kt", "kts"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
        analyser: &kotlin::Kotlin,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Scala,
        name: "Scala",
        extensions: &["scala", "sc"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_scala::LANGUAGE.into(),
        analyser: &scala::Scala,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::CSharp,
        name: "C#",
        extensions: &["cs"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
        analyser: &csharp::CSharp,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Swift,
        name: "Swift",
        extensions: &["swift"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_swift::LANGUAGE.into(),
        analyser: &swift::Swift,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Elixir,
        name: "Elixir",
        extensions: &["ex", "exs"],
        file_names: &[],
        interpreters: &["elixir"],
        grammar: || tree_sitter_elixir::LANGUAGE.into(),
        analyser: &elixir::Elixir,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Bash,
        name: "Bash",
        extensions: &["sh", "bash", "bats"],
        file_names: &[],
        interpreters: &["sh", "bash", "dash", "ksh", "zsh", "bats"],
        grammar: || tree_sitter_bash::LANGUAGE.into(),
        analyser: &bash::Bash,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Haskell,
        name: "Haskell",
        extensions: &["hs", "lhs"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_haskell::LANGUAGE.into(),
        analyser: &haskell::Haskell,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Lua,
        name: "Lua",
        extensions: &["lua"],
        file_names: &[],
        interpreters: &["lua", "luajit"],
        grammar: || tree_sitter_lua::LANGUAGE.into(),
        analyser: &lua::Lua,
        markup_extensions: &[],
    },
    LanguageSpec {
        language: Language::Zig,
        name: "Zig",
        extensions: &["zig"],
        file_names: &[],
        interpreters: &[],
        grammar: || tree_sitter_zig::LANGUAGE.into(),
        analyser: &zig::Zig,
        markup_extensions: &[],
    },
];

/// The row of `language`.
pub fn language_spec(language: Language) -> &'static LanguageSpec {
    // The table is in the order of the enum (tested), so this is an index.
    &LANGUAGES[language as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn rows_follow_the_enum_and_claim_each_name_once() {
        let mut extensions = HashMap::new();
        let mut file_names = HashMap::new();
        let mut interpreters = HashMap::new();
        for (i, spec) in LANGUAGES.iter().enumerate() {
            assert_eq!(spec.language as usize, i, "{} is out of order", spec.name);
            assert_eq!(language_spec(spec.language).name, spec.name);
            for e in spec.extensions.iter().chain(spec.markup_extensions) {
                assert_eq!(*e, e.to_ascii_lowercase(), "{e}: extensions are lower case");
                if let Some(other) = extensions.insert(*e, spec.name) {
                    panic!(".{e} is claimed by {other} and {}", spec.name);
                }
            }
            for f in spec.file_names {
                assert!(file_names.insert(*f, spec.name).is_none(), "{f} twice");
            }
            for p in spec.interpreters {
                assert!(interpreters.insert(*p, spec.name).is_none(), "{p} twice");
            }
            // The grammar loads and the analyser's node names exist in it.
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&(spec.grammar)())
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        }
    }

    /// A file the engine parses is never also counted as code without a grammar
    /// (`swex_text::paths::is_unparsed_source`, which knows no language table).
    #[test]
    fn no_parsed_extension_is_listed_as_unparsed_source() {
        for spec in &LANGUAGES {
            for e in spec.extensions.iter().chain(spec.markup_extensions) {
                assert!(
                    !swex_text::paths::is_unparsed_source(&format!("src/x.{e}")),
                    ".{e} is parsed as {} and listed as unparsed source",
                    spec.name
                );
            }
        }
    }

    /// docs/lang-graph.md's language table names every language of this table, and each row
    /// lists the language's extensions and file names, so the docs cannot fall behind.
    #[test]
    fn the_docs_list_every_language_with_its_extensions() {
        let docs = include_str!("../../../docs/lang-graph.md");
        let section = &docs[docs.find("## Languages").expect("a Languages section")..];
        let rows: Vec<(Vec<&str>, &str)> = section
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("## "))
            .filter(|l| l.starts_with("| ") && !l.starts_with("| language"))
            .map(|l| {
                let cells: Vec<&str> = l.split(" | ").collect();
                let names = cells[0].trim_start_matches("| ").split(" / ").collect();
                (names, cells.get(1).copied().unwrap_or(""))
            })
            .collect();
        let documented: Vec<&str> = rows.iter().flat_map(|(names, _)| names.clone()).collect();
        let declared: Vec<&str> = LANGUAGES.iter().map(|s| s.name).collect();
        assert_eq!(documented, declared, "docs/lang-graph.md's languages");
        for spec in &LANGUAGES {
            let (_, detected_by) = rows
                .iter()
                .find(|(names, _)| names.contains(&spec.name))
                .unwrap();
            let words: Vec<&str> = detected_by
                .split(|c: char| c == '`' || c == ',' || c.is_whitespace())
                .collect();
            for e in spec.extensions.iter().chain(spec.markup_extensions) {
                let dotted = format!(".{e}");
                assert!(
                    words.contains(&dotted.as_str()),
                    "{}: docs/lang-graph.md does not list {dotted}",
                    spec.name
                );
            }
            for f in spec.file_names {
                assert!(
                    words.contains(f),
                    "{}: docs/lang-graph.md does not list {f}",
                    spec.name
                );
            }
        }
    }
}
