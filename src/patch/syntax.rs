//! The syntax check: a file that parsed without error before the patch must parse without
//! error after it (tree-sitter grammars for Rust, Python, JavaScript, TypeScript and Go).
//!
//! Files in other languages, and files that already had errors, are not checked.

use tree_sitter::{Language, Node, Parser};

fn language(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "py" | "pyi" => tree_sitter_python::LANGUAGE.into(),
        "js" | "jsx" | "mjs" | "cjs" => tree_sitter_javascript::LANGUAGE.into(),
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        _ => return None,
    })
}

/// `None` when the text parses cleanly (or cannot be checked), else the 1-based line of the
/// first error.
fn first_error(parser: &mut Parser, text: &str) -> Option<Option<u64>> {
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    if !root.has_error() {
        return Some(None);
    }
    Some(Some(error_line(root)))
}

fn error_line(node: Node<'_>) -> u64 {
    let mut cursor = node.walk();
    let mut n = node;
    // Descend to the first error or missing node in document order.
    loop {
        if n.is_error() || n.is_missing() {
            return n.start_position().row as u64 + 1;
        }
        let next = n
            .children(&mut cursor)
            .find(|c| c.has_error() || c.is_missing());
        match next {
            Some(c) => n = c,
            None => return n.start_position().row as u64 + 1,
        }
    }
}

/// The 1-based line of the first syntax error that the patch introduced, if any.
pub(crate) fn introduced_error(path: &str, before: &str, after: &str) -> Option<u64> {
    let lang = language(path)?;
    let mut parser = Parser::new();
    parser.set_language(&lang).ok()?;
    if first_error(&mut parser, before)?.is_some() {
        return None;
    }
    first_error(&mut parser, after)?
}

/// The 1-based line of the first syntax error in a new file, if any.
pub(crate) fn error_in_new_file(path: &str, after: &str) -> Option<u64> {
    let lang = language(path)?;
    let mut parser = Parser::new();
    parser.set_language(&lang).ok()?;
    first_error(&mut parser, after)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_introduced_by_the_patch_is_found_at_its_line() {
        let before = "def f():\n    return 1\n";
        let after = "def f():\n    return 1\n\ndef g(:\n    pass\n";
        assert_eq!(introduced_error("a.py", before, after), Some(4));
        assert_eq!(
            introduced_error("a.rs", "fn a() {}\n", "fn a() {\n"),
            Some(1)
        );
    }

    #[test]
    fn files_that_were_already_broken_or_unknown_are_not_checked() {
        assert_eq!(introduced_error("a.py", "def (:\n", "def ((:\n"), None);
        assert_eq!(introduced_error("a.txt", "", "((("), None);
        assert_eq!(
            introduced_error("a.go", "package a\n", "package a\nfunc f() {}\n"),
            None
        );
    }
}
