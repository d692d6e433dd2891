//! cargo test (libtest's human output, several targets per run) and cargo-nextest.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::model::{Builder, Counts, Signal, TestReport, TestStatus};
use super::text::{Pattern, count_pairs, re};

static RUNNING: LazyLock<Pattern> = LazyLock::new(|| re(r"^running (\d+) tests?$"));
static RESULT: LazyLock<Pattern> = LazyLock::new(|| {
    re(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured")
});
static TARGET: LazyLock<Pattern> = LazyLock::new(|| re(r"^\s+(Running|Doc-tests)\s+(.+)$"));
static OVERFLOW: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^thread '(.+?)'(?: \(\d+\))? has overflowed its stack"));
static FAILURE_SECTION: LazyLock<Pattern> = LazyLock::new(|| re(r"^---- (.+) stdout ----$"));
static DOC_LINE: LazyLock<Pattern> = LazyLock::new(|| re(r" \(line (\d+)\)"));
/// `--format terse` (`cargo test -q`) names only failures: `tests::b --- FAILED`.
static TERSE_FAILED: LazyLock<Pattern> = LazyLock::new(|| re(r"^(\S.*?) --- FAILED$"));
static HASHED_BINARY: LazyLock<Pattern> = LazyLock::new(|| re(r"-[0-9a-f]{16}(?:\.exe)?$"));

/// libtest: `running N tests`, `test NAME ... ok|FAILED|ignored`, `---- NAME stdout ----`,
/// the `failures:` list and one `test result:` line per test target.
pub(crate) fn parse_libtest(lines: &[String]) -> Option<(Signal, TestReport)> {
    let targets = target_labels(lines);
    let block_count = lines.iter().filter(|line| RUNNING.is_match(line)).count();
    // Cargo prints target headers on stderr and results on stdout, so they can only be
    // paired by order, and only when every block has its header.
    let pair_targets = targets.len() == block_count;
    let mut builder = Builder::new("cargo", true);
    let mut block: Option<usize> = None;
    let doc_ranks = doc_test_lines(lines);
    let mut ranks: Option<&DocLines> = None;
    let mut in_failure_list = false;
    let mut listed_any = false;
    let mut open = OpenBlock::default();
    let mut file: Option<String> = None;
    for line in lines {
        if RUNNING.is_match(line) {
            open.close(&mut builder, file.as_deref());
            block = Some(block.map_or(0, |at| at + 1));
            ranks = block.and_then(|at| doc_ranks.get(at));
            in_failure_list = false;
            open = OpenBlock {
                started: true,
                ..OpenBlock::default()
            };
            file = match (pair_targets, block) {
                (true, Some(at)) => targets.get(at).cloned().flatten(),
                _ => None,
            };
            continue;
        }
        if let Some((name, None)) = test_line(line) {
            open.unfinished.push(test_name(name, ranks));
        } else if let Some(name) = line
            .starts_with("thread '")
            .then(|| OVERFLOW.captures(line))
            .flatten()
            .and_then(|caps| caps.get(1))
        {
            open.unfinished.push(test_name(name.as_str(), ranks));
        } else if let Some((name, Some(status))) = test_line(line) {
            let name = test_name(name, ranks);
            builder.record(file.as_deref(), &name, status);
            open.tally(status);
            listed_any |= status == TestStatus::Passed;
        } else if let Some(name) = FAILURE_SECTION.captures(line).and_then(|caps| caps.get(1)) {
            // What follows is the test's own output, not the list of names.
            in_failure_list = false;
            builder.record_new(
                file.as_deref(),
                &test_name(name.as_str(), ranks),
                TestStatus::Failed,
            );
        } else if line == "failures:" {
            in_failure_list = true;
        } else if in_failure_list && line.starts_with("    ") && !line.trim().is_empty() {
            builder.record_new(
                file.as_deref(),
                &test_name(line.trim(), ranks),
                TestStatus::Failed,
            );
        } else if let Some(name) = TERSE_FAILED.captures(line).and_then(|caps| caps.get(1)) {
            builder.record_new(
                file.as_deref(),
                &test_name(name.as_str(), ranks),
                TestStatus::Failed,
            );
        } else if let Some(caps) = RESULT.captures(line) {
            in_failure_list = false;
            open.started = false;
            let number = |at: usize| {
                caps.get(at)
                    .and_then(|m| m.as_str().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            builder.add_summary(Counts {
                passed: number(1).saturating_add(number(4)),
                failed: number(2),
                skipped: number(3),
                errors: 0,
            });
        } else if line.trim().is_empty() {
            continue;
        } else if !line.starts_with("    ") {
            in_failure_list = false;
        }
    }
    open.close(&mut builder, file.as_deref());
    if block.is_none() && !builder.has_summary() {
        return None;
    }
    let mut report = builder.finish();
    report.lists_passed = listed_any || report.passed == 0;
    Some((Signal::Summary, report))
}

/// The test block being read, until its `test result:` line.
#[derive(Default)]
struct OpenBlock {
    /// Inside a block whose result line has not been seen yet.
    started: bool,
    counts: Counts,
    /// Tests that started (or whose thread died) without a result line.
    unfinished: Vec<String>,
}

impl OpenBlock {
    fn tally(&mut self, status: TestStatus) {
        match status {
            TestStatus::Passed => self.counts.passed += 1,
            TestStatus::Failed => self.counts.failed += 1,
            TestStatus::Skipped => self.counts.skipped += 1,
        }
    }

    /// A block that ends without `test result:` is a test binary that died (stack overflow,
    /// abort, signal): what it reported still counts, the tests it was running failed, and the
    /// crash itself is an error, so the run never reads as "no tests ran".
    fn close(&mut self, builder: &mut Builder, file: Option<&str>) {
        if !self.started {
            return;
        }
        self.started = false;
        for name in self.unfinished.drain(..) {
            if builder.status_of(file, &name).is_none() {
                builder.record(file, &name, TestStatus::Failed);
                self.counts.failed += 1;
            }
        }
        self.counts.errors += 1;
        builder.add_summary(self.counts);
    }
}

/// One label per test block, in order: the target source (`src/lib.rs`, `tests/cli.rs`) for
/// `Running` headers, `None` for doc-tests (their names already carry the path).
fn target_labels(lines: &[String]) -> Vec<Option<String>> {
    lines
        .iter()
        .filter_map(|line| {
            let caps = TARGET.captures(line)?;
            let kind = caps.get(1)?.as_str();
            if kind == "Doc-tests" {
                return Some(None);
            }
            let rest = caps.get(2)?.as_str().trim();
            let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
            // `src/lib.rs (target/debug/deps/efix-0123456789abcdef)`, or on old cargo only
            // the hashed binary path.
            let label = match rest.find(" (") {
                Some(at) => rest.get(..at).unwrap_or(rest).to_owned(),
                None => {
                    let base = rest.rsplit(['/', '\\']).next().unwrap_or(rest);
                    HASHED_BINARY.replace(base, "").into_owned()
                }
            };
            Some(Some(label))
        })
        .collect()
}

/// `test NAME ... ok|FAILED|ignored[, reason]|bench: ...`, or `test NAME ... ` (status `None`)
/// when the result has not come, e.g. because the test's thread died. Parsed by hand: it is
/// the hot line of large suites.
fn test_line(line: &str) -> Option<(&str, Option<TestStatus>)> {
    let (name, outcome) = line.strip_prefix("test ")?.split_once(" ...")?;
    let status = match outcome.trim() {
        "" => None,
        "ok" => Some(TestStatus::Passed),
        "FAILED" => Some(TestStatus::Failed),
        "ignored" => Some(TestStatus::Skipped),
        other if other.starts_with("ignored, ") => Some(TestStatus::Skipped),
        other if other.starts_with("bench:") => Some(TestStatus::Passed),
        _ => return None,
    };
    Some((name, status))
}

/// Per doc-test item (`src/lib.rs - parse`), the sorted line numbers of its examples.
type DocLines = HashMap<String, Vec<u64>>;

/// The doc-test line numbers of each test block, in block order. Merged doc-tests (edition
/// 2024) finish in any order, so examples of one item are told apart by the rank of their
/// line number, which survives edits elsewhere in the file, not by the order they print in.
fn doc_test_lines(lines: &[String]) -> Vec<DocLines> {
    let mut blocks: Vec<DocLines> = Vec::new();
    for line in lines {
        if RUNNING.is_match(line) {
            blocks.push(DocLines::new());
            continue;
        }
        let raw = match test_line(line) {
            Some((name, _)) => Some(name),
            None => FAILURE_SECTION
                .captures(line)
                .and_then(|caps| caps.get(1))
                .map(|m| m.as_str()),
        };
        let (Some(raw), Some(block)) = (raw, blocks.last_mut()) else {
            continue;
        };
        if !raw.contains(" (line ") {
            continue;
        }
        let Some(number) = DOC_LINE
            .captures(raw)
            .and_then(|caps| caps.get(1)?.as_str().parse::<u64>().ok())
        else {
            continue;
        };
        let base = DOC_LINE.replace_all(raw, "").into_owned();
        let numbers = block.entry(base).or_default();
        if let Err(at) = numbers.binary_search(&number) {
            numbers.insert(at, number);
        }
    }
    blocks
}

/// Stable form of a libtest name: doc-test line numbers and the `should panic` marker go,
/// since both change with edits that do not change which test it is. Several examples on
/// one item become `item #1`, `item #2` by line order.
fn test_name(raw: &str, ranks: Option<&DocLines>) -> String {
    let name = raw.trim();
    let name = name.strip_suffix(" - should panic").unwrap_or(name);
    if !name.contains(" (line ") {
        return name.to_owned();
    }
    let Some(number) = DOC_LINE
        .captures(name)
        .and_then(|caps| caps.get(1)?.as_str().parse::<u64>().ok())
    else {
        return name.to_owned();
    };
    let base = DOC_LINE.replace_all(name, "").into_owned();
    match ranks.and_then(|ranks| ranks.get(&base)) {
        Some(numbers) if numbers.len() > 1 => {
            let rank = numbers
                .iter()
                .position(|n| *n == number)
                .map_or(0, |at| at + 1);
            format!("{base} #{rank}")
        }
        _ => base,
    }
}

static NEXTEST_LINE: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"^\s*(?:TRY \d+ )?(PASS|FAIL|SKIP|TIMEOUT|ABORT|LEAK|LEAK-FAIL|FLAKY \d+/\d+|SIG[A-Z]+)\s+\[[^\]]*\]\s+(?:\(\s*\d+/\d+\)\s+)?(\S+)\s+(.+?)\s*$",
    )
});
static NEXTEST_START: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^\s*Starting (\d+) tests? across \d+ binar"));
static NEXTEST_SUMMARY: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^\s*Summary \[[^\]]*\]\s+(\d+) tests? run: (.*)$"));

/// cargo-nextest: `PASS [ 0.004s] binary-id test::name`, retries (`TRY 2 PASS`), the final
/// failure list, and `Summary [...] N tests run: 2 passed, 1 failed, 1 skipped`.
pub(crate) fn parse_nextest(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("nextest", true);
    let mut started: Option<u64> = None;
    let mut summary_seen = false;
    let mut in_final_list = false;
    let mut listed = false;
    for line in lines {
        if let Some(caps) = NEXTEST_SUMMARY.captures(line) {
            summary_seen = true;
            in_final_list = true;
            let mut counts = Counts::default();
            for (word, n) in count_pairs(caps.get(2).map_or("", |m| m.as_str())) {
                match word.as_str() {
                    "passed" => counts.passed += n,
                    "failed" | "timed" => counts.failed += n,
                    "skipped" => counts.skipped += n,
                    _ => {}
                }
            }
            builder.add_summary(counts);
        } else if let Some(caps) = NEXTEST_START.captures(line) {
            started = caps.get(1).and_then(|m| m.as_str().parse().ok());
        } else if let Some(caps) = NEXTEST_LINE.captures(line) {
            let (Some(kind), Some(binary), Some(name)) = (caps.get(1), caps.get(2), caps.get(3))
            else {
                continue;
            };
            let status = match kind.as_str() {
                "PASS" | "LEAK" => TestStatus::Passed,
                "SKIP" => TestStatus::Skipped,
                flaky if flaky.starts_with("FLAKY") => TestStatus::Passed,
                _ => TestStatus::Failed,
            };
            listed |= status == TestStatus::Passed;
            // The list after the summary repeats results already seen.
            if in_final_list {
                builder.record_new(Some(binary.as_str()), name.as_str(), status);
            } else {
                builder.record(Some(binary.as_str()), name.as_str(), status);
            }
        }
    }
    if !summary_seen && started == Some(0) {
        builder.add_summary(Counts::default());
    }
    if started.is_none() && !summary_seen {
        return None;
    }
    let (_, mut report) = builder.into_parsed()?;
    // `--status-level fail` (or `none`) hides the PASS lines: then passes are not named.
    report.lists_passed = listed || report.passed == 0;
    Some((Signal::Summary, report))
}
