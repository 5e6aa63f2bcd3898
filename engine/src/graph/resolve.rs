//! Import resolution: from an [`Import`] as written to the snapshot files it names.
//!
//! Per language (only files present in the snapshot are ever returned; standard-library and
//! third-party imports simply resolve to nothing):
//! - Python: `a.b.c` is `a/b/c.py` or `a/b/c/__init__.py` under some source root: a file whose
//!   whole module path is `a.b.c` wins, then (for one-component names imported by a script outside
//!   any package) one in the importing file's directory, then the shortest path below a directory
//!   that is not itself a package (so `json` never resolves to `pkg/serializers/json.py`). `from m import x` also resolves `m.x` when `x` is a submodule. Relative imports
//!   (`.x`, `..x`, `from . import y`) climb from the importing file's package.
//! - JavaScript/TypeScript: relative specifiers with extension and `index.*` resolution (and TS's
//!   `./x.js` meaning `./x.ts`); `@/x` and `~/x` as `src/x`; bare specifiers only when such a path
//!   exists from the root or `src/`.
//! - Go: the import path minus the module path of a `go.mod` whose module prefixes it, as a
//!   directory: every non-test `.go` file in it. Without a matching `go.mod`, the longest suffix of
//!   the import path (two components at least) that is a directory with `.go` files.
//! - Rust: `crate::`, `self::`, `super::` and crate-name (`Cargo.toml` `[package] name`) paths walk
//!   `x.rs` / `x/mod.rs` module files from the crate root (nearest directory with `lib.rs` or
//!   `main.rs`) or the current module's directory; the deepest module file reached is the target,
//!   and items below it (`crate::a::Item`) resolve to `a`'s file. `mod x;` is `self::x`.
//! - Java: `a.b.C` is a file ending in `a/b/C.java` (static imports drop trailing members);
//!   `a.b.*` is every `.java` file in a directory ending in `a/b`.
//! - C/C++: `"x.h"` relative to the including file first, then (also for `<x.h>`) any file whose
//!   path ends with the include path, closest to the including file.
//! - Ruby: `./x` (from `require_relative`) relative to the file; `require 'a/b'` as a file ending in
//!   `a/b.rb`, closest first.
//! - PHP: `use A\B\C` as a file ending in `A/B/C.php`, `B/C.php` (PSR-4 roots drop leading
//!   namespace parts) or, when unique, `C.php`; `require` paths relative to the file, then the root,
//!   then by suffix.
//!
//! When several files qualify, the one closest to the importing file wins (most shared leading
//! directories), so resolution is deterministic.

use std::collections::{HashMap, HashSet};

use super::paths::{FileTable, dir_of, file_name, join, normalize_join};
use crate::analysis::{FileAnalysis, Import, Language};
use swex_text::paths::{Extension, file_stem};

/// Everything the resolvers need to know about the snapshot, built once.
pub(crate) struct Resolver<'a> {
    pub files: FileTable<'a>,
    languages: Vec<Option<Language>>,
    /// Python module path (`a.b.c`) of each Python file, by its last component.
    python_by_last: HashMap<String, Vec<(u32, String)>>,
    /// (module path, directory) of every `go.mod`.
    go_modules: Vec<(String, &'a str)>,
    /// Rust crate name → crate root directory (`<dir of Cargo.toml>/src`).
    rust_crates: HashMap<String, String>,
    /// Directories holding a `lib.rs` or `main.rs`.
    rust_roots: HashSet<&'a str>,
}

const JS_EXTENSIONS: [&str; 10] = [
    ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue",
];

impl<'a> Resolver<'a> {
    pub fn new(files: &[(&'a str, &FileAnalysis)]) -> Self {
        let table = FileTable::new(files.iter().map(|(path, _)| *path).collect());
        let languages = files
            .iter()
            .map(|(_, analysis)| analysis.language)
            .collect();
        let mut python_by_last: HashMap<String, Vec<(u32, String)>> = HashMap::new();
        let mut go_modules = Vec::new();
        let mut rust_crates = HashMap::new();
        let mut rust_roots = HashSet::new();
        for (index, (path, analysis)) in files.iter().enumerate() {
            let index = index as u32;
            let name = file_name(path);
            match analysis.language {
                Some(Language::Python) => {
                    if let Some(module) = python_module_path(path) {
                        let last = module.rsplit('/').next().unwrap_or(&module).to_owned();
                        python_by_last
                            .entry(last)
                            .or_default()
                            .push((index, module.replace('/', ".")));
                    }
                }
                Some(Language::Rust) if name == "lib.rs" || name == "main.rs" => {
                    rust_roots.insert(dir_of(path));
                }
                _ => {}
            }
            if name == "go.mod"
                && let Some(module) = &analysis.package
            {
                go_modules.push((module.clone(), dir_of(path)));
            }
            if name == "Cargo.toml"
                && let Some(crate_name) = &analysis.package
            {
                rust_crates.insert(crate_name.clone(), join(dir_of(path), "src"));
            }
        }
        // Longest module path first, so nested modules win over their parents.
        go_modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Self {
            files: table,
            languages,
            python_by_last,
            go_modules,
            rust_crates,
            rust_roots,
        }
    }

    pub fn language(&self, file: u32) -> Option<Language> {
        self.languages[file as usize]
    }

    /// Files an import names, deduplicated, never the importing file itself.
    pub fn resolve(&self, from: u32, import: &Import) -> Vec<u32> {
        let mut targets = match self.language(from) {
            Some(Language::Python) => self.python(from, import),
            Some(Language::JavaScript | Language::TypeScript | Language::Tsx) => {
                self.javascript(from, &import.module)
            }
            Some(Language::Go) => self.go(&import.module),
            Some(Language::Rust) => self.rust(from, &import.module).into_iter().collect(),
            Some(Language::Java) => self.java(from, import),
            Some(Language::C | Language::Cpp) => {
                self.c_include(from, &import.module).into_iter().collect()
            }
            Some(Language::Ruby) => self.ruby(from, &import.module).into_iter().collect(),
            Some(Language::Php) => self.php(from, import),
            // Other languages' imports (Kotlin, Scala, C#, Swift, Elixir, Bash, Haskell, Lua,
            // Zig, and any language added to the table) are recorded but not resolved to files.
            _ => Vec::new(),
        };
        targets.retain(|&t| t != from);
        targets.sort_unstable();
        targets.dedup();
        targets
    }

    fn path_of(&self, from: u32) -> &'a str {
        self.files.path(from)
    }

    // ---- Python ----------------------------------------------------------------------------

    fn python(&self, from: u32, import: &Import) -> Vec<u32> {
        let module = import.module.as_str();
        let mut targets = Vec::new();
        let submodules = import.names.iter().filter(|n| n.as_str() != "*");
        if module.starts_with('.') {
            let dots = module.bytes().take_while(|&b| b == b'.').count();
            let mut base = dir_of(self.path_of(from)).to_owned();
            for _ in 1..dots {
                if base.is_empty() {
                    return targets;
                }
                base = dir_of(&base).to_owned();
            }
            let rest = module[dots..].replace('.', "/");
            let package = join(&base, &rest);
            targets.extend(self.python_at(&package));
            for name in submodules {
                targets.extend(self.python_at(&join(&package, name)));
            }
        } else {
            targets.extend(self.python_absolute(from, module));
            for name in submodules {
                targets.extend(self.python_absolute(from, &format!("{module}.{name}")));
            }
        }
        targets
    }

    /// `p.py`, `p.pyi` or `p/__init__.py` for a path without extension.
    fn python_at(&self, path: &str) -> Option<u32> {
        if path.is_empty() {
            return self.files.get("__init__.py");
        }
        self.files
            .get(&format!("{path}.py"))
            .or_else(|| self.files.get(&format!("{path}/__init__.py")))
            .or_else(|| self.files.get(&format!("{path}.pyi")))
    }

    fn python_absolute(&self, from: u32, dotted: &str) -> Option<u32> {
        let last = dotted.rsplit('.').next()?;
        let candidates: Vec<&(u32, String)> = self
            .python_by_last
            .get(last)?
            .iter()
            .filter(|(_, module)| {
                module == dotted
                    || (module.ends_with(dotted)
                        && module.as_bytes()[module.len() - dotted.len() - 1] == b'.')
            })
            .collect();
        if let Some((exact, _)) = candidates.iter().find(|(_, module)| module == dotted) {
            return Some(*exact);
        }
        // A script outside any package imports its neighbours by bare name (its directory is on
        // `sys.path`); inside a package, Python 3 imports are absolute.
        let from_dir = dir_of(self.path_of(from));
        let from_is_script = self.files.get(&join(from_dir, "__init__.py")).is_none();
        let sibling = candidates.iter().find(|(file, _)| {
            from_is_script && !dotted.contains('.') && dir_of(self.files.path(*file)) == from_dir
        });
        if let Some((file, _)) = sibling {
            return Some(*file);
        }
        // A suffix match counts only below a source root: `src/pkg/mod.py` is `pkg.mod` when `src/`
        // is not a package itself, but `django/core/serializers/json.py` is never `json`.
        candidates
            .iter()
            .filter(|(_, module)| {
                let root = &module[..module.len() - dotted.len()];
                let root_dir = root.trim_end_matches('.').replace('.', "/");
                self.files.get(&join(&root_dir, "__init__.py")).is_none()
            })
            .min_by_key(|(file, _)| (self.files.path(*file).len(), self.files.path(*file)))
            .map(|(f, _)| *f)
    }

    // ---- JavaScript / TypeScript -----------------------------------------------------------

    fn javascript(&self, from: u32, specifier: &str) -> Vec<u32> {
        let from_dir = dir_of(self.path_of(from));
        let bases: Vec<String> = if specifier == "."
            || specifier == ".."
            || specifier.starts_with("./")
            || specifier.starts_with("../")
        {
            normalize_join(from_dir, specifier).into_iter().collect()
        } else if let Some(rest) = specifier
            .strip_prefix("@/")
            .or_else(|| specifier.strip_prefix("~/"))
        {
            vec![join("src", rest), rest.to_owned()]
        } else if let Some(rest) = specifier.strip_prefix('/') {
            vec![rest.to_owned()]
        } else {
            vec![specifier.to_owned(), join("src", specifier)]
        };
        bases
            .iter()
            .find_map(|base| self.javascript_at(base))
            .into_iter()
            .collect()
    }

    fn javascript_at(&self, base: &str) -> Option<u32> {
        let known_extension =
            JS_EXTENSIONS.iter().any(|e| base.ends_with(e)) || base.ends_with(".json");
        if known_extension && let Some(file) = self.files.get(base) {
            return Some(file);
        }
        for extension in JS_EXTENSIONS {
            if let Some(file) = self.files.get(&format!("{base}{extension}")) {
                return Some(file);
            }
        }
        for extension in JS_EXTENSIONS {
            if let Some(file) = self.files.get(&format!("{base}/index{extension}")) {
                return Some(file);
            }
        }
        // TypeScript ESM code imports `./x.js` meaning `./x.ts`.
        for (js, ts) in [
            (".js", [".ts", ".tsx"]),
            (".jsx", [".tsx", ".tsx"]),
            (".mjs", [".mts", ".mts"]),
            (".cjs", [".cts", ".cts"]),
        ] {
            if let Some(stripped) = base.strip_suffix(js) {
                for extension in ts {
                    if let Some(file) = self.files.get(&format!("{stripped}{extension}")) {
                        return Some(file);
                    }
                }
            }
        }
        None
    }

    // ---- Go --------------------------------------------------------------------------------

    fn go(&self, import_path: &str) -> Vec<u32> {
        let mut dir = None;
        for (module, module_dir) in &self.go_modules {
            if import_path == module {
                dir = Some(module_dir.to_string());
            } else if let Some(rest) = import_path
                .strip_prefix(module.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                dir = Some(join(module_dir, rest));
            }
            if dir.is_some() {
                break;
            }
        }
        let segments: Vec<&str> = import_path.split('/').collect();
        if dir.is_none() && segments.len() >= 2 {
            // The longest suffix of two components or more that is a directory with Go files, at
            // the root or below it (vendored or GOPATH-style trees).
            dir = (0..=segments.len() - 2).find_map(|skip| {
                let suffix = segments[skip..].join("/");
                if self.go_files_in(&suffix).next().is_some() {
                    return Some(suffix);
                }
                self.files
                    .dirs_ending_with(&suffix)
                    .into_iter()
                    .find(|d| self.go_files_in(d).next().is_some())
                    .map(str::to_owned)
            });
        }
        dir.map(|dir| self.go_files_in(&dir).collect())
            .unwrap_or_default()
    }

    fn go_files_in<'s>(&'s self, dir: &str) -> impl Iterator<Item = u32> + 's {
        self.files.in_dir(dir).iter().copied().filter(move |&f| {
            let path = self.files.path(f);
            path.ends_with(".go") && !path.ends_with("_test.go")
        })
    }

    // ---- Rust ------------------------------------------------------------------------------

    fn rust(&self, from: u32, path: &str) -> Option<u32> {
        let from_path = self.path_of(from);
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let (first, rest) = segments.split_first()?;
        let module_dir = rust_module_dir(from_path);
        let (bases, rest): (Vec<String>, &[&str]) = match *first {
            "crate" => (vec![self.rust_crate_root(from_path)], rest),
            "self" => (vec![module_dir], rest),
            "super" => {
                let supers = segments.iter().take_while(|s| **s == "super").count();
                let mut dir = module_dir;
                for _ in 0..supers {
                    dir = dir_of(&dir).to_owned();
                }
                (vec![dir], &segments[supers..])
            }
            name => match self.rust_crates.get(name) {
                Some(root) => (vec![root.clone()], rest),
                // 2018 paths may start at a module in scope: a child of this module or the crate.
                None => (
                    vec![module_dir, self.rust_crate_root(from_path)],
                    &segments[..],
                ),
            },
        };
        let anchored =
            matches!(*first, "crate" | "self" | "super") || self.rust_crates.contains_key(*first);
        for base in &bases {
            let mut dir = base.clone();
            let mut found = None;
            for segment in rest {
                let candidate = self
                    .files
                    .get(&format!("{}.rs", join(&dir, segment)))
                    .or_else(|| self.files.get(&join(&join(&dir, segment), "mod.rs")));
                match candidate {
                    Some(file) => {
                        found = Some(file);
                        dir = join(&dir, segment);
                    }
                    None => break,
                }
            }
            if found.is_some() {
                return found;
            }
            if anchored && let Some(file) = self.rust_module_file(base) {
                return Some(file);
            }
        }
        None
    }

    /// The crate root directory of a file: the nearest ancestor with `lib.rs` or `main.rs`.
    fn rust_crate_root(&self, path: &str) -> String {
        let mut dir = dir_of(path);
        loop {
            if self.rust_roots.contains(dir) {
                return dir.to_owned();
            }
            if dir.is_empty() {
                return dir_of(path).to_owned();
            }
            dir = dir_of(dir);
        }
    }

    /// The file defining the module whose children live in `dir`.
    fn rust_module_file(&self, dir: &str) -> Option<u32> {
        ["lib.rs", "main.rs", "mod.rs"]
            .iter()
            .find_map(|name| self.files.get(&join(dir, name)))
            .or_else(|| {
                (!dir.is_empty())
                    .then(|| self.files.get(&format!("{dir}.rs")))
                    .flatten()
            })
    }

    // ---- Java ------------------------------------------------------------------------------

    fn java(&self, from: u32, import: &Import) -> Vec<u32> {
        let from_path = self.path_of(from);
        let as_path = import.module.replace('.', "/");
        if import.names.iter().any(|n| n == "*") {
            let mut files: Vec<u32> = self
                .files
                .dirs_ending_with(&as_path)
                .into_iter()
                .flat_map(|d| self.files.in_dir(d).iter().copied())
                .filter(|&f| self.files.path(f).ends_with(".java"))
                .collect();
            files.sort_unstable();
            return files;
        }
        let segments: Vec<&str> = as_path.split('/').collect();
        let min = if segments.len() == 1 { 1 } else { 2 };
        (min..=segments.len())
            .rev()
            .find_map(|len| {
                let candidates = self
                    .files
                    .with_suffix(&format!("{}.java", segments[..len].join("/")));
                self.files.closest(from_path, &candidates)
            })
            .into_iter()
            .collect()
    }

    // ---- C / C++ ---------------------------------------------------------------------------

    fn c_include(&self, from: u32, written: &str) -> Option<u32> {
        let from_path = self.path_of(from);
        let quoted = written.starts_with('"');
        let include = written
            .trim_matches(|c| matches!(c, '"' | '<' | '>'))
            .trim();
        if include.is_empty() {
            return None;
        }
        if quoted
            && let Some(file) =
                normalize_join(dir_of(from_path), include).and_then(|p| self.files.get(&p))
        {
            return Some(file);
        }
        let candidates = self.files.with_suffix(include.trim_start_matches("./"));
        self.files.closest(from_path, &candidates)
    }

    // ---- Ruby ------------------------------------------------------------------------------

    fn ruby(&self, from: u32, required: &str) -> Option<u32> {
        let from_path = self.path_of(from);
        let with_extension = if required.ends_with(".rb") {
            required.to_owned()
        } else {
            format!("{required}.rb")
        };
        if required.starts_with("./") || required.starts_with("../") {
            return normalize_join(dir_of(from_path), &with_extension)
                .and_then(|p| self.files.get(&p));
        }
        let candidates = self.files.with_suffix(&with_extension);
        // `lib/` is on the load path of gems; prefer it over test fixtures with the same name.
        let in_lib: Vec<u32> = candidates
            .iter()
            .copied()
            .filter(|&f| {
                self.files.path(f).starts_with("lib/") || self.files.path(f).contains("/lib/")
            })
            .collect();
        self.files.closest(
            from_path,
            if in_lib.is_empty() {
                &candidates
            } else {
                &in_lib
            },
        )
    }

    // ---- PHP -------------------------------------------------------------------------------

    fn php(&self, from: u32, import: &Import) -> Vec<u32> {
        let from_path = self.path_of(from);
        let module = import.module.as_str();
        let is_namespace = module.contains('\\') || !import.names.is_empty();
        if is_namespace {
            let segments: Vec<&str> = module.split('\\').filter(|s| !s.is_empty()).collect();
            for skip in 0..segments.len() {
                let suffix = format!("{}.php", segments[skip..].join("/"));
                let candidates = self.files.with_suffix(&suffix);
                let last = skip + 1 == segments.len();
                if last && segments.len() > 1 && candidates.len() != 1 {
                    break; // a bare class name is only trusted when unique
                }
                if let Some(file) = self.files.closest(from_path, &candidates) {
                    return vec![file];
                }
            }
            return Vec::new();
        }
        let relative = normalize_join(dir_of(from_path), module).and_then(|p| self.files.get(&p));
        let from_root = || normalize_join("", module).and_then(|p| self.files.get(&p));
        let by_suffix = || {
            self.files.closest(
                from_path,
                &self.files.with_suffix(module.trim_start_matches("./")),
            )
        };
        relative
            .or_else(from_root)
            .or_else(by_suffix)
            .into_iter()
            .collect()
    }
}

/// `a/b/c` for `a/b/c.py` and `a/b/c/__init__.py`; `None` for a root `__init__.py`.
pub(crate) fn python_module_path(path: &str) -> Option<String> {
    let without = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".pyi"))
        .or_else(|| path.strip_suffix(".pyw"))?;
    let module = without.strip_suffix("/__init__").unwrap_or(without);
    (module != "__init__" && !module.is_empty()).then(|| module.to_owned())
}

/// The directory holding a Rust file's child modules: its own directory for `mod.rs`, `lib.rs`
/// and `main.rs`, else `dir/stem`.
fn rust_module_dir(path: &str) -> String {
    match file_name(path) {
        "mod.rs" | "lib.rs" | "main.rs" => dir_of(path).to_owned(),
        _ => join(dir_of(path), file_stem(path, Extension::Last)),
    }
}
