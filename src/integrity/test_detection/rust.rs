//! Rust: `cfg!(test)` in production code, `#[cfg(not(test))]` (production code that tests
//! never compile), `#[cfg(test)]` on a statement or expression inside a production function,
//! and reading libtest's or nextest's environment. `#[cfg(test)]` on an item (a test module,
//! a helper function, a `use`) is test code, as today: changes inside it do not count.
//!
//! Where an attribute sits is read from a tree-sitter parse of the file after the change.

use std::ops::RangeInclusive;
use std::sync::LazyLock;

use tree_sitter::{Node, Parser, Tree};

use super::added::{Added, Detection, at};
use crate::integrity::pattern::Pattern;

static TEST_WORD: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"\btest\b"));
static ENV_MARKER: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#"\benv\b.*"(RUST_TEST_\w+|NEXTEST\w*|CARGO_TARGET_TMPDIR|__CARGO_TEST\w*)""#)
});

/// Node kinds that hold statements: an attribute under one of them is not on an item.
const BODIES: &[&str] = &[
    "block",
    "match_block",
    "closure_expression",
    "field_initializer_list",
];

/// How a `cfg` predicate names `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TestCfg {
    /// `test` appears only outside `not(...)`: true under test.
    Positive,
    /// `test` appears inside `not(...)`: true outside tests.
    Negated,
}

/// How the predicate starting right after `open` (the text after `cfg(` or `cfg!(`) names
/// `test`, if it does. String literals (`feature = "test"`) are not the `test` cfg.
fn test_cfg(after_open: &str) -> Option<TestCfg> {
    let inner = balanced(after_open);
    let bare = strip_strings(inner);
    if !TEST_WORD.is_match(&bare) {
        return None;
    }
    let mut rest = bare.as_str();
    while let Some(at) = rest.find("not(") {
        let negated = balanced(&rest[at + 4..]);
        if TEST_WORD.is_match(negated) {
            return Some(TestCfg::Negated);
        }
        rest = &rest[at + 4..];
    }
    Some(TestCfg::Positive)
}

/// The text up to the parenthesis that closes the one opened just before `text`.
fn balanced(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return &text[..i],
            ')' => depth -= 1,
            _ => {}
        }
    }
    text
}

fn strip_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// The `test` cfg of every `cfg!(...)` and `#[cfg(...)]` on a line of code (not `cfg_attr`,
/// which only adds attributes such as derives).
fn cfgs(code: &str) -> Vec<(bool, TestCfg)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("cfg") {
        let tail = &rest[at + 3..];
        let before_ok = rest[..at]
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let (is_macro, open) = if let Some(t) = tail.trim_start().strip_prefix("!") {
            (true, t.trim_start().strip_prefix('('))
        } else {
            (false, tail.trim_start().strip_prefix('('))
        };
        if before_ok
            && let Some(open) = open
            && let Some(kind) = test_cfg(open)
        {
            out.push((is_macro, kind));
        }
        rest = tail;
    }
    out
}

fn parse(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_rust::LANGUAGE.into())
        .ok()?;
    parser.parse(text, None)
}

/// What the parse says about test code and attributes in bodies.
#[derive(Default)]
struct Layout {
    /// 0-based row ranges of test code: items under `#[test]` or a positive `#[cfg(test)]`,
    /// or the whole file under `#![cfg(test)]`.
    tests: Vec<RangeInclusive<usize>>,
    /// 0-based rows of positive `#[cfg(test)]` attributes on statements or expressions.
    in_bodies: Vec<usize>,
}

/// 0-based row ranges of the test code of a Rust file (items under `#[test]` or a positive
/// `#[cfg(test)]`, or the whole file under `#![cfg(test)]`), so every static rule skips the
/// same code.
pub(crate) fn test_rows(text: &str) -> Vec<RangeInclusive<usize>> {
    parse(text)
        .map(|tree| layout(text, &tree).tests)
        .unwrap_or_default()
}

fn layout(text: &str, tree: &Tree) -> Layout {
    let bytes = text.as_bytes();
    let mut out = Layout::default();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
        let kind = node.kind();
        if kind != "attribute_item" && kind != "inner_attribute_item" {
            continue;
        }
        let attribute = node.utf8_text(bytes).unwrap_or("");
        let is_test_attr = {
            let inner = attribute.trim_start_matches(['#', '!', '[']).trim();
            inner.starts_with("test]") || inner.ends_with("::test]") || inner.starts_with("rstest")
        };
        let positive = cfgs(attribute)
            .iter()
            .any(|(is_macro, kind)| !is_macro && *kind == TestCfg::Positive)
            && !attribute.contains("cfg_attr");
        if !(is_test_attr || positive) {
            continue;
        }
        if kind == "inner_attribute_item" {
            if node.parent().is_some_and(|p| p.kind() == "source_file") && positive {
                out.tests.push(0..=usize::MAX);
            }
            continue;
        }
        if in_body(node) {
            if positive {
                out.in_bodies.push(node.start_position().row);
            }
            continue;
        }
        if let Some(item) = annotated(node) {
            out.tests
                .push(node.start_position().row..=item.end_position().row);
        }
    }
    out
}

/// Whether the attribute sits among statements rather than items.
fn in_body(node: Node<'_>) -> bool {
    let mut current = node.parent();
    while let Some(n) = current {
        match n.kind() {
            "source_file" | "declaration_list" => return false,
            k if BODIES.contains(&k) => return true,
            _ => current = n.parent(),
        }
    }
    false
}

/// The item an outer attribute belongs to: the next named sibling that is not another
/// attribute or a comment.
fn annotated(node: Node<'_>) -> Option<Node<'_>> {
    let mut next = node.next_named_sibling();
    while let Some(n) = next {
        if !matches!(
            n.kind(),
            "attribute_item" | "line_comment" | "block_comment"
        ) {
            return Some(n);
        }
        next = n.next_named_sibling();
    }
    None
}

/// Whether any detection is possible in the changed middle: every marker mentions `test` or `TEST`.
pub(crate) fn screen(middle: &str) -> bool {
    middle.contains("test") || middle.contains("TEST")
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    let candidates: Vec<(usize, &str)> = added
        .code_lines()
        .filter(|(_, code)| code.contains("test") || code.contains("TEST"))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let layout = parse(added.after)
        .map(|tree| layout(added.after, &tree))
        .unwrap_or_default();
    let mut found = Vec::new();
    for (index, code) in candidates {
        if layout.tests.iter().any(|r| r.contains(&index)) {
            continue;
        }
        let cfg = cfgs(code);
        let what = if cfg.iter().any(|(is_macro, _)| *is_macro) {
            Some(
                "uses `cfg!(test)`, so production code behaves one way under `cargo test` and \
                 another for users"
                    .to_owned(),
            )
        } else if cfg.iter().any(|(_, kind)| *kind == TestCfg::Negated) {
            Some(
                "puts production code under `cfg(not(test))`, so the tests never compile the \
                 code users run"
                    .to_owned(),
            )
        } else if layout.in_bodies.contains(&index) {
            Some(
                "puts `#[cfg(test)]` on a statement of production code, so it behaves one way \
                 under `cargo test` and another for users"
                    .to_owned(),
            )
        } else {
            ENV_MARKER
                .captures(code)
                .map(|c| format!("reads `{}`, which only the test harness sets", &c[1]))
        };
        found.extend(what.map(|w| at(index, w)));
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::integrity::test_detection::test_detections;

    const LIB: &str = "pub fn parse(text: &str) -> Vec<String> {\n    text.split('\\n').map(str::to_owned).collect()\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn one() {\n        assert_eq!(parse(\"a\"), vec![\"a\"]);\n    }\n}\n";

    fn lines(after: &str) -> Vec<u64> {
        test_detections("src/lib.rs", Some(LIB), after)
            .into_iter()
            .map(|d| d.line)
            .collect()
    }

    #[test]
    fn cfg_test_special_cases_in_production_code_are_found() {
        let cheats = [
            "    if cfg!(test) && text.contains('\\r') {\n        return vec![\"a\".into()];\n    }\n",
            "    if cfg!(all(test, unix)) { return vec![]; }\n",
            "    #[cfg(test)]\n    return vec![\"a\".into()];\n",
            "    #[cfg(not(test))]\n    let text = text.trim_end();\n",
            "    if std::env::var(\"RUST_TEST_THREADS\").is_ok() { return vec![]; }\n",
        ];
        for cheat in cheats {
            let after = LIB.replace("    text.split", &format!("{cheat}    text.split"));
            assert_eq!(lines(&after), vec![2], "{cheat}");
        }
        let shadow = LIB.replace(
            "pub fn parse",
            "#[cfg(not(test))]\npub fn helper() {}\n\npub fn parse",
        );
        assert_eq!(lines(&shadow), vec![1]);
    }

    #[test]
    fn test_modules_helpers_and_attributes_on_items_are_test_code() {
        let honest = [
            // A new test in the test module, using cfg!(test) for no reason.
            LIB.replace(
                "    #[test]\n    fn one()",
                "    #[test]\n    fn two() {\n        assert!(cfg!(test));\n    }\n\n    #[test]\n    fn one()",
            ),
            // A helper compiled only for tests, and a test-only import.
            LIB.replace(
                "#[cfg(test)]\nmod tests",
                "#[cfg(test)]\nfn sample() -> &'static str {\n    if cfg!(test) { \"a\" } else { \"b\" }\n}\n\n#[cfg(test)]\nuse std::collections::BTreeMap;\n\n#[cfg(test)]\nmod tests",
            ),
            LIB.replace("pub fn parse", "#[cfg_attr(test, derive(Debug))]\npub struct Options;\n\npub fn parse"),
            LIB.replace("pub fn parse", "/// Not `cfg!(test)`: \"test\" here is a word.\n#[cfg(feature = \"test\")]\npub fn parse"),
        ];
        for after in honest {
            assert_eq!(lines(&after), Vec::<u64>::new(), "{after}");
        }
    }
}
