//! Before/after comparison of two reports of the same command, test by test.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{TestReport, TestStatus};

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

/// Compare two reports test by test.
pub fn compare(before: &TestReport, after: &TestReport) -> Comparison {
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
    for (id, was) in &before_map {
        if *was != TestStatus::Failed {
            continue;
        }
        match after_map.get(id) {
            Some(TestStatus::Passed) => out.fixed.push(id.clone()),
            Some(TestStatus::Failed) => out.still_failing.push(id.clone()),
            Some(TestStatus::Skipped) => out.missing.push(id.clone()),
            None if after.lists_passed => out.missing.push(id.clone()),
            None => out.unconfirmed.push(id.clone()),
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
    // BTreeMap iteration is already sorted and unique.
    out
}
