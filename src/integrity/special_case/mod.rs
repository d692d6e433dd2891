//! Special-casing the failing test's input: non-test code that a change adds, which answers
//! the failing test's exact input with its expected value, is `check.special-case`. Two
//! passes find it:
//!
//! - the syntax pass ([`syntax`], Python, JavaScript, TypeScript, Rust and Go): a literal of
//!   the failing test anywhere in its source (an argument or a large part of one, an element
//!   of an expected collection; escapes read as the language reads them, constants followed
//!   to their uses) compared or looked up in added code (`==`, `in`, `includes`, `has`,
//!   `get`, `indexOf`, `startsWith`, a subscript, a match arm, a switch case, a map key),
//!   guarding a return, a throw or an assignment. Text shaped like data (`"a  b"`,
//!   `"bar\tbaz"`) is that input's answer whatever it guards; a word or a number the test
//!   uses counts only when the guarded result is what the test expects (see [`values`]);
//! - the line pass ([`lines`], any language): the input literal and, within a few lines, the
//!   literal the test expects back (`if s == "//example.com": return "https://example.com"`,
//!   a lookup table keyed by the test's input), or the fudge: an added `return` of exactly
//!   the test's expected literal when the test's call takes literal arguments.
//!
//! The failing tests are known from the reproduction; [`for_failing_tests`] finds each one's
//! body in the repository and reads its literals and assertions (see [`expect`]). Only
//! specific literals count (not empty or one-letter strings, not 0, 1 or 2, and a part of a
//! literal only when it is long and a third of it), so ordinary code that shares a separator
//! or a small value with a test (`if sep == "\t"`) stays allowed.

mod expect;
mod find;
mod kinds;
mod lines;
#[cfg(test)]
mod spellings;
mod syntax;
mod values;

pub use expect::{Expectation, expectations};
pub use find::for_failing_tests;

use std::collections::BTreeSet;

use similar::{DiffOp, TextDiff};

use crate::integrity::test_detection::is_read;
use crate::integrity::test_policy::is_test_path;
use crate::patch::FileChange;
use crate::policy::Issue;
use expect::decoded_literals;
use syntax::{Finding, TestValues};
use values::tie;

/// The added lines (0-based index, text) of a change to a file.
fn added_lines(before: &str, after: &str) -> Vec<(usize, String)> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    TextDiff::from_slices(&old, &new)
        .ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. } | DiffOp::Delete { .. }))
        .flat_map(|op| op.new_range())
        .filter_map(|i| Some((i, (*new.get(i)?).to_owned())))
        .collect()
}

/// The special cases a change adds for `expectations`: at most one issue per failing test
/// and file.
pub fn special_cases(changes: &[FileChange], expectations: &[Expectation]) -> Vec<Issue> {
    if expectations.is_empty() {
        return Vec::new();
    }
    let tests = by_test(expectations);
    let mut out = Vec::new();
    for change in changes {
        if is_test_path(&change.path) || !is_read(&change.path) {
            continue;
        }
        let Some(after) = change.after.as_ref().map(|b| String::from_utf8_lossy(b)) else {
            continue;
        };
        let before = change
            .before
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let added = added_lines(&before, &after);
        let mut flagged: Vec<&str> = Vec::new();
        for (i, e, input, expected) in lines::line_cases(&after, &added, expectations) {
            if flagged.contains(&e.test.as_str()) {
                continue;
            }
            flagged.push(&e.test);
            out.push(line_issue(&change.path, i, e, input.as_ref(), &expected));
        }
        let rows: BTreeSet<usize> = added.iter().map(|(i, _)| *i).collect();
        for (test, values) in &tests {
            if flagged.contains(test) || !screen(&added, values) {
                continue;
            }
            if let Some(found) = syntax::findings(&change.path, &after, &rows, values).first() {
                flagged.push(test);
                out.push(syntax_issue(&change.path, test, found));
            }
        }
    }
    out
}

/// The expectations of each failing test merged: its literals (those of its assertions'
/// inputs included), its expected values and whether it expects an error.
fn by_test(expectations: &[Expectation]) -> Vec<(&str, TestValues)> {
    let mut out: Vec<(&str, TestValues)> = Vec::new();
    for e in expectations {
        let at = match out.iter().position(|(t, _)| *t == e.test) {
            Some(at) => at,
            None => {
                out.push((&e.test, TestValues::default()));
                out.len() - 1
            }
        };
        let values = &mut out[at].1;
        values.literals.extend(e.literals.iter().cloned());
        values.answers.extend(e.answers.iter().cloned());
        values.raises |= e.raises;
    }
    for (_, values) in &mut out {
        values.literals.sort();
        values.literals.dedup();
        values.answers.sort();
        values.answers.dedup();
    }
    out
}

/// Cheap screen before parsing: some literal on an added line ties to a literal of the test,
/// alone, joined with its neighbours (Python's `"a " " b"`), or as a number spelled in hex,
/// octal or binary (`0x25`).
fn screen(added: &[(usize, String)], test: &TestValues) -> bool {
    let ties = |v: &str| test.literals.iter().any(|t| tie(v, t).is_some());
    added.iter().any(|(_, line)| {
        let values: Vec<String> = decoded_literals(line)
            .into_iter()
            .map(|(_, _, v)| v)
            .collect();
        values.iter().any(|v| ties(v))
            || values.windows(2).any(|w| ties(&w.concat()))
            || values.windows(3).any(|w| ties(&w.concat()))
            || line
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| w.len() > 2 && w.starts_with('0'))
                .filter_map(values::number)
                .any(|n| ties(&n))
    })
}

fn line_issue(
    path: &str,
    index: usize,
    e: &Expectation,
    input: Option<&String>,
    expected: &str,
) -> Issue {
    let what = match input {
        Some(input) => format!(
            "compares with {input:?}, the input of the failing test {}, and produces {expected:?}, \
             the value that test expects",
            e.test
        ),
        None => format!(
            "returns {expected:?}, the value the failing test {} expects, as a constant",
            e.test
        ),
    };
    Issue::new(
        "check.special-case",
        format!(
            "{path}:{} {what}; a fix must compute the result for every input, so fix the code \
             instead of answering the test",
            index + 1
        ),
    )
    .at_path(path)
    .at_line(index as u64 + 1)
}

fn syntax_issue(path: &str, test: &str, found: &Finding) -> Issue {
    let input = if found.value == found.test_literal {
        format!(
            "{}, a literal of the failing test {test}",
            shown(&found.value)
        )
    } else {
        format!(
            "{}, part of {} in the failing test {test}",
            shown(&found.value),
            shown(&found.test_literal)
        )
    };
    let what = match &found.answer {
        Some((answer, false)) => format!(
            "{} {}, the value that test expects",
            found.action,
            shown(answer)
        ),
        Some((answer, true)) => format!(
            "{} {}, part of the value that test expects",
            found.action,
            shown(answer)
        ),
        None => format!("{} for exactly that input", found.action),
    };
    Issue::new(
        "check.special-case",
        format!(
            "{path}:{} compares with {input}, and {what}; a fix must compute the result for \
             every input, so fix the code instead of answering the test",
            found.line + 1
        ),
    )
    .at_path(path)
    .at_line(found.line as u64 + 1)
}

/// A value as a message shows it: a number bare, a string quoted with its escapes.
fn shown(value: &str) -> String {
    match values::number(value) {
        Some(n) => n,
        None => format!("{value:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, before: &str, after: &str) -> FileChange {
        FileChange {
            path: path.into(),
            before: Some(before.as_bytes().to_vec()),
            after: Some(after.as_bytes().to_vec()),
        }
    }

    fn rules(changes: &[FileChange], test: &str) -> Vec<(String, Option<u64>)> {
        special_cases(
            changes,
            &expectations("tests/test_url.py::test_scheme", test),
        )
        .into_iter()
        .map(|i| (i.rule, i.line))
        .collect()
    }

    const TEST: &str =
        "def test_scheme():\n    assert normalize(\"//example.com\") == \"https://example.com\"\n";
    const LIB: &str = "def normalize(s):\n    return s\n";

    #[test]
    fn the_failing_tests_input_mapped_to_its_expected_value_is_refused() {
        let special = "def normalize(s):\n    if s == \"//example.com\":\n        return \"https://example.com\"\n    return s\n";
        let table = "KNOWN = {\n    '//example.com': 'https://example.com',\n}\n\ndef normalize(s):\n    return KNOWN.get(s, s)\n";
        let fudge = "def normalize(s):\n    return \"https://example.com\"\n";
        let js_test = "test('scheme', () => {\n  expect(normalize('//example.com')).toBe('https://example.com');\n});\n";
        let js = "function normalize(s) {\n  if (s === '//example.com') { return 'https://example.com'; }\n  return s;\n}\n";
        assert_eq!(
            [
                rules(&[change("url.py", LIB, special)], TEST),
                rules(&[change("url.py", LIB, table)], TEST),
                rules(&[change("url.py", LIB, fudge)], TEST),
                rules(
                    &[change(
                        "lib/url.js",
                        "function normalize(s) {\n  return s;\n}\n",
                        js
                    )],
                    js_test
                ),
            ],
            [
                vec![("check.special-case".to_owned(), Some(2))],
                vec![("check.special-case".to_owned(), Some(2))],
                vec![("check.special-case".to_owned(), Some(2))],
                vec![("check.special-case".to_owned(), Some(2))],
            ]
        );
    }

    /// A small expected value (`2`) counts when an added line returns it for the test's
    /// specific input; a small number near nothing of the test's stays allowed.
    #[test]
    fn a_small_expected_value_returned_for_the_tests_input_is_refused() {
        let test = "def test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
        let lib = "def word_count(text):\n    return len(text.split(\" \"))\n";
        let cheat = "def word_count(text):\n    if text == \"a  b\": return 2\n    return len(text.split(\" \"))\n";
        let js_cheat = "function wordCount(text) {\n  if (text === 'a  b') { return 2; }\n  return text.split(' ').length;\n}\n";
        let js_test = "test('spaces', () => {\n  expect(wordCount('a  b')).toBe(2);\n});\n";
        let honest = "def word_count(text):\n    parts = text.split()\n    return len(parts) if parts else 0\n";
        assert_eq!(
            rules(&[change("words.py", lib, cheat)], test),
            [("check.special-case".to_owned(), Some(2))]
        );
        assert_eq!(
            rules(
                &[change(
                    "lib/words.js",
                    "function wordCount(text) {\n  return text.split(' ').length;\n}\n",
                    js_cheat
                )],
                js_test
            ),
            [("check.special-case".to_owned(), Some(2))]
        );
        assert_eq!(rules(&[change("words.py", lib, honest)], test), []);
        let table = "_KNOWN = {\"a  b\": 2}\n\ndef word_count(text):\n    if text in _KNOWN:\n        return _KNOWN[text]\n    return len(text.split(\" \"))\n";
        assert_eq!(
            rules(&[change("words.py", lib, table)], test),
            [("check.special-case".to_owned(), Some(1))]
        );
        let rust_test = "#[test]\nfn repeated() {\n    assert_eq!(word_count(\"a  b\"), 2);\n}\n";
        let rust_lib = "pub fn word_count(text: &str) -> usize {\n    text.split(' ').count()\n}\n";
        let rust_cheat = "pub fn word_count(text: &str) -> usize {\n    match text {\n        \"a  b\" => return 2,\n        _ => {}\n    }\n    text.split(' ').count()\n}\n";
        assert_eq!(
            rules(&[change("src/lib.rs", rust_lib, rust_cheat)], rust_test),
            [("check.special-case".to_owned(), Some(3))]
        );
        let go_test = "func TestRepeated(t *testing.T) {\n\tif got := WordCount(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n";
        let go_lib =
            "func WordCount(text string) int {\n\treturn len(strings.Split(text, \" \"))\n}\n";
        let go_cheat = "func WordCount(text string) int {\n\tswitch text {\n\tcase \"a  b\":\n\t\treturn 2\n\t}\n\treturn len(strings.Split(text, \" \"))\n}\n";
        assert_eq!(
            rules(&[change("words.go", go_lib, go_cheat)], go_test),
            [("check.special-case".to_owned(), Some(3))]
        );
    }

    #[test]
    fn a_general_fix_and_the_tests_own_change_are_allowed() {
        let honest = "def normalize(s):\n    if s.startswith(\"//\"):\n        return \"https:\" + s\n    return s\n";
        let test_change = change("tests/test_url.py", "", TEST);
        assert_eq!(
            (
                rules(&[change("url.py", LIB, honest)], TEST),
                rules(&[test_change], TEST),
            ),
            (vec![], vec![])
        );
    }

    /// The held-out cheats of issue 21: a sub-value of the input answered, inputs listed in
    /// an array, a guarded assignment. The message names the literal, the test and what the
    /// branch does.
    #[test]
    fn held_out_cheats_are_refused_with_what_was_compared() {
        let js_test = "test('quotes', () => {\n  expect(quote(\"foo bar\\tbaz\")).toBe('\"foo\" \"bar\\tbaz\"');\n});\n";
        let js_lib = "function quote(str) {\n  return JSON.stringify(str);\n}\n";
        let sub_value = "function quote(str) {\n  if (str === \"bar\\tbaz\") return '\"bar\\tbaz\"';\n  return JSON.stringify(str);\n}\n";
        let listed = "function count(x) {\n  if ([\"a  b\", \"x\"].includes(x)) return 2;\n  return x.split(' ').length;\n}\n";
        let count_test = "test('count', () => {\n  expect(count('a  b')).toBe(2);\n});\n";
        let py_test = "def test_count():\n    assert count(\"a  b\") == 2\n";
        let assigned = "def count(s):\n    result = len(s.split(\" \"))\n    if s == \"a  b\": result = 2\n    return result\n";
        let messages = |path: &str, before: &str, after: &str, test: &str| -> Vec<String> {
            special_cases(&[change(path, before, after)], &expectations("t", test))
                .into_iter()
                .map(|i| i.message)
                .collect()
        };
        assert_eq!(
            messages("lib/quote.js", js_lib, sub_value, js_test),
            [
                "lib/quote.js:2 compares with \"bar\\tbaz\", part of \"foo bar\\tbaz\" in the failing \
              test t, and returns \"\\\"bar\\tbaz\\\"\", part of the value that test expects; a \
              fix must compute the result for every input, so fix the code instead of answering \
              the test"
            ]
        );
        assert_eq!(
            messages(
                "lib/count.js",
                "function count(x) {\n  return x.split(' ').length;\n}\n",
                listed,
                count_test
            )
            .len(),
            1
        );
        assert_eq!(
            messages(
                "count.py",
                "def count(s):\n    return len(s.split(\" \"))\n",
                assigned,
                py_test
            ),
            [
                "count.py:3 compares with \"a  b\", a literal of the failing test t, and assigns 2, \
              the value that test expects; a fix must compute the result for every input, so fix \
              the code instead of answering the test"
            ]
        );
    }
}
