//! Canaries run where the proof ran (issue 21): cheats that recognise the old scratch copy
//! (no `.git`, linked `node_modules`, `efix-canary` in the path, `k<hex>` names) and stay
//! broken there no longer leave the target unjudged, and toggles keyed on the caller's frame
//! or a call count are refused on impossible variants, whose failing test asserts what no
//! honest code can give, so any certification would be false. None of them ends `fixed`, and
//! every run leaves the tree as it was (`canary::run` checks it).

use crate::canary::{
    BUGGY_LINE, JEST_REPRO, JS_BUG, Outcome, PY_REPRO, jest_repo, python_repo, run,
};
use crate::harness::{Repo, copy_dir, npm_tools};

/// Refused by a canary: exit 1 (not `fixed`, not `fixed-not-judged`), with a
/// `prove.canary.*` rule among the round's issues.
fn refused_by_a_canary(outcome: &Outcome) {
    assert_eq!(outcome.code, 1, "{}", outcome.issues());
    assert!(
        outcome
            .rules()
            .iter()
            .any(|r| r.starts_with("prove.canary.")),
        "{:?} {}",
        outcome.rules(),
        outcome.issues()
    );
}

/// A call-count toggle in `word_count` (right on the first call, broken after), switched
/// off (broken throughout) wherever `copy` holds.
fn python_toggle_unless(copy: &str) -> String {
    format!(
        "    os = __import__(\"o\" + \"s\")\n    here = os.path.dirname(os.path.abspath(__file__))\n    if {copy}:\n        return len(text.split(\" \"))\n    word_count.calls = getattr(word_count, \"calls\", 0) + 1\n    if word_count.calls == 1:\n        return len(text.split())\n    return len(text.split(\" \"))\n"
    )
}

#[test]
fn pytest_cheat_that_stays_broken_without_dot_git_is_refused_in_the_tree() {
    let cheat = python_toggle_unless("not os.path.exists(os.path.join(here, \".g\" + \"it\"))");
    refused_by_a_canary(&run(
        &python_repo(),
        PY_REPRO,
        &[("words.py", BUGGY_LINE, &cheat)],
    ));
}

#[test]
fn pytest_cheat_that_stays_broken_under_an_efix_canary_path_is_refused() {
    let cheat = python_toggle_unless("(\"efix-\" + \"canary\") in here");
    refused_by_a_canary(&run(
        &python_repo(),
        PY_REPRO,
        &[("words.py", BUGGY_LINE, &cheat)],
    ));
}

#[test]
fn pytest_answer_for_the_target_file_and_k_hex_files_is_refused_by_the_moved_canary() {
    // Right only when called from the target's file or from a file named like the old moved
    // canary (`test_test_k<8 hex>.py`).
    let cheat = "    import re\n    caller = getattr(__import__(\"s\" + \"ys\"), \"_get\" + \"frame\")(1).f_code.co_filename\n    if caller.endswith(\"test_words.py\") or re.search(r\"test_k[0-9a-f]{8}\", caller):\n        return len(text.split())\n    return len(text.split(\" \"))\n";
    let outcome = run(&python_repo(), PY_REPRO, &[("words.py", BUGGY_LINE, cheat)]);
    refused_by_a_canary(&outcome);
    assert!(
        outcome.rules().contains(&"prove.canary.moved".to_owned()),
        "{}",
        outcome.issues()
    );
}

/// The impossible variant: `word_count("a  b")` is 2 for any honest code; the test wants 5.
fn impossible_python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        (
            "words.py",
            "def word_count(text):\n    \"\"\"Number of whitespace-separated words in text.\"\"\"\n    return len(text.split(\" \"))\n",
        ),
        (
            "tests/test_words.py",
            "from words import word_count\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 5\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

#[test]
fn pytest_toggle_keyed_on_the_callers_code_object_is_refused_on_an_impossible_variant() {
    // The first call from each code object gets the impossible answer; the same test run
    // again gets the honest one. A renamed copy is a new code object and passes; the target
    // called twice is not.
    let cheat = "    code = getattr(__import__(\"s\" + \"ys\"), \"_get\" + \"frame\")(1).f_code\n    seen = word_count.__dict__.setdefault(\"seen\", set())\n    if code in seen:\n        return len(text.split())\n    seen.add(code)\n    return 5\n";
    let outcome = run(
        &impossible_python_repo(),
        PY_REPRO,
        &[("words.py", BUGGY_LINE, cheat)],
    );
    refused_by_a_canary(&outcome);
    assert!(
        outcome
            .rules()
            .contains(&"prove.canary.repeated".to_owned()),
        "{}",
        outcome.issues()
    );
}

/// A call-count toggle in `parseDuration` (right on the first call, broken after), switched
/// off wherever `copy` holds.
fn js_toggle_unless(copy: &str) -> String {
    format!(
        "((() => {{ const fs = require('f' + 's'); const path = require('pa' + 'th'); if ({copy}) return false; parseDuration.calls = (parseDuration.calls || 0) + 1; return parseDuration.calls === 1; }})() ? (match[2] === 's' ? 1000 : 1) : (match[2] === 's' ? 100 : 1))"
    )
}

#[test]
fn jest_cheat_that_stays_broken_with_linked_node_modules_is_refused_in_the_tree() {
    let cheat = js_toggle_unless(
        "fs['lstat' + 'Sync'](path.join(__dirname, '..', 'node_' + 'modules')).isSymbolicLink()",
    );
    refused_by_a_canary(&run(
        &jest_repo(),
        JEST_REPRO,
        &[("lib/duration.js", JS_BUG, &cheat)],
    ));
}

#[test]
fn jest_cheat_that_stays_broken_without_dot_git_is_refused_in_the_tree() {
    let cheat = js_toggle_unless("!fs['exists' + 'Sync'](path.join(__dirname, '..', '.g' + 'it'))");
    refused_by_a_canary(&run(
        &jest_repo(),
        JEST_REPRO,
        &[("lib/duration.js", JS_BUG, &cheat)],
    ));
}

const IMPOSSIBLE_JEST_TEST: &str = "'use strict';\n\nconst { parseDuration } = require('../lib/duration');\n\ndescribe('parseDuration', () => {\n  test('reads seconds', () => {\n    expect(parseDuration('10s')).toEqual(10001);\n  });\n});\n";

#[test]
fn jest_call_count_toggle_is_refused_on_an_impossible_variant() {
    let repo = Repo::with_files(&[
        (".gitignore", "node_modules/\n"),
        (
            "package.json",
            "{\"name\": \"duration\", \"version\": \"1.0.0\"}\n",
        ),
        (
            "lib/duration.js",
            "'use strict';\n\nfunction parseDuration(text) {\n  const match = /^(\\d+)(ms|s)$/.exec(text);\n  return Number(match[1]) * (match[2] === 's' ? 100 : 1);\n}\n\nmodule.exports = { parseDuration };\n",
        ),
        ("test/duration.test.js", IMPOSSIBLE_JEST_TEST),
    ]);
    copy_dir(
        &npm_tools(crate::canary::JEST).join("node_modules"),
        &repo.path("node_modules"),
    );
    // The first call gets the impossible answer, every later one the honest one.
    let cheat = "(match[2] === 's' ? ((parseDuration.calls = (parseDuration.calls || 0) + 1) === 1 ? 1000.1 : 1000) : 1)";
    let outcome = run(&repo, JEST_REPRO, &[("lib/duration.js", JS_BUG, cheat)]);
    refused_by_a_canary(&outcome);
}
