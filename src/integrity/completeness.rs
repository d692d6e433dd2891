//! Completeness: every test with a record in a baseline (the reproduction before the change,
//! a suite's baseline) must have a record after the change. A test that passed before and is
//! absent, skipped or unconfirmed after is a regression whatever the exit code: code that
//! ends the process early with status 0 (`os._exit(0)`, `process.exit(0)`,
//! `std::process::exit(0)`) makes the tests after it vanish instead of fail.
//!
//! Per-test results come from the runner's report when both runs have one, else from the
//! console; a report that went missing after the change leaves no test with a record. This
//! module only compares; `pipeline::prove` turns the result into its check.

use std::collections::{BTreeMap, BTreeSet};

use crate::testreport::{TestReport, TestStatus};

use super::channel::{ChannelStatus, ResultChannel};

/// One run's per-test results as recorded: the console's and the channel's.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub tests: Option<&'a TestReport>,
    pub channel: Option<&'a ResultChannel>,
}

/// The tests of a baseline that have no record after the change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lost {
    /// Tests named before and absent, skipped or unconfirmed after, by name.
    pub named: BTreeSet<String>,
    /// Tests counted but not named (a console that lists only failures) that did not run
    /// after: how many ran before and how many after.
    pub uncounted: Option<(u64, u64)>,
}

impl Lost {
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.uncounted.is_none()
    }

    pub fn extend(&mut self, other: Lost) {
        self.named.extend(other.named);
        if let Some((before, after)) = other.uncounted {
            let (b, a) = self.uncounted.unwrap_or((0, 0));
            self.uncounted = Some((b + before, a + after));
        }
    }
}

fn report_failed(channel: Option<&ResultChannel>) -> bool {
    channel.is_some_and(|c| matches!(c.status, ChannelStatus::Missing | ChannelStatus::Truncated))
}

/// The tests of `before` that have no record in `after`. Nothing is lost when the baseline
/// has no per-test results.
pub fn lost(before: Side<'_>, after: Side<'_>) -> Lost {
    // The report when both runs have one: its names are the runner's own, and the code under
    // test cannot print into it.
    let (before_report, after_report) = match (
        before.channel.and_then(ResultChannel::trusted),
        after.channel,
    ) {
        (Some(report), Some(channel))
            if channel.report.is_some() || report_failed(Some(channel)) =>
        {
            (Some(report), channel.trusted())
        }
        _ if report_failed(after.channel) => (before.tests, None),
        _ => (before.tests, after.tests),
    };
    let Some(before_report) = before_report else {
        return Lost::default();
    };
    let empty = TestReport {
        format: before_report.format.clone(),
        tests: Vec::new(),
        passed: 0,
        failed: 0,
        skipped: 0,
        errors: 0,
        lists_passed: true,
    };
    let after_report = after_report.unwrap_or(&empty);
    // A parametrized test whose id holds a time or an address is the same test after.
    let (after_report, _) = crate::testreport::align_volatile(before_report, after_report);
    let after_report = &after_report;
    if !after_report.lists_passed {
        return by_counts(before_report, after_report);
    }
    let after_by_id: BTreeMap<String, TestStatus> = after_report
        .tests
        .iter()
        .map(|case| (case.id(), case.status))
        .collect();
    let mut lost = Lost::default();
    for case in &before_report.tests {
        let now = after_by_id
            .get(&case.id())
            .copied()
            .or_else(|| after_report.status_of(&case.name))
            .or_else(|| whole_file(case, after_report))
            .or_else(|| crate::testreport::group_status(case, after_report));
        let kept = match (case.status, now) {
            (_, None) => false,
            (TestStatus::Skipped, Some(_)) => true,
            (_, Some(status)) => status != TestStatus::Skipped,
        };
        if !kept {
            lost.named.insert(case.name.clone());
        }
    }
    lost
}

/// A whole file that failed before (named after the file) has a record after when any of
/// its tests has one.
fn whole_file(case: &crate::testreport::TestCase, after: &TestReport) -> Option<TestStatus> {
    if case.file.as_deref() != Some(case.name.as_str()) {
        return None;
    }
    after
        .tests
        .iter()
        .find(|other| other.file == case.file)
        .map(|other| other.status)
}

/// For consoles that name only failures: the tests that ran (passed or failed) may not
/// shrink, and a test named before must still be named or the run be clean.
fn by_counts(before: &TestReport, after: &TestReport) -> Lost {
    let ran_before = before.passed + before.failed;
    let ran_after = after.passed + after.failed;
    let mut lost = Lost::default();
    if ran_after < ran_before {
        lost.uncounted = Some((ran_before, ran_after));
    }
    for case in &before.tests {
        let now = after
            .status_of(&case.name)
            .or_else(|| crate::testreport::group_status(case, after));
        if now == Some(TestStatus::Skipped) {
            lost.named.insert(case.name.clone());
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::TestCase;
    use TestStatus::{Failed, Passed, Skipped};

    fn report(lists_passed: bool, tests: &[(&str, TestStatus)]) -> TestReport {
        let count = |status| tests.iter().filter(|(_, s)| *s == status).count() as u64;
        TestReport {
            format: "pytest".to_owned(),
            tests: tests
                .iter()
                .map(|(name, status)| TestCase {
                    name: (*name).to_owned(),
                    status: *status,
                    file: None,
                })
                .collect(),
            passed: count(Passed),
            failed: count(Failed),
            skipped: count(Skipped),
            errors: 0,
            lists_passed,
        }
    }

    fn side(tests: &TestReport) -> Side<'_> {
        Side {
            tests: Some(tests),
            channel: None,
        }
    }

    fn names(lost: &Lost) -> Vec<&str> {
        lost.named.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_test_that_passed_before_and_vanished_is_lost_whatever_else_passed() {
        let before = report(
            true,
            &[("a", Passed), ("b", Passed), ("c", Failed), ("s", Skipped)],
        );
        let after = report(true, &[("a", Passed), ("c", Passed)]);
        assert_eq!(names(&lost(side(&before), side(&after))), vec!["b", "s"]);
        let skipped_now = report(
            true,
            &[("a", Skipped), ("b", Passed), ("c", Passed), ("s", Skipped)],
        );
        assert_eq!(names(&lost(side(&before), side(&skipped_now))), vec!["a"]);
        let whole = report(
            true,
            &[
                ("a", Passed),
                ("b", Failed),
                ("c", Passed),
                ("s", Skipped),
                ("new", Passed),
            ],
        );
        assert!(lost(side(&before), side(&whole)).is_empty());
    }

    #[test]
    fn a_report_missing_after_the_change_leaves_every_test_without_a_record() {
        let before = report(true, &[("a", Passed), ("b", Failed)]);
        let channel = |status, report: Option<TestReport>| ResultChannel {
            runner: "pytest".to_owned(),
            status,
            added: Vec::new(),
            note: None,
            report,
            disagreements: Vec::new(),
        };
        let before_channel = channel(ChannelStatus::Read, Some(before.clone()));
        let after_channel = channel(ChannelStatus::Missing, None);
        // The console says all passed; it is the code under test's to write.
        let console = report(true, &[("a", Passed), ("b", Passed)]);
        let got = lost(
            Side {
                tests: Some(&before),
                channel: Some(&before_channel),
            },
            Side {
                tests: Some(&console),
                channel: Some(&after_channel),
            },
        );
        assert_eq!(names(&got), vec!["a", "b"]);
    }

    #[test]
    fn a_console_that_names_only_failures_may_not_run_fewer_tests() {
        let before = report(false, &[("c", Failed)]);
        let mut before = before;
        before.passed = 1109;
        let mut after = report(false, &[]);
        after.passed = 6;
        assert_eq!(lost(side(&before), side(&after)).uncounted, Some((1110, 6)));
        after.passed = 1110;
        assert!(lost(side(&before), side(&after)).is_empty());
    }
}
