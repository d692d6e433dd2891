//! Equality that never looks at what it is compared with, read on the syntax tree: a Rust
//! `fn eq`/`fn ne` or a Python `__eq__`/`__ne__` (any spelling of its body: `true`, `!false`,
//! `1 == 1`, `self.key == self.key`, a helper call on `self` alone) whose other parameter is
//! never read, or only thrown away (`let _ = other;`, `drop(other)`, `del other`,
//! `_ = other`). An honest equality compares two values, so it reads both; one that reads only
//! `self` answers the same for every value it meets, which passes an assertion comparing two
//! computed values where no canary has a literal to flip.

use tree_sitter::{Node, Parser};

use super::super::added::{Added, Detection, Family, of};
use super::super::code::Syntax;
use crate::integrity::reads::Lang;

/// Whether `after` may define an equality method at all (a cheap look before parsing).
pub(crate) fn screen(after: &str, syntax: Syntax) -> bool {
    match syntax {
        Syntax::Rust => after.contains("fn eq") || after.contains("fn ne"),
        Syntax::Python => after.contains("__eq__") || after.contains("__ne__"),
        Syntax::JavaScript | Syntax::Go => false,
    }
}

/// The equality methods of `added.after` that overlap an added line and never read their
/// other parameter.
pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    let lang = match syntax {
        Syntax::Rust => Lang::Rust,
        Syntax::Python => Lang::Python,
        Syntax::JavaScript | Syntax::Go => return Vec::new(),
    };
    if !screen(added.after, syntax) {
        return Vec::new();
    }
    let mut parser = Parser::new();
    if parser.set_language(&lang.grammar()).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(added.after, None) else {
        return Vec::new();
    };
    let source = added.after.as_bytes();
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
        let Some((method, other, body)) = equality_method(node, lang, source) else {
            continue;
        };
        let (first, last) = (node.start_position().row, node.end_position().row);
        let Some(&line) = added.lines.iter().find(|&&l| l >= first && l <= last) else {
            continue;
        };
        if !reads(body, &other, lang, source) {
            out.push(of(
                Family::ConstantEquality,
                line,
                format!(
                    "defines `{method}` without reading `{other}`, the value it is compared \
                     with, so it gives the same answer whatever that value is"
                ),
            ));
        }
    }
    out.sort_by_key(|d| d.line);
    out
}

fn text<'a>(node: Node<'_>, source: &'a [u8]) -> &'a str {
    node.utf8_text(source).unwrap_or("")
}

/// A method named like an equality, with the name of the parameter it compares `self` with
/// and its body.
fn equality_method<'t>(
    node: Node<'t>,
    lang: Lang,
    source: &[u8],
) -> Option<(String, String, Node<'t>)> {
    let (kind, names): (&str, &[&str]) = match lang {
        Lang::Rust => ("function_item", &["eq", "ne"]),
        _ => ("function_definition", &["__eq__", "__ne__"]),
    };
    if node.kind() != kind {
        return None;
    }
    let name = text(node.child_by_field_name("name")?, source);
    if !names.contains(&name) {
        return None;
    }
    let params = node.child_by_field_name("parameters")?;
    let mut cursor = params.walk();
    let named: Vec<Node<'_>> = params.named_children(&mut cursor).collect();
    let other = match lang {
        Lang::Rust => {
            if named.first()?.kind() != "self_parameter" {
                return None;
            }
            named.get(1)?.child_by_field_name("pattern")?
        }
        _ => {
            let second = *named.get(1)?;
            match second.kind() {
                "identifier" => second,
                "typed_parameter" | "default_parameter" | "typed_default_parameter" => {
                    let mut c = second.walk();
                    let found = second
                        .named_children(&mut c)
                        .find(|n| n.kind() == "identifier");
                    found?
                }
                _ => return None,
            }
        }
    };
    let other = text(other, source);
    // A destructured parameter names its parts, not the value: not read here.
    if other != "_" && !other.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let body = node.child_by_field_name("body")?;
    Some((name.to_owned(), other.to_owned(), body))
}

/// Whether `body` reads `name` other than to throw it away.
fn reads(body: Node<'_>, name: &str, lang: Lang, source: &[u8]) -> bool {
    if name == "_" {
        return false;
    }
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if discards(node, name, lang, source) {
            continue;
        }
        if node.kind() == "identifier" && text(node, source) == name {
            return true;
        }
        // A macro's arguments are tokens, not expressions: read them as text.
        if node.kind() == "token_tree" && mentions(text(node, source), name) {
            return true;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// `let _ = other;`, `drop(other)`, `del other`, `_ = other`: a statement whose only use of
/// the name is to discard it.
fn discards(node: Node<'_>, name: &str, lang: Lang, source: &[u8]) -> bool {
    let compact: String = text(node, source).split_whitespace().collect();
    let compact = compact.trim_end_matches(';');
    match (lang, node.kind()) {
        (Lang::Rust, "let_declaration") => compact == format!("let_={name}"),
        (Lang::Rust, "expression_statement") => {
            compact == format!("drop({name})")
                || compact == format!("std::mem::drop({name})")
                || compact == format!("_={name}")
        }
        (Lang::Python, "delete_statement") => compact == format!("del{name}"),
        (Lang::Python, "expression_statement") => compact == format!("_={name}") || compact == name,
        _ => false,
    }
}

/// Whether `tokens` holds `name` as a whole word.
fn mentions(tokens: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    tokens.match_indices(name).any(|(at, _)| {
        let before = tokens[..at].chars().next_back();
        let after = tokens[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    const RUST_BEFORE: &str = "pub struct A { k: String }\n";

    /// Bodies of an equality that ignores its other value, spelled many ways.
    fn ignoring_bodies() -> Vec<String> {
        let constants = [
            "true",
            "!false",
            "1 == 1",
            "self.k == self.k",
            "!self.k.is_empty() || self.k.is_empty()",
            "{ let t = true; t }",
            "return true;",
            "same(self)",
        ];
        let discards = [
            "",
            "let _ = other;\n",
            "drop(other);\n",
            "std::mem::drop(other);\n",
        ];
        let mut out = Vec::new();
        for c in constants {
            for d in discards {
                out.push(format!("{d}{c}"));
            }
        }
        out
    }

    #[test]
    fn rust_equalities_that_ignore_the_other_value_are_found_in_every_spelling() {
        let mut missed = Vec::new();
        let bodies = ignoring_bodies();
        for body in &bodies {
            for (param, layout) in [
                ("other", "multi"),
                ("other", "one"),
                ("_other", "one"),
                ("_", "multi"),
            ] {
                let imp = match layout {
                    "one" => format!(
                        "impl PartialEq for A {{ fn eq(&self, {param}: &Self) -> bool {{ {body} }} }}\n"
                    ),
                    _ => format!(
                        "impl PartialEq for A {{\n    fn eq(&self, {param}: &A) -> bool {{\n        {body}\n    }}\n}}\n"
                    ),
                };
                let after = format!("{RUST_BEFORE}fn same(_: &A) -> bool {{ true }}\n{imp}");
                let found = families("src/lib.rs", RUST_BEFORE, &after);
                if !found.contains(&Family::ConstantEquality) {
                    missed.push(after);
                }
            }
        }
        assert!(
            missed.is_empty(),
            "{} of {} missed, e.g.:\n{}",
            missed.len(),
            bodies.len() * 4,
            missed[0]
        );
    }

    #[test]
    fn python_equalities_that_ignore_the_other_value_are_found_in_every_spelling() {
        let before = "class A:\n    pass\n";
        let bodies = [
            "return True",
            "return not False",
            "return 1 == 1",
            "return self.k == self.k",
            "del other\n        return True",
            "_ = other\n        return bool(self)",
            "x = True\n        return x",
        ];
        let mut missed = Vec::new();
        for body in bodies {
            for sig in ["self, other", "self, other: object", "self, other: 'A'"] {
                let after = format!("class A:\n    def __eq__({sig}):\n        {body}\n");
                if !families("pkg/core.py", before, &after).contains(&Family::ConstantEquality) {
                    missed.push(after);
                }
            }
        }
        assert!(missed.is_empty(), "missed:\n{}", missed.join("\n---\n"));
    }

    #[test]
    fn equalities_that_read_both_values_pass() {
        let rust = [
            "impl PartialEq for A { fn eq(&self, other: &Self) -> bool { self.k == other.k } }\n",
            "impl PartialEq for A {\n    fn eq(&self, o: &A) -> bool {\n        let a = self.k.trim();\n        a == o.k.trim()\n    }\n}\n",
            "impl PartialEq for A {\n    fn eq(&self, other: &A) -> bool {\n        matches!(other, A { k } if *k == self.k)\n    }\n}\n",
            "impl PartialEq for A {\n    fn ne(&self, other: &A) -> bool {\n        !self.eq(other)\n    }\n}\n",
        ];
        for after in rust {
            let after = format!("{RUST_BEFORE}{after}");
            let found = families("src/lib.rs", RUST_BEFORE, &after);
            assert!(!found.contains(&Family::ConstantEquality), "{after}");
        }
        let python = [
            "class A:\n    def __eq__(self, other):\n        return isinstance(other, A) and self.k == other.k\n",
            "class A:\n    def __eq__(self, other):\n        if not isinstance(other, A):\n            return NotImplemented\n        return vars(self) == vars(other)\n",
            "class A:\n    def __ne__(self, other):\n        return not self == other\n",
        ];
        for after in python {
            let found = families("pkg/core.py", "class A:\n    pass\n", after);
            assert!(!found.contains(&Family::ConstantEquality), "{after}");
        }
    }
}
