//! Unit tests of the suite derivation.

use std::path::Path;

use super::known::derive;
use super::{Derivation, Form};
use crate::evidence::SuiteFormKind;

fn argv(text: &str) -> Vec<String> {
    shlex::split(text).unwrap()
}

fn derived_in(root: &Path, text: &str) -> Option<(String, Option<String>)> {
    derive(&argv(text), root)
        .filter(|d| d.whole != argv(text))
        .map(|d| (d.whole.join(" "), d.narrow.map(|n| n.join(" "))))
}

fn derived(text: &str) -> Option<(String, Option<String>)> {
    derived_in(Path::new("/nonexistent"), text)
}

fn whole(text: &str) -> Option<String> {
    derived(text).map(|(whole, _)| whole)
}

#[test]
fn the_whole_suite_drops_what_selects_tests_and_keeps_the_options() {
    let cases = [
        (
            "cargo test -p parser crlf",
            "cargo test -p parser --no-fail-fast",
        ),
        (
            "cargo test crlf -- --nocapture",
            "cargo test --no-fail-fast",
        ),
        ("cargo test --test api crlf", "cargo test --no-fail-fast"),
        (
            "cargo test --no-fail-fast --test api crlf",
            "cargo test --no-fail-fast",
        ),
        (
            "cargo nextest run -p x -E 'test(crlf)'",
            "cargo nextest run -p x --no-fail-fast",
        ),
        ("pytest tests/test_a.py::test_b", "pytest"),
        (
            "pytest -q tests/test_a.py::test_b -p no:cacheprovider",
            "pytest -q -p no:cacheprovider",
        ),
        ("python -m pytest -k crlf tests", "python -m pytest"),
        (
            "python3 -m unittest tests.test_a.TestA.test_b",
            "python3 -m unittest",
        ),
        (
            "python -m unittest -v tests.test_a",
            "python -m unittest -v",
        ),
        (
            "python -m unittest discover -s tests -k crlf",
            "python -m unittest discover -s tests",
        ),
        ("go test -run TestX ./pkg", "go test ./..."),
        (
            "node --test --test-name-pattern=crlf test/a.test.js",
            "node --test",
        ),
        ("node --test test/a.test.js", "node --test"),
        ("npx jest -t crlf src/a.test.js", "npx jest"),
        ("npx vitest run test/a.test.ts -t crlf", "npx vitest run"),
        (
            "pnpm exec vitest run --reporter verbose a.test.ts",
            "pnpm exec vitest run --reporter verbose",
        ),
        ("npx mocha -R dot test/a.js -g crlf", "npx mocha -R dot"),
        ("npm test -- -t crlf", "npm test"),
        ("npm run test:unit -- a.test.js", "npm run test:unit"),
        ("yarn test a.test.js", "yarn test"),
    ];
    for (command, expected) in cases {
        assert_eq!(whole(command).as_deref(), Some(expected), "{command}");
    }
}

#[test]
fn the_narrow_suite_keeps_the_files_and_targets_the_reproduction_selects() {
    let narrow = |text: &str| derived(text).and_then(|(_, narrow)| narrow);
    assert_eq!(
        narrow("pytest tests/test_a.py::test_b").as_deref(),
        Some("pytest tests/test_a.py")
    );
    assert_eq!(
        narrow("cargo test -p x --test api crlf").as_deref(),
        Some("cargo test -p x --test api")
    );
    assert_eq!(
        narrow("node --test --test-name-pattern=crlf test/a.test.js").as_deref(),
        Some("node --test test/a.test.js")
    );
    assert_eq!(
        narrow("npx jest -t crlf src/a.test.js").as_deref(),
        Some("npx jest src/a.test.js")
    );
    assert_eq!(
        narrow("go test -run TestX ./pkg").as_deref(),
        Some("go test ./pkg")
    );
    // Nothing narrower than the whole suite that is not the reproduction itself.
    assert_eq!(narrow("cargo test crlf"), None);
    assert_eq!(narrow("pytest tests/test_a.py"), None);
}

#[test]
fn unittest_ids_narrow_to_the_module_that_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/test_a.py"), "").unwrap();
    assert_eq!(
        derived_in(dir.path(), "python -m unittest tests.test_a.TestA.test_b"),
        Some((
            "python -m unittest".to_owned(),
            Some("python -m unittest tests.test_a".to_owned())
        ))
    );
}

fn package(scripts: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        format!(r#"{{"scripts": {scripts}}}"#),
    )
    .unwrap();
    dir
}

#[test]
fn tape_files_run_the_runner_the_package_test_script_reaches() {
    // The shape of many tape packages: lint before, coverage around, audit after.
    let dir = package(
        r#"{"pretest": "npm run lint", "test": "npm run tests-only", "tests-only": "nyc tape 'test/**/*.js'", "posttest": "npx npm@'>=10.2' audit", "lint": "eslint ."}"#,
    );
    let npx_tape = Some(("npx tape test/**/*.js".to_owned(), None));
    assert_eq!(derived_in(dir.path(), "node test/a.js"), npx_tape);
    assert_eq!(derived_in(dir.path(), "npx tape test/a.js"), npx_tape);
    // A script that is not a test file is not a test run.
    assert_eq!(derived_in(dir.path(), "node scripts/build.js"), None);
}

#[test]
fn a_package_script_without_a_known_runner_is_run_as_npm_test() {
    let dir = package(r#"{"test": "node test/index.js"}"#);
    assert_eq!(
        derived_in(dir.path(), "node test/a.js"),
        Some(("npm test".to_owned(), None))
    );
    let none = tempfile::tempdir().unwrap();
    assert_eq!(derived_in(none.path(), "node test/a.js"), None);
}

#[test]
fn mocha_runs_what_the_package_script_gives_it() {
    let dir = package(r#"{"test": "cross-env NODE_ENV=test mocha --recursive test/"}"#);
    assert_eq!(
        derived_in(dir.path(), "npx mocha test/unit/a.js -g crlf"),
        Some(("npx mocha --recursive test/".to_owned(), None))
    );
    let bare = tempfile::tempdir().unwrap();
    assert_eq!(
        derived_in(bare.path(), "npx mocha test/unit/a.js -g crlf"),
        Some((
            "npx mocha".to_owned(),
            Some("npx mocha test/unit/a.js".to_owned())
        ))
    );
}

#[test]
fn does_not_derive_when_the_reproduction_is_already_the_whole_suite() {
    assert_eq!(derived("cargo test"), None);
    assert_eq!(derived("pytest"), None);
    assert_eq!(derived("pytest -q"), None);
    assert_eq!(derived("npm test"), None);
    assert_eq!(derived("node --test"), None);
    assert_eq!(derived("make check"), None);
}

fn forms_in(root: &Path, text: &str) -> Vec<(SuiteFormKind, String)> {
    match super::derive(&argv(text), root) {
        Derivation::Forms(forms) => forms
            .into_iter()
            .map(|Form { kind, argv }| (kind, argv.join(" ")))
            .collect(),
        other => panic!("{text}: {other:?}"),
    }
}

fn tree(paths: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for path in paths {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    dir
}

#[test]
fn known_runners_try_the_whole_suite_then_the_test_directory_then_the_files() {
    use SuiteFormKind::*;
    let dir = tree(&[
        "tests/unit/test_a.py",
        "__tests__/a.test.js",
        "pkg/sub/a_test.go",
    ]);
    assert_eq!(
        forms_in(
            dir.path(),
            "pytest -q -p no:cacheprovider --tb=short tests/unit/test_a.py::test_b"
        ),
        [
            (
                WholeSuite,
                "pytest -q -p no:cacheprovider --tb=short".to_owned()
            ),
            (TestRoot, "pytest -p no:cacheprovider tests/".to_owned()),
            (
                ReproductionFiles,
                "pytest -q -p no:cacheprovider --tb=short tests/unit/test_a.py".to_owned()
            ),
        ]
    );
    // Options a test could read (jest passes unknown argv on) are left out of the root form.
    assert_eq!(
        forms_in(
            dir.path(),
            "npx jest --coverage=false -c jest.config.js __tests__/a.test.js -t x"
        ),
        [
            (
                WholeSuite,
                "npx jest --coverage=false -c jest.config.js".to_owned()
            ),
            (TestRoot, "npx jest -c jest.config.js __tests__/".to_owned()),
            (
                ReproductionFiles,
                "npx jest --coverage=false -c jest.config.js __tests__/a.test.js".to_owned()
            ),
        ]
    );
    assert_eq!(
        forms_in(dir.path(), "go test -run TestX ./pkg/sub"),
        [
            (WholeSuite, "go test ./...".to_owned()),
            (TestRoot, "go test ./pkg/...".to_owned()),
            (ReproductionFiles, "go test ./pkg/sub".to_owned()),
        ]
    );
    // `.` is the module's root: the test directory is the whole suite.
    assert_eq!(
        forms_in(dir.path(), "go test -run TestX ."),
        [
            (WholeSuite, "go test ./...".to_owned()),
            (ReproductionFiles, "go test .".to_owned()),
        ]
    );
    assert_eq!(
        forms_in(dir.path(), "python -m unittest tests.unit.test_a.T.test_b")[1],
        (
            TestRoot,
            "python -m unittest discover -s tests -t .".to_owned()
        )
    );
}

#[test]
fn django_runs_the_whole_suite_then_the_app_label_then_the_modules() {
    use SuiteFormKind::*;
    let dir = tree(&[
        "tests/runtests.py",
        "tests/model_fields/__init__.py",
        "tests/model_fields/tests.py",
        "tests/test_sqlite.py",
        "manage.py",
        "polls/__init__.py",
        "polls/tests/test_views.py",
    ]);
    std::fs::write(dir.path().join("tests/runtests.py"), "import django\n").unwrap();
    assert_eq!(
        forms_in(
            dir.path(),
            "python tests/runtests.py --settings test_sqlite --failfast model_fields.tests.X.test_y -k y"
        ),
        [
            (
                WholeSuite,
                "python tests/runtests.py --settings test_sqlite".to_owned()
            ),
            (
                TestRoot,
                "python tests/runtests.py --settings test_sqlite model_fields".to_owned()
            ),
            (
                ReproductionFiles,
                "python tests/runtests.py --settings test_sqlite model_fields.tests".to_owned()
            ),
        ]
    );
    assert_eq!(
        forms_in(
            dir.path(),
            "python manage.py test -v 2 polls.tests.test_views.T.test_a"
        ),
        [
            (WholeSuite, "python manage.py test -v 2".to_owned()),
            (TestRoot, "python manage.py test -v 2 polls".to_owned()),
            (
                ReproductionFiles,
                "python manage.py test -v 2 polls.tests.test_views".to_owned()
            ),
        ]
    );
    // An app label run already: its app is the reproduction, so only the whole suite is wider.
    assert_eq!(
        forms_in(dir.path(), "python tests/runtests.py model_fields"),
        [(WholeSuite, "python tests/runtests.py".to_owned())]
    );
    assert_eq!(
        super::derive(&argv("python tests/runtests.py --parallel 1"), dir.path()),
        Derivation::Whole
    );
}

#[test]
fn an_unknown_runner_widens_its_dotted_labels_to_modules_and_packages() {
    use SuiteFormKind::*;
    // Labels are read under the script's directory.
    let dir = tree(&[
        "tests/run_suite.py",
        "tests/model_fields/__init__.py",
        "tests/model_fields/tests.py",
        "tests/test_sqlite.py",
    ]);
    assert_eq!(
        forms_in(
            dir.path(),
            "python tests/run_suite.py --settings test_sqlite model_fields.tests.X.test_y -k y"
        ),
        [
            (
                NoSelector,
                "python tests/run_suite.py --settings test_sqlite".to_owned()
            ),
            (
                WiderSelector,
                "python tests/run_suite.py --settings test_sqlite model_fields".to_owned()
            ),
            (
                WiderSelector,
                "python tests/run_suite.py --settings test_sqlite model_fields.tests".to_owned()
            ),
            (
                WiderSelector,
                "python tests/run_suite.py --settings test_sqlite model_fields.tests.X.test_y"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn an_unknown_runner_widens_node_ids_to_their_file_and_directories() {
    use SuiteFormKind::*;
    let dir = tree(&["tests/x.py", "run-tests"]);
    assert_eq!(
        forms_in(dir.path(), "./run-tests --fast tests/x.py::T::t"),
        [
            (NoSelector, "./run-tests --fast".to_owned()),
            (WiderSelector, "./run-tests --fast tests/".to_owned()),
            (WiderSelector, "./run-tests --fast tests/x.py".to_owned()),
        ]
    );
}

#[test]
fn a_command_without_a_visible_selector_derives_nothing_and_a_whole_suite_is_whole() {
    let dir = tree(&["repro.py", "tests/test_a.py"]);
    for command in ["make check", "python repro.py", "cargo run --bin x"] {
        assert_eq!(
            super::derive(&argv(command), dir.path()),
            Derivation::Nothing,
            "{command}"
        );
    }
    for command in ["cargo test", "pytest -q", "npm test"] {
        assert_eq!(
            super::derive(&argv(command), dir.path()),
            Derivation::Whole,
            "{command}"
        );
    }
}
