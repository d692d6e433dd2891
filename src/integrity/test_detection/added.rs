//! What the detectors share: a changed file as they see it, and what they report.

/// The family of a cheat a detection belongs to; each has its own rule id in the evidence, so
/// a refusal says which kind of shortcut the change took.
/// Ordered from the most precise family to the most general: one line gets one finding, the
/// first in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Writes to a member of an imported module, a test framework, an assertion library or a
    /// builtin, in any syntax, or shadows an assertion macro.
    FrameworkPatch,
    /// An equality that always holds (`__eq__` returning `True`, `asymmetricMatch`, a
    /// `PartialEq` whose `eq` is a constant).
    ConstantEquality,
    /// Looks at its caller: stack frames, tracebacks, backtraces, call sites.
    Introspection,
    /// Ends the process or hooks its end, outside an entry point.
    ProcessExit,
    /// Reads test files (a path naming a test directory or test file).
    TestFileRead,
    /// Prints text shaped like a test runner's result lines.
    ResultSpoofing,
    /// Asks whether it runs under test: a runner's environment, argv, loaded modules or
    /// globals, `cfg!(test)`, a test framework imported into production code. Last in the
    /// order: when a line does more than ask, the more precise family names it.
    TestRun,
}

impl Family {
    /// The rule id of the family in issues and the evidence.
    pub fn rule(self) -> &'static str {
        match self {
            Family::TestRun => "check.test-detection",
            Family::FrameworkPatch => "check.framework-patch",
            Family::Introspection => "check.stack-introspection",
            Family::ProcessExit => "check.process-exit",
            Family::TestFileRead => "check.test-file-read",
            Family::ConstantEquality => "check.constant-equality",
            Family::ResultSpoofing => "check.result-spoofing",
        }
    }

    /// What to do instead, as the end of a refusal message.
    pub fn advice(self) -> &'static str {
        match self {
            Family::TestRun | Family::FrameworkPatch => {
                "production code must behave the same under test, so fix the code for every \
                 caller instead"
            }
            Family::Introspection => {
                "production code must not depend on who calls it, so compute the result from \
                 the arguments instead"
            }
            Family::ProcessExit => {
                "library code must return or raise, not end the process (exits belong in a \
                 `main` or CLI entry file, a `bin/` script, or code that already exited); \
                 report the error to the caller instead"
            }
            Family::TestFileRead => {
                "production code must not read the tests, so compute the result from the \
                 input instead"
            }
            Family::ConstantEquality => {
                "an equality must compare the values, so implement it on the fields instead"
            }
            Family::ResultSpoofing => {
                "production code must not print what a test runner prints, so remove the \
                 output and fix the code instead"
            }
        }
    }
}

/// One added line of production code that detects or patches the test run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// 1-based line in the file after the change.
    pub line: u64,
    /// Which family of cheat the line belongs to.
    pub family: Family,
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

/// A detection of the test run at 0-based `index`.
pub(crate) fn at(index: usize, what: String) -> Detection {
    of(Family::TestRun, index, what)
}

/// A detection of `family` at 0-based `index`.
pub(crate) fn of(family: Family, index: usize, what: String) -> Detection {
    Detection {
        line: index as u64 + 1,
        family,
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
