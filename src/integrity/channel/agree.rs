//! Whether a runner's console agrees with its structured report. The console is what code
//! under test can print into; the report is written by the runner to a file efix chose. A
//! test the console calls passed must not be failed, skipped or absent in the report.
//!
//! Console and report name tests in their own ways (`tests/t.py::test_x` and
//! `tests.t.test_x`, `a › b` and `a b`), so names are compared by their words: a console test
//! matches a report test whose words end with the words of the console test's title.

use crate::testreport::{TestCase, TestReport, TestStatus};

/// How many disagreements are named before the rest are counted.
const NAMED_AT_MOST: usize = 10;

/// The words of a name: runs of letters, digits and `_`, without the `py` of a `.py` file.
pub(super) fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty() && *word != "py")
        .collect()
}

/// The last part of a console name: after `::`, ` › ` or ` > `.
pub(super) fn title(name: &str) -> &str {
    [" › ", " > ", "::"]
        .iter()
        .filter_map(|separator| name.rfind(separator).map(|at| at + separator.len()))
        .max()
        .and_then(|at| name.get(at..))
        .unwrap_or(name)
}

fn matches(console: &TestCase, report: &TestCase) -> bool {
    let title = words(title(&console.name));
    let full = words(&report.name);
    !title.is_empty() && full.ends_with(&title)
}

/// One sentence per console test the report contradicts. `raw` is the report's text, to
/// tell a test the report names only as a group (a `node --test` parent test is a
/// `testsuite`, not a `testcase`) from one it does not name at all.
pub(crate) fn disagreements(console: &TestReport, report: &TestReport, raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    for case in console
        .tests
        .iter()
        .filter(|case| case.status == TestStatus::Passed)
    {
        let found: Vec<&TestCase> = report
            .tests
            .iter()
            .filter(|other| matches(case, other))
            .collect();
        if found.is_empty() {
            if !raw.contains(&escaped(title(&case.name))) && report.lists_passed {
                out.push(format!(
                    "the console says `{}` passed and the runner's report does not name it",
                    case.name
                ));
            }
        } else if found.iter().all(|other| other.status != TestStatus::Passed) {
            let status = if found.iter().any(|other| other.status == TestStatus::Failed) {
                "failed"
            } else {
                "skipped"
            };
            out.push(format!(
                "the console says `{}` passed and the runner's report says it {status}",
                case.name
            ));
        }
    }
    if out.len() > NAMED_AT_MOST {
        let more = out.len() - NAMED_AT_MOST;
        out.truncate(NAMED_AT_MOST);
        out.push(format!("and {more} more"));
    }
    out
}

/// A title as it appears in an XML attribute or a JSON string: the characters both escape
/// are compared by the text before the first of them.
fn escaped(title: &str) -> String {
    title
        .split(['&', '<', '>', '"', '\'', '\\'])
        .next()
        .unwrap_or(title)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::parse_junit_xml;

    fn case(name: &str, status: TestStatus) -> TestCase {
        TestCase {
            name: name.to_owned(),
            status,
            file: None,
        }
    }

    fn console(tests: Vec<TestCase>) -> TestReport {
        TestReport {
            format: "pytest".to_owned(),
            tests,
            passed: 0,
            failed: 0,
            skipped: 0,
            errors: 0,
            lists_passed: true,
        }
    }

    #[test]
    fn pytest_node_ids_meet_their_junit_names_and_a_forged_pass_is_caught() {
        let xml = include_str!("../../testreport/fixtures/pytest_real8_junit.xml");
        let Some(report) = parse_junit_xml(xml) else {
            panic!("fixture not recognised")
        };
        let honest = console(vec![
            case("tests/test_a.py::test_one", TestStatus::Passed),
            case("tests/test_a.py::test_two", TestStatus::Failed),
            case("tests/test_a.py::TestK::test_m", TestStatus::Passed),
        ]);
        assert_eq!(disagreements(&honest, &report, xml), Vec::<String>::new());
        let forged = console(vec![
            case("tests/test_a.py::test_two", TestStatus::Passed),
            case("tests/test_a.py::test_three", TestStatus::Passed),
            case("tests/test_a.py::test_invented", TestStatus::Passed),
        ]);
        assert_eq!(
            disagreements(&forged, &report, xml),
            vec![
                "the console says `tests/test_a.py::test_two` passed and the runner's report \
                 says it failed"
                    .to_owned(),
                "the console says `tests/test_a.py::test_three` passed and the runner's report \
                 says it skipped"
                    .to_owned(),
                "the console says `tests/test_a.py::test_invented` passed and the runner's \
                 report does not name it"
                    .to_owned(),
            ]
        );
    }

    #[test]
    fn node_spec_output_agrees_with_its_own_junit_report() {
        let xml = include_str!("../../testreport/fixtures/node_real20_junit.xml");
        let spec = include_str!("../../testreport/fixtures/node_real20_spec.txt");
        let (Some(report), Some(console)) =
            (parse_junit_xml(xml), crate::testreport::parse(spec, ""))
        else {
            panic!("fixture not recognised")
        };
        assert_eq!(disagreements(&console, &report, xml), Vec::<String>::new());
    }
}
