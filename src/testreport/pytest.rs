//! pytest: `-v` per-test lines, `-q` progress dots, the short test summary and the final
//! `== 1 failed, 2 passed in 0.12s ==` line, including collection errors and "no tests ran".

use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, count_pairs, re};

/// `tests/test_a.py::test_x PASSED [ 33%]`, or with xdist `[gw0] [ 33%] PASSED tests/...`.
static VERBOSE: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"^(\S+::\S.*?) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)(?: \(.*\))?(?:\s+\[\s*\d+%\])?\s*$",
    )
});
static XDIST: LazyLock<Pattern> = LazyLock::new(|| {
    re(r"^\[gw\d+\]\s+\[\s*\d+%\]\s+(PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\s+(\S+::.+?)\s*$")
});
/// Short test summary: `FAILED tests/test_a.py::test_b - assert 1 == 2`, `ERROR tests/x.py`,
/// and a failed subtest (pytest 9, or pytest-subtests): `SUBFAILED(value=1) tests/...::test_c`.
static SHORT: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"^(FAILED|ERROR|PASSED|XFAIL|XPASS|SUBFAIL(?:ED)?(?:\(.*?\))?) (\S+?(?:\[.*?\])?)(?: - .*)?$",
    )
});
/// The final line, with or without the `=` rule around it (`-q` drops it).
static FINAL: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"^=*\s*((?:\d+ (?:subtests? )?(?:failed|passed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \([^)]*\))?\s*=*$",
    )
});

pub(crate) fn parse(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("pytest", false);
    let mut verbose_seen = false;
    for line in lines {
        // Cheap checks first: captures are slow and most lines are test output.
        let has_id = line.contains("::")
            && ["PASSED", "FAILED", "SKIPPED", "XFAIL", "XPASS", "ERROR"]
                .iter()
                .any(|word| line.contains(word));
        if let Some(caps) = has_id.then(|| VERBOSE.captures(line)).flatten() {
            let (Some(id), Some(word)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            verbose_seen = true;
            builder.record(
                file_of(id.as_str()),
                id.as_str().trim(),
                status_of(word.as_str()),
            );
        } else if let Some(caps) = (has_id && line.starts_with("[gw"))
            .then(|| XDIST.captures(line))
            .flatten()
        {
            let (Some(word), Some(id)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            verbose_seen = true;
            builder.record(file_of(id.as_str()), id.as_str(), status_of(word.as_str()));
        } else if let Some(caps) = line
            .starts_with(['F', 'E', 'P', 'X', 'S'])
            .then(|| SHORT.captures(line))
            .flatten()
        {
            let (Some(word), Some(id)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            // A bare path is a collection error for the whole file: it stays a failing entry
            // named after the file, so the failure is visible per file.
            let looks_like_test = id.as_str().contains("::") || id.as_str().ends_with(".py");
            if looks_like_test {
                builder.record(file_of(id.as_str()), id.as_str(), status_of(word.as_str()));
            }
        } else if let Some(caps) = (line.contains(" in ") && line.contains(char::is_numeric))
            .then(|| FINAL.captures(line.trim()))
            .flatten()
        {
            let mut counts = Counts::default();
            for (word, n) in count_pairs(caps.get(1).map_or("", |m| m.as_str())) {
                match word.as_str() {
                    "passed" | "xpassed" => counts.passed += n,
                    "failed" => counts.failed += n,
                    "skipped" | "xfailed" => counts.skipped += n,
                    "error" | "errors" => counts.errors += n,
                    _ => {}
                }
            }
            builder.add_summary(counts);
        }
    }
    if !builder.has_summary() && !verbose_seen {
        return None;
    }
    let mut parsed = builder.into_parsed()?;
    let report = &mut parsed.1;
    report.lists_passed = report.passed == 0
        || report
            .tests
            .iter()
            .any(|case| case.status == TestStatus::Passed);
    Some(parsed)
}

/// A failed subtest fails its test: pytest reports the test itself as passed and counts the
/// subtest apart, but the test is the unit a later run lists.
fn status_of(word: &str) -> TestStatus {
    match word {
        "PASSED" | "XPASS" => TestStatus::Passed,
        "SKIPPED" | "XFAIL" => TestStatus::Skipped,
        _ => TestStatus::Failed,
    }
}

/// The file part of a node id (`tests/test_a.py::Cls::test_b` -> `tests/test_a.py`).
fn file_of(id: &str) -> Option<&str> {
    let file = id.split("::").next()?;
    file.ends_with(".py").then_some(file)
}
