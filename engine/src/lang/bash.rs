//! Bash (and POSIX shell): function definitions (`f() { … }`, `function f { … }`); `source` and
//! `.` of a literal path as imports; command names as call references.

use tree_sitter::Node;

use super::extract::{Context, DefinitionMatch, Findings, Grammar, unquote};
use crate::analysis::{ChunkKind, ReferenceKind};

pub(crate) struct Bash;

impl Grammar for Bash {
    fn separator(&self) -> &'static str {
        "."
    }

    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch> {
        match cx.kind {
            "function_definition" => {
                DefinitionMatch::new(cx.field_text(node, "name")?, ChunkKind::Function)
            }
            _ => None,
        }
    }

    fn attached_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }

    fn descend(&self, kind: &str) -> bool {
        !matches!(kind, "comment" | "raw_string" | "heredoc_body")
    }

    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings) {
        if cx.kind != "command" {
            return;
        }
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let command = cx.text(name);
        if matches!(command, "source" | ".") {
            if let Some(path) = node.child_by_field_name("argument") {
                let path = unquote(cx.text(path));
                if !path.contains('$') {
                    findings.import(path, Vec::new(), node);
                }
            }
        } else {
            findings.reference(command, ReferenceKind::Call, name);
        }
    }
}
