//! PHP: functions, classes, interfaces, traits, enums, methods (`Class.method`) and block
//! namespaces; `namespace A\B;` as the package; `use` clauses (group uses expanded) and
//! `require`/`include` with a literal path (`__DIR__ . '/x.php'` recorded as `./x.php`); function,
//! method and static calls, `new`, type names and property names as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Php;

impl Grammar for Php {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let kind = match cx.kind {
            "function_definition" => ChunkKind::Function,
            "class_declaration" => ChunkKind::Class,
            "interface_declaration" => ChunkKind::Interface,
            "trait_declaration" => ChunkKind::Trait,
            "enum_declaration" => ChunkKind::Enum,
            "method_declaration" => ChunkKind::Method,
            "namespace_definition" if node.child_by_field_name("body").is_some() => {
                ChunkKind::Namespace
            }
            _ => return None,
        };
        DefinitionMatch::new(cx.field_text(node, "name")?, kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "namespace_definition" if node.child_by_field_name("body").is_none() => {
                if let Some(name) = cx.field_text(node, "name") {
                    findings.package = Some(name.to_owned());
                }
            }
            "namespace_use_declaration" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                let group = node.child_by_field_name("body");
                let prefix = children
                    .iter()
                    .find(|c| c.kind() == "namespace_name")
                    .filter(|_| group.is_some())
                    .map(|p| cx.text(*p).trim_matches('\\'));
                let clauses: Vec<Node> = match group {
                    Some(group) => group
                        .named_children(&mut group.walk())
                        .filter(|c| c.kind() == "namespace_use_clause")
                        .collect(),
                    None => children
                        .iter()
                        .copied()
                        .filter(|c| c.kind() == "namespace_use_clause")
                        .collect(),
                };
                for clause in clauses {
                    let Some(path) = clause
                        .named_child(0)
                        .filter(|p| matches!(p.kind(), "qualified_name" | "name"))
                    else {
                        continue;
                    };
                    let path = cx.text(path).trim_matches('\\');
                    let module = match prefix {
                        Some(prefix) => format!("{prefix}\\{path}"),
                        None => path.to_owned(),
                    };
                    let name = module.rsplit('\\').next().unwrap_or(&module).to_owned();
                    findings.import(&module, vec![name], node);
                }
            }
            "require_expression"
            | "require_once_expression"
            | "include_expression"
            | "include_once_expression" => {
                if let Some(module) = node
                    .named_child(0)
                    .and_then(|argument| literal_path(argument, cx))
                {
                    findings.import(&module, Vec::new(), node);
                }
            }
            "function_call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    findings.reference(last_name(cx.text(function)), ReferenceKind::Call, function);
                }
            }
            "member_call_expression"
            | "nullsafe_member_call_expression"
            | "scoped_call_expression" => {
                if let Some(name) = node.child_by_field_name("name") {
                    findings.reference(cx.text(name), ReferenceKind::Call, name);
                }
                if let Some(scope) = node
                    .child_by_field_name("scope")
                    .filter(|s| matches!(s.kind(), "name" | "qualified_name"))
                {
                    findings.reference(last_name(cx.text(scope)), ReferenceKind::Type, scope);
                }
            }
            "member_access_expression" | "nullsafe_member_access_expression" => {
                if let Some(name) = node
                    .child_by_field_name("name")
                    .filter(|n| n.kind() == "name")
                {
                    findings.reference(cx.text(name), ReferenceKind::Name, name);
                }
            }
            "object_creation_expression"
            | "named_type"
            | "base_clause"
            | "class_interface_clause"
            | "class_constant_access_expression" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if matches!(child.kind(), "name" | "qualified_name") {
                        findings.reference(last_name(cx.text(child)), ReferenceKind::Type, child);
                        if node.kind() == "class_constant_access_expression" {
                            break; // the second name is the constant
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn last_name(qualified: &str) -> &str {
    qualified.rsplit('\\').next().unwrap_or(qualified)
}

/// `'x.php'`, `__DIR__ . '/x.php'` (→ `./x.php`), `dirname(__FILE__) . '/x.php'`.
fn literal_path(argument: Node, cx: &Context) -> Option<String> {
    let argument = if argument.kind() == "parenthesized_expression" {
        argument.named_child(0)?
    } else {
        argument
    };
    match argument.kind() {
        "string" | "encapsed_string" => Some(unquote(cx.text(argument)).to_owned()),
        "binary_expression" => {
            let left = cx.text(argument.child_by_field_name("left")?);
            let right = argument
                .child_by_field_name("right")
                .filter(|r| matches!(r.kind(), "string" | "encapsed_string"))?;
            let relative_to_file =
                left == "__DIR__" || left.replace(' ', "") == "dirname(__FILE__)";
            relative_to_file
                .then(|| format!("./{}", unquote(cx.text(right)).trim_start_matches('/')))
        }
        _ => None,
    }
}
