//! Scala: classes, case classes, objects, traits, enums, functions and abstract function
//! declarations (`Type.method`), type definitions, `val`/`var` at template level, givens and
//! package objects; `import` paths and package clauses; calls as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, function_kind};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Scala;

impl Grammar for Scala {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let kind = match cx.kind {
            "class_definition" | "object_definition" => ChunkKind::Class,
            "trait_definition" => ChunkKind::Trait,
            "enum_definition" => ChunkKind::Enum,
            "package_object" => ChunkKind::Module,
            "function_definition" | "function_declaration" => function_kind(cx),
            "type_definition" => ChunkKind::TypeAlias,
            "given_definition" => ChunkKind::Constant,
            "val_definition" | "var_definition" | "val_declaration" | "var_declaration"
                if cx.enclosing.is_none() || cx.in_type() =>
            {
                let name = node
                    .child_by_field_name("pattern")
                    .or_else(|| node.child_by_field_name("name"))
                    .filter(|n| cx.kind_of(*n) == "identifier")?;
                return DefinitionMatch::new(cx.text(name), ChunkKind::Constant);
            }
            _ => return None,
        };
        DefinitionMatch::new(cx.field_text(node, "name")?, kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "block_comment", "annotation"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "package_clause" => {
                if let Some(name) = node.named_child(0) {
                    findings.package = Some(cx.text(name).to_owned());
                }
            }
            "import_declaration" => {
                let text = cx.text(node).trim_start_matches("import").trim();
                if !text.is_empty() {
                    findings.import(text, Vec::new(), node);
                }
            }
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    let target = match cx.kind_of(function) {
                        "identifier" => Some(function),
                        "field_expression" => function.child_by_field_name("field"),
                        _ => None,
                    };
                    if let Some(target) = target {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            _ => {}
        }
    }
}
