//! C#: namespaces (block and file-scoped), classes, records, structs, interfaces, enums,
//! delegates, methods, constructors, destructors, operators, properties, events and local
//! functions (`Type.Method`); `using` directives and the namespace as the package; invocations
//! and object creations as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, function_kind};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct CSharp;

impl Grammar for CSharp {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let kind = match cx.kind {
            "namespace_declaration" | "file_scoped_namespace_declaration" => ChunkKind::Namespace,
            "class_declaration" | "record_declaration" => ChunkKind::Class,
            "struct_declaration" => ChunkKind::Struct,
            "interface_declaration" => ChunkKind::Interface,
            "enum_declaration" => ChunkKind::Enum,
            "delegate_declaration" => ChunkKind::TypeAlias,
            "method_declaration" | "constructor_declaration" | "destructor_declaration" => {
                ChunkKind::Method
            }
            "property_declaration" | "event_declaration" => ChunkKind::Method,
            "local_function_statement" => function_kind(cx),
            "operator_declaration" | "conversion_operator_declaration" => {
                return DefinitionMatch::new("operator", ChunkKind::Method);
            }
            "indexer_declaration" => return DefinitionMatch::new("this", ChunkKind::Method),
            _ => return None,
        };
        DefinitionMatch::new(cx.field_text(node, "name")?, kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "attribute_list"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "namespace_declaration" | "file_scoped_namespace_declaration" => {
                if findings.package.is_none()
                    && let Some(name) = cx.field_text(node, "name")
                {
                    findings.package = Some(name.to_owned());
                }
            }
            "using_directive" => {
                let mut cursor = node.walk();
                let name = node
                    .named_children(&mut cursor)
                    .filter(|c| matches!(cx.kind_of(*c), "qualified_name" | "identifier"))
                    .last();
                if let Some(name) = name {
                    let path = cx.text(name);
                    let last = path.rsplit('.').next().unwrap_or(path).to_owned();
                    findings.import(path, vec![last], node);
                }
            }
            "invocation_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    let target = match cx.kind_of(function) {
                        "identifier" => Some(function),
                        "member_access_expression" => function.child_by_field_name("name"),
                        _ => None,
                    };
                    if let Some(target) = target {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field_name("type") {
                    findings.reference(cx.text(ty), ReferenceKind::Type, ty);
                }
            }
            _ => {}
        }
    }
}
