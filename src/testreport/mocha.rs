//! mocha's spec reporter: an indented tree of suites with `✔ title`, `N) title` and
//! `- title` lines, then `N passing (8ms)`, `N failing`, `N pending` and numbered failures.

use std::sync::LazyLock;

use regex::Regex;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{indent, re, strip_duration};

static PASSING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(\d+) passing(?: \(\S+\))?\s*$"));
static FAILING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(\d+) failing\s*$"));
static PENDING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(\d+) pending\s*$"));
static TEST: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)(✔|✓|√|\d+\)|-)\s+(.+)$"));

pub(crate) fn parse(lines: &[String]) -> Option<(Signal, TestReport)> {
    let summary_at = lines
        .iter()
        .position(|line| PASSING.is_match(line) || FAILING.is_match(line))?;
    let mut builder = Builder::new("mocha", true);
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
        } else if indent(line) >= 2 && !line.trim().is_empty() {
            let depth = indent(line);
            suites.retain(|(at, _)| *at < depth);
            suites.push((depth, line.trim().to_owned()));
        }
    }
    let number = |pattern: &Regex| {
        lines
            .iter()
            .skip(summary_at)
            .find_map(|line| pattern.captures(line)?.get(1)?.as_str().parse::<u64>().ok())
            .unwrap_or(0)
    };
    builder.add_summary(Counts {
        passed: number(&PASSING),
        failed: number(&FAILING),
        skipped: number(&PENDING),
        errors: 0,
    });
    builder.into_parsed()
}
