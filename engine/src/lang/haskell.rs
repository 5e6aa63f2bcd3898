//! Haskell: functions and values (each equation is a definition; a type signature directly above
//! belongs to the first), data types, newtypes, type synonyms and families, type classes
//! (`Trait`) and instances (`Impl`, named after the class); imports and the module header;
//! variables applied as calls are references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Haskell;

impl Grammar for Haskell {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        let kind = match cx.kind {
            "function" | "bind" => {
                if cx.enclosing.is_some() && !cx.in_type() {
                    return None; // `where` clauses stay inside their function
                }
                if cx.in_type() {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                }
            }
            "data_type" | "newtype" | "data_family" => ChunkKind::Struct,
            "type_synomym" | "type_family" | "type_synonym" => ChunkKind::TypeAlias,
            "class" => ChunkKind::Trait,
            "instance" => ChunkKind::Impl,
            _ => return None,
        };
        let name = node.child_by_field_name("name")?;
        DefinitionMatch::new(cx.text(name).trim_matches(|c| c == '(' || c == ')'), kind)
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment", "haddock", "signature", "pragma"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(kind, "comment" | "haddock" | "string")
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        match cx.kind {
            "header" => {
                if let Some(module) = node.child_by_field_name("module") {
                    findings.package = Some(cx.text(module).to_owned());
                }
            }
            "import" => {
                if let Some(module) = node.child_by_field_name("module") {
                    findings.import(cx.text(module), Vec::new(), node);
                }
            }
            "apply" => {
                if let Some(function) = node.child_by_field_name("function")
                    && cx.kind_of(function) == "variable"
                {
                    findings.reference(cx.text(function), ReferenceKind::Call, function);
                }
            }
            _ => {}
        }
    }
}
