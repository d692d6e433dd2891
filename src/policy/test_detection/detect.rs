//! The entry point: which lines a change adds to production code, their code without
//! comments, and the detector for the file's language.

use similar::{DiffOp, TextDiff};

use super::code::{Syntax, code_lines};
use super::{go, javascript, python, rust};
use crate::policy::test_integrity::is_test_path;

/// One added line of production code that detects or patches the test run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// 1-based line in the file after the change.
    pub line: u64,
    /// What the line does, as a fragment that follows the line's location: "reads
    /// `PYTEST_CURRENT_TEST`, which pytest sets only while it runs a test".
    pub what: String,
}

/// What a detector sees of one changed file.
pub(crate) struct Added<'a> {
    pub path: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    /// 0-based indices of the added lines in `after`, ascending.
    pub lines: Vec<usize>,
    /// The code of every line of `after`, comments removed.
    pub code: Vec<String>,
}

impl Added<'_> {
    /// The added lines with their code, skipping lines with no code left.
    pub(crate) fn code_lines(&self) -> impl Iterator<Item = (usize, &str)> {
        self.lines.iter().filter_map(|&i| {
            let code = self.code.get(i)?.as_str();
            (!code.trim().is_empty()).then_some((i, code))
        })
    }
}

/// Lines `after` adds to a production file that detect or patch the test run, at most one
/// finding per line. Test files give none.
pub fn test_detections(path: &str, before: Option<&str>, after: &str) -> Vec<Detection> {
    if is_test_path(path) {
        return Vec::new();
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let syntax = match ext {
        "py" => Syntax::Python,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Syntax::JavaScript,
        "rs" => Syntax::Rust,
        "go" => Syntax::Go,
        _ => return Vec::new(),
    };
    let before = before.unwrap_or("");
    let lines = added_lines(before, after);
    if lines.is_empty() {
        return Vec::new();
    }
    let added = Added {
        path,
        before,
        after,
        lines,
        code: code_lines(after, syntax),
    };
    let mut found = match syntax {
        Syntax::Python => python::detect(&added),
        Syntax::JavaScript => javascript::detect(&added),
        Syntax::Rust => rust::detect(&added),
        Syntax::Go => go::detect(&added),
    };
    found.sort_by_key(|d| d.line);
    found.dedup_by_key(|d| d.line);
    found
}

/// 0-based indices of the lines of `after` that are not in `before`: a line diff over the
/// changed middle only (the common head and tail are most of a file).
fn added_lines(before: &str, after: &str) -> Vec<usize> {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let diff = TextDiff::from_slices(&old[head..old.len() - tail], &new[head..new.len() - tail]);
    diff.ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. } | DiffOp::Delete { .. }))
        .flat_map(|op| op.new_range())
        .map(|i| i + head)
        .collect()
}

/// A detection at 0-based `index`.
pub(crate) fn at(index: usize, what: String) -> Detection {
    Detection {
        line: index as u64 + 1,
        what,
    }
}

/// Whether `path` is a module that exists to support tests (a `testing` package shipped with
/// a library, a pytest plugin, fixtures, mocks): importing a test framework there is its job.
pub(crate) fn is_test_support_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.split('/').any(|part| {
        let stem = part.split('.').next().unwrap_or(part);
        stem.starts_with("testing")
            || stem.starts_with("_testing")
            || stem.contains("pytest")
            || stem.contains("fixture")
            || stem.contains("mock")
            || [
                "test_util",
                "testutil",
                "test-util",
                "test_helper",
                "testhelper",
            ]
            .iter()
            .any(|w| stem.contains(w))
            || ["test-helper", "test_support", "testsupport", "test-support"]
                .iter()
                .any(|w| stem.contains(w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_added_lines_are_found_with_their_line_numbers() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nx\nd\ne\n";
        assert_eq!(added_lines(before, after), vec![1, 3, 5]);
        assert_eq!(added_lines("", "x\ny\n"), vec![0, 1]);
        assert!(added_lines(before, before).is_empty());
    }

    #[test]
    fn testing_support_modules_are_recognised() {
        for path in [
            "src/pkg/testing.py",
            "pkg/testing/__init__.py",
            "src/pytest_foo/plugin.py",
            "lib/test-utils.js",
            "src/fixtures.py",
            "src/__mocks__/fs.js",
        ] {
            assert!(is_test_support_path(path), "{path}");
        }
        for path in [
            "src/pkg/core.py",
            "lib/index.js",
            "src/attest.py",
            "src/contest.js",
        ] {
            assert!(!is_test_support_path(path), "{path}");
        }
    }
}
