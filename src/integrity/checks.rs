//! The integrity checks the patch engine runs after applying a change, as plug-ins:
//! `check.test-harness` (a change to a file that decides how tests run), the static families
//! (production code that detects or patches the test run) and `check.special-case`. The patch
//! engine runs them so that `efix patch` refuses what `efix run` refuses; what each one looks
//! for lives beside this file (`harness`, `test_detection`, `special_case`).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::integrity::harness::{harness_change, has_test_sections};
use crate::integrity::test_detection::{is_read, test_detections};
use crate::patch::{FileChange, PatchPolicy, PostApplyCheck, lossless_str};
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

/// The messages of issue 18's rules, as the engine reads them: one change per family and per
/// discovery rule, through the whole patch engine.
#[cfg(test)]
mod messages {
    use std::collections::BTreeMap;

    use crate::integrity::special_case::expectations;
    use crate::patch::{MemoryFiles, PatchPolicy, evaluate};

    #[test]
    fn every_new_rule_says_what_it_saw_and_what_to_do() {
        let files: BTreeMap<String, Vec<u8>> = [
            ("url.py", "def normalize(url):\n    return url\n"),
            ("lib/a.js", "function f(x) {\n  return x;\n}\n"),
            ("src/lib.rs", "pub struct A;\n"),
            (
                "package.json",
                "{\"main\": \"lib/a.js\", \"jest\": {\"setupFiles\": [\"./test/setup.js\"]}}\n",
            ),
            ("test/setup.js", "module.exports = {};\n"),
        ]
        .iter()
        .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
        .collect();
        let source = MemoryFiles(files);
        let policy = PatchPolicy {
            expectations: expectations(
                "tests/test_url.py::test_scheme",
                "    assert normalize(\"//example.com\") == \"https://example.com\"\n",
            ),
            max_files: 20,
            ..PatchPolicy::default()
        };
        let answer = serde_json::json!({"edits": [
            {"path": "url.py", "old_text": "    return url\n", "new_text": "    if url == \"//example.com\":\n        return \"https://example.com\"\n    frame = sys._getframe(1)\n    if os.environ.get(\"CI\"): os._exit(0)\n    src = open(os.path.join(os.path.dirname(__file__), \"tests\", \"test_url.py\")).read()\n    print(\"PASSED tests/test_url.py::test_scheme\")\n    return url\n"},
            {"path": "lib/a.js", "old_text": "  return x;\n", "new_text": "  Object.assign(require('assert'), { equal() {} });\n  return { asymmetricMatch: () => true };\n"},
            {"path": "src/lib.rs", "old_text": "pub struct A;\n", "new_text": "pub struct A;\nimpl PartialEq for A {\n    fn eq(&self, _: &A) -> bool {\n        true\n    }\n}\n"},
            {"path": "json.py", "old_text": "", "new_text": "loads = None\n"},
            {"path": "lib/a.mjs", "old_text": "", "new_text": "export default 1;\n"},
            {"path": "lib/a.ts", "old_text": "", "new_text": "export default 2;\n"},
            {"path": "test/setup.js", "old_text": "module.exports = {};\n", "new_text": "module.exports = { x: 1 };\n"},
            {"path": "tests/__init__.py", "old_text": "", "new_text": "\n"},
        ]});
        let report =
            evaluate(&source, &answer.to_string(), &policy).unwrap_or_else(|e| panic!("{e}"));
        let text: Vec<String> = report
            .issues
            .iter()
            .map(|i| format!("{}: {}", i.rule, i.message))
            .collect();
        insta::assert_snapshot!(text.join("\n\n"));
    }
}
