//! Picking the runner format that best explains a captured output.

use super::junit::parse_junit_xml;
use super::model::{Signal, TestReport};
use super::text::clean_lines;
use super::{cargo, gotest, jest, mocha, pytest, tap, unittest};

type Parser = fn(&[String]) -> Option<(Signal, TestReport)>;

/// The parsers in tie-break order: when two formats give the same signal strength, the
/// earlier, more distinctive one wins.
///
/// nextest comes before libtest because it embeds libtest's output of failing tests.
const PARSERS: &[Parser] = &[
    cargo::parse_nextest,
    cargo::parse_libtest,
    pytest::parse,
    unittest::parse,
    gotest::parse_json,
    gotest::parse,
    jest::parse_vitest,
    jest::parse_jest,
    mocha::parse,
    tap::parse_node_spec,
    tap::parse_tap,
    parse_junit_lines,
];

/// JUnit XML printed on stdout (`go-junit-report`, `--reporter junit`).
fn parse_junit_lines(lines: &[String]) -> Option<(Signal, TestReport)> {
    if !lines
        .iter()
        .any(|line| line.contains("<testsuite") || line.contains("<testcase"))
    {
        return None;
    }
    parse_junit_xml(&lines.join("\n")).map(|report| (Signal::Summary, report))
}

/// The lines of both streams as the parsers read them: stdout's, then stderr's, with colours
/// and carriage-return overwrites removed.
pub(crate) fn console_lines(stdout: &str, stderr: &str) -> Vec<String> {
    let mut lines = clean_lines(stdout);
    lines.extend(clean_lines(stderr));
    lines
}

/// Parse a runner's captured output; `None` when no known format is recognised.
///
/// Both streams are read: cargo prints its target headers on stderr and results on stdout,
/// jest prints everything on stderr. When several formats match, the one whose summary line
/// was found wins over one recognised from per-test lines alone.
pub fn parse(stdout: &str, stderr: &str) -> Option<TestReport> {
    let lines = console_lines(stdout, stderr);
    let mut best: Option<(Signal, TestReport)> = None;
    for parser in PARSERS {
        if let Some((signal, report)) = parser(&lines) {
            let stronger = best.as_ref().is_none_or(|(held, _)| signal > *held);
            if stronger {
                best = Some((signal, report));
            }
        }
    }
    let (signal, report) = best?;
    tracing::debug!(format = %report.format, ?signal, tests = report.tests.len(), "test output recognised");
    Some(report)
}
