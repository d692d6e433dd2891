//! Before/after comparison of two reports of the same command, test by test.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{TestReport, TestStatus, combined, is_part};

/// How the tests of one command changed between the run before a fix and the run after.
///
/// Every list holds test ids ([`super::TestCase::id`]), sorted and without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// Failed before, passed after.
    pub fixed: Vec<String>,
    /// Failed before and after.
    pub still_failing: Vec<String>,
    /// Did not fail before (passed, skipped or absent) and failed after.
    pub newly_failing: Vec<String>,
    /// Passed after, and before were absent or skipped (new or re-enabled tests).
    pub newly_passing: Vec<String>,
    /// Failed before and after were skipped, or absent from an output that names every test
    /// it ran. Never counts as fixed.
    pub missing: Vec<String>,
    /// Failed before and absent after from an output that does not name passing tests
    /// (pytest `-q`, plain `go test`): whether it passed cannot be told. Rerun verbosely to
    /// settle it; never counts as fixed.
    pub unconfirmed: Vec<String>,
}

/// Compare two reports test by test. A test whose id differs between the runs only in
/// volatile parameter values (a time, an address) is the same test ([`super::volatile`]).
pub fn compare(before: &TestReport, after: &TestReport) -> Comparison {
    let (after, _) = super::volatile::align(before, after);
    let after = &after;
    let index = |report: &TestReport| -> BTreeMap<String, TestStatus> {
        report
            .tests
            .iter()
            .map(|case| (case.id(), case.status))
            .collect()
    };
    let before_map = index(before);
    let after_map = index(after);
    let mut out = Comparison::default();
    for case in &before.tests {
        if case.status != TestStatus::Failed {
            continue;
        }
        let id = case.id();
        let now = after_map
            .get(&id)
            .copied()
            .or_else(|| group_status(case, after));
        match now {
            Some(TestStatus::Passed) => out.fixed.push(id),
            Some(TestStatus::Failed) => out.still_failing.push(id),
            Some(TestStatus::Skipped) => out.missing.push(id),
            None if after.lists_passed => out.missing.push(id),
            None => out.unconfirmed.push(id),
        }
    }
    for (id, now) in &after_map {
        let was = before_map.get(id);
        match now {
            TestStatus::Failed if was != Some(&TestStatus::Failed) => {
                out.newly_failing.push(id.clone())
            }
            TestStatus::Passed if matches!(was, None | Some(TestStatus::Skipped)) => {
                out.newly_passing.push(id.clone());
            }
            _ => {}
        }
    }
    for list in [
        &mut out.fixed,
        &mut out.still_failing,
        &mut out.missing,
        &mut out.unconfirmed,
    ] {
        list.sort();
        list.dedup();
    }
    out
}

/// A failure of a whole file or package (a collection error, a suite that failed to run, a
/// build failure) is named after the file itself, and a tape test that did not finish after
/// the test. When the after run names the group's members instead (the file's tests, the
/// test's numbered assertions `name #N`), the group's status is theirs: failed if any failed,
/// passed if all that ran passed, skipped if none ran.
///
/// The other way round, a test named before whose file the after run records only whole
/// (jest's `PASS file` in a run cut before its summary) takes the whole file's status.
pub(crate) fn group_status(case: &super::TestCase, after: &TestReport) -> Option<TestStatus> {
    let whole_file = case.file.as_deref() == Some(case.name.as_str());
    if !whole_file
        && let Some(file) = after.tests.iter().find(|other| {
            other.file == case.file && case.file.as_deref() == Some(other.name.as_str())
        })
    {
        let members = after
            .tests
            .iter()
            .any(|other| other.file == case.file && other.name != file.name);
        if !members {
            return Some(file.status);
        }
    }
    combined(
        after
            .tests
            .iter()
            .filter(|member| {
                member.file == case.file
                    && if whole_file {
                        member.name != case.name
                    } else {
                        is_part(&member.name, &case.name)
                    }
            })
            .map(|member| member.status),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lists_passed: bool, tests: &[(&str, TestStatus)]) -> TestReport {
        crate::testreport::model::report_of(lists_passed, tests)
    }

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    use TestStatus::{Failed, Passed, Skipped};

    #[test]
    fn each_test_lands_in_exactly_the_list_its_before_and_after_status_gives() {
        let before = report(
            true,
            &[
                ("z_fixed", Failed),
                ("a_fixed", Failed),
                ("still", Failed),
                ("broke", Passed),
                ("gone", Failed),
                ("skipped_now", Failed),
                ("reenabled", Skipped),
                ("stable", Passed),
            ],
        );
        let after = report(
            true,
            &[
                ("a_fixed", Passed),
                ("z_fixed", Passed),
                ("still", Failed),
                ("broke", Failed),
                ("skipped_now", Skipped),
                ("reenabled", Passed),
                ("brand_new", Passed),
                ("new_red", Failed),
                ("stable", Passed),
            ],
        );
        let expected = Comparison {
            fixed: ids(&["a_fixed", "z_fixed"]),
            still_failing: ids(&["still"]),
            newly_failing: ids(&["broke", "new_red"]),
            newly_passing: ids(&["brand_new", "reenabled"]),
            missing: ids(&["gone", "skipped_now"]),
            unconfirmed: vec![],
        };
        assert_eq!(compare(&before, &after), expected);
    }

    #[test]
    fn a_failing_test_absent_from_output_that_omits_passes_is_unconfirmed_not_fixed() {
        let before = report(false, &[("tests/t.py::test_crlf", Failed)]);
        let after = report(false, &[]);
        let expected = Comparison {
            unconfirmed: ids(&["tests/t.py::test_crlf"]),
            ..Comparison::default()
        };
        assert_eq!(compare(&before, &after), expected);
    }

    #[test]
    fn a_file_that_failed_to_collect_is_fixed_when_its_tests_then_run_and_pass() {
        let before =
            crate::testreport::parse(include_str!("fixtures/pytest_collection_error.txt"), "");
        let after = crate::testreport::parse(include_str!("fixtures/pytest_xdist.txt"), "");
        let (Some(before), Some(mut after)) = (before, after) else {
            panic!("fixture not recognised")
        };
        let failing_then = compare(&before, &after);
        for case in &mut after.tests {
            case.status = Passed;
        }
        let passing_then = compare(&before, &after);
        let expected_failing = Comparison {
            still_failing: ids(&["tests/test_parse.py"]),
            newly_failing: ids(&["tests/test_parse.py::test_crlf"]),
            newly_passing: ids(&[
                "tests/test_parse.py::test_empty",
                "tests/test_util.py::test_pad",
            ]),
            ..Comparison::default()
        };
        let expected_passing = Comparison {
            fixed: ids(&["tests/test_parse.py"]),
            newly_passing: ids(&[
                "tests/test_parse.py::test_crlf",
                "tests/test_parse.py::test_empty",
                "tests/test_util.py::test_pad",
            ]),
            ..Comparison::default()
        };
        assert_eq!(
            (failing_then, passing_then),
            (expected_failing, expected_passing)
        );
    }

    #[test]
    fn tests_with_the_same_name_in_different_targets_are_kept_apart() {
        let mut before = report(
            true,
            &[("tests::it_works", Failed), ("tests::it_works", Passed)],
        );
        before.tests[0].file = Some("src/lib.rs".into());
        before.tests[1].file = Some("src/main.rs".into());
        let mut after = before.clone();
        after.tests[0].status = Passed;
        after.tests[1].status = Failed;
        let expected = Comparison {
            fixed: ids(&["src/lib.rs::tests::it_works"]),
            newly_failing: ids(&["src/main.rs::tests::it_works"]),
            ..Comparison::default()
        };
        assert_eq!(compare(&before, &after), expected);
    }

    #[test]
    fn real_pytest_runs_before_and_after_a_fix_compare_as_fixed() {
        let before = crate::testreport::parse(include_str!("fixtures/pytest_verbose.txt"), "");
        let after_text: String = include_str!("fixtures/pytest_verbose.txt")
            .replace("test_crlf FAILED", "test_crlf PASSED")
            .replace("1 failed, 3 passed", "4 passed")
            .lines()
            .filter(|line| !line.starts_with("FAILED "))
            .map(|line| format!("{line}\n"))
            .collect();
        let after = crate::testreport::parse(&after_text, "");
        let (Some(before), Some(after)) = (before, after) else {
            panic!("fixture not recognised")
        };
        let expected = Comparison {
            fixed: ids(&["tests/test_parse.py::test_crlf"]),
            ..Comparison::default()
        };
        assert_eq!(compare(&before, &after), expected);
    }
}
