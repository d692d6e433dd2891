//! `efix triage` on output the real runners wrote (`tests/fixtures/triage`, see its README):
//! one matrix entry per cause for pytest, jest, vitest, nextest and go, the same groups from
//! their logs, the Markdown summary and step outputs, the job limit, the allowlist, errors
//! that name the file and line, and `--run-id` against the stand-in GitHub (failed jobs'
//! logs through a redirect, causes with an open efix pull request skipped).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::github_api::{FakeGithub, Pull, REPOSITORY, TOKEN};
use crate::harness::{Efix, Repo};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/triage")
        .join(rel)
}

/// Where each fixture's project lived when the runner wrote it (stacks name it).
fn root_of(runner: &str) -> &'static str {
    match runner {
        "pytest" => "/tmp/tri/py",
        "jest" => "/tmp/tri/jsproj",
        "vitest" => "/tmp/tri/vproj",
        "nextest" => "/tmp/tri/rs",
        "node" => "/tmp/tri/node",
        _ => "/tmp/tri/go",
    }
}

/// A runner's project checked out in a scratch directory (triage localizes in it and reads
/// its go.mod there), and its fixtures with their paths moved to it, as if the run had used
/// that checkout.
struct Checkout {
    dir: tempfile::TempDir,
    runner: &'static str,
}

impl Checkout {
    fn new(runner: &'static str) -> Checkout {
        let dir = tempfile::tempdir().unwrap();
        crate::harness::copy_dir(
            &fixture(&format!("projects/{runner}")),
            &dir.path().join(runner),
        );
        Checkout { dir, runner }
    }

    fn root(&self) -> String {
        self.dir.path().join(self.runner).display().to_string()
    }

    fn fixture(&self, rel: &str) -> PathBuf {
        let text = std::fs::read_to_string(fixture(rel)).unwrap();
        let moved = text.replace(root_of(self.runner), &self.root());
        let path = self.dir.path().join(rel.replace('/', "-"));
        std::fs::write(&path, moved).unwrap();
        path
    }
}

/// `efix triage` in an empty directory with no GitHub context.
fn triage(root: &str) -> Efix {
    let scratch = std::env::temp_dir();
    Efix::new()
        .current_dir(&scratch)
        .args(["triage", "--root", root])
}

fn matrix(run: &crate::harness::Run) -> Value {
    serde_json::from_str(run.stdout().trim()).unwrap()
}

/// (tests, cause) of every entry, for comparing two inputs of the same run.
fn groups(matrix: &Value) -> Vec<(Vec<String>, String)> {
    matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                serde_json::from_value(entry["tests"].clone()).unwrap(),
                entry["cause"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn each_runners_junit_report_becomes_one_matrix_entry_per_cause() {
    for runner in ["pytest", "jest", "vitest", "nextest", "go", "node"] {
        let checkout = Checkout::new(runner);
        let report = checkout.fixture(&format!("{runner}/junit.xml"));
        let run = triage(&checkout.root())
            .args(["--junit"])
            .args([report])
            .run()
            .expect_code(0);
        let pretty = serde_json::to_string_pretty(&matrix(&run)).unwrap();
        insta::assert_snapshot!(format!("triage_matrix_{runner}"), pretty);
    }
}

#[test]
fn without_the_checkout_causes_fall_back_to_frames_and_messages_and_say_so() {
    let run = triage("/tmp/tri/py")
        .args(["--junit"])
        .args([fixture("pytest/junit.xml")])
        .run()
        .expect_code(0);
    let pretty = serde_json::to_string_pretty(&matrix(&run)).unwrap();
    insta::assert_snapshot!("triage_matrix_pytest_without_checkout", pretty);
    assert!(
        run.stderr()
            .contains("/tmp/tri/py holds no files to localize in"),
        "{}",
        run.stderr()
    );
}

#[test]
fn runner_logs_give_the_groups_their_junit_report_gives() {
    for (log, junit, runner) in [
        ("pytest/pytest.log", "pytest/junit.xml", "pytest"),
        ("go/go-test.json", "go/junit.xml", "go"),
        ("go/go-test.log", "go/junit.xml", "go"),
        ("nextest/cargo-test.log", "nextest/junit.xml", "nextest"),
        ("node/spec.log", "node/junit.xml", "node"),
    ] {
        let checkout = Checkout::new(runner);
        let (log, junit) = (checkout.fixture(log), checkout.fixture(junit));
        let from_log = triage(&checkout.root())
            .args(["--log"])
            .args([&log])
            .run()
            .expect_code(0);
        let from_junit = triage(&checkout.root())
            .args(["--junit"])
            .args([&junit])
            .run()
            .expect_code(0);
        assert_eq!(
            groups(&matrix(&from_log)),
            groups(&matrix(&from_junit)),
            "{} and {} disagree",
            log.display(),
            junit.display()
        );
    }
}

#[test]
fn summary_table_and_step_outputs_are_written_with_left_out_groups_listed() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    let checkout = Checkout::new("pytest");
    let run = triage(&checkout.root())
        .args(["--junit"])
        .args([checkout.fixture("pytest/junit.xml")])
        .args(["--max-jobs", "2"])
        .env("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())
        .env("GITHUB_OUTPUT", output.to_str().unwrap())
        .run()
        .expect_code(0);
    assert_eq!(matrix(&run)["include"].as_array().unwrap().len(), 2);
    insta::assert_snapshot!(
        "triage_summary_pytest",
        std::fs::read_to_string(&summary).unwrap()
    );
    let outputs = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = outputs.lines().collect();
    assert_eq!(lines.len(), 4, "{outputs}");
    assert_eq!(lines[0], format!("matrix={}", run.stdout().trim()));
    assert_eq!(&lines[1..], ["jobs=2", "failures=9", "left-out=1"]);
    insta::assert_snapshot!("triage_stderr_pytest", run.stderr());
}

#[test]
fn a_directory_of_reports_from_several_runners_is_triaged_together() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::fs::copy(fixture("pytest/junit.xml"), dir.path().join("a/pytest.xml")).unwrap();
    std::fs::copy(
        fixture("nextest/junit.xml"),
        dir.path().join("a/b/nextest.xml"),
    )
    .unwrap();
    std::fs::write(dir.path().join("a/notes.txt"), "not a report").unwrap();
    let run = triage("/tmp/tri/rs")
        .args(["--junit"])
        .args([dir.path()])
        .run()
        .expect_code(0);
    let commands: Vec<String> = matrix(&run)["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            entry["command"]
                .as_str()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Without the checkout, the two `restock` assertions share their message once its
    // numbers are abstracted.
    assert_eq!(commands.len(), 5);
    assert_eq!(commands.iter().filter(|c| *c == "pytest").count(), 3);
    assert_eq!(commands.iter().filter(|c| *c == "cargo").count(), 2);
}

#[test]
fn a_truncated_or_malformed_report_is_an_error_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(fixture("jest/junit.xml")).unwrap();
    let cut = dir.path().join("cut.xml");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    let run = triage("/")
        .args(["--junit"])
        .args([&cut])
        .run()
        .expect_code(2);
    let line = full[..full.len() / 2].lines().count();
    let stderr = run
        .stderr()
        .replace(&dir.path().display().to_string(), "[DIR]");
    assert!(
        stderr.contains(&format!(
            "read the JUnit report [DIR]/cut.xml:{line}: the file ends"
        )),
        "{stderr}"
    );
    let broken = dir.path().join("broken.xml");
    std::fs::write(
        &broken,
        "<testsuites>\n<testsuite name=\"x\">\n</testcase>\n",
    )
    .unwrap();
    let run = triage("/")
        .args(["--junit"])
        .args([&broken])
        .run()
        .expect_code(2);
    let stderr = run
        .stderr()
        .replace(&dir.path().display().to_string(), "[DIR]");
    insta::assert_snapshot!("triage_malformed_junit", stderr);
    let missing = triage("/")
        .args(["--log", "/nonexistent/ci.log"])
        .run()
        .expect_code(2);
    assert!(
        missing.stderr().contains("read /nonexistent/ci.log"),
        "{}",
        missing.stderr()
    );
}

#[test]
fn commands_the_allowlist_refuses_leave_the_matrix_and_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".efix.yml"),
        "version: 1\ncommands:\n  allow: [cargo]\n",
    )
    .unwrap();
    let run = triage(dir.path().to_str().unwrap())
        .args(["--junit"])
        .args([fixture("pytest/junit.xml")])
        .run()
        .expect_code(4);
    assert_eq!(matrix(&run), json!({"include": []}));
    assert!(
        run.stderr().contains("[command.not-allowed]"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_run_without_failures_exits_3_with_an_empty_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let green = dir.path().join("green.xml");
    std::fs::write(
        &green,
        "<testsuites name=\"pytest tests\"><testsuite name=\"pytest\"><testcase classname=\"t\" name=\"test_ok\"/></testsuite></testsuites>",
    )
    .unwrap();
    let run = triage("/")
        .args(["--junit"])
        .args([&green])
        .run()
        .expect_code(3);
    assert_eq!(matrix(&run), json!({"include": []}));
}

/// The stand-in with a failed run: a pytest job and a lint job failed, a build job passed.
fn github_with_run() -> (Repo, FakeGithub) {
    let repo = Repo::with_files(&[("README.md", "demo\n")]);
    let github = FakeGithub::start(&repo.root);
    {
        let mut state = github.state();
        state.jobs = json!({"total_count": 3, "jobs": [
            {"id": 11, "name": "test (3.12)", "conclusion": "failure"},
            {"id": 12, "name": "lint", "conclusion": "failure"},
            {"id": 13, "name": "build", "conclusion": "success"},
        ]});
        let log: String = std::fs::read_to_string(fixture("pytest/pytest.log"))
            .unwrap()
            .lines()
            .map(|line| format!("2026-11-26T18:45:49.1234567Z {line}\n"))
            .collect();
        state.job_logs.insert(11, log);
        state.job_logs.insert(
            12,
            "2026-11-26T18:45:49.0000000Z ruff check .\nFound 2 errors.\n".to_owned(),
        );
    }
    (repo, github)
}

fn in_actions(efix: Efix, github: &FakeGithub) -> Efix {
    efix.env("GITHUB_API_URL", &github.url)
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .env("GITHUB_TOKEN", TOKEN)
}

#[test]
fn run_id_reads_the_failed_jobs_logs_and_skips_causes_with_an_open_efix_pull_request() {
    let (_repo, github) = github_with_run();
    // The group of `shop/report.py:14` already has a pull request (its command's hash).
    let without = triage("/tmp/tri/py")
        .args(["--log"])
        .args([fixture("pytest/pytest.log")])
        .run()
        .expect_code(0);
    let render = matrix(&without)["include"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| {
            entry["cause"]
                .as_str()
                .unwrap()
                .starts_with("frame shop/report.py")
        })
        .unwrap()["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let hash: String = Sha256::digest(render.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    github.state().pulls.push(Pull {
        number: 41,
        head: format!("efix/5550001-{}", &hash[..8]),
        base: "main".to_owned(),
        title: "efix: fix render".to_owned(),
        body: String::new(),
        draft: false,
        open: true,
    });
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let run = in_actions(triage("/tmp/tri/py"), &github)
        .args([
            "--run-id",
            "5550001",
            "--summary",
            summary.to_str().unwrap(),
        ])
        .run()
        .expect_code(0);
    let entries = groups(&matrix(&run));
    assert_eq!(entries.len(), 2, "{}", run.stdout());
    assert!(
        entries
            .iter()
            .all(|(_, cause)| !cause.starts_with("frame shop/report.py"))
    );
    let table = std::fs::read_to_string(&summary).unwrap();
    assert!(
        table.contains(&format!(
            "open efix pull request from efix/5550001-{}",
            &hash[..8]
        )),
        "{table}"
    );
    let state = github.state();
    assert!(state.problems.is_empty(), "{:?}", state.problems);
    let calls: Vec<String> = state
        .seen
        .iter()
        .map(|seen| format!("{} {}", seen.method, seen.path))
        .collect();
    assert_eq!(
        calls,
        [
            format!("GET /repos/{REPOSITORY}/actions/runs/5550001/jobs"),
            format!("GET /repos/{REPOSITORY}/actions/jobs/11/logs"),
            "GET /_blob/job-logs/11".to_owned(),
            format!("GET /repos/{REPOSITORY}/actions/jobs/12/logs"),
            "GET /_blob/job-logs/12".to_owned(),
            format!("GET /repos/{REPOSITORY}/pulls"),
        ]
    );
}

#[test]
fn run_id_without_a_token_is_a_usage_error_naming_the_variable() {
    let run = triage("/")
        .args(["--run-id", "1"])
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .run()
        .expect_code(2);
    assert!(run.stderr().contains("GITHUB_TOKEN"), "{}", run.stderr());
}
