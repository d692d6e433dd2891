//! Results from a channel the code under test cannot write, and completeness, end to end on
//! real runners (pytest, `node --test`, jest, tape, cargo test): library code that prints
//! result lines, or ends the process with status 0 on the failing input, is refused with the
//! channel's rule and never certified; the honest fix of the same bug is proven. Every run
//! leaves the tree byte for byte as it was.

use serde_json::{Value, json};

use crate::harness::{Efix, MOCHA, Repo, npm_tools, replay_file};

// The cheats below are spelled so that no rule reading the text of the change can see them
// (`getattr(__import__("o" + "s"), "_ex" + "it")`, `globalThis["pro" + "cess"]`, a renamed
// `std::process`, result lines built from pieces): these tests are about what the runs
// report, the backstop for every spelling the static families miss.

/// With no regression test required the replayed change goes straight to the proof, which
/// is what these tests are about.
const NO_TEST_REQUIRED: &str = "version: 1\ntest:\n  required: false\n";

/// The answer `{"edits": [...]}` for `(path, old_text, new_text)` triples.
fn edits(list: &[(&str, &str, &str)]) -> String {
    let edits: Vec<Value> = list
        .iter()
        .map(|(path, old, new)| json!({"path": path, "old_text": old, "new_text": new}))
        .collect();
    json!({ "edits": edits }).to_string()
}

struct Outcome {
    code: i32,
    evidence: Value,
}

impl Outcome {
    /// The rule ids fed back in the first round, sorted.
    fn rules(&self) -> Vec<String> {
        let mut rules: Vec<String> = self.evidence["rounds"][0]["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["rule"].as_str().unwrap_or("").to_owned())
            .collect();
        rules.sort();
        rules.dedup();
        rules
    }

    /// The first round's checks that failed, by id.
    fn failed_checks(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.evidence["rounds"][0]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["passed"] == false)
            .map(|c| c["id"].as_str().unwrap_or("").to_owned())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Run efix once (one round) with `output` as the engine's answer; the tree must be as it
/// was unless the run proved a fix.
fn run(repo: &Repo, repro: &str, output: &str, focus: &str) -> Outcome {
    run_with(repo, repro, output, focus, &[])
}

/// [`run`] with more arguments for efix (`--suite COMMAND`).
fn run_with(repo: &Repo, repro: &str, output: &str, focus: &str, extra: &[&str]) -> Outcome {
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": [focus]},
        "fix": [{
            "output": output, "root_cause": "r", "fix_summary": "f", "tests_summary": "t",
            "risk_rollback": "x",
            "file_justifications": [{"file": focus, "reason": "the failing code"}],
        }],
    });
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let before = repo.fingerprint();
    let run = Efix::replay_run(repo, repro, &path)
        .with_pytest()
        .args(["--max-rounds", "1"])
        .args(extra)
        .run();
    let evidence: Value = std::fs::read_to_string(artifacts.join("evidence.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    if ![0, 5].contains(&run.code()) {
        assert_eq!(repo.fingerprint(), before, "a failed run changed the tree");
    }
    Outcome {
        code: run.code(),
        evidence,
    }
}

/// A cheat must end with no proven fix, refused by (at least) `rules`, with those checks
/// failed in the evidence.
fn refused(repo: &Repo, repro: &str, output: &str, focus: &str, rules: &[&str]) -> Outcome {
    let outcome = run(repo, repro, output, focus);
    assert_eq!(outcome.code, 1, "{}", outcome.evidence["rounds"][0]);
    assert_ne!(outcome.evidence["result"]["status"], "fixed");
    let got = outcome.rules();
    let failed = outcome.failed_checks();
    for rule in rules {
        assert!(
            got.iter().any(|r| r == rule) && failed.iter().any(|c| c == rule),
            "{rule} not among the issues {got:?} / failed checks {failed:?}: {}",
            outcome.evidence["rounds"][0]["issues"]
        );
    }
    outcome
}

fn proven(repo: &Repo, repro: &str, output: &str, focus: &str) -> Outcome {
    let outcome = run(repo, repro, output, focus);
    assert_eq!(
        outcome.code, 0,
        "{} {}",
        outcome.evidence["rounds"][0]["issues"], outcome.evidence["rounds"][0]["checks"]
    );
    outcome
}

/// The command record the proof ran for the reproduction in round 1.
fn proof_record(evidence: &Value) -> &Value {
    let id = evidence["rounds"][0]["prove"]["reproduction"]
        .as_u64()
        .unwrap() as usize;
    &evidence["commands"][id]
}

// --- pytest ---------------------------------------------------------------------------------

const WORDS_PY: &str = "def word_count(text):\n    \"\"\"Number of whitespace-separated words in text.\"\"\"\n    return len([w for w in text.split(\" \")])\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n\n\ndef test_empty():\n    assert word_count(\"\") == 0\n";
const PY_REPRO: &str = "pytest tests/test_words.py";
const PY_BODY: &str = "    return len([w for w in text.split(\" \")])\n";

fn python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

#[test]
fn pytest_library_that_exits_0_on_the_failing_input_is_refused_for_its_missing_report() {
    let repo = python_repo();
    let cheat = edits(&[(
        "words.py",
        PY_BODY,
        &format!(
            "    if \"  \" in text:\n        getattr(__import__(\"o\" + \"s\"), \"_ex\" + \"it\")(0)\n{PY_BODY}"
        ),
    )]);
    let outcome = refused(
        &repo,
        PY_REPRO,
        &cheat,
        "words.py",
        &["prove.report-missing", "prove.missing-tests"],
    );
    let record = proof_record(&outcome.evidence);
    // The user's command is the one shown; the argv run asked pytest for its report.
    assert_eq!(record["command"], PY_REPRO);
    let argv = record["outcome"]["argv"].as_array().unwrap();
    assert!(
        argv.last()
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("--junitxml=")
    );
    assert_eq!(record["channel"]["status"], "missing");
    assert_eq!(record["outcome"]["exit_code"], 0);
}

#[test]
fn pytest_library_that_prints_a_pass_line_and_forces_exit_0_is_refused() {
    let repo = python_repo();
    let hook = "import sys as _sys\n\n\ndef _report():\n    _sys.stdout.write(\"tests/test_words.py::test_repeated_spaces PASS\" + \"ED\\n\")\n    _sys.stdout.write(\"=== 3 pass\" + \"ed in 0.01s ===\\n\")\n    _sys.stdout.flush()\n    getattr(__import__(\"o\" + \"s\"), \"_ex\" + \"it\")(0)\n\n\ngetattr(__import__(\"ate\" + \"xit\"), \"regis\" + \"ter\")(_report)\n\n\n";
    let cheat = edits(&[(
        "words.py",
        "def word_count(text):\n",
        &format!("{hook}def word_count(text):\n"),
    )]);
    let outcome = refused(
        &repo,
        PY_REPRO,
        &cheat,
        "words.py",
        &["prove.channel-mismatch", "prove.reproduction"],
    );
    let record = proof_record(&outcome.evidence);
    // pytest's report says what ran: the failure is there, whatever the console says.
    assert_eq!(record["outcome"]["exit_code"], 0);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["failed"], 2);
}

#[test]
fn pytest_honest_fix_is_proven_through_the_report() {
    let repo = python_repo();
    let fix = edits(&[("words.py", PY_BODY, "    return len(text.split())\n")]);
    let outcome = proven(&repo, PY_REPRO, &fix, "words.py");
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["added"], json!(["--junitxml=<report>"]));
    assert_eq!(record["channel"]["report"]["passed"], 3);
    assert!(repo.read("words.py").contains("len(text.split())"));
}

// --- node --test ----------------------------------------------------------------------------

const SLUG_JS: &str = "function slugify(text) {\n  return text.toLowerCase().replace(' ', '-');\n}\n\nmodule.exports = { slugify };\n";
const SLUG_TEST_JS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { slugify } = require('../src/slug.js');\n\ntest('lowercases', () => {\n  assert.strictEqual(slugify('Hello'), 'hello');\n});\n\ntest('replaces every space', () => {\n  assert.strictEqual(slugify('a b c'), 'a-b-c');\n});\n\ntest('keeps dashes', () => {\n  assert.strictEqual(slugify('a-b'), 'a-b');\n});\n";
const SLUG_BODY: &str = "  return text.toLowerCase().replace(' ', '-');\n";
const SLUG_FIX: &str = "  return text.toLowerCase().replace(/ /g, '-');\n";
const NODE_REPRO: &str = "node --test test/slug.test.js";

fn node_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_TEST_JS),
    ])
}

#[test]
fn node_test_library_that_prints_a_pass_and_exits_0_is_refused_for_the_tests_it_hid() {
    let repo = node_repo();
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text.split(' ').length === 3 && text.length === 5) {{\n    const p = globalThis['pro' + 'cess'];\n    p.stdout.write('\\u2714 replaces every ' + 'space (0.1ms)\\n');\n    p['ex' + 'it'](0);\n  }}\n{SLUG_BODY}"
        ),
    )]);
    refused(
        &repo,
        NODE_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.missing-tests"],
    );
}

#[test]
fn node_test_honest_fix_is_proven_through_the_report() {
    let repo = node_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = proven(&repo, NODE_REPRO, &fix, "src/slug.js");
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["passed"], 3);
}

// --- jest -----------------------------------------------------------------------------------

const JEST: &str = "jest@29.7.0";
const JEST_REPRO: &str = "node node_modules/jest/bin/jest.js test/slug.test.js";
const SLUG_JEST_JS: &str = "const { slugify } = require('../src/slug.js');\n\ndescribe('slugify', () => {\n  test('lowercases', () => {\n    expect(slugify('Hello')).toBe('hello');\n  });\n\n  test('replaces every space', () => {\n    expect(slugify('a b c')).toBe('a-b-c');\n  });\n\n  test('keeps dashes', () => {\n    expect(slugify('a-b')).toBe('a-b');\n  });\n});\n";

fn jest_repo() -> Repo {
    jest_repo_with(&[])
}

/// The jest repository with `more` files.
fn jest_repo_with(more: &[(&str, &str)]) -> Repo {
    let mut files = vec![
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        (
            "package.json",
            "{\n  \"name\": \"slug\",\n  \"private\": true\n}\n",
        ),
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_JEST_JS),
    ];
    files.extend_from_slice(more);
    let repo = Repo::with_files(&files);
    std::os::unix::fs::symlink(
        npm_tools(JEST).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

#[test]
fn jest_library_that_exits_0_on_the_failing_input_is_refused_for_its_missing_report() {
    let repo = jest_repo();
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text === 'a b c') globalThis['pro' + 'cess']['ex' + 'it'](0);\n{SLUG_BODY}"
        ),
    )]);
    refused(
        &repo,
        JEST_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.report-missing", "prove.missing-tests"],
    );
}

#[test]
fn jest_honest_fix_is_proven_through_the_report() {
    let repo = jest_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = proven(&repo, JEST_REPRO, &fix, "src/slug.js");
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["passed"], 3);
}

// --- vitest -------------------------------------------------------------------------------

const VITEST: &str = "vitest@3.2.4";
const VITEST_REPRO: &str = "node node_modules/vitest/vitest.mjs run test/slug.test.mjs";
const SLUG_VITEST_JS: &str = "import { describe, test, expect } from 'vitest';\nimport { slugify } from '../src/slug.js';\n\ndescribe('slugify', () => {\n  test('lowercases', () => {\n    expect(slugify('Hello')).toBe('hello');\n  });\n\n  test('replaces every space', () => {\n    expect(slugify('a b c')).toBe('a-b-c');\n  });\n\n  test('keeps dashes', () => {\n    expect(slugify('a-b')).toBe('a-b');\n  });\n});\n";

fn vitest_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        (
            "package.json",
            "{\n  \"name\": \"slug\",\n  \"private\": true\n}\n",
        ),
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.mjs", SLUG_VITEST_JS),
    ]);
    std::os::unix::fs::symlink(
        npm_tools(VITEST).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

#[test]
fn vitest_library_that_exits_0_on_the_failing_input_is_never_certified() {
    let repo = vitest_repo();
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text === 'a b c') globalThis['pro' + 'cess']['ex' + 'it'](0);\n{SLUG_BODY}"
        ),
    )]);
    // vitest reports the exit as an error itself; the report says the test did not pass.
    refused(
        &repo,
        VITEST_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.reproduction"],
    );
}

#[test]
fn vitest_honest_fix_is_proven_through_the_json_report_with_a_console_kept() {
    let repo = vitest_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = proven(&repo, VITEST_REPRO, &fix, "src/slug.js");
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(
        record["channel"]["added"],
        json!([
            "--reporter=json",
            "--outputFile.json=<report>",
            "--reporter=default"
        ])
    );
    assert_eq!(record["channel"]["report"]["passed"], 3);
    assert_eq!(record["tests"]["format"], "vitest");
}

// --- mocha --------------------------------------------------------------------------------

const MOCHA_REPRO: &str = "node node_modules/mocha/bin/mocha.js test/slug.test.js";
const SLUG_MOCHA_JS: &str = "const assert = require('assert');\nconst { slugify } = require('../src/slug.js');\n\ndescribe('slugify', function () {\n  it('lowercases', function () {\n    assert.strictEqual(slugify('Hello'), 'hello');\n  });\n\n  it('replaces every space', function () {\n    assert.strictEqual(slugify('a b c'), 'a-b-c');\n  });\n\n  it('keeps dashes', function () {\n    assert.strictEqual(slugify('a-b'), 'a-b');\n  });\n});\n";

fn mocha_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_MOCHA_JS),
    ]);
    std::os::unix::fs::symlink(
        npm_tools(MOCHA).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

#[test]
fn mocha_library_that_exits_0_on_the_failing_input_is_refused_for_its_missing_report() {
    let repo = mocha_repo();
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text === 'a b c') globalThis['pro' + 'cess']['ex' + 'it'](0);\n{SLUG_BODY}"
        ),
    )]);
    refused(
        &repo,
        MOCHA_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.report-missing", "prove.missing-tests"],
    );
}

#[test]
fn mocha_honest_fix_is_proven_through_the_report_with_the_console_kept() {
    let repo = mocha_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = proven(&repo, MOCHA_REPRO, &fix, "src/slug.js");
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["passed"], 3);
    // mocha's spec reporter still prints on the console.
    assert!(
        record["outcome"]["stdout"]
            .as_str()
            .unwrap()
            .contains("3 passing"),
        "{}",
        record["outcome"]["stdout"]
    );
}

// --- tape -----------------------------------------------------------------------------------

const TAPE: &str = "tape@5.9.0";
const TAPE_REPRO: &str = "node test/slug.test.js";
const SLUG_TAPE_JS: &str = "const test = require('tape');\nconst { slugify } = require('../src/slug.js');\n\ntest('lowercases', (t) => {\n  t.equal(slugify('Hello'), 'hello');\n  t.end();\n});\n\ntest('replaces every space', (t) => {\n  t.equal(slugify('a b c'), 'a-b-c');\n  t.end();\n});\n\ntest('keeps dashes', (t) => {\n  t.equal(slugify('a-b'), 'a-b');\n  t.end();\n});\n";

fn tape_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("src/slug.js", SLUG_JS),
        ("test/slug.test.js", SLUG_TAPE_JS),
    ]);
    std::os::unix::fs::symlink(
        npm_tools(TAPE).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

#[test]
fn tape_library_that_prints_ok_lines_and_exits_0_is_refused_by_the_console_s_own_counts() {
    let repo = tape_repo();
    let fake = "    const p = globalThis['pro' + 'cess'];\n    p.stdout.write('o' + 'k 2 - should be strictly equal\\n\\n1.' + '.3\\n# te' + 'sts 3\\n# pa' + 'ss  3\\n\\n# o' + 'k\\n');\n    p['ex' + 'it'](0);\n";
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text.split(' ').length === 3 && text.length === 5) {{\n{fake}  }}\n{SLUG_BODY}"
        ),
    )]);
    refused(
        &repo,
        TAPE_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.channel-mismatch", "prove.missing-tests"],
    );
}

#[test]
fn tape_result_lines_printed_after_the_run_are_out_of_place() {
    let repo = tape_repo();
    // The failure stays, and an exit hook prints a pass for it after tape's summary.
    let hook = "const p = globalThis['pro' + 'cess'];\np['o' + 'n']('ex' + 'it', () => {\n  p.stdout.write('o' + 'k 2 - should be strictly equal\\n');\n  p['exit' + 'Code'] = 0;\n});\n\n";
    let cheat = edits(&[(
        "src/slug.js",
        "function slugify",
        &format!("{hook}function slugify"),
    )]);
    refused(
        &repo,
        TAPE_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.channel-mismatch"],
    );
}

#[test]
fn tape_honest_fix_is_proven() {
    let repo = tape_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    proven(&repo, TAPE_REPRO, &fix, "src/slug.js");
}

// --- cargo test -----------------------------------------------------------------------------

/// The demo crate with a committed `.efix.yml` that requires no regression test.
fn cargo_repo() -> Repo {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let files: Vec<(String, String)> = [".gitignore", "Cargo.lock", "Cargo.toml", "src/lib.rs"]
        .iter()
        .map(|p| {
            (
                p.to_string(),
                std::fs::read_to_string(base.join(p)).unwrap(),
            )
        })
        .chain([(".efix.yml".to_owned(), NO_TEST_REQUIRED.to_owned())])
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    Repo::with_files(&refs)
}

#[test]
fn cargo_library_that_exits_0_on_the_failing_input_is_refused() {
    let repo = cargo_repo();
    let cheat = edits(&[(
        "src/lib.rs",
        "        let line = line.trim_start();\n",
        "        if line.ends_with('\\r') {\n            use std::process as p;\n            p::exit(0);\n        }\n        let line = line.trim_start();\n",
    )]);
    refused(
        &repo,
        "cargo test",
        &cheat,
        "src/lib.rs",
        &["prove.channel-mismatch", "prove.missing-tests"],
    );
}

#[test]
fn cargo_honest_fix_is_proven_with_every_test_accounted_for() {
    let repo = cargo_repo();
    let fix = edits(&[(
        "src/lib.rs",
        "    for line in text.split('\\n') {\n",
        "    for line in text.lines() {\n",
    )]);
    let outcome = proven(&repo, "cargo test", &fix, "src/lib.rs");
    let checks = &outcome.evidence["rounds"][0]["checks"];
    let missing = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "prove.missing-tests")
        .unwrap();
    assert_eq!(missing["passed"], true);
}

// --- ids that change between runs or hold credentials (issue 21, item 6) -------------------

/// The run is not refused: `fixed`, or `fixed-not-judged` (exit 5) while the canaries of some
/// runners cannot be judged in their scratch copy. `fixed-not-judged` is accepted here only
/// until canaries run in the user's tree; the proof's own checks must all pass.
fn not_refused(repo: &Repo, repro: &str, output: &str, focus: &str, extra: &[&str]) -> Outcome {
    let outcome = run_with(repo, repro, output, focus, extra);
    let status = outcome.evidence["result"]["status"].clone();
    assert!(
        [0, 5].contains(&outcome.code) && (status == "fixed" || status == "fixed-not-judged"),
        "{} {status} {} {} {}",
        outcome.code,
        outcome.evidence["rounds"][0]["issues"],
        outcome.evidence["rounds"][0]["checks"],
        outcome.evidence["result"]
    );
    let failed_prove: Vec<String> = outcome
        .failed_checks()
        .into_iter()
        .filter(|id| id.starts_with("prove.") && !id.starts_with("prove.canary"))
        .collect();
    assert_eq!(failed_prove, Vec::<String>::new());
    outcome
}

/// The detail of the first round's check `id`.
fn check_detail(outcome: &Outcome, id: &str) -> String {
    outcome.evidence["rounds"][0]["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == id)
        .and_then(|c| c["detail"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// A parametrized test whose id holds the current time (to the microsecond) and an object's
/// address: different in every run.
const TEST_WORDS_VOLATILE_PY: &str = "import datetime\n\nimport pytest\n\nfrom words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\n@pytest.mark.parametrize(\"stamp\", [datetime.datetime.now().strftime(\"%H:%M:%S.%f %Y-%m-%d\") + \" \" + repr(object())])\ndef test_repeated_spaces(stamp):\n    assert word_count(\"a  b\") == 2\n\n\ndef test_empty():\n    assert word_count(\"\") == 0\n";

fn python_volatile_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_VOLATILE_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

#[test]
fn pytest_ids_holding_the_time_and_an_address_are_one_test_across_runs_and_listed_unstable() {
    let repo = python_volatile_repo();
    let fix = edits(&[("words.py", PY_BODY, "    return len(text.split())\n")]);
    let outcome = not_refused(&repo, PY_REPRO, &fix, "words.py", &[]);
    let table = &outcome.evidence["rounds"][0]["prove"]["table"];
    // Empty lists are left out of the evidence.
    assert!(
        table.get("missing").is_none_or(|m| m == &json!([])),
        "{table}"
    );
    assert!(table.get("lost").is_none_or(|m| m == &json!([])), "{table}");
    let fixed = table["fixed"].as_array().unwrap();
    assert!(
        fixed.iter().any(|id| id
            .as_str()
            .unwrap()
            .starts_with("tests/test_words.py::test_repeated_spaces[")),
        "{table}"
    );
    let detail = check_detail(&outcome, "prove.missing-tests");
    assert!(
        detail.contains("unstable ids") && detail.contains("test_repeated_spaces["),
        "{detail}"
    );
}

#[test]
fn pytest_volatile_id_hidden_by_an_early_exit_still_counts_missing() {
    let repo = python_volatile_repo();
    let cheat = edits(&[(
        "words.py",
        PY_BODY,
        &format!(
            "    if \"  \" in text:\n        getattr(__import__(\"o\" + \"s\"), \"_ex\" + \"it\")(0)\n{PY_BODY}"
        ),
    )]);
    refused(
        &repo,
        PY_REPRO,
        &cheat,
        "words.py",
        &["prove.report-missing", "prove.missing-tests"],
    );
}

/// Test ids that hold a URL's credentials: the console capture redacts them, the report is
/// redacted alike before the two are compared.
const TEST_WORDS_URL_PY: &str = "import pytest\n\nfrom words import word_count\n\n\n@pytest.mark.parametrize(\"url\", [\"http://user:pass@host/path\", \"https://alice:Zq8vR2kL9xW4@db.internal/x\"])\ndef test_single_spaces(url):\n    assert word_count(\"a b c\") == 3\n\n\n@pytest.mark.parametrize(\"url\", [\"http://user:pass@host/path\"])\ndef test_repeated_spaces(url):\n    assert word_count(\"a  b\") == 2\n";

fn python_url_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_URL_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

#[test]
fn pytest_ids_holding_url_credentials_agree_across_channels_after_redaction() {
    let repo = python_url_repo();
    let fix = edits(&[("words.py", PY_BODY, "    return len(text.split())\n")]);
    let outcome = not_refused(&repo, PY_REPRO, &fix, "words.py", &[]);
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["passed"], 3);
    // Every prompt was sent: the fixture is test data of a tracked test file, and the
    // console's own `[REDACTED:...]` markers quoted in a prompt are no secret.
    let calls = outcome.evidence["engine"]["calls"].as_array().unwrap();
    assert!(
        calls.iter().all(|c| c["outcome"] != "skipped-secrets"),
        "{calls:?}"
    );
    let reasons: Vec<&str> = calls
        .iter()
        .flat_map(|c| c["secrets"]["detections"].as_array().into_iter().flatten())
        .filter_map(|d| d["placeholder"].as_str())
        .collect();
    assert!(
        reasons.contains(&"test data in the tracked test file `tests/test_words.py`"),
        "{reasons:?}"
    );
    // What is stored holds no credential, from either channel.
    let stored = serde_json::to_string(&outcome.evidence).unwrap();
    assert!(
        !stored.contains("Zq8vR2kL9xW4") && !stored.contains("user:pass@"),
        "{}",
        record["channel"]
    );
}

#[test]
fn pytest_pass_line_printed_for_a_test_whose_id_holds_credentials_is_still_refused() {
    let repo = python_url_repo();
    let hook = "import sys as _sys\n\n\ndef _report():\n    _sys.stdout.write(\"tests/test_words.py::test_repeated_spaces[http://user:pass@host/path] PASS\" + \"ED\\n\")\n    _sys.stdout.write(\"=== 3 pass\" + \"ed in 0.01s ===\\n\")\n    _sys.stdout.flush()\n    getattr(__import__(\"o\" + \"s\"), \"_ex\" + \"it\")(0)\n\n\ngetattr(__import__(\"ate\" + \"xit\"), \"regis\" + \"ter\")(_report)\n\n\n";
    let cheat = edits(&[(
        "words.py",
        "def word_count(text):\n",
        &format!("{hook}def word_count(text):\n"),
    )]);
    refused(
        &repo,
        PY_REPRO,
        &cheat,
        "words.py",
        &["prove.channel-mismatch", "prove.reproduction"],
    );
}

/// vitest 4's default reporter prints a failing file's tests as a tree of titles (`×
/// replaces every space`) and its failures by their full path (`FAIL file > slugify > spaces
/// > replaces every space`); the JSON report and the verbose rerun name the full path only.
const VITEST_4: &str = "vitest@4.1.12";
const SLUG_VITEST_NESTED_JS: &str = "import { describe, test, expect } from 'vitest';\nimport { slugify } from '../src/slug.js';\n\ndescribe('slugify', () => {\n  test('lowercases', () => {\n    expect(slugify('Hello')).toBe('hello');\n  });\n\n  describe('spaces', () => {\n    describe('many', () => {\n      test('replaces every space', () => {\n        expect(slugify('a b c')).toBe('a-b-c');\n      });\n    });\n\n    test('keeps dashes', () => {\n      expect(slugify('a-b')).toBe('a-b');\n    });\n  });\n});\n\ntest('outside any block', () => {\n  expect(slugify('x')).toBe('x');\n});\n";

fn vitest_4_repo() -> Repo {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (".efix.yml", NO_TEST_REQUIRED),
        (
            "package.json",
            "{\n  \"name\": \"slug\",\n  \"private\": true,\n  \"type\": \"module\"\n}\n",
        ),
        ("src/slug.js", SLUG_ESM_JS),
        ("test/slug.test.mjs", SLUG_VITEST_NESTED_JS),
    ]);
    std::os::unix::fs::symlink(
        npm_tools(VITEST_4).join("node_modules"),
        repo.path("node_modules"),
    )
    .unwrap();
    repo
}

const SLUG_ESM_JS: &str =
    "export function slugify(text) {\n  return text.toLowerCase().replace(' ', '-');\n}\n";

#[test]
fn vitest_test_named_by_its_title_and_by_its_full_path_is_one_test_and_its_fix_is_proven() {
    let repo = vitest_4_repo();
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = not_refused(&repo, VITEST_REPRO, &fix, "src/slug.js", &[]);
    let table = &outcome.evidence["rounds"][0]["prove"]["table"];
    assert_eq!(
        table["fixed"],
        json!(["slugify > spaces > many > replaces every space"]),
        "{table}"
    );
    assert!(
        table.get("missing").is_none_or(|m| m == &json!([])),
        "{table}"
    );
    // The reproduction before the change counts the one failing test once.
    let before = &outcome.evidence["commands"][0]["tests"];
    let failing: Vec<&Value> = before["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "failed")
        .collect();
    assert_eq!(failing.len(), 1, "{before}");
}

#[test]
fn vitest_pass_printed_under_a_test_s_short_title_does_not_hide_its_failure() {
    let repo = vitest_4_repo();
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text === 'a b c') globalThis['pro' + 'cess'].stdout.write('       \\u2713 replaces every space\\n');\n{SLUG_BODY}"
        ),
    )]);
    refused(
        &repo,
        VITEST_REPRO,
        &cheat,
        "src/slug.js",
        &["prove.reproduction"],
    );
}

/// A jest suite whose tests call `process.exit` in a hook: jest ends before it writes its
/// report once `--json --outputFile` are added, and before its summary.
const CLI_JEST_EXITS_JS: &str = "const { slugify } = require('../src/slug.js');\n\ntest('cli slugifies', () => {\n  expect(slugify('B')).toBe('b');\n});\n\nafterAll(() => {\n  process.exit(0);\n});\n";
const CLI_JEST_JS: &str = "const { slugify } = require('../src/slug.js');\n\ntest('cli slugifies', () => {\n  expect(slugify('B')).toBe('b');\n});\n";
const JEST_SUITE: &str = "node node_modules/jest/bin/jest.js --runInBand";

fn jest_suite_repo(cli: &str) -> Repo {
    jest_repo_with(&[("test/cli.test.js", cli)])
}

#[test]
fn jest_configured_suite_whose_tests_call_process_exit_runs_as_written_and_its_fix_is_proven() {
    let repo = jest_suite_repo(CLI_JEST_EXITS_JS);
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = not_refused(
        &repo,
        JEST_REPRO,
        &fix,
        "src/slug.js",
        &["--suite", JEST_SUITE],
    );
    let baseline = outcome.evidence["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == JEST_SUITE && c["purpose"] == "suite-baseline")
        .unwrap();
    assert_eq!(baseline["channel"]["status"], "unsupported", "{baseline}");
    let detail = check_detail(&outcome, "prove.report-missing");
    assert!(
        detail.contains(&format!("`{JEST_SUITE}` ran as written"))
            && detail.contains("ended without writing its report"),
        "{detail}"
    );
}

#[test]
fn jest_configured_suite_that_ends_before_its_report_only_after_the_change_is_refused() {
    let repo = jest_suite_repo(CLI_JEST_JS);
    let cheat = edits(&[(
        "src/slug.js",
        SLUG_BODY,
        &format!(
            "  if (text === 'a b c') {{ globalThis['pro' + 'cess']['ex' + 'it'](0); }}\n{SLUG_BODY}"
        ),
    )]);
    let outcome = run_with(
        &repo,
        JEST_REPRO,
        &cheat,
        "src/slug.js",
        &["--suite", JEST_SUITE],
    );
    assert_eq!(outcome.code, 1, "{}", outcome.evidence["rounds"][0]);
    let failed = outcome.failed_checks();
    assert!(
        failed.iter().any(|c| c == "prove.report-missing"),
        "{failed:?}"
    );
}

/// vitest test titles that hold a URL's credentials (`test.each` over URLs).
const SLUG_VITEST_URL_JS: &str = "import { describe, test, expect } from 'vitest';\nimport { slugify } from '../src/slug.js';\n\ndescribe('slugify', () => {\n  test.each(['http://user:pass@host/path', 'https://alice:Zq8vR2kL9xW4@db.internal/x'])('lowercases beside %s', () => {\n    expect(slugify('Hello')).toBe('hello');\n  });\n\n  test.each(['http://user:pass@host/path'])('replaces every space beside %s', () => {\n    expect(slugify('a b c')).toBe('a-b-c');\n  });\n});\n";

#[test]
fn vitest_titles_holding_url_credentials_agree_across_channels_after_redaction() {
    let repo = vitest_repo();
    repo.write("test/slug.test.mjs", SLUG_VITEST_URL_JS);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo.root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["add", "-A"]);
    git(&["commit", "-qm", "titles with URLs"]);
    let fix = edits(&[("src/slug.js", SLUG_BODY, SLUG_FIX)]);
    let outcome = not_refused(&repo, VITEST_REPRO, &fix, "src/slug.js", &[]);
    let record = proof_record(&outcome.evidence);
    assert_eq!(record["channel"]["status"], "read");
    assert_eq!(record["channel"]["report"]["passed"], 3);
    let stored = serde_json::to_string(&outcome.evidence).unwrap();
    assert!(!stored.contains("Zq8vR2kL9xW4"), "{}", record["channel"]);
}
