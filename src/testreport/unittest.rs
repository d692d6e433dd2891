//! Python's unittest runner (`python -m unittest`, `discover`, and the runners built on it such
//! as Django's): the `-v` lines `test_x (pkg.mod.Class.test_x) ... ok`, the `FAIL:` and
//! `ERROR:` blocks printed in every mode, and `Ran 7 tests in 0.01s` followed by `OK`,
//! `OK (skipped=1)`, `FAILED (failures=1, errors=2)` or (3.12 and later) `NO TESTS RAN`.
//!
//! A test is named by its dotted id, `pkg.mod.Class.test_x`, which is what `python -m unittest`
//! accepts to run it alone, on every Python version: 3.11 and later print that id in
//! parentheses, 3.10 and earlier only `pkg.mod.Class` after the method name. Its `file` is
//! the module. A failing subtest fails its test: the test is what `-v` lists as passing in a
//! later run, so naming the subtest would make a fixed test look missing. Failures outside a
//! test are errors: a module that failed to import (`unittest.loader._FailedTest`, named by
//! the module) and a failing `setUpClass`/`setUpModule` or their teardowns (named
//! `pkg.mod.Class.setUpClass`).
//!
//! Without `-v` the output names only failures, so `lists_passed` is false and the counts come
//! from the summary.

use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, re, strip_duration};

/// `name (dotted.id)` and what follows it: a subtest's `[msg]`/`(params)`, then
/// ` ... outcome` on `-v` lines.
static TEST: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*(\S+) \(([A-Za-z_][\w.]*)\)(.*)$"));
static BLOCK: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (.+)$"));
static RAN: LazyLock<Pattern> = LazyLock::new(|| re(r"^Ran (\d+) tests? in \d+(?:\.\d+)?s\s*$"));
static RESULT: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?\s*$"));

/// Class and module fixtures whose failure is reported in place of a test.
const HOOKS: &[&str] = &[
    "setUpClass",
    "tearDownClass",
    "setUpModule",
    "tearDownModule",
];

/// What a `name (dotted)` pair stands for.
#[derive(Debug, PartialEq, Eq)]
struct Subject {
    /// The dotted test id, or the module or hook for failures outside a test.
    name: String,
    module: Option<String>,
    /// A failure outside any test (import error, class or module fixture).
    outside: bool,
}

fn subject(first: &str, dotted: &str) -> Subject {
    if dotted.starts_with("unittest.loader._FailedTest")
        || dotted.starts_with("unittest.loader.ModuleImportFailure")
    {
        // The module (or the name given on the command line) that could not be loaded.
        return Subject {
            name: first.to_owned(),
            module: Some(first.to_owned()),
            outside: true,
        };
    }
    if HOOKS.contains(&first) {
        let module = if first.ends_with("Module") {
            dotted.to_owned()
        } else {
            parent(dotted).to_owned()
        };
        return Subject {
            name: format!("{dotted}.{first}"),
            module: Some(module),
            outside: true,
        };
    }
    let name = if dotted.ends_with(&format!(".{first}")) {
        dotted.to_owned()
    } else {
        format!("{dotted}.{first}")
    };
    let class = parent(&name);
    let module = class.contains('.').then(|| parent(class).to_owned());
    Subject {
        name,
        module,
        outside: false,
    }
}

/// `a.b.c` -> `a.b`; a name without a dot is its own parent.
fn parent(dotted: &str) -> &str {
    dotted.rsplit_once('.').map_or(dotted, |(head, _)| head)
}

fn status_of(outcome: &str) -> TestStatus {
    match outcome {
        "ok" => TestStatus::Passed,
        "FAIL" | "ERROR" | "unexpected success" => TestStatus::Failed,
        // `skipped 'reason'` and `expected failure`.
        _ => TestStatus::Skipped,
    }
}

/// The reading state.
struct Unittest {
    builder: Builder,
    /// A `-v` name line whose outcome comes on the next line (the test has a docstring).
    pending: Option<Subject>,
    previous_was_rule: bool,
    /// Failure blocks seen, one per failure, error or unexpected success (subtests each).
    blocks: u64,
    /// Failures outside a test, by name.
    outside: Vec<String>,
    /// Modules that failed to load; unittest counts each as a test that ran.
    failed_loads: u64,
    listed: bool,
    ran: Option<u64>,
    result: Option<Vec<(String, u64)>>,
}

impl Unittest {
    fn record(&mut self, subject: &Subject, status: TestStatus) {
        if subject.outside && status == TestStatus::Failed {
            if !self.outside.contains(&subject.name) {
                self.outside.push(subject.name.clone());
                if subject.name == subject.module.as_deref().unwrap_or_default() {
                    self.failed_loads += 1;
                }
            }
        } else if self
            .builder
            .status_of(subject.module.as_deref(), &subject.name)
            == Some(TestStatus::Failed)
        {
            // A test with a failing subtest stays failed whatever else is said of it.
            return;
        }
        self.builder
            .record(subject.module.as_deref(), &subject.name, status);
        self.listed |= status == TestStatus::Passed;
    }

    fn line(&mut self, line: &str) {
        let rule = line.len() >= 20 && line.bytes().all(|b| b == b'=');
        let previous_was_rule = std::mem::replace(&mut self.previous_was_rule, rule);
        if rule {
            self.pending = None;
            return;
        }
        if let Some(caps) = line
            .starts_with("Ran ")
            .then(|| RAN.captures(line))
            .flatten()
        {
            self.ran = caps.get(1).and_then(|m| m.as_str().parse().ok());
            self.pending = None;
            return;
        }
        if self.ran.is_some()
            && self.result.is_none()
            && let Some(caps) = RESULT.captures(line)
        {
            self.result = Some(count_words(caps.get(2).map_or("", |m| m.as_str())));
            return;
        }
        if previous_was_rule && let Some(caps) = BLOCK.captures(line) {
            if let Some(subject) = caps.get(1).and_then(|rest| parse_subject(rest.as_str())) {
                self.blocks += 1;
                self.record(&subject, TestStatus::Failed);
            }
            return;
        }
        if let Some((head, outcome)) = outcome_line(line) {
            let subject = head
                .contains(" (")
                .then(|| parse_subject(head))
                .flatten()
                .or_else(|| self.pending.take());
            if let Some(subject) = subject {
                self.record(&subject, status_of(outcome));
            }
            self.pending = None;
            return;
        }
        // A name line alone: the docstring line with the outcome follows (`-v`).
        self.pending = line.ends_with(')').then(|| parse_subject(line)).flatten();
    }

    fn finish(mut self) -> Option<(Signal, TestReport)> {
        if self.builder.is_empty() && self.ran.is_none() && self.outside.is_empty() {
            return None;
        }
        let signal = if self.ran.is_some() {
            Signal::Summary
        } else {
            Signal::PerTest
        };
        if let Some(ran) = self.ran {
            let words = self.result.take().unwrap_or_default();
            let word = |name: &str| {
                words
                    .iter()
                    .filter(|(w, _)| w == name)
                    .map(|(_, n)| *n)
                    .sum::<u64>()
            };
            let events = word("failures") + word("errors") + word("unexpected successes");
            let errors = self.outside.len() as u64;
            let named_failures = self
                .builder
                .count(TestStatus::Failed)
                .saturating_sub(self.outside.len());
            // Every failure event has its block, so when all blocks were read the failing
            // tests are the ones named (several failing subtests are one test). A capture cut
            // short leaves only the summary: count its events, never fewer than named.
            let failed = if self.blocks >= events {
                named_failures as u64
            } else {
                events.saturating_sub(errors).max(named_failures as u64)
            };
            let skipped = word("skipped") + word("expected failures");
            let passed = ran
                .saturating_sub(failed)
                .saturating_sub(skipped)
                .saturating_sub(self.failed_loads);
            self.builder.add_summary(Counts {
                passed,
                failed,
                skipped,
                errors: 0,
            });
        }
        let errors = self.outside.len() as u64;
        let mut report = self.builder.finish();
        report.errors = errors;
        if self.ran.is_none() {
            // Without the summary the counts are the named tests': errors are not tests.
            report.failed = report.failed.saturating_sub(errors);
        }
        report.lists_passed = self.listed || report.passed == 0;
        Some((signal, report))
    }
}

/// A `-v` result line, `head ... outcome`, split by hand: it is the hot line of large suites,
/// and libtest's `test x ... ok` has the same shape.
fn outcome_line(line: &str) -> Option<(&str, &str)> {
    let (head, outcome) = line.rsplit_once(" ... ")?;
    let outcome = strip_duration(outcome);
    let known = matches!(
        outcome,
        "ok" | "FAIL" | "ERROR" | "expected failure" | "unexpected success"
    ) || outcome == "skipped"
        || outcome.starts_with("skipped ");
    known.then_some((head, outcome))
}

/// `test_x (pkg.mod.Class.test_x) (value=1)` or `pkg.mod (unittest.loader._FailedTest)`.
fn parse_subject(text: &str) -> Option<Subject> {
    let caps = TEST.captures(text)?;
    let first = caps.get(1)?.as_str();
    let dotted = caps.get(2)?.as_str();
    Some(subject(first, dotted))
}

/// `failures=1, errors=2, expected failures=1` as (word, count) pairs.
fn count_words(text: &str) -> Vec<(String, u64)> {
    text.split(',')
        .filter_map(|pair| {
            let (word, n) = pair.split_once('=')?;
            Some((word.trim().to_owned(), n.trim().parse().ok()?))
        })
        .collect()
}

pub(crate) fn parse(lines: &[String]) -> Option<(Signal, TestReport)> {
    // Cheap gate: every unittest output has the summary, a `-v` outcome or a failure block.
    let relevant = lines.iter().any(|line| {
        line.starts_with("Ran ")
            || line.contains(" ... ")
            || line.starts_with("FAIL: ")
            || line.starts_with("ERROR: ")
    });
    if !relevant {
        return None;
    }
    let mut state = Unittest {
        builder: Builder::new("unittest", false),
        pending: None,
        previous_was_rule: false,
        blocks: 0,
        outside: Vec::new(),
        failed_loads: 0,
        listed: false,
        ran: None,
        result: None,
    };
    for line in lines {
        state.line(line);
    }
    state.finish()
}
