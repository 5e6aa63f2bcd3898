//! Elixir: everything is a call, so definitions are calls of the defining macros: `defmodule`,
//! `defprotocol` and `defimpl` (modules: `defmodule Plug.Conn` is named `Conn` and qualified
//! `Plug.Conn`, nested modules append), `def`, `defp`, `defmacro`, `defmacrop`, `defguard`,
//! `defdelegate` (functions, also with a `when` guard) and `defstruct`/`defexception` (structs
//! named after their module). Module attributes (`@doc`, `@spec`) and comments directly above a
//! definition belong to it. `alias`, `import`, `require` and `use` are imports; other calls
//! are references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Elixir;

const FUNCTION_MACROS: [&str; 7] = [
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
];

/// The macro a call invokes (`def` of `def f(x) do … end`).
fn macro_name<'a>(node: Node, cx: &Context<'a, '_>) -> Option<&'a str> {
    let target = node.child_by_field_name("target")?;
    (cx.kind_of(target) == "identifier").then(|| cx.text(target))
}

fn first_argument<'t>(node: Node<'t>, cx: &Context) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let arguments = node
        .named_children(&mut cursor)
        .find(|c| cx.kind_of(*c) == "arguments")?;
    arguments.named_child(0)
}

/// The name of a function head: `f(x)`, `f`, `f(x) when …`, `a + b` (operators).
fn head_name<'a>(head: Node, cx: &Context<'a, '_>) -> Option<&'a str> {
    match cx.kind_of(head) {
        "identifier" => Some(cx.text(head)),
        "call" => macro_name(head, cx),
        "binary_operator" => head_name(head.child_by_field_name("left")?, cx),
        _ => None,
    }
}

impl Grammar for Elixir {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        if cx.kind != "call" {
            return None;
        }
        let name = macro_name(node, cx)?;
        match name {
            "defmodule" | "defprotocol" | "defimpl" => {
                let module = first_argument(node, cx)?;
                let text = cx.text(module);
                if cx.kind_of(module) != "alias" {
                    return None;
                }
                let (qualifier, bare) = match text.rsplit_once('.') {
                    Some((q, b)) => (Some(q.to_owned()), b),
                    None => (None, text),
                };
                let kind = if name == "defprotocol" {
                    ChunkKind::Interface
                } else if name == "defimpl" {
                    ChunkKind::Impl
                } else {
                    ChunkKind::Module
                };
                DefinitionMatch::new(bare, kind).map(|d| d.qualified(qualifier))
            }
            "defstruct" | "defexception" => DefinitionMatch::new("__struct__", ChunkKind::Struct),
            _ if FUNCTION_MACROS.contains(&name) => {
                let head = first_argument(node, cx)?;
                DefinitionMatch::new(head_name(head, cx)?, ChunkKind::Function)
            }
            _ => None,
        }
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "unary_operator"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(kind, "comment" | "string" | "charlist" | "sigil")
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        if cx.kind != "call" {
            return;
        }
        let Some(name) = macro_name(node, cx) else {
            // `Mod.fun(…)`: the function name is the call's reference.
            if let Some(target) = node.child_by_field_name("target")
                && cx.kind_of(target) == "dot"
                && let Some(right) = target.child_by_field_name("right")
            {
                findings.reference(cx.text(right), ReferenceKind::Call, right);
            }
            return;
        };
        match name {
            "alias" | "import" | "require" | "use" => {
                if let Some(module) = first_argument(node, cx).filter(|m| cx.kind_of(*m) == "alias")
                {
                    findings.import(cx.text(module), Vec::new(), node);
                }
            }
            _ if FUNCTION_MACROS.contains(&name)
                || matches!(name, "defmodule" | "defprotocol" | "defimpl") => {}
            _ => {
                if let Some(target) = node.child_by_field_name("target") {
                    findings.reference(name, ReferenceKind::Call, target);
                }
            }
        }
    }
}
