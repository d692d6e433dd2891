//! `efix triage` on red runs whose failures are all assertions on returned values in the
//! test file (no frame outside the test): the six scratch projects under
//! `tests/fixtures/triage/targets/` hold three bugs each (a `slug` that joins with `_`, an
//! off-by-one `mean`, a data file with wrong values). Each runner runs live, for real: its
//! report becomes one matrix entry per bug, grouped by the localizer's target, and each
//! entry's command, run for real, fails exactly the entry's tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::{Efix, copy_dir, npm_tools, python_tools};

const JEST: &str = "jest@29.7.0";
const VITEST: &str = "vitest@4.1.12";

/// What a run leaves for triage.
#[derive(Clone, Copy)]
enum Report {
    Junit,
    Log,
}

/// A runner's scratch project, set up to run for real.
struct Live {
    runner: &'static str,
    _dir: tempfile::TempDir,
    project: PathBuf,
    reports: PathBuf,
    /// PATH for the runner (its tools first).
    path: std::ffi::OsString,
    /// `--runner-command`, when the default program is not on PATH.
    program: Option<String>,
    /// Extra environment for the runner (a cache or target directory in the scratch dir).
    env: Vec<(&'static str, PathBuf)>,
}

impl Live {
    fn new(runner: &'static str) -> Live {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/triage/targets")
            .join(runner);
        copy_dir(&fixture, &project);
        let reports = dir.path().join("reports");
        std::fs::create_dir_all(&reports).unwrap();
        let mut tools = Vec::new();
        let mut program = None;
        match runner {
            "pytest" => {
                program = Some(python_tools().join("pytest").display().to_string());
            }
            "jest" | "vitest" => {
                let spec = if runner == "jest" { JEST } else { VITEST };
                let modules = npm_tools(spec).join("node_modules");
                std::os::unix::fs::symlink(&modules, project.join("node_modules")).unwrap();
            }
            _ => {}
        }
        tools.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let env = vec![
            ("CARGO_TARGET_DIR", dir.path().join("cargo-target")),
            ("GOCACHE", dir.path().join("go-cache")),
            ("GOFLAGS", PathBuf::from("-mod=mod")),
        ];
        Live {
            runner,
            path: std::env::join_paths(tools).unwrap(),
            project,
            reports,
            program,
            env,
            _dir: dir,
        }
    }

    /// Run `argv` in the project; its exit code, and stdout and stderr interleaved as a
    /// CI log has them.
    fn run(&self, argv: &[String]) -> (i32, String) {
        let out = self.reports.join("output");
        let file = std::fs::File::create(&out).unwrap();
        let mut command = Command::new(&argv[0]);
        command.stdout(file.try_clone().unwrap()).stderr(file);
        command
            .args(&argv[1..])
            .current_dir(&self.project)
            .env("PATH", &self.path)
            .env("CI", "true")
            .env("NO_COLOR", "1")
            .env_remove("RUST_BACKTRACE");
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let status = command.status().unwrap_or_else(|err| {
            panic!("{} could not start: {err}", argv[0]);
        });
        let text = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
        (status.code().unwrap_or(-1), text)
    }

    /// The red run of the whole suite, as CI would run it: its report for triage.
    fn red_run(&self) -> (Report, PathBuf) {
        let junit = self.reports.join("red.xml");
        let log = self.reports.join("red.log");
        let words: Vec<String> = match self.runner {
            "pytest" => vec![
                self.program.clone().unwrap(),
                "-p".into(),
                "no:cacheprovider".into(),
                format!("--junitxml={}", junit.display()),
            ],
            "jest" => words("npx jest --ci"),
            "vitest" => {
                let mut argv = words("npx vitest run --reporter=default --reporter=junit");
                argv.push(format!("--outputFile.junit={}", junit.display()));
                argv
            }
            "cargo" => words("cargo test --no-fail-fast"),
            "go" => words("go test -json ./..."),
            _ => {
                let mut argv = words("node --test --test-reporter=junit");
                argv.push(format!("--test-reporter-destination={}", junit.display()));
                argv.push("test/".into());
                argv
            }
        };
        let (code, text) = self.run(&words);
        assert_ne!(code, 0, "the red run passed:\n{text}");
        match self.runner {
            "pytest" | "vitest" | "node" => (Report::Junit, junit),
            _ => {
                std::fs::write(&log, text).unwrap();
                (Report::Log, log)
            }
        }
    }

    /// `efix triage` of a report, every cause in the matrix.
    fn triage(&self, report: Report, path: &Path) -> Value {
        let flag = match report {
            Report::Junit => "--junit",
            Report::Log => "--log",
        };
        let mut efix = Efix::new()
            .current_dir(&self.project)
            .args(["triage", "--max-jobs", "256", "--runner", self.runner])
            .args([flag])
            .args([path]);
        if let Some(program) = &self.program {
            efix = efix.args(["--runner-command", program]);
        }
        let run = efix.run().expect_code(0);
        serde_json::from_str(run.stdout().trim()).unwrap()
    }

    /// Run a matrix entry's command for real, with the red run's report options added;
    /// the failing tests it reports, as triage reads them.
    fn failing_tests_of(&self, command: &str, report: Report) -> Vec<String> {
        let junit = self.reports.join("entry.xml");
        let log = self.reports.join("entry.log");
        let mut argv = shlex::split(command).unwrap();
        match self.runner {
            "pytest" => argv.push(format!("--junitxml={}", junit.display())),
            "vitest" => {
                argv.push("--reporter=junit".into());
                argv.push(format!("--outputFile.junit={}", junit.display()));
            }
            "node" => {
                argv.push("--test-reporter=junit".into());
                argv.push(format!("--test-reporter-destination={}", junit.display()));
            }
            "go" => argv.push("-json".into()),
            _ => {}
        }
        let (code, text) = self.run(&argv);
        assert_ne!(code, 0, "`{command}` passed:\n{text}");
        if matches!(report, Report::Log) {
            std::fs::write(&log, &text).unwrap();
        }
        let path = match report {
            Report::Junit => junit,
            Report::Log => log,
        };
        let mut tests: Vec<String> = entries(&self.triage(report, &path))
            .into_iter()
            .flat_map(|(_, _, tests)| tests)
            .collect();
        tests.sort();
        tests
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_owned).collect()
}

/// (rule, cause, tests) of every matrix entry, sorted by cause.
fn entries(matrix: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut found: Vec<(String, String, Vec<String>)> = matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let mut tests: Vec<String> = serde_json::from_value(entry["tests"].clone()).unwrap();
            tests.sort();
            (
                entry["rule"].as_str().unwrap().to_owned(),
                entry["cause"].as_str().unwrap().to_owned(),
                tests,
            )
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}

/// The red run triaged into one entry per bug, each command failing exactly its tests.
fn one_entry_per_bug(runner: &'static str, expected: &[(&str, &[&str])]) {
    let live = Live::new(runner);
    let (report, path) = live.red_run();
    let matrix = live.triage(report, &path);
    let found = entries(&matrix);
    let mut wanted: Vec<(String, String, Vec<String>)> = expected
        .iter()
        .map(|(cause, tests)| {
            let mut tests: Vec<String> = tests.iter().map(|test| (*test).to_owned()).collect();
            tests.sort();
            ("target".to_owned(), (*cause).to_owned(), tests)
        })
        .collect();
    wanted.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(found, wanted, "{runner}: {matrix:#}");
    for entry in matrix["include"].as_array().unwrap() {
        let command = entry["command"].as_str().unwrap();
        let mut tests: Vec<String> = serde_json::from_value(entry["tests"].clone()).unwrap();
        tests.sort();
        assert_eq!(
            live.failing_tests_of(command, report),
            tests,
            "{runner}: `{command}` does not fail exactly its entry's tests"
        );
    }
}

const SLUG_PY: &str = "target `slug` (shop/text.py:4), called by the failing assertion";
const MEAN_PY: &str = "target `mean` (shop/stats.py:4), called by the failing assertion";
const SLUG_JS: &str = "target `slug` (src/text.js:2), called by the failing assertion";
const MEAN_JS: &str = "target `mean` (src/stats.js:2), called by the failing assertion";
const DATA_JS: &str = "target data file test/prices.json, read by the failing test";

#[test]
fn pytest_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    one_entry_per_bug(
        "pytest",
        &[
            (
                SLUG_PY,
                &[
                    "tests/test_text.py::test_two_words",
                    "tests/test_text.py::test_three_words",
                    "tests/test_text.py::test_spacing[Big  Deal-big-deal]",
                    "tests/test_text.py::test_spacing[ x y -x-y]",
                ],
            ),
            (
                MEAN_PY,
                &[
                    "tests/test_stats.py::test_mean_of_equal_values",
                    "tests/test_stats.py::test_mean_of_three",
                    "tests/test_stats.py::TestMean::test_floats",
                    "tests/test_stats.py::TestMean::test_negative",
                ],
            ),
            (
                "target data file tests/prices.json, read by the failing test",
                &[
                    "tests/test_prices.py::test_total",
                    "tests/test_prices.py::test_apple_price",
                    "tests/test_prices.py::test_pear_quantity",
                    "tests/test_prices.py::test_item_count",
                ],
            ),
        ],
    );
}

const JS_SLUG_TESTS: &[&str] = &["slug two words", "slug three words", "slug extra spaces"];
const JS_MEAN_TESTS: &[&str] = &["mean of equal values", "mean of three", "mean of floats"];
const JS_DATA_TESTS: &[&str] = &["total", "apple price", "item count"];

#[test]
fn jest_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    one_entry_per_bug(
        "jest",
        &[
            (SLUG_JS, JS_SLUG_TESTS),
            (MEAN_JS, JS_MEAN_TESTS),
            (DATA_JS, JS_DATA_TESTS),
        ],
    );
}

#[test]
fn vitest_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    one_entry_per_bug(
        "vitest",
        &[
            (SLUG_JS, JS_SLUG_TESTS),
            (MEAN_JS, JS_MEAN_TESTS),
            (DATA_JS, JS_DATA_TESTS),
        ],
    );
}

#[test]
fn node_test_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    // node:test's JUnit names a test in a describe block with the block's title first.
    one_entry_per_bug(
        "node",
        &[
            (
                SLUG_JS,
                &[
                    "slug > two words",
                    "slug > three words",
                    "slug > extra spaces",
                ],
            ),
            (
                MEAN_JS,
                &["mean of equal values", "mean of three", "mean > of floats"],
            ),
            (DATA_JS, JS_DATA_TESTS),
        ],
    );
}

#[test]
fn cargo_test_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    one_entry_per_bug(
        "cargo",
        &[
            (
                "target `slug` (src/text.rs:2), called by the failing assertion",
                &["two_words", "three_words", "extra_spaces"],
            ),
            (
                "target `mean` (src/stats.rs:2), called by the failing assertion",
                &["mean_of_equal_values", "mean_of_three", "mean_of_negatives"],
            ),
            (
                "target data file tests/data/prices.csv, read by the failing test",
                &["total_of_the_list", "apple_price", "item_count"],
            ),
        ],
    );
}

#[test]
fn go_test_assertions_in_the_test_file_group_by_the_function_they_call_and_the_data_file() {
    one_entry_per_bug(
        "go",
        &[
            (
                "target `Slug` (text/text.go:7), called by the failing assertion",
                &[
                    "TestTwoWords",
                    "TestThreeWords",
                    "TestSpacing/__Big___Deal_",
                ],
            ),
            (
                "target `Mean` (stats/stats.go:5), called by the failing assertion",
                &[
                    "TestMeanOfEqualValues",
                    "TestMeanOfThree",
                    "TestMeanOfNegatives",
                ],
            ),
            (
                "target data file prices/testdata/prices.json, read by the failing test",
                &["TestTotal", "TestApplePrice", "TestItemCount"],
            ),
        ],
    );
}
