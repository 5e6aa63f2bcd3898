//! Java: classes, records, interfaces, annotation types, enums, methods and constructors
//! (`Class.method`); imports (`a.b.C`, wildcard `a.b` with name `*`, static imports) and the package
//! declaration; method calls, field accesses, type names and capitalised identifiers (static
//! receivers) as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, is_capitalised};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Java;

impl Grammar for Java {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let kind = match cx.kind {
            "class_declaration" | "record_declaration" => ChunkKind::Class,
            "interface_declaration" | "annotation_type_declaration" => ChunkKind::Interface,
            "enum_declaration" => ChunkKind::Enum,
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration" => ChunkKind::Method,
            _ => return None,
        };
        DefinitionMatch::new(cx.field_text(node, "name")?, kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["block_comment", "line_comment"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "package_declaration" => {
                if let Some(name) = node
                    .named_children(&mut node.walk())
                    .find(|c| c.kind() != "annotation" && c.kind() != "marker_annotation")
                {
                    findings.package = Some(cx.text(name).to_owned());
                }
            }
            "import_declaration" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                let Some(path) = children
                    .iter()
                    .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"))
                else {
                    return;
                };
                let path = cx.text(*path);
                let names = if children.iter().any(|c| c.kind() == "asterisk") {
                    vec!["*".to_owned()]
                } else {
                    vec![path.rsplit('.').next().unwrap_or(path).to_owned()]
                };
                findings.import(path, names, node);
            }
            "method_invocation" => {
                if let Some(name) = node.child_by_field_name("name") {
                    findings.reference(cx.text(name), ReferenceKind::Call, name);
                }
            }
            "field_access" => {
                if let Some(field) = node.child_by_field_name("field") {
                    findings.reference(cx.text(field), ReferenceKind::Name, field);
                }
            }
            "type_identifier" => findings.reference(cx.text(node), ReferenceKind::Type, node),
            "identifier" => {
                let name = cx.text(node);
                let in_declaration_or_path = cx.is_field("name")
                    || matches!(
                        cx.ancestor_kind(0),
                        "scoped_identifier" | "package_declaration" | "import_declaration"
                    );
                if is_capitalised(name) && !in_declaration_or_path {
                    findings.reference(name, ReferenceKind::Type, node);
                }
            }
            _ => {}
        }
    }
}
