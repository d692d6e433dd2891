//! The composite action: `action.yml`'s contract (inputs, outputs, no `${{ }}` inside a
//! script, the artifact upload pinned and always run) and its step scripts, run with `sh`
//! against a stand-in `efix` that records its argv, so inputs full of shell syntax are seen to
//! arrive as single words.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const INPUTS: &[&str] = &[
    "command",
    "suite",
    "config",
    "engine",
    "model",
    "base-url",
    "api-key",
    "github-token",
    "max-rounds",
    "candidates",
    "timeout-minutes",
    "dry-run",
    "create-pr",
    "comment",
    "draft",
    "labels",
    "artifacts-dir",
    "version",
    "mode",
    "max-jobs",
    "fallback",
];
const OUTPUTS: &[&str] = &[
    "result",
    "exit-code",
    "pr-url",
    "pr-number",
    "matrix",
    "jobs",
    "artifacts-dir",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    yaml_serde::from_str(&text).unwrap()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn action_yml_declares_the_inputs_and_outputs_and_keeps_expressions_out_of_scripts() {
    let action = action();
    assert_eq!(
        keys(&action["inputs"]),
        INPUTS.iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        keys(&action["outputs"]),
        OUTPUTS.iter().map(|s| s.to_string()).collect()
    );
    let inputs = &action["inputs"];
    assert_eq!(inputs["github-token"]["default"], "${{ github.token }}");
    assert_eq!(inputs["create-pr"]["default"], "true");
    assert_eq!(inputs["comment"]["default"], "true");
    assert_eq!(inputs["fallback"]["default"], "none");
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    for step in steps {
        if let Some(run) = step.get("run").and_then(Value::as_str) {
            assert!(!run.contains("${{"), "an expression inside a script: {run}");
        }
        if let Some(uses) = step.get("uses").and_then(Value::as_str) {
            let (_, reference) = uses.split_once('@').unwrap();
            assert!(
                reference.len() == 40 && reference.chars().all(|c| c.is_ascii_hexdigit()),
                "{uses} is not pinned by commit"
            );
        }
    }
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .unwrap();
    assert!(
        upload["if"].as_str().unwrap().contains("always()"),
        "{upload}"
    );
}

/// A scratch directory with a stand-in `efix` that writes its argv, NUL-separated, to
/// `argv` and exits with `$EFIX_STUB_EXIT`.
struct Stub {
    dir: tempfile::TempDir,
}

impl Stub {
    fn new() -> Stub {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        let efix = dir.path().join("bin/efix");
        std::fs::write(
            &efix,
            format!(
                "#!/bin/sh\nfor arg in \"$@\"; do printf '%s\\0' \"$arg\"; done > '{}'\nexit \"${{EFIX_STUB_EXIT:-0}}\"\n",
                dir.path().join("argv").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&efix, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("output"), "").unwrap();
        Stub { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn script(&self, name: &str, env: &[(&str, &str)]) -> std::process::Output {
        let mut command = Command::new("sh");
        command
            .arg(root().join("scripts").join(name))
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/bin:/usr/bin:/bin",
                    self.path("bin").display()
                ),
            )
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("RUNNER_TEMP", self.dir.path());
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    fn argv(&self) -> Vec<String> {
        let bytes = std::fs::read(self.path("argv")).unwrap();
        bytes
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8(w.to_vec()).unwrap())
            .collect()
    }

    fn output(&self) -> String {
        std::fs::read_to_string(self.path("output")).unwrap()
    }
}

#[test]
fn the_run_step_passes_inputs_as_single_words_and_records_the_outputs() {
    let stub = Stub::new();
    let command = "cargo test -- '$(touch pwned)' \"; rm -rf ~\" `id` | tee x";
    let output = stub.script(
        "action-run.sh",
        &[
            ("GITHUB_EVENT_NAME", "issue_comment"),
            ("GITHUB_EVENT_PATH", "/dev/null"),
            ("GITHUB_JOB", "fix"),
            ("INPUT_COMMAND", command),
            ("INPUT_SUITE", "cargo test\r\n\nnpm test -- --grep 'a b'\n"),
            ("INPUT_MAX_ROUNDS", "2"),
            ("INPUT_CANDIDATES", "3"),
            ("INPUT_TIMEOUT_MINUTES", "10"),
            ("INPUT_DRY_RUN", "true"),
            ("EFIX_STUB_EXIT", "3"),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let artifacts = stub.dir.path().join("efix-artifacts");
    let artifacts = artifacts.to_str().unwrap();
    let github_output = stub.path("output");
    assert_eq!(
        stub.argv(),
        [
            "run",
            "--artifacts",
            artifacts,
            "--github-output",
            github_output.to_str().unwrap(),
            "--from-event",
            "--repro",
            command,
            "--suite",
            "cargo test",
            "--suite",
            "npm test -- --grep 'a b'",
            "--max-rounds",
            "2",
            "--candidates",
            "3",
            "--timeout-seconds",
            "600",
            "--dry-run",
        ]
    );
    let outputs = stub.output();
    let lines: Vec<&str> = outputs.lines().collect();
    assert_eq!(lines[0], "exit-code=3");
    assert_eq!(lines[1], format!("artifacts-dir={artifacts}"));
    assert!(
        regex::Regex::new(r"^artifact-name=efix-fix-1-[0-9a-f]{8}$")
            .unwrap()
            .is_match(lines[2]),
        "{outputs}"
    );
    assert_eq!(lines[3], "result=error");
    assert!(!Path::new("pwned").exists());
}

#[test]
fn the_triage_step_passes_the_run_and_treats_nothing_to_triage_as_success() {
    for (exit, success) in [("0", true), ("3", true), ("4", true), ("2", false)] {
        let stub = Stub::new();
        let output = stub.script(
            "action-triage.sh",
            &[
                ("EFIX_RUN_ID", "5550001"),
                ("INPUT_MAX_JOBS", "4"),
                ("INPUT_CONFIG", "ci/efix.yml"),
                ("EFIX_STUB_EXIT", exit),
            ],
        );
        assert_eq!(output.status.success(), success, "exit {exit}: {output:?}");
        assert_eq!(
            stub.argv(),
            [
                "triage",
                "--run-id",
                "5550001",
                "--max-jobs",
                "4",
                "--config",
                "ci/efix.yml"
            ]
        );
    }
    let stub = Stub::new();
    let output = stub.script("action-triage.sh", &[("INPUT_MAX_JOBS", "4")]);
    assert!(!output.status.success());
    assert!(!stub.path("argv").exists());
    let stub = Stub::new();
    let output = stub.script(
        "action-triage.sh",
        &[("EFIX_RUN_ID", "1"), ("INPUT_MAX_JOBS", "4; id")],
    );
    assert!(!output.status.success());
    assert!(!stub.path("argv").exists());
}

#[test]
fn the_run_step_refuses_a_bad_number_before_running_efix() {
    let stub = Stub::new();
    let output = stub.script(
        "action-run.sh",
        &[
            ("INPUT_COMMAND", "cargo test"),
            ("INPUT_MAX_ROUNDS", "3; rm -rf /"),
        ],
    );
    assert!(output.status.success());
    assert!(!stub.path("argv").exists());
    assert_eq!(stub.output(), "exit-code=2\nresult=error\n");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "::error title=efix::max-rounds must be a whole number, not '3; rm -rf /'\n"
    );
}

#[test]
fn the_publish_step_maps_the_switches_and_splits_labels() {
    let stub = Stub::new();
    let artifacts = stub.path("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    // Without evidence there is nothing to publish.
    let output = stub.script(
        "action-publish.sh",
        &[("EFIX_ARTIFACTS", artifacts.to_str().unwrap())],
    );
    assert!(output.status.success());
    assert!(!stub.path("argv").exists());

    std::fs::write(artifacts.join("evidence.json"), "{}").unwrap();
    let output = stub.script(
        "action-publish.sh",
        &[
            ("EFIX_ARTIFACTS", artifacts.to_str().unwrap()),
            ("INPUT_CREATE_PR", "false"),
            ("INPUT_COMMENT", "true"),
            ("INPUT_DRAFT", "true"),
            ("INPUT_LABELS", " bug, efix\r\nneeds review ,$(id)\n"),
            ("EFIX_STUB_EXIT", "1"),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let github_output = stub.path("output");
    assert_eq!(
        stub.argv(),
        [
            "publish",
            "--artifacts",
            artifacts.to_str().unwrap(),
            "--github-output",
            github_output.to_str().unwrap(),
            "--no-pr",
            "--draft",
            "--label",
            "bug",
            "--label",
            "efix",
            "--label",
            "needs review",
            "--label",
            "$(id)",
        ]
    );
}

#[test]
fn the_summary_step_shows_the_rendered_body_or_why_there_is_none() {
    let stub = Stub::new();
    let artifacts = stub.path("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("pr-body.md"), "## efix: Fixed and proven\n").unwrap();
    let summary = stub.path("summary.md");
    stub.script(
        "action-summary.sh",
        &[
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("EFIX_ARTIFACTS", artifacts.to_str().unwrap()),
            ("EFIX_PR_URL", "https://github.example/o/r/pull/7"),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        "## efix: Fixed and proven\n\nPull request: https://github.example/o/r/pull/7\n"
    );
    let refused = stub.path("refused.md");
    stub.script(
        "action-summary.sh",
        &[
            ("GITHUB_STEP_SUMMARY", refused.to_str().unwrap()),
            ("EFIX_ARTIFACTS", stub.path("none").to_str().unwrap()),
            ("EFIX_RESULT", "refused"),
            ("EFIX_EXIT_CODE", "4"),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(&refused).unwrap(),
        "## efix: refused\n\nefix exited with code 4 before writing evidence; the log of the \"Run efix\" step says why.\n"
    );
}

#[test]
fn every_workflow_has_minimal_permissions_a_concurrency_group_pinned_actions_and_no_persisted_credentials()
 {
    let mut checked = Vec::new();
    for dir in [".github/workflows", "examples/workflows"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let workflow: Value = yaml_serde::from_str(&text).unwrap();
            let name = path.display().to_string();
            assert!(
                workflow.get("permissions").is_some(),
                "{name}: no permissions"
            );
            assert!(
                workflow.get("concurrency").is_some(),
                "{name}: no concurrency"
            );
            for (job_name, job) in workflow["jobs"].as_object().unwrap() {
                for step in job["steps"].as_array().unwrap() {
                    let Some(uses) = step.get("uses").and_then(Value::as_str) else {
                        continue;
                    };
                    let (action, reference) = uses.split_once('@').unwrap();
                    let pinned =
                        reference.len() == 40 && reference.chars().all(|c| c.is_ascii_hexdigit());
                    // The examples call efix itself by release tag, for the user to pin.
                    let efix_template = dir == "examples/workflows" && action == "OWNER/efix";
                    assert!(
                        pinned || efix_template,
                        "{name} {job_name}: {uses} is not pinned"
                    );
                    if action == "actions/checkout" {
                        assert_eq!(
                            step["with"]["persist-credentials"],
                            Value::Bool(false),
                            "{name} {job_name}"
                        );
                    }
                }
            }
            checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "ci.yml",
            "efix-comment.yml",
            "efix-dispatch.yml",
            "efix-on-ci-failure.yml",
            "release.yml"
        ]
    );
}
