//! Language detection and the tree-sitter analysers, one module per language family.
//!
//! Entry point: [`analyze`] turns a file's text into a [`crate::analysis::FileAnalysis`]. It never
//! panics and never fails: files with syntax errors still yield chunks, and text files without a
//! grammar are cut in line windows.
