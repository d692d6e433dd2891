//! go test: plain and `-v` text (`=== RUN`, `--- FAIL: TestX (0.00s)`, `ok pkg 0.01s`,
//! `FAIL pkg`, `[no test files]`, `[no tests to run]`) and the `-json` event stream.

use std::sync::LazyLock;

use serde::Deserialize;

use super::model::{Builder, Signal, TestCase, TestReport, TestStatus};
use super::text::{Pattern, re};

static RESULT: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^\s*--- (PASS|FAIL|SKIP): (\S+)(?: \([\d.]+s\))?\s*$"));
static PACKAGE: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[no test files\]|\[build failed\]|\[setup failed\])(.*)$",
    )
});
static RUN: LazyLock<Pattern> = LazyLock::new(|| re(r"^=== RUN\s+(\S+)"));

/// One package's outcome line, kept until the end because per-test lines come before it.
struct PackageLine {
    package: String,
    outcome: String,
    rest: String,
}

pub(crate) fn parse(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("go", false);
    let mut packages: Vec<PackageLine> = Vec::new();
    let mut pending: Vec<(String, TestStatus)> = Vec::new();
    let mut verbose = false;
    for line in lines {
        if RUN.is_match(line) {
            verbose = true;
        } else if let Some(caps) = RESULT.captures(line) {
            let (Some(word), Some(name)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            let status = match word.as_str() {
                "PASS" => TestStatus::Passed,
                "SKIP" => TestStatus::Skipped,
                _ => TestStatus::Failed,
            };
            pending.push((name.as_str().to_owned(), status));
        } else if let Some(caps) = PACKAGE.captures(line) {
            let (Some(outcome), Some(package)) = (caps.get(1), caps.get(2)) else {
                continue;
            };
            let package = package.as_str().to_owned();
            // Test results are printed before their package's line; attach them now.
            for (name, status) in pending.drain(..) {
                builder.record(Some(&package), &name, status);
            }
            packages.push(PackageLine {
                package,
                outcome: outcome.as_str().to_owned(),
                rest: line.to_owned(),
            });
        }
    }
    for (name, status) in pending.drain(..) {
        builder.record(None, &name, status);
    }
    if packages.is_empty() && builder.is_empty() {
        return None;
    }
    let signal = if packages.is_empty() {
        Signal::PerTest
    } else {
        Signal::Summary
    };
    let mut report = builder.finish();
    // Plain `go test` names only failures; a package that passed without naming its tests
    // stands as one passing entry so a run that executed tests is not mistaken for none.
    for line in &packages {
        let named = report
            .tests
            .iter()
            .any(|case| case.file.as_deref() == Some(line.package.as_str()));
        let no_tests =
            line.rest.contains("[no test files]") || line.rest.contains("[no tests to run]");
        let errored = line.outcome == "FAIL"
            && (line.rest.contains("[build failed]")
                || line.rest.contains("[setup failed]")
                || !named);
        if errored {
            report.errors += 1;
            report.tests.push(TestCase {
                name: line.package.clone(),
                status: TestStatus::Failed,
                file: Some(line.package.clone()),
            });
        } else if line.outcome == "ok" && !named && !no_tests {
            report.passed += 1;
            report.tests.push(TestCase {
                name: line.package.clone(),
                status: TestStatus::Passed,
                file: Some(line.package.clone()),
            });
        }
    }
    report.lists_passed = verbose;
    Some((signal, report))
}

/// One `go test -json` event (`go doc test2json`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    test: Option<String>,
}

pub(crate) fn parse_json(lines: &[String]) -> Option<(Signal, TestReport)> {
    let mut builder = Builder::new("go", true);
    let mut package_results = 0usize;
    let mut errors = 0u64;
    let mut failed_packages: Vec<String> = Vec::new();
    let mut json_events = 0usize;
    for line in lines {
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            // Build failures are printed as plain text even under `-json` (before go 1.24).
            if let Some(caps) = PACKAGE.captures(line)
                && caps.get(1).is_some_and(|m| m.as_str() == "FAIL")
                && (line.contains("[build failed]") || line.contains("[setup failed]"))
            {
                package_results += 1;
                failed_packages.push(caps.get(2).map_or("", |m| m.as_str()).to_owned());
            }
            continue;
        }
        let Ok(event) = serde_json::from_str::<Event>(trimmed) else {
            continue;
        };
        json_events += 1;
        let package = event.package.as_deref();
        let status = match event.action.as_str() {
            "pass" => TestStatus::Passed,
            "fail" => TestStatus::Failed,
            "skip" => TestStatus::Skipped,
            _ => continue,
        };
        match event.test {
            Some(test) => builder.record(package, &test, status),
            None => {
                package_results += 1;
                if status == TestStatus::Failed {
                    failed_packages.push(package.unwrap_or_default().to_owned());
                }
            }
        }
    }
    // Plain-text output with no event at all is the text parser's.
    if json_events == 0 || (package_results == 0 && builder.is_empty()) {
        return None;
    }
    let mut report = builder.finish();
    for package in failed_packages {
        let named = report
            .tests
            .iter()
            .any(|case| case.file.as_deref() == Some(package.as_str()));
        if !named {
            errors += 1;
            report.tests.push(TestCase {
                name: package.clone(),
                status: TestStatus::Failed,
                file: Some(package),
            });
        }
    }
    report.errors = errors;
    Some((Signal::Summary, report))
}
