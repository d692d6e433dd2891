//! `efix run` on Python (pytest) and JavaScript (node:test) projects with real bugs: the
//! real fix is proven through the runner's per-test output; a fix that only skips the test is
//! not.

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, replay_file};

pub fn run(repo: &Repo, repro: &str, fix: &str) -> (crate::harness::Run, Value) {
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": []},
        "fix": [{"output": fix, "root_cause": "r", "fix_summary": "f"}],
    });
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let mut efix = Efix::replay_run(repo, repro, &path).args(["--max-rounds", "1"]);
    if repro.starts_with("pytest") {
        efix = efix.with_pytest();
    }
    let run = efix.run();
    let evidence =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    (run, evidence)
}

const WORDS_PY: &str = "def word_count(text):\n    \"\"\"Number of whitespace-separated words in text.\"\"\"\n    return len([w for w in text.split(\" \")])\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";

fn python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

const PY_FIX: &str = "--- a/words.py\n+++ b/words.py\n@@ -1,3 +1,3 @@\n def word_count(text):\n     \"\"\"Number of whitespace-separated words in text.\"\"\"\n-    return len([w for w in text.split(\" \")])\n+    return len(text.split())\n--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_tabs_and_newlines():\n+    assert word_count(\"a\\tb\\nc \") == 3\n";

#[test]
fn python_real_fix_is_proven_by_the_new_pytest_test() {
    let repo = python_repo();
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        PY_FIX,
    );
    run.expect_code(0);
    let prevent = &evidence["rounds"][0]["prevent"];
    assert_eq!(prevent["guard"], "changed-tests");
    assert_eq!(
        prevent["failed-without-fix"],
        json!(["test_tabs_and_newlines"])
    );
    assert_eq!(evidence["request"]["derived-suite"], "pytest");
    assert_eq!(
        evidence["request"]["suite-forms"],
        json!([
            {"kind": "whole-suite", "command": "pytest"},
            {"kind": "test-root", "command": "pytest tests/"},
            {"kind": "reproduction-files", "command": "pytest tests/test_words.py"},
        ])
    );
}

#[test]
fn python_fix_that_skips_the_failing_test_exits_1_and_restores_the_tree() {
    let repo = python_repo();
    let before = repo.fingerprint();
    let skip = "--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -7,2 +7,4 @@\n \n+import pytest\n+@pytest.mark.skip(reason=\"flaky\")\n def test_repeated_spaces():\n";
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        skip,
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["rounds"][0]["verdict"], "rejected");
}

const SLUG_JS: &str = "function slugify(text) {\n  return text.toLowerCase().replace(' ', '-');\n}\n\nmodule.exports = { slugify };\n";
const SLUG_TEST_JS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { slugify } = require('../src/slug.js');\n\ntest('lowercases', () => {\n  assert.strictEqual(slugify('Hello'), 'hello');\n});\n\ntest('replaces every space', () => {\n  assert.strictEqual(slugify('a b c'), 'a-b-c');\n});\n";

const JS_FIX: &str = "--- a/src/slug.js\n+++ b/src/slug.js\n@@ -1,3 +1,3 @@\n function slugify(text) {\n-  return text.toLowerCase().replace(' ', '-');\n+  return text.toLowerCase().replace(/ /g, '-');\n }\n--- a/test/slug.test.js\n+++ b/test/slug.test.js\n@@ -10,2 +10,6 @@\n   assert.strictEqual(slugify('a b c'), 'a-b-c');\n });\n+\n+test('replaces spaces after the first word', () => {\n+  assert.strictEqual(slugify('x y z w'), 'x-y-z-w');\n+});\n";

#[test]
fn javascript_real_fix_is_proven_by_the_new_node_test() {
    let repo = Repo::with_files(&[
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_TEST_JS),
    ]);
    let (run, evidence) = run(&repo, "node --test test/slug.test.js", JS_FIX);
    run.expect_code(0);
    let prevent = &evidence["rounds"][0]["prevent"];
    assert_eq!(prevent["guard"], "changed-tests");
    assert_eq!(
        prevent["failed-without-fix"],
        json!(["replaces spaces after the first word"])
    );
}

#[test]
fn javascript_wrong_fix_exits_1() {
    let repo = Repo::with_files(&[
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_TEST_JS),
    ]);
    let before = repo.fingerprint();
    let wrong = "--- a/src/slug.js\n+++ b/src/slug.js\n@@ -1,3 +1,3 @@\n function slugify(text) {\n-  return text.toLowerCase().replace(' ', '-');\n+  return text.toLowerCase().trim().replace(' ', '-');\n }\n";
    let (run, evidence) = run(&repo, "node --test test/slug.test.js", wrong);
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["rounds"][0]["verdict"], "proof-failed");
}

#[test]
fn tokens_in_failure_output_never_reach_the_artifacts() {
    // The failing test prints something shaped like a GitHub token and the value of a
    // configured secret; neither may appear in any artifact.
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let secret = "hunter2-correct-horse-battery";
    let test = format!(
        "from words import word_count\n\n\ndef test_repeated_spaces():\n    print('{token}')\n    print('{secret}')\n    assert word_count(\"a  b\") == 2\n"
    );
    let repo = Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (
            ".efix.yml",
            "version: 1\nsecurity:\n  redact: [DEPLOY_PASSWORD]\n",
        ),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", &test),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ]);
    let replay =
        json!({"version": 1, "plan": {"hypothesis": "h"}, "fix": [{"output": "NO_CHANGE"}]});
    let (_guard, path) = replay_file(&replay.to_string());
    Efix::replay_run(&repo, "pytest tests/test_words.py -rA", &path)
        .with_pytest()
        .env("DEPLOY_PASSWORD", secret)
        .run()
        .expect_code(1);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let mut seen_redaction = false;
    for entry in std::fs::read_dir(&artifacts).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(token), "{} holds the token", path.display());
        assert!(
            !text.contains(secret),
            "{} holds the secret",
            path.display()
        );
        seen_redaction |= text.contains("[REDACTED:github-token]");
    }
    assert!(
        seen_redaction,
        "the output was recorded with the token redacted"
    );
}
