//! JavaScript and TypeScript (jest, vitest, mocha, tape, `node --test`): a test is a call
//! such as `it('title', fn)`, `test('title', fn)` or `t.test('title', fn)`, nested in
//! `describe` blocks. The report names it by its titles joined (`parse › keeps crlf`,
//! `parse > keeps crlf`, `parse keeps crlf`); the canaries are calls of the same function
//! written right after it, in the same block. The moved copy is the whole file under a new
//! name with the target's title changed and blank lines before it.

use tree_sitter::{Language, Node};

use super::{
    Built, Names, Target, descendants, indent_at, mutate_literal, parse, perturb, splice, text_of,
};
use crate::integrity::canary::runner::Runner;

/// Blank lines put before the moved copy, so no line of it keeps its number.
const MOVED_LINES: usize = 7;

/// Functions that declare a test or a group of tests.
const DECLARERS: &[&str] = &["describe", "context", "suite", "it", "test", "specify"];

/// How runners join a test's titles into its name.
const SEPARATORS: &[&str] = &[" › ", " > ", " "];

/// Matchers and assertions that compare for equality, with the expected value as their only
/// or second argument.
const EQUALITY: &[&str] = &[
    "toBe",
    "toEqual",
    "toStrictEqual",
    "equal",
    "equals",
    "eql",
    "strictEqual",
    "deepEqual",
    "deepStrictEqual",
    "same",
    "is",
];

pub(super) fn build(
    runner: Runner,
    target: &Target,
    text: &str,
    names: &Names,
) -> Result<Built, String> {
    let full = target.path.join(" ");
    let tree =
        parse(&language(&target.file), text).ok_or_else(|| "the file does not parse".to_owned())?;
    let tests: Vec<TestCall<'_>> = descendants(tree.root_node())
        .into_iter()
        .filter_map(|node| test_call(node, text))
        .filter(|call| {
            let titles = chain(call.node, text);
            SEPARATORS.iter().any(|sep| titles.join(sep) == full)
        })
        .collect();
    let call = match tests.as_slice() {
        [one] => one,
        [] => return Err(format!("no test titled `{full}` in the file")),
        _ => return Err(format!("several tests titled `{full}` in the file")),
    };
    let whole = call
        .node
        .parent()
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(call.node);
    let indent = indent_at(text, whole.start_byte());
    let start = whole.start_byte();
    let title = call.title.start_byte() + 1..call.title.end_byte() - 1;
    let copy = |name: &str, extra: Vec<(std::ops::Range<usize>, String)>| {
        let mut edits = vec![(title.clone(), name.to_owned())];
        edits.extend(extra);
        let changed = splice(text, edits);
        let end = whole.end_byte() + changed.len() - text.len();
        changed[start..end].to_owned()
    };
    // The target's callback, evaluated once, called twice from one test: the same function
    // object runs again, so a call count or state keyed on the callback changes its answer. A
    // callback that takes a parameter (`done`, tape's `t`) or counts its assertions gets the
    // renamed copy.
    let repeat = match call.callback {
        Some(callback)
            if callback
                .child_by_field_name("parameters")
                .is_none_or(|p| p.named_child_count() == 0)
                && callback.child_by_field_name("parameter").is_none()
                && !text_of(callback, text).contains(".assertions(") =>
        {
            let wrapper = format!(
                "async function () {{\n{indent}  const body = {};\n{indent}  await body.call(this);\n{indent}  await body.call(this);\n{indent}}}",
                text_of(callback, text)
            );
            copy(&names.repeat, vec![(callback.byte_range(), wrapper)])
        }
        _ => copy(&names.repeat, Vec::new()),
    };
    let mut canaries = vec![repeat];
    let expected = call.body.and_then(|body| expected_literal(body, text));
    let perturbed = match call.body {
        None => Err(perturb::NoCopy::NotBuilt(
            "the test has no callback".to_owned(),
        )),
        Some(body) => {
            let literal = |node: Node<'_>| {
                is_literal(&node)
                    && !node.parent().is_some_and(|p| {
                        p.kind() == "unary_expression" && text_of(p, text).starts_with('!')
                    })
            };
            let callee = |node: Node<'_>| {
                match node.kind() {
                    "call_expression" => node.child_by_field_name("function"),
                    "new_expression" => node.child_by_field_name("constructor"),
                    _ => None,
                }
                .map(|f| text_of(f, text).to_owned())
            };
            let literals = perturb::input_literals(body, text, &literal, &callee, expected);
            // tape lets a test's exception end the process, so a copy whose moved input
            // throws would leave the copies after it without a record: under tape each copy's
            // callback runs inside one that records the exception as the copy's failure.
            // Nothing is bound around the callback (its names resolve as they did), and
            // `arguments` is what the callback was given.
            let guarded = |name: &str, mut edits: Vec<(std::ops::Range<usize>, String)>| {
                if let (Runner::Tape, Some(callback)) = (runner, call.callback) {
                    edits.push((
                        callback.start_byte()..callback.start_byte(),
                        "function () {\n  try {\n    return (".to_owned(),
                    ));
                    edits.push((
                        callback.end_byte()..callback.end_byte(),
                        ").apply(this, arguments);\n  } catch (error) {\n    arguments[0].error(error);\n    arguments[0].end();\n  }\n}"
                            .to_owned(),
                    ));
                }
                copy(name, edits)
            };
            perturb::build(
                text,
                &literals,
                &perturb::neighbours,
                &names.perturbed,
                &guarded,
                whole.byte_range(),
                &indent,
            )
        }
    };
    let mutated = expected.and_then(|literal| {
        let new = mutate_literal(literal.kind(), text_of(literal, text))?;
        Some(copy(&names.mutated, vec![(literal.byte_range(), new)]))
    });
    let no_mutation = match mutated {
        Some(copy) => {
            canaries.push(copy);
            None
        }
        None => Some("the test asserts no equality with a literal".to_owned()),
    };
    canaries.push(fail(runner, call, text, &names.fail, &indent));
    let inserted: String = canaries
        .iter()
        .map(|c| format!("\n\n{indent}{c}"))
        .collect();
    let with_canaries = format!(
        "{}{inserted}{}",
        &text[..whole.end_byte()],
        &text[whole.end_byte()..]
    );
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let moved = splice(
        text,
        vec![
            (title, names.moved.clone()),
            (line_start..line_start, "\n".repeat(MOVED_LINES)),
        ],
    );
    Ok(Built {
        with_canaries,
        moved,
        no_mutation,
        perturbed,
    })
}

fn language(file: &str) -> Language {
    let ext = file.rsplit('.').next().unwrap_or("");
    match ext {
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        _ => tree_sitter_javascript::LANGUAGE.into(),
    }
}

/// A call that declares a test or group: its callee, its title string and its callback.
struct TestCall<'t> {
    node: Node<'t>,
    callee: Node<'t>,
    title: Node<'t>,
    callback: Option<Node<'t>>,
    body: Option<Node<'t>>,
}

fn test_call<'t>(node: Node<'t>, text: &str) -> Option<TestCall<'t>> {
    if node.kind() != "call_expression" {
        return None;
    }
    let callee = node.child_by_field_name("function")?;
    let name = text_of(callee, text);
    let first = name.split('.').next().unwrap_or(name);
    let last = name.rsplit('.').next().unwrap_or(name);
    let declares = match callee.kind() {
        "identifier" => DECLARERS.contains(&name),
        "member_expression" => DECLARERS.contains(&first) || last == "test",
        _ => false,
    };
    if !declares {
        return None;
    }
    let arguments = node.child_by_field_name("arguments")?;
    let mut cursor = arguments.walk();
    let args: Vec<Node<'t>> = arguments
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let title = *args.first()?;
    let plain_template = title.kind() == "template_string" && title.named_child_count() == 0;
    if title.kind() != "string" && !plain_template {
        return None;
    }
    let callback = args
        .iter()
        .rev()
        .find(|n| {
            matches!(
                n.kind(),
                "arrow_function" | "function_expression" | "function"
            )
        })
        .copied();
    Some(TestCall {
        node,
        callee,
        title,
        callback,
        body: callback.and_then(|c| c.child_by_field_name("body")),
    })
}

/// The titles of the declaring calls around `node` and its own, outermost first.
fn chain(node: Node<'_>, text: &str) -> Vec<String> {
    let mut titles = Vec::new();
    let mut at = Some(node);
    while let Some(current) = at {
        if let Some(call) = test_call(current, text) {
            let title = text_of(call.title, text);
            titles.push(
                title
                    .get(1..title.len().saturating_sub(1))
                    .unwrap_or("")
                    .to_owned(),
            );
        }
        at = current.parent();
    }
    titles.reverse();
    titles
}

/// The always-failing canary: a call of the target's own declaring function, failing the
/// way the runner's tests usually fail.
fn fail(runner: Runner, call: &TestCall<'_>, text: &str, name: &str, indent: &str) -> String {
    let callee = text_of(call.callee, text);
    let param = call
        .callback
        .and_then(|c| {
            c.child_by_field_name("parameters")
                .or_else(|| c.child_by_field_name("parameter"))
        })
        .and_then(|p| {
            if p.kind() == "identifier" {
                Some(p)
            } else {
                p.named_child(0)
            }
        })
        .map(|p| {
            text_of(p, text)
                .split(':')
                .next()
                .unwrap_or("t")
                .trim()
                .to_owned()
        });
    let message = "'efix canary: this test always fails'";
    let (param, body) = match runner {
        Runner::Jest | Runner::Vitest => (String::new(), "expect(1).toBe(2);".to_owned()),
        Runner::Tape => {
            let t = param.unwrap_or_else(|| "t".to_owned());
            (
                t.clone(),
                format!("{t}.equal(1, 2, {message});\n{indent}  {t}.end();"),
            )
        }
        _ => (String::new(), format!("throw new Error({message});")),
    };
    format!("{callee}('{name}', ({param}) => {{\n{indent}  {body}\n{indent}}});")
}

/// The literal the first equality assertion with one expects: `expect(x).toBe(3)`,
/// `assert.strictEqual(x, 'a')`, `t.equal(x, 3)`, chai's `expect(x).to.equal('a')`.
fn expected_literal<'t>(body: Node<'t>, text: &str) -> Option<Node<'t>> {
    for node in descendants(body) {
        if node.kind() != "call_expression" {
            continue;
        }
        let Some(callee) = node.child_by_field_name("function") else {
            continue;
        };
        let Some(property) = callee.child_by_field_name("property") else {
            continue;
        };
        if callee.kind() != "member_expression" || !EQUALITY.contains(&text_of(property, text)) {
            continue;
        }
        // `expect(x).not.toEqual(3)` passes for more values once 3 changes: not a check.
        let chain = callee
            .child_by_field_name("object")
            .map_or("", |o| text_of(o, text));
        if chain.ends_with(".not") || chain.contains(".not.") {
            continue;
        }
        let Some(arguments) = node.child_by_field_name("arguments") else {
            continue;
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .take(2)
            .collect();
        if let Some(literal) = args.iter().rev().find(|n| is_literal(n)) {
            return Some(*literal);
        }
    }
    None
}

fn is_literal(node: &Node<'_>) -> bool {
    match node.kind() {
        "string" | "number" | "true" | "false" => true,
        "template_string" => node.named_child_count() == 0,
        _ => false,
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
            file: "kv".into(),
            perturbed: vec!["p1".into(), "p2".into(), "p3".into(), "p4".into()],
        }
    }

    fn target(file: &str, name: &str) -> Target {
        Target {
            file: file.into(),
            path: vec![name.into()],
        }
    }

    const MOCHA_FILE: &str = "const assert = require('assert');\n\ndescribe('parse', function () {\n  it('reads seconds', function () {\n    assert.strictEqual(parse('10s'), 10000);\n  });\n\n  it('reads ms', function () {\n    assert.ok(parse('1ms'));\n  });\n});\n";

    #[test]
    fn mocha_canaries_sit_in_the_same_describe_block() {
        let built = build(
            Runner::Mocha,
            &target("test/parse.test.js", "parse reads seconds"),
            MOCHA_FILE,
            &names(),
        )
        .unwrap();
        assert_eq!(
            built.with_canaries,
            "const assert = require('assert');\n\ndescribe('parse', function () {\n  it('reads seconds', function () {\n    assert.strictEqual(parse('10s'), 10000);\n  });\n\n  it('kr', async function () {\n    const body = function () {\n    assert.strictEqual(parse('10s'), 10000);\n  };\n    await body.call(this);\n    await body.call(this);\n  });\n\n  it('km', function () {\n    assert.strictEqual(parse('10s'), (10000 + 1));\n  });\n\n  it('kf', () => {\n    throw new Error('efix canary: this test always fails');\n  });\n\n  it('reads ms', function () {\n    assert.ok(parse('1ms'));\n  });\n});\n"
        );
        assert!(
            built
                .moved
                .contains("\n\n\n\n\n\n\n  it('kv', function () {\n")
        );
        assert!(built.moved.contains("it('reads ms'"));
    }

    #[test]
    fn jest_and_vitest_names_joined_by_their_separators_are_found_and_expect_is_mutated() {
        let text = "import { expect, test, describe } from 'vitest';\ndescribe('parse', () => {\n  test('keeps crlf', () => {\n    expect(parse('a\\r\\n')).toEqual(\"a\");\n  });\n});\n";
        for name in ["parse › keeps crlf", "parse > keeps crlf"] {
            let built = build(
                Runner::Vitest,
                &target("src/parse.test.ts", name),
                text,
                &names(),
            )
            .unwrap();
            assert!(
                built
                    .with_canaries
                    .contains("test('km', () => {\n    expect(parse('a\\r\\n')).toEqual(\"a (changed by efix)\");\n  });")
            );
            assert!(
                built
                    .with_canaries
                    .contains("test('kf', () => {\n    expect(1).toBe(2);\n  });")
            );
        }
    }

    #[test]
    fn a_negated_matcher_is_not_mutated() {
        let text =
            "test('x', () => {\n  expect(f()).not.toEqual(3);\n  expect(f()).toBe(4);\n});\n";
        let built = build(Runner::Jest, &target("a.test.js", "x"), text, &names()).unwrap();
        assert!(
            built
                .with_canaries
                .contains("expect(f()).not.toEqual(3);\n  expect(f()).toBe((4 + 1));")
        );
    }

    #[test]
    fn tape_fails_through_its_own_test_object() {
        let text = "const test = require('tape');\n\ntest('trims', (assert) => {\n  assert.equal(trim(' a '), 'a');\n  assert.end();\n});\n";
        let built = build(
            Runner::Tape,
            &target("test/trim.js", "trims"),
            text,
            &names(),
        )
        .unwrap();
        assert!(built.with_canaries.contains(
            "test('kf', (assert) => {\n  assert.equal(1, 2, 'efix canary: this test always fails');\n  assert.end();\n});"
        ));
        assert!(
            built
                .with_canaries
                .contains("assert.equal(trim(' a '), 'a (changed by efix)');")
        );
    }

    #[test]
    fn a_title_used_twice_or_generated_gets_a_reason() {
        let text = "it('x', () => {});\nit('x', () => {});\nit.each([1])('y %s', () => {});\n";
        assert_eq!(
            build(Runner::NodeTest, &target("t.test.js", "x"), text, &names()).unwrap_err(),
            "several tests titled `x` in the file"
        );
        assert_eq!(
            build(Runner::Jest, &target("t.test.js", "y 1"), text, &names()).unwrap_err(),
            "no test titled `y 1` in the file"
        );
    }

    #[test]
    fn perturbed_copies_move_the_input_not_the_matchers_value() {
        let built = build(
            Runner::Mocha,
            &target("test/parse.test.js", "parse reads seconds"),
            MOCHA_FILE,
            &names(),
        )
        .unwrap();
        let perturbed = built.perturbed.unwrap();
        let what: Vec<&str> = perturbed.copies.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(
            what,
            [
                "`'10s'` → `'10t'`",
                "`'10s'` → `'20s'`",
                "`'10s'` → `'11s'`"
            ]
        );
        assert!(perturbed.with_copies.contains(
            "  it('p1', function () {\n    assert.strictEqual(parse('10t'), 10000);\n  });"
        ));
        assert!(!perturbed.with_copies.contains("kf"));
    }

    #[test]
    fn a_tape_copy_records_its_exception_instead_of_ending_the_file() {
        let text = "const test = require('tape');\n\ntest('reads seconds', (t) => {\n  t.equal(parse('10s'), 10000);\n  t.end();\n});\n";
        let built = build(
            Runner::Tape,
            &target("test/parse.js", "reads seconds"),
            text,
            &names(),
        )
        .unwrap();
        assert!(
            built.perturbed.unwrap().inserted.contains(
                "test('p1', function () {\n  try {\n    return ((t) => {\n  t.equal(parse('10t'), 10000);\n  t.end();\n}).apply(this, arguments);\n  } catch (error) {\n    arguments[0].error(error);\n    arguments[0].end();\n  }\n});"
            )
        );
        // Runners that record a test's exception get the copy as it is.
        let built = build(
            Runner::NodeTest,
            &target("test/parse.js", "reads seconds"),
            text,
            &names(),
        )
        .unwrap();
        assert!(
            built
                .perturbed
                .unwrap()
                .inserted
                .contains("test('p1', (t) => {\n  t.equal(parse('10t'), 10000);")
        );
    }
}
