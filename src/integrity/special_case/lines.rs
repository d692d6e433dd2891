//! The line pass of `check.special-case`: an added line holding a literal the failing test
//! passes to the code under test and, within a few lines, the literal the test expects back,
//! or an added `return` of exactly the expected literal (the fudge). It reads any language,
//! the syntax pass ([`super::syntax`]) only the five with grammars.

use super::expect::{Expectation, is_specific, literals};

/// Lines between the added input literal and the added expected literal that still make one
/// special case.
const NEAR_LINES: usize = 5;

/// Whether a line returns exactly `literal` (Python, JavaScript, Rust, Go).
pub(super) fn returns_exactly(line: &str, literal: &str) -> bool {
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

/// The special cases the added lines of one file make for `expectations`: for each, the
/// 0-based line, the input literal compared (none for the fudge) and the expected literal.
pub(super) fn line_cases<'e>(
    after: &str,
    added: &[(usize, String)],
    expectations: &'e [Expectation],
) -> Vec<(usize, &'e Expectation, Option<String>, String)> {
    let mut out = Vec::new();
    // Cheap screen: some expected value must be in the file at all.
    let relevant: Vec<&Expectation> = expectations
        .iter()
        .filter(|e| e.expected.iter().any(|x| after.contains(x.as_str())))
        .collect();
    if relevant.is_empty() {
        return out;
    }
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
                .zip(added)
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
                out.push((*i, e, Some(input.clone()), x.clone()));
                continue 'expectation;
            }
        }
        // The fudge: the expected value returned as a constant.
        for (i, line) in added {
            if let Some(x) = e
                .expected
                .iter()
                .find(|x| is_specific(x) && returns_exactly(line, x))
            {
                out.push((*i, e, None, x.clone()));
                continue 'expectation;
            }
        }
    }
    out
}
