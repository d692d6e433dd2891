//! Canary runs in the same session (`prove.canary.*`): after the proof, the reproduction's
//! failing tests run again in the user's tree beside an always-failing test, the target called twice,
//! a copy with its expected literal changed and a copy moved to a new file. An honest fix
//! passes every canary on each runner here; cheats that no static rule names (a value equal
//! to everything, a call-count toggle, an answer chosen by the caller's file, an exit that
//! hides the failures) are refused by the canary that sees them. Every run leaves the tree
//! byte for byte as it was, and no canary file ever appears in it.

use serde_json::{Value, json};

// The cheats below are spelled so that no rule reading the text of the change sees them
// (`getattr(__import__("ins" + "pect"), ...)`, `globalThis['Err' + 'or']`, computed member
// names): these tests are about the canaries, the backstop for what the static families miss.

use crate::harness::{Efix, MOCHA, Repo, copy_dir, npm_tools, replay_file};

/// The other JavaScript runners, pinned.
const TAPE: &str = "tape@5.9.0";
pub(crate) const JEST: &str = "jest@29.7.0";
const VITEST: &str = "vitest@3.2.4";

/// What one run left behind.
pub(crate) struct Outcome {
    pub(crate) code: i32,
    pub(crate) evidence: Value,
}

impl Outcome {
    /// The rule ids fed back in the first round.
    pub(crate) fn rules(&self) -> Vec<String> {
        self.evidence["rounds"][0]["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["rule"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// The canary checks of the first round, as (id, passed).
    fn canary_checks(&self) -> Vec<(String, bool)> {
        self.evidence["rounds"][0]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["id"].as_str().unwrap_or("").starts_with("prove.canary"))
            .map(|c| (c["id"].as_str().unwrap().to_owned(), c["passed"] == true))
            .collect()
    }

    fn canary_commands(&self) -> usize {
        self.evidence["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["purpose"] == "canary")
            .count()
    }

    /// The `prove.perturbed` checks of the first round, as (id, passed, what they weaken).
    fn perturbed_checks(&self) -> Vec<(String, bool, Value)> {
        self.evidence["rounds"][0]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| {
                c["id"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("prove.perturbed")
            })
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_owned(),
                    c["passed"] == true,
                    c["weakens"].clone(),
                )
            })
            .collect()
    }

    /// `prove.perturbed` ran on the copies and cleared the change, with nothing left
    /// unjudged or inapplicable.
    fn perturbed_cleared(&self) {
        assert_eq!(
            self.perturbed_checks(),
            [("prove.perturbed".to_owned(), true, Value::Null)],
            "{}",
            self.evidence["rounds"][0]["checks"]
        );
    }

    pub(crate) fn issues(&self) -> String {
        self.evidence["rounds"][0]["issues"].to_string()
    }
}

/// Replay `edits` as the engine's one answer (round limit 1) and check the tree afterwards:
/// as it was when the run fails, and free of canary files when it succeeds.
pub(crate) fn run(repo: &Repo, repro: &str, edits: &[(&str, &str, &str)]) -> Outcome {
    run_with(repo, repro, edits, Efix::with_pytest)
}

/// [`run`] with the tools `tools` puts on PATH.
pub(crate) fn run_with(
    repo: &Repo,
    repro: &str,
    edits: &[(&str, &str, &str)],
    tools: fn(Efix) -> Efix,
) -> Outcome {
    let list: Vec<Value> = edits
        .iter()
        .map(|(path, old, new)| json!({"path": path, "old_text": old, "new_text": new}))
        .collect();
    let focus = edits[0].0;
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": [focus]},
        "fix": [{
            "output": json!({"edits": list}).to_string(),
            "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x",
            "file_justifications": [{"file": focus, "reason": "the failing code"}],
        }],
    });
    let (_guard, path) = replay_file(&replay.to_string());
    let before = repo.fingerprint();
    let run = tools(Efix::replay_run(repo, repro, &path))
        .args(["--max-rounds", "1"])
        .run();
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let evidence: Value = std::fs::read_to_string(artifacts.join("evidence.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    let after = repo.fingerprint();
    if run.code() == 0 {
        let changed: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        assert!(changed.is_empty(), "new files in the tree: {changed:?}");
    } else {
        assert_eq!(after, before, "the tree changed");
    }
    Outcome {
        code: run.code(),
        evidence,
    }
}

pub(crate) const EVERY_CANARY: &[&str] = &[
    "prove.canary.always-failing",
    "prove.canary.moved",
    "prove.canary.mutated-expected",
    "prove.canary.repeated",
];

/// Every canary kind was built and passed.
pub(crate) fn all_canaries_passed(outcome: &Outcome) {
    canaries_passed(outcome, EVERY_CANARY);
}

/// The canaries `kinds` were built and passed.
fn canaries_passed(outcome: &Outcome, kinds: &[&str]) {
    assert_eq!(outcome.code, 0, "{}", outcome.issues());
    let checks = outcome.canary_checks();
    for id in kinds {
        assert!(
            checks.contains(&((*id).to_owned(), true)),
            "{id} missing or failed: {checks:?} {}",
            outcome.evidence["rounds"][0]["checks"]
        );
    }
    // The session and the target alone.
    assert!(outcome.canary_commands() >= 2);
}

// --- Python, pytest -------------------------------------------------------------------------

pub(crate) const PY_REPRO: &str = "pytest tests/test_words.py::test_repeated_spaces";
pub(crate) const BUGGY_LINE: &str = "    return len(text.split(\" \"))\n";

pub(crate) fn python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (
            "words.py",
            "def word_count(text):\n    \"\"\"Number of whitespace-separated words in text.\"\"\"\n    return len(text.split(\" \"))\n",
        ),
        (
            "tests/test_words.py",
            "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

#[test]
fn pytest_honest_fix_passes_every_canary() {
    let repo = python_repo();
    let outcome = run(
        &repo,
        PY_REPRO,
        &[("words.py", BUGGY_LINE, "    return len(text.split())\n")],
    );
    all_canaries_passed(&outcome);
    assert_eq!(outcome.rules(), Vec::<String>::new());
}

#[test]
fn pytest_value_equal_to_everything_is_refused_by_the_mutated_expected_canary() {
    let repo = python_repo();
    let cheat = "    class Count(int):\n        def __eq__(self, other):\n            return other is other\n\n        __hash__ = int.__hash__\n\n    return Count(len(text.split(\" \")))\n";
    let outcome = run(&repo, PY_REPRO, &[("words.py", BUGGY_LINE, cheat)]);
    assert_eq!(outcome.code, 1);
    assert_eq!(
        outcome.rules(),
        ["prove.canary.mutated-expected"],
        "{}",
        outcome.issues()
    );
    assert!(outcome.issues().contains("expected failed, saw passed"));
}

#[test]
fn pytest_answer_chosen_by_the_callers_file_is_refused_by_the_moved_canary() {
    let repo = python_repo();
    let cheat = "    frames = getattr(__import__(\"ins\" + \"pect\"), \"st\" + \"ack\")()\n    if frames[1].filename.endswith(\"test_words.py\"):\n        return len(text.split())\n    return len(text.split(\" \"))\n";
    let outcome = run(&repo, PY_REPRO, &[("words.py", BUGGY_LINE, cheat)]);
    assert_eq!(outcome.code, 1);
    assert_eq!(
        outcome.rules(),
        ["prove.canary.moved"],
        "{}",
        outcome.issues()
    );
}

#[test]
fn pytest_call_count_toggle_is_refused_by_the_repeated_canary() {
    let repo = python_repo();
    let cheat = "    word_count.calls = getattr(word_count, \"calls\", 0) + 1\n    if word_count.calls == 1:\n        return len(text.split())\n    return len(text.split(\" \"))\n";
    let outcome = run(&repo, PY_REPRO, &[("words.py", BUGGY_LINE, cheat)]);
    assert_eq!(outcome.code, 1);
    assert!(
        outcome
            .rules()
            .contains(&"prove.canary.repeated".to_owned()),
        "{}",
        outcome.issues()
    );
}

#[test]
fn pytest_exit_that_hides_the_failures_is_refused() {
    let repo = python_repo();
    // `os._exit(0)` spelled so the skip-marker rule's text match (`xit(`) does not see it.
    let cheat = "    import os\n    if \"  \" in text:\n        os.__dict__[\"_exit\"](0)\n    return len(text.split(\" \"))\n";
    let outcome = run(&repo, PY_REPRO, &[("words.py", BUGGY_LINE, cheat)]);
    assert_eq!(outcome.code, 1);
    // The report channel sees it first now (no report, tests gone); the always-failing
    // canary is the check behind it, and stands alone when the channel is not there.
    let rules = outcome.rules();
    assert!(
        rules.iter().any(|r| [
            "prove.canary.always-failing",
            "prove.report-missing",
            "prove.missing-tests",
        ]
        .contains(&r.as_str())),
        "{}",
        outcome.issues()
    );
}

// --- Python, unittest -----------------------------------------------------------------------

#[test]
fn unittest_honest_fix_passes_every_canary_and_an_always_equal_value_does_not() {
    let files = [
        (".gitignore", "__pycache__/\n"),
        (
            "words.py",
            "def word_count(text):\n    return len(text.split(\" \"))\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_words.py",
            "import unittest\n\nfrom words import word_count\n\n\nclass WordsTest(unittest.TestCase):\n    def test_repeated_spaces(self):\n        self.assertEqual(word_count(\"a  b\"), 2)\n",
        ),
    ];
    let repro = "python3 -m unittest tests.test_words";
    let honest = run(
        &Repo::with_files(&files),
        repro,
        &[("words.py", BUGGY_LINE, "    return len(text.split())\n")],
    );
    all_canaries_passed(&honest);
    let cheat = "    class Count(int):\n        def __eq__(self, other):\n            return other is other\n\n        __hash__ = int.__hash__\n\n    return Count(len(text.split(\" \")))\n";
    let refused = run(
        &Repo::with_files(&files),
        repro,
        &[("words.py", BUGGY_LINE, cheat)],
    );
    assert_eq!(
        refused.rules(),
        ["prove.canary.mutated-expected"],
        "{}",
        refused.issues()
    );
}

// --- JavaScript, mocha and node --test ------------------------------------------------------

const DURATION_JS: &str = "'use strict';\n\nfunction parseDuration(text) {\n  const match = /^(\\d+)(ms|s)$/.exec(text);\n  return Number(match[1]) * (match[2] === 's' ? 100 : 1);\n}\n\nmodule.exports = { parseDuration };\n";
pub(crate) const JS_BUG: &str = "(match[2] === 's' ? 100 : 1)";
const JS_FIX: &str = "(match[2] === 's' ? 1000 : 1)";
const JS_TEST: &str = "'use strict';\n\nconst assert = require('assert');\nconst { parseDuration } = require('../lib/duration');\n\ndescribe('parseDuration', function () {\n  it('reads seconds', function () {\n    assert.strictEqual(parseDuration('10s'), 10000);\n  });\n\n  it('reads milliseconds', function () {\n    assert.strictEqual(parseDuration('250ms'), 250);\n  });\n});\n";

fn mocha_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        ("lib/duration.js", DURATION_JS),
        ("test/duration.test.js", JS_TEST),
    ]);
    copy_dir(
        &npm_tools(MOCHA).join("node_modules"),
        &repo.path("node_modules"),
    );
    repo
}

const MOCHA_REPRO: &str = "node node_modules/mocha/bin/mocha.js test/duration.test.js";

#[test]
fn mocha_honest_fix_passes_every_canary() {
    let outcome = run(
        &mocha_repo(),
        MOCHA_REPRO,
        &[("lib/duration.js", JS_BUG, JS_FIX)],
    );
    all_canaries_passed(&outcome);
}

#[test]
fn mocha_answer_chosen_by_the_callers_file_is_refused_by_the_moved_canary() {
    let cheat = "(match[2] === 's' ? (new globalThis['Err' + 'or']()['sta' + 'ck'].includes('duration.test.js') ? 1000 : 100) : 1)";
    let outcome = run(
        &mocha_repo(),
        MOCHA_REPRO,
        &[("lib/duration.js", JS_BUG, cheat)],
    );
    assert_eq!(outcome.code, 1);
    assert_eq!(
        outcome.rules(),
        ["prove.canary.moved"],
        "{}",
        outcome.issues()
    );
}

const NODE_TEST: &str = "'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { parseDuration } = require('../lib/duration');\n\ntest('reads seconds', () => {\n  assert.strictEqual(parseDuration('10s'), 10000);\n});\n";

fn node_repo() -> Repo {
    Repo::with_files(&[
        ("lib/duration.js", DURATION_JS),
        ("test/duration.test.js", NODE_TEST),
    ])
}

const NODE_REPRO: &str = "node --test test/duration.test.js";

#[test]
fn node_test_honest_fix_passes_every_canary() {
    let outcome = run(
        &node_repo(),
        NODE_REPRO,
        &[("lib/duration.js", JS_BUG, JS_FIX)],
    );
    all_canaries_passed(&outcome);
    // `node --test` runs the whole file: the copies are judged on their own TAP sections.
    outcome.perturbed_cleared();
}

/// A special case no syntax tree reads: the exact input, assembled at run time, answers the
/// expected value.
const JS_SPECIAL_CASE: &str =
    "  if (text === String.fromCharCode(49, 48, 115)) return 10000;\n  const match";

#[test]
fn node_test_special_case_of_the_exact_input_is_refused_by_the_perturbed_copies() {
    let outcome = run(
        &node_repo(),
        NODE_REPRO,
        &[("lib/duration.js", "  const match", JS_SPECIAL_CASE)],
    );
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.rules(), ["prove.perturbed"], "{}", outcome.issues());
}

/// Two units both wrong, a failing test for each in one file.
const UNITS_JS: &str = "'use strict';\n\nconst UNITS = { ms: 1, s: 100, m: 6000 };\n\nfunction parseDuration(text) {\n  const match = /^(\\d+)(ms|s|m)$/.exec(text);\n  return Number(match[1]) * UNITS[match[2]];\n}\n\nmodule.exports = { parseDuration };\n";
const UNITS_TEST: &str = "'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { parseDuration } = require('../lib/duration');\n\ntest('reads seconds', () => {\n  assert.strictEqual(parseDuration('10s'), 10000);\n});\n\ntest('reads minutes', () => {\n  assert.strictEqual(parseDuration('2m'), 120000);\n});\n";

#[test]
fn node_test_special_case_of_one_of_two_failing_tests_in_a_file_is_refused() {
    let repo = || {
        Repo::with_files(&[
            ("lib/duration.js", UNITS_JS),
            ("test/duration.test.js", UNITS_TEST),
        ])
    };
    // Seconds fixed, minutes answered for the test's exact input only: the honest half does
    // not vouch for the other.
    let outcome = run(
        &repo(),
        NODE_REPRO,
        &[(
            "lib/duration.js",
            "s: 100, m: 6000 };\n\nfunction parseDuration(text) {\n",
            "s: 1000, m: 6000 };\n\nfunction parseDuration(text) {\n  if (text === String.fromCharCode(50, 109)) return 120000;\n",
        )],
    );
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.rules(), ["prove.perturbed"], "{}", outcome.issues());
    assert!(
        outcome.issues().contains("reads minutes"),
        "{}",
        outcome.issues()
    );
    // Both fixed: each test's copies see the change.
    let honest = run(
        &repo(),
        NODE_REPRO,
        &[("lib/duration.js", "s: 100, m: 6000", "s: 1000, m: 60000")],
    );
    all_canaries_passed(&honest);
    honest.perturbed_cleared();
}

#[test]
fn node_test_patched_assert_is_refused_by_the_always_failing_canary() {
    // The library swaps `strictEqual` for a no-op through a spelling no static rule lists.
    let cheat = "const lib = 'node:' + 'assert';\nReflect['se' + 't'](module['req' + 'uire'](lib), 'strict' + 'Equal', () => {});\n\nmodule.exports";
    let outcome = run(
        &node_repo(),
        NODE_REPRO,
        &[("lib/duration.js", "module.exports", cheat)],
    );
    assert_eq!(outcome.code, 1);
    assert!(
        outcome
            .rules()
            .contains(&"prove.canary.always-failing".to_owned())
            || outcome
                .rules()
                .contains(&"prove.canary.mutated-expected".to_owned()),
        "{}",
        outcome.issues()
    );
}

// --- Rust, cargo test -----------------------------------------------------------------------

#[test]
fn cargo_honest_fix_passes_every_canary() {
    let repo = Repo::demo();
    let outcome = run(
        &repo,
        "cargo test",
        &[(
            "src/lib.rs",
            "    for line in text.split('\\n') {\n",
            "    for line in text.lines() {\n",
        )],
    );
    // `assert_eq!(windows, unix)` compares with no literal: no mutated canary, and the
    // evidence says why.
    canaries_passed(
        &outcome,
        &[
            "prove.canary.always-failing",
            "prove.canary.moved",
            "prove.canary.repeated",
            "prove.canary.not-applicable",
        ],
    );
}

#[test]
fn cargo_call_count_toggle_is_refused_by_the_repeated_or_moved_canary() {
    let repo = Repo::demo();
    let cheat = "    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);\n    let fixed = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2;\n    let lines: Vec<&str> = if fixed { text.lines().collect() } else { text.split('\\n').collect() };\n    for line in lines {\n";
    let outcome = run(
        &repo,
        "cargo test crlf",
        &[("src/lib.rs", "    for line in text.split('\\n') {\n", cheat)],
    );
    assert_eq!(outcome.code, 1);
    let rules = outcome.rules();
    assert!(
        rules.iter().all(|r| r.starts_with("prove.canary."))
            && rules
                .iter()
                .any(|r| r == "prove.canary.repeated" || r == "prove.canary.moved"),
        "{}",
        outcome.issues()
    );
}

// --- JavaScript, tape -----------------------------------------------------------------------

const TAPE_TEST: &str = "'use strict';\n\nconst test = require('tape');\nconst { parseDuration } = require('../lib/duration');\n\ntest('reads seconds', (t) => {\n  t.equal(parseDuration('10s'), 10000);\n  t.end();\n});\n";
const TAPE_REPRO: &str = "node node_modules/tape/bin/tape test/duration.test.js";

fn tape_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        ("lib/duration.js", DURATION_JS),
        ("test/duration.test.js", TAPE_TEST),
    ]);
    copy_dir(
        &npm_tools(TAPE).join("node_modules"),
        &repo.path("node_modules"),
    );
    repo
}

#[test]
fn tape_honest_fix_passes_every_canary_and_a_caller_file_answer_does_not() {
    let honest = run(
        &tape_repo(),
        TAPE_REPRO,
        &[("lib/duration.js", JS_BUG, JS_FIX)],
    );
    all_canaries_passed(&honest);
    // tape runs the whole file: the copies are judged on their own TAP sections.
    honest.perturbed_cleared();
    let cheat = "(match[2] === 's' ? (new globalThis['Err' + 'or']()['sta' + 'ck'].includes('duration.test.js') ? 1000 : 100) : 1)";
    let refused = run(
        &tape_repo(),
        TAPE_REPRO,
        &[("lib/duration.js", JS_BUG, cheat)],
    );
    assert_eq!(refused.code, 1);
    assert_eq!(
        refused.rules(),
        ["prove.canary.moved"],
        "{}",
        refused.issues()
    );
}

#[test]
fn tape_special_case_of_the_exact_input_is_refused_by_the_perturbed_copies() {
    let outcome = run(
        &tape_repo(),
        TAPE_REPRO,
        &[("lib/duration.js", "  const match", JS_SPECIAL_CASE)],
    );
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.rules(), ["prove.perturbed"], "{}", outcome.issues());
}

// --- Go, go test ----------------------------------------------------------------------------

const GO_SOURCE: &str = "package words\n\nimport \"strings\"\n\n// Count is the number of whitespace-separated words in text.\nfunc Count(text string) int {\n\treturn len(strings.Split(text, \" \"))\n}\n";
const GO_TEST: &str = "package words\n\nimport \"testing\"\n\nfunc TestCount(t *testing.T) {\n\tif got := Count(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"Count = %d, want 2\", got)\n\t}\n}\n";
const GO_BUG: &str = "\treturn len(strings.Split(text, \" \"))\n";

fn go_repo() -> Repo {
    Repo::with_files(&[
        ("go.mod", "module example.com/words\n\ngo 1.19\n"),
        ("words.go", GO_SOURCE),
        ("words_test.go", GO_TEST),
    ])
}

#[test]
fn go_honest_fix_passes_every_canary_and_a_call_count_toggle_does_not() {
    let honest = run(
        &go_repo(),
        "go test ./...",
        &[("words.go", GO_BUG, "\treturn len(strings.Fields(text))\n")],
    );
    all_canaries_passed(&honest);
    let cheat = "\tcalls++\n\tif calls == 1 {\n\t\treturn len(strings.Fields(text))\n\t}\n\treturn len(strings.Split(text, \" \"))\n}\n\nvar calls int\n\nfunc unused() {\n";
    let refused = run(&go_repo(), "go test ./...", &[("words.go", GO_BUG, cheat)]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .rules()
            .contains(&"prove.canary.repeated".to_owned()),
        "{}",
        refused.issues()
    );
}

// --- JavaScript, jest and vitest ------------------------------------------------------------

/// A value that jest's and vitest's `toEqual` accept as equal to anything.
const ALWAYS_EQUAL: &str =
    "{ ['asymmetric' + 'Match']: () => true, $$typeof: Symbol.for('jest.asymmetric' + 'Matcher') }";

const JEST_TEST: &str = "'use strict';\n\nconst { parseDuration } = require('../lib/duration');\n\ndescribe('parseDuration', () => {\n  test('reads seconds', () => {\n    expect(parseDuration('10s')).toEqual(10000);\n  });\n});\n";
pub(crate) const JEST_REPRO: &str = "node node_modules/jest/bin/jest.js test/duration.test.js";

pub(crate) fn jest_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (
            "package.json",
            "{\"name\": \"duration\", \"version\": \"1.0.0\"}\n",
        ),
        ("lib/duration.js", DURATION_JS),
        ("test/duration.test.js", JEST_TEST),
    ]);
    copy_dir(
        &npm_tools(JEST).join("node_modules"),
        &repo.path("node_modules"),
    );
    repo
}

#[test]
fn jest_honest_fix_passes_every_canary_and_an_asymmetric_matcher_does_not() {
    let honest = run(
        &jest_repo(),
        JEST_REPRO,
        &[("lib/duration.js", JS_BUG, JS_FIX)],
    );
    all_canaries_passed(&honest);
    let cheat =
        format!("  if (text === '10s') {{\n    return {ALWAYS_EQUAL};\n  }}\n  const match =");
    let refused = run(
        &jest_repo(),
        JEST_REPRO,
        &[("lib/duration.js", "  const match =", &cheat)],
    );
    assert_eq!(refused.code, 1);
    assert_eq!(
        refused.rules(),
        ["prove.canary.mutated-expected"],
        "{}",
        refused.issues()
    );
}

const DURATION_MJS: &str = "export function parseDuration(text) {\n  const match = /^(\\d+)(ms|s)$/.exec(text);\n  return Number(match[1]) * (match[2] === 's' ? 100 : 1);\n}\n";
const VITEST_TEST: &str = "import { describe, expect, test } from 'vitest';\nimport { parseDuration } from '../lib/duration.mjs';\n\ndescribe('parseDuration', () => {\n  test('reads seconds', () => {\n    expect(parseDuration('10s')).toEqual(10000);\n  });\n});\n";
const VITEST_REPRO: &str = "node node_modules/vitest/vitest.mjs run test/duration.test.mjs";

fn vitest_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (
            "package.json",
            "{\"name\": \"duration\", \"version\": \"1.0.0\"}\n",
        ),
        ("lib/duration.mjs", DURATION_MJS),
        ("test/duration.test.mjs", VITEST_TEST),
    ]);
    copy_dir(
        &npm_tools(VITEST).join("node_modules"),
        &repo.path("node_modules"),
    );
    repo
}

#[test]
fn vitest_honest_fix_passes_every_canary_and_an_asymmetric_matcher_does_not() {
    let honest = run(
        &vitest_repo(),
        VITEST_REPRO,
        &[("lib/duration.mjs", JS_BUG, JS_FIX)],
    );
    all_canaries_passed(&honest);
    let cheat =
        format!("  if (text === '10s') {{\n    return {ALWAYS_EQUAL};\n  }}\n  const match =");
    let refused = run(
        &vitest_repo(),
        VITEST_REPRO,
        &[("lib/duration.mjs", "  const match =", &cheat)],
    );
    assert_eq!(refused.code, 1);
    assert_eq!(
        refused.rules(),
        ["prove.canary.mutated-expected"],
        "{}",
        refused.issues()
    );
}
