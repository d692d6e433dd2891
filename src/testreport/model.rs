//! The result types every parser produces, and the builder they share.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// [`TestReport::counts_text`] of a run in which no test ran.
pub(crate) const NO_TEST_RAN: &str = "no test ran";

/// The state of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    /// Failed, errored, timed out or crashed: anything that is not a pass and not a skip.
    Failed,
    /// Skipped, ignored, pending, todo or an expected failure (`xfail`).
    Skipped,
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestCase {
    /// The name as the runner prints it, with durations, line numbers and colours removed so
    /// it is the same before and after a fix.
    pub name: String,
    pub status: TestStatus,
    /// The file, package or test target the runner names for this test, when it names one
    /// (pytest file, jest/vitest file, go package, cargo test target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl TestCase {
    /// A stable identifier unique within one report: `file::name`, or the name alone when it
    /// already starts with the file (pytest node ids) or there is no file.
    pub fn id(&self) -> String {
        match &self.file {
            Some(file) if !self.name.starts_with(file.as_str()) => format!("{file}::{}", self.name),
            _ => self.name.clone(),
        }
    }
}

/// What a test runner reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestReport {
    /// Which runner's format was recognised (`cargo`, `nextest`, `pytest`, `jest`, `vitest`,
    /// `mocha`, `go`, `node`, `tap`, `unittest`, `junit`).
    pub format: String,
    /// The tests the output names, in order of first appearance, one entry per test.
    pub tests: Vec<TestCase>,
    /// Tests that passed. Like the other counts, it comes from the runner's own summary when
    /// it prints one (which may count tests `tests` does not name), else from `tests`.
    pub passed: u64,
    /// Tests that failed, errored in setup, timed out or crashed.
    pub failed: u64,
    /// Tests skipped, ignored, pending, todo or expected to fail.
    pub skipped: u64,
    /// Failures outside any single test: collection or import errors, suites that failed to
    /// run, packages that failed to build. They are real failures although no test ran.
    #[serde(default)]
    pub errors: u64,
    /// Whether this output names passing tests (pytest `-q` and plain `go test` do not), so a
    /// test missing from `tests` may still have passed.
    #[serde(default)]
    pub lists_passed: bool,
}

impl TestReport {
    /// True when the runner executed no test and reported no error: a typo'd filter, an empty
    /// suite, or every selected test skipped. Such a run proves nothing either way.
    pub fn ran_no_tests(&self) -> bool {
        self.passed == 0 && self.failed == 0 && self.errors == 0
    }

    /// The status of the test `name`: its own entry, or, for a test this report names by its
    /// parts (a tape test by its assertions `name #1`, `name #2`), failed if any part failed,
    /// passed if every part that ran passed. `None` when the report names neither.
    pub fn status_of(&self, name: &str) -> Option<TestStatus> {
        if let Some(case) = self.tests.iter().find(|case| case.name == name) {
            return Some(case.status);
        }
        combined(
            self.tests
                .iter()
                .filter(|case| is_part(&case.name, name))
                .map(|case| case.status),
        )
    }

    /// What is known of the run's results, in words: `1 failed, 2 passed, 1 skipped`,
    /// `1 error` for a collection or build failure, `1 failed; passing tests not listed` when
    /// the output names only failures and does not count passes, [`NO_TEST_RAN`]. An output
    /// that names tests but whose counts were not read is described by the tests it names,
    /// so a run that printed results never reads as `0 passed`.
    pub(crate) fn counts_text(&self) -> String {
        let counted = self.passed + self.failed + self.skipped + self.errors > 0;
        let (passed, failed, skipped) = if counted || self.tests.is_empty() {
            (self.passed, self.failed, self.skipped)
        } else {
            let named = |status| {
                self.tests
                    .iter()
                    .filter(|case| case.status == status)
                    .count() as u64
            };
            (
                named(TestStatus::Passed),
                named(TestStatus::Failed),
                named(TestStatus::Skipped),
            )
        };
        if passed + failed + skipped + self.errors == 0 {
            return NO_TEST_RAN.to_owned();
        }
        let passes_unknown = !self.lists_passed && passed == 0 && failed > 0;
        let mut parts = Vec::new();
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
        if !passes_unknown {
            parts.push(format!("{passed} passed"));
        }
        if skipped > 0 {
            parts.push(format!("{skipped} skipped"));
        }
        if self.errors > 0 {
            let noun = if self.errors == 1 { "error" } else { "errors" };
            parts.push(format!("{} {noun}", self.errors));
        }
        let mut text = parts.join(", ");
        if passes_unknown {
            text.push_str("; passing tests not listed");
        }
        text
    }

    /// Names of the failed tests (including whole-file failures), in report order. Names, not
    /// ids: two targets may each have a failing `tests::it_works`; [`super::compare`] tells
    /// them apart by [`TestCase::id`].
    pub fn failing(&self) -> Vec<&str> {
        self.tests
            .iter()
            .filter(|case| case.status == TestStatus::Failed)
            .map(|case| case.name.as_str())
            .collect()
    }
}

/// Whether `case` is a numbered part of the test `whole`: `whole #3`.
pub(crate) fn is_part(case: &str, whole: &str) -> bool {
    case.strip_prefix(whole)
        .and_then(|rest| rest.strip_prefix(" #"))
        .is_some_and(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// The status of a group from its members': failed if any failed, passed if any passed and
/// none failed, skipped if none ran; `None` for no members.
pub(crate) fn combined(statuses: impl Iterator<Item = TestStatus>) -> Option<TestStatus> {
    let mut out = None;
    for status in statuses {
        out = match (out, status) {
            (_, TestStatus::Failed) | (Some(TestStatus::Failed), _) => Some(TestStatus::Failed),
            (_, TestStatus::Passed) | (Some(TestStatus::Passed), _) => Some(TestStatus::Passed),
            _ => Some(TestStatus::Skipped),
        };
    }
    out
}

/// Counts read from a runner's summary line(s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
    pub(crate) skipped: u64,
    pub(crate) errors: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, other: Counts) {
        self.passed = self.passed.saturating_add(other.passed);
        self.failed = self.failed.saturating_add(other.failed);
        self.skipped = self.skipped.saturating_add(other.skipped);
        self.errors = self.errors.saturating_add(other.errors);
    }
}

/// How sure a parser is that the text is its format; `detect` keeps the strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Signal {
    /// Only per-test lines were recognised.
    PerTest,
    /// The runner's own summary line was recognised.
    Summary,
}

/// Collects tests as a parser meets them; a later sighting of the same test wins, so retries
/// and repeated failure lists settle on the final status without duplicates.
#[derive(Debug)]
pub(crate) struct Builder {
    format: &'static str,
    tests: Vec<TestCase>,
    /// Positions in `tests` by a hash of (file, name); lookups then compare the real keys, so
    /// finding a test allocates nothing (large suites repeat this per line).
    index: HashMap<u64, Vec<usize>>,
    summary: Option<Counts>,
    lists_passed: bool,
}

impl Builder {
    pub(crate) fn new(format: &'static str, lists_passed: bool) -> Self {
        Builder {
            format,
            tests: Vec::new(),
            index: HashMap::new(),
            summary: None,
            lists_passed,
        }
    }

    fn key(file: Option<&str>, name: &str) -> u64 {
        let mut hasher = DefaultHasher::new();
        file.hash(&mut hasher);
        name.hash(&mut hasher);
        hasher.finish()
    }

    fn find(&self, file: Option<&str>, name: &str) -> Option<usize> {
        self.index
            .get(&Self::key(file, name))?
            .iter()
            .copied()
            .find(|&at| {
                self.tests
                    .get(at)
                    .is_some_and(|case| case.file.as_deref() == file && case.name == name)
            })
    }

    pub(crate) fn record(&mut self, file: Option<&str>, name: &str, status: TestStatus) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        if let Some(at) = self.find(file, name) {
            if let Some(case) = self.tests.get_mut(at) {
                case.status = status;
            }
            return;
        }
        self.index
            .entry(Self::key(file, name))
            .or_default()
            .push(self.tests.len());
        self.tests.push(TestCase {
            name: name.to_owned(),
            status,
            file: file.map(str::to_owned),
        });
    }

    /// Record a test only if it is not known yet (for lists that repeat earlier results).
    pub(crate) fn record_new(&mut self, file: Option<&str>, name: &str, status: TestStatus) {
        if self.find(file, name.trim()).is_none() {
            self.record(file, name, status);
        }
    }

    /// Remove entries that only group other tests (`suite` when `suite > test` exists): their
    /// status is their children's, and counting them would report one failure twice.
    pub(crate) fn drop_containers(&mut self, separator: &str) {
        // Sorted names make "has a child" one range lookup, so large suites stay linear-ish.
        let names: BTreeSet<&str> = self.tests.iter().map(|case| case.name.as_str()).collect();
        let is_container: Vec<bool> = self
            .tests
            .iter()
            .map(|case| {
                let prefix = format!("{}{separator}", case.name);
                names
                    .range(prefix.as_str()..)
                    .next()
                    .is_some_and(|next| next.starts_with(prefix.as_str()))
            })
            .collect();
        let mut flags = is_container.into_iter();
        self.tests.retain(|_| !flags.next().unwrap_or(false));
        self.index.clear();
        for (at, case) in self.tests.iter().enumerate() {
            self.index
                .entry(Self::key(case.file.as_deref(), &case.name))
                .or_default()
                .push(at);
        }
    }

    /// Whether any test of `file` is recorded.
    pub(crate) fn has_file(&self, file: &str) -> bool {
        self.tests
            .iter()
            .any(|case| case.file.as_deref() == Some(file))
    }

    /// The status recorded so far for a test, if any.
    pub(crate) fn status_of(&self, file: Option<&str>, name: &str) -> Option<TestStatus> {
        let at = self.find(file, name.trim())?;
        self.tests.get(at).map(|case| case.status)
    }

    /// How many recorded tests have `status`.
    pub(crate) fn count(&self, status: TestStatus) -> usize {
        self.tests
            .iter()
            .filter(|case| case.status == status)
            .count()
    }

    pub(crate) fn add_summary(&mut self, counts: Counts) {
        self.summary.get_or_insert_with(Counts::default).add(counts);
    }

    pub(crate) fn has_summary(&self) -> bool {
        self.summary.is_some()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.tests.is_empty() && self.summary.is_none()
    }

    pub(crate) fn finish(self) -> TestReport {
        let counts = self.summary.unwrap_or_else(|| {
            let mut counts = Counts::default();
            for case in &self.tests {
                match case.status {
                    TestStatus::Passed => counts.passed += 1,
                    TestStatus::Failed => counts.failed += 1,
                    TestStatus::Skipped => counts.skipped += 1,
                }
            }
            counts
        });
        TestReport {
            format: self.format.to_owned(),
            tests: self.tests,
            passed: counts.passed,
            failed: counts.failed,
            skipped: counts.skipped,
            errors: counts.errors,
            lists_passed: self.lists_passed,
        }
    }

    /// Finish with the signal strength `detect` ranks by; `None` when nothing was recognised.
    pub(crate) fn into_parsed(self) -> Option<(Signal, TestReport)> {
        if self.is_empty() {
            return None;
        }
        let signal = if self.has_summary() {
            Signal::Summary
        } else {
            Signal::PerTest
        };
        Some((signal, self.finish()))
    }
}

/// A report of the named tests (no files) with zero counts, for tests to build on.
#[cfg(test)]
pub(crate) fn report_of(lists_passed: bool, tests: &[(&str, TestStatus)]) -> TestReport {
    TestReport {
        format: "cargo".into(),
        tests: tests
            .iter()
            .map(|(name, status)| TestCase {
                name: (*name).into(),
                status: *status,
                file: None,
            })
            .collect(),
        passed: 0,
        failed: 0,
        skipped: 0,
        errors: 0,
        lists_passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lists_passed: bool, counts: [u64; 4], tests: &[(&str, TestStatus)]) -> TestReport {
        let [passed, failed, skipped, errors] = counts;
        TestReport {
            passed,
            failed,
            skipped,
            errors,
            ..report_of(lists_passed, tests)
        }
    }

    use TestStatus::{Failed, Passed, Skipped};

    #[test]
    fn counts_are_told_in_words_with_what_the_output_does_not_say() {
        let texts: Vec<String> = [
            report(true, [2, 1, 1, 0], &[]),
            // Plain `go test`: the failing test is named, the passes are neither named nor
            // counted.
            report(false, [0, 1, 0, 0], &[("TestParse", Failed)]),
            // A summary that counts passes it does not name.
            report(false, [3, 1, 0, 0], &[("a", Failed)]),
            // Names read but no counts: the named tests are counted instead of `0 passed`.
            report(true, [0, 0, 0, 0], &[("a #1", Passed), ("a #2", Failed)]),
            report(true, [0, 0, 0, 1], &[]),
            report(true, [0, 0, 0, 0], &[]),
        ]
        .iter()
        .map(TestReport::counts_text)
        .collect();
        assert_eq!(
            texts,
            vec![
                "1 failed, 2 passed, 1 skipped",
                "1 failed; passing tests not listed",
                "1 failed, 3 passed",
                "1 failed, 1 passed",
                "0 passed, 1 error",
                NO_TEST_RAN,
            ]
        );
    }

    #[test]
    fn a_test_named_by_its_numbered_parts_takes_their_combined_status() {
        let report = report(
            true,
            [0; 4],
            &[
                ("parse #1", Passed),
                ("parse #2", Failed),
                ("trim #1", Passed),
                ("trim #2", Skipped),
                ("trim #x", Failed),
                ("trimmed #1", Failed),
                ("todo #1", Skipped),
            ],
        );
        let statuses: Vec<Option<TestStatus>> = ["parse", "trim", "todo", "parse #1", "missing"]
            .iter()
            .map(|name| report.status_of(name))
            .collect();
        assert_eq!(
            statuses,
            vec![
                Some(Failed),
                Some(Passed),
                Some(Skipped),
                Some(Passed),
                None
            ]
        );
    }
}
