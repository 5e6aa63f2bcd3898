//! The language-independent walk over a tree-sitter syntax tree.
//!
//! Each language supplies a [`Grammar`]: which nodes are definitions (and their names), which
//! nodes wrap a definition (Python decorators, `export`, C++ `template<…>`), which nodes directly
//! above a definition belong to it (comments, attributes, decorators), and what imports and
//! references a node makes. This module does the rest once for all languages: an iterative
//! pre-order walk (no recursion, so deeply nested input cannot overflow the stack), nesting and
//! qualified names, span extension, and line arithmetic.
//!
//! It knows nothing about chunking or about other files.

use tree_sitter::Node;

use crate::analysis::{ChunkKind, Definition, Import, Reference, ReferenceKind};
use swex_text::LineIndex;

/// What a grammar recognises in one node.
pub(crate) struct DefinitionMatch {
    /// The bare name as written.
    pub name: String,
    pub kind: ChunkKind,
    /// A qualifier written in the definition itself, already joined with the language's
    /// separator: the receiver of a Go method (`Recv`), the scope of an out-of-class C++ method
    /// (`ns::Foo`), the scope of a Ruby `class A::B`. It goes between the enclosing definitions'
    /// qualified name and `name`.
    pub qualifier: Option<String>,
}

impl DefinitionMatch {
    pub fn new(name: impl Into<String>, kind: ChunkKind) -> Option<Self> {
        let name = name.into();
        if name.is_empty() {
            return None;
        }
        Some(Self {
            name,
            kind,
            qualifier: None,
        })
    }

    pub fn qualified(mut self, qualifier: Option<String>) -> Self {
        self.qualifier = qualifier.filter(|q| !q.is_empty());
        self
    }
}

/// Context handed to a grammar for one node: the source, the enclosing definition, and the
/// node's position in the tree (its field in the parent and its ancestors). Grammars must use
/// these rather than `Node::parent`, which tree-sitter computes by descending from the root.
pub(crate) struct Context<'a, 't> {
    /// The source text: slicing it at node boundaries needs no UTF-8 check (`Node::utf8_text`
    /// validates every slice again).
    pub src: &'a str,
    /// The node's kind (from [`SymbolNames`]: `Node::kind` measures and validates the C string
    /// on every call, and the walk asks for every node's kind several times).
    pub kind: &'static str,
    names: &'static SymbolNames,
    /// Kind of the nearest enclosing definition, if any.
    pub enclosing: Option<ChunkKind>,
    /// The node's field name in its parent (`name`, `function`, …).
    pub field: Option<&'static str>,
    ancestors: &'a [Frame<'t>],
}

impl<'a, 't> Context<'a, 't> {
    pub fn text(&self, node: Node) -> &'a str {
        self.src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    pub fn field_text(&self, node: Node, field: &str) -> Option<&'a str> {
        node.child_by_field_name(field)
            .map(|child| self.text(child))
            .filter(|t| !t.is_empty())
    }

    /// The kind of any node of the tree (see [`Context::kind`]).
    pub fn kind_of(&self, node: Node) -> &'static str {
        self.names.kind(node)
    }

    /// Whether the node sits under `field` in its parent.
    pub fn is_field(&self, field: &str) -> bool {
        self.field == Some(field)
    }

    /// The `n`-th ancestor: 0 is the parent, 1 the grandparent.
    pub fn ancestor(&self, n: usize) -> Option<Node<'t>> {
        self.ancestors
            .len()
            .checked_sub(n + 1)
            .map(|i| self.ancestors[i].node)
    }

    /// Kind of the `n`-th ancestor, `""` above the root.
    pub fn ancestor_kind(&self, n: usize) -> &'static str {
        self.ancestors
            .len()
            .checked_sub(n + 1)
            .map_or("", |i| self.ancestors[i].kind)
    }

    /// Field name of the `n`-th ancestor in its own parent.
    pub fn ancestor_field(&self, n: usize) -> Option<&'static str> {
        self.ancestors
            .len()
            .checked_sub(n + 1)
            .and_then(|i| self.ancestors[i].field)
    }

    /// Whether the nearest enclosing definition is a type-like container, which makes a function
    /// a method.
    pub fn in_type(&self) -> bool {
        matches!(
            self.enclosing,
            Some(
                ChunkKind::Class
                    | ChunkKind::Struct
                    | ChunkKind::Enum
                    | ChunkKind::Interface
                    | ChunkKind::Trait
                    | ChunkKind::Impl
            )
        )
    }
}

/// One ancestor of the current node.
pub(crate) struct Frame<'t> {
    node: Node<'t>,
    kind: &'static str,
    field: Option<&'static str>,
    /// The innermost definition enclosing this ancestor's children.
    scope: Option<usize>,
}

/// The siblings before the current node at one depth: the run of attachable nodes (comments,
/// decorators, attributes) directly before it, and the node before that run.
#[derive(Default)]
struct Preceding<'t> {
    attached: Vec<Node<'t>>,
    before: Option<Node<'t>>,
}

impl<'t> Preceding<'t> {
    fn passed(&mut self, grammar: &dyn Grammar, node: Node<'t>, kind: &str) {
        if grammar.attached_kinds().contains(&kind) {
            self.attached.push(node);
        } else {
            self.attached.clear();
            self.before = Some(node);
        }
    }

    fn is_empty(&self) -> bool {
        self.attached.is_empty() && self.before.is_none()
    }
}

/// A language's node kind and field names by id, read once: tree-sitter's `Node::kind` and
/// `TreeCursor::field_name` measure and UTF-8-check a C string on every call.
pub(crate) struct SymbolNames {
    kinds: Vec<Box<str>>,
    /// Field ids start at 1; index 0 is `None`.
    fields: Vec<Option<Box<str>>>,
}

impl SymbolNames {
    pub fn new(language: &tree_sitter::Language) -> Self {
        let kinds = (0..language.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| language.node_kind_for_id(id))
                    .unwrap_or("")
                    .into()
            })
            .collect();
        let fields = (0..=language.field_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| language.field_name_for_id(id))
                    .map(Into::into)
            })
            .collect();
        SymbolNames { kinds, fields }
    }

    /// The node's kind, as `Node::kind` gives it.
    pub(crate) fn kind<'n>(&'n self, node: Node) -> &'n str {
        match self.kinds.get(usize::from(node.kind_id())) {
            Some(kind) => kind,
            // tree-sitter's built-in symbols past the grammar's own (`ts_language_symbol_name`).
            None if node.kind_id() == u16::MAX => "ERROR",
            None if node.kind_id() == u16::MAX - 1 => "_ERROR",
            None => "",
        }
    }

    /// The cursor's field name, as `TreeCursor::field_name` gives it.
    pub(crate) fn field(&self, cursor: &tree_sitter::TreeCursor) -> Option<&str> {
        let id = cursor.field_id()?;
        self.fields.get(usize::from(id.get()))?.as_deref()
    }
}

/// Imports, references and the package declaration found so far.
pub(crate) struct Findings<'l> {
    pub imports: Vec<Import>,
    pub references: Vec<Reference>,
    pub package: Option<String>,
    /// Lines of the file, to number the findings.
    lines: &'l LineIndex,
}

impl<'l> Findings<'l> {
    fn new(lines: &'l LineIndex) -> Self {
        Findings {
            imports: Vec::new(),
            references: Vec::new(),
            package: None,
            lines,
        }
    }

    pub fn reference(&mut self, name: &str, kind: ReferenceKind, at: Node) {
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        {
            return;
        }
        self.references.push(Reference {
            name: name.to_owned(),
            line: first_line(self.lines, at),
            kind,
        });
    }

    pub fn import(&mut self, module: &str, names: Vec<String>, at: Node) {
        let module = module.trim();
        if module.is_empty() {
            return;
        }
        self.imports.push(Import {
            module: module.to_owned(),
            names,
            line: first_line(self.lines, at),
        });
    }
}

/// The per-language part of the analysis.
pub(crate) trait Grammar: Sync {
    /// Joins qualified names: `.` or `::`.
    fn separator(&self) -> &'static str;
    /// Is this node a definition? Called for every node.
    fn definition(&self, node: Node, cx: &Context) -> Option<DefinitionMatch>;
    /// Node kinds whose whole range belongs to the definition they wrap (see `wraps_only`):
    /// `decorated_definition`, `export_statement`, `template_declaration`.
    fn wrapper_kinds(&self) -> &'static [&'static str] {
        &[]
    }
    /// Node kinds that belong to the definition directly below them (no blank line between).
    fn attached_kinds(&self) -> &'static [&'static str];
    /// Imports, references and package declarations made by this node itself.
    fn visit(&self, node: Node, cx: &Context, findings: &mut Findings);
    /// Whether the walk should look inside this node (false for literals and comments, to save
    /// time).
    fn descend(&self, kind: &str) -> bool {
        !matches!(
            kind,
            "comment" | "string" | "line_comment" | "block_comment" | "string_literal"
        )
    }
}

/// 1-based first line of a node, in the engine's lines (see [`super::lines`]; never tree-sitter
/// rows, which count `\n` only).
fn first_line(lines: &LineIndex, node: Node) -> u32 {
    lines.line_of_byte(node.start_byte())
}

/// 1-based last line of a node. A node that swallowed its line's terminator (like C preprocessor
/// directives) still ends on that line.
fn last_line(lines: &LineIndex, node: Node) -> u32 {
    lines.last_line_of(node.start_byte(), node.end_byte())
}

pub(crate) struct Extraction<'l> {
    pub definitions: Vec<Definition>,
    pub findings: Findings<'l>,
}

/// Walks the whole tree once.
pub(crate) fn extract<'l>(
    grammar: &dyn Grammar,
    names: &'static SymbolNames,
    root: Node,
    src: &str,
    lines: &'l LineIndex,
) -> Extraction<'l> {
    let mut definitions: Vec<Definition> = Vec::new();
    let mut findings = Findings::new(lines);
    let line_count = lines.line_count();
    let mut cursor = root.walk();
    // frames[d] is the ancestor at depth d of the current node; preceding[d] describes the
    // siblings before the current node's ancestor (or the node itself) at depth d.
    let mut frames: Vec<Frame> = Vec::new();
    let mut preceding: Vec<Preceding> = vec![Preceding::default()];
    let final_line = line_count.max(1);
    loop {
        let node = cursor.node();
        let kind = names.kind(node);
        let enclosing = frames.last().and_then(|f| f.scope);
        let cx = Context {
            src,
            kind,
            names,
            enclosing: enclosing.map(|i| definitions[i].kind),
            field: names.field(&cursor),
            ancestors: &frames,
        };
        let mut inner = enclosing;
        if let Some(found) = grammar.definition(node, &cx) {
            let (span, span_depth) = span_of(grammar, names, node, kind, &frames);
            let start =
                attached_start(lines, span, span_depth, &frames, &preceding).min(final_line);
            let end = last_line(lines, span).clamp(start, final_line);
            let prefix = enclosing.map(|i| definitions[i].qualified_name.as_str());
            let separator = grammar.separator();
            let mut qualified_name = String::new();
            for part in [
                prefix,
                found.qualifier.as_deref(),
                Some(found.name.as_str()),
            ]
            .into_iter()
            .flatten()
            {
                if !qualified_name.is_empty() {
                    qualified_name.push_str(separator);
                }
                qualified_name.push_str(part);
            }
            definitions.push(Definition {
                name: found.name,
                qualified_name,
                kind: found.kind,
                start,
                end,
                parent: enclosing.map(|i| i as u32),
            });
            inner = Some(definitions.len() - 1);
        }
        grammar.visit(node, &cx, &mut findings);
        if grammar.descend(kind) && cursor.goto_first_child() {
            frames.push(Frame {
                node,
                kind,
                field: cx.field,
                scope: inner,
            });
            preceding.push(Preceding::default());
            continue;
        }
        loop {
            if let Some(level) = preceding.last_mut() {
                let node = cursor.node();
                level.passed(grammar, node, names.kind(node));
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                findings.references.sort_by(|a, b| {
                    (a.line, &a.name, kind_rank(a.kind)).cmp(&(b.line, &b.name, kind_rank(b.kind)))
                });
                findings.references.dedup();
                return Extraction {
                    definitions,
                    findings,
                };
            }
            frames.pop();
            preceding.pop();
        }
    }
}

fn kind_rank(kind: ReferenceKind) -> u8 {
    match kind {
        ReferenceKind::Call => 0,
        ReferenceKind::Type => 1,
        ReferenceKind::Name => 2,
    }
}

/// The node whose range is the definition's (the outermost wrapper, see `wraps_only`) and its
/// depth (`frames.len()` is the depth of `node` itself).
fn span_of<'t>(
    grammar: &dyn Grammar,
    names: &SymbolNames,
    node: Node<'t>,
    kind: &'static str,
    frames: &[Frame<'t>],
) -> (Node<'t>, usize) {
    let mut span = node;
    let mut span_kind = kind;
    let mut depth = frames.len();
    while depth > 0 {
        let parent = &frames[depth - 1];
        if !grammar.wrapper_kinds().contains(&parent.kind)
            || !wraps_only(names, parent.node, span, span_kind)
        {
            break;
        }
        span = parent.node;
        span_kind = parent.kind;
        depth -= 1;
    }
    (span, depth)
}

/// A wrapper belongs to its definition when the definition is its last named child (decorators,
/// `template<…>` parameters and `export` come first) and the wrapper holds no sibling definition of
/// the same kind (`const a = () => 1, b = () => 2;` wraps two).
fn wraps_only(names: &SymbolNames, parent: Node, child: Node, child_kind: &str) -> bool {
    let mut cursor = parent.walk();
    let mut last = None;
    for sibling in parent.named_children(&mut cursor).filter(|c| !c.is_extra()) {
        if sibling.id() != child.id() && names.kind(sibling) == child_kind {
            return false;
        }
        last = Some(sibling.id());
    }
    last == Some(child.id())
}

/// First line of a definition including attached material directly above it (no blank line
/// between, and not a trailing comment of the previous statement's line). A definition that opens
/// its parent node (the first statement of a body) looks above the parent, where grammars often put
/// the comments that precede it.
fn attached_start(
    lines: &LineIndex,
    span: Node,
    span_depth: usize,
    frames: &[Frame],
    preceding: &[Preceding],
) -> u32 {
    let mut start = first_line(lines, span);
    let mut current = span;
    let mut depth = span_depth;
    while let Some(level) = preceding.get(depth) {
        if level.is_empty() {
            // Nothing before `current` at this depth: climb if the parent starts with it.
            match depth.checked_sub(1).map(|d| frames[d].node) {
                Some(parent) if parent.start_byte() == current.start_byte() => {
                    current = parent;
                    depth -= 1;
                    continue;
                }
                _ => break,
            }
        }
        for (index, candidate) in level.attached.iter().enumerate().rev() {
            if last_line(lines, *candidate) + 1 < start {
                return start;
            }
            let before = if index > 0 {
                Some(level.attached[index - 1])
            } else {
                level.before
            };
            if before.is_some_and(|b| last_line(lines, b) == first_line(lines, *candidate)) {
                return start;
            }
            start = first_line(lines, *candidate);
        }
        break;
    }
    start
}

/// `"x"`, `'x'`, `` `x` ``, `<x>` without their delimiters.
pub(crate) fn unquote(text: &str) -> &str {
    let text = text.trim();
    let bytes = text.as_bytes();
    if bytes.len() >= 2 {
        let (first, last) = (bytes[0], bytes[bytes.len() - 1]);
        if (first == last && matches!(first, b'"' | b'\'' | b'`'))
            || (first == b'<' && last == b'>')
        {
            return &text[1..text.len() - 1];
        }
    }
    text
}

pub(crate) fn is_capitalised(name: &str) -> bool {
    name.starts_with(|c: char| c.is_uppercase())
}

/// The text of `node`'s first named child whose kind is one of `kinds` (names that grammars
/// give no field).
pub(crate) fn child_text<'a>(node: Node, kinds: &[&str], cx: &Context<'a, '_>) -> Option<&'a str> {
    let mut cursor = node.walk();
    let found = node
        .named_children(&mut cursor)
        .find(|c| kinds.contains(&cx.kind_of(*c)));
    found.map(|c| cx.text(c)).filter(|t| !t.is_empty())
}

/// The function or method kind of a definition by where it sits.
pub(crate) fn function_kind(cx: &Context) -> ChunkKind {
    if cx.in_type() {
        ChunkKind::Method
    } else {
        ChunkKind::Function
    }
}
