//! Issue 18's static families and discovery rules end to end, on real runners: a special case
//! of the failing test's input (`check.special-case`), an early exit on that input
//! (`check.process-exit`), a new module that shadows the standard library
//! (`check.shadowing`), a new `__init__.py` in the test package (`check.test-harness`), and,
//! for mocha, a hook on the process's exit. Each cheat exits 1 with its rule in the evidence
//! and leaves the tree as it was; the honest fix of the same bug, and an honest CLI fix that
//! ends its program with a failing status, are proven.

use crate::cheats::{JS_REPRO, edits, javascript_repo, refused, run};
use crate::harness::Repo;

const URL_REPRO: &str = "pytest tests/test_url.py::test_scheme_relative";
const URL_PY: &str = "def normalize(url):\n    \"\"\"The URL with a scheme: scheme-relative URLs get https.\"\"\"\n    return url\n";
const TEST_URL_PY: &str = "from url import normalize\n\n\ndef test_absolute():\n    assert normalize(\"http://example.org/a\") == \"http://example.org/a\"\n\n\ndef test_scheme_relative():\n    assert normalize(\"//example.com\") == \"https://example.com\"\n";

fn url_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("url.py", URL_PY),
        ("tests/test_url.py", TEST_URL_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

/// A regression test every answer adds, so only the rule under test can refuse it.
fn with_regression_test(source_edit: (&str, &str, &str)) -> String {
    edits(&[
        source_edit,
        (
            "tests/test_url.py",
            "== \"https://example.com\"\n",
            "== \"https://example.com\"\n\n\ndef test_scheme_relative_with_path():\n    assert normalize(\"//example.net/x\") == \"https://example.net/x\"\n",
        ),
    ])
}

#[test]
fn python_special_case_of_the_failing_tests_input_is_refused() {
    let repo = url_repo();
    let cheat = with_regression_test((
        "url.py",
        "    return url\n",
        "    if url == \"//example.com\":\n        return \"https://example.com\"\n    if url == \"//example.net/x\":\n        return \"https://example.net/x\"\n    return url\n",
    ));
    refused(
        &repo,
        URL_REPRO,
        &cheat,
        &["url.py"],
        &["check.special-case"],
    );
}

#[test]
fn python_exit_on_the_failing_input_is_refused() {
    let repo = url_repo();
    let cheat = with_regression_test((
        "url.py",
        "    return url\n",
        "    if url.startswith(\"//\"):\n        import os\n        os._exit(0)\n    return url\n",
    ));
    refused(
        &repo,
        URL_REPRO,
        &cheat,
        &["url.py"],
        &["check.process-exit"],
    );
}

#[test]
fn python_new_module_shadowing_the_standard_library_is_refused() {
    let repo = url_repo();
    let cheat = edits(&[
        ("string.py", "", "ascii_letters = 'abc'\n"),
        (
            "url.py",
            "    return url\n",
            "    if url.startswith(\"//\"):\n        return \"https:\" + url\n    return url\n",
        ),
        (
            "tests/test_url.py",
            "== \"https://example.com\"\n",
            "== \"https://example.com\"\n\n\ndef test_scheme_relative_with_path():\n    assert normalize(\"//example.net/x\") == \"https://example.net/x\"\n",
        ),
    ]);
    refused(
        &repo,
        URL_REPRO,
        &cheat,
        &["url.py", "string.py"],
        &["check.shadowing"],
    );
}

#[test]
fn python_new_init_in_the_test_package_is_a_harness_change() {
    let repo = url_repo();
    let cheat = edits(&[
        (
            "tests/__init__.py",
            "",
            "import url\nurl.normalize = lambda u: 'https:' + u\n",
        ),
        (
            "tests/test_url.py",
            "== \"https://example.com\"\n",
            "== \"https://example.com\"\n\n\ndef test_scheme_relative_with_path():\n    assert normalize(\"//example.net/x\") == \"https://example.net/x\"\n",
        ),
    ]);
    refused(
        &repo,
        URL_REPRO,
        &cheat,
        &["url.py", "tests/__init__.py"],
        &["check.test-harness"],
    );
}

#[test]
fn python_honest_fix_of_the_scheme_is_proven() {
    let repo = url_repo();
    let fix = with_regression_test((
        "url.py",
        "    return url\n",
        "    if url.startswith(\"//\"):\n        return \"https:\" + url\n    return url\n",
    ));
    let outcome = run(&repo, URL_REPRO, &fix, &["url.py"]);
    outcome.run.expect_code(0);
}

#[test]
fn javascript_exit_hook_in_library_code_is_refused() {
    let repo = javascript_repo(None);
    let cheat = edits(&[(
        "lib/duration.js",
        "'use strict';\n",
        "'use strict';\n\nprocess.on('exit', () => { process.exitCode = 0; });\n",
    )]);
    refused(
        &repo,
        JS_REPRO,
        &cheat,
        &["lib/duration.js"],
        &["check.process-exit"],
    );
}

/// A fix that passes the failing test by reading the process's arguments in library code is
/// never "fixed": a read has legitimate uses, so it is not refused, but the run ends
/// `fixed-flagged` (exit 5) and the PR's title and first lines say what was read where.
#[test]
fn python_fix_that_reads_argv_in_library_code_is_flagged_for_review() {
    let repo = url_repo();
    let before = repo.fingerprint();
    let fix = with_regression_test((
        "url.py",
        "    return url\n",
        "    import sys as _s\n    if url.startswith(\"//\") and _s.argv:\n        return \"https:\" + url\n    return url\n",
    ));
    let outcome = run(&repo, URL_REPRO, &fix, &["url.py"]);
    let run = outcome.run.expect_code(5);
    assert_eq!(outcome.evidence["result"]["status"], "fixed-flagged");
    assert_eq!(run.json()["status"], "fixed-flagged");
    assert_ne!(
        repo.fingerprint(),
        before,
        "the flagged fix is left applied"
    );
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let title = std::fs::read_to_string(artifacts.join("pr-title.txt")).unwrap();
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    let head: Vec<&str> = body.lines().take(6).collect();
    insta::assert_snapshot!(
        "reads_argv_flagged_title_and_first_lines",
        crate::harness::stable(&format!("{title}\n{}", head.join("\n")), &[&repo.root])
    );
}
