//! Python: functions, methods, classes, module-level and class-level assignments; `import` and
//! `from … import` statements; calls, attribute names and capitalised names as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Python;

impl Grammar for Python {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_definition" => {
                let kind = if cx.enclosing == Some(ChunkKind::Class) {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                };
                DefinitionMatch::new(cx.field_text(node, "name")?, kind)
            }
            "class_definition" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Class)
            }
            // `NAME = value` at module level and `name = value` in a class body (class attributes,
            // Django model fields).
            "assignment"
                if cx.ancestor_kind(0) == "expression_statement" && is_definition_level(cx) =>
            {
                let left = node
                    .child_by_field_name("left")
                    .filter(|l| cx.kind_of(*l) == "identifier")?;
                DefinitionMatch::new(cx.text(left), ChunkKind::Constant)
            }
            _ => None,
        }
    }

    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &["decorated_definition", "expression_statement"]
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "decorator"]
    }

    /// Strings are walked too: f-strings hold calls.
    fn descend(&self, kind: &str) -> bool {
        kind != "comment"
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    findings.import(module_of(name, cx), Vec::new(), node);
                }
            }
            "import_from_statement" => {
                let Some(module) = node.child_by_field_name("module_name") else {
                    return;
                };
                let mut cursor = node.walk();
                let mut names: Vec<String> = node
                    .children_by_field_name("name", &mut cursor)
                    .map(|name| module_of(name, cx).to_owned())
                    .collect();
                let mut cursor = node.walk();
                if node
                    .children(&mut cursor)
                    .any(|c| cx.kind_of(c) == "wildcard_import")
                {
                    names.push("*".to_owned());
                }
                findings.import(cx.text(module), names, node);
            }
            "call" => {
                if let Some(function) = node.child_by_field_name("function") {
                    match cx.kind_of(function) {
                        "identifier" => {
                            findings.reference(cx.text(function), ReferenceKind::Call, function)
                        }
                        "attribute" => {
                            if let Some(attribute) = function.child_by_field_name("attribute") {
                                findings.reference(
                                    cx.text(attribute),
                                    ReferenceKind::Call,
                                    attribute,
                                );
                            }
                        }
                        _ => {}
                    }
                }
            }
            "attribute" => {
                let is_called = cx.is_field("function") && cx.ancestor_kind(0) == "call";
                if !is_called && let Some(attribute) = node.child_by_field_name("attribute") {
                    let name = cx.text(attribute);
                    findings.reference(name, capitalised_kind(name), attribute);
                }
            }
            "decorator" => {
                if let Some(target) = node
                    .named_child(0)
                    .filter(|t| cx.kind_of(*t) == "identifier")
                {
                    findings.reference(cx.text(target), ReferenceKind::Call, target);
                }
            }
            "identifier" => {
                let name = cx.text(node);
                if name.starts_with(|c: char| c.is_ascii_uppercase())
                    && !is_definition_name(cx)
                    && !cx.is_field("function")
                {
                    findings.reference(name, ReferenceKind::Type, node);
                }
            }
            _ => {}
        }
    }
}

/// A statement directly in the module or directly in a class body.
fn is_definition_level(cx: &Context) -> bool {
    match cx.enclosing {
        None => cx.ancestor_kind(1) == "module",
        Some(ChunkKind::Class) => {
            cx.ancestor_kind(1) == "block" && cx.ancestor_kind(2) == "class_definition"
        }
        Some(_) => false,
    }
}

/// `a.b` of `import a.b as c`.
fn module_of<'a>(name: Node, cx: &Context<'a, '_>) -> &'a str {
    if cx.kind_of(name) == "aliased_import" {
        cx.field_text(name, "name").unwrap_or("")
    } else {
        cx.text(name)
    }
}

fn capitalised_kind(name: &str) -> ReferenceKind {
    if name.starts_with(|c: char| c.is_ascii_uppercase()) {
        ReferenceKind::Type
    } else {
        ReferenceKind::Name
    }
}

/// The name being defined by a class, function or module-level assignment is not a reference;
/// nor are the parts of an import.
fn is_definition_name(cx: &Context) -> bool {
    match cx.ancestor_kind(0) {
        "class_definition" | "function_definition" => cx.is_field("name"),
        "assignment" => cx.is_field("left"),
        "dotted_name" | "aliased_import" | "import_from_statement" => true,
        _ => false,
    }
}
