//! mocha: the spec reporter's indented tree of suites with `✔ title`, `N) title` and
//! `- title` lines, then `N passing (8ms)`, `N failing`, `N pending` and the numbered failures
//! every reporter prints (`1) suite` / `     title:`). The dot, progress and min reporters
//! print no tree, so their output names only the failures (`lists_passed` is false).

use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, indent, re, strip_duration};

static PASSING: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*(\d+) passing(?: \(\S+\))?\s*$"));
static FAILING: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*(\d+) failing\s*$"));
static PENDING: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*(\d+) pending\s*$"));
static TEST: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\s*)(✔|✓|√|\d+\)|-)\s+(.+)$"));
/// The first line of a numbered failure after the summary: `  1) suite` or `  1) title:`.
static FAILURE: LazyLock<Pattern> = LazyLock::new(|| re(r"^  \d+\) (.+)$"));

/// The most title lines a failure header spans (one per nesting level); a header that does
/// not end by then is not one.
const MAX_TITLE_LINES: usize = 32;

pub(crate) fn parse(lines: &[String]) -> Option<(Signal, TestReport)> {
    let summary_at = lines
        .iter()
        .position(|line| PASSING.is_match(line) || FAILING.is_match(line))?;
    let mut builder = Builder::new("mocha", true);
    let mut listed = false;
    let mut suites: Vec<(usize, String)> = Vec::new();
    // Only the tree before the summary names tests; the numbered details after it repeat them.
    for line in lines.get(..summary_at).unwrap_or_default() {
        if let Some(caps) = TEST.captures(line) {
            let (Some(space), Some(mark), Some(title)) = (caps.get(1), caps.get(2), caps.get(3))
            else {
                continue;
            };
            let depth = space.as_str().len();
            suites.retain(|(at, _)| *at < depth);
            let status = match mark.as_str() {
                "✔" | "✓" | "√" => TestStatus::Passed,
                "-" => TestStatus::Skipped,
                _ => TestStatus::Failed,
            };
            let mut name: Vec<&str> = suites.iter().map(|(_, suite)| suite.as_str()).collect();
            name.push(strip_duration(title.as_str()));
            builder.record(None, &name.join(" "), status);
            listed |= status == TestStatus::Passed;
        } else if indent(line) >= 2 && !line.trim().is_empty() {
            let depth = indent(line);
            suites.retain(|(at, _)| *at < depth);
            suites.push((depth, line.trim().to_owned()));
        }
    }
    let number = |pattern: &Pattern| {
        lines
            .iter()
            .skip(summary_at)
            .find_map(|line| pattern.captures(line)?.get(1)?.as_str().parse::<u64>().ok())
            .unwrap_or(0)
    };
    for name in failure_titles(lines.get(summary_at..).unwrap_or_default()) {
        builder.record_new(None, &name, TestStatus::Failed);
    }
    builder.add_summary(Counts {
        passed: number(&PASSING),
        failed: number(&FAILING),
        skipped: number(&PENDING),
        errors: 0,
    });
    let (signal, mut report) = builder.into_parsed()?;
    report.lists_passed = listed || report.passed == 0;
    Some((signal, report))
}

/// The full titles of the numbered failures after the summary, joined by spaces like the
/// spec tree's names: `  1) parse` then `       keeps crlf:` is `parse keeps crlf`. Mocha
/// prints one title per line, indented by depth, the last one ending with `:`.
fn failure_titles(lines: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    let mut at = 0;
    while let Some(line) = lines.get(at) {
        at += 1;
        let Some(first) = FAILURE.captures(line).and_then(|caps| caps.get(1)) else {
            continue;
        };
        let mut parts = vec![first.as_str().trim()];
        let mut complete = parts.last().is_some_and(|part| part.ends_with(':'));
        while !complete && parts.len() < MAX_TITLE_LINES {
            let Some(next) = lines.get(at).map(|next| next.trim()) else {
                break;
            };
            if next.is_empty() {
                break;
            }
            at += 1;
            parts.push(next);
            complete = next.ends_with(':');
        }
        if !complete {
            continue;
        }
        let mut name = parts.join(" ");
        name.pop();
        names.push(name);
    }
    names
}
