//! Rust (cargo test): a test is a `fn` under `#[test]` (or another `*test` attribute) in a
//! module. The canaries are written right after it in the same module. The moved copy goes
//! into a new file that the target's module includes with `#[path = "<absolute path>"] mod`,
//! so it is a new file, a new module and a new name, and `use super::*` gives it everything
//! the target could name.

use tree_sitter::Node;

use super::{Built, Names, Target, descendants, indent_at, parse, perturb, splice, text_of};

/// Blank lines put before the moved copy, so no line of it keeps its number.
const MOVED_LINES: usize = 7;

pub(super) fn build(
    target: &Target,
    text: &str,
    names: &Names,
    moved_abs: &str,
) -> Result<Built, String> {
    let Some((leaf, modules)) = target.path.split_last() else {
        return Err("the test has no name".to_owned());
    };
    if leaf.contains(' ') {
        return Err("a doctest: its source is a comment, not a function".to_owned());
    }
    let tree = parse(&tree_sitter_rust::LANGUAGE.into(), text)
        .ok_or_else(|| "the file does not parse as Rust".to_owned())?;
    let found: Vec<Node<'_>> = descendants(tree.root_node())
        .into_iter()
        .filter(|node| {
            node.kind() == "function_item"
                && node
                    .child_by_field_name("name")
                    .is_some_and(|n| text_of(n, text) == leaf)
                && modules.ends_with(&enclosing_modules(*node, text))
        })
        .collect();
    let function = match found.as_slice() {
        [one] => *one,
        [] => return Err(format!("no `fn {leaf}` in the file")),
        _ => return Err(format!("several `fn {leaf}` in the file")),
    };
    let name = function
        .child_by_field_name("name")
        .ok_or_else(|| "the test has no name".to_owned())?;
    let mut start = function.start_byte();
    let mut attributes = String::new();
    let mut previous = function.prev_named_sibling();
    while let Some(node) = previous.filter(|n| n.kind() == "attribute_item") {
        start = node.start_byte();
        attributes.insert_str(0, text_of(node, text));
        previous = node.prev_named_sibling();
    }
    if !attributes.contains("test") {
        return Err(format!("`fn {leaf}` has no test attribute"));
    }
    if attributes.contains("case(") || attributes.contains("values(") {
        return Err("a parametrized test: its cases are generated".to_owned());
    }
    let end = function.end_byte();
    let indent = indent_at(text, start);
    let copy = |new: &str, extra: Vec<(std::ops::Range<usize>, String)>| {
        let mut edits = vec![(name.byte_range(), new.to_owned())];
        edits.extend(extra);
        let changed = splice(text, edits);
        let end = (end as isize + changed.len() as isize - text.len() as isize) as usize;
        changed[start..end].to_owned()
    };
    // The target itself called twice from one test, on one thread: a `thread_local!` or a
    // call count changes its answer. An async test (its attribute builds a runtime) or one
    // with parameters gets the renamed copy instead.
    let plain = function
        .child_by_field_name("parameters")
        .is_some_and(|p| p.named_child_count() == 0)
        && !text_of(function, text)[..name.start_byte() - function.start_byte()].contains("async");
    let repeat = if plain {
        let returns = function
            .child_by_field_name("return_type")
            .map(|r| format!(" -> {}", text_of(r, text)));
        let body = match &returns {
            Some(_) => format!("{leaf}()?;\n{indent}    {leaf}()"),
            None => format!("{leaf}();\n{indent}    {leaf}();"),
        };
        format!(
            "{attributes}\n{indent}fn {}(){} {{\n{indent}    {body}\n{indent}}}",
            names.repeat,
            returns.unwrap_or_default()
        )
    } else {
        copy(&names.repeat, Vec::new())
    };
    let mut canaries = vec![repeat];
    let expected = expected_literal(function, text);
    let perturbed = perturbations(
        function,
        text,
        expected,
        &names.perturbed,
        &copy,
        start..end,
        &indent,
    );
    let mutated = expected
        .and_then(|literal| Some((literal, mutate(literal.kind(), text_of(literal, text))?)))
        .map(|(literal, new)| copy(&names.mutated, vec![(literal.byte_range(), new)]));
    let no_mutation = match mutated {
        Some(copy) => {
            canaries.push(copy);
            None
        }
        None => Some("the test asserts no equality with a literal".to_owned()),
    };
    canaries.push(format!(
        "#[test]\n{indent}fn {}() {{\n{indent}    assert_eq!(1, 2, \"efix canary: this test always fails\");\n{indent}}}",
        names.fail
    ));
    canaries.push(format!(
        "#[path = {moved_abs:?}]\n{indent}mod {};",
        names.file
    ));
    let inserted: String = canaries
        .iter()
        .map(|c| format!("\n\n{indent}{c}"))
        .collect();
    let with_canaries = format!("{}{inserted}{}", &text[..end], &text[end..]);
    let moved = format!(
        "#[allow(unused_imports)]\nuse super::*;\n{}{}\n",
        "\n".repeat(MOVED_LINES),
        copy(&names.moved, Vec::new())
    );
    Ok(Built {
        with_canaries,
        moved,
        no_mutation,
        perturbed,
    })
}

/// The target's copies with one input literal perturbed, right after it in its module. A
/// call inside a macro's tokens (`assert_eq!(parse("a"), 1)`) is a token tree after a name.
/// An integer only moves towards zero (a larger one may not fit its type).
fn perturbations(
    function: Node<'_>,
    text: &str,
    expected: Option<Node<'_>>,
    names: &[String],
    copy: perturb::CopyOf<'_>,
    span: std::ops::Range<usize>,
    indent: &str,
) -> Result<super::Perturbations, super::NoCopy> {
    let body = function
        .child_by_field_name("body")
        .ok_or_else(|| super::NoCopy::NotBuilt("the test has no body".to_owned()))?;
    let literal = |node: Node<'_>| {
        matches!(
            node.kind(),
            "string_literal" | "integer_literal" | "boolean_literal"
        ) || (node.kind() == "identifier" && matches!(text_of(node, text), "true" | "false"))
    };
    let callee = |node: Node<'_>| match node.kind() {
        "call_expression" => node
            .child_by_field_name("function")
            .map(|f| text_of(f, text).to_owned()),
        "token_tree" => node
            .prev_sibling()
            .filter(|p| p.kind() == "identifier")
            .map(|p| text_of(p, text).to_owned()),
        _ => None,
    };
    let literals = perturb::input_literals(body, text, &literal, &callee, expected);
    let variants = |old: &str| {
        let all = perturb::neighbours(old);
        if old.starts_with(|c: char| c.is_ascii_digit()) && all.len() > 1 {
            all[1..].to_vec()
        } else {
            all
        }
    };
    perturb::build(text, &literals, &variants, names, copy, span, indent)
}

/// The names of the inline modules around `node`, outermost first.
fn enclosing_modules(node: Node<'_>, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = node.parent();
    while let Some(current) = at {
        if current.kind() == "mod_item"
            && let Some(name) = current.child_by_field_name("name")
        {
            out.push(text_of(name, text).to_owned());
        }
        at = current.parent();
    }
    out.reverse();
    out
}

/// The literal the first `assert_eq!` with one expects: in its second argument when that one
/// looks like a value (`5`, `"v"`, `Some("v")`, `Ok(3)`), else in its first.
fn expected_literal<'t>(function: Node<'t>, text: &str) -> Option<Node<'t>> {
    let body = function.child_by_field_name("body")?;
    for node in descendants(body) {
        if node.kind() != "macro_invocation" {
            continue;
        }
        let Some(name) = node.child_by_field_name("macro") else {
            continue;
        };
        if text_of(name, text).rsplit("::").next() != Some("assert_eq") {
            continue;
        }
        let Some(tree) = node
            .named_children(&mut node.walk())
            .find(|n| n.kind() == "token_tree")
        else {
            continue;
        };
        let mut args: Vec<Vec<Node<'t>>> = vec![Vec::new()];
        let mut cursor = tree.walk();
        let children: Vec<Node<'t>> = tree.children(&mut cursor).collect();
        let inner = children
            .get(1..children.len().saturating_sub(1))
            .unwrap_or(&[]);
        for child in inner {
            if text_of(*child, text) == "," {
                args.push(Vec::new());
            } else if let Some(last) = args.last_mut() {
                last.push(*child);
            }
        }
        for arg in args.iter().take(2).rev() {
            let Some(first) = arg.first() else {
                continue;
            };
            let first_text = text_of(*first, text);
            let value_like = is_literal(first)
                || first_text.starts_with(|c: char| c.is_ascii_uppercase())
                || (first_text == "&" && arg.get(1).is_some_and(is_literal));
            if !value_like {
                continue;
            }
            let literal = arg
                .iter()
                .flat_map(|n| descendants(*n))
                .find(|n| is_literal(n));
            if literal.is_some() {
                return literal;
            }
        }
    }
    None
}

fn is_literal(node: &Node<'_>) -> bool {
    matches!(
        node.kind(),
        "string_literal" | "raw_string_literal" | "integer_literal" | "float_literal"
    )
}

/// A changed literal that still compiles: a decimal integer moves by one towards zero (so it
/// never overflows its type), a float gains a leading digit, a string a suffix.
fn mutate(kind: &str, literal: &str) -> Option<String> {
    match kind {
        "integer_literal" => {
            let digits: String = literal.chars().take_while(char::is_ascii_digit).collect();
            let suffix = &literal[digits.len()..];
            if digits.is_empty() || suffix.starts_with(['x', 'o', 'b']) {
                return None;
            }
            let value: u128 = digits.parse().ok()?;
            let changed = if value > 0 { value - 1 } else { 1 };
            Some(format!("{changed}{suffix}"))
        }
        "float_literal" => Some(format!("1{literal}")),
        _ => super::mutate_literal(kind, literal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            fail: "kf".into(),
            repeat: "kr".into(),
            mutated: "km".into(),
            moved: "kv".into(),
            file: "kmod".into(),
            perturbed: vec!["p1".into(), "p2".into(), "p3".into(), "p4".into()],
        }
    }

    const LIB: &str = "pub fn get() -> Option<&'static str> { None }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn crlf() {\n        assert_eq!(get(), Some(\"v\"));\n    }\n}\n";

    #[test]
    fn cargo_canaries_sit_in_the_test_module_and_the_moved_copy_is_a_module_of_its_own() {
        let target = Target {
            file: "src/lib.rs".into(),
            path: vec!["tests".into(), "crlf".into()],
        };
        let built = build(&target, LIB, &names(), "/s/src/kv.rs").unwrap();
        assert_eq!(
            built.with_canaries,
            "pub fn get() -> Option<&'static str> { None }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn crlf() {\n        assert_eq!(get(), Some(\"v\"));\n    }\n\n    #[test]\n    fn kr() {\n        crlf();\n        crlf();\n    }\n\n    #[test]\n    fn km() {\n        assert_eq!(get(), Some(\"v (changed by efix)\"));\n    }\n\n    #[test]\n    fn kf() {\n        assert_eq!(1, 2, \"efix canary: this test always fails\");\n    }\n\n    #[path = \"/s/src/kv.rs\"]\n    mod kmod;\n}\n"
        );
        assert_eq!(
            built.moved,
            "#[allow(unused_imports)]\nuse super::*;\n\n\n\n\n\n\n\n#[test]\n    fn kv() {\n        assert_eq!(get(), Some(\"v\"));\n    }\n"
        );
    }

    #[test]
    fn integers_move_towards_zero_and_doctests_get_a_reason() {
        assert_eq!(mutate("integer_literal", "255u8").as_deref(), Some("254u8"));
        assert_eq!(mutate("integer_literal", "0").as_deref(), Some("1"));
        assert_eq!(mutate("integer_literal", "0xff"), None);
        let target = Target {
            file: "src/lib.rs".into(),
            path: vec!["src/lib.rs - get (line 3)".into()],
        };
        assert_eq!(
            build(&target, LIB, &names(), "/x").unwrap_err(),
            "a doctest: its source is a comment, not a function"
        );
    }

    #[test]
    fn perturbed_copies_reach_calls_inside_assert_eq() {
        let text = "#[test]\nfn crlf() {\n    assert_eq!(split_lines(\"a\\r\\nb\", 2), vec![\"a\", \"b\"]);\n}\n";
        let target = Target {
            file: "src/lib.rs".into(),
            path: vec!["crlf".into()],
        };
        let built = build(&target, text, &names(), "/x/mod.rs").unwrap();
        let what: Vec<String> = built
            .perturbed
            .unwrap()
            .copies
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        assert_eq!(
            what,
            [
                "`\"a\\r\\nb\"` → `\"a\\r\\nc\"`, `2` → `1`",
                "`\"a\\r\\nb\"` → `\"b\\r\\nb\"`, `2` → `1`"
            ]
        );
    }
}
