//! The time a runner reports its tests took, read from its own summary: unittest's (and
//! Django's) `Ran 3 tests in 0.004s`, pytest's `2 passed in 0.12s`, jest's `Time: 1.2 s`,
//! vitest's `Duration 1.23s`, mocha's `3 passing (12ms)`, node:test's `duration_ms 12.3`,
//! libtest's `finished in 0.01s` (summed over the targets) and go's per-package `ok pkg 0.01s`
//! (summed over the packages).
//!
//! The difference between a run's wall time and this is the runner's start-up (imports,
//! collection, database creation), paid once per run whatever the number of tests. Pure text
//! in; `None` when the output shows no summary this module reads.

/// The test time, in milliseconds, reported in a run's output (stdout and stderr together).
pub(crate) fn reported_ms(stdout: &str, stderr: &str) -> Option<u64> {
    let lines = || stderr.lines().chain(stdout.lines()).map(str::trim);
    let last = |read: fn(&str) -> Option<f64>| lines().filter_map(read).next_back();
    let sum = |read: fn(&str) -> Option<f64>| {
        let found: Vec<f64> = lines().filter_map(read).collect();
        (!found.is_empty()).then(|| found.iter().sum())
    };
    let seconds = last(unittest)
        .or_else(|| sum(libtest))
        .or_else(|| last(pytest))
        .or_else(|| last(jest))
        .or_else(|| last(vitest))
        .or_else(|| last(mocha))
        .or_else(|| last(node_test))
        .or_else(|| sum(go))?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

/// `Ran 3 tests in 0.004s`.
fn unittest(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("Ran ")?;
    let (count, rest) = rest.split_once(' ')?;
    count.parse::<u64>().ok()?;
    let time = rest
        .strip_prefix("tests in ")
        .or(rest.strip_prefix("test in "))?;
    seconds_suffixed(time)
}

/// `===== 1 failed, 2 passed in 0.12s =====`, `2 passed in 1.50s (0:00:01)`.
fn pytest(line: &str) -> Option<f64> {
    let line = line.trim_matches(|c| c == '=' || c == ' ');
    let (counts, time) = line.rsplit_once(" in ")?;
    let counted = [
        "passed",
        "failed",
        "error",
        "skipped",
        "xfailed",
        "deselected",
    ];
    if !counted.iter().any(|word| counts.contains(word)) {
        return None;
    }
    seconds_suffixed(time.split_whitespace().next()?)
}

/// `Time:        1.234 s` and `Time: 1.2 s, estimated 2 s`.
fn jest(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("Time:")?.trim();
    let value = rest.split(',').next()?.trim();
    match value.split_once(' ') {
        Some((number, "s")) => number.parse().ok(),
        Some((number, "ms")) => number.parse::<f64>().ok().map(|ms| ms / 1000.0),
        _ => unit_seconds(value),
    }
}

/// `Duration  1.23s (transform 20ms, setup 0ms, …)`.
fn vitest(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("Duration")?.trim();
    unit_seconds(rest.split_whitespace().next()?)
}

/// `3 passing (12ms)`, `3 passing (2s)`, `3 passing (1m)`.
fn mocha(line: &str) -> Option<f64> {
    let (count, rest) = line.split_once(' ')?;
    count.parse::<u64>().ok()?;
    let time = rest.strip_prefix("passing (")?.strip_suffix(')')?;
    unit_seconds(time)
}

/// node:test's summary, TAP (`# duration_ms 12.3`) or spec (`ℹ duration_ms 12.3`).
fn node_test(line: &str) -> Option<f64> {
    let (_, value) = line.split_once("duration_ms ")?;
    let lead = line.split("duration_ms").next()?.trim();
    if !matches!(lead, "#" | "ℹ") {
        return None;
    }
    value.trim().parse::<f64>().ok().map(|ms| ms / 1000.0)
}

/// `test result: ok. 3 passed; 0 failed; …; finished in 0.01s`.
fn libtest(line: &str) -> Option<f64> {
    if !line.starts_with("test result:") {
        return None;
    }
    seconds_suffixed(line.rsplit_once("finished in ")?.1)
}

/// `ok  <package>  0.012s` and `FAIL  <package>  0.012s` (tab-separated).
fn go(line: &str) -> Option<f64> {
    let mut words = line.split_whitespace();
    if !matches!(words.next()?, "ok" | "FAIL") {
        return None;
    }
    words.next()?;
    seconds_suffixed(words.next()?)
}

/// `0.004s`.
fn seconds_suffixed(text: &str) -> Option<f64> {
    text.trim().strip_suffix('s')?.parse().ok()
}

/// `12ms`, `1.5s`, `2m`.
fn unit_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    if let Some(ms) = text.strip_suffix("ms") {
        return ms.parse::<f64>().ok().map(|ms| ms / 1000.0);
    }
    if let Some(s) = text.strip_suffix('s') {
        return s.parse().ok();
    }
    text.strip_suffix('m')?
        .parse::<f64>()
        .ok()
        .map(|m| m * 60.0)
}

#[cfg(test)]
mod tests {
    use super::reported_ms;

    #[test]
    fn each_runner_summary_gives_its_test_time() {
        let cases = [
            // unittest and Django (stderr).
            (
                "",
                "..F\n------------------------------------------------------------\nRan 3 tests in 0.004s\n\nFAILED (failures=1)\n",
                Some(4),
            ),
            (
                "",
                "Found 1 test(s).\nSystem check identified no issues (0 silenced).\n.\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nOK\nDestroying test database for alias 'default'...\n",
                Some(1),
            ),
            (
                "tests/test_a.py .F                                     [100%]\n=========================== 1 failed, 1 passed in 0.12s ============================\n",
                "",
                Some(120),
            ),
            ("2 passed in 75.31s (0:01:15)\n", "", Some(75_310)),
            (
                "",
                "Tests:       1 failed, 2 passed, 3 total\nSnapshots:   0 total\nTime:        1.234 s, estimated 2 s\nRan all test suites.\n",
                Some(1_234),
            ),
            (
                " Test Files  1 passed (1)\n      Tests  2 passed (2)\n   Start at  10:00:00\n   Duration  1.23s (transform 20ms, setup 0ms, collect 5ms, tests 3ms)\n",
                "",
                Some(1_230),
            ),
            ("\n  3 passing (12ms)\n  1 failing\n", "", Some(12)),
            ("  40 passing (2s)\n", "", Some(2_000)),
            (
                "# tests 3\n# suites 0\n# pass 3\n# fail 0\n# duration_ms 45.5\n",
                "",
                Some(46),
            ),
            ("ℹ tests 2\nℹ pass 2\nℹ duration_ms 12.25\n", "", Some(12)),
            (
                "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.25s\n",
                "",
                Some(750),
            ),
            (
                "--- FAIL: TestA (0.00s)\nFAIL\nFAIL\texample.com/m/a\t0.012s\nok  \texample.com/m/b\t0.100s\n",
                "",
                Some(112),
            ),
            ("ok 1 - a\n1..1\n", "", None),
            ("", "Traceback (most recent call last):\n", None),
        ];
        for (stdout, stderr, want) in cases {
            assert_eq!(reported_ms(stdout, stderr), want, "{stdout}{stderr}");
        }
    }
}
