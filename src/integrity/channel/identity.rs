//! A test is one test whatever channel names it. jest's and vitest's report names a test by
//! its runner id: the file and the full title path (describe blocks and title, joined by
//! ` › ` or ` > `); a console may name the same test by its title alone (a tree reporter's
//! leaf), by the full path, or both in one run (a tree line and a `FAIL file > a > b`
//! header), and may print files relative to another directory than the repository's. Counted
//! by the console's text, one test becomes two, and a fixed test looks missing when the run
//! after the change names it the other way. Here each console test takes the report's id when
//! exactly one report test matches it (same file, and the report's title path ends with the
//! console's words: its whole name first, else its title); a console test no report test
//! matches, or several do, keeps its own name, for the channels' agreement to judge.
//!
//! Only reports whose names are the runner's ids in the console's own terms are used (jest,
//! vitest). pytest's JUnit names (`tests.test_a.TestK.test_m`) are not node ids, and the
//! node ids the console prints are what per-test reruns select by, so those consoles keep
//! their names.

use std::collections::HashMap;

use crate::testreport::{TestCase, TestReport, combined};

use super::agree::{title, words};

/// The report formats whose names are file + full title path.
const TITLE_PATH_FORMATS: &[&str] = &["jest", "vitest"];

/// Whether two file names name the same file: equal, or one ends with the other at a `/`
/// (a console relative to a project's root, a report relative to the repository's). A side
/// without a file matches any.
fn same_file(console: Option<&str>, report: Option<&str>) -> bool {
    let (Some(a), Some(b)) = (console, report) else {
        return true;
    };
    let ends = |long: &str, short: &str| {
        long == short
            || long
                .strip_suffix(short)
                .is_some_and(|head| head.ends_with('/'))
    };
    ends(a, b) || ends(b, a)
}

/// The one report test `case` names, if exactly one.
fn counterpart<'r>(case: &TestCase, report: &'r TestReport) -> Option<&'r TestCase> {
    let in_file: Vec<&TestCase> = report
        .tests
        .iter()
        .filter(|other| same_file(case.file.as_deref(), other.file.as_deref()))
        .collect();
    let by = |needle: Vec<&str>| -> Option<&'r TestCase> {
        if needle.is_empty() {
            return None;
        }
        let found: Vec<&TestCase> = in_file
            .iter()
            .copied()
            .filter(|other| words(&other.name).ends_with(&needle))
            .collect();
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    };
    by(words(&case.name)).or_else(|| by(words(title(&case.name))))
}

/// `console` with each test named by its report id where one report test is its
/// counterpart, tests named twice merged into one (the worse status wins: a failure named
/// either way is a failure). Counts and the other fields are the console's.
pub(crate) fn by_report_ids(console: TestReport, report: &TestReport) -> TestReport {
    if !TITLE_PATH_FORMATS.contains(&report.format.as_str()) {
        return console;
    }
    let mut tests: Vec<TestCase> = Vec::with_capacity(console.tests.len());
    let mut at: HashMap<(Option<String>, String), usize> = HashMap::new();
    for case in &console.tests {
        let (name, file) = match counterpart(case, report) {
            Some(other) => (other.name.clone(), other.file.clone()),
            None => (case.name.clone(), case.file.clone()),
        };
        let key = (file.clone(), name.clone());
        if let Some(&index) = at.get(&key) {
            if let Some(seen) = tests.get_mut(index) {
                seen.status =
                    combined([seen.status, case.status].into_iter()).unwrap_or(seen.status);
            }
            continue;
        }
        at.insert(key, tests.len());
        tests.push(TestCase {
            name,
            status: case.status,
            file,
        });
    }
    TestReport { tests, ..console }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::TestStatus::{self, Failed, Passed, Skipped};

    fn case(file: &str, name: &str, status: TestStatus) -> TestCase {
        TestCase {
            name: name.to_owned(),
            status,
            file: Some(file.to_owned()),
        }
    }

    fn report(format: &str, tests: Vec<TestCase>) -> TestReport {
        TestReport {
            format: format.to_owned(),
            tests,
            passed: 0,
            failed: 0,
            skipped: 0,
            errors: 0,
            lists_passed: true,
        }
    }

    /// Describe paths of every depth from 0 to 4, with both runners' separators.
    fn paths() -> Vec<(&'static str, Vec<String>)> {
        let mut out = Vec::new();
        for (format, separator) in [("jest", " › "), ("vitest", " > ")] {
            for depth in 0..=4 {
                let mut path: Vec<String> = (0..depth).map(|d| format!("block {d}")).collect();
                path.push("handles crlf".to_owned());
                out.push((format, vec![path.join(separator), separator.to_owned()]));
            }
        }
        out
    }

    #[test]
    fn a_test_named_by_its_title_its_full_path_or_both_is_one_test_with_the_report_s_id() {
        for (format, parts) in paths() {
            let (full, separator) = (&parts[0], &parts[1]);
            let report = report(
                format,
                vec![
                    case("test/parse.test.js", full, Failed),
                    case("test/parse.test.js", "other", Passed),
                ],
            );
            let consoles = [
                vec![case("test/parse.test.js", "handles crlf", Failed)],
                vec![case("test/parse.test.js", full, Failed)],
                vec![
                    case("test/parse.test.js", "handles crlf", Failed),
                    case("test/parse.test.js", full, Failed),
                ],
                // A console relative to the project's own root.
                vec![case("parse.test.js", "handles crlf", Failed)],
            ];
            for console in consoles {
                let got = by_report_ids(self::report(format, console.clone()), &report);
                assert_eq!(
                    got.tests,
                    vec![case("test/parse.test.js", full, Failed)],
                    "{format} {separator:?} {console:?}"
                );
            }
        }
    }

    #[test]
    fn a_forged_pass_named_the_other_way_does_not_hide_the_failure() {
        let report = report(
            "vitest",
            vec![case("test/p.test.js", "parse > handles crlf", Failed)],
        );
        let console = self::report(
            "vitest",
            vec![
                case("test/p.test.js", "handles crlf", Passed),
                case("test/p.test.js", "parse > handles crlf", Failed),
            ],
        );
        assert_eq!(
            by_report_ids(console, &report).tests,
            vec![case("test/p.test.js", "parse > handles crlf", Failed)]
        );
    }

    #[test]
    fn an_ambiguous_title_or_another_runner_s_names_are_kept() {
        let report = self::report(
            "vitest",
            vec![
                case("test/p.test.js", "parse > handles crlf", Failed),
                case("test/p.test.js", "format > handles crlf", Passed),
                case("test/q.test.js", "handles crlf", Skipped),
            ],
        );
        let console = self::report(
            "vitest",
            vec![
                case("test/p.test.js", "handles crlf", Failed),
                case("test/p.test.js", "invented", Passed),
            ],
        );
        assert_eq!(by_report_ids(console.clone(), &report).tests, console.tests);
        let junit = self::report("pytest", report.tests.clone());
        let pytest = self::report(
            "pytest",
            vec![case("tests/t.py", "tests/t.py::test_x", Failed)],
        );
        assert_eq!(by_report_ids(pytest.clone(), &junit).tests, pytest.tests);
    }
}
