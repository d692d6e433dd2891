//! The related form: when the whole suite is dropped before the fix and the proof runs a
//! narrower form, the tests outside it whose imports reach the changed files still run before
//! and after the change, so a change that breaks one of them is refused
//! (`prove.related-suite`), and the PR says which tests ran and the file each reaches.

use serde_json::{Value, json};

use crate::ecosystems::run;
use crate::harness::{Efix, Repo, npm_tools, stable};

const WORDS_PY: &str = "def _words(text):\n    return text.split(\" \")\n\n\ndef word_count(text):\n    return len(_words(text))\n\n\ndef first_word(text):\n    return _words(text)[0]\n";
/// The reproduction's test takes three seconds, so the whole suite's estimate (its 300 quick
/// benchmark tests at that rate) is over the budget and it is never run.
const SLOW_TEST_WORDS_PY: &str = "import time\n\nfrom words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    time.sleep(3)\n    assert word_count(\"a  b\") == 2\n";
/// A module outside the tests that uses the changed one.
const GREETING_PY: &str =
    "from words import first_word\n\n\ndef initial(text):\n    return first_word(text)[0]\n";
/// A test outside the test directory the proof runs, reaching `words.py` through `greeting`.
const OTHER_TEST_PY: &str = "from greeting.first import initial\n\n\ndef test_initial_keeps_its_case():\n    assert initial(\"Hello world\") == \"H\"\n";

fn python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("greeting/__init__.py", ""),
        ("greeting/first.py", GREETING_PY),
        ("tests/test_words.py", SLOW_TEST_WORDS_PY),
        ("other/test_greeting.py", OTHER_TEST_PY),
        (
            "bench/test_many.py",
            "import pytest\n\n\n@pytest.mark.parametrize(\"n\", range(300))\ndef test_many(n):\n    assert n >= 0\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        (".efix.yml", "version: 1\ntest:\n  suite-budget-ms: 30000\n"),
    ])
}

const PYTEST_REPRO: &str = "pytest tests/test_words.py::test_repeated_spaces";

fn words_fix(body: &str) -> String {
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def _words(text):\n-    return text.split(\" \")\n+    {body}\n"
    )
}

fn issue_rules(evidence: &Value) -> Vec<String> {
    evidence["rounds"][0]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["rule"].as_str().unwrap().to_owned())
        .collect()
}

/// The PR body's paragraphs about what the proof covers: the narrowed suite and the related
/// tests.
fn scope_paragraphs(repo: &Repo) -> String {
    let body =
        std::fs::read_to_string(repo.root.parent().unwrap().join("artifacts/pr-body.md")).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in body.lines() {
        if line.starts_with("**The proof covers") || line.starts_with("**Tests related") {
            inside = true;
        }
        if inside && line.starts_with("###") {
            break;
        }
        if inside {
            out.push(line);
        }
    }
    stable(out.join("\n").trim_end(), &[&repo.root])
}

#[test]
fn pytest_a_change_breaking_a_test_outside_the_test_root_is_refused_by_the_related_form() {
    let repo = python_repo();
    let before = repo.fingerprint();
    // Fixes the reproduction, but lowercases every word: `other/test_greeting.py` fails, and
    // the proof's suite (`pytest tests/`) does not hold it.
    let (run, evidence) = run(
        &repo,
        PYTEST_REPRO,
        &words_fix("return text.lower().split()"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(
        evidence["reproduction"]["suite-choice"]["chosen"],
        "pytest tests/"
    );
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    let related = &round["related"];
    assert_eq!(related["command"], "pytest -rA other/test_greeting.py");
    assert_eq!(related["changed"], json!(["words.py"]));
    assert_eq!(
        related["selected"],
        json!([{
            "test": "other/test_greeting.py",
            "reaches": "words.py",
            "chain": ["other/test_greeting.py", "greeting/first.py", "words.py"],
        }])
    );
    assert_eq!(related["verdict"], "established");
    let baseline = related["baseline"].as_u64().unwrap() as usize;
    assert_eq!(
        evidence["commands"][baseline]["purpose"],
        "related-baseline"
    );
    let fixed = related["fixed"].as_u64().unwrap() as usize;
    assert_eq!(evidence["commands"][fixed]["purpose"], "related-fixed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["other/test_greeting.py::test_initial_keeps_its_case"])
    );
    assert_eq!(issue_rules(&evidence), ["prove.related-suite"]);
}

#[test]
fn pytest_the_honest_fix_is_proven_with_the_related_tests_named_in_the_pr() {
    let repo = python_repo();
    let (run, evidence) = run(&repo, PYTEST_REPRO, &words_fix("return text.split()"));
    run.expect_code(0);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proven");
    let checks: Vec<(&str, bool)> = round["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["passed"].as_bool().unwrap()))
        .collect();
    assert!(
        checks.contains(&("prove.related-suite", true)),
        "{checks:?}"
    );
    // The benchmark directory does not import the change: it is not selected.
    assert_eq!(round["related"]["selected"].as_array().unwrap().len(), 1);
    insta::assert_snapshot!("pytest_related_scope", scope_paragraphs(&repo));
    // `efix verify` reruns the related runs in their states: base (the change has no test
    // side) and base + patch.
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let verify = Efix::new()
        .with_pytest()
        .args(["verify"])
        .args([&artifacts])
        .run()
        .expect_code(0);
    let json = verify.json();
    let related: Vec<(&str, bool)> = json["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["command"] == "pytest -rA other/test_greeting.py")
        .map(|c| (c["state"].as_str().unwrap(), c["holds"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        related,
        [("base + test changes", true), ("base + patch", true)]
    );
}

const JEST: &str = "jest@29.7.0";
const SLUG_JS: &str = "function slugify(text) {\n  return text.toLowerCase().replace(' ', '-');\n}\n\nmodule.exports = { slugify };\n";
const SLUG_TEST_JS: &str = "const { slugify } = require('../src/slug');\n\ntest('lowercases', () => {\n  expect(slugify('Hello')).toBe('hello');\n});\n\ntest('replaces every space', () => {\n  expect(slugify('a b c')).toBe('a-b-c');\n});\n";
/// A test that reads `process.argv` and aborts on an option it does not know: the whole suite
/// run with the reproduction's `--coverage=false` stops early and is dropped.
const CLI_TEST_JS: &str = "const known = ['--verbose'];\nconst unknown = process.argv.slice(2).filter((a) => a.startsWith('--') && !known.includes(a));\nif (unknown.length > 0) {\n  console.error(`unknown option: ${unknown.join(' ')}`);\n  process.exit(1);\n}\n\ntest('parses no options', () => {\n  expect(unknown).toEqual([]);\n});\n";
/// A module re-exporting the changed one through its index, and a test of it outside `tests/`.
const LIB_INDEX_JS: &str = "const { slugify } = require('../src/slug');\n\nfunction title(text) {\n  return slugify(text).split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');\n}\n\nmodule.exports = { slugify, title };\n";
const LIB_TEST_JS: &str = "const { title } = require('..');\n\ntest('titles keep every word', () => {\n  expect(title('Hello World')).toBe('Hello World');\n});\n";
const JEST_PACKAGE: &str = "{\n  \"name\": \"slug\",\n  \"private\": true,\n  \"main\": \"lib/index.js\",\n  \"scripts\": {\"test\": \"jest\"},\n  \"jest\": {\"maxWorkers\": 1}\n}\n";

fn jest_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules\n"),
        ("package.json", JEST_PACKAGE),
        ("src/slug.js", SLUG_JS),
        ("lib/index.js", LIB_INDEX_JS),
        ("lib/__tests__/title.test.js", LIB_TEST_JS),
        ("tests/slug.test.js", SLUG_TEST_JS),
        ("tests/cli.test.js", CLI_TEST_JS),
    ]);
    std::os::unix::fs::symlink(
        npm_tools(JEST).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

const JEST_REPRO: &str = "npx jest --coverage=false tests/slug.test.js";

fn slug_fix(body: &str) -> String {
    format!(
        "--- a/src/slug.js\n+++ b/src/slug.js\n@@ -1,3 +1,3 @@\n function slugify(text) {{\n-  return text.toLowerCase().replace(' ', '-');\n+  {body}\n }}\n--- a/tests/slug.test.js\n+++ b/tests/slug.test.js\n@@ -8,2 +8,6 @@\n   expect(slugify('a b c')).toBe('a-b-c');\n }});\n+\n+test('replaces spaces after the first word', () => {{\n+  expect(slugify('x y z w')).toBe('x-y-z-w');\n+}});\n"
    )
}

#[test]
fn jest_a_change_breaking_a_test_outside_the_test_root_is_refused_by_the_related_form() {
    let repo = jest_repo();
    let before = repo.fingerprint();
    // Every space becomes a dash, but slugs are cut at eight characters: the reproduction's
    // tests pass, `lib/__tests__/title.test.js` (reaching `src/slug.js` through
    // `lib/index.js`) fails.
    let (run, evidence) = run(
        &repo,
        JEST_REPRO,
        &slug_fix("return text.toLowerCase().replace(/ /g, '-').slice(0, 8);"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(
        evidence["reproduction"]["suite-choice"]["chosen"],
        "npx jest tests/"
    );
    let round = &evidence["rounds"][0];
    let related = &round["related"];
    assert_eq!(
        related["command"],
        "npx jest lib/__tests__/title.test.js --verbose"
    );
    assert_eq!(
        related["selected"][0]["chain"],
        json!(["lib/__tests__/title.test.js", "lib/index.js", "src/slug.js"])
    );
    assert_eq!(issue_rules(&evidence), ["prove.related-suite"]);
}

#[test]
fn jest_the_honest_fix_is_proven_with_the_related_tests_named_in_the_pr() {
    let repo = jest_repo();
    let (run, evidence) = run(
        &repo,
        JEST_REPRO,
        &slug_fix("return text.toLowerCase().replace(/ /g, '-');"),
    );
    run.expect_code(0);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proven");
    assert_eq!(round["related"]["verdict"], "established");
    insta::assert_snapshot!("jest_related_scope", scope_paragraphs(&repo));
}

#[test]
fn pytest_candidates_each_get_their_own_related_form() {
    // Two candidates side by side in scratch copies: the one that breaks the test outside the
    // test root is refused by its own related form, the honest one wins and is proven again in
    // the working tree with its own.
    let repo = python_repo();
    let before = repo.fingerprint();
    let answer = |diff: String| json!({"output": diff, "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x"});
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": []},
        "fix": [
            answer(words_fix("return text.lower().split()")),
            answer(words_fix("return text.split()")),
        ],
    });
    let (_guard, path) = crate::harness::replay_file(&replay.to_string());
    let run = Efix::replay_run(&repo, PYTEST_REPRO, &path)
        .with_pytest()
        .args(["--candidates", "2", "--max-rounds", "1", "--dry-run"])
        .run();
    run.expect_code(0);
    assert_eq!(repo.fingerprint(), before);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    let round = &evidence["rounds"][0];
    let candidates = round["candidates"].as_array().unwrap();
    let refused = &candidates[0]["round"];
    let rules: Vec<&str> = refused["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["prove.related-suite"], "{refused:#}");
    assert_eq!(candidates[1]["verdict"], "won");
    assert_eq!(candidates[1]["round"]["related"]["verdict"], "established");
    assert_eq!(round["verdict"], "proven");
    assert_eq!(
        round["related"]["selected"][0]["test"],
        "other/test_greeting.py"
    );
}
