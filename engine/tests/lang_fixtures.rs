//! The analysers and the code graph on hand-written fixture repositories, one per language
//! (`tests/fixtures/<language>/`).
//!
//! Two layers: hand-checked facts per language (exact definition spans and qualified names,
//! imports resolved to files, test ↔ subject pairs, resolved references, PageRank neighbourhoods),
//! and golden files (`tests/expect/<language>.txt`) listing every chunk, definition, import and
//! graph edge, regenerated with `UPDATE_EXPECT=1 cargo test -p swex-engine --test lang_fixtures`
//! and reviewed in the diff.

mod support;

use std::collections::{HashSet, VecDeque};
use std::fmt::Write as _;

use support::{Fixture, check_golden, check_invariants};
use swex_engine::analysis::ChunkKind;
use swex_engine::graph::{
    CodeGraph, Direction, EdgeKind, NodeId, NodeKind, PageRankMethod, PageRankOptions,
};

const FIXTURES: [&str; 10] = [
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
];

/// `path` for a file node, `path#Qualified.name@start` for a definition.
fn label(graph: &CodeGraph, id: NodeId) -> String {
    let node = graph.node(id);
    match node.kind {
        NodeKind::File => node.path.clone(),
        NodeKind::Definition(_) => format!("{}#{}@{}", node.path, node.qualified_name, node.start),
    }
}

/// The node a label names: `path`, `path#Qualified.name` or `path#Qualified.name@start`.
/// Panics with the label when it is missing or ambiguous.
fn node(graph: &CodeGraph, label_text: &str) -> NodeId {
    let Some((path, definition)) = label_text.split_once('#') else {
        return graph
            .file_node(label_text)
            .unwrap_or_else(|| panic!("no file {label_text}"));
    };
    let (qualified, start) = match definition.split_once('@') {
        Some((q, line)) => (q, Some(line.parse::<u32>().expect("line number after @"))),
        None => (definition, None),
    };
    let found: Vec<NodeId> = graph
        .nodes()
        .filter(|&id| {
            let node = graph.node(id);
            node.kind != NodeKind::File
                && node.path == path
                && node.qualified_name == qualified
                && start.is_none_or(|s| s == node.start)
        })
        .collect();
    match found.as_slice() {
        [one] => *one,
        [] => panic!("no definition {label_text}"),
        _ => panic!("{label_text} is ambiguous: add @line"),
    }
}

fn edges_of_kind(graph: &CodeGraph, kind: EdgeKind) -> Vec<(String, String)> {
    let mut edges: Vec<(String, String)> = graph
        .nodes()
        .flat_map(|id| {
            graph
                .neighbours(id, &[kind], Direction::Outgoing)
                .into_iter()
                .map(move |(to, _)| (id, to))
        })
        .map(|(from, to)| (label(graph, from), label(graph, to)))
        .collect();
    edges.sort();
    edges
}

fn render(fixture: &Fixture, graph: &CodeGraph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Fixture `{}`: analyses and graph.", fixture.name);
    let _ = writeln!(
        out,
        "# Regenerate: UPDATE_EXPECT=1 cargo test -p swex-engine --test lang_fixtures"
    );
    for file in &fixture.files {
        let a = &file.analysis;
        let language = a
            .language
            .map_or("text".to_owned(), |l| format!("{l:?}").to_lowercase());
        let _ = writeln!(
            out,
            "\n== {} ({language}, {} lines{})",
            file.path,
            a.line_count,
            if a.has_syntax_errors {
                ", syntax errors"
            } else {
                ""
            }
        );
        if let Some(package) = &a.package {
            let _ = writeln!(out, "package {package}");
        }
        for chunk in &a.chunks {
            let _ = writeln!(
                out,
                "chunk {}-{} {:?} {}",
                chunk.start,
                chunk.end,
                chunk.kind,
                chunk.name.as_deref().unwrap_or("-")
            );
        }
        for d in &a.definitions {
            let _ = writeln!(
                out,
                "def {}-{} {:?} {}",
                d.start, d.end, d.kind, d.qualified_name
            );
        }
        for import in &a.imports {
            let names = if import.names.is_empty() {
                String::new()
            } else {
                format!(" [{}]", import.names.join(", "))
            };
            let _ = writeln!(out, "import {} {}{names}", import.line, import.module);
        }
        if !a.references.is_empty() {
            let refs: Vec<String> = a
                .references
                .iter()
                .map(|r| format!("{}:{:?}@{}", r.name, r.kind, r.line))
                .collect();
            let _ = writeln!(out, "refs {}", refs.join(" "));
        }
    }
    let stats = graph.stats();
    let _ = writeln!(
        out,
        "\n== graph: {} files, {} definitions, {} contains, {} imports, {} references, {} tests",
        stats.files,
        stats.definitions,
        stats.contains,
        stats.imports,
        stats.references,
        stats.tests
    );
    for kind in [EdgeKind::Imports, EdgeKind::Tests, EdgeKind::References] {
        for (from, to) in edges_of_kind(graph, kind) {
            let _ = writeln!(out, "{kind:?} {from} -> {to}");
        }
    }
    out
}

/// The languages with definition-level chunks but no import resolution or test pairing yet:
/// golden files and definitions only.
const DEFINITION_FIXTURES: [&str; 9] = [
    "kotlin", "scala", "csharp", "swift", "elixir", "bash", "haskell", "lua", "zig",
];

#[test]
fn golden_analyses_of_definition_only_languages() {
    for name in DEFINITION_FIXTURES {
        let fixture = Fixture::load(name);
        let graph = CodeGraph::build(&fixture.pairs());
        check_golden(&format!("{name}.txt"), &render(&fixture, &graph));
        for file in &fixture.files {
            if let Err(problem) = check_invariants(&file.text, &file.analysis) {
                panic!("{name}/{}: {problem}", file.path);
            }
            assert!(
                file.analysis.language.is_some(),
                "{name}/{}: no language",
                file.path
            );
            assert!(
                !file.analysis.has_syntax_errors,
                "{name}/{} has syntax errors",
                file.path
            );
        }
    }
}

/// Hand-checked definitions of the definition-only languages: (fixture, path, qualified name,
/// kind, start, end).
const MORE_DEFINITIONS: &[(&str, &str, &str, ChunkKind, u32, u32)] = {
    use ChunkKind::*;
    &[
        ("kotlin", "src/Table.kt", "Table", Class, 6, 20),
        (
            "kotlin",
            "src/Table.kt",
            "Table.registerColumn",
            Method,
            10,
            15,
        ),
        ("kotlin", "src/Table.kt", "ColumnType", Interface, 22, 24),
        ("kotlin", "src/Table.kt", "SortOrder", Enum, 26, 26),
        ("kotlin", "src/Table.kt", "SchemaUtils", Class, 28, 30),
        ("kotlin", "src/Table.kt", "Columns", TypeAlias, 32, 32),
        ("scala", "src/Functor.scala", "Functor", Trait, 6, 13),
        ("scala", "src/Functor.scala", "Functor.map", Method, 9, 9),
        (
            "scala",
            "src/Functor.scala",
            "Functor.apply",
            Method,
            16,
            16,
        ),
        ("scala", "src/Functor.scala", "Nested", Class, 21, 21),
        ("scala", "src/Functor.scala", "Id", TypeAlias, 27, 27),
        ("csharp", "src/SqlMapper.cs", "Dapper", Namespace, 5, 40),
        (
            "csharp",
            "src/SqlMapper.cs",
            "Dapper.SqlMapper",
            Class,
            7,
            29,
        ),
        (
            "csharp",
            "src/SqlMapper.cs",
            "Dapper.SqlMapper.Query",
            Method,
            10,
            16,
        ),
        (
            "csharp",
            "src/SqlMapper.cs",
            "Dapper.SqlMapper.ITypeHandler",
            Interface,
            23,
            26,
        ),
        (
            "csharp",
            "src/SqlMapper.cs",
            "Dapper.CommandDefinition",
            Struct,
            31,
            35,
        ),
        (
            "csharp",
            "src/SqlMapper.cs",
            "Dapper.DbString",
            Class,
            39,
            39,
        ),
        ("swift", "Sources/Session.swift", "Session", Class, 3, 19),
        (
            "swift",
            "Sources/Session.swift",
            "Session.request",
            Method,
            11,
            16,
        ),
        (
            "swift",
            "Sources/Session.swift",
            "HTTPMethod",
            Struct,
            21,
            24,
        ),
        (
            "swift",
            "Sources/Session.swift",
            "RequestInterceptor",
            Interface,
            26,
            28,
        ),
        ("swift", "Sources/Session.swift", "Session", Impl, 30, 32),
        ("swift", "Sources/Session.swift", "AFError", Enum, 34, 36),
        ("elixir", "lib/conn.ex", "Plug.Conn", Module, 1, 28),
        (
            "elixir",
            "lib/conn.ex",
            "Plug.Conn.send_resp",
            Function,
            11,
            17,
        ),
        (
            "elixir",
            "lib/conn.ex",
            "Plug.Conn.put_status",
            Function,
            19,
            21,
        ),
        (
            "elixir",
            "lib/conn.ex",
            "Plug.Conn.run_before_send",
            Function,
            23,
            23,
        ),
        (
            "elixir",
            "lib/conn.ex",
            "Plug.Conn.Unfetched",
            Module,
            25,
            27,
        ),
        ("elixir", "lib/conn.ex", "Plug.Exception", Interface, 30, 32),
        ("bash", "lib/test_functions.bash", "run", Function, 7, 13),
        (
            "bash",
            "lib/test_functions.bash",
            "bats_pipe",
            Function,
            15,
            17,
        ),
        ("haskell", "src/Types.hs", "Value", Struct, 10, 14),
        ("haskell", "src/Types.hs", "FromJSON", Trait, 20, 22),
        ("haskell", "src/Types.hs", "FromJSON", Impl, 24, 25),
        ("haskell", "src/Types.hs", "withObject", Function, 27, 29),
        ("lua", "lua/loader.lua", "M.load", Method, 6, 10),
        ("lua", "lua/loader.lua", "M.reload", Function, 16, 18),
        ("lua", "lua/loader.lua", "deactivate", Function, 20, 22),
        ("zig", "src/clap.zig", "Arg", Struct, 4, 12),
        ("zig", "src/clap.zig", "Arg.hasValue", Method, 9, 11),
        ("zig", "src/clap.zig", "ParseError", Enum, 14, 14),
        ("zig", "src/clap.zig", "parse", Function, 20, 25),
    ]
};

#[test]
fn definition_only_languages_have_exact_spans_and_qualified_names() {
    for &(name, path, qualified, kind, start, end) in MORE_DEFINITIONS {
        let fixture = Fixture::load(name);
        let analysis = &fixture.file(path).analysis;
        let found = analysis.definitions.iter().any(|d| {
            d.qualified_name == qualified && d.kind == kind && d.start == start && d.end == end
        });
        assert!(
            found,
            "{name}: no {kind:?} {qualified} at {start}-{end} in {path}; found: {:?}",
            analysis
                .definitions
                .iter()
                .map(|d| format!("{:?} {} {}-{}", d.kind, d.qualified_name, d.start, d.end))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn golden_analyses_and_graphs() {
    for name in FIXTURES {
        let fixture = Fixture::load(name);
        let graph = CodeGraph::build(&fixture.pairs());
        check_golden(&format!("{name}.txt"), &render(&fixture, &graph));
    }
}

#[test]
fn every_fixture_file_satisfies_the_chunk_invariants() {
    for name in FIXTURES {
        let fixture = Fixture::load(name);
        assert!(fixture.files.len() >= 3, "fixture {name} is too small");
        for file in &fixture.files {
            if let Err(problem) = check_invariants(&file.text, &file.analysis) {
                panic!("{name}/{}: {problem}", file.path);
            }
            if file.analysis.language.is_some() {
                assert!(
                    !file.analysis.has_syntax_errors,
                    "{name}/{} has syntax errors",
                    file.path
                );
            }
        }
    }
}

/// Hand-checked facts about one fixture.
struct Expected {
    fixture: &'static str,
    /// (path, qualified name, kind, start, end)
    definitions: &'static [(&'static str, &'static str, ChunkKind, u32, u32)],
    /// (importing file, imported file)
    imports: &'static [(&'static str, &'static str)],
    /// Pairs that must not be linked by an import edge.
    not_imports: &'static [(&'static str, &'static str)],
    /// (test file, subject file)
    tests: &'static [(&'static str, &'static str)],
    /// (referring node, referred definition), as node labels (see `node`)
    references: &'static [(&'static str, &'static str)],
    /// A node whose direct neighbours personalised PageRank must rank first.
    pagerank_seed: &'static str,
}

const EXPECTED: &[Expected] = {
    use ChunkKind::*;
    &[
        Expected {
            fixture: "python",
            definitions: &[
                ("shop/models.py", "Item", Class, 7, 12),
                ("shop/models.py", "Order", Class, 15, 29),
                ("shop/models.py", "Order.__init__", Method, 16, 17),
                ("shop/models.py", "Order.total", Method, 19, 22),
                ("shop/models.py", "Order.add", Method, 24, 29),
                ("shop/models.py", "Order.add.check", Function, 25, 26),
                ("shop/pricing.py", "TAX_RATE", Constant, 1, 1),
                ("shop/pricing.py", "total_price", Function, 4, 6),
                ("tests/test_pricing.py", "test_total", Function, 5, 7),
            ],
            imports: &[
                ("shop/__init__.py", "shop/models.py"),
                ("shop/models.py", "shop/pricing.py"),
                ("tests/test_pricing.py", "shop/pricing.py"),
                ("tests/test_pricing.py", "shop/__init__.py"),
                // A script outside any package imports its neighbour by bare name.
                ("scripts/report.py", "scripts/helpers.py"),
            ],
            // `import json` is the standard library, not a module that happens to be named json.
            not_imports: &[("scripts/report.py", "shop/json.py")],
            tests: &[("tests/test_pricing.py", "shop/pricing.py")],
            references: &[
                ("shop/models.py#Order.total", "shop/pricing.py#total_price"),
                ("shop/pricing.py#total_price", "shop/pricing.py#apply_tax"),
                ("tests/test_pricing.py#test_total", "shop/models.py#Order"),
                ("shop/models.py#Order.add", "shop/models.py#Order.add.check"),
            ],
            pagerank_seed: "shop/pricing.py#total_price",
        },
        Expected {
            fixture: "javascript",
            definitions: &[
                ("src/cart.js", "Cart", Class, 4, 20),
                ("src/cart.js", "Cart.constructor", Method, 8, 10),
                ("src/cart.js", "Cart.add", Method, 12, 15),
                ("src/cart.js", "Cart.total", Method, 17, 19),
                ("src/cart.js", "emptyCart", Function, 22, 22),
                ("src/format.js", "formatPrice", Function, 1, 3),
                ("src/util/log/index.js", "log", Function, 1, 3),
            ],
            imports: &[
                ("src/cart.js", "src/format.js"),
                ("src/cart.js", "src/util/log/index.js"),
                ("src/cart.test.js", "src/cart.js"),
            ],
            not_imports: &[],
            tests: &[("src/cart.test.js", "src/cart.js")],
            references: &[
                ("src/cart.js#Cart.total", "src/format.js#formatPrice"),
                ("src/cart.js#Cart.add", "src/util/log/index.js#log"),
                ("src/cart.test.js", "src/cart.js#Cart"),
                ("src/cart.js#emptyCart", "src/cart.js#Cart"),
            ],
            pagerank_seed: "src/cart.js#Cart.total",
        },
        Expected {
            fixture: "typescript",
            definitions: &[
                ("src/shapes.ts", "Shape", Interface, 1, 3),
                ("src/shapes.ts", "Shape.area", Method, 2, 2),
                ("src/shapes.ts", "Point", TypeAlias, 5, 5),
                ("src/shapes.ts", "Kind", Enum, 7, 10),
                ("src/shapes.ts", "Base", Class, 12, 18),
                ("src/shapes.ts", "Base.describe", Method, 15, 17),
                ("src/shapes.ts", "Circle", Class, 20, 28),
                ("src/shapes.ts", "Circle.area", Method, 25, 27),
                ("src/geometry/measure.ts", "totalArea", Function, 3, 5),
                ("src/geometry/measure.ts", "Units", Namespace, 7, 9),
                ("src/App.tsx", "Props", TypeAlias, 4, 4),
                ("src/App.tsx", "App", Function, 6, 9),
                ("src/App.tsx", "Panel", Function, 11, 16),
                // Components: their `<script>` elements analysed where they are in the file.
                ("src/ui/AreaCard.vue", "formatArea", Function, 20, 22),
                ("src/ui/ShapeList.svelte", "describeAll", Function, 10, 12),
            ],
            imports: &[
                ("src/App.tsx", "src/geometry/index.ts"),
                ("src/geometry/index.ts", "src/shapes.ts"),
                ("src/geometry/index.ts", "src/geometry/measure.ts"),
                ("src/geometry/measure.ts", "src/shapes.ts"),
                ("src/shapes.spec.ts", "src/shapes.ts"),
                ("src/ui/AreaCard.vue", "src/geometry/index.ts"),
                ("src/ui/ShapeList.svelte", "src/shapes.ts"),
                ("src/ui/AreaCard.spec.ts", "src/ui/AreaCard.vue"),
            ],
            not_imports: &[],
            tests: &[
                ("src/shapes.spec.ts", "src/shapes.ts"),
                ("src/ui/AreaCard.spec.ts", "src/ui/AreaCard.vue"),
            ],
            references: &[
                (
                    "src/ui/ShapeList.svelte#describeAll",
                    "src/shapes.ts#Circle",
                ),
                ("src/App.tsx#App", "src/App.tsx#Panel"),
                ("src/App.tsx#App", "src/shapes.ts#Circle"),
                ("src/App.tsx#App", "src/geometry/measure.ts#totalArea"),
                ("src/shapes.ts#Circle", "src/shapes.ts#Base"),
            ],
            pagerank_seed: "src/App.tsx#App",
        },
        Expected {
            fixture: "go",
            definitions: &[
                ("cart/cart.go", "Cart", Struct, 10, 13),
                ("cart/cart.go", "Adder", Interface, 15, 18),
                ("cart/cart.go", "Cart.Add", Method, 20, 23),
                ("cart/cart.go", "Cart.Total", Method, 25, 28),
                ("cart/cart.go", "describe", Function, 30, 32),
                ("money/money.go", "Amount", TypeAlias, 3, 4),
                ("money/money.go", "Zero", Constant, 6, 6),
                ("money/money.go", "Sum", Function, 8, 15),
                ("cmd/shop/main.go", "main", Function, 9, 13),
            ],
            imports: &[
                ("cart/cart.go", "money/money.go"),
                ("cmd/shop/main.go", "cart/cart.go"),
            ],
            not_imports: &[],
            tests: &[("cart/cart_test.go", "cart/cart.go")],
            references: &[
                ("cart/cart.go#Cart.Total", "money/money.go#Sum"),
                ("cart/cart_test.go#TestTotal", "cart/cart.go#describe"),
                ("cmd/shop/main.go#main", "cart/cart.go#Cart.Total"),
            ],
            pagerank_seed: "cart/cart.go#Cart.Total",
        },
        Expected {
            fixture: "rust",
            definitions: &[
                ("src/lib.rs", "total_area", Function, 8, 11),
                ("src/shapes/mod.rs", "Shape", Trait, 5, 12),
                ("src/shapes/mod.rs", "Shape::area", Method, 7, 7),
                ("src/shapes/mod.rs", "Shape::describe", Method, 9, 11),
                ("src/shapes/circle.rs", "Circle", Struct, 4, 7),
                ("src/shapes/circle.rs", "Circle", Impl, 9, 13),
                ("src/shapes/circle.rs", "Circle::new", Method, 10, 12),
                ("src/shapes/circle.rs", "Circle", Impl, 15, 19),
                ("src/shapes/circle.rs", "Circle::area", Method, 16, 18),
                ("src/shapes/circle.rs", "tests", Module, 21, 29),
                ("src/shapes/circle.rs", "tests::unit_area", Function, 25, 28),
                ("src/util.rs", "square", Function, 1, 3),
            ],
            imports: &[
                ("src/lib.rs", "src/shapes/mod.rs"),
                ("src/lib.rs", "src/util.rs"),
                ("src/shapes/circle.rs", "src/shapes/mod.rs"),
                ("src/shapes/circle.rs", "src/util.rs"),
                ("src/shapes/mod.rs", "src/shapes/circle.rs"),
                ("tests/shapes.rs", "src/lib.rs"),
                ("tests/shapes.rs", "src/shapes/mod.rs"),
            ],
            not_imports: &[],
            tests: &[("tests/shapes.rs", "src/shapes/mod.rs")],
            references: &[
                ("src/shapes/circle.rs#Circle::area", "src/util.rs#square"),
                ("tests/shapes.rs#total", "src/lib.rs#total_area"),
                ("tests/shapes.rs#total", "src/shapes/circle.rs#Circle::new"),
                (
                    "src/shapes/circle.rs#Circle@9",
                    "src/shapes/circle.rs#Circle@4",
                ),
            ],
            pagerank_seed: "src/shapes/circle.rs#Circle::area",
        },
        Expected {
            fixture: "java",
            definitions: &[
                (
                    "src/main/java/com/acme/shop/Cart.java",
                    "Cart",
                    Class,
                    7,
                    24,
                ),
                (
                    "src/main/java/com/acme/shop/Cart.java",
                    "Cart.add",
                    Method,
                    11,
                    15,
                ),
                (
                    "src/main/java/com/acme/shop/Cart.java",
                    "Cart.total",
                    Method,
                    17,
                    19,
                ),
                (
                    "src/main/java/com/acme/shop/Cart.java",
                    "Cart.Line",
                    Class,
                    21,
                    23,
                ),
                (
                    "src/main/java/com/acme/shop/money/Money.java",
                    "Money",
                    Class,
                    5,
                    13,
                ),
                (
                    "src/main/java/com/acme/shop/money/Money.java",
                    "Money.sum",
                    Method,
                    6,
                    12,
                ),
                (
                    "src/main/java/com/acme/shop/Checkout.java",
                    "Checkout",
                    Interface,
                    5,
                    9,
                ),
                (
                    "src/main/java/com/acme/shop/Checkout.java",
                    "Checkout.Status",
                    Enum,
                    8,
                    8,
                ),
                (
                    "src/test/java/com/acme/shop/CartTest.java",
                    "CartTest.totalSumsItems",
                    Method,
                    9,
                    14,
                ),
            ],
            imports: &[
                (
                    "src/main/java/com/acme/shop/Cart.java",
                    "src/main/java/com/acme/shop/money/Money.java",
                ),
                (
                    "src/main/java/com/acme/shop/Checkout.java",
                    "src/main/java/com/acme/shop/money/Money.java",
                ),
                (
                    "src/test/java/com/acme/shop/CartTest.java",
                    "src/main/java/com/acme/shop/money/Money.java",
                ),
            ],
            not_imports: &[],
            tests: &[(
                "src/test/java/com/acme/shop/CartTest.java",
                "src/main/java/com/acme/shop/Cart.java",
            )],
            references: &[
                (
                    "src/main/java/com/acme/shop/Cart.java#Cart.total",
                    "src/main/java/com/acme/shop/money/Money.java#Money.sum",
                ),
                (
                    "src/test/java/com/acme/shop/CartTest.java#CartTest.totalSumsItems",
                    "src/main/java/com/acme/shop/Cart.java#Cart.add",
                ),
                (
                    "src/main/java/com/acme/shop/Checkout.java#Checkout.pay",
                    "src/main/java/com/acme/shop/Cart.java#Cart",
                ),
            ],
            pagerank_seed: "src/main/java/com/acme/shop/Cart.java#Cart.total",
        },
        Expected {
            fixture: "c",
            definitions: &[
                ("include/vec.h", "vec_t", Struct, 4, 8),
                ("src/vec.c", "grow", Function, 4, 6),
                ("src/vec.c", "vec_push", Function, 8, 11),
                ("src/vec.c", "vec_sum", Function, 13, 17),
                ("src/main.c", "DOUBLE", Function, 4, 4),
                ("src/main.c", "main", Function, 6, 11),
            ],
            imports: &[
                ("src/main.c", "include/vec.h"),
                ("src/vec.c", "include/vec.h"),
                ("tests/test_vec.c", "include/vec.h"),
            ],
            not_imports: &[],
            tests: &[("tests/test_vec.c", "src/vec.c")],
            references: &[
                ("src/main.c#main", "src/vec.c#vec_push"),
                ("src/vec.c#vec_push", "src/vec.c#grow"),
                ("src/main.c#main", "include/vec.h#vec_t"),
            ],
            pagerank_seed: "src/vec.c#vec_push",
        },
        Expected {
            fixture: "cpp",
            definitions: &[
                ("include/geo/shape.hpp", "geo", Namespace, 4, 20),
                ("include/geo/shape.hpp", "geo::Shape", Class, 6, 12),
                ("include/geo/shape.hpp", "geo::Box", Struct, 14, 18),
                ("include/geo/shape.hpp", "geo::Box::get", Method, 17, 17),
                ("src/shape.cpp", "geo::Shape::describe", Method, 7, 11),
                ("src/circle.cpp", "geo::Circle", Class, 5, 12),
                ("src/circle.cpp", "geo::Circle::area", Method, 8, 8),
                ("src/circle.cpp", "unit_area", Function, 16, 19),
            ],
            imports: &[
                ("src/shape.cpp", "include/geo/shape.hpp"),
                ("src/circle.cpp", "include/geo/shape.hpp"),
                ("tests/shape_test.cpp", "include/geo/shape.hpp"),
            ],
            not_imports: &[],
            tests: &[("tests/shape_test.cpp", "src/shape.cpp")],
            references: &[
                (
                    "src/circle.cpp#geo::Circle",
                    "include/geo/shape.hpp#geo::Shape",
                ),
                (
                    "src/circle.cpp#unit_area",
                    "src/circle.cpp#geo::Circle::area",
                ),
                (
                    "tests/shape_test.cpp#main",
                    "include/geo/shape.hpp#geo::Box::get",
                ),
            ],
            pagerank_seed: "src/circle.cpp#geo::Circle",
        },
        Expected {
            fixture: "ruby",
            definitions: &[
                ("lib/shop.rb", "Shop", Module, 4, 7),
                ("lib/shop.rb", "Shop.VERSION", Constant, 6, 6),
                ("lib/shop/cart.rb", "Shop.Cart", Class, 2, 22),
                ("lib/shop/cart.rb", "Shop.Cart.add", Method, 10, 13),
                ("lib/shop/cart.rb", "Shop.Cart.empty", Method, 19, 21),
                ("lib/shop/money.rb", "Shop.Money", Class, 2, 20),
                ("lib/shop/money.rb", "Shop.Money.sum", Method, 9, 11),
                ("lib/shop/money.rb", "Shop.Money.to_s", Method, 13, 15),
            ],
            imports: &[
                ("lib/shop.rb", "lib/shop/cart.rb"),
                ("lib/shop.rb", "lib/shop/money.rb"),
                ("spec/shop/cart_spec.rb", "lib/shop.rb"),
            ],
            not_imports: &[],
            tests: &[("spec/shop/cart_spec.rb", "lib/shop/cart.rb")],
            references: &[
                (
                    "lib/shop/cart.rb#Shop.Cart.total",
                    "lib/shop/money.rb#Shop.Money.sum",
                ),
                ("spec/shop/cart_spec.rb", "lib/shop/cart.rb#Shop.Cart.add"),
                // A call inside a string interpolation.
                (
                    "lib/shop/money.rb#Shop.Money.to_s",
                    "lib/shop/money.rb#Shop.Money.label",
                ),
            ],
            pagerank_seed: "lib/shop/cart.rb#Shop.Cart.total",
        },
        Expected {
            fixture: "php",
            definitions: &[
                ("src/Models/User.php", "User", Class, 7, 20),
                ("src/Models/User.php", "User.__construct", Method, 12, 14),
                ("src/Models/User.php", "User.slug", Method, 16, 19),
                ("src/Models/Model.php", "Model", Class, 5, 13),
                ("src/Models/Model.php", "Model.save", Method, 9, 12),
                ("src/Support/Str.php", "Str.slug", Method, 7, 10),
                ("src/Support/Str.php", "helper", Function, 13, 13),
                ("src/bootstrap.php", "Boots", Interface, 5, 8),
                ("src/bootstrap.php", "Loggable", Trait, 10, 16),
                ("src/bootstrap.php", "Loggable.log", Method, 12, 15),
            ],
            imports: &[
                ("src/Models/User.php", "src/Support/Str.php"),
                ("src/bootstrap.php", "src/Support/Str.php"),
                ("tests/Models/UserTest.php", "src/Models/User.php"),
            ],
            not_imports: &[],
            tests: &[("tests/Models/UserTest.php", "src/Models/User.php")],
            references: &[
                (
                    "src/Models/User.php#User.slug",
                    "src/Support/Str.php#Str.slug",
                ),
                ("src/Models/User.php#User", "src/Models/Model.php#Model"),
                (
                    "tests/Models/UserTest.php#UserTest.testSlug",
                    "src/Models/User.php#User.slug",
                ),
            ],
            pagerank_seed: "src/Models/User.php#User.slug",
        },
    ]
};

fn each_expected(mut check: impl FnMut(&Expected, &Fixture, &CodeGraph)) {
    assert_eq!(EXPECTED.len(), FIXTURES.len());
    for expected in EXPECTED {
        let fixture = Fixture::load(expected.fixture);
        let graph = CodeGraph::build(&fixture.pairs());
        check(expected, &fixture, &graph);
    }
}

#[test]
fn definitions_have_exact_spans_and_qualified_names() {
    each_expected(|expected, fixture, _| {
        for &(path, qualified, kind, start, end) in expected.definitions {
            let found = fixture.file(path).analysis.definitions.iter().any(|d| {
                d.qualified_name == qualified && d.kind == kind && d.start == start && d.end == end
            });
            assert!(
                found,
                "{}: no {kind:?} {qualified} at {start}-{end} in {path}; found: {:?}",
                expected.fixture,
                fixture
                    .file(path)
                    .analysis
                    .definitions
                    .iter()
                    .map(|d| format!("{:?} {} {}-{}", d.kind, d.qualified_name, d.start, d.end))
                    .collect::<Vec<_>>()
            );
        }
    });
}

fn assert_edge(graph: &CodeGraph, fixture: &str, from: &str, to: &str, kind: EdgeKind) {
    let (from_id, to_id) = (node(graph, from), node(graph, to));
    let found = graph
        .neighbours(from_id, &[kind], Direction::Outgoing)
        .iter()
        .any(|(n, _)| *n == to_id);
    assert!(found, "{fixture}: no {kind:?} edge {from} -> {to}");
    // The same edge seen from its target.
    let reverse = graph
        .neighbours(to_id, &[kind], Direction::Incoming)
        .iter()
        .any(|(n, _)| *n == from_id);
    assert!(
        reverse,
        "{fixture}: {kind:?} edge {from} -> {to} is missing from {to}'s incoming edges"
    );
}

#[test]
fn imports_resolve_to_the_right_files() {
    each_expected(|expected, fixture, graph| {
        for (from, to) in expected.imports {
            assert_edge(graph, &fixture.name, from, to, EdgeKind::Imports);
        }
    });
}

#[test]
fn imports_do_not_resolve_to_look_alike_modules() {
    each_expected(|expected, fixture, graph| {
        for (from, to) in expected.not_imports {
            let (from_id, to_id) = (node(graph, from), node(graph, to));
            let linked = graph
                .neighbours(from_id, &[EdgeKind::Imports], Direction::Outgoing)
                .iter()
                .any(|(n, _)| *n == to_id);
            assert!(
                !linked,
                "{}: unexpected import edge {from} -> {to}",
                fixture.name
            );
        }
    });
}

#[test]
fn test_files_pair_with_their_subjects() {
    each_expected(|expected, fixture, graph| {
        for (test, subject) in expected.tests {
            assert_edge(graph, &fixture.name, test, subject, EdgeKind::Tests);
        }
        // Exactly the expected pairs: no other file is taken for a test.
        assert_eq!(
            graph.stats().tests,
            expected.tests.len(),
            "{}: tests edges",
            fixture.name
        );
    });
}

#[test]
fn references_resolve_to_definitions() {
    each_expected(|expected, fixture, graph| {
        for (from, to) in expected.references {
            assert_edge(graph, &fixture.name, from, to, EdgeKind::References);
        }
    });
}

#[test]
fn containment_links_files_to_definitions_and_definitions_to_members() {
    each_expected(|_, fixture, graph| {
        for file in &fixture.files {
            let file_id = graph.file_node(&file.path).expect("file node");
            let top_level: HashSet<String> = graph
                .neighbours(file_id, &[EdgeKind::Contains], Direction::Outgoing)
                .into_iter()
                .map(|(id, _)| graph.node(id).qualified_name.clone())
                .collect();
            let expected: HashSet<String> = file
                .analysis
                .definitions
                .iter()
                .filter(|d| d.parent.is_none())
                .map(|d| d.qualified_name.clone())
                .collect();
            assert_eq!(top_level, expected, "{}/{}", fixture.name, file.path);
        }
    });
}

/// Breadth-first distances over all edges, both directions.
fn distances(graph: &CodeGraph, seed: NodeId) -> Vec<Option<usize>> {
    let mut distance = vec![None; graph.node_count()];
    distance[seed.0 as usize] = Some(0);
    let mut queue = VecDeque::from([seed]);
    while let Some(current) = queue.pop_front() {
        let d = distance[current.0 as usize].expect("queued nodes have a distance");
        for (next, _) in graph.neighbours(current, &[], Direction::Both) {
            if distance[next.0 as usize].is_none() {
                distance[next.0 as usize] = Some(d + 1);
                queue.push_back(next);
            }
        }
    }
    distance
}

#[test]
fn pagerank_ranks_the_seeds_neighbours_first() {
    each_expected(|expected, fixture, graph| {
        let seed = node(graph, expected.pagerank_seed);
        let ranked = graph.personalized_pagerank(&[(seed, 1.0)], &PageRankOptions::default());
        assert_eq!(
            ranked.first().map(|(id, _)| *id),
            Some(seed),
            "{}: the seed ranks first",
            fixture.name
        );
        let distance = distances(graph, seed);
        let neighbours: HashSet<NodeId> = graph
            .neighbours(seed, &[], Direction::Both)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert!(
            !neighbours.is_empty(),
            "{}: seed without neighbours",
            fixture.name
        );
        let top: Vec<NodeId> = ranked
            .iter()
            .skip(1)
            .take(neighbours.len())
            .map(|(id, _)| *id)
            .collect();
        assert!(
            neighbours.contains(&top[0]),
            "{}: best non-seed node is not a neighbour",
            fixture.name
        );
        // Every neighbour outranks every node three or more steps away.
        let position = |id: NodeId| ranked.iter().position(|(n, _)| *n == id);
        let worst_neighbour = neighbours
            .iter()
            .map(|&n| position(n).expect("neighbours are ranked"))
            .max()
            .unwrap_or(0);
        for (rank, (id, _)) in ranked.iter().enumerate() {
            if distance[id.0 as usize].is_some_and(|d| d >= 3) {
                assert!(
                    rank > worst_neighbour,
                    "{}: {} (3+ steps) outranks a neighbour",
                    fixture.name,
                    label(graph, *id)
                );
            }
        }
        // Scores are (nearly) a probability distribution: push leaves tiny residuals unspent.
        let total: f64 = ranked.iter().map(|(_, s)| s).sum();
        assert!(
            total <= 1.0 + 1e-9 && total > 1.0 - 1e-4,
            "{}: scores sum to {total}",
            fixture.name
        );
    });
}

#[test]
fn push_pagerank_agrees_with_power_iteration() {
    each_expected(|expected, fixture, graph| {
        let seed = node(graph, expected.pagerank_seed);
        let seeds = [
            (seed, 2.0),
            (graph.file_node(&graph.node(seed).path).expect("file"), 1.0),
        ];
        let push = graph.personalized_pagerank(
            &seeds,
            &PageRankOptions {
                method: PageRankMethod::Push,
                ..PageRankOptions::default()
            },
        );
        let exact = graph.personalized_pagerank(
            &seeds,
            &PageRankOptions {
                method: PageRankMethod::PowerIteration,
                max_iterations: 500,
                tolerance: 1e-12,
                ..PageRankOptions::default()
            },
        );
        let exact_score = |id: NodeId| {
            exact
                .iter()
                .find(|(n, _)| *n == id)
                .map_or(0.0, |(_, s)| *s)
        };
        for (id, score) in &push {
            let difference = (score - exact_score(*id)).abs();
            assert!(
                difference < 1e-5,
                "{}: {} push {score} vs exact {}",
                fixture.name,
                label(graph, *id),
                exact_score(*id)
            );
        }
        let top =
            |ranked: &[(NodeId, f64)]| ranked.iter().take(5).map(|(id, _)| *id).collect::<Vec<_>>();
        assert_eq!(top(&push), top(&exact), "{}: top five differ", fixture.name);
    });
}

#[test]
fn pagerank_without_usable_seeds_is_empty_and_limit_truncates() {
    let fixture = Fixture::load("python");
    let graph = CodeGraph::build(&fixture.pairs());
    assert!(
        graph
            .personalized_pagerank(&[], &PageRankOptions::default())
            .is_empty()
    );
    assert!(
        graph
            .personalized_pagerank(&[(NodeId(0), 0.0)], &PageRankOptions::default())
            .is_empty()
    );
    assert!(
        graph
            .personalized_pagerank(&[(NodeId(u32::MAX), 1.0)], &PageRankOptions::default())
            .is_empty()
    );
    let seed = graph.file_node("shop/models.py").expect("file node");
    let limited = graph.personalized_pagerank(
        &[(seed, 1.0)],
        &PageRankOptions {
            limit: 3,
            ..PageRankOptions::default()
        },
    );
    assert_eq!(limited.len(), 3);
}

#[test]
fn definitions_are_found_by_bare_qualified_and_dotted_suffix_names() {
    let fixture = Fixture::load("python");
    let graph = CodeGraph::build(&fixture.pairs());
    let check = |query: &str, expected: &[&str]| {
        let found: Vec<String> = graph
            .definitions_named(query)
            .into_iter()
            .map(|id| label(&graph, id))
            .collect();
        assert_eq!(found, expected, "definitions_named({query:?})");
    };
    check("total_price", &["shop/pricing.py#total_price@4"]);
    check("total", &["shop/models.py#Order.total@19"]);
    check("Order.add", &["shop/models.py#Order.add@24"]);
    check("Order::add", &["shop/models.py#Order.add@24"]);
    check("add.check", &["shop/models.py#Order.add.check@25"]);
    check("models.Order.add", &["shop/models.py#Order.add@24"]);
    check("shop.models.Order", &["shop/models.py#Order@15"]);
    check("pricing.Order", &[]);
    check("Missing", &[]);
    check("", &[]);
}

#[test]
fn node_at_finds_the_innermost_definition() {
    let fixture = Fixture::load("python");
    let graph = CodeGraph::build(&fixture.pairs());
    let check = |path: &str, line: u32, expected: Option<&str>| {
        let found = graph.node_at(path, line).map(|id| label(&graph, id));
        assert_eq!(found.as_deref(), expected, "node_at({path}, {line})");
    };
    check(
        "shop/models.py",
        26,
        Some("shop/models.py#Order.add.check@25"),
    );
    check("shop/models.py", 28, Some("shop/models.py#Order.add@24"));
    check("shop/models.py", 3, Some("shop/models.py"));
    check("missing.py", 1, None);
}

#[test]
fn analyses_round_trip_through_json() {
    // The index cache stores analyses serialised; nothing may be lost on the way.
    for name in FIXTURES {
        for file in Fixture::load(name).files {
            let json = serde_json::to_string(&file.analysis).expect("serialise");
            let back: swex_engine::analysis::FileAnalysis =
                serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, file.analysis, "{name}/{}", file.path);
        }
    }
}
