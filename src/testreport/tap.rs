//! TAP (`ok 1 - name`, `not ok 2 - name # SKIP`, indented subtests, `# pass 1` totals) as
//! printed by node:test, tape and others, and node:test's spec reporter (`✔`/`✖` tree with
//! `ℹ pass 1` totals), node's default on a terminal and, since node 23, everywhere.
//!
//! TAP comes in two shapes. node:test and node-tap announce every test with `# Subtest: name`
//! and nest by indentation; a result is named by its subtest path (`suite > test`). tape (run
//! as `node test/file.js` or through the `tape` binary) prints flat TAP 13: each test starts
//! with a `# name` comment and its assertions follow, named by their kind (`should be deeply
//! equivalent`) so the same name repeats. In that shape an assertion is named `name #N`: its
//! `#` test and its position (1-based) within that test. Numbering within the test keeps the
//! name when assertions are added to other tests, and leaving the assertion's own message
//! out keeps it when the message differs between two runs (a thrown error is reported as an
//! assertion named after the error). Two tests with the same name continue one numbering.
//! Limits of the flat shape, which no reader can lift: a nested `t.test` prints its name
//! like a top-level test, and `t.comment()` text looks like a test name.
//!
//! A stream that stops before its plan (the process died, e.g. a test threw synchronously)
//! is an error, and under tape the test that was running is named failing: whatever its
//! assertions said before, it did not finish.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, indent, re, strip_duration};

/// The test number is required: it tells TAP apart from go's `ok  pkg 0.01s` and stray prose.
static TAP_LINE: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(\s*)(ok|not ok)\s+\d+\b(?:\s+-)?\s*(.*)$"));
static TAP_SUBTEST: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\s*)# Subtest: (.+)$"));
/// Totals; tape pads the counts (`# pass  7`).
static TAP_TOTAL: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^# (tests|pass|fail|skip|skipped|todo|cancelled)\s+(\d+)\s*$"));
static TAP_VERSION: LazyLock<Pattern> = LazyLock::new(|| re(r"^TAP version \d+\s*$"));
/// A top-level plan, possibly with a directive (`1..0 # SKIP no tests`).
static TAP_PLAN: LazyLock<Pattern> = LazyLock::new(|| re(r"^1\.\.(\d+)\s*(?:#.*)?$"));
static DIRECTIVE: LazyLock<Pattern> = LazyLock::new(|| re(r"(?i)\s+#\s*(SKIP|TODO)\b.*$"));

/// One TAP stream (from `TAP version` or the start of the output to the next one): whether
/// it reached its end.
#[derive(Debug, Default)]
struct Stream {
    /// Top-level results so far.
    results: u64,
    /// A plan printed before any result: the stream ends when that many results came.
    leading_plan: Option<u64>,
    /// The plan was printed after the results, or the promised count was reached.
    closed: bool,
    /// Anything of this stream was seen (a header, a result, a tape test name).
    started: bool,
}

impl Stream {
    fn plan(&mut self, count: u64) {
        self.started = true;
        if self.results == 0 && !self.closed && count > 0 {
            self.leading_plan = Some(count);
        } else {
            self.closed = true;
        }
    }

    fn result(&mut self) {
        self.started = true;
        self.results += 1;
        if self.leading_plan.is_some_and(|count| self.results >= count) {
            self.closed = true;
        }
    }

    fn unfinished(&self) -> bool {
        self.started && !self.closed
    }

    /// A plan has been printed, so comments now are totals or trailers, not test names.
    fn planned(&self) -> bool {
        self.closed || self.leading_plan.is_some()
    }
}

/// The state of a TAP reading.
struct Tap {
    builder: Builder,
    /// tape's shape: tests are `# name` comments, not `# Subtest:` blocks.
    flat: bool,
    header: bool,
    tap_version: bool,
    counts: Counts,
    totals: bool,
    /// `# Subtest:` names by indentation (node's shape).
    parents: Vec<(usize, String)>,
    /// The `# name` test the next assertions belong to (tape's shape).
    test: Option<String>,
    /// Assertions seen so far per tape test name, for their `#N`.
    numbers: HashMap<String, u64>,
    /// Tests tape announces as `# SKIP name`, which its totals leave out.
    skipped_tests: u64,
    /// tape's results with a SKIP or TODO directive, which its totals count as passes.
    directive_results: u64,
    in_yaml: bool,
    stream: Stream,
}

impl Tap {
    fn new(flat: bool) -> Self {
        Tap {
            builder: Builder::new("tap", true),
            flat,
            header: false,
            tap_version: false,
            counts: Counts::default(),
            totals: false,
            parents: Vec::new(),
            test: None,
            numbers: HashMap::new(),
            skipped_tests: 0,
            directive_results: 0,
            in_yaml: false,
            stream: Stream::default(),
        }
    }

    fn line(&mut self, line: &str) {
        // YAML diagnostics blocks (`---` ... `...`) hold error text, never results.
        match line.trim() {
            "---" if !self.in_yaml => {
                self.in_yaml = true;
                return;
            }
            "..." if self.in_yaml => {
                self.in_yaml = false;
                return;
            }
            _ if self.in_yaml => return,
            _ => {}
        }
        let trimmed = line.trim_start();
        if TAP_VERSION.is_match(line) {
            self.end_stream();
            self.header = true;
            self.tap_version = true;
            self.stream.started = true;
        } else if let Some(count) = TAP_PLAN
            .captures(line)
            .and_then(|caps| caps.get(1)?.as_str().parse::<u64>().ok())
        {
            self.header = true;
            self.stream.plan(count);
        } else if line.starts_with("Bail out!") {
            // The producer gave up: whatever it was running did not finish.
            self.counts.errors += 1;
            self.stream.closed = true;
        } else if trimmed.starts_with("# Subtest:") {
            if let Some(caps) = TAP_SUBTEST.captures(line) {
                let depth = caps.get(1).map_or(0, |m| m.as_str().len());
                self.parents.retain(|(at, _)| *at < depth);
                let name = caps.get(2).map_or("", |m| m.as_str()).trim().to_owned();
                self.parents.push((depth, name));
            }
        } else if trimmed.starts_with("ok ") || trimmed.starts_with("not ok ") {
            if let Some(caps) = TAP_LINE.captures(line) {
                let depth = caps.get(1).map_or(0, |m| m.as_str().len());
                let ok = caps.get(2).is_some_and(|m| m.as_str() == "ok");
                self.result(depth, ok, caps.get(3).map_or("", |m| m.as_str()));
            }
        } else if let Some(caps) = TAP_TOTAL
            .captures(line)
            .filter(|_| !self.flat || self.stream.planned())
        {
            self.total(
                caps.get(1).map_or("", |m| m.as_str()),
                caps.get(2)
                    .and_then(|m| m.as_str().parse::<u64>().ok())
                    .unwrap_or(0),
            );
        } else if self.flat
            && !self.stream.planned()
            && let Some(comment) = line.strip_prefix("# ")
        {
            self.tape_test(comment.trim());
        }
    }

    fn result(&mut self, depth: usize, ok: bool, description: &str) {
        if depth == 0 {
            self.stream.result();
        }
        let (title, directive) = match description.contains('#') {
            true => (
                DIRECTIVE.replace(description, ""),
                DIRECTIVE
                    .captures(description)
                    .and_then(|d| d.get(1))
                    .map(|m| m.as_str().to_ascii_uppercase()),
            ),
            false => (std::borrow::Cow::Borrowed(description), None),
        };
        let status = match (ok, directive.as_deref()) {
            // node counts todos apart from passes whatever their outcome.
            (_, Some("SKIP" | "TODO")) => TestStatus::Skipped,
            (true, _) => TestStatus::Passed,
            (false, _) => TestStatus::Failed,
        };
        if self.flat
            && let Some(test) = &self.test
        {
            if directive.is_some() {
                self.directive_results += 1;
            }
            let number = self.numbers.entry(test.clone()).or_insert(0);
            *number += 1;
            let name = format!("{test} #{number}");
            self.builder.record(None, &name, status);
            return;
        }
        self.parents.retain(|(at, _)| *at < depth);
        let mut name: Vec<&str> = self.parents.iter().map(|(_, p)| p.as_str()).collect();
        name.push(title.trim());
        self.builder.record(None, &name.join(" > "), status);
    }

    fn total(&mut self, word: &str, n: u64) {
        self.totals = true;
        match word {
            "pass" => self.counts.passed += n,
            "fail" | "cancelled" => self.counts.failed += n,
            "skip" | "skipped" | "todo" => self.counts.skipped += n,
            _ => {}
        }
    }

    /// A `# name` comment of tape's shape: a test starts (`# TODO name` is a todo test), or
    /// one was skipped whole (`# SKIP name`).
    fn tape_test(&mut self, comment: &str) {
        if comment.is_empty() {
            return;
        }
        self.stream.started = true;
        if let Some(name) = comment.strip_prefix("SKIP ") {
            self.builder.record(None, name, TestStatus::Skipped);
            self.skipped_tests += 1;
            self.test = None;
            return;
        }
        let name = comment.strip_prefix("TODO ").unwrap_or(comment);
        self.test = Some(name.trim().to_owned());
    }

    /// Close the current stream; one that stopped before its end is an error, and the tape
    /// test it was running failed.
    fn end_stream(&mut self) {
        if self.stream.unfinished() {
            self.counts.errors += 1;
            if let Some(test) = self.test.take() {
                self.builder.record(None, &test, TestStatus::Failed);
            }
        }
        self.stream = Stream::default();
        self.test = None;
    }

    fn finish(mut self) -> Option<(Signal, TestReport)> {
        // A bare plan line (`1..3`) can occur in any output; without totals, only named
        // results or an explicit `TAP version` header make this TAP.
        if !self.totals && !(self.header && (self.tap_version || !self.builder.is_empty())) {
            return None;
        }
        self.end_stream();
        if !self.flat {
            // Only subtest paths nest; tape's names never contain one another.
            self.builder.drop_containers(" > ");
        }
        let signal = if self.totals {
            let moved = self.directive_results.min(self.counts.passed);
            self.builder.add_summary(Counts {
                passed: self.counts.passed - moved,
                failed: self.counts.failed,
                skipped: self.counts.skipped + self.skipped_tests + moved,
                errors: 0,
            });
            Signal::Summary
        } else {
            Signal::PerTest
        };
        let mut report = self.builder.finish();
        report.errors = self.counts.errors;
        Some((signal, report))
    }
}

pub(crate) fn parse_tap(lines: &[String]) -> Option<(Signal, TestReport)> {
    let flat = !lines
        .iter()
        .any(|line| line.trim_start().starts_with("# Subtest:"));
    let mut tap = Tap::new(flat);
    for line in lines {
        tap.line(line);
    }
    tap.finish()
}

static SPEC_LINE: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\s*)(✔|✖|﹣|⚠|▶)\s+(.+)$"));
static SPEC_TOTAL: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^ℹ (tests|pass|fail|skipped|todo|cancelled) (\d+)\s*$"));

pub(crate) fn parse_node_spec(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("node", true);
    let mut counts = Counts::default();
    let mut totals = false;
    let mut suites: Vec<(usize, String)> = Vec::new();
    let mut listing = true;
    for line in lines {
        if line.trim() == "✖ failing tests:" {
            // The list that follows repeats failures already recorded.
            listing = false;
        } else if let Some(caps) = SPEC_TOTAL.captures(line) {
            totals = true;
            let n = caps
                .get(2)
                .and_then(|m| m.as_str().parse::<u64>().ok())
                .unwrap_or(0);
            match caps.get(1).map_or("", |m| m.as_str()) {
                "pass" => counts.passed += n,
                "fail" | "cancelled" => counts.failed += n,
                "skipped" | "todo" => counts.skipped += n,
                _ => {}
            }
        } else if let Some(caps) = SPEC_LINE.captures(line).filter(|_| listing) {
            let (Some(mark), Some(text)) = (caps.get(2), caps.get(3)) else {
                continue;
            };
            let depth = indent(line);
            suites.retain(|(at, _)| *at < depth);
            let skipped = DIRECTIVE.is_match(text.as_str());
            // Skips and todos carry their reason after ` # `, e.g. `# SKIP` or `# not yet`.
            let text = match text.as_str().split_once(" # ") {
                Some((head, _)) => head.to_owned(),
                None => text.as_str().to_owned(),
            };
            let title = strip_duration(&text);
            if mark.as_str() == "▶" {
                // A suite is printed when it starts and again, with its duration, when it ends.
                if title.len() == text.trim_end().len() {
                    suites.push((depth, title.to_owned()));
                }
                continue;
            }
            let status = match mark.as_str() {
                _ if skipped => TestStatus::Skipped,
                "✔" => TestStatus::Passed,
                "﹣" => TestStatus::Skipped,
                _ => TestStatus::Failed,
            };
            let mut name: Vec<&str> = suites.iter().map(|(_, suite)| suite.as_str()).collect();
            name.push(title);
            builder.record(None, &name.join(" > "), status);
        }
    }
    if !totals {
        return None;
    }
    builder.add_summary(counts);
    builder.drop_containers(" > ");
    builder.into_parsed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::TestCase;
    use crate::testreport::text::clean_lines;

    fn tap(text: &str) -> Option<TestReport> {
        parse_tap(&clean_lines(text)).map(|(_, report)| report)
    }

    #[test]
    fn a_bare_plan_line_in_other_output_is_not_tap() {
        assert_eq!(tap("building...\n1..3\ndone\n"), None);
    }

    #[test]
    fn an_empty_tap_stream_ran_no_tests() {
        let report = tap("TAP version 13\n1..0\n");
        assert_eq!(report.map(|report| report.ran_no_tests()), Some(true));
    }

    #[test]
    fn bail_out_is_an_error_not_an_empty_run() {
        let report = tap("TAP version 13\n1..3\nok 1 - first\nBail out! database unreachable\n");
        let expected = TestReport {
            format: "tap".into(),
            tests: vec![TestCase {
                name: "first".into(),
                status: TestStatus::Passed,
                file: None,
            }],
            passed: 1,
            failed: 0,
            skipped: 0,
            errors: 1,
            lists_passed: true,
        };
        assert_eq!(report, Some(expected));
    }
}
