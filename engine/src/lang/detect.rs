//! Language detection from a file's path and first bytes.
//!
//! Order: well-known file names (`Rakefile`, `Gemfile`, `SConstruct`…), then the extension, then
//! the shebang line, each looked up in the language table ([`super::table::LANGUAGES`]). `.h` headers are ambiguous between C and C++; they are read as C++ when the
//! head of the file shows C++ constructs (classes, namespaces, templates, `std::`), else as C.
//! Everything else (Markdown, configs, data) is `None` and gets line windows. Detection does not
//! look at file contents beyond the given head and does not know about vendored or generated code.

use super::table::LANGUAGES;
use crate::analysis::Language;

/// Language of a file from its path (repository-relative or absolute, `/` or `\` separators),
/// its file name, and its shebang line (`#!/usr/bin/env python3`). `head` is the start of the file
/// (the first few KiB are plenty); it may be empty.
pub fn detect_language(path: &str, head: &[u8]) -> Option<Language> {
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if let Some(language) = by_file_name(file_name) {
        return Some(language);
    }
    if let Some((_, extension)) = file_name.rsplit_once('.')
        && !extension.is_empty()
        && let Some(language) = by_extension(extension, head)
    {
        return Some(language);
    }
    by_shebang(head)
}

fn by_file_name(file_name: &str) -> Option<Language> {
    LANGUAGES
        .iter()
        .find(|spec| spec.file_names.contains(&file_name))
        .map(|spec| spec.language)
}

fn by_extension(extension: &str, head: &[u8]) -> Option<Language> {
    // Upper-case `.C` and `.H` are C++ by convention on case-sensitive file systems.
    match extension {
        "C" | "H" => return Some(Language::Cpp),
        _ => {}
    }
    let extension = extension.to_ascii_lowercase();
    if extension == "h" && looks_like_cpp(head) {
        return Some(Language::Cpp);
    }
    LANGUAGES
        .iter()
        .find(|spec| {
            spec.extensions.contains(&extension.as_str())
                || spec.markup_extensions.contains(&extension.as_str())
        })
        .map(|spec| spec.language)
}

/// C++-only constructs that are cheap to spot at the start of a header.
fn looks_like_cpp(head: &[u8]) -> bool {
    const MARKERS: [&str; 9] = [
        "class ",
        "namespace ",
        "template<",
        "template <",
        "std::",
        "public:",
        "private:",
        "#include <iostream>",
        "extern \"C++\"",
    ];
    let head = String::from_utf8_lossy(head);
    MARKERS.iter().any(|marker| head.contains(marker))
}

fn by_shebang(head: &[u8]) -> Option<Language> {
    let rest = head.strip_prefix(b"#!")?;
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let mut words = line.split_whitespace();
    let mut program = basename(words.next()?);
    if program == "env" {
        // `env` may take options (`env -S python3 -u`); the program is the first non-option word
        // that is not an assignment.
        program = basename(words.find(|w| !w.starts_with('-') && !w.contains('='))?);
    }
    let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    LANGUAGES
        .iter()
        .find(|spec| spec.interpreters.contains(&program))
        .map(|spec| spec.language)
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str, head: &str, expected: Option<Language>) {
        assert_eq!(
            detect_language(path, head.as_bytes()),
            expected,
            "{path} / {head:?}"
        );
    }

    #[test]
    fn detects_by_extension_name_and_shebang() {
        use Language::*;
        check("a/b.py", "", Some(Python));
        check("stubs/x.pyi", "", Some(Python));
        check("web/app.mjs", "", Some(JavaScript));
        check("web/App.jsx", "", Some(JavaScript));
        check("web/app.ts", "", Some(TypeScript));
        check("types/x.d.ts", "", Some(TypeScript));
        check("web/App.tsx", "", Some(Tsx));
        check("src/components/App.vue", "", Some(TypeScript));
        check("src/routes/+page.svelte", "", Some(TypeScript));
        check("cmd/main.go", "", Some(Go));
        check("src/lib.rs", "", Some(Rust));
        check("src/A.java", "", Some(Java));
        check("x.c", "", Some(C));
        check("x.h", "int f(void);\n", Some(C));
        check("x.h", "namespace a { class B; }\n", Some(Cpp));
        check("x.hpp", "", Some(Cpp));
        check("x.CPP", "", Some(Cpp));
        check("x.C", "", Some(Cpp));
        check("lib/x.rb", "", Some(Ruby));
        check("Rakefile", "", Some(Ruby));
        check("sub/Gemfile", "", Some(Ruby));
        check("x.gemspec", "", Some(Ruby));
        check("index.php", "", Some(Php));
        check("win\\path\\x.py", "", Some(Python));
        check(
            "bin/tool",
            "#!/usr/bin/env python3\nprint(1)\n",
            Some(Python),
        );
        check("bin/tool", "#!/usr/bin/python3.11 -u\n", Some(Python));
        check(
            "bin/tool",
            "#!/usr/bin/env -S node --experimental\n",
            Some(JavaScript),
        );
        check("bin/tool", "#!/usr/bin/env ruby\n", Some(Ruby));
        check("bin/tool", "#!/usr/bin/php\n", Some(Php));
        check("bin/tool", "#!/bin/sh\n", Some(Bash));
        check("bin/tool", "#!/usr/bin/env bash\n", Some(Bash));
        check("src/Table.kt", "", Some(Kotlin));
        check("core/Functor.scala", "", Some(Scala));
        check("Dapper/SqlMapper.cs", "", Some(CSharp));
        check("Source/Session.swift", "", Some(Swift));
        check("lib/plug/conn.ex", "", Some(Elixir));
        check("test/conn_test.exs", "", Some(Elixir));
        check("lib/bats-core/test_functions.sh", "", Some(Bash));
        check("test/run.bats", "", Some(Bash));
        check("src/Data/Aeson.hs", "", Some(Haskell));
        check("lua/lazy/init.lua", "", Some(Lua));
        check("clap.zig", "", Some(Zig));
        check("README.md", "# Title\n", None);
        check("setup.cfg", "", None);
        check("Makefile", "", None);
        check("noext", "", None);
        check("bin/tool", "#!", None);
    }
}
