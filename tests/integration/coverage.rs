//! The proof covers what the PR says it covers: a derived suite counts only when its run
//! before the fix is a baseline, its forms are tried widest first with every attempt recorded,
//! a runner efix does not know gets its selector widened, a proof that no wider suite took part
//! in is `fixed-reproduction-only`, and terse output is confirmed by a per-test rerun.

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, npm_tools, replay_file, stable};

/// `efix run --dry-run` with one replayed fix: a proven fix is not left applied either, so
/// every run must leave the tree byte-identical.
fn run(repo: &Repo, repro: &str, fix: &str) -> (crate::harness::Run, Value) {
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": []},
        "fix": [{"output": fix, "root_cause": "r", "fix_summary": "f"}],
    });
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let mut efix = Efix::replay_run(repo, repro, &path).args(["--max-rounds", "1", "--dry-run"]);
    if repro.starts_with("pytest") {
        efix = efix.with_pytest();
    }
    let run = efix.run();
    let evidence =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    (run, evidence)
}

/// `(kind, command, verdict)` of every suite attempt.
fn attempts(evidence: &Value) -> Vec<(String, String, String)> {
    evidence["reproduction"]["suite-choice"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["kind"].as_str().unwrap().to_owned(),
                a["command"].as_str().unwrap().to_owned(),
                a["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn attempt(kind: &str, command: &str, verdict: &str) -> (String, String, String) {
    (kind.to_owned(), command.to_owned(), verdict.to_owned())
}

fn issue_rules(evidence: &Value) -> Vec<String> {
    evidence["rounds"][0]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["rule"].as_str().unwrap().to_owned())
        .collect()
}

fn artifact(repo: &Repo, name: &str) -> String {
    std::fs::read_to_string(repo.root.parent().unwrap().join("artifacts").join(name)).unwrap()
}

const WORDS_PY: &str = "def _words(text):\n    return text.split(\" \")\n\n\ndef word_count(text):\n    return len(_words(text))\n\n\ndef first_word(text):\n    return _words(text)[0]\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
const TEST_FIRST_PY: &str = "from words import first_word\n\n\ndef test_first_word_keeps_its_case():\n    assert first_word(\"Hello world\") == \"Hello\"\n";
/// A module at the root that pytest collects and cannot import: a whole-suite run stops at
/// "Interrupted: 1 error during collection" before any test runs.
const STRAY_PY: &str = "import a_module_this_project_does_not_install\n\n\ndef test_live_service():\n    assert a_module_this_project_does_not_install.ping()\n";
const REGRESSION_TEST: &str = "--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_tabs_and_newlines():\n+    assert word_count(\"a\\tb\\nc \") == 3\n";

fn python_fix(body: &str) -> String {
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def _words(text):\n-    return text.split(\" \")\n+    {body}\n{REGRESSION_TEST}"
    )
}

fn stray_module_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("test_live.py", STRAY_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("tests/test_first.py", TEST_FIRST_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

const PYTEST_REPRO: &str = "pytest -q tests/test_words.py::test_repeated_spaces";

#[test]
fn a_whole_pytest_suite_interrupted_by_a_stray_module_is_dropped_for_the_test_directory() {
    let repo = stray_module_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(&repo, PYTEST_REPRO, &python_fix("return text.split()"));
    run.expect_code(0);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["result"]["status"], "fixed");
    assert_eq!(
        attempts(&evidence),
        [
            attempt("whole-suite", "pytest -q", "stopped-early"),
            attempt("test-root", "pytest tests/", "established"),
        ]
    );
    assert_eq!(
        evidence["reproduction"]["suite-choice"]["chosen"],
        "pytest tests/"
    );
    let title = artifact(&repo, "pr-title.txt");
    let body = artifact(&repo, "pr-body.md");
    let scope: Vec<&str> = body
        .lines()
        .skip_while(|line| !line.starts_with("**The proof covers"))
        .take_while(|line| !line.is_empty())
        .collect();
    insta::assert_snapshot!(
        "stray_module_title_and_scope",
        stable(&format!("{title}\n{}", scope.join("\n")), &[&repo.root])
    );
}

#[test]
fn a_fix_that_breaks_another_test_under_the_test_directory_is_refused_when_the_whole_suite_collapses()
 {
    let repo = stray_module_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        PYTEST_REPRO,
        &python_fix("return text.lower().split()"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["tests/test_first.py::test_first_word_keeps_its_case"])
    );
    assert_eq!(issue_rules(&evidence), ["prove.derived-suite"]);
}

const JEST: &str = "jest@29.7.0";
const SLUG_JS: &str = "function slugify(text) {\n  return text.toLowerCase().replace(' ', '-');\n}\n\nmodule.exports = { slugify };\n";
const SLUG_TEST_JS: &str = "const { slugify } = require('../src/slug');\n\ntest('lowercases', () => {\n  expect(slugify('Hello')).toBe('hello');\n});\n\ntest('replaces every space', () => {\n  expect(slugify('a b c')).toBe('a-b-c');\n});\n";
/// A test of the project's command line that reads `process.argv`, as CLI projects' tests do,
/// and aborts on an option it does not know.
const CLI_TEST_JS: &str = "const known = ['--verbose'];\nconst unknown = process.argv.slice(2).filter((a) => a.startsWith('--') && !known.includes(a));\nif (unknown.length > 0) {\n  console.error(`unknown option: ${unknown.join(' ')}`);\n  process.exit(1);\n}\n\ntest('parses no options', () => {\n  expect(unknown).toEqual([]);\n});\n";
/// Tests run in jest's own process (as `--runInBand` does), so they see its argv.
const JEST_PACKAGE: &str = "{\n  \"name\": \"slug\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"jest\"},\n  \"jest\": {\"maxWorkers\": 1}\n}\n";

fn jest_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules\n"),
        ("package.json", JEST_PACKAGE),
        ("src/slug.js", SLUG_JS),
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

#[test]
fn a_jest_suite_aborted_by_the_reproductions_extra_argv_is_dropped_for_the_test_directory() {
    let repo = jest_repo();
    let before = repo.fingerprint();
    let fix = "--- a/src/slug.js\n+++ b/src/slug.js\n@@ -1,3 +1,3 @@\n function slugify(text) {\n-  return text.toLowerCase().replace(' ', '-');\n+  return text.toLowerCase().replace(/ /g, '-');\n }\n--- a/tests/slug.test.js\n+++ b/tests/slug.test.js\n@@ -8,2 +8,6 @@\n   expect(slugify('a b c')).toBe('a-b-c');\n });\n+\n+test('replaces spaces after the first word', () => {\n+  expect(slugify('x y z w')).toBe('x-y-z-w');\n+});\n";
    let (run, evidence) = run(&repo, "npx jest --coverage=false tests/slug.test.js", fix);
    run.expect_code(0);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["result"]["status"], "fixed");
    let tried = attempts(&evidence);
    assert_eq!(
        tried[..2],
        [
            attempt(
                "whole-suite",
                "npx jest '--coverage=false'",
                "stopped-early"
            ),
            attempt("test-root", "npx jest tests/", "established"),
        ]
    );
}

/// A project's own runner script: unittest-style dotted labels read under `tests/`, as
/// Django's `tests/runtests.py` does; it refuses to run without a label.
const RUNTESTS_PY: &str = "import os\nimport sys\nimport unittest\n\nHERE = os.path.dirname(os.path.abspath(__file__))\nsys.path[:0] = [HERE, os.path.dirname(HERE)]\n\nloader = unittest.defaultTestLoader\n\n\ndef load(label):\n    path = os.path.join(HERE, *label.split('.'))\n    if os.path.isdir(path):\n        return loader.discover(path, top_level_dir=HERE)\n    return loader.loadTestsFromName(label)\n\n\nlabels = [a for a in sys.argv[1:] if not a.startswith('-')]\nif not labels:\n    print('runtests.py: give the labels of the tests to run', file=sys.stderr)\n    sys.exit(2)\nsuite = unittest.TestSuite([load(label) for label in labels])\nresult = unittest.TextTestRunner(verbosity=1).run(suite)\nsys.exit(0 if result.wasSuccessful() else 1)\n";
const APP_COUNT: &str = "import unittest\n\nfrom words import word_count\n\n\nclass CountTest(unittest.TestCase):\n    def test_single_spaces(self):\n        self.assertEqual(word_count(\"a b c\"), 3)\n\n    def test_repeated_spaces(self):\n        self.assertEqual(word_count(\"a  b\"), 2)\n";
const APP_FIRST: &str = "import unittest\n\nfrom words import first_word\n\n\nclass FirstTest(unittest.TestCase):\n    def test_first_word_keeps_its_case(self):\n        self.assertEqual(first_word(\"Hello world\"), \"Hello\")\n";

fn runtests_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("words.py", WORDS_PY),
        ("tests/runtests.py", RUNTESTS_PY),
        ("tests/words_app/__init__.py", ""),
        ("tests/words_app/test_count.py", APP_COUNT),
        ("tests/words_app/test_first.py", APP_FIRST),
    ])
}

const RUNTESTS_REPRO: &str =
    "python3 tests/runtests.py words_app.test_count.CountTest.test_repeated_spaces";

fn words_source_fix(body: &str) -> String {
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def _words(text):\n-    return text.split(\" \")\n+    {body}\n"
    )
}

#[test]
fn a_runner_script_with_dotted_labels_is_proven_on_the_widest_label_that_is_a_baseline() {
    let repo = runtests_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        RUNTESTS_REPRO,
        &words_source_fix("return text.split()"),
    );
    // The suite is proven on the label; the canaries cannot be pointed at a project's own
    // runner script, so, closed by default, the claim is not "fixed and proven".
    run.expect_code(5);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["result"]["status"], "fixed-not-judged");
    assert_eq!(
        attempts(&evidence),
        [
            attempt("no-selector", "python3 tests/runtests.py", "missing-tests"),
            attempt(
                "wider-selector",
                "python3 tests/runtests.py words_app",
                "established"
            ),
        ]
    );
}

#[test]
fn a_runner_script_fix_that_breaks_another_test_of_the_label_is_refused() {
    let repo = runtests_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        RUNTESTS_REPRO,
        &words_source_fix("return text.lower().split()"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["rounds"][0]["verdict"], "proof-failed");
    assert_eq!(issue_rules(&evidence), ["prove.derived-suite"]);
}

const GO_MOD: &str = "module example.com/words\n\ngo 1.18\n";
const WORDS_GO: &str = "package words\n\nimport \"strings\"\n\nfunc split(text string) []string {\n\treturn strings.Split(text, \" \")\n}\n\n// Count is the number of words in text.\nfunc Count(text string) int {\n\treturn len(split(text))\n}\n\n// First is the first word of text.\nfunc First(text string) string {\n\treturn split(text)[0]\n}\n";
const WORDS_TEST_GO: &str = "package words\n\nimport \"testing\"\n\nfunc TestRepeatedSpaces(t *testing.T) {\n\tif got := Count(\"a  b\"); got != 2 {\n\t\tt.Fatalf(\"Count = %d, want 2\", got)\n\t}\n}\n\nfunc TestFirstKeepsCase(t *testing.T) {\n\tif got := First(\"Hello world\"); got != \"Hello\" {\n\t\tt.Fatalf(\"First = %q, want Hello\", got)\n\t}\n}\n";

fn go_fix(body: &str) -> String {
    format!(
        "--- a/words.go\n+++ b/words.go\n@@ -5,3 +5,3 @@\n func split(text string) []string {{\n-\treturn strings.Split(text, \" \")\n+\t{body}\n }}\n--- a/words_test.go\n+++ b/words_test.go\n@@ -9,3 +9,9 @@\n }}\n \n+func TestTabsAndNewlines(t *testing.T) {{\n+\tif got := Count(\"a\\tb\\nc \"); got != 3 {{\n+\t\tt.Fatalf(\"Count = %d, want 3\", got)\n+\t}}\n+}}\n+\n func TestFirstKeepsCase(t *testing.T) {{\n"
    )
}

fn go_repo() -> Repo {
    Repo::with_files(&[
        ("go.mod", GO_MOD),
        ("words.go", WORDS_GO),
        ("words_test.go", WORDS_TEST_GO),
    ])
}

#[test]
fn go_real_fix_is_proven_through_a_per_test_rerun_of_the_terse_output() {
    let repo = go_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        "go test -run TestRepeatedSpaces .",
        &go_fix("return strings.Fields(text)"),
    );
    run.expect_code(0);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["result"]["status"], "fixed");
    assert_eq!(
        attempts(&evidence),
        [attempt("whole-suite", "go test ./...", "established")]
    );
    // Plain `go test` names no passing test: each run with the change is confirmed by `-v`.
    let reruns: Vec<(String, String)> = evidence["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["confirms"].is_null())
        .map(|c| {
            (
                c["confirms"]["command"].as_str().unwrap().to_owned(),
                c["command"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        reruns,
        [
            (
                "go test -run TestRepeatedSpaces .".to_owned(),
                "go test -v -run TestRepeatedSpaces .".to_owned()
            ),
            ("go test ./...".to_owned(), "go test -v ./...".to_owned()),
        ]
    );
    let prevent = &evidence["rounds"][0]["prevent"];
    assert_eq!(prevent["guard"], "changed-tests");
    assert_eq!(prevent["passed-with-fix"], json!(["TestTabsAndNewlines"]));
}

#[test]
fn go_fix_that_breaks_another_test_is_refused() {
    let repo = go_repo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        "go test -run TestRepeatedSpaces .",
        &go_fix("return strings.Fields(strings.ToLower(text))"),
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["TestFirstKeepsCase"])
    );
}

/// A reproducer script: it runs one unittest case and shows no selector to widen.
const CHECK_PY: &str = "import sys\nimport unittest\n\nsys.path.insert(0, '.')\nfrom tests.words_app.test_count import CountTest\n\nsuite = unittest.defaultTestLoader.loadTestsFromTestCase(CountTest)\nresult = unittest.TextTestRunner(verbosity=1).run(suite)\nsys.exit(0 if result.wasSuccessful() else 1)\n";

/// A reproducer script is no runner invocation, so no canary can be built for it: closed by
/// default, the fix is not "fixed and proven" (exit 5), and the body says so first, then that
/// only the reproduction ran.
#[test]
fn a_script_proof_with_no_wider_suite_is_not_judged_and_says_both_first() {
    let repo = Repo::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("words.py", WORDS_PY),
        ("check.py", CHECK_PY),
        ("tests/__init__.py", ""),
        ("tests/words_app/__init__.py", ""),
        ("tests/words_app/test_count.py", APP_COUNT),
    ]);
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        "python3 check.py",
        &words_source_fix("return text.split()"),
    );
    let run = run.expect_code(5);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["result"]["status"], "fixed-not-judged");
    assert_eq!(run.json()["status"], "fixed-not-judged");
    assert_eq!(
        evidence["reproduction"]["suite-choice"],
        json!({"attempts": [], "chosen": null, "budget-ms": 600000})
    );
    let title = artifact(&repo, "pr-title.txt");
    let body = artifact(&repo, "pr-body.md");
    let head: Vec<&str> = body.lines().take(8).collect();
    insta::assert_snapshot!(
        "script_not_judged_title_and_first_lines",
        stable(&format!("{title}\n{}", head.join("\n")), &[&repo.root])
    );
}
