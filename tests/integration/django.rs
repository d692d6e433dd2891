//! Django's runner is one efix knows: a project's `tests/runtests.py` on Django's
//! `DiscoverRunner` (as Django's own suite is run), with Django installed from PyPI into a test
//! venv. With no suite configured the proof tries the whole suite, then the app label holding
//! the reproduction's test, then its module; its `-v 2` output is read as unittest's, and the
//! canaries are written with labels relative to `tests/`.

use serde_json::json;

use crate::canary::{Outcome, all_canaries_passed, run_with};
use crate::harness::{Efix, Repo};

/// A `runtests.py` shaped like Django's: labels are modules under `tests/`, no label runs every
/// `*_tests` app, `-v`, `-k`, `--failfast` and `--parallel` are read.
const RUNTESTS_PY: &str = r#"#!/usr/bin/env python3
import argparse
import os
import sys

import django
from django.conf import settings
from django.test.utils import get_runner

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

parser = argparse.ArgumentParser()
parser.add_argument("labels", nargs="*")
parser.add_argument("-v", "--verbosity", type=int, default=1)
parser.add_argument("-k", dest="patterns", action="append")
parser.add_argument("--failfast", action="store_true")
parser.add_argument("--parallel", nargs="?", const="auto", default=None)
options = parser.parse_args()

settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    INSTALLED_APPS=[],
)
django.setup()
labels = options.labels or sorted(
    name
    for name in os.listdir(HERE)
    if name.endswith("_tests") and os.path.isdir(os.path.join(HERE, name))
)
runner = get_runner(settings)(
    verbosity=options.verbosity,
    failfast=options.failfast,
    test_name_patterns=options.patterns,
)
sys.exit(bool(runner.run_tests(labels)))
"#;

const WORDS_PY: &str = "def _words(text):\n    return text.split(\" \")\n\n\ndef word_count(text):\n    return len(_words(text))\n\n\ndef first_word(text):\n    return _words(text)[0]\n";
const TEST_COUNT_PY: &str = "from django.test import SimpleTestCase\n\nfrom words import word_count\n\n\nclass CountTests(SimpleTestCase):\n    def test_single_spaces(self):\n        self.assertEqual(word_count(\"a b c\"), 3)\n\n    def test_repeated_spaces(self):\n        self.assertEqual(word_count(\"a  b\"), 2)\n";
const TEST_FIRST_PY: &str = "from django.test import SimpleTestCase\n\nfrom words import first_word\n\n\nclass FirstWordTests(SimpleTestCase):\n    def test_keeps_its_case(self):\n        self.assertEqual(first_word(\"Hello world\"), \"Hello\")\n";

const REPRO: &str =
    "python tests/runtests.py words_tests.test_count.CountTests.test_repeated_spaces";
const BUGGY: &str = "    return text.split(\" \")\n";

fn django_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("words.py", WORDS_PY),
        ("tests/runtests.py", RUNTESTS_PY),
        ("tests/words_tests/__init__.py", ""),
        ("tests/words_tests/test_count.py", TEST_COUNT_PY),
        ("tests/first_tests/__init__.py", ""),
        ("tests/first_tests/test_first.py", TEST_FIRST_PY),
    ])
}

fn run(repo: &Repo, fixed: &str) -> Outcome {
    run_with(
        repo,
        REPRO,
        &[("words.py", BUGGY, fixed)],
        Efix::with_django,
    )
}

#[test]
fn django_real_fix_is_proven_by_the_whole_suite_and_passes_every_canary() {
    let repo = django_repo();
    let outcome = run(&repo, "    return text.split()\n");
    all_canaries_passed(&outcome);
    let evidence = &outcome.evidence;
    assert_eq!(
        evidence["request"]["derived-suite"],
        "python tests/runtests.py"
    );
    let forms: Vec<(&str, &str)> = evidence["request"]["suite-forms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["command"].as_str().unwrap()))
        .collect();
    assert_eq!(
        forms,
        [
            ("whole-suite", "python tests/runtests.py"),
            ("test-root", "python tests/runtests.py words_tests"),
            (
                "reproduction-files",
                "python tests/runtests.py words_tests.test_count"
            ),
        ]
    );
    assert_eq!(
        evidence["reproduction"]["failing-tests"],
        json!(["words_tests.test_count.CountTests.test_repeated_spaces"])
    );
    assert_eq!(
        evidence["reproduction"]["suite-choice"]["chosen"],
        "python tests/runtests.py"
    );
}

#[test]
fn django_fix_that_breaks_another_app_is_refused() {
    let repo = django_repo();
    let outcome = run(&repo, "    return text.lower().split()\n");
    assert_eq!(outcome.code, 1, "{}", outcome.issues());
    let round = &outcome.evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        round["prove"]["table"]["newly-failing"],
        json!(["first_tests.test_first.FirstWordTests.test_keeps_its_case"])
    );
}
