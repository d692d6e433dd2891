//! Prove: the reproduction must pass with the change, every suite must pass, and the per-test
//! table compares before and after. Also derives a wider suite from a filtered test command
//! when none is configured, so a fix that breaks a neighbouring test is caught.

use std::collections::{BTreeMap, BTreeSet};

use crate::evidence::{CommandRecord, TestTable};
use crate::policy::Issue;
use crate::testreport::{self, TestReport, TestStatus};

/// Lines of output quoted in a failed-proof issue.
const ISSUE_TAIL_LINES: usize = 15;

/// The status of a test that is known to be in the scope of the command that produced
/// `report` (it was named by another run of the same command): as listed, or, when the runner
/// does not list passing tests (pytest without `-v`, plain `go test`), passed if the whole run
/// passed with no skip.
pub(crate) fn status_in_scope(report: &TestReport, name: &str) -> Option<TestStatus> {
    if let Some(test) = report.tests.iter().find(|t| t.name == name) {
        return Some(test.status);
    }
    let clean_pass =
        report.failed == 0 && report.errors == 0 && report.skipped == 0 && report.passed > 0;
    (!report.lists_passed && clean_pass).then_some(TestStatus::Passed)
}

/// The before/after table over pairs of (before, after) records.
pub(crate) fn table(pairs: &[(Option<&CommandRecord>, Option<&CommandRecord>)]) -> TestTable {
    let mut before_failed = BTreeSet::new();
    let mut after_passed = BTreeSet::new();
    let (mut fixed, mut still, mut newly, mut missing) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    for (before, after) in pairs {
        let before = before.and_then(|r| r.tests.as_ref());
        let Some(after) = after.and_then(|r| r.tests.as_ref()) else {
            continue;
        };
        names_with(after, TestStatus::Passed, &mut after_passed);
        let Some(before) = before else {
            // No baseline: every failure after is new.
            names_with(after, TestStatus::Failed, &mut newly);
            continue;
        };
        names_with(before, TestStatus::Failed, &mut before_failed);
        // The test report's comparison speaks in ids; the table speaks in the runner's names.
        let name_of: BTreeMap<String, String> = before
            .tests
            .iter()
            .chain(&after.tests)
            .map(|t| (t.id(), t.name.clone()))
            .collect();
        let name = |id: &String| name_of.get(id).cloned().unwrap_or_else(|| id.clone());
        let comparison = testreport::compare(before, after);
        fixed.extend(comparison.fixed.iter().map(name));
        still.extend(comparison.still_failing.iter().map(name));
        newly.extend(comparison.newly_failing.iter().map(name));
        missing.extend(comparison.missing.iter().map(name));
        // A runner that lists only failures leaves them unconfirmed; a clean run settles it.
        for id in &comparison.unconfirmed {
            let test = name(id);
            if status_in_scope(after, &test) == Some(TestStatus::Passed) {
                after_passed.insert(test.clone());
                fixed.insert(test);
            } else {
                missing.insert(test);
            }
        }
    }
    let missing: Vec<String> = missing
        .into_iter()
        .filter(|t| !fixed.contains(t) && !still.contains(t))
        .collect();
    TestTable {
        fixed: fixed.iter().cloned().collect(),
        still_failing: still.into_iter().collect(),
        newly_failing: newly
            .into_iter()
            .filter(|t| !before_failed.contains(t))
            .collect(),
        missing,
        passing_after: after_passed.len() as u64,
    }
}

fn names_with(report: &TestReport, status: TestStatus, into: &mut BTreeSet<String>) {
    into.extend(
        report
            .tests
            .iter()
            .filter(|t| t.status == status)
            .map(|t| t.name.clone()),
    );
}

/// Whether a command proves success: exit 0, not timed out, and (when the runner's output is
/// understood) at least one test ran and none failed.
pub(crate) fn passes(record: &CommandRecord) -> bool {
    record.succeeded()
        && !record.ran_no_tests()
        && record.tests.as_ref().is_none_or(|t| t.failed == 0)
}

/// The blocking issue for a command that should have passed.
pub(crate) fn failure_issue(rule: &str, what: &str, record: &CommandRecord) -> Issue {
    let Some(outcome) = &record.outcome else {
        return Issue::new(
            rule,
            format!(
                "{what} could not run: {}",
                record.policy.message.clone().unwrap_or_default()
            ),
        );
    };
    let status = if outcome.timed_out {
        "timed out".to_owned()
    } else {
        match outcome.exit_code {
            Some(code) => format!("exited with {code}"),
            None => format!(
                "was killed by {}",
                outcome.signal.as_deref().unwrap_or("a signal")
            ),
        }
    };
    let failing: Vec<String> = record
        .tests
        .as_ref()
        .map(|t| {
            t.tests
                .iter()
                .filter(|c| c.status == TestStatus::Failed)
                .map(|c| c.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut message = if record.ran_no_tests() {
        format!("{what} ran no test")
    } else {
        format!("{what} still fails: `{}` {status}", record.command)
    };
    if !failing.is_empty() {
        message.push_str(&format!("; failing tests: {}", failing.join(", ")));
    }
    let text = format!("{}\n{}", outcome.stdout, outcome.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(ISSUE_TAIL_LINES)..].join("\n");
    if !tail.is_empty() {
        message.push_str(&format!("\nlast lines of output:\n{tail}"));
    }
    Issue::new(rule, message)
}

/// A wider suite derived from a filtered test command, when it has a filter to drop: the
/// package for `cargo test NAME`, the file for a pytest node id, the command without `-run`
/// / `-t` / `-k` for go test, jest/vitest and pytest. `None` when nothing would change.
pub(crate) fn derive_suite(argv: &[String]) -> Option<Vec<String>> {
    let program = argv.first().map(|p| crate::policy::command::basename(p))?;
    let derived = match program {
        "cargo" if argv.get(1).map(String::as_str) == Some("test") => derive_cargo(argv),
        "pytest" => derive_pytest(argv, 1),
        "python" | "python3"
            if argv.get(1).map(String::as_str) == Some("-m")
                && argv.get(2).map(String::as_str) == Some("pytest") =>
        {
            derive_pytest(argv, 3)
        }
        "go" if argv.get(1).map(String::as_str) == Some("test") => {
            drop_options(argv, &["-run", "-test.run"], &[])
        }
        "npx" | "npm" | "jest" | "vitest" | "pnpm" | "yarn" => drop_options(
            argv,
            &["-t", "--testNamePattern", "--test-name-pattern"],
            &[],
        ),
        _ => None,
    }?;
    (derived != argv).then_some(derived)
}

/// `cargo test [options] [FILTER] [-- args]` without the filter, the harness args and target
/// selectors.
fn derive_cargo(argv: &[String]) -> Option<Vec<String>> {
    const WITH_VALUE: &[&str] = &[
        "-p",
        "--package",
        "-F",
        "--features",
        "--manifest-path",
        "--target",
        "-j",
        "--jobs",
        "--profile",
        "--target-dir",
        "--exclude",
        "--config",
        "-Z",
    ];
    const SELECTORS_WITH_VALUE: &[&str] = &["--test", "--bin", "--example", "--bench"];
    const SELECTORS: &[&str] = &[
        "--lib",
        "--bins",
        "--tests",
        "--examples",
        "--benches",
        "--doc",
    ];
    let mut out = vec![argv[0].clone(), argv[1].clone()];
    let mut i = 2;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "--" {
            break;
        }
        if WITH_VALUE.contains(&arg.as_str()) {
            out.push(arg.clone());
            if let Some(value) = argv.get(i + 1) {
                out.push(value.clone());
            }
            i += 2;
            continue;
        }
        if SELECTORS_WITH_VALUE.contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if SELECTORS.contains(&arg.as_str()) || !arg.starts_with('-') {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    Some(out)
}

/// pytest with node ids reduced to their files and `-k` expressions dropped.
fn derive_pytest(argv: &[String], first_arg: usize) -> Option<Vec<String>> {
    let mut out: Vec<String> = argv[..first_arg].to_vec();
    let mut i = first_arg;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "-k" {
            i += 2;
            continue;
        }
        if arg.starts_with("-k") && arg.len() > 2 {
            i += 1;
            continue;
        }
        let reduced = match arg.split_once("::") {
            Some((file, _)) if !arg.starts_with('-') => file.to_owned(),
            _ => arg.clone(),
        };
        if !out.contains(&reduced) || reduced.starts_with('-') {
            out.push(reduced);
        }
        i += 1;
    }
    Some(out)
}

/// The command without the given options (and their values).
fn drop_options(argv: &[String], with_value: &[&str], flags: &[&str]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        if with_value.contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if with_value.iter().any(|o| arg.starts_with(&format!("{o}=")))
            || flags.contains(&arg.as_str())
        {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn derived(text: &str) -> Option<String> {
        derive_suite(&argv(text)).map(|a| a.join(" "))
    }

    #[test]
    fn derives_the_unfiltered_suite_from_filtered_test_commands() {
        assert_eq!(
            derived("cargo test -p parser crlf"),
            Some("cargo test -p parser".to_owned())
        );
        assert_eq!(
            derived("cargo test crlf -- --nocapture"),
            Some("cargo test".to_owned())
        );
        assert_eq!(
            derived("cargo test --test api crlf"),
            Some("cargo test".to_owned())
        );
        assert_eq!(
            derived("pytest tests/test_a.py::test_b"),
            Some("pytest tests/test_a.py".to_owned())
        );
        assert_eq!(
            derived("python -m pytest -k crlf tests"),
            Some("python -m pytest tests".to_owned())
        );
        assert_eq!(
            derived("go test -run TestX ./..."),
            Some("go test ./...".to_owned())
        );
        assert_eq!(
            derived("npx jest -t crlf src/a.test.js"),
            Some("npx jest src/a.test.js".to_owned())
        );
    }

    #[test]
    fn does_not_derive_when_nothing_is_filtered() {
        assert_eq!(derived("cargo test"), None);
        assert_eq!(derived("pytest tests/test_a.py"), None);
        assert_eq!(derived("make check"), None);
    }
}
