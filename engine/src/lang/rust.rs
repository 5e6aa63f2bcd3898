//! Rust: functions, methods (`Type::method` inside `impl` and `trait` blocks), structs, unions,
//! enums, traits, impls (named after their self type), inline modules, type aliases, constants,
//! statics and `macro_rules!`; `use` trees flattened to one import per leaf, `mod x;` (recorded
//! as `self::x`) and `extern crate`; calls, macro invocations, field names and type names as
//! references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, is_capitalised};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Rust;

impl Grammar for Rust {
    fn separator(&self) -> &'static str {
        "::"
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let name = || cx.field_text(node, "name");
        let kind = match cx.kind {
            "function_item" | "function_signature_item" => {
                if cx.in_type() {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                }
            }
            "struct_item" | "union_item" => ChunkKind::Struct,
            "enum_item" => ChunkKind::Enum,
            "trait_item" => ChunkKind::Trait,
            "impl_item" => {
                let self_type = node.child_by_field_name("type")?;
                return DefinitionMatch::new(type_name(self_type, cx), ChunkKind::Impl);
            }
            "mod_item" if node.child_by_field_name("body").is_some() => ChunkKind::Module,
            "type_item" => ChunkKind::TypeAlias,
            "const_item" | "static_item" => ChunkKind::Constant,
            "macro_definition" => ChunkKind::Function,
            _ => return None,
        };
        DefinitionMatch::new(name()?, kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["attribute_item", "line_comment", "block_comment"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(
            kind,
            "line_comment" | "block_comment" | "string_literal" | "raw_string_literal"
        )
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "use_declaration" => {
                if let Some(argument) = node.child_by_field_name("argument") {
                    let mut leaves = Vec::new();
                    use_leaves(argument, "", cx, &mut leaves);
                    for (module, names) in leaves {
                        findings.import(&module, names, node);
                    }
                }
            }
            "mod_item" if node.child_by_field_name("body").is_none() => {
                if let Some(name) = cx.field_text(node, "name") {
                    findings.import(&format!("self::{name}"), Vec::new(), node);
                }
            }
            "extern_crate_declaration" => {
                if let Some(name) = cx.field_text(node, "name") {
                    findings.import(name, Vec::new(), node);
                }
            }
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    call_target(function, cx, findings);
                }
            }
            "macro_invocation" => {
                if let Some(mac) = node.child_by_field_name("macro") {
                    let target = if mac.kind() == "scoped_identifier" {
                        mac.child_by_field_name("name")
                    } else {
                        Some(mac)
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
            // `Color::Red`, `Point::new`: the capitalised path is a type.
            "scoped_identifier" | "scoped_type_identifier" => {
                if let Some(path) = node
                    .child_by_field_name("path")
                    .filter(|p| p.kind() == "identifier")
                {
                    let name = cx.text(path);
                    if is_capitalised(name) {
                        findings.reference(name, ReferenceKind::Type, path);
                    }
                }
            }
            // Macro arguments are unparsed token trees: `name(` inside one is taken as a call and a
            // capitalised name as a type, so `assert!(f(x))` and `vec![Point::new()]` still refer.
            "token_tree" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for (index, child) in children.iter().enumerate() {
                    if child.kind() != "identifier" {
                        continue;
                    }
                    let name = cx.text(*child);
                    let called = children.get(index + 1).is_some_and(|next| {
                        next.kind() == "token_tree" && cx.text(*next).starts_with('(')
                    });
                    if called {
                        findings.reference(name, ReferenceKind::Call, *child);
                    } else if is_capitalised(name) {
                        findings.reference(name, ReferenceKind::Type, *child);
                    }
                }
            }
            "type_identifier" if !cx.is_field("name") => {
                findings.reference(cx.text(node), ReferenceKind::Type, node);
            }
            _ => {}
        }
    }
}

fn call_target(function: Node, cx: &Context, findings: &mut Findings) {
    let target = match function.kind() {
        "identifier" => Some(function),
        "field_expression" => function.child_by_field_name("field"),
        "scoped_identifier" => function.child_by_field_name("name"),
        "generic_function" => {
            if let Some(inner) = function.child_by_field_name("function") {
                call_target(inner, cx, findings);
            }
            None
        }
        _ => None,
    };
    if let Some(target) = target {
        findings.reference(cx.text(target), ReferenceKind::Call, target);
    }
}

/// `Point` of `Point<T>`, `&'a fmt::Formatter`, `crate::x::Point`.
fn type_name(mut ty: Node, cx: &Context) -> String {
    loop {
        let next = match ty.kind() {
            "generic_type" | "reference_type" | "pointer_type" => ty.child_by_field_name("type"),
            "scoped_type_identifier" => ty.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(next) => ty = next,
            None => return cx.text(ty).to_owned(),
        }
    }
}

fn join(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else if path.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}::{path}")
    }
}

fn last_segment(path: &str) -> String {
    path.rsplit("::").next().unwrap_or(path).to_owned()
}

/// Flattens a `use` tree into (full path, imported names) leaves.
/// Nesting is capped so that adversarial input cannot exhaust the stack.
fn use_leaves(node: Node, prefix: &str, cx: &Context, out: &mut Vec<(String, Vec<String>)>) {
    use_leaves_at(node, prefix, cx, out, 0);
}

fn use_leaves_at(
    node: Node,
    prefix: &str,
    cx: &Context,
    out: &mut Vec<(String, Vec<String>)>,
    depth: u32,
) {
    const MAX_DEPTH: u32 = 32;
    if depth > MAX_DEPTH {
        return;
    }
    match node.kind() {
        "use_as_clause" => {
            if let Some(path) = cx.field_text(node, "path") {
                let full = join(prefix, path);
                let name = last_segment(&full);
                out.push((full, vec![name]));
            }
        }
        "use_wildcard" => {
            let path = node.named_child(0).map(|p| cx.text(p)).unwrap_or("");
            out.push((join(prefix, path), vec!["*".to_owned()]));
        }
        "scoped_use_list" => {
            let path = cx.field_text(node, "path").unwrap_or("");
            let nested = join(prefix, path);
            if let Some(list) = node.child_by_field_name("list") {
                use_leaves_at(list, &nested, cx, out, depth + 1);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_leaves_at(child, prefix, cx, out, depth + 1);
            }
        }
        // `use a::{self, b}`: `self` is the prefix module itself.
        "self" if !prefix.is_empty() => {
            let name = last_segment(prefix);
            out.push((prefix.to_owned(), vec![name]));
        }
        "identifier" | "scoped_identifier" | "crate" | "super" | "self" | "metavariable" => {
            let full = join(prefix, cx.text(node));
            let name = last_segment(&full);
            out.push((full, vec![name]));
        }
        _ => {}
    }
}
