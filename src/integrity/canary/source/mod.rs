//! Canary sources: find the target test's definition in its file and write the canaries
//! beside it (an always-failing test, a repeated copy, a copy whose expected literal is
//! changed) and in a new file (the moved copy), one module per language.
//!
//! Definitions are found with tree-sitter, never by line patterns, so a test whose body
//! holds braces, strings or nested functions is copied whole. Every edit is pure text in,
//! text out; writing files is `scratch`'s job.

mod go;
mod javascript;
mod perturb;
mod python;
mod rust;

pub(crate) use perturb::{MAX_COPIES, NoCopy, Perturbations};
pub(crate) use python::moved_class;

use tree_sitter::{Language, Node, Parser, Tree};

use super::runner::Runner;

/// The names the canaries of one target carry (`names` chooses them from the target's name
/// and its file's words, by a digest of the change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    pub fail: String,
    pub repeat: String,
    pub mutated: String,
    pub moved: String,
    /// The moved file's stem (and cargo's module for it).
    pub file: String,
    /// The perturbed copies' names ([`MAX_COPIES`]).
    pub perturbed: Vec<String>,
}

/// Where the target test is: its file and its name as a path of containers and the leaf
/// (`["TestParse", "test_crlf"]`, `["parse", "keeps crlf"]`, `["tests", "crlf"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub file: String,
    pub path: Vec<String>,
}

/// The scratch files that hold a target's canaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Built {
    /// The target's file with the fail, repeat and (when built) mutated canaries beside it.
    pub with_canaries: String,
    /// The text of the moved copy's new file (its path is [`moved_path`]).
    pub moved: String,
    /// Why no mutated-expected canary was built, when none was.
    pub no_mutation: Option<String>,
    /// The target's copies with an input literal perturbed, or why there are none.
    pub perturbed: Result<Perturbations, NoCopy>,
}

/// Build a target's canaries from the text of its file. `moved_abs` is where the moved file
/// will be in the scratch copy (Rust includes it by absolute path). An error says, for the
/// evidence, why no canary could be built for this test.
pub(crate) fn build(
    runner: Runner,
    target: &Target,
    text: &str,
    names: &Names,
    moved_abs: &str,
) -> Result<Built, String> {
    match runner {
        Runner::Pytest | Runner::Unittest | Runner::Django => python::build(target, text, names),
        Runner::Jest | Runner::Vitest | Runner::Mocha | Runner::Tape | Runner::NodeTest => {
            javascript::build(runner, target, text, names)
        }
        Runner::Cargo => rust::build(target, text, names, moved_abs),
        Runner::Go => go::build(target, text, names),
    }
}

/// The path of the moved copy: a new file beside the target's, named after the moved canary
/// with the suffix the runner's discovery expects (`.test.js`, `_test.go`, `.py`).
pub(crate) fn moved_path(runner: Runner, file: &str, names: &Names) -> String {
    let (dir, base) = match file.rsplit_once('/') {
        Some((dir, base)) => (format!("{dir}/"), base),
        None => (String::new(), file),
    };
    let suffix = match runner {
        Runner::Go => "_test.go".to_owned(),
        Runner::Pytest | Runner::Unittest | Runner::Django => ".py".to_owned(),
        Runner::Cargo => ".rs".to_owned(),
        // Keep every dotted part after the stem: `.test.js`, `.spec.ts`, `.mjs`.
        _ => base
            .find('.')
            .map(|at| base[at..].to_owned())
            .unwrap_or_default(),
    };
    let stem = match runner {
        // Cargo makes a test crate of every `.rs` directly in `tests/` (and `examples/`,
        // `benches/`, `src/bin/`): the moved copy, a module the target's file includes by
        // `#[path]`, goes one directory down, where no target is discovered.
        Runner::Cargo => format!("{}/mod", names.file),
        _ => names.file.clone(),
    };
    format!("{dir}{stem}{suffix}")
}

/// Parse `text` with `language`; `None` when tree-sitter cannot.
pub(super) fn parse(language: &Language, text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(language).ok()?;
    parser.parse(text, None)
}

/// The text of a node.
pub(super) fn text_of<'t>(node: Node<'_>, text: &'t str) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

/// The whitespace between the start of the line holding `at` and `at`.
pub(super) fn indent_at(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

/// Every node under `node` in document order, `node` included.
pub(super) fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(next) = stack.pop() {
        out.push(next);
        let mut cursor = next.walk();
        let children: Vec<Node<'_>> = next.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// Replace byte ranges of `text` (not overlapping) with new text.
pub(super) fn splice(text: &str, mut edits: Vec<(std::ops::Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = text.to_owned();
    for (range, new) in edits {
        if out.is_char_boundary(range.start) && out.is_char_boundary(range.end) {
            out.replace_range(range, &new);
        }
    }
    out
}

/// The changed text of a literal an equality assertion expects, so that no honest value can
/// equal both: a string gains a suffix inside its quotes, a number grows by one, a boolean
/// flips (a float grows by `1.0`, which every language here reads as a float). `None` for
/// literals this does not change (characters, `None`).
pub(super) fn mutate_literal(kind: &str, literal: &str) -> Option<String> {
    const SUFFIX: &str = " (changed by efix)";
    match kind {
        "string"
        | "string_literal"
        | "interpreted_string_literal"
        | "template_string"
        | "raw_string_literal" => {
            // Insert before the closing delimiter: three quotes for a triple-quoted Python
            // string, else the last quote (a raw Rust string's hashes stay after it).
            let triple = ["\"\"\"", "\'\'\'"]
                .iter()
                .any(|q| literal.len() >= 6 && literal.ends_with(q));
            let at = if triple {
                literal.len() - 3
            } else {
                literal.rfind(['"', '\'', '`'])?
            };
            if at == 0 || literal.find(['"', '\'', '`']) == Some(at) {
                return None;
            }
            Some(format!("{}{SUFFIX}{}", &literal[..at], &literal[at..]))
        }
        "integer" | "integer_literal" | "int_literal" | "number" => {
            Some(format!("({literal} + 1)"))
        }
        "float" | "float_literal" => Some(format!("({literal} + 1.0)")),
        "true" | "false" | "boolean_literal" => match literal {
            "True" => Some("False".to_owned()),
            "False" => Some("True".to_owned()),
            "true" => Some("false".to_owned()),
            "false" => Some("true".to_owned()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_change_so_no_honest_value_equals_both() {
        assert_eq!(
            mutate_literal("string", "\"ab\"").as_deref(),
            Some("\"ab (changed by efix)\"")
        );
        assert_eq!(
            mutate_literal("string", "'''ab'''").as_deref(),
            Some("'''ab (changed by efix)'''")
        );
        assert_eq!(
            mutate_literal("raw_string_literal", "r#\"a\"#").as_deref(),
            Some("r#\"a (changed by efix)\"#")
        );
        assert_eq!(mutate_literal("integer", "5").as_deref(), Some("(5 + 1)"));
        assert_eq!(
            mutate_literal("float_literal", "2.5").as_deref(),
            Some("(2.5 + 1.0)")
        );
        assert_eq!(mutate_literal("true", "true").as_deref(), Some("false"));
        assert_eq!(mutate_literal("none", "None"), None);
    }

    #[test]
    fn the_moved_file_keeps_the_suffix_discovery_expects() {
        let names = Names {
            fail: "a".into(),
            repeat: "b".into(),
            mutated: "c".into(),
            moved: "d".into(),
            file: "k1".into(),
            perturbed: Vec::new(),
        };
        assert_eq!(
            moved_path(Runner::Jest, "src/parse.test.ts", &names),
            "src/k1.test.ts"
        );
        assert_eq!(
            moved_path(Runner::Pytest, "tests/t.py", &names),
            "tests/k1.py"
        );
        assert_eq!(
            moved_path(Runner::Go, "p/x_test.go", &names),
            "p/k1_test.go"
        );
        // Not `tests/k1.rs`: cargo would build it as a test crate of its own.
        assert_eq!(
            moved_path(Runner::Cargo, "tests/words.rs", &names),
            "tests/k1/mod.rs"
        );
    }
}
