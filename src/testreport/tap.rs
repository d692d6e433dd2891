//! TAP (`ok 1 - name`, `not ok 2 - name # SKIP`, indented subtests, `# pass 1` totals) as
//! printed by node:test, tape and others, and node:test's spec reporter (`✔`/`✖` tree with
//! `ℹ pass 1` totals), node's default on a terminal and, since node 23, everywhere.

use std::sync::LazyLock;

use regex::Regex;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{indent, re, strip_duration};

/// The test number is required: it tells TAP apart from go's `ok  pkg 0.01s` and stray prose.
static TAP_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\s*)(ok|not ok)\s+\d+\b(?:\s+-)?\s*(.*)$"));
static TAP_SUBTEST: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)# Subtest: (.+)$"));
static TAP_TOTAL: LazyLock<Regex> =
    LazyLock::new(|| re(r"^# (tests|pass|fail|skip|skipped|todo|cancelled) (\d+)\s*$"));
static TAP_HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:TAP version \d+|1\.\.\d+)\s*$"));
static DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\s+#\s*(SKIP|TODO)\b.*$"));

pub(crate) fn parse_tap(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("tap", true);
    let mut header = false;
    let mut counts = Counts::default();
    let mut totals = false;
    let mut parents: Vec<(usize, String)> = Vec::new();
    let mut in_yaml = false;
    let mut tap_version = false;
    for line in lines {
        // YAML diagnostics blocks (`---` ... `...`) hold error text, never results.
        match line.trim() {
            "---" if !in_yaml => {
                in_yaml = true;
                continue;
            }
            "..." if in_yaml => {
                in_yaml = false;
                continue;
            }
            _ if in_yaml => continue,
            _ => {}
        }
        if TAP_HEADER.is_match(line) {
            header = true;
            tap_version |= line.starts_with("TAP version");
        } else if line.starts_with("Bail out!") {
            // The producer gave up: whatever it was running did not finish.
            counts.errors += 1;
        } else if let Some(caps) = line
            .trim_start()
            .starts_with("# Subtest:")
            .then(|| TAP_SUBTEST.captures(line))
            .flatten()
        {
            let depth = caps.get(1).map_or(0, |m| m.as_str().len());
            parents.retain(|(at, _)| *at < depth);
            parents.push((
                depth,
                caps.get(2).map_or("", |m| m.as_str()).trim().to_owned(),
            ));
        } else if let Some(caps) = line
            .trim_start()
            .starts_with("ok ")
            .then_some(())
            .or_else(|| line.trim_start().starts_with("not ok ").then_some(()))
            .and_then(|()| TAP_LINE.captures(line))
        {
            let depth = caps.get(1).map_or(0, |m| m.as_str().len());
            let ok = caps.get(2).is_some_and(|m| m.as_str() == "ok");
            let description = caps.get(3).map_or("", |m| m.as_str());
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
            parents.retain(|(at, _)| *at < depth);
            let mut name: Vec<&str> = parents.iter().map(|(_, parent)| parent.as_str()).collect();
            name.push(title.trim());
            builder.record(None, &name.join(" > "), status);
        } else if let Some(caps) = TAP_TOTAL.captures(line) {
            totals = true;
            let n = caps
                .get(2)
                .and_then(|m| m.as_str().parse::<u64>().ok())
                .unwrap_or(0);
            match caps.get(1).map_or("", |m| m.as_str()) {
                "pass" => counts.passed += n,
                "fail" | "cancelled" => counts.failed += n,
                "skip" | "skipped" | "todo" => counts.skipped += n,
                _ => {}
            }
        }
    }
    // A bare plan line (`1..3`) can occur in any output; without totals, only named results
    // or an explicit `TAP version` header make this TAP.
    if !totals && !(header && (tap_version || !builder.is_empty())) {
        return None;
    }
    builder.drop_containers(" > ");
    let signal = if totals {
        builder.add_summary(Counts {
            errors: 0,
            ..counts
        });
        Signal::Summary
    } else {
        Signal::PerTest
    };
    let mut report = builder.finish();
    report.errors = counts.errors;
    Some((signal, report))
}

static SPEC_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)(✔|✖|﹣|⚠|▶)\s+(.+)$"));
static SPEC_TOTAL: LazyLock<Regex> =
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
