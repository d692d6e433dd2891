//! What a source file imports, resolved to tracked files the way each ecosystem resolves
//! it: Python absolute and relative imports (also under `src/`), node and bundler module
//! resolution for JavaScript and TypeScript (`package.json` `main`/`exports`, directory
//! indexes, extensionless and `.js`-for-`.ts` paths, tsconfig `paths`/`baseUrl`, package
//! self-references), Rust `use`/`mod` paths and Go package imports and same-package files.
//!
//! Imports are read with line-level patterns, not parsers: a missed import only loses a
//! hint, and the failure output's own locations still rank.

mod go;
mod node;
mod python;
mod rust;
mod script;

use super::defs::Lang;
use super::tree::Tree;

/// One import of a file, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import<'a> {
    /// The statement as written, on one line and clipped, for reasons.
    pub statement: String,
    /// 1-based line of the statement (0 for a Go package's other files).
    pub line: u64,
    /// Names it binds: (local name, name in the module); `*` binds every name.
    pub names: Vec<(String, String)>,
    /// The local name bound to the module itself, if any.
    pub alias: Option<String>,
    /// Tracked files the module resolves to; empty when it is not the repository's.
    pub files: Vec<&'a str>,
    /// Not a statement: another file of the same Go package.
    pub same_package: bool,
}

/// Statements are clipped to this many characters in reasons.
const STATEMENT_CHARS: usize = 80;
/// At most this many imports are read from one file.
const MAX_IMPORTS: usize = 200;

/// The imports of tracked file `path`, whose text is `text`.
pub(crate) fn imports<'a>(tree: &Tree<'a>, path: &str, text: &str) -> Vec<Import<'a>> {
    let mut found = match Lang::of(path) {
        Some(Lang::Python) => python::imports(tree, path, text),
        Some(Lang::Js) => script::imports(tree, path, text),
        Some(Lang::Rust) => rust::imports(tree, path, text),
        Some(Lang::Go) => go::imports(tree, path, text),
        _ => Vec::new(),
    };
    found.truncate(MAX_IMPORTS);
    for import in &mut found {
        import.files.retain(|file| *file != path);
        import.files.dedup();
    }
    found
}

/// A statement on one line, whitespace collapsed, clipped.
pub(crate) fn statement(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= STATEMENT_CHARS {
        return collapsed;
    }
    let clipped: String = collapsed.chars().take(STATEMENT_CHARS - 1).collect();
    format!("{clipped}…")
}

#[cfg(test)]
mod tests;
