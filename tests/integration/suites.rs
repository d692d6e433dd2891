//! The proof covers the repository's own tests by default: with no suite configured, the
//! whole suite of the reproduction's runner runs before and after the fix, so a fix that breaks
//! a test in another file is refused; when that suite is over the budget, the proof narrows
//! and the PR says so.

use serde_json::json;

use crate::ecosystems::run;
use crate::harness::{Repo, stable};

const WORDS_PY: &str = "def _words(text):\n    return text.split(\" \")\n\n\ndef word_count(text):\n    return len(_words(text))\n\n\ndef first_word(text):\n    return _words(text)[0]\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
const TEST_FIRST_PY: &str = "from words import first_word\n\n\ndef test_first_word_keeps_its_case():\n    assert first_word(\"Hello world\") == \"Hello\"\n";

fn python_repo(extra: &[(&str, &str)]) -> Repo {
    let mut files = vec![
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("tests/test_first.py", TEST_FIRST_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ];
    files.extend_from_slice(extra);
    Repo::with_files(&files)
}

const REGRESSION_TEST: &str = "--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_tabs_and_newlines():\n+    assert word_count(\"a\\tb\\nc \") == 3\n";

fn python_fix(body: &str) -> String {
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def _words(text):\n-    return text.split(\" \")\n+    {body}\n{REGRESSION_TEST}"
    )
}

#[test]
fn python_fix_that_breaks_a_test_in_another_file_is_refused_without_a_configured_suite() {
    let repo = python_repo(&[]);
    let before = repo.fingerprint();
    // Fixes the failing test and adds a proven regression test, but lowercases every word,
    // which breaks `tests/test_first.py`: only the whole suite sees it.
    let fix = python_fix("return text.lower().split()");
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        &fix,
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["request"]["derived-suite"], "pytest");
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["tests/test_first.py::test_first_word_keeps_its_case"])
    );
    let rules: Vec<&str> = round["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["prove.derived-suite"]);
}

#[test]
fn python_real_fix_passes_the_whole_suite() {
    let repo = python_repo(&[]);
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        &python_fix("return text.split()"),
    );
    run.expect_code(0);
    let checks: Vec<(&str, bool)> = evidence["rounds"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["passed"].as_bool().unwrap()))
        .collect();
    assert!(
        checks.contains(&("prove.derived-suite", true)),
        "{checks:?}"
    );
    assert_eq!(
        evidence["reproduction"]["suite-choice"]["chosen"],
        json!("pytest")
    );
}

#[test]
fn a_whole_suite_over_the_budget_narrows_the_proof_and_the_pr_says_so() {
    // A budget no real run fits in: the whole suite's baseline is stopped and the proof falls
    // back to the reproduction's file.
    let repo = python_repo(&[(".efix.yml", "version: 1\ntest:\n  suite-budget-ms: 1\n")]);
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        &python_fix("return text.split()"),
    );
    run.expect_code(0);
    let choice = &evidence["reproduction"]["suite-choice"];
    assert_eq!(choice["chosen"], "pytest tests/test_words.py");
    assert_eq!(choice["budget-ms"], 1);
    let verdicts: Vec<(&str, &str)> = choice["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["command"].as_str().unwrap(),
                a["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts[0], ("pytest", "over-budget"));
    // The test directory gets what is left of the time the wider forms share: none, or
    // less than it needs.
    assert_eq!(verdicts[1].0, "pytest tests/");
    assert!(
        ["over-budget", "not-run"].contains(&verdicts[1].1),
        "{verdicts:?}"
    );
    assert_eq!(verdicts[2], ("pytest tests/test_words.py", "established"));
    let suites: Vec<&str> = evidence["reproduction"]["suite-baselines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| {
            evidence["commands"][id.as_u64().unwrap() as usize]["command"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(suites, ["pytest tests/test_words.py"]);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let title = std::fs::read_to_string(artifacts.join("pr-title.txt")).unwrap();
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    // The scope paragraph names the suite used; the attempts' details depend on timing.
    let scope: String = body
        .lines()
        .filter(|line| line.starts_with("**The proof covers"))
        .collect();
    insta::assert_snapshot!(
        "narrowed_suite_title_and_scope",
        stable(&format!("{title}\n{scope}"), &[&repo.root])
    );
}

const TEXT_JS: &str = "function normalize(text) {\n  return text.toLowerCase();\n}\n\nfunction slugify(text) {\n  return normalize(text).replace(' ', '-');\n}\n\nfunction initials(text) {\n  return normalize(text).split(' ').map((w) => w[0]).join('');\n}\n\nmodule.exports = { slugify, initials };\n";
const SLUG_TEST_JS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { slugify } = require('../src/text.js');\n\ntest('lowercases', () => {\n  assert.strictEqual(slugify('Hello'), 'hello');\n});\n\ntest('replaces every space', () => {\n  assert.strictEqual(slugify('a b c'), 'a-b-c');\n});\n";
const INITIALS_TEST_JS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { initials } = require('../src/text.js');\n\ntest('takes the first letter of each word', () => {\n  assert.strictEqual(initials('ada b lovelace'), 'abl');\n});\n";

#[test]
fn node_test_fix_that_breaks_another_file_is_refused_with_a_name_pattern_reproduction() {
    let repo = Repo::with_files(&[
        ("src/text.js", TEXT_JS),
        ("test/slug.test.js", SLUG_TEST_JS),
        ("test/initials.test.js", INITIALS_TEST_JS),
    ]);
    let before = repo.fingerprint();
    // Makes slugify replace every space by changing the shared helper, which breaks
    // `initials` in another test file.
    let fix = "--- a/src/text.js\n+++ b/src/text.js\n@@ -1,3 +1,3 @@\n function normalize(text) {\n-  return text.toLowerCase();\n+  return text.toLowerCase().replace(/ /g, '-');\n }\n--- a/test/slug.test.js\n+++ b/test/slug.test.js\n@@ -10,2 +10,6 @@\n   assert.strictEqual(slugify('a b c'), 'a-b-c');\n });\n+\n+test('replaces spaces after the first word', () => {\n+  assert.strictEqual(slugify('x y z w'), 'x-y-z-w');\n+});\n";
    let (run, evidence) = run(
        &repo,
        "node --test --test-name-pattern=space test/slug.test.js",
        fix,
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["request"]["derived-suite"], "node --test");
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["takes the first letter of each word"])
    );
}

const UNITTEST_WORDS: &str = "import unittest\n\nfrom words import word_count\n\n\nclass WordsTest(unittest.TestCase):\n    def test_single_spaces(self):\n        self.assertEqual(word_count(\"a b c\"), 3)\n\n    def test_repeated_spaces(self):\n        self.assertEqual(word_count(\"a  b\"), 2)\n\n    @unittest.skip(\"slow\")\n    def test_huge_text(self):\n        self.assertEqual(word_count(\"a \" * 10**7), 10**7)\n";
const UNITTEST_FIRST: &str = "import unittest\n\nfrom words import first_word\n\n\nclass FirstTest(unittest.TestCase):\n    def test_first_word_keeps_its_case(self):\n        self.assertEqual(first_word(\"Hello world\"), \"Hello\")\n";

fn unittest_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("words.py", WORDS_PY),
        ("tests/__init__.py", ""),
        ("tests/test_words.py", UNITTEST_WORDS),
        ("tests/test_first.py", UNITTEST_FIRST),
    ])
}

fn source_fix(body: &str) -> String {
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def _words(text):\n-    return text.split(\" \")\n+    {body}\n"
    )
}

#[test]
fn unittest_real_fix_is_proven_by_the_reproductions_own_test_through_a_clean_run() {
    // unittest without -v names only failures, and the suite has a skipped test: the
    // reproduction's failing test passes by the clean-run rule.
    let repo = unittest_repo();
    let (run, evidence) = run(
        &repo,
        "python3 -m unittest tests.test_words.WordsTest.test_repeated_spaces",
        &source_fix("return text.split()"),
    );
    run.expect_code(0);
    assert_eq!(evidence["request"]["derived-suite"], "python3 -m unittest");
    assert_eq!(evidence["rounds"][0]["prevent"]["guard"], "reproduction");
    assert_eq!(
        evidence["reproduction"]["failing-tests"],
        json!(["tests.test_words.WordsTest.test_repeated_spaces"])
    );
}

#[test]
fn unittest_fix_that_breaks_another_module_is_refused() {
    let repo = unittest_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        "python3 -m unittest tests.test_words.WordsTest.test_repeated_spaces",
        &source_fix("return text.lower().split()"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["tests.test_first.FirstTest.test_first_word_keeps_its_case"])
    );
}

/// A reproduction test that takes three seconds (well above the start-up noise of a loaded
/// machine, which the rate is measured against), and a benchmark directory of 300 quick tests
/// the whole suite collects too.
fn slow_python_repo(budget_ms: u64) -> Repo {
    let slow_test = "import time\n\nfrom words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    time.sleep(3)\n    assert word_count(\"a  b\") == 2\n";
    let config = format!("version: 1\ntest:\n  suite-budget-ms: {budget_ms}\n");
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", slow_test),
        (
            "bench/test_many.py",
            "import pytest\n\n\n@pytest.mark.parametrize(\"n\", range(300))\ndef test_many(n):\n    assert n >= 0\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        (".efix.yml", &config),
    ])
}

#[test]
fn a_whole_suite_estimated_over_the_budget_is_never_run_and_the_pr_gives_its_estimate() {
    // 302 tests at the reproduction's three seconds a test: minutes, against a 30 s budget. The
    // test directory (two tests) is estimated within it and runs.
    let repo = slow_python_repo(30_000);
    let (run, evidence) = run(
        &repo,
        "pytest tests/test_words.py::test_repeated_spaces",
        &source_fix("return text.split()"),
    );
    run.expect_code(0);
    let choice = &evidence["reproduction"]["suite-choice"];
    assert_eq!(choice["chosen"], "pytest tests/");
    let whole = &choice["attempts"][0];
    assert_eq!(whole["command"], "pytest");
    assert_eq!(whole["verdict"], "estimated-over-budget");
    assert_eq!(whole["baseline"], json!(null));
    assert_eq!(whole["estimate"]["count"], 302);
    assert_eq!(whole["estimate"]["unit"], "tests");
    let listing = whole["estimate"]["listing"].as_u64().unwrap() as usize;
    assert_eq!(
        evidence["commands"][listing]["command"],
        "pytest --collect-only -q"
    );
    assert_eq!(evidence["commands"][listing]["purpose"], "suite-listing");
    // The whole suite never ran: no command but its listing names it.
    let ran_whole = evidence["commands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["command"] == "pytest");
    assert!(!ran_whole);
    let root = &choice["attempts"][1];
    assert_eq!(root["verdict"], "established");
    assert_eq!(root["estimate"]["count"], 2);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    let scope: Vec<&str> = body
        .lines()
        .skip_while(|line| !line.starts_with("**The proof covers"))
        .take_while(|line| !line.is_empty())
        .collect();
    insta::assert_snapshot!(
        "estimated_suite_scope",
        stable(&scope.join("\n"), &[&repo.root])
    );
}

/// A unittest project whose reproduction test takes three seconds, and a benchmark package of
/// 300 quick tests that only the whole suite discovers. unittest cannot list its tests: they
/// are counted statically.
fn slow_unittest_repo(budget_ms: u64) -> Repo {
    let slow = "import time\nimport unittest\n\nfrom words import word_count\n\n\nclass WordsTest(unittest.TestCase):\n    def test_single_spaces(self):\n        self.assertEqual(word_count(\"a b c\"), 3)\n\n    def test_repeated_spaces(self):\n        time.sleep(3)\n        self.assertEqual(word_count(\"a  b\"), 2)\n";
    let many: String =
        std::iter::once("import unittest\n\n\nclass ManyTest(unittest.TestCase):\n".to_owned())
            .chain((0..300).map(|n| format!("    def test_{n}(self):\n        pass\n\n")))
            .collect();
    let config = format!("version: 1\ntest:\n  suite-budget-ms: {budget_ms}\n");
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("words.py", WORDS_PY),
        ("tests/__init__.py", ""),
        ("tests/test_words.py", slow),
        ("bench/__init__.py", ""),
        ("bench/test_many.py", &many),
        (".efix.yml", &config),
    ])
}

#[test]
fn a_unittest_whole_suite_counted_statically_over_the_budget_is_never_run() {
    // 302 tests counted in the source at the three seconds a test unittest reported for the
    // reproduction: minutes, against a 30 s budget. The test directory (two tests) fits.
    let repo = slow_unittest_repo(30_000);
    let (run, evidence) = run(
        &repo,
        "python3 -m unittest tests.test_words.WordsTest.test_repeated_spaces",
        &source_fix("return text.split()"),
    );
    run.expect_code(0);
    let choice = &evidence["reproduction"]["suite-choice"];
    assert_eq!(
        choice["chosen"],
        "python3 -m unittest discover -s tests -t ."
    );
    let whole = &choice["attempts"][0];
    assert_eq!(whole["command"], "python3 -m unittest");
    assert_eq!(whole["verdict"], "estimated-over-budget");
    assert_eq!(whole["baseline"], json!(null));
    let estimate = &whole["estimate"];
    assert_eq!(estimate["source"], "counted-statically");
    assert_eq!(estimate["rate"], "reported");
    assert_eq!(estimate["listing"], json!(null));
    assert_eq!(
        (&estimate["count"], &estimate["files"]),
        (&json!(302), &json!(2))
    );
    // Nothing ran the whole suite, not even a listing.
    let commands: Vec<&str> = evidence["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert!(!commands.contains(&"python3 -m unittest"), "{commands:?}");
    let root = &choice["attempts"][1];
    assert_eq!(root["verdict"], "established");
    assert_eq!(root["estimate"]["count"], 2);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    let scope: Vec<&str> = body
        .lines()
        .skip_while(|line| !line.starts_with("**The proof covers"))
        .take_while(|line| !line.is_empty())
        .collect();
    insta::assert_snapshot!(
        "estimated_suite_scope_counted_statically",
        stable(&scope.join("\n"), &[&repo.root])
    );
}
