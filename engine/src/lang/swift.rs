//! Swift: classes, actors, structs, enums and extensions (one node kind, told apart by its
//! keyword; an extension is an `Impl` named after the extended type), protocols, functions and
//! protocol requirements (`Type.method`), initialisers, properties at file and type level, type
//! aliases; `import` modules; calls as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, function_kind};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Swift;

impl Grammar for Swift {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "class_declaration" => {
                let kind = match node
                    .child_by_field_name("declaration_kind")
                    .map(|k| cx.text(k))
                {
                    Some("struct") => ChunkKind::Struct,
                    Some("enum") => ChunkKind::Enum,
                    Some("extension") => ChunkKind::Impl,
                    _ => ChunkKind::Class,
                };
                let name = cx.field_text(node, "name")?;
                // `extension Array where Element: X` names `Array`; generic arguments are not
                // part of the name.
                let name = name.split('<').next().unwrap_or(name).trim();
                DefinitionMatch::new(name, kind)
            }
            "protocol_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Interface)
            }
            "function_declaration" | "protocol_function_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, function_kind(cx))
            }
            "init_declaration" => DefinitionMatch::new("init", ChunkKind::Method),
            "deinit_declaration" => DefinitionMatch::new("deinit", ChunkKind::Method),
            "subscript_declaration" => DefinitionMatch::new("subscript", ChunkKind::Method),
            "typealias_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::TypeAlias)
            }
            "property_declaration" if cx.enclosing.is_none() || cx.in_type() => {
                let pattern = node.child_by_field_name("name")?;
                let name = pattern
                    .child_by_field_name("bound_identifier")
                    .map_or_else(|| cx.text(pattern), |b| cx.text(b));
                DefinitionMatch::new(name, ChunkKind::Constant)
            }
            _ => None,
        }
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "multiline_comment"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(
            kind,
            "comment" | "multiline_comment" | "line_string_literal" | "multi_line_string_literal"
        )
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "import_declaration" => {
                let mut cursor = node.walk();
                let module = node
                    .named_children(&mut cursor)
                    .find(|c| cx.kind_of(*c) == "identifier");
                if let Some(module) = module {
                    findings.import(cx.text(module), Vec::new(), node);
                }
            }
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    let target = match cx.kind_of(callee) {
                        "simple_identifier" => Some(callee),
                        "navigation_expression" => callee
                            .child_by_field_name("suffix")
                            .and_then(|s| s.named_child(0)),
                        _ => None,
                    };
                    if let Some(target) = target.filter(|t| cx.kind_of(*t) == "simple_identifier") {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            _ => {}
        }
    }
}
