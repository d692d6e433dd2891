//! Prevent: find the test part of a change, build the "tests only" version of it, and decide
//! which regression guard held — changed tests that fail without the fix and pass with it, or
//! the reproduction's own failing tests passing after the fix.

use std::collections::BTreeSet;
use std::ops::Range;

use regex::Regex;
use similar::{DiffOp, TextDiff};

use crate::evidence::{CommandRecord, Guard};
use crate::patch::FileChange;
use crate::policy::tests::{is_test_path, test_line_ranges};
use crate::testreport::{TestReport, TestStatus};

/// A change split into its test part and the rest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Split {
    /// The change with only test code applied (whole test files, test regions of others).
    pub tests_only: Vec<FileChange>,
    /// Files with test changes.
    pub test_files: Vec<String>,
    /// Names of tests the change adds or modifies.
    pub changed_tests: Vec<String>,
    /// Whether anything outside test code changes.
    pub touches_source: bool,
}

/// Split a change into its test part.
pub(crate) fn split(changes: &[FileChange]) -> Split {
    let mut out = Split::default();
    let mut names = BTreeSet::new();
    for change in changes {
        let before = text(change.before.as_deref());
        let after = text(change.after.as_deref());
        if is_test_path(&change.path) {
            out.test_files.push(change.path.clone());
            out.tests_only.push(change.clone());
            names.extend(changed_test_names(&change.path, &before, &after, None));
            continue;
        }
        let before_ranges = test_line_ranges(&change.path, &before);
        let after_ranges = test_line_ranges(&change.path, &after);
        let (mixed, test_ops, source_ops) =
            tests_only_content(&before, &after, &before_ranges, &after_ranges);
        if source_ops {
            out.touches_source = true;
        }
        if test_ops {
            out.test_files.push(change.path.clone());
            out.tests_only.push(FileChange {
                path: change.path.clone(),
                before: change.before.clone(),
                after: Some(mixed.into_bytes()),
            });
            names.extend(changed_test_names(
                &change.path,
                &before,
                &after,
                Some(&after_ranges),
            ));
        }
    }
    out.changed_tests = names.into_iter().collect();
    out
}

fn text(bytes: Option<&[u8]>) -> String {
    bytes
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

fn within(line: usize, ranges: &[Range<usize>]) -> bool {
    ranges.iter().any(|r| r.contains(&line))
}

/// The original text with only the diff operations that fall inside test code applied.
/// Returns (content, any test op, any source op).
fn tests_only_content(
    before: &str,
    after: &str,
    before_ranges: &[Range<usize>],
    after_ranges: &[Range<usize>],
) -> (String, bool, bool) {
    let diff = TextDiff::from_lines(before, after);
    let old: Vec<&str> = diff.old_slices().to_vec();
    let new: Vec<&str> = diff.new_slices().to_vec();
    let mut out = String::with_capacity(before.len());
    let (mut test_ops, mut source_ops) = (false, false);
    for op in diff.ops() {
        let old_range = op.old_range();
        let new_range = op.new_range();
        if let DiffOp::Equal { .. } = op {
            old[old_range].iter().for_each(|l| out.push_str(l));
            continue;
        }
        let old_in_tests = old_range.clone().all(|l| within(l, before_ranges));
        let new_in_tests = new_range.clone().all(|l| within(l, after_ranges));
        if old_in_tests && new_in_tests {
            test_ops = true;
            new[new_range].iter().for_each(|l| out.push_str(l));
        } else {
            source_ops = true;
            old[old_range].iter().for_each(|l| out.push_str(l));
        }
    }
    (out, test_ops, source_ops)
}

/// Names of test functions whose body or declaration the change adds or modifies.
fn changed_test_names(
    path: &str,
    before: &str,
    after: &str,
    regions: Option<&[Range<usize>]>,
) -> Vec<String> {
    let diff = TextDiff::from_lines(before, after);
    let changed: BTreeSet<usize> = diff
        .ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .flat_map(|op| {
            let range = op.new_range();
            // A pure deletion still changes the test that contained it.
            if range.is_empty() {
                range.start..range.start + 1
            } else {
                range
            }
        })
        .collect();
    let lines: Vec<&str> = after.lines().collect();
    let declarations = test_declarations(path, &lines);
    let mut names = BTreeSet::new();
    for line in changed {
        if let Some(regions) = regions
            && !within(line, regions)
        {
            continue;
        }
        // The test whose declaration-to-end extent holds the changed line.
        if let Some((_, _, name)) = declarations
            .iter()
            .find(|(start, end, _)| (*start..=*end).contains(&line))
        {
            names.insert(name.clone());
        }
    }
    names.into_iter().collect()
}

/// The last line (0-based) of the test declared at `start`: brace matching for brace
/// languages, indentation for Python.
fn test_end(path: &str, lines: &[&str], start: usize) -> usize {
    if path.ends_with(".py") {
        let indent = |l: &str| l.len() - l.trim_start().len();
        let own = indent(lines[start]);
        let mut end = start;
        for (i, line) in lines.iter().enumerate().skip(start + 1) {
            if line.trim().is_empty() {
                continue;
            }
            if indent(line) <= own && !line.trim_start().starts_with(')') {
                break;
            }
            end = i;
        }
        return end;
    }
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return i;
        }
    }
    lines.len().saturating_sub(1)
}

/// (first line, last line, name), 0-based, of every test in a file, in order.
fn test_declarations(path: &str, lines: &[&str]) -> Vec<(usize, usize, String)> {
    test_starts(path, lines)
        .into_iter()
        .map(|(start, name)| (start, test_end(path, lines, start), name))
        .collect()
}

/// (0-based line, name) of every test declaration in a file, in order.
fn test_starts(path: &str, lines: &[&str]) -> Vec<(usize, String)> {
    let pattern = declaration_pattern(path);
    let Some(pattern) = pattern else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut pending_attribute = false;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if path.ends_with(".rs") {
            if trimmed.starts_with("#[test]")
                || trimmed.starts_with("#[tokio::test")
                || trimmed.contains("::test]")
            {
                pending_attribute = true;
                continue;
            }
            if pending_attribute && let Some(c) = pattern.captures(line) {
                out.push((i, c[1].to_owned()));
                pending_attribute = false;
            }
            continue;
        }
        if let Some(c) = pattern.captures(line) {
            let name = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str().to_owned());
            if let Some(name) = name {
                out.push((i, name));
            }
        }
    }
    out
}

fn declaration_pattern(path: &str) -> Option<Regex> {
    let extension = path.rsplit('.').next().unwrap_or("");
    let source = match extension {
        "rs" => r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)",
        "py" => r"^\s*(?:async\s+)?def\s+(test[A-Za-z0-9_]*)",
        "go" => r"^func\s+(Test[A-Za-z0-9_]*)\s*\(",
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            r#"^\s*(?:it|test)(?:\.only)?\s*\(\s*(?:'([^']*)'|"([^"]*)"|`([^`]*)`)"#
        }
        _ => return None,
    };
    Regex::new(source).ok()
}

/// Whether a test name reported by a runner refers to the declared test `declared`.
pub(crate) fn same_test(reported: &str, declared: &str) -> bool {
    reported == declared
        || reported.ends_with(&format!("::{declared}"))
        || reported.ends_with(&format!(".{declared}"))
        || reported.ends_with(&format!("/{declared}"))
        || reported.ends_with(&format!(" {declared}"))
        || reported.ends_with(&format!(" › {declared}"))
        || reported.starts_with(&format!("{declared} "))
        || reported.starts_with(&format!("{declared}["))
        || reported.contains(&format!("::{declared}["))
}

/// Changed tests reported with `status` in any of the records.
pub(crate) fn reported_with(
    changed: &[String],
    records: &[&CommandRecord],
    status: TestStatus,
) -> Vec<String> {
    let reports: Vec<&TestReport> = records.iter().filter_map(|r| r.tests.as_ref()).collect();
    changed
        .iter()
        .filter(|name| {
            reports
                .iter()
                .flat_map(|r| r.tests.iter())
                .any(|t| t.status == status && same_test(&t.name, name))
        })
        .cloned()
        .collect()
}

/// Changed tests that passed with the whole change: listed as passed, or — when the runner
/// lists only failures — named failing by the tests-only run of the same command whose run
/// with the whole change passed cleanly.
fn passed_with(
    changed: &[String],
    tests_only: &[&CommandRecord],
    fixed: &[&CommandRecord],
) -> Vec<String> {
    let mut passed = reported_with(changed, fixed, TestStatus::Passed);
    for record in fixed {
        let Some(after) = record.tests.as_ref() else {
            continue;
        };
        let before = tests_only
            .iter()
            .find(|r| r.command == record.command)
            .and_then(|r| r.tests.as_ref());
        let Some(before) = before else { continue };
        for name in changed {
            if passed.contains(name) {
                continue;
            }
            let in_scope = before.tests.iter().find(|t| same_test(&t.name, name));
            if let Some(test) = in_scope
                && super::prove::status_in_scope(after, &test.name) == Some(TestStatus::Passed)
            {
                passed.push(name.clone());
            }
        }
    }
    passed.sort();
    passed
}

/// The guard decision of a round.
pub(crate) struct GuardDecision {
    pub guard: Option<Guard>,
    pub failed_without_fix: Vec<String>,
    pub passed_with_fix: Vec<String>,
    pub detail: String,
}

/// Decide which guard held.
pub(crate) fn decide(
    split: &Split,
    tests_only: &[&CommandRecord],
    fixed: &[&CommandRecord],
    reproduction_failing: &[String],
    fixed_reproduction: Option<&CommandRecord>,
    required: bool,
) -> GuardDecision {
    let failed_without_fix = reported_with(&split.changed_tests, tests_only, TestStatus::Failed);
    let passed_with_fix = passed_with(&split.changed_tests, tests_only, fixed);
    let changed_failing_after = reported_with(&split.changed_tests, fixed, TestStatus::Failed);
    let proven: Vec<&String> = failed_without_fix
        .iter()
        .filter(|t| passed_with_fix.contains(t))
        .collect();
    if !proven.is_empty() && changed_failing_after.is_empty() {
        let detail = format!(
            "{} of the {} changed test(s) failed with only the test changes applied and passed \
             with the whole change",
            proven.len(),
            split.changed_tests.len()
        );
        return GuardDecision {
            guard: Some(Guard::ChangedTests),
            failed_without_fix,
            passed_with_fix,
            detail,
        };
    }
    let mut reasons = Vec::new();
    if split.changed_tests.is_empty() {
        reasons.push("the change adds or modifies no test".to_owned());
    } else if failed_without_fix.is_empty() {
        reasons.push(format!(
            "none of the changed tests ({}) was reported failing with only the test changes \
             applied",
            split.changed_tests.join(", ")
        ));
    } else {
        reasons.push("the changed tests did not all pass with the whole change".to_owned());
    }
    // Guard (b): the reproduction's own failing tests, untouched by the change, now pass.
    let after = fixed_reproduction.and_then(|r| r.tests.as_ref());
    let untouched = reproduction_failing
        .iter()
        .all(|t| !split.changed_tests.iter().any(|c| same_test(t, c)));
    match after {
        Some(after) if !reproduction_failing.is_empty() && untouched => {
            let all_pass = reproduction_failing
                .iter()
                .all(|name| super::prove::status_in_scope(after, name) == Some(TestStatus::Passed));
            if all_pass {
                return GuardDecision {
                    guard: Some(Guard::Reproduction),
                    failed_without_fix,
                    passed_with_fix,
                    detail: format!(
                        "the reproduction's failing test(s) {} pass after the fix and were not \
                         modified by it",
                        reproduction_failing.join(", ")
                    ),
                };
            }
            reasons.push("the reproduction's failing tests do not all pass after it".to_owned());
        }
        Some(_) if !untouched => {
            reasons.push("the change modifies the reproduction's failing tests".to_owned())
        }
        _ => reasons.push(
            "the reproduction's output gives no per-test results to use as a guard".to_owned(),
        ),
    }
    let guard = (!required).then_some(Guard::NotRequired);
    GuardDecision {
        guard,
        failed_without_fix,
        passed_with_fix,
        detail: reasons.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, before: &str, after: &str) -> FileChange {
        FileChange {
            path: path.to_owned(),
            before: Some(before.as_bytes().to_vec()),
            after: Some(after.as_bytes().to_vec()),
        }
    }

    #[test]
    fn rust_inline_test_hunks_are_split_from_the_fix() {
        let before = "pub fn f() -> u8 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn one() {\n        assert_eq!(f(), 1);\n    }\n}\n";
        let after = "pub fn f() -> u8 {\n    2\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn one() {\n        assert_eq!(f(), 1);\n    }\n\n    #[test]\n    fn two() {\n        assert_eq!(f(), 2);\n    }\n}\n";
        let split = split(&[change("src/lib.rs", before, after)]);
        assert!(split.touches_source);
        assert_eq!(split.changed_tests, vec!["two".to_owned()]);
        assert_eq!(split.test_files, vec!["src/lib.rs".to_owned()]);
        let tests_only = String::from_utf8(split.tests_only[0].after.clone().unwrap()).unwrap();
        assert!(
            tests_only.contains("    1\n"),
            "the fix is not applied: {tests_only}"
        );
        assert!(
            tests_only.contains("fn two()"),
            "the new test is applied: {tests_only}"
        );
    }

    #[test]
    fn python_test_files_are_tests_whole() {
        let split = split(&[
            change("pkg/mod.py", "x = 1\n", "x = 2\n"),
            change(
                "tests/test_mod.py",
                "def test_a():\n    assert True\n",
                "def test_a():\n    assert True\n\n\ndef test_b():\n    assert x == 2\n",
            ),
        ]);
        assert_eq!(split.changed_tests, vec!["test_b".to_owned()]);
        assert_eq!(split.tests_only.len(), 1);
        assert!(split.touches_source);
    }

    #[test]
    fn reported_names_match_declared_tests_across_runners() {
        assert!(same_test("tests::two", "two"));
        assert!(same_test("tests/test_mod.py::test_b", "test_b"));
        assert!(same_test("tests/test_mod.py::test_b[1-2]", "test_b"));
        assert!(same_test("TestParse", "TestParse"));
        assert!(same_test("parser › handles crlf", "handles crlf"));
        assert!(!same_test("tests::two_more", "two"));
    }
}
