//! The test part of a change: which files and regions are test code, which tests the change
//! adds or modifies, and the "tests only" version of the change that Prevent runs without the
//! fix. Changes to the test harness (a `conftest.py`, a `pytest.ini`, the `Makefile` of the
//! reproduction; those `paths.allow-harness` let through) belong to the test part whole: they
//! decide how tests run, and the run without the fix must show what they do alone. Pure
//! functions of file contents and command strings.

use std::collections::BTreeSet;
use std::ops::Range;

use regex::Regex;
use similar::{DiffOp, TextDiff};

use crate::integrity::harness::harness_change;
use crate::integrity::test_policy::{is_test_path, test_line_ranges};
use crate::patch::FileChange;

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

/// Split a change into its test part; `commands` are the commands the run executes, whose
/// defining files are harness.
pub(crate) fn split(changes: &[FileChange], commands: &[String]) -> Split {
    let mut out = Split::default();
    let mut names = BTreeSet::new();
    for change in changes {
        let before = text(change.before.as_deref());
        let after = text(change.after.as_deref());
        let harness = || {
            harness_change(
                &change.path,
                change.before.as_ref().map(|_| before.as_str()),
                change.after.as_ref().map(|_| after.as_str()),
                commands,
            )
            .is_some()
        };
        if is_test_path(&change.path) || harness() {
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
        let split = split(&[change("src/lib.rs", before, after)], &[]);
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
        let split = split(
            &[
                change("pkg/mod.py", "x = 1\n", "x = 2\n"),
                change(
                    "tests/test_mod.py",
                    "def test_a():\n    assert True\n",
                    "def test_a():\n    assert True\n\n\ndef test_b():\n    assert x == 2\n",
                ),
            ],
            &[],
        );
        assert_eq!(split.changed_tests, vec!["test_b".to_owned()]);
        assert_eq!(split.tests_only.len(), 1);
        assert!(split.touches_source);
    }

    #[test]
    fn harness_changes_belong_to_the_test_side_whole() {
        let changes = [
            change("pkg/mod.py", "x = 1\n", "# why\nx = 1\n"),
            change(
                "pytest.ini",
                "[pytest]\n",
                "[pytest]\naddopts = -k 'not slow'\n",
            ),
            change(
                "Makefile",
                "test:\n\tpytest\n",
                "test:\n\tpytest tests/ok.py\n",
            ),
        ];
        let with_make = split(&changes, &["make test".to_owned()]);
        let without = split(&changes, &["pytest".to_owned()]);
        let files = |s: &Split| {
            s.tests_only
                .iter()
                .map(|c| c.path.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            (
                files(&with_make),
                with_make.touches_source,
                files(&without),
                without.touches_source
            ),
            (
                vec!["pytest.ini".to_owned(), "Makefile".to_owned()],
                true,
                vec!["pytest.ini".to_owned()],
                true
            )
        );
        let only_harness = split(&changes[1..2], &[]);
        assert!(!only_harness.touches_source);
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
