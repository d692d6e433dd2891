//! jest (`PASS`/`FAIL file`, `✓`/`✕`/`○` lines, `● a › b` failure headers, `Tests:` summary)
//! and vitest (`✓`/`×`/`↓` lines, `FAIL file > a > b`, `Test Files`/`Tests` summary, the
//! `|project|` label of a workspace's projects).
//!
//! Both default reporters name passing tests only in some cases: jest prints the tree of
//! tests when it runs one file, else only `PASS file` and the failures; vitest lists a file's
//! tests only when the file failed. A `PASS file` or `✓ file (N tests)` line is not turned
//! into tests: the counts come from the summary and `lists_passed` says the passes are not
//! all named.

use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, count_pairs, indent, re, strip_duration};

static JEST_FILE: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^\s*(PASS|FAIL)\s+(\S+)(?:\s+\(.*\))?\s*$"));
static JEST_TEST: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\s*)(✓|✔|√|✕|✖|×|○|✎)\s+(.+)$"));
static JEST_FAILURE: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*● (.+)$"));
static JEST_TESTS: LazyLock<Pattern> = LazyLock::new(|| re(r"^Tests:\s+(.*\d+ total.*)$"));
static JEST_NONE: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^No tests found, exiting with code \d+"));

/// Headers under `●` that are not tests.
const NOT_TESTS: &[&str] = &["Console", "Test suite failed to run"];

/// The start of jest's own header for a test file that called `process.exit` (`●  process.exit
/// called with "0"`, an empty test path before it): jest's notice, not a test.
const EXIT_NOTICE: &str = "process.exit called with";

pub(crate) fn parse_jest(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("jest", false);
    let mut file: Option<String> = None;
    // Describe blocks by indentation, for the `a › b` names jest uses in failure headers.
    let mut describes: Vec<(usize, String)> = Vec::new();
    let mut listed = false;
    let mut suite_errors = 0u64;
    let mut none_found = false;
    // After the first `●` header of a file, the lines are failure details, not the tree.
    let mut in_details = false;
    // Files jest printed as `PASS file`.
    let mut passed_files: Vec<String> = Vec::new();
    for line in lines {
        if let Some(caps) = JEST_FILE.captures(line) {
            file = caps.get(2).map(|m| m.as_str().to_owned());
            if let (Some(word), Some(name)) = (caps.get(1), file.as_ref())
                && word.as_str() == "PASS"
            {
                passed_files.push(name.clone());
            }
            describes.clear();
            in_details = false;
        } else if let Some(caps) = JEST_TESTS.captures(line) {
            let mut counts = Counts::default();
            for (word, n) in count_pairs(caps.get(1).map_or("", |m| m.as_str())) {
                match word.as_str() {
                    "passed" => counts.passed += n,
                    "failed" => counts.failed += n,
                    "skipped" | "todo" | "pending" => counts.skipped += n,
                    _ => {}
                }
            }
            builder.add_summary(counts);
        } else if JEST_NONE.is_match(line) {
            none_found = true;
        } else if let Some(file) = file.as_deref() {
            if let Some(caps) = JEST_TEST.captures(line) {
                let (Some(space), Some(mark), Some(title)) =
                    (caps.get(1), caps.get(2), caps.get(3))
                else {
                    continue;
                };
                let depth = space.as_str().len();
                describes.retain(|(at, _)| *at < depth);
                let status = match mark.as_str() {
                    "✓" | "✔" | "√" => TestStatus::Passed,
                    "○" | "✎" => TestStatus::Skipped,
                    _ => TestStatus::Failed,
                };
                let title = strip_duration(title.as_str());
                let title = title
                    .strip_prefix("skipped ")
                    .or_else(|| title.strip_prefix("todo "))
                    .unwrap_or(title);
                builder.record(Some(file), &join(&describes, title), status);
                listed |= status == TestStatus::Passed;
            } else if let Some(caps) = JEST_FAILURE.captures(line) {
                let Some(title) = caps.get(1).map(|m| m.as_str().trim()) else {
                    continue;
                };
                in_details = true;
                if title == "Test suite failed to run" {
                    // The whole file failed (syntax or import error): one failing entry for it.
                    suite_errors += 1;
                    builder.record(Some(file), file, TestStatus::Failed);
                } else if !NOT_TESTS.contains(&title) && !title.starts_with(EXIT_NOTICE) {
                    builder.record(Some(file), title, TestStatus::Failed);
                }
            } else if !in_details && is_describe(line) {
                let depth = indent(line);
                describes.retain(|(at, _)| *at < depth);
                describes.push((depth, line.trim().to_owned()));
            }
        }
    }
    if !builder.has_summary() {
        // The run ended before jest's summary (a test file called `process.exit`): a file
        // printed as `PASS` whose tests are not named is recorded whole, named after itself,
        // as a file that failed to run is; its tests take its status.
        for name in &passed_files {
            let named = builder.has_file(name);
            if !named {
                builder.record(Some(name), name, TestStatus::Passed);
            }
        }
    }
    if builder.is_empty() && !none_found && suite_errors == 0 {
        return None;
    }
    let signal = if builder.has_summary() || none_found {
        Signal::Summary
    } else {
        Signal::PerTest
    };
    let mut report = builder.finish();
    report.errors = suite_errors;
    report.lists_passed = listed || report.passed == 0;
    Some((signal, report))
}

/// A describe line in jest's verbose tree: indented plain text under a file header. Stray
/// lines (console output) are evicted by the tree's own indentation before they can prefix a
/// test, because every test or describe pops deeper-or-equal entries.
fn is_describe(line: &str) -> bool {
    indent(line) >= 2 && !line.trim().is_empty()
}

fn join(describes: &[(usize, String)], title: &str) -> String {
    let mut name = String::new();
    for (_, describe) in describes {
        name.push_str(describe);
        name.push_str(" › ");
    }
    name.push_str(title);
    name
}

static VITEST_TESTS: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*Tests\s+(.*\(\d+\))\s*$"));
static VITEST_FILES: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s*Test Files\s+.*\(\d+\)\s*$"));
static VITEST_FAIL: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^\s*FAIL\s+(?:\|[^|]+\|\s+)?(\S+) > (.+?)\s*$"));
/// The `|name| ` label vitest puts before a file when the run has projects (a workspace).
static VITEST_PROJECT: LazyLock<Pattern> = LazyLock::new(|| re(r"^\|[^|]+\|\s+"));
static VITEST_LINE: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\s*)(✓|✔|×|✕|↓|❯|·)\s+(.+)$"));
static VITEST_FILE_HEADER: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(\S+)\s+\((\d+) tests?(?:\s*\|[^)]*)?\)"));
static VITEST_NONE: LazyLock<Pattern> = LazyLock::new(|| re(r"^No test files found"));

pub(crate) fn parse_vitest(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("vitest", false);
    let mut file: Option<String> = None;
    let mut files_line = false;
    let mut none_found = false;
    let mut listed = false;
    // The default reporter lists the tests of a file only when it failed (vitest 3) or only
    // its failures (vitest 2); a passing file is one `✓ file (N tests)` line. The tests a
    // header announces and the lines under it tell whether every test was named.
    let mut announced: u64 = 0;
    let mut under_header: u64 = 0;
    let mut all_named = true;
    for line in lines {
        if let Some(caps) = VITEST_TESTS.captures(line) {
            let mut counts = Counts::default();
            for (word, n) in count_pairs(caps.get(1).map_or("", |m| m.as_str())) {
                match word.as_str() {
                    "passed" => counts.passed += n,
                    "failed" => counts.failed += n,
                    "skipped" | "todo" => counts.skipped += n,
                    _ => {}
                }
            }
            builder.add_summary(counts);
        } else if VITEST_FILES.is_match(line) {
            files_line = true;
        } else if VITEST_NONE.is_match(line.trim()) {
            none_found = true;
        } else if let Some(caps) = VITEST_FAIL.captures(line) {
            let (Some(path), Some(name)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            builder.record_new(Some(path.as_str()), name.as_str(), TestStatus::Failed);
        } else if let Some(caps) = VITEST_LINE.captures(line) {
            let (Some(mark), Some(text)) = (caps.get(2), caps.get(3)) else {
                continue;
            };
            let text = text.as_str();
            // Tests of a workspace's projects are named as without projects: the project
            // is a way of running the file, not part of the test's name.
            let text = match VITEST_PROJECT.find(text) {
                Some(label) => text.get(label.end()..).unwrap_or(text),
                None => text,
            };
            if let Some(header) = VITEST_FILE_HEADER.captures(text) {
                all_named &= under_header >= announced;
                file = header.get(1).map(|m| m.as_str().to_owned());
                announced = header
                    .get(2)
                    .and_then(|m| m.as_str().parse().ok())
                    .unwrap_or(0);
                under_header = 0;
                continue;
            }
            let status = match mark.as_str() {
                "✓" | "✔" => TestStatus::Passed,
                "↓" => TestStatus::Skipped,
                "❯" | "·" => continue,
                _ => TestStatus::Failed,
            };
            let text = strip_duration(text);
            let text = text.strip_suffix(" [skipped]").unwrap_or(text);
            // Verbose output may name the file first: `src/a.test.ts > suite > name`.
            let (path, name) = match text.split_once(" > ") {
                Some((head, tail)) if looks_like_file(head) => (Some(head.to_owned()), tail),
                _ => (file.clone(), text),
            };
            builder.record(path.as_deref(), name, status);
            listed |= status == TestStatus::Passed;
            under_header += 1;
        }
    }
    all_named &= under_header >= announced;
    if !files_line && !builder.has_summary() && !none_found {
        return None;
    }
    if none_found && !builder.has_summary() {
        builder.add_summary(Counts::default());
    }
    let mut report = builder.finish();
    report.lists_passed = (listed && all_named) || report.passed == 0;
    Some((Signal::Summary, report))
}

fn looks_like_file(text: &str) -> bool {
    !text.contains(' ')
        && [".ts", ".js", ".tsx", ".jsx", ".mts", ".mjs", ".cts", ".cjs"]
            .iter()
            .any(|ext| text.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::compare;

    fn parsed(text: &str) -> TestReport {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        match parse_jest(&lines) {
            Some((_, report)) => report,
            None => panic!("not recognised: {text}"),
        }
    }

    /// jest's console when a test file's hook calls `process.exit(0)`: no summary, and jest's
    /// notice under an empty test path.
    const CUT_BEFORE: &str = "FAIL test/slug.test.js\n  \u{25cf} slugify \u{203a} replaces every space\n\n    expect(received).toBe(expected)\n\n  \u{25cf}  process.exit called with \"0\"\n\n      at Object.exit (test/cli.test.js:8:11)\n";
    const CUT_AFTER: &str = "PASS test/slug.test.js\n  \u{25cf}  process.exit called with \"0\"\n\n      at Object.exit (test/cli.test.js:8:11)\n";

    #[test]
    fn a_run_cut_before_its_summary_records_passed_files_whole_and_no_exit_notice() {
        let before = parsed(CUT_BEFORE);
        let after = parsed(CUT_AFTER);
        let names = |report: &TestReport| -> Vec<(String, TestStatus)> {
            report
                .tests
                .iter()
                .map(|case| (case.id(), case.status))
                .collect()
        };
        assert_eq!(
            (names(&before), names(&after)),
            (
                vec![(
                    "test/slug.test.js::slugify \u{203a} replaces every space".to_owned(),
                    TestStatus::Failed
                )],
                vec![("test/slug.test.js".to_owned(), TestStatus::Passed)]
            )
        );
        assert_eq!(
            compare(&before, &after).fixed,
            vec!["test/slug.test.js::slugify \u{203a} replaces every space".to_owned()]
        );
        // A file that failed after is not a pass of its tests.
        let failing_after = parsed(&CUT_BEFORE.replace("FAIL", "PASS").replace(
            "  \u{25cf} slugify \u{203a} replaces every space\n",
            "  \u{25cf} slugify \u{203a} keeps dashes\n",
        ));
        let comparison = compare(&before, &failing_after);
        assert_eq!(comparison.fixed, Vec::<String>::new());
    }

    #[test]
    fn a_run_with_its_summary_records_no_whole_file() {
        let text = "PASS test/a.test.js\nPASS test/b.test.js\n\nTests:       4 passed, 4 total\n";
        assert_eq!(parsed(text).tests, Vec::new());
    }
}
