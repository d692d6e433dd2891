//! What the detectors share: a changed file as they see it, and what they report.

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
    /// The code of every added line of `after` (comments removed), by line index; the other
    /// entries are empty.
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
