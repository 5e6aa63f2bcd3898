//! Lua: function declarations (`function M.f()`, `function M:m()` are qualified by their table,
//! `local function f()`), functions assigned to a name (`M.f = function() … end`); `require`
//! of a literal module as imports; calls as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Lua;

/// `(qualifier, name)` of `f`, `M.f`, `M.sub.f`, `M:m`.
fn split_name<'a>(target: Node, cx: &Context<'a, '_>) -> Option<(Option<&'a str>, &'a str)> {
    match cx.kind_of(target) {
        "identifier" => Some((None, cx.text(target))),
        "dot_index_expression" => Some((
            target.child_by_field_name("table").map(|t| cx.text(t)),
            cx.text(target.child_by_field_name("field")?),
        )),
        "method_index_expression" => Some((
            target.child_by_field_name("table").map(|t| cx.text(t)),
            cx.text(target.child_by_field_name("method")?),
        )),
        _ => None,
    }
}

impl Grammar for Lua {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_declaration" => {
                let (qualifier, name) = split_name(node.child_by_field_name("name")?, cx)?;
                let kind = if qualifier.is_some() {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                };
                DefinitionMatch::new(name, kind)
                    .map(|d| d.qualified(qualifier.map(|q| q.replace(':', "."))))
            }
            "assignment_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                let [variables, values] = children.as_slice() else {
                    return None;
                };
                let value = values.named_child(0)?;
                if cx.kind_of(value) != "function_definition" || variables.named_child_count() != 1
                {
                    return None;
                }
                let (qualifier, name) = split_name(variables.named_child(0)?, cx)?;
                DefinitionMatch::new(name, ChunkKind::Function)
                    .map(|d| d.qualified(qualifier.map(str::to_owned)))
            }
            _ => None,
        }
    }

    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &["variable_declaration"]
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        if cx.kind != "function_call" {
            return;
        }
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let callee = match cx.kind_of(name) {
            "identifier" => Some(name),
            "dot_index_expression" => name.child_by_field_name("field"),
            "method_index_expression" => name.child_by_field_name("method"),
            _ => None,
        };
        let Some(callee) = callee else {
            return;
        };
        if cx.text(callee) == "require" {
            let module = node
                .child_by_field_name("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|a| cx.kind_of(*a) == "string");
            if let Some(module) = module {
                findings.import(unquote(cx.text(module)), Vec::new(), node);
            }
        } else {
            findings.reference(cx.text(callee), ReferenceKind::Call, callee);
        }
    }
}
