//! JavaScript, TypeScript and TSX (one grammar family): functions, classes, methods, arrow
//! functions bound to names, `X.prototype.m = function` assignments, interfaces, type aliases,
//! enums, namespaces, top-level constants; ES imports, re-exports, `require()` and dynamic
//! `import()`; calls, `new`, member names, type names and capitalised identifiers (classes used
//! as values, JSX components) as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, is_capitalised, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct JavaScript;

fn is_function_value(node: Node) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

impl Grammar for JavaScript {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let name = |field| cx.field_text(node, field);
        match cx.kind {
            "function_declaration" | "generator_function_declaration" => {
                DefinitionMatch::new(name("name")?, ChunkKind::Function)
            }
            "class_declaration" | "abstract_class_declaration" => {
                DefinitionMatch::new(name("name")?, ChunkKind::Class)
            }
            "method_definition" | "abstract_method_signature" | "method_signature" => {
                DefinitionMatch::new(name("name")?, ChunkKind::Method)
            }
            "field_definition" | "public_field_definition" => {
                node.child_by_field_name("value")
                    .filter(|v| is_function_value(*v))?;
                DefinitionMatch::new(
                    name("property").or_else(|| name("name"))?,
                    ChunkKind::Method,
                )
            }
            "variable_declarator" => {
                let kind = match node.child_by_field_name("value") {
                    Some(value) if is_function_value(value) => ChunkKind::Function,
                    Some(value) if value.kind() == "class" => ChunkKind::Class,
                    _ if is_module_constant(cx) => ChunkKind::Constant,
                    _ => return None,
                };
                let target = node
                    .child_by_field_name("name")
                    .filter(|n| n.kind() == "identifier")?;
                DefinitionMatch::new(cx.text(target), kind)
            }
            // `Foo.prototype.bar = function …`, `exports.baz = () => …`.
            "assignment_expression" => {
                node.child_by_field_name("right")
                    .filter(|v| is_function_value(*v))?;
                let left = node.child_by_field_name("left")?;
                match left.kind() {
                    "identifier" => DefinitionMatch::new(cx.text(left), ChunkKind::Function),
                    "member_expression" => {
                        let property = cx.field_text(left, "property")?;
                        let object = left.child_by_field_name("object")?;
                        let owner = (object.kind() == "member_expression"
                            && cx.field_text(object, "property") == Some("prototype"))
                        .then(|| cx.field_text(object, "object"))
                        .flatten();
                        match owner {
                            Some(owner) => DefinitionMatch::new(property, ChunkKind::Method)
                                .map(|d| d.qualified(Some(owner.to_owned()))),
                            None => DefinitionMatch::new(property, ChunkKind::Function),
                        }
                    }
                    _ => None,
                }
            }
            "interface_declaration" => DefinitionMatch::new(name("name")?, ChunkKind::Interface),
            "type_alias_declaration" => DefinitionMatch::new(name("name")?, ChunkKind::TypeAlias),
            "enum_declaration" => DefinitionMatch::new(name("name")?, ChunkKind::Enum),
            "internal_module" | "module" => {
                DefinitionMatch::new(unquote(name("name")?), ChunkKind::Namespace)
            }
            _ => None,
        }
    }

    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &[
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "expression_statement",
            "ambient_declaration",
        ]
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "decorator"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "import_statement" => {
                let Some(source) = node.child_by_field_name("source") else {
                    return;
                };
                let mut names = Vec::new();
                let mut cursor = node.walk();
                for clause in node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() == "import_clause")
                {
                    imported_names(clause, cx, &mut names);
                }
                findings.import(unquote(cx.text(source)), names, node);
            }
            "export_statement" => {
                if let Some(source) = node.child_by_field_name("source") {
                    let mut names = Vec::new();
                    imported_names(node, cx, &mut names);
                    findings.import(unquote(cx.text(source)), names, node);
                }
            }
            "call_expression" => {
                let Some(function) = node.child_by_field_name("function") else {
                    return;
                };
                match function.kind() {
                    "import" => module_argument(node, cx, findings),
                    "identifier" if cx.text(function) == "require" => {
                        module_argument(node, cx, findings)
                    }
                    "identifier" => {
                        findings.reference(cx.text(function), ReferenceKind::Call, function)
                    }
                    "member_expression" => {
                        if let Some(property) = function.child_by_field_name("property") {
                            findings.reference(cx.text(property), ReferenceKind::Call, property);
                        }
                    }
                    _ => {}
                }
            }
            "new_expression" => {
                if let Some(constructor) = node.child_by_field_name("constructor") {
                    let name = match constructor.kind() {
                        "member_expression" => cx.field_text(constructor, "property").unwrap_or(""),
                        _ => cx.text(constructor),
                    };
                    findings.reference(name, ReferenceKind::Call, constructor);
                }
            }
            "member_expression" => {
                let called = cx.is_field("function") || cx.is_field("constructor");
                if !called && let Some(property) = node.child_by_field_name("property") {
                    findings.reference(cx.text(property), ReferenceKind::Name, property);
                }
            }
            // `<Panel …>`: a component is called.
            "jsx_opening_element" | "jsx_self_closing_element" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let target = match name.kind() {
                        "member_expression" => name.child_by_field_name("property"),
                        _ => Some(name),
                    };
                    if let Some(target) = target.filter(|t| is_capitalised(cx.text(*t))) {
                        findings.reference(cx.text(target), ReferenceKind::Call, target);
                    }
                }
            }
            "type_identifier" if !cx.is_field("name") => {
                findings.reference(cx.text(node), ReferenceKind::Type, node);
            }
            "identifier" => {
                let name = cx.text(node);
                let defining =
                    cx.is_field("name") || cx.is_field("function") || cx.is_field("constructor");
                let in_import = matches!(
                    cx.ancestor_kind(0),
                    "import_specifier" | "import_clause" | "namespace_import" | "export_specifier"
                );
                if is_capitalised(name) && !defining && !in_import {
                    findings.reference(name, ReferenceKind::Type, node);
                }
            }
            _ => {}
        }
    }
}

/// `const NAME = …` at module level (possibly exported).
fn is_module_constant(cx: &Context) -> bool {
    let Some(declaration) = cx.ancestor(0).filter(|p| p.kind() == "lexical_declaration") else {
        return false;
    };
    let is_const = declaration
        .child(0)
        .is_some_and(|keyword| keyword.kind() == "const");
    let at_top = match cx.ancestor_kind(1) {
        "program" => true,
        "export_statement" => cx.ancestor_kind(2) == "program",
        _ => false,
    };
    is_const && at_top
}

/// Names brought in by an import clause or re-exported by `export { a, b } from`.
fn imported_names(node: Node, cx: &Context, names: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "identifier" => names.push(cx.text(child).to_owned()),
            "named_imports" | "export_clause" => imported_names(child, cx, names),
            "import_specifier" | "export_specifier" => {
                if let Some(name) = cx.field_text(child, "name") {
                    names.push(unquote(name).to_owned());
                }
            }
            _ => {}
        }
    }
}

/// `require('x')` and `import('x')` with a literal argument.
fn module_argument(call: Node, cx: &Context, findings: &mut Findings) {
    let argument = call
        .child_by_field_name("arguments")
        .and_then(|arguments| arguments.named_child(0))
        .filter(|a| matches!(a.kind(), "string" | "template_string"));
    if let Some(argument) = argument {
        let module = unquote(cx.text(argument));
        if !module.contains("${") {
            findings.import(module, Vec::new(), call);
        }
    }
}
