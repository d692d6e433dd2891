//! Consistency of a console that is a runner's only channel (TAP from tape and other TAP
//! producers, cargo's libtest): code under test can print lines shaped like results, but it
//! cannot easily print them where and as often as the runner does. A result line for a name or
//! number already reported, a result after the run's summary, a count that disagrees with the
//! lines, a plan the results do not fill and a test binary that stops before its summary all
//! mean the console cannot be trusted.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

static LIBTEST_RUNNING: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^running (\d+) tests?$").ok());
static LIBTEST_RESULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$").ok());
static LIBTEST_SUMMARY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;").ok()
});
static TAP_RESULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(not ok|ok)\s+(\d+)\b").ok());
static TAP_PLAN: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^1\.\.(\d+)\b").ok());
static TAP_TOTAL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^# (tests|pass|fail)\s+(\d+)$").ok());

fn captures<'t>(pattern: &LazyLock<Option<Regex>>, line: &'t str) -> Option<regex::Captures<'t>> {
    pattern.as_ref()?.captures(line)
}

fn number(caps: &regex::Captures<'_>, group: usize) -> u64 {
    caps.get(group)
        .and_then(|m| m.as_str().parse().ok())
        .unwrap_or(0)
}

/// The test binary being read: its announced count, the (name, outcome) results reported,
/// and whether it reached the `failures:` details, after which no result line belongs.
type Block = (u64, Vec<(String, String)>, bool);

/// Where cargo's libtest output contradicts itself, one sentence per finding.
pub(crate) fn libtest(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<Block> = None;
    let mut after_summary = false;
    let close = |block: Option<Block>, out: &mut Vec<String>| {
        if let Some((announced, _, _)) = block {
            out.push(format!(
                "a test binary announced `running {announced} tests` and stopped before its \
                 `test result:` line"
            ));
        }
    };
    for line in lines {
        let line = line.trim_end();
        if let Some(caps) = captures(&LIBTEST_RUNNING, line) {
            close(block.take(), &mut out);
            block = Some((number(&caps, 1), Vec::new(), false));
            after_summary = false;
        } else if let Some(caps) = captures(&LIBTEST_SUMMARY, line) {
            let Some((announced, results, _)) = block.take() else {
                out.push(format!(
                    "`{line}` without a `running N tests` line before it"
                ));
                continue;
            };
            let ran = number(&caps, 1) + number(&caps, 2) + number(&caps, 3);
            if ran != announced {
                out.push(format!(
                    "a test binary announced {announced} tests and its summary counts {ran}"
                ));
            }
            // More result lines than the summary counts were printed by someone else; fewer
            // happen honestly when tests print without capture and lines interleave.
            let listed = results.len() as u64;
            if listed > ran {
                out.push(format!(
                    "a test binary printed {listed} result lines and its summary counts {ran}"
                ));
            }
            let passed = results.iter().filter(|(_, word)| word == "ok").count() as u64;
            if passed > number(&caps, 1) {
                out.push(format!(
                    "a test binary printed {passed} `ok` lines and its summary counts {} passed",
                    number(&caps, 1)
                ));
            }
            after_summary = true;
        } else if let Some(caps) = captures(&LIBTEST_RESULT, line) {
            let name = caps.get(1).map_or("", |m| m.as_str()).to_owned();
            let word = caps.get(2).map_or("", |m| m.as_str()).to_owned();
            match block.as_mut() {
                Some((_, _, true)) => out.push(format!(
                    "`{line}` is printed among the failure details, not where libtest reports"
                )),
                Some((_, results, false)) => {
                    if results.iter().any(|(seen, _)| *seen == name) {
                        out.push(format!("`{line}`: `{name}` was already reported"));
                    }
                    results.push((name, word));
                }
                None if after_summary => out.push(format!(
                    "`{line}` comes after the test binary's `test result:` line"
                )),
                None => out.push(format!("`{line}` comes before any `running N tests` line")),
            }
        } else if line == "failures:"
            && let Some(current) = block.as_mut()
        {
            current.2 = true;
        }
    }
    close(block, &mut out);
    out
}

/// Where a TAP stream (tape's) contradicts itself, one sentence per finding. Only results at
/// the left margin are read: indented ones belong to subtests numbered on their own.
pub(crate) fn tap(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut numbers: HashSet<u64> = HashSet::new();
    let (mut results, mut passes) = (0u64, 0u64);
    let mut plan: Option<(u64, bool)> = None;
    let mut totals: Vec<(String, u64)> = Vec::new();
    let mut started = false;
    let finish = |numbers: &HashSet<u64>,
                  results: u64,
                  passes: u64,
                  plan: Option<(u64, bool)>,
                  totals: &[(String, u64)],
                  out: &mut Vec<String>| {
        if numbers.is_empty() && plan.is_none() {
            return;
        }
        match plan {
            None => out.push(format!(
                "the TAP stream reported {results} results and ended without its plan line \
                 (`1..N`): the run stopped before its end"
            )),
            Some((planned, _)) if planned != results => out.push(format!(
                "the TAP plan says `1..{planned}` and the stream holds {results} results"
            )),
            _ => {}
        }
        for (word, count) in totals {
            let seen = match word.as_str() {
                "tests" => results,
                "pass" => passes,
                _ => results - passes,
            };
            if *count != seen {
                out.push(format!(
                    "the TAP totals say `# {word} {count}` and the stream holds {seen}"
                ));
            }
        }
    };
    for line in lines {
        let line = line.trim_end();
        if line.starts_with("TAP version") {
            if !started && results > 0 {
                out.push(format!(
                    "{results} result lines come before the TAP stream's `TAP version` header"
                ));
            }
            if started {
                finish(&numbers, results, passes, plan, &totals, &mut out);
            }
            numbers.clear();
            (results, passes, plan) = (0, 0, None);
            totals.clear();
            started = true;
        } else if let Some(caps) = captures(&TAP_RESULT, line) {
            let n = number(&caps, 2);
            if plan.is_some_and(|(_, before_results)| !before_results) {
                out.push(format!(
                    "`{line}` comes after the stream's closing plan line"
                ));
            }
            if !numbers.insert(n) {
                out.push(format!("`{line}`: result number {n} was already reported"));
            }
            results += 1;
            // tape counts results under a SKIP or TODO directive as passes.
            let upper = line.to_ascii_uppercase();
            let directive = upper.contains("# SKIP") || upper.contains("# TODO");
            if directive || caps.get(1).is_some_and(|m| m.as_str() == "ok") {
                passes += 1;
            }
        } else if let Some(caps) = captures(&TAP_PLAN, line) {
            if plan.is_some() {
                out.push(format!("`{line}` is a second plan line in one TAP stream"));
            }
            plan = Some((number(&caps, 1), results == 0));
        } else if let Some(caps) = captures(&TAP_TOTAL, line) {
            let word = caps.get(1).map_or("", |m| m.as_str()).to_owned();
            totals.push((word, number(&caps, 2)));
        }
    }
    finish(&numbers, results, passes, plan, &totals, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn an_honest_libtest_run_is_consistent() {
        let text = include_str!("../../testreport/fixtures/cargo_real_streams.txt");
        assert_eq!(libtest(&lines(text)), Vec::<String>::new());
    }

    #[test]
    fn libtest_lines_printed_by_the_code_under_test_are_found() {
        let text = "running 2 tests\ntest a ... FAILED\ntest b ... ok\ntest a ... ok\n\n\
                    failures:\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n\
                    test c ... ok\n";
        assert_eq!(
            libtest(&lines(text)),
            vec![
                "`test a ... ok`: `a` was already reported".to_owned(),
                "a test binary printed 3 result lines and its summary counts 2".to_owned(),
                "a test binary printed 2 `ok` lines and its summary counts 1 passed".to_owned(),
                "`test c ... ok` comes after the test binary's `test result:` line".to_owned(),
            ]
        );
    }

    #[test]
    fn interleaved_output_of_uncaptured_tests_is_not_a_finding() {
        // `--nocapture`: a test's own prints split libtest's result line in two.
        let text = "running 2 tests\ntest a ... hello from a\nok\ntest b ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(libtest(&lines(text)), Vec::<String>::new());
    }

    #[test]
    fn a_test_binary_that_exits_before_its_summary_is_found() {
        let text = "running 2 tests\ntest a ... ok\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(
            libtest(&lines(text)),
            vec![
                "a test binary announced `running 2 tests` and stopped before its `test \
                 result:` line"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn an_honest_tape_run_is_consistent() {
        let text = include_str!("../../testreport/fixtures/tape_real.txt");
        assert_eq!(tap(&lines(text)), Vec::<String>::new());
    }

    #[test]
    fn tap_results_printed_by_the_code_under_test_are_found() {
        let before = "ok 1 - parses crlf\nTAP version 13\n# crlf\nnot ok 1 - should be equal\n\n1..1\n# tests 1\n# pass  0\n# fail  1\nok 2 - late\n";
        assert_eq!(
            tap(&lines(before)),
            vec![
                "1 result lines come before the TAP stream's `TAP version` header".to_owned(),
                "`ok 2 - late` comes after the stream's closing plan line".to_owned(),
                "the TAP plan says `1..1` and the stream holds 2 results".to_owned(),
                "the TAP totals say `# tests 1` and the stream holds 2".to_owned(),
                "the TAP totals say `# pass 0` and the stream holds 1".to_owned(),
            ]
        );
        let stopped = "TAP version 13\n# crlf\nok 1 - should be equal\n";
        assert_eq!(
            tap(&lines(stopped)),
            vec![
                "the TAP stream reported 1 results and ended without its plan line (`1..N`): \
                 the run stopped before its end"
                    .to_owned()
            ]
        );
        let duplicate = "TAP version 13\nok 1 - fake\nok 1 - should be equal\n1..2\n";
        assert_eq!(
            tap(&lines(duplicate)),
            vec!["`ok 1 - should be equal`: result number 1 was already reported".to_owned()]
        );
    }
}
