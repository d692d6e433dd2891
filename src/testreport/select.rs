//! Which tests of a report a command's filter selects, the way each runner reads its filter,
//! so the pipeline can check that the tests a command names pass after a fix.

use regex::Regex;

use super::model::{TestCase, TestReport};

impl TestReport {
    /// The tests this report holds that `filter` (one item of [`super::requested_tests`])
    /// selects, read the way this report's runner reads it: a substring for libtest, a node
    /// id or `-k` expression for pytest, per-level regexes for `go test -run`, a regex over
    /// the full name for jest, vitest, mocha and node. Best effort: a filter that is not a
    /// valid regex is matched as plain text.
    pub fn matching(&self, filter: &str) -> Vec<&TestCase> {
        self.tests
            .iter()
            .filter(|case| selects(&self.format, filter, case))
            .collect()
    }
}

fn selects(format: &str, filter: &str, case: &TestCase) -> bool {
    match format {
        "pytest" if filter.contains("::") => {
            case.name == filter
                || case.name.starts_with(&format!("{filter}["))
                || case.name.starts_with(&format!("{filter}::"))
        }
        "pytest" => keyword_expression(filter, &case.name),
        "go" => go_run(filter, &case.name),
        "jest" | "vitest" | "mocha" | "node" => {
            // These runners match against the titles joined by spaces.
            let full = case.name.replace(" › ", " ").replace(" > ", " ");
            regex_match(filter, &full)
        }
        _ => case.name.contains(filter),
    }
}

/// Whether `filter` matches `text` as a regex, or as literal text when it is not a regex.
fn regex_match(filter: &str, text: &str) -> bool {
    Regex::new(filter)
        .or_else(|_| Regex::new(&regex::escape(filter)))
        .is_ok_and(|pattern| pattern.is_match(text))
}

/// `go test -run A/B`: the filter splits on `/` into one regex per subtest level; a test
/// matches when every level it has is matched (a parent runs when its own level matches).
fn go_run(filter: &str, name: &str) -> bool {
    let levels: Vec<&str> = filter.split('/').collect();
    name.split('/')
        .zip(&levels)
        .all(|(part, level)| regex_match(level, part))
}

/// pytest `-k`: `and`, `or`, `not` and parentheses over case-insensitive substrings of the
/// node id's names.
fn keyword_expression(expression: &str, id: &str) -> bool {
    let haystack = id.to_lowercase();
    let spaced = expression.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let value = or_expr(&tokens, &mut at, &haystack);
    // Anything left over means the expression was not understood; match nothing rather
    // than claim a selection.
    value && at == tokens.len()
}

fn or_expr(tokens: &[&str], at: &mut usize, haystack: &str) -> bool {
    let mut value = and_expr(tokens, at, haystack);
    while tokens.get(*at) == Some(&"or") {
        *at += 1;
        let right = and_expr(tokens, at, haystack);
        value = value || right;
    }
    value
}

fn and_expr(tokens: &[&str], at: &mut usize, haystack: &str) -> bool {
    let mut value = not_expr(tokens, at, haystack);
    while tokens.get(*at) == Some(&"and") {
        *at += 1;
        let right = not_expr(tokens, at, haystack);
        value = value && right;
    }
    value
}

fn not_expr(tokens: &[&str], at: &mut usize, haystack: &str) -> bool {
    match tokens.get(*at) {
        Some(&"not") => {
            *at += 1;
            !not_expr(tokens, at, haystack)
        }
        Some(&"(") => {
            *at += 1;
            let value = or_expr(tokens, at, haystack);
            if tokens.get(*at) == Some(&")") {
                *at += 1;
            }
            value
        }
        Some(word) => {
            *at += 1;
            haystack.contains(&word.to_lowercase())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::testreport::parse;

    fn names(fixture: &str, filter: &str) -> Vec<String> {
        let path = format!(
            "{}/src/testreport/fixtures/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("read {path}: {err}"));
        let Some(report) = parse(&text, "") else {
            panic!("{fixture} not recognised")
        };
        report
            .matching(filter)
            .iter()
            .map(|case| case.id())
            .collect()
    }

    #[test]
    fn each_runner_filter_selects_what_the_runner_would_run() {
        let found = vec![
            names("cargo_real_streams.txt", "crlf"),
            names("pytest_real_v.txt", "tests/test_parse.py::test_param"),
            names("pytest_real_v.txt", "CRLF or (bom and not windows)"),
            names("go_verbose.txt", "TestTable/emp"),
            names("jest_real_verbose.txt", "parse keeps"),
            names("vitest_real_verbose.txt", "^parse keeps crlf$"),
            names("mocha_real.txt", "nested deep"),
            names("node_spec_real.txt", "child (one"),
        ];
        let expected: Vec<Vec<String>> = vec![
            vec!["src/lib.rs::tests::keeps_crlf".into()],
            vec![
                "tests/test_parse.py::test_param[a b-1]".into(),
                "tests/test_parse.py::test_param[a\\nb-2]".into(),
            ],
            vec![
                "tests/test_parse.py::test_crlf".into(),
                "tests/test_parse.py::TestUnicode::test_bom".into(),
            ],
            vec![
                "example.com/parser/parse::TestTable".into(),
                "example.com/parser/parse::TestTable/empty".into(),
            ],
            vec!["src/parse.test.js::parse › keeps crlf".into()],
            vec!["vt/parse.test.ts::parse > keeps crlf".into()],
            vec!["parse nested deep test".into()],
            vec![],
        ];
        assert_eq!(found, expected);
    }
}
