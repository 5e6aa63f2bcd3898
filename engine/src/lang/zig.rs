//! Zig: functions (`Type.method` inside a container), `const` declarations whose value is a
//! container (`const Parser = struct { … }` is a struct, likewise enums, unions, error sets,
//! opaque types) or any other value at container level (constants), and `test` blocks;
//! `@import` of a literal path as imports; calls as references.

use tree_sitter::Node;

use super::extract::{
    Context, DefinitionMatch, Findings, Grammar, child_text, function_kind, unquote,
};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Zig;

impl Grammar for Zig {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, function_kind(cx))
            }
            "variable_declaration" if cx.enclosing.is_none() || cx.in_type() => {
                let name = child_text(node, &["identifier"], cx)?;
                let mut cursor = node.walk();
                let kind = node
                    .named_children(&mut cursor)
                    .find_map(|c| match cx.kind_of(c) {
                        "struct_declaration" | "union_declaration" | "opaque_declaration" => {
                            Some(ChunkKind::Struct)
                        }
                        "enum_declaration" | "error_set_declaration" => Some(ChunkKind::Enum),
                        _ => None,
                    })
                    .unwrap_or(ChunkKind::Constant);
                DefinitionMatch::new(name, kind)
            }
            "test_declaration" => {
                let name = child_text(node, &["string", "identifier"], cx)
                    .map(|n| unquote(n).to_owned())
                    .unwrap_or_else(|| "test".to_owned());
                DefinitionMatch::new(name, ChunkKind::Function)
            }
            _ => None,
        }
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "builtin_function"
                if child_text(node, &["builtin_identifier"], cx) == Some("@import") =>
            {
                let mut cursor = node.walk();
                let arguments = node
                    .named_children(&mut cursor)
                    .find(|c| cx.kind_of(*c) == "arguments");
                if let Some(path) = arguments.and_then(|a| child_text(a, &["string"], cx)) {
                    findings.import(unquote(path), Vec::new(), node);
                }
            }
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    let text = cx.text(function);
                    let name = text.rsplit('.').next().unwrap_or(text);
                    findings.reference(name, ReferenceKind::Call, function);
                }
            }
            _ => {}
        }
    }
}
