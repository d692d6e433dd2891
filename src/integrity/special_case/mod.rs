//! Special-casing the failing test's input: non-test code that a change adds, which holds a
//! literal the failing test passes to the code under test and, within a few lines, the
//! literal the test expects back (`if s == "//example.com": return "https://example.com"`, a
//! lookup table keyed by the test's input), is `check.special-case`. So is the fudge: an added
//! `return` of exactly the test's expected literal when the test's call takes literal
//! arguments (the code returns the answer whatever it is asked).
//!
//! The failing tests are known from the reproduction; [`for_failing_tests`] finds each one's
//! body in the repository and reads its assertions (see [`expect`]). Only specific literals
//! count (not empty or one-letter strings, not 0, 1 or 2), so ordinary code that happens to
//! share a small value with a test stays allowed.

mod expect;
mod find;

pub use expect::{Expectation, expectations};
pub use find::for_failing_tests;

use similar::{DiffOp, TextDiff};

use crate::integrity::test_detection::is_read;
use crate::integrity::test_policy::is_test_path;
use crate::patch::FileChange;
use crate::policy::Issue;
use expect::{is_specific, literals};

/// Lines between the added input literal and the added expected literal that still make one
/// special case.
const NEAR_LINES: usize = 5;

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

/// Whether a line returns exactly `literal` (Python, JavaScript, Rust, Go).
fn returns_exactly(line: &str, literal: &str) -> bool {
    let Some(rest) = line.trim().strip_prefix("return") else {
        return false;
    };
    let rest = rest.trim().trim_end_matches([';', ',', ')']).trim();
    rest == literal
        || ['"', '\'', '`']
            .iter()
            .any(|q| rest.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)) == Some(literal))
}

/// Whether a line holds a `return` of exactly `literal`, also after a condition on the same
/// line (`if text == "a  b": return 2`, `if (s === 'x') { return 2; }`).
fn returns_anywhere(line: &str, literal: &str) -> bool {
    line.match_indices("return")
        .any(|(at, _)| returns_exactly(line[at..].split(['}', ';']).next().unwrap_or(""), literal))
}

/// Whether a line pairs the quoted `input` with `expected` as a table entry does:
/// `"a  b": 2`, `['a  b', 2]`, `("a  b", 2)`, `"a  b" => 2`.
fn pairs_on_line(line: &str, input: &str, expected: &str) -> bool {
    ['"', '\'', '`'].iter().any(|q| {
        let quoted = format!("{q}{input}{q}");
        line.match_indices(&quoted).any(|(at, _)| {
            let rest = line[at + quoted.len()..].trim_start();
            let Some(rest) = rest
                .strip_prefix("=>")
                .or_else(|| rest.strip_prefix(':'))
                .or_else(|| rest.strip_prefix(','))
            else {
                return false;
            };
            let rest = rest.trim_start();
            rest.strip_prefix(expected).is_some_and(|after| {
                !after
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
    })
}

/// The special cases a change adds for `expectations`.
pub fn special_cases(changes: &[FileChange], expectations: &[Expectation]) -> Vec<Issue> {
    if expectations.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for change in changes {
        if is_test_path(&change.path) || !is_read(&change.path) {
            continue;
        }
        let Some(after) = change.after.as_ref().map(|b| String::from_utf8_lossy(b)) else {
            continue;
        };
        // Cheap screen: some expected value must be in the file at all.
        let relevant: Vec<&Expectation> = expectations
            .iter()
            .filter(|e| e.expected.iter().any(|x| after.contains(x.as_str())))
            .collect();
        if relevant.is_empty() {
            continue;
        }
        let before = change
            .before
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let added = added_lines(&before, &after);
        let values: Vec<(usize, Vec<String>)> = added
            .iter()
            .map(|(i, line)| (*i, literals(line).into_iter().map(|(_, _, v)| v).collect()))
            .collect();
        'expectation: for e in relevant {
            for (i, found) in &values {
                let Some(input) = e.inputs.iter().find(|v| found.contains(v)) else {
                    continue;
                };
                let near = values
                    .iter()
                    .zip(&added)
                    .filter(|((j, _), _)| i.abs_diff(*j) <= NEAR_LINES)
                    // An expected value equal to the input is the identity, not a special case.
                    // A small one (`2`, `""`) is everywhere: it counts only when it is what an
                    // added line returns.
                    .find_map(|((_, vals), (_, line))| {
                        e.expected.iter().find(|x| {
                            *x != input
                                && vals.contains(x)
                                && (is_specific(x)
                                    || returns_anywhere(line, x)
                                    || pairs_on_line(line, input, x))
                        })
                    });
                if let Some(x) = near {
                    out.push(issue(&change.path, *i, e, Some(input), x));
                    continue 'expectation;
                }
            }
            // The fudge: the expected value returned as a constant.
            for (i, line) in &added {
                if let Some(x) = e
                    .expected
                    .iter()
                    .find(|x| is_specific(x) && returns_exactly(line, x))
                {
                    out.push(issue(&change.path, *i, e, None, x));
                    continue 'expectation;
                }
            }
        }
    }
    out
}

fn issue(
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
}
