//! The guard decision: which regression guard held — changed tests that fail without the fix
//! and pass with it, or the reproduction's own failing tests passing after the fix — read from
//! the recorded runs. Pure: it runs nothing.

use crate::evidence::{CommandRecord, Guard};
use crate::testreport::{TestReport, TestStatus};

use super::split::{Split, same_test};

/// Changed tests reported with `status` in any of the records.
pub(crate) fn reported_with(
    changed: &[String],
    records: &[&CommandRecord],
    status: TestStatus,
) -> Vec<String> {
    let reports: Vec<&TestReport> = records.iter().filter_map(|r| r.tests.as_ref()).collect();
    changed
        .iter()
        .filter(|name| {
            reports
                .iter()
                .flat_map(|r| r.tests.iter())
                .any(|t| t.status == status && same_test(&t.name, name))
        })
        .cloned()
        .collect()
}

/// Changed tests that passed with the whole change: listed as passed, or — when the runner
/// lists only failures — named failing by the tests-only run of the same command whose run
/// with the whole change passed cleanly.
fn passed_with(
    changed: &[String],
    tests_only: &[&CommandRecord],
    fixed: &[&CommandRecord],
) -> Vec<String> {
    let mut passed = reported_with(changed, fixed, TestStatus::Passed);
    for record in fixed {
        let Some(after) = record.tests.as_ref() else {
            continue;
        };
        let before = tests_only
            .iter()
            .find(|r| r.command == record.origin_command())
            .and_then(|r| r.tests.as_ref());
        let Some(before) = before else { continue };
        for name in changed {
            if passed.contains(name) {
                continue;
            }
            let in_scope = before.tests.iter().find(|t| same_test(&t.name, name));
            if let Some(test) = in_scope
                && status_in_scope(after, Some(before), &test.name) == Some(TestStatus::Passed)
            {
                passed.push(name.clone());
            }
        }
    }
    passed.sort();
    passed
}

/// The guard decision of a round.
pub(crate) struct GuardDecision {
    pub guard: Option<Guard>,
    pub failed_without_fix: Vec<String>,
    pub passed_with_fix: Vec<String>,
    pub detail: String,
}

/// Decide which guard held.
pub(crate) fn decide(
    split: &Split,
    tests_only: &[&CommandRecord],
    fixed: &[&CommandRecord],
    reproduction_failing: &[String],
    reproduction: (Option<&CommandRecord>, Option<&CommandRecord>),
    required: bool,
) -> GuardDecision {
    let (original_reproduction, fixed_reproduction) = reproduction;
    let failed_without_fix = reported_with(&split.changed_tests, tests_only, TestStatus::Failed);
    let passed_with_fix = passed_with(&split.changed_tests, tests_only, fixed);
    let changed_failing_after = reported_with(&split.changed_tests, fixed, TestStatus::Failed);
    let proven: Vec<&String> = failed_without_fix
        .iter()
        .filter(|t| passed_with_fix.contains(t))
        .collect();
    if !proven.is_empty() && changed_failing_after.is_empty() {
        let detail = format!(
            "{} of the {} changed test(s) failed with only the test changes applied and passed \
             with the whole change",
            proven.len(),
            split.changed_tests.len()
        );
        return GuardDecision {
            guard: Some(Guard::ChangedTests),
            failed_without_fix,
            passed_with_fix,
            detail,
        };
    }
    let mut reasons = Vec::new();
    if split.changed_tests.is_empty() {
        reasons.push("the change adds or modifies no test".to_owned());
    } else if failed_without_fix.is_empty() {
        reasons.push(format!(
            "none of the changed tests ({}) was reported failing with only the test changes \
             applied",
            split.changed_tests.join(", ")
        ));
    } else {
        reasons.push("the changed tests did not all pass with the whole change".to_owned());
    }
    // Guard (b): the reproduction's own failing tests, untouched by the change, now pass.
    let before = original_reproduction.and_then(|r| r.tests.as_ref());
    let after = fixed_reproduction.and_then(|r| r.tests.as_ref());
    let untouched = reproduction_failing
        .iter()
        .all(|t| !split.changed_tests.iter().any(|c| same_test(t, c)));
    match after {
        Some(after) if !reproduction_failing.is_empty() && untouched => {
            let all_pass = reproduction_failing
                .iter()
                .all(|name| status_in_scope(after, before, name) == Some(TestStatus::Passed));
            if all_pass {
                return GuardDecision {
                    guard: Some(Guard::Reproduction),
                    failed_without_fix,
                    passed_with_fix,
                    detail: format!(
                        "the reproduction's failing test(s) {} pass after the fix and were not \
                         modified by it",
                        reproduction_failing.join(", ")
                    ),
                };
            }
            reasons.push("the reproduction's failing tests do not all pass after it".to_owned());
        }
        Some(_) if !untouched => {
            reasons.push("the change modifies the reproduction's failing tests".to_owned())
        }
        _ => reasons.push(
            "the reproduction's output gives no per-test results to use as a guard".to_owned(),
        ),
    }
    let guard = (!required).then_some(Guard::NotRequired);
    GuardDecision {
        guard,
        failed_without_fix,
        passed_with_fix,
        detail: reasons.join("; "),
    }
}

/// The status of a test that is known to be in the scope of the command that produced
/// `after` (it was named by `before`, another run of the same command): as listed (a test
/// named in parts, such as tape's numbered assertions, by all its parts), or, when the runner
/// does not list passing tests (pytest `-q`, vitest's and jest's default reporters, mocha's
/// dot reporter, plain `go test`, unittest), passed if the run was clean: no failure, no error,
/// and no test gone missing — with the run before known, no more skips than it had and at
/// least as many passes as it had passes and failures together; without it, no skip at all.
pub(crate) fn status_in_scope(
    after: &TestReport,
    before: Option<&TestReport>,
    name: &str,
) -> Option<TestStatus> {
    if let Some(status) = after.status_of(name) {
        return Some(status);
    }
    if after.lists_passed {
        return None;
    }
    let clean = after.failed == 0 && after.errors == 0 && after.passed > 0;
    let none_missing = match before {
        Some(before) => {
            after.skipped <= before.skipped
                && after.passed >= before.passed.saturating_add(before.failed)
        }
        None => after.skipped == 0,
    };
    (clean && none_missing).then_some(TestStatus::Passed)
}
