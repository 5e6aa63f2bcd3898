//! Go: functions, methods (qualified by their receiver type, `Recv.Method`), struct, interface and
//! other type declarations, interface methods, top-level constants and variables; import paths and
//! the package clause; calls, selector names and type names as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Go;

impl Grammar for Go {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Function)
            }
            "method_declaration" => {
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| receiver_type(r, cx));
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Method)
                    .map(|d| d.qualified(receiver))
            }
            "method_elem" => DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Method),
            "type_spec" | "type_alias" => {
                let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => ChunkKind::Struct,
                    Some("interface_type") => ChunkKind::Interface,
                    _ => ChunkKind::TypeAlias,
                };
                DefinitionMatch::new(cx.field_text(node, "name")?, kind)
            }
            "const_spec" | "var_spec" if cx.enclosing.is_none() && is_top_level_spec(cx) => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Constant)
            }
            _ => None,
        }
    }

    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &["type_declaration", "const_declaration", "var_declaration"]
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(
            kind,
            "comment" | "interpreted_string_literal" | "raw_string_literal"
        )
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "package_clause" => {
                if let Some(name) = node.named_child(0) {
                    findings.package = Some(cx.text(name).to_owned());
                }
            }
            "import_spec" => {
                if let Some(path) = cx.field_text(node, "path") {
                    findings.import(unquote(path), Vec::new(), node);
                }
            }
            "call_expression" => {
                let Some(function) = node.child_by_field_name("function") else {
                    return;
                };
                let target = match function.kind() {
                    "identifier" => Some(function),
                    "selector_expression" => function.child_by_field_name("field"),
                    _ => None,
                };
                if let Some(target) = target {
                    findings.reference(cx.text(target), ReferenceKind::Call, target);
                }
            }
            "selector_expression" if !cx.is_field("function") => {
                if let Some(field) = node.child_by_field_name("field") {
                    findings.reference(cx.text(field), ReferenceKind::Name, field);
                }
            }
            "type_identifier" if !cx.is_field("name") => {
                findings.reference(cx.text(node), ReferenceKind::Type, node);
            }
            _ => {}
        }
    }
}

/// `Server` of `(s *Server)`, `(s Server[T])`.
fn receiver_type(receiver: Node, cx: &Context) -> Option<String> {
    let parameter = receiver.named_child(0)?;
    let mut ty = parameter.child_by_field_name("type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = ty.child_by_field_name("type")?,
            "parenthesized_type" => ty = ty.named_child(0)?,
            _ => return Some(cx.text(ty).to_owned()),
        }
    }
}

fn is_top_level_spec(cx: &Context) -> bool {
    let mut depth = 0;
    loop {
        match cx.ancestor_kind(depth) {
            "const_declaration" | "var_declaration" | "var_spec_list" => depth += 1,
            "source_file" => return true,
            _ => return false,
        }
    }
}
