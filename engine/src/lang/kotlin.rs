//! Kotlin: classes (interfaces and enum classes by their keyword), objects and companion objects,
//! functions (`Class.method`), secondary constructors, properties at file and class level, type
//! aliases; `import` paths and the package header; calls as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, child_text, function_kind};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Kotlin;

impl Grammar for Kotlin {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "class_declaration" => {
                let mut cursor = node.walk();
                let mut kind = ChunkKind::Class;
                for child in node.children(&mut cursor) {
                    match cx.kind_of(child) {
                        "interface" => kind = ChunkKind::Interface,
                        "enum_class_body" => kind = ChunkKind::Enum,
                        _ => {}
                    }
                }
                DefinitionMatch::new(cx.field_text(node, "name")?, kind)
            }
            "object_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Class)
            }
            "companion_object" => DefinitionMatch::new(
                cx.field_text(node, "name").unwrap_or("Companion"),
                ChunkKind::Class,
            ),
            "function_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, function_kind(cx))
            }
            "secondary_constructor" => DefinitionMatch::new("constructor", ChunkKind::Method),
            "property_declaration" if cx.enclosing.is_none() || cx.in_type() => {
                let variable = {
                    let mut cursor = node.walk();
                    node.named_children(&mut cursor)
                        .find(|c| cx.kind_of(*c) == "variable_declaration")?
                };
                DefinitionMatch::new(
                    child_text(variable, &["identifier"], cx)?,
                    ChunkKind::Constant,
                )
            }
            "type_alias" => {
                DefinitionMatch::new(cx.field_text(node, "type")?, ChunkKind::TypeAlias)
            }
            _ => None,
        }
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["line_comment", "block_comment", "annotation"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(kind, "line_comment" | "block_comment" | "string_literal")
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "package_header" => {
                if let Some(name) = child_text(node, &["qualified_identifier", "identifier"], cx) {
                    findings.package = Some(name.to_owned());
                }
            }
            "import" => {
                if let Some(path) = child_text(node, &["qualified_identifier", "identifier"], cx) {
                    let name = path.rsplit('.').next().unwrap_or(path).to_owned();
                    findings.import(path, vec![name], node);
                }
            }
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    let target = match cx.kind_of(callee) {
                        "identifier" => Some(callee),
                        "navigation_expression" => {
                            callee.named_child(callee.named_child_count().saturating_sub(1) as u32)
                        }
                        _ => None,
                    };
                    if let Some(target) = target.filter(|t| cx.kind_of(*t) == "identifier") {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            _ => {}
        }
    }
}
