//! Python (pytest and unittest): a test is a `def` at module level or in a class; the
//! canaries are written right after it at the same indentation, so they live in the same
//! module and class. The moved copy is the whole file under a new name with the target (and
//! its class) renamed and blank lines before it, so its imports, fixtures and helpers are
//! still there while its file, name and line are new.

use tree_sitter::Node;

use super::{
    Built, Names, Target, descendants, indent_at, mutate_literal, parse, perturb, splice, text_of,
};

/// Blank lines put before the moved copy, so no line of it keeps its number.
const MOVED_LINES: usize = 7;

/// The assertion methods of `unittest` and friends whose arguments are compared for equality.
const EQUALITY_METHODS: &[&str] = &[
    "assertEqual",
    "assertEquals",
    "assert_equal",
    "assertListEqual",
    "assertDictEqual",
    "assertTupleEqual",
    "assertMultiLineEqual",
];

pub(super) fn build(target: &Target, text: &str, names: &Names) -> Result<Built, String> {
    let Some((leaf, classes)) = target.path.split_last() else {
        return Err("the test has no name".to_owned());
    };
    if leaf.contains('[') {
        return Err("a parametrized test: its cases are generated".to_owned());
    }
    let tree = parse(&tree_sitter_python::LANGUAGE.into(), text)
        .ok_or_else(|| "the file does not parse as Python".to_owned())?;
    let found = find(tree.root_node(), text, classes, leaf)?;
    let whole = found.whole;
    let indent = indent_at(text, whole.start_byte());
    let copy = |name: &str| {
        let range = found.name.start_byte()..found.name.end_byte();
        let renamed = splice(text, vec![(range, name.to_owned())]);
        let delta = name.len() as isize - found.name.byte_range().len() as isize;
        let end = (whole.end_byte() as isize + delta) as usize;
        renamed[whole.start_byte()..end].to_owned()
    };
    let in_test_case = found
        .class
        .and_then(|class| class.child_by_field_name("superclasses"))
        .is_some_and(|bases| text_of(bases, text).contains("TestCase"));
    let fail = match (found.class.is_some(), in_test_case) {
        (_, true) => format!(
            "def {}(self):\n{indent}    self.fail(\"efix canary: this test always fails\")",
            names.fail
        ),
        (true, false) => format!(
            "def {}(self):\n{indent}    assert 1 == 2, \"efix canary: this test always fails\"",
            names.fail
        ),
        (false, _) => format!(
            "def {}():\n{indent}    assert 1 == 2, \"efix canary: this test always fails\"",
            names.fail
        ),
    };
    let repeat =
        called_twice(&found, text, &names.repeat, &indent).unwrap_or_else(|| copy(&names.repeat));
    let mut canaries = vec![repeat];
    let expected = expected_literal(found.function, text);
    let perturbed = perturbations(&found, text, expected, &names.perturbed, &indent);
    let mutated = expected.and_then(|literal| {
        let new = mutate_literal(literal.kind(), text_of(literal, text))?;
        let edits = vec![
            (found.name.byte_range(), names.mutated.clone()),
            (literal.byte_range(), new),
        ];
        let changed = splice(text, edits);
        let delta = changed.len() as isize - text.len() as isize;
        let end = (whole.end_byte() as isize + delta) as usize;
        Some(changed[whole.start_byte()..end].to_owned())
    });
    let no_mutation = match &mutated {
        Some(copy) => {
            canaries.push(copy.clone());
            None
        }
        None => Some("the test asserts no equality with a literal".to_owned()),
    };
    canaries.push(fail);
    let inserted: String = canaries
        .iter()
        .map(|c| format!("\n\n{indent}{c}"))
        .collect();
    let with_canaries = format!(
        "{}{inserted}{}",
        &text[..whole.end_byte()],
        &text[whole.end_byte()..]
    );
    let line_start = text[..whole.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let mut moved_edits = vec![
        (found.name.byte_range(), names.moved.clone()),
        (line_start..line_start, "\n".repeat(MOVED_LINES)),
    ];
    if let Some(class) = found.class.and_then(|c| c.child_by_field_name("name")) {
        moved_edits.push((class.byte_range(), moved_class(names)));
    }
    Ok(Built {
        with_canaries,
        moved: splice(text, moved_edits),
        no_mutation,
        perturbed,
    })
}

/// The target's copies with one input literal perturbed, right after it in its class.
fn perturbations(
    found: &Found<'_>,
    text: &str,
    expected: Option<Node<'_>>,
    names: &[String],
    indent: &str,
) -> Result<perturb::Perturbations, perturb::NoCopy> {
    let body = found
        .function
        .child_by_field_name("body")
        .ok_or_else(|| perturb::NoCopy::NotBuilt("the test has no body".to_owned()))?;
    let literal = |node: Node<'_>| {
        is_literal(&node)
            && !descendants(node)
                .iter()
                .any(|n| n.kind() == "interpolation")
    };
    let call = |node: Node<'_>| {
        (node.kind() == "call")
            .then(|| node.child_by_field_name("function"))
            .flatten()
            .map(|f| text_of(f, text).to_owned())
    };
    let literals = perturb::input_literals(body, text, &literal, &call, expected);
    let whole = found.whole;
    let copy = |name: &str, extra: Vec<(std::ops::Range<usize>, String)>| {
        let mut edits = vec![(found.name.byte_range(), name.to_owned())];
        edits.extend(extra);
        let changed = splice(text, edits);
        let end =
            (whole.end_byte() as isize + changed.len() as isize - text.len() as isize) as usize;
        changed[whole.start_byte()..end].to_owned()
    };
    perturb::build(
        text,
        &literals,
        &perturb::neighbours,
        names,
        &copy,
        whole.byte_range(),
        indent,
    )
}

/// A test that calls the target itself twice, so the same function (same code object, same
/// class, same thread) runs again in one invocation: state keyed on the caller's frame or on
/// a call count changes its answer. It takes the target's parameters (pytest gives it the
/// same fixtures). `None` when the call cannot be written plainly (decorated, async, or
/// parameters with defaults or stars); the renamed copy stands in for it.
fn called_twice(found: &Found<'_>, text: &str, name: &str, indent: &str) -> Option<String> {
    if found.whole.id() != found.function.id() || text_of(found.function, text).starts_with("async")
    {
        return None;
    }
    let parameters = found.function.child_by_field_name("parameters")?;
    let mut cursor = parameters.walk();
    let params: Vec<&str> = parameters
        .named_children(&mut cursor)
        .map(|p| (p.kind() == "identifier").then(|| text_of(p, text)))
        .collect::<Option<_>>()?;
    let leaf = text_of(found.function.child_by_field_name("name")?, text);
    let (callee, args) = match (found.class, params.split_first()) {
        (Some(_), Some((first, rest))) => (format!("{first}.{leaf}"), rest),
        (Some(_), None) => return None,
        (None, _) => (leaf.to_owned(), params.as_slice()),
    };
    let call = format!("{callee}({})", args.join(", "));
    Some(format!(
        "def {name}({}):\n{indent}    {call}\n{indent}    {call}",
        params.join(", ")
    ))
}

/// The class name of the moved copy: pytest collects classes named `Test*`; `Test` and the
/// moved file's word (`test_tokens.py` holds `TestTokens`).
pub(crate) fn moved_class(names: &Names) -> String {
    let word = names.file.trim_start_matches("test_");
    let mut chars = word.chars();
    let head: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    format!("Test{head}{}", chars.as_str())
}

struct Found<'t> {
    /// The `def`, with its decorators when it has any.
    whole: Node<'t>,
    function: Node<'t>,
    name: Node<'t>,
    class: Option<Node<'t>>,
}

fn find<'t>(
    root: Node<'t>,
    text: &str,
    classes: &[String],
    leaf: &str,
) -> Result<Found<'t>, String> {
    let mut scope = root;
    let mut class = None;
    for name in classes {
        let next = definitions(scope)
            .into_iter()
            .find(|node| {
                node.kind() == "class_definition"
                    && node
                        .child_by_field_name("name")
                        .is_some_and(|n| text_of(n, text) == name)
            })
            .ok_or_else(|| format!("no class `{name}` in the file"))?;
        class = Some(next);
        scope = next
            .child_by_field_name("body")
            .ok_or_else(|| format!("class `{name}` has no body"))?;
    }
    let function = definitions(scope)
        .into_iter()
        .filter(|node| node.kind() == "function_definition")
        .find(|node| {
            node.child_by_field_name("name")
                .is_some_and(|n| text_of(n, text) == leaf)
        })
        .ok_or_else(|| format!("no `def {leaf}` in the file"))?;
    let whole = function
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
        .unwrap_or(function);
    if whole.id() != function.id() {
        let decorators = text_of(whole, text)
            .get(..function.start_byte() - whole.start_byte())
            .unwrap_or("");
        if decorators.contains("parametrize") || decorators.contains("parameterized") {
            return Err("a parametrized test: its cases are generated".to_owned());
        }
    }
    let name = function
        .child_by_field_name("name")
        .ok_or_else(|| "the test has no name".to_owned())?;
    Ok(Found {
        whole,
        function,
        name,
        class,
    })
}

/// The definitions directly in a module or class body, decorated ones unwrapped.
fn definitions(scope: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = scope.walk();
    scope
        .named_children(&mut cursor)
        .filter_map(|node| {
            if node.kind() == "decorated_definition" {
                node.child_by_field_name("definition")
            } else {
                Some(node)
            }
        })
        .collect()
}

/// The literal the first equality assertion with one expects: `assert f(x) == 5`,
/// `assert "a" == f(x)`, `self.assertEqual(f(x), "a")`.
fn expected_literal<'t>(function: Node<'t>, text: &str) -> Option<Node<'t>> {
    let body = function.child_by_field_name("body")?;
    for node in descendants(body) {
        let operands: Vec<Node<'t>> = match node.kind() {
            "assert_statement" => {
                let Some(comparison) = node.named_child(0) else {
                    continue;
                };
                let mut cursor = comparison.walk();
                let operators: Vec<&str> = comparison
                    .children(&mut cursor)
                    .filter(|c| !c.is_named())
                    .map(|c| c.kind())
                    .collect();
                if comparison.kind() != "comparison_operator" || operators != ["=="] {
                    continue;
                }
                let mut cursor = comparison.walk();
                comparison.named_children(&mut cursor).collect()
            }
            "call" => {
                let Some(function) = node.child_by_field_name("function") else {
                    continue;
                };
                let callee = text_of(function, text);
                let method = callee.rsplit('.').next().unwrap_or(callee);
                if !EQUALITY_METHODS.contains(&method) {
                    continue;
                }
                let Some(arguments) = node.child_by_field_name("arguments") else {
                    continue;
                };
                let mut cursor = arguments.walk();
                arguments.named_children(&mut cursor).take(2).collect()
            }
            _ => continue,
        };
        if let Some(literal) = operands.iter().rev().find(|n| is_literal(n)) {
            return Some(*literal);
        }
    }
    None
}

fn is_literal(node: &Node<'_>) -> bool {
    matches!(
        node.kind(),
        "string" | "integer" | "float" | "true" | "false"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            fail: "test_kf".into(),
            repeat: "test_kr".into(),
            mutated: "test_km".into(),
            moved: "test_kv".into(),
            file: "test_kv".into(),
            perturbed: vec!["p1".into(), "p2".into(), "p3".into(), "p4".into()],
        }
    }

    fn target(path: &[&str]) -> Target {
        Target {
            file: "tests/test_words.py".into(),
            path: path.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    const PYTEST_FILE: &str = "from words import count\n\n\ndef test_one():\n    assert count(\"a\") == 1\n\n\ndef test_two():\n    got = count(\"a  b\")\n    assert got == 2\n\n\ndef test_after():\n    pass\n";

    #[test]
    fn pytest_canaries_sit_right_after_the_target_and_the_moved_copy_is_renamed_and_shifted() {
        let built = build(&target(&["test_two"]), PYTEST_FILE, &names()).unwrap();
        assert_eq!(
            built.with_canaries,
            "from words import count\n\n\ndef test_one():\n    assert count(\"a\") == 1\n\n\ndef test_two():\n    got = count(\"a  b\")\n    assert got == 2\n\ndef test_kr():\n    test_two()\n    test_two()\n\ndef test_km():\n    got = count(\"a  b\")\n    assert got == (2 + 1)\n\ndef test_kf():\n    assert 1 == 2, \"efix canary: this test always fails\"\n\n\ndef test_after():\n    pass\n"
        );
        assert_eq!(built.no_mutation, None);
        assert_eq!(
            built.moved,
            "from words import count\n\n\ndef test_one():\n    assert count(\"a\") == 1\n\n\n\n\n\n\n\n\n\ndef test_kv():\n    got = count(\"a  b\")\n    assert got == 2\n\n\ndef test_after():\n    pass\n"
        );
    }

    #[test]
    fn unittest_canaries_stay_in_the_class_and_fail_through_the_test_case() {
        let text = "import unittest\n\n\nclass WordsTest(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(count(\"a b\"), \"2\")\n\n    def test_three(self):\n        pass\n";
        let built = build(&target(&["WordsTest", "test_two"]), text, &names()).unwrap();
        assert!(built.with_canaries.contains(
            "\n\n    def test_km(self):\n        self.assertEqual(count(\"a b\"), \"2 (changed by efix)\")\n"
        ));
        assert!(built.with_canaries.contains(
            "\n\n    def test_kf(self):\n        self.fail(\"efix canary: this test always fails\")\n\n    def test_three"
        ));
        assert!(built.moved.contains("class TestKv(unittest.TestCase):"));
        assert!(built.moved.contains("    def test_kv(self):"));
    }

    #[test]
    fn parametrized_and_missing_tests_get_a_reason_not_a_canary() {
        let text = "import pytest\n\n\n@pytest.mark.parametrize(\"x\", [1, 2])\ndef test_p(x):\n    assert x\n";
        assert_eq!(
            build(&target(&["test_p"]), text, &names()).unwrap_err(),
            "a parametrized test: its cases are generated"
        );
        assert_eq!(
            build(&target(&["test_p[1]"]), text, &names()).unwrap_err(),
            "a parametrized test: its cases are generated"
        );
        assert_eq!(
            build(&target(&["test_q"]), text, &names()).unwrap_err(),
            "no `def test_q` in the file"
        );
    }

    #[test]
    fn a_test_without_an_equality_to_a_literal_has_no_mutated_canary() {
        let text = "def test_x():\n    assert ok()\n";
        let built = build(&target(&["test_x"]), text, &names()).unwrap();
        assert_eq!(
            built.no_mutation.as_deref(),
            Some("the test asserts no equality with a literal")
        );
        assert!(!built.with_canaries.contains("test_km"));
    }

    #[test]
    fn perturbed_copies_move_the_inputs_of_the_call_under_test_not_the_expected_value() {
        let built = build(&target(&["test_two"]), PYTEST_FILE, &names()).unwrap();
        let perturbed = built.perturbed.unwrap();
        let what: Vec<&str> = perturbed.copies.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(
            what,
            [
                "`\"a  b\"` → `\"a  c\"`",
                "`\"a  b\"` → `\"b  b\"`",
                "`\"a  b\"` → `\"a _b\"`"
            ]
        );
        assert!(perturbed.with_copies.contains(
            "def test_two():\n    got = count(\"a  b\")\n    assert got == 2\n\ndef p1():\n    got = count(\"a  c\")\n    assert got == 2\n\ndef p2():\n    got = count(\"b  b\")\n    assert got == 2\n"
        ));
        let text = "class T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(parse(\"10s\", 3), \"ten\")\n        print(\"done\")\n        with open(\"data/x.txt\") as f:\n            pass\n";
        let built = build(&target(&["T", "test_x"]), text, &names()).unwrap();
        let what: Vec<String> = built
            .perturbed
            .unwrap()
            .copies
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        assert_eq!(
            what,
            // Every input moves in every copy: no copy keeps one of the test's exact inputs.
            [
                "`\"10s\"` → `\"10t\"`, `3` → `4`",
                "`\"10s\"` → `\"20s\"`, `3` → `2`",
                "`\"10s\"` → `\"11s\"`, `3` → `4`"
            ]
        );
        let text = "def test_y():\n    assert ok() == \"yes\"\n";
        assert_eq!(
            build(&target(&["test_y"]), text, &names())
                .unwrap()
                .perturbed,
            Err(perturb::NoCopy::NoInput)
        );
    }
}
