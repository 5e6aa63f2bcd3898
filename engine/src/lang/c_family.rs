//! C and C++ (one module; C++ is a superset for our purposes): function definitions (out-of-class
//! C++ methods qualified by their scope, `ns::Type::method`), classes, structs, unions and enums
//! with a body (a `typedef struct {…} name;` takes the typedef name), namespaces, type aliases,
//! typedefs and preprocessor macros; `#include` paths as written; calls, field names and type
//! names as references. Function prototypes and in-class method declarations without a body are
//! not definitions: the body is where the code is.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct CFamily;

impl Grammar for CFamily {
    fn separator(&self) -> &'static str {
        "::"
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_definition" => {
                let declarator = function_declarator(node.child_by_field_name("declarator")?)?;
                let (scope, name) =
                    split_qualified(declarator.child_by_field_name("declarator")?, cx);
                let kind = if cx.in_type() || scope.is_some() {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                };
                DefinitionMatch::new(name, kind).map(|d| d.qualified(scope))
            }
            "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
                node.child_by_field_name("body")?;
                if cx.ancestor_kind(0) == "type_definition" {
                    return None; // named by the typedef, see below
                }
                let (scope, name) = split_qualified(node.child_by_field_name("name")?, cx);
                DefinitionMatch::new(name, specifier_kind(node.kind())).map(|d| d.qualified(scope))
            }
            "type_definition" => {
                let declarator = node
                    .child_by_field_name("declarator")
                    .filter(|d| d.kind() == "type_identifier");
                let ty = node.child_by_field_name("type");
                let with_body = ty.filter(|t| t.child_by_field_name("body").is_some());
                let name = declarator
                    .map(|d| cx.text(d))
                    .or_else(|| with_body.and_then(|t| cx.field_text(t, "name")))?;
                let kind = with_body.map_or(ChunkKind::TypeAlias, |t| specifier_kind(t.kind()));
                DefinitionMatch::new(name, kind)
            }
            "namespace_definition" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Namespace)
            }
            "alias_declaration" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::TypeAlias)
            }
            "preproc_function_def" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Function)
            }
            "preproc_def" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Constant)
            }
            _ => None,
        }
    }

    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &["template_declaration"]
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(
            kind,
            "comment" | "string_literal" | "raw_string_literal" | "preproc_arg"
        )
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "preproc_include" => {
                if let Some(path) = cx.field_text(node, "path") {
                    findings.import(path, Vec::new(), node);
                }
            }
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    let target = match function.kind() {
                        "identifier" => Some(function),
                        "field_expression" => function.child_by_field_name("field"),
                        "qualified_identifier" | "template_function" => innermost_name(function),
                        _ => None,
                    };
                    if let Some(target) = target {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            "field_expression" if !cx.is_field("function") => {
                if let Some(field) = node.child_by_field_name("field") {
                    findings.reference(cx.text(field), ReferenceKind::Name, field);
                }
            }
            "type_identifier" => {
                let is_declared_name = cx.is_field("name")
                    || (cx.is_field("declarator") && cx.ancestor_kind(0) == "type_definition");
                if !is_declared_name {
                    findings.reference(cx.text(node), ReferenceKind::Type, node);
                }
            }
            _ => {}
        }
    }
}

fn specifier_kind(kind: &str) -> ChunkKind {
    match kind {
        "class_specifier" => ChunkKind::Class,
        "enum_specifier" => ChunkKind::Enum,
        _ => ChunkKind::Struct,
    }
}

/// The `function_declarator` under pointer, reference and parenthesised declarators.
fn function_declarator(mut declarator: Node) -> Option<Node> {
    for _ in 0..16 {
        if declarator.kind() == "function_declarator" {
            return Some(declarator);
        }
        declarator = declarator
            .child_by_field_name("declarator")
            .or_else(|| declarator.named_child(0))?;
    }
    None
}

/// (`ns::Widget`, `helper`) of `ns::Widget::helper`; (`None`, `f`) of `f`.
fn split_qualified(mut name: Node, cx: &Context) -> (Option<String>, String) {
    let mut scopes = Vec::new();
    for _ in 0..32 {
        match name.kind() {
            "qualified_identifier" | "nested_namespace_specifier"
                if name.child_by_field_name("name").is_some() =>
            {
                if let Some(scope) = name.child_by_field_name("scope") {
                    scopes.push(cx.text(scope).to_owned());
                }
                match name.child_by_field_name("name") {
                    Some(inner) => name = inner,
                    None => break,
                }
            }
            "template_function" | "template_type" => match name.child_by_field_name("name") {
                Some(inner) => name = inner,
                None => break,
            },
            _ => break,
        }
    }
    let scope = (!scopes.is_empty()).then(|| scopes.join("::"));
    (scope, cx.text(name).to_owned())
}

fn innermost_name(mut node: Node) -> Option<Node> {
    for _ in 0..32 {
        match node.kind() {
            "qualified_identifier" | "template_function" => {
                node = node.child_by_field_name("name")?
            }
            _ => return Some(node),
        }
    }
    None
}
