//! Ruby: methods (`Class.method`, also for `def self.m`), classes and modules (a `class A::B` is
//! named `B` and qualified `A.B`), constant assignments; `require`, `require_relative` (recorded as
//! `./path`), `load` and `autoload`; method calls and constants as references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Ruby;

const LOADERS: [&str; 4] = ["require", "require_relative", "load", "autoload"];

impl Grammar for Ruby {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "method" => {
                let kind = if matches!(cx.enclosing, Some(ChunkKind::Class | ChunkKind::Module)) {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                };
                DefinitionMatch::new(cx.field_text(node, "name")?, kind)
            }
            "singleton_method" => {
                let object = node
                    .child_by_field_name("object")
                    .filter(|o| o.kind() != "self");
                let qualifier = object.map(|o| cx.text(o).replace("::", "."));
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Method)
                    .map(|d| d.qualified(qualifier))
            }
            "class" | "module" => {
                let kind = if node.kind() == "class" {
                    ChunkKind::Class
                } else {
                    ChunkKind::Module
                };
                let name = node.child_by_field_name("name")?;
                if name.kind() == "scope_resolution" {
                    let scope = name
                        .child_by_field_name("scope")
                        .map(|s| cx.text(s).replace("::", "."));
                    DefinitionMatch::new(cx.field_text(name, "name")?, kind)
                        .map(|d| d.qualified(scope))
                } else {
                    DefinitionMatch::new(cx.text(name), kind)
                }
            }
            "assignment" => {
                let left = node
                    .child_by_field_name("left")
                    .filter(|l| l.kind() == "constant")?;
                let at_definition_level = match cx.enclosing {
                    None | Some(ChunkKind::Class | ChunkKind::Module) => true,
                    Some(_) => false,
                };
                if !at_definition_level {
                    return None;
                }
                DefinitionMatch::new(cx.text(left), ChunkKind::Constant)
            }
            _ => None,
        }
    }

    /// Strings are walked too: interpolations (`"#{f(x)}"`) hold calls.
    fn descend(&self, kind: &str) -> bool {
        kind != "comment"
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "call" => {
                let Some(method) = node.child_by_field_name("method") else {
                    return;
                };
                let name = cx.text(method);
                if node.child_by_field_name("receiver").is_none() && LOADERS.contains(&name) {
                    let path = node.child_by_field_name("arguments").and_then(|arguments| {
                        let mut cursor = arguments.walk();
                        arguments
                            .named_children(&mut cursor)
                            .find(|a| a.kind() == "string")
                    });
                    let Some(path) = path else {
                        return;
                    };
                    let mut cursor = path.walk();
                    if path
                        .named_children(&mut cursor)
                        .any(|c| c.kind() == "interpolation")
                    {
                        return;
                    }
                    let module = unquote(cx.text(path));
                    if name == "require_relative" && !module.starts_with('.') {
                        findings.import(&format!("./{module}"), Vec::new(), node);
                    } else {
                        findings.import(module, Vec::new(), node);
                    }
                } else {
                    findings.reference(name, ReferenceKind::Call, method);
                }
            }
            "constant" => {
                let defining = match cx.ancestor_kind(0) {
                    "class" | "module" => cx.is_field("name"),
                    "assignment" => cx.is_field("left"),
                    // `class A::B`: both constants name the class being defined.
                    "scope_resolution" => {
                        matches!(cx.ancestor_kind(1), "class" | "module")
                            && cx.ancestor_field(0) == Some("name")
                    }
                    _ => false,
                };
                if !defining {
                    findings.reference(cx.text(node), ReferenceKind::Type, node);
                }
            }
            _ => {}
        }
    }
}
