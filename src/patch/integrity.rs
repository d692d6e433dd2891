//! Checks that keep the proof honest, as plug-ins: `check.test-harness` (a change to a file
//! that decides how tests run) and `check.test-detection` (production code that detects or
//! patches the test run). They live in the patch engine so that `efix patch` refuses what
//! `efix run` refuses; what counts as harness or detection is `policy`'s.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::integrity::harness::{harness_change, has_test_sections};
use crate::integrity::test_detection::{is_read, test_detections};
use crate::patch::checks::PostApplyCheck;
use crate::patch::model::{FileChange, PatchPolicy};
use crate::patch::text::lossless_str;
use crate::policy::Issue;

/// The integrity checks, in the order they run after the size, test and syntax checks.
pub(crate) fn integrity_checks() -> Vec<Box<dyn PostApplyCheck>> {
    vec![
        Box::new(TestHarness),
        Box::new(TestDetection),
        Box::new(SpecialCase),
    ]
}

/// Non-test code that answers the failing test's exact input with its expected value.
pub(crate) struct SpecialCase;

impl PostApplyCheck for SpecialCase {
    fn id(&self) -> &'static str {
        "check.special-case"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        policy: &PatchPolicy,
    ) -> Vec<Issue> {
        crate::integrity::special_case::special_cases(changes, &policy.expectations)
    }
}

/// A change to the test harness, unless `paths.allow-harness` lists the file.
pub(crate) struct TestHarness;

/// The `paths.allow-harness` globs; `None` when one does not compile (the config layer
/// refuses such globs, so this is a caller that built a policy by hand: allow nothing).
pub(crate) fn allowed_harness(policy: &PatchPolicy) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for glob in &policy.allow_harness {
        builder.add(
            GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .ok()?,
        );
    }
    builder.build().ok()
}

impl PostApplyCheck for TestHarness {
    fn id(&self) -> &'static str {
        "check.test-harness"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let allowed = if policy.allow_harness.is_empty() {
            None
        } else {
            allowed_harness(policy)
        };
        let mut issues = Vec::new();
        for change in changes {
            if allowed.as_ref().is_some_and(|a| a.is_match(&change.path)) {
                continue;
            }
            // Contents matter only for the manifests with test parts; decoding every changed
            // file for nothing showed in the corpus bench.
            let sectioned = has_test_sections(&change.path);
            let before = change
                .before
                .as_deref()
                .filter(|_| sectioned)
                .map(lossless_str);
            let after = change
                .after
                .as_deref()
                .filter(|_| sectioned)
                .map(lossless_str);
            let Some(what) = harness_change(
                &change.path,
                before.as_deref(),
                after.as_deref(),
                &policy.commands,
            ) else {
                continue;
            };
            issues.push(
                Issue::new(
                    self.id(),
                    format!(
                        "{} is part of the test harness ({what}); a change there can make failing \
                         tests pass without a fix, so efix refuses it: fix the code instead, or, \
                         if the fix truly needs this file, the user can allow it with \
                         `paths.allow-harness` in .efix.yml",
                        change.path
                    ),
                )
                .at_path(change.path.clone()),
            );
        }
        issues
    }
}

/// Added production lines that detect or patch the test run.
pub(crate) struct TestDetection;

impl PostApplyCheck for TestDetection {
    fn id(&self) -> &'static str {
        "check.test-detection"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        _policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        for change in changes {
            if !is_read(&change.path) {
                continue;
            }
            let Some(after) = change.after.as_deref().map(lossless_str) else {
                continue;
            };
            let before = change.before.as_deref().map(lossless_str);
            for found in test_detections(&change.path, before.as_deref(), &after) {
                issues.push(
                    Issue::new(
                        found.family.rule(),
                        format!(
                            "{}:{} {}; {}",
                            change.path,
                            found.line,
                            found.what,
                            found.family.advice()
                        ),
                    )
                    .at_path(change.path.clone())
                    .at_line(found.line),
                );
            }
        }
        issues
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: path.into(),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    fn rules(
        check: &dyn PostApplyCheck,
        changes: &[FileChange],
        policy: &PatchPolicy,
    ) -> Vec<(String, String)> {
        check
            .check(changes, &[], policy)
            .into_iter()
            .map(|i| (i.rule, i.path.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn harness_changes_are_refused_unless_allowed_by_glob() {
        let changes = [
            change(
                "tests/conftest.py",
                Some("import pytest\n"),
                Some("import pytest\nX = 1\n"),
            ),
            change(
                "Makefile",
                Some("test:\n\tpytest\n"),
                Some("test:\n\tpytest -k ok\n"),
            ),
            change("src/app.py", Some("x = 1\n"), Some("x = 2\n")),
        ];
        let default = PatchPolicy {
            commands: vec!["make test".into()],
            ..PatchPolicy::default()
        };
        let allowed = PatchPolicy {
            allow_harness: vec!["**/conftest.py".into()],
            ..default.clone()
        };
        let no_make = PatchPolicy::default();
        assert_eq!(
            (
                rules(&TestHarness, &changes, &default),
                rules(&TestHarness, &changes, &allowed),
                rules(&TestHarness, &changes, &no_make),
            ),
            (
                vec![
                    ("check.test-harness".into(), "tests/conftest.py".into()),
                    ("check.test-harness".into(), "Makefile".into())
                ],
                vec![("check.test-harness".into(), "Makefile".into())],
                vec![("check.test-harness".into(), "tests/conftest.py".into())],
            )
        );
    }

    #[test]
    fn test_detection_names_the_file_and_line() {
        let before = "def f():\n    return 1\n";
        let after = "import os\n\n\ndef f():\n    if os.environ.get('PYTEST_CURRENT_TEST'):\n        return 2\n    return 1\n";
        let issues = TestDetection.check(
            &[change("pkg/f.py", Some(before), Some(after))],
            &[],
            &PatchPolicy::default(),
        );
        let got: Vec<(String, Option<u64>, String)> = issues
            .into_iter()
            .map(|i| (i.rule, i.line, i.message))
            .collect();
        assert_eq!(
            got,
            vec![(
                "check.test-detection".into(),
                Some(5),
                "pkg/f.py:5 reads `PYTEST_CURRENT_TEST`, which is set only while pytest runs; \
                 production code must behave the same under test, so fix the code for every \
                 caller instead"
                    .into()
            )]
        );
    }
}
