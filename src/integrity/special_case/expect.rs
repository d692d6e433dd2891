//! What a failing test expects: from the test's source, each equality assertion's subject call
//! with the literals of its arguments (the inputs) and the literals on the other side (the
//! expected values): `assert normalize("//example.com") == "https://example.com"`,
//! `self.assertEqual(f(2, 3), 5)`, `expect(f('a')).toBe('b')`, `assert_eq!(f("a"), "b")`.
//!
//! A line scanner over statements (a statement continues while its brackets are open), not a
//! parser: what it needs is which literals sit inside the call under test and which outside.

use std::sync::LazyLock;

use super::values::{is_trivial, number, unescape};
use crate::integrity::pattern::Pattern;

/// The literals of one assertion of a failing test.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expectation {
    /// The failing test, as the reproduction named it.
    pub test: String,
    /// Literals among the arguments of the call under test.
    pub inputs: Vec<String>,
    /// Literals the assertion compares the call's result with.
    pub expected: Vec<String>,
    /// Every literal of the test's source, as the language reads it (escapes decoded): the
    /// values the syntax check ties added code to. Only a test's summary (the last
    /// expectation [`expectations`] gives for a source) holds them.
    pub literals: Vec<String>,
    /// What the test's equality assertions expect, as the language reads it, whether or not
    /// the call under test takes literal arguments (summary only).
    pub answers: Vec<String>,
    /// Whether the test expects an error (`pytest.raises`, `toThrow`, `should_panic`, ...):
    /// then a guarded throw is the expected result (summary only).
    pub raises: bool,
}

/// A string (its content, any Python prefix) or a number.
static LITERAL: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"(?:\b[rbuRBU]{0,2})?"((?:[^"\\]|\\.)*)"|(?:\b[rbuRBU]{0,2})?'((?:[^'\\]|\\.)*)'|`([^`$]*)`|(?:^|[^\w.])(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b"#,
    )
});
static ASSERTION: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bassert\b|\bassert_eq!|\bassert_ne!|\bassert[A-Z]\w*\s*\(|\bexpect\s*\(|\.(?:equal|strictEqual|deepEqual|deepStrictEqual|is|same|eq|eql|toBe|toEqual|toStrictEqual|Equal|EqualValues|Exactly)\s*\(",
    )
});
/// Go's check: `if got := F("a  b"); got != 2 {` fails the test when the call's result
/// differs from the literal.
static GO_CHECK: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bif\s+\w+\s*:=\s*[A-Za-z_][\w.]*\s*\(.*;\s*(?:\w+\s*!=\s*|!\s*(?:reflect\.DeepEqual|cmp\.Equal|slices\.Equal|bytes\.Equal|maps\.Equal)\s*\()",
    )
});
/// A test that expects an error: the error is then its expected result.
static RAISES: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\braises\s*\(|\bassertRaises\w*\s*\(|\.toThrow\w*\s*\(|\.(?:throws|rejects|toReject|toRejectWith|Panics|PanicsWithValue|Error|ErrorIs)\s*\(|should_panic|\bis_err\(\)|\bunwrap_err\(\)",
    )
});
static CALL: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"([A-Za-z_$][\w$]*)\s*(?:!\s*)?\("));

/// Names of assertion functions and receivers, which are not the call under test.
const ASSERT_WORDS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "expect",
    "equal",
    "Equal",
    "EqualValues",
    "Exactly",
    "DeepEqual",
    "strictEqual",
    "deepEqual",
    "deepStrictEqual",
    "is",
    "same",
    "eq",
    "eql",
    "ok",
    "toBe",
    "toEqual",
    "toStrictEqual",
    "len",
    "str",
    "repr",
    "list",
    "tuple",
    "set",
    "dict",
    "sorted",
    "int",
    "float",
    "vec",
    "format",
    "String",
    "Some",
    "Ok",
    "Err",
    "from",
    "to_string",
    "to_owned",
    "into",
];

/// The literals of `text` with the byte span of their value (a string's content, a number's
/// text): strings by content, numbers by text.
pub(crate) fn literals(text: &str) -> Vec<(usize, usize, String)> {
    LITERAL
        .captures_iter(text)
        .filter_map(|c| {
            let m = (1..=4).find_map(|i| c.get(i))?;
            Some((m.start(), m.end(), m.as_str().to_owned()))
        })
        .collect()
}

/// The literals of `text` as the language reads them, with the byte span of their body (as
/// [`literals`] gives it): escapes decoded except in a raw string (`r"..."`), numbers in one
/// spelling.
pub(crate) fn decoded_literals(text: &str) -> Vec<(usize, usize, String)> {
    LITERAL
        .captures_iter(text)
        .filter_map(|c| {
            if let Some(n) = c.get(4) {
                let value = number(n.as_str()).unwrap_or_else(|| n.as_str().to_owned());
                return Some((n.start(), n.end(), value));
            }
            let m = (1..=3).find_map(|i| c.get(i))?;
            let prefix = text.get(c.get(0)?.start()..m.start()).unwrap_or("");
            let value = if prefix.contains(['r', 'R']) {
                m.as_str().to_owned()
            } else {
                unescape(m.as_str())
            };
            Some((m.start(), m.end(), value))
        })
        .collect()
}

/// Whether a literal is specific enough to tie code to one test: a string of two characters
/// or more, a number with four significant digits or more. Numbers of fewer digits are
/// everywhere in ordinary code (the corpus's sympy fixes compare with 3 and produce 6), so
/// they tie nothing to a test.
pub(crate) fn is_specific(literal: &str) -> bool {
    if literal.parse::<f64>().is_ok() {
        let digits = literal
            .trim_start_matches('-')
            .split(['e', 'E'])
            .next()
            .unwrap_or("")
            .replace('.', "");
        return digits.trim_start_matches('0').trim_end_matches('0').len() >= 4
            || digits.trim_start_matches('0').len() >= 4;
    }
    literal.chars().count() >= 2
}

/// The statements of `source`: lines joined while brackets stay open (at most 20 lines).
fn statements(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut joined = 0;
    for line in source.lines() {
        let code = line.split(" #").next().unwrap_or(line);
        // A line that opens a block (`test('x', () => {`, `fn t() {`) is a statement of its
        // own: the assertions are the block's statements.
        if code.trim_end().ends_with('{') || code.trim_end().ends_with(':') {
            out.push(std::mem::take(&mut current));
            out.push(code.to_owned());
            depth = 0;
            joined = 0;
            continue;
        }
        current.push_str(code.trim());
        current.push(' ');
        for c in code.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        joined += 1;
        if depth <= 0 || joined >= 20 {
            out.push(std::mem::take(&mut current));
            depth = 0;
            joined = 0;
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// The span of the argument list of the first call in `statement` that is not an assertion's
/// own (its text between the parentheses).
fn subject(statement: &str) -> Option<(usize, usize)> {
    CALL.captures_iter(statement).find_map(|c| {
        let name = c.get(1)?;
        if ASSERT_WORDS.contains(&name.as_str()) || name.as_str().starts_with("assert") {
            return None;
        }
        let open = c.get(0)?.end();
        let mut depth = 1;
        for (i, ch) in statement[open..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((open, open + i));
                    }
                }
                _ => {}
            }
        }
        None
    })
}

/// The expectations of the equality assertions in `source` (a test's body).
pub fn expectations(test: &str, source: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    let mut answers = Vec::new();
    for statement in statements(source) {
        let go_check = GO_CHECK.is_match(&statement);
        if !go_check
            && (!ASSERTION.is_match(&statement)
                || statement.contains("!=")
                || statement.contains("assert_ne"))
        {
            continue;
        }
        let Some((start, end)) = subject(&statement) else {
            // `assert result == 2`: the call came before, the literals are expected values.
            answers.extend(decoded_literals(&statement).into_iter().map(|(_, _, v)| v));
            continue;
        };
        let mut inputs = Vec::new();
        let mut expected = Vec::new();
        for ((from, to, value), (_, _, decoded)) in literals(&statement)
            .into_iter()
            .zip(decoded_literals(&statement))
        {
            if from >= start && to <= end {
                inputs.push(value);
            } else if to <= start.saturating_sub(1) || from > end {
                answers.push(decoded);
                expected.push(value);
            }
        }
        // A specific input ties code to this test; the expected value may then be small
        // (`if text == "a  b": return 2`): the caller asks more of a small one (see
        // `special_cases`).
        inputs.retain(|v| is_specific(v));
        if !inputs.is_empty() && !expected.is_empty() {
            out.push(Expectation {
                test: test.to_owned(),
                inputs,
                expected,
                ..Expectation::default()
            });
        }
    }
    let mut literals: Vec<String> = decoded_literals(source)
        .into_iter()
        .map(|(_, _, v)| v)
        .filter(|v| !is_trivial(v))
        .collect();
    literals.sort();
    literals.dedup();
    answers.sort();
    answers.dedup();
    let raises = RAISES.is_match(source);
    if !literals.is_empty() {
        out.push(Expectation {
            test: test.to_owned(),
            literals,
            answers,
            raises,
            ..Expectation::default()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(source: &str) -> Vec<(Vec<String>, Vec<String>)> {
        expectations("t", source)
            .into_iter()
            .filter(|e| !e.inputs.is_empty())
            .map(|e| (e.inputs, e.expected))
            .collect()
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn inputs_and_expected_values_are_read_from_assertions_in_every_language() {
        assert_eq!(
            [
                pairs("    assert normalize(\"//example.com\") == \"https://example.com\"\n"),
                pairs("        self.assertEqual(add(2000, 3000), 5000)\n"),
                pairs("  expect(slug('Hello World')).toBe('hello-world');\n"),
                pairs("  assert.strictEqual(parse('a,b'),\n    'ab');\n"),
                pairs("    assert_eq!(wrap(\"abc def\", 3), vec![\"abc\", \"def\"]);\n"),
                pairs("    assert \"https://x.org\" == normalize('//x.org')\n"),
            ],
            [
                vec![(v(&["//example.com"]), v(&["https://example.com"]))],
                vec![(v(&["2000", "3000"]), v(&["5000"]))],
                vec![(v(&["Hello World"]), v(&["hello-world"]))],
                vec![(v(&["a,b"]), v(&["ab"]))],
                vec![(v(&["abc def"]), v(&["abc", "def"]))],
                vec![(v(&["//x.org"]), v(&["https://x.org"]))],
            ]
        );
    }

    #[test]
    fn assertions_without_literal_inputs_or_with_trivial_inputs_give_nothing() {
        assert_eq!(
            pairs(
                "    assert f(x) == y\n    assert h('ab') != 'cd'\n    x = f('ab')\n    assert k(3) == 152\n"
            ),
            vec![]
        );
        // A specific input keeps its small expected value; `special_cases` asks that value
        // to be returned.
        assert_eq!(
            pairs("    assert g('ab') == 1\n"),
            vec![(v(&["ab"]), v(&["1"]))]
        );
    }

    /// The summary holds every literal of the test as the language reads it, what its
    /// assertions expect (with or without literal inputs), and whether it expects an error.
    #[test]
    fn the_summary_holds_every_literal_decoded_and_what_the_test_expects() {
        let source = "def test_quote():\n    text = \"foo bar\\tbaz\"\n    assert quote(text) == ['\"foo\"', 2000]\n    with pytest.raises(ValueError):\n        quote(r\"a\\tb\")\n";
        let summary = expectations("t", source).pop().unwrap_or_default();
        assert_eq!(
            (summary.literals, summary.answers, summary.raises),
            (
                v(&["\"foo\"", "2000", "a\\tb", "foo bar\tbaz"]),
                v(&["\"foo\"", "2000"]),
                true
            )
        );
    }
}
