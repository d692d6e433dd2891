//! Raw runner logs for triage: `testreport` says which runner wrote the log and which tests
//! failed; this module finds each failing test's own section of the log (the text its cause
//! is read from). `go test -json` streams are read event by event here, since a test's output
//! is spread over many events.
//!
//! Logs downloaded from GitHub Actions carry a timestamp before every line; it is removed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::error::TriageError;
use super::failure::{Failure, MAX_TEXT_BYTES, Runner, bounded};
use crate::localize::strip_ansi;
use crate::testreport::{self, TestStatus};

/// How one runner marks the start of a failing test's section, and what else ends one.
struct Sections {
    /// A line that starts the section of the test named by the first capture group.
    header: Regex,
    /// A line that ends the current section without starting another.
    boundary: Option<Regex>,
}

fn regex(source: &str) -> Option<Regex> {
    match Regex::new(source) {
        Ok(regex) => Some(regex),
        Err(err) => {
            // Constants covered by the tests; a broken one loses sections, not the run.
            tracing::error!(%err, source, "invalid triage log pattern");
            debug_assert!(false, "invalid triage log pattern {source}: {err}");
            None
        }
    }
}

fn sections(format: &str) -> Option<Sections> {
    static TABLE: LazyLock<HashMap<&'static str, (&'static str, Option<&'static str>)>> =
        LazyLock::new(|| {
            HashMap::from([
                (
                    "pytest",
                    (
                        r"^_{3,} (?:ERROR at (?:setup|teardown) of )?(.+?) _{3,}$",
                        Some(r"^={3,} "),
                    ),
                ),
                (
                    "cargo",
                    (
                        r"^---- (.+) stdout ----$",
                        Some(r"^(?:failures:|test result: )"),
                    ),
                ),
                (
                    "nextest",
                    (
                        r"^\s*(?:FAIL|TIMEOUT|SIGSEGV|SIGABRT|SIGKILL|SIGBUS|ABORT|LEAK-FAIL)\s+\[[^\]]*\](?:\s+\(\s*\d+/\d+\))?\s+\S+\s+(.+?)\s*$",
                        Some(r"^\s*(?:PASS|SKIP|START|SLOW|FLAKY|RETRY|TRY \d+ \w+|─+|Summary)\b"),
                    ),
                ),
                (
                    "jest",
                    (r"^\s*● (.+)$", Some(r"^(?:FAIL|PASS) |^Test Suites:")),
                ),
                ("vitest", (r"^\s*FAIL\s+\S+ > (.+?)\s*$", Some(r"⎯{3,}"))),
                (
                    "go",
                    (
                        r"^\s*--- FAIL: (\S+)",
                        Some(r"^(?:ok|FAIL)\s+\S+|^\s*--- (?:PASS|SKIP): |^=== "),
                    ),
                ),
                (
                    "node",
                    (r"^\s*✖ (.+?)(?: \([\d.]+m?s\))?\s*$", Some(r"^\s*[✔ℹ▶﹣]")),
                ),
                (
                    "tap",
                    (r"^\s*not ok \d+ - (.+?)(?: # .*)?$", Some(r"^\s*ok \d+ ")),
                ),
            ])
        });
    let (header, boundary) = TABLE.get(format)?;
    Some(Sections {
        header: regex(header)?,
        boundary: boundary.and_then(regex),
    })
}

/// Read the runner log at `path` (its text is `text`) and call `found` with every failing
/// test, its section of the log as text. `runner` overrides the runner `testreport`
/// recognises (the selector syntax); the log format is still recognised from the text.
pub fn read_log(
    path: &Path,
    text: &str,
    runner: Option<Runner>,
    found: &mut dyn FnMut(Failure),
) -> Result<usize, TriageError> {
    let text = without_timestamps(text);
    if looks_like_go_json(&text) {
        return Ok(read_go_json(&text, found));
    }
    let Some(report) = testreport::parse(&text, "") else {
        return Err(TriageError::UnknownLog {
            path: path.to_owned(),
        });
    };
    let detected = match report.format.as_str() {
        "pytest" => Some(Runner::Pytest),
        "cargo" | "nextest" => Some(Runner::Cargo),
        "jest" => Some(Runner::Jest),
        "vitest" => Some(Runner::Vitest),
        "go" => Some(Runner::Go),
        "node" | "tap" => Some(Runner::Node),
        _ => None,
    };
    let Some(runner) = runner.or(detected) else {
        return Err(TriageError::UnsupportedLog {
            path: path.to_owned(),
            format: report.format.clone(),
        });
    };
    let lines: Vec<&str> = text.lines().collect();
    let by_key = match sections(&report.format) {
        Some(sections) => split(&lines, &sections),
        None => HashMap::new(),
    };
    let failing: Vec<&testreport::TestCase> = report
        .tests
        .iter()
        .filter(|case| case.status == TestStatus::Failed)
        .collect();
    let mut count = 0;
    for case in failing
        .iter()
        .copied()
        .filter(|case| !named_again(case, &failing))
    {
        let key = section_key(&report.format, &case.name);
        let text = by_key.get(key.as_str()).cloned().unwrap_or_default();
        let (name, scope) = match runner {
            // jest names join describe blocks with ` › `; `-t` matches them joined by spaces.
            Runner::Jest | Runner::Vitest => (
                case.name.replace(" › ", " ").replace(" > ", " "),
                case.file.clone(),
            ),
            _ => (case.name.clone(), case.file.clone()),
        };
        // A whole file that failed to load is named by its file: its key is the file.
        count += 1;
        found(Failure {
            runner,
            name,
            scope,
            text: bounded(text),
            message: None,
        });
    }
    Ok(count)
}

/// Whether a longer name of the same test is in the list too: vitest names a failing test
/// by its title alone in its tree and by `describe > title` in the failure list.
fn named_again(case: &testreport::TestCase, failing: &[&testreport::TestCase]) -> bool {
    failing.iter().any(|other| {
        other.file == case.file
            && other.name.len() > case.name.len()
            && (other.name.ends_with(&format!(" > {}", case.name))
                || other.name.ends_with(&format!(" › {}", case.name)))
    })
}

/// The key a test's section is found under: the header's own spelling of the test.
fn section_key(format: &str, name: &str) -> String {
    match format {
        // `tests/test_a.py::TestB::test_c` is headed `TestB.test_c`.
        "pytest" => match name.split_once("::") {
            Some((_, rest)) => rest.replace("::", "."),
            None => name.to_owned(),
        },
        "vitest" => name.to_owned(),
        "node" | "tap" => name.rsplit(" > ").next().unwrap_or(name).to_owned(),
        _ => name.to_owned(),
    }
}

/// Each failing test's section of the log, by the header's name for it. A test headed twice
/// (go's `=== RUN` and `--- FAIL`, a retried test) gets both sections.
fn split(lines: &[&str], sections: &Sections) -> HashMap<String, String> {
    let mut out: HashMap<String, String> = HashMap::new();
    let mut current: Option<String> = None;
    for raw in lines {
        let line = strip_ansi(raw);
        if let Some(caps) = sections.header.captures(&line) {
            let name = caps.get(1).map_or("", |m| m.as_str()).trim().to_owned();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if sections
            .boundary
            .as_ref()
            .is_some_and(|boundary| boundary.is_match(&line))
        {
            current = None;
            continue;
        }
        if let Some(text) = current.as_ref().and_then(|name| out.get_mut(name))
            && text.len() < MAX_TEXT_BYTES * 4
        {
            text.push_str(&line);
            text.push('\n');
        }
    }
    out
}

/// The text without the `2024-05-01T12:00:00.1234567Z ` prefix GitHub puts on log lines.
fn without_timestamps(text: &str) -> std::borrow::Cow<'_, str> {
    static STAMP: LazyLock<Option<Regex>> =
        LazyLock::new(|| regex(r"(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?"));
    match STAMP.as_ref() {
        Some(stamp) if text.starts_with(|c: char| c.is_ascii_digit()) || text.contains("Z ") => {
            stamp.replace_all(text, "")
        }
        _ => std::borrow::Cow::Borrowed(text),
    }
}

fn looks_like_go_json(text: &str) -> bool {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .take(5)
        .any(|line| line.starts_with('{') && line.contains("\"Action\":"))
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: String,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

/// `go test -json`: the output of each test until it passes (dropped) or fails (reported).
fn read_go_json(text: &str, found: &mut dyn FnMut(Failure)) -> usize {
    let mut open: HashMap<(String, String), String> = HashMap::new();
    let mut failed: Vec<(String, String, String)> = Vec::new();
    let mut last_failed: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        let Some(test) = event.test else {
            // Package output after a test's end (a panic's goroutine dump) belongs to the
            // test that failed last in that package.
            if let (Some(output), Some(&at)) = (&event.output, last_failed.get(&event.package))
                && let Some(entry) = failed.get_mut(at)
                && entry.2.len() < MAX_TEXT_BYTES * 4
            {
                entry.2.push_str(output);
            }
            continue;
        };
        let key = (event.package.clone(), test.clone());
        match event.action.as_str() {
            "output" => {
                let text = open.entry(key).or_default();
                if text.len() < MAX_TEXT_BYTES * 4 {
                    text.push_str(event.output.as_deref().unwrap_or(""));
                }
            }
            "fail" => {
                let text = open.remove(&key).unwrap_or_default();
                last_failed.insert(event.package.clone(), failed.len());
                failed.push((event.package, test, text));
            }
            "pass" | "skip" => {
                open.remove(&key);
            }
            _ => {}
        }
    }
    let count = failed.len();
    for (package, name, text) in failed {
        found(Failure {
            runner: Runner::Go,
            name,
            scope: Some(package),
            text: bounded(text),
            message: None,
        });
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Failure> {
        let mut out = Vec::new();
        read_log(Path::new("ci.log"), text, None, &mut |f| out.push(f)).unwrap();
        out
    }

    #[test]
    fn github_timestamps_are_removed() {
        let text = "2024-05-01T12:00:00.1234567Z running 1 test\n2024-05-01T12:00:00.2Z ok";
        assert_eq!(without_timestamps(text), "running 1 test\nok");
    }

    #[test]
    fn libtest_sections_belong_to_their_tests() {
        let log = "running 2 tests\ntest a ... FAILED\ntest b ... FAILED\n\nfailures:\n\n\
                   ---- a stdout ----\nthread 'a' panicked at src/x.rs:3:5:\nboom a\n\n\
                   ---- b stdout ----\nthread 'b' panicked at src/y.rs:9:1:\nboom b\n\n\
                   failures:\n    a\n    b\n\ntest result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let failures = read(log);
        assert_eq!(failures.len(), 2);
        assert!(failures[0].text.contains("boom a") && !failures[0].text.contains("boom b"));
        assert!(failures[1].text.contains("src/y.rs:9:1"));
    }

    #[test]
    fn go_json_collects_each_failing_tests_output() {
        let log = concat!(
            r#"{"Action":"run","Package":"m/p","Test":"TestA"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Test":"TestA","Output":"    a_test.go:3: bad\n"}"#,
            "\n",
            r#"{"Action":"fail","Package":"m/p","Test":"TestA"}"#,
            "\n",
            r#"{"Action":"run","Package":"m/p","Test":"TestB"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Test":"TestB","Output":"fine\n"}"#,
            "\n",
            r#"{"Action":"pass","Package":"m/p","Test":"TestB"}"#,
            "\n",
        );
        let failures = read(log);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].name, "TestA");
        assert_eq!(failures[0].scope.as_deref(), Some("m/p"));
        assert_eq!(failures[0].text, "    a_test.go:3: bad\n");
    }

    #[test]
    fn unknown_text_is_an_error_naming_the_file() {
        let err = read_log(Path::new("build.log"), "hello\nworld\n", None, &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("build.log"), "{err}");
    }
}
