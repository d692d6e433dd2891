//! `efix init` on scratch repositories: the files it writes pass `efix config check`, let
//! `efix run --dry-run` reproduce a failing test with the command the summary suggests, and
//! the workflow passes the linters `.ci/lint-actions` runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, Run, copy_dir, npm_tools, replay_file, stable};

/// Commit everything in the repository (the written files: efix runs on a clean tree only).
fn commit_all(repo: &Repo) {
    for args in [
        &["add", "-A"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "efix init",
        ][..],
    ] {
        let status = Command::new("git")
            .arg("-C")
            .arg(&repo.root)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
}

fn init(repo: &Repo, extra: &[&str]) -> Run {
    Efix::new()
        .args(["init", "--yes", "--repo"])
        .args([&repo.root])
        .args(extra)
        .run()
}

/// The command the summary's last line suggests: `efix run --repro "CMD" --dry-run`.
fn suggested(summary: &str) -> String {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with("efix run --repro "))
        .unwrap_or_else(|| panic!("no suggested command in:\n{summary}"));
    let argv = shlex::split(line.trim()).unwrap();
    assert_eq!(argv[argv.len() - 1], "--dry-run", "{line}");
    argv[3].clone()
}

/// `efix config check` in the repository, which must accept the written file.
fn config_check(repo: &Repo) {
    Efix::new()
        .args(["config", "check"])
        .current_dir(&repo.root)
        .env("HOME", "/home/user")
        .run()
        .expect_code(0);
}

/// `efix run --repro CMD --dry-run` with the written configuration, a replay engine answering
/// `fix`, and `path` first on PATH; returns the run and its evidence.
fn dry_run(repo: &Repo, command: &str, fix: &str, path: Option<&Path>) -> (Run, Value) {
    let replay = json!({
        "version": 1,
        "plan": {"hypothesis": "h", "focus_files": []},
        "fix": [{"output": fix, "root_cause": "r", "fix_summary": "f"}],
    });
    let (_guard, file) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let mut efix = Efix::replay_run(repo, command, &file).args(["--dry-run", "--max-rounds", "1"]);
    if let Some(dir) = path {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let dirs: Vec<PathBuf> = std::iter::once(dir.to_path_buf())
            .chain(std::env::split_paths(&inherited))
            .collect();
        efix = efix.env(
            "PATH",
            std::env::join_paths(dirs).unwrap().to_str().unwrap(),
        );
    }
    let run = efix.run();
    let evidence = std::fs::read_to_string(artifacts.join("evidence.json")).unwrap();
    (run, serde_json::from_str(&evidence).unwrap())
}

const WORDS_PY: &str = "def word_count(text):\n    return len([w for w in text.split(\" \")])\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
const PY_FIX: &str = "--- a/words.py\n+++ b/words.py\n@@ -1,2 +1,2 @@\n def word_count(text):\n-    return len([w for w in text.split(\" \")])\n+    return len(text.split())\n--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_tabs_and_newlines():\n+    assert word_count(\"a\\tb\\nc \") == 3\n";
const CI: &str = "name: CI\non: [push]\npermissions: {}\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: python -m pytest -q\n";

#[test]
fn init_on_a_pytest_repository_writes_files_that_prove_a_real_fix_with_the_suggested_command() {
    let repo = Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("requirements.txt", "pytest>=8,<9\n"),
        (".github/workflows/ci.yml", CI),
    ]);
    let run = init(&repo, &[]).expect_code(0);
    insta::assert_snapshot!(stable(&run.stdout(), &[&repo.root]));
    assert!(repo.read(".efix.yml").contains("allow: [pytest]"));
    assert!(
        repo.read(".github/workflows/efix.yml")
            .contains("workflows: [CI]")
    );
    config_check(&repo);
    commit_all(&repo);
    let command = suggested(&run.stdout());
    assert_eq!(command, "pytest tests/test_words.py");
    let before = repo.fingerprint();
    let bin = crate::harness::python_tools();
    let (run, evidence) = dry_run(&repo, &command, PY_FIX, Some(&bin));
    run.expect_code(0);
    assert_eq!(evidence["result"]["status"], "fixed");
    assert_eq!(evidence["request"]["derived-suite"], "pytest");
    assert_eq!(repo.fingerprint(), before, "--dry-run left a change");
}

#[test]
fn init_on_a_jest_repository_lets_the_suggested_command_reproduce_its_failing_test() {
    init_then_reproduce(
        &[
            (".gitignore", "node_modules/\n"),
            (
                "package.json",
                "{\"name\": \"d\", \"private\": true, \"scripts\": {\"test\": \"jest\"}, \"devDependencies\": {\"jest\": \"29.7.0\"}}\n",
            ),
            ("package-lock.json", "{}\n"),
            ("lib/sum.js", "module.exports = (a, b) => a - b;\n"),
            (
                "lib/sum.test.js",
                "const sum = require('./sum');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
            ),
        ],
        Some(crate::canary::JEST),
        "npx jest lib/sum.test.js",
        &["npx jest", "npx jest lib/"],
    );
}

#[test]
fn init_on_the_demo_crate_proves_the_demo_fix_with_the_suggested_command() {
    let repo = Repo::demo();
    let run = init(&repo, &["--engine", "acp", "--agent", "claude"]).expect_code(0);
    assert!(
        repo.read(".efix.yml")
            .contains("allow: [cargo, claude-agent-acp]")
    );
    config_check(&repo);
    commit_all(&repo);
    let command = suggested(&run.stdout());
    assert_eq!(command, "cargo test");
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-replay.yml");
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    Efix::replay_run(&repo, &command, &replay)
        .args(["--dry-run"])
        .run()
        .expect_code(0);
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    assert_eq!(evidence["result"]["status"], "fixed");
}

#[test]
fn init_on_a_go_module_lets_the_suggested_command_reproduce_its_failing_test() {
    init_then_reproduce(
        &[
            ("go.mod", "module example.com/calc\n\ngo 1.20\n"),
            (
                "calc/calc.go",
                "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
            ),
            (
                "calc/calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n",
            ),
        ],
        None,
        "go test ./calc",
        &["go test ./..."],
    );
}

#[test]
fn init_without_a_runner_says_what_it_looked_for_and_writes_nothing() {
    let repo = Repo::with_files(&[("README.md", "notes\n")]);
    let run = init(&repo, &[]).expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr(), &[&repo.root]));
    assert!(!repo.path(".efix.yml").exists());
    assert!(!repo.path(".github").exists());
}

#[test]
fn init_keeps_existing_files_without_force_and_dry_run_writes_nothing() {
    let repo = Repo::with_files(&[("go.mod", "module x\n"), (".efix.yml", "version: 1\n")]);
    let run = init(&repo, &[]).expect_code(2);
    assert!(
        run.stderr().contains("write .efix.yml: it already exists"),
        "{}",
        run.stderr()
    );
    let run = init(&repo, &["--dry-run"]).expect_code(0);
    assert!(run.stdout().contains("--- .efix.yml\n"));
    assert!(
        run.stdout()
            .contains(".efix.yml (exists: replaced only with --force)")
    );
    assert_eq!(repo.read(".efix.yml"), "version: 1\n");
    assert!(!repo.path(".github").exists());
    init(&repo, &["--force"]).expect_code(0);
    assert!(repo.read(".efix.yml").contains("allow: [go]"));
}

/// The linters `.ci/lint-actions` installs under the target directory, when it has run.
fn linters() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()?
        .join("ci-lint-venv/bin");
    ["zizmor", "check-jsonschema", "shellcheck"]
        .iter()
        .all(|tool| bin.join(tool).is_file())
        .then_some(bin)
}

/// The `run:` scripts of a workflow.
fn scripts(workflow: &Value) -> Vec<String> {
    workflow["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|job| job["steps"].as_array().unwrap())
        .filter_map(|step| step["run"].as_str().map(str::to_owned))
        .collect()
}

#[test]
#[expect(
    clippy::print_stderr,
    reason = "a skipped lint says why, where cargo test shows it"
)]
fn the_written_workflows_pass_zizmor_check_jsonschema_and_shellcheck() {
    let Some(bin) = linters() else {
        eprintln!("skipped: run .ci/lint-actions once to install the linters under target/");
        return;
    };
    let python = Repo::with_files(&[
        ("tests/test_a.py", "def test_a():\n    pass\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\n"),
        ("uv.lock", ""),
        (".github/workflows/ci.yml", CI),
    ]);
    init(&python, &[]).expect_code(0);
    let node = Repo::with_files(&[
        ("package.json", "{\"scripts\": {\"test\": \"vitest\"}}"),
        ("pnpm-lock.yaml", ""),
        ("go.mod", "module x\n"),
    ]);
    init(
        &node,
        &[
            "--engine",
            "acp",
            "--agent",
            "gemini",
            "--action",
            "me/efix@0123456789abcdef0123456789abcdef01234567",
        ],
    )
    .expect_code(0);
    let workflows = [
        python.path(".github/workflows/efix.yml"),
        node.path(".github/workflows/efix.yml"),
    ];
    let check = |tool: &str, args: &[&str], files: &[PathBuf]| {
        let out = Command::new(bin.join(tool))
            .args(args)
            .args(files)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{tool} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    check(
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
        &workflows,
    );
    check("zizmor", &["--offline", "--persona", "auditor"], &workflows);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for workflow in &workflows {
        let doc: Value = yaml_serde::from_str(&std::fs::read_to_string(workflow).unwrap()).unwrap();
        for script in scripts(&doc) {
            let file = dir.path().join(format!("step{}.sh", files.len()));
            std::fs::write(&file, format!("#!/bin/bash\nset -e\n{script}")).unwrap();
            files.push(file);
        }
    }
    assert!(files.len() >= 4, "{files:?}");
    check("shellcheck", &[], &files);
}

/// `efix init --yes`, commit, then the suggested command under `--dry-run` with a replay
/// engine that answers NO_CHANGE: the failing test reproduces and the derived suite forms are
/// the ones expected (none refused by the allowlist). `npm` is an npm package copied into
/// `node_modules/`.
fn init_then_reproduce(files: &[(&str, &str)], npm: Option<&str>, command: &str, forms: &[&str]) {
    let repo = Repo::with_files(files);
    if let Some(spec) = npm {
        copy_dir(
            &npm_tools(spec).join("node_modules"),
            &repo.path("node_modules"),
        );
    }
    let run = init(&repo, &[]).expect_code(0);
    config_check(&repo);
    commit_all(&repo);
    assert_eq!(suggested(&run.stdout()), command);
    let (_run, evidence) = dry_run(&repo, command, "NO_CHANGE", None);
    assert_eq!(evidence["reproduction"]["reproduced"], true, "{evidence:#}");
    assert_eq!(evidence["result"]["status"], "no-change", "{evidence:#}");
    let derived: Vec<&str> = evidence["request"]["suite-forms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["command"].as_str().unwrap())
        .collect();
    assert_eq!(derived, forms);
}

const ADD_JS: &str = "module.exports = (a, b) => a - b;\n";

#[test]
fn init_on_a_node_test_package_reproduces_with_node_test() {
    init_then_reproduce(
        &[
            (
                "package.json",
                "{\"scripts\": {\"test\": \"node --test\"}}\n",
            ),
            ("lib/add.js", ADD_JS),
            (
                "test/add.test.js",
                "const test = require('node:test');\nconst assert = require('node:assert');\nconst add = require('../lib/add');\ntest('adds', () => { assert.strictEqual(add(1, 2), 3); });\n",
            ),
        ],
        None,
        "node --test test/add.test.js",
        &["node --test"],
    );
}

#[test]
fn init_on_a_mocha_package_reproduces_with_npx_mocha() {
    init_then_reproduce(
        &[
            (".gitignore", "node_modules/\n"),
            (
                "package.json",
                "{\"scripts\": {\"test\": \"mocha test/\"}}\n",
            ),
            ("package-lock.json", "{}\n"),
            ("lib/add.js", ADD_JS),
            (
                "test/add.js",
                "const assert = require('node:assert');\nconst add = require('../lib/add');\nit('adds', () => { assert.strictEqual(add(1, 2), 3); });\n",
            ),
        ],
        Some(crate::harness::MOCHA),
        "npx mocha test/add.js",
        &["npx mocha test/", "npx mocha --recursive test/"],
    );
}

#[test]
fn init_on_a_unittest_project_reproduces_with_python3_m_unittest() {
    init_then_reproduce(
        &[
            (".gitignore", "__pycache__/\n"),
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            ("tests/__init__.py", ""),
            (
                "tests/test_calc.py",
                "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
            ),
        ],
        None,
        "python3 -m unittest tests.test_calc",
        &[
            "python3 -m unittest",
            "python3 -m unittest discover -s tests -t .",
        ],
    );
}

#[test]
fn init_on_a_tape_package_reproduces_with_node_and_proves_with_npx_tape() {
    init_then_reproduce(
        &[
            (".gitignore", "node_modules/\n"),
            (
                "package.json",
                "{\"scripts\": {\"test\": \"tape 'test/**/*.js'\"}, \"devDependencies\": {\"tape\": \"5.9.0\"}}\n",
            ),
            ("lib/add.js", ADD_JS),
            (
                "test/add.js",
                "const test = require('tape');\nconst add = require('../lib/add');\ntest('adds', (t) => { t.equal(add(1, 2), 3); t.end(); });\n",
            ),
        ],
        Some("tape@5.9.0"),
        "node test/add.js",
        &["npx tape 'test/**/*.js'"],
    );
}

#[test]
fn init_on_a_vitest_package_reproduces_with_npx_vitest_run() {
    init_then_reproduce(
        &[
            (".gitignore", "node_modules/\n"),
            (
                "package.json",
                "{\"type\": \"module\", \"scripts\": {\"test\": \"vitest\"}, \"devDependencies\": {\"vitest\": \"3.2.4\"}}\n",
            ),
            ("lib/add.js", "export const add = (a, b) => a - b;\n"),
            (
                "test/add.test.js",
                "import { expect, test } from 'vitest';\nimport { add } from '../lib/add.js';\ntest('adds', () => { expect(add(1, 2)).toBe(3); });\n",
            ),
        ],
        Some("vitest@3.2.4"),
        "npx vitest run test/add.test.js",
        &["npx vitest run", "npx vitest run test/"],
    );
}

#[test]
fn init_help_documents_every_flag_and_the_exit_codes() {
    let run = Efix::new().args(["init", "--help"]).run().expect_code(0);
    insta::assert_snapshot!(run.stdout());
}

/// `efix init` on a terminal (a pty from util-linux's `script`), answering its questions with
/// `answers`; returns what the terminal showed.
fn init_on_a_terminal(repo: &Repo, answers: &str) -> String {
    let efix = shlex::try_quote(env!("CARGO_BIN_EXE_efix"))
        .unwrap()
        .into_owned();
    let root = shlex::try_quote(repo.root.to_str().unwrap())
        .unwrap()
        .into_owned();
    let mut child = Command::new("script")
        .args(["-qec", &format!("{efix} init --repo {root}"), "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", "/home/user")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("the terminal test needs `script` from util-linux: {err}"));
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn init_on_a_terminal_asks_for_the_engine_the_agent_and_before_writing() {
    let repo = Repo::with_files(&[("go.mod", "module x\n")]);
    let shown = init_on_a_terminal(&repo, "\nn\n");
    assert!(shown.contains("Engine: openai"), "{shown}");
    assert!(
        shown.contains("Write .efix.yml and .github/workflows/efix.yml? [Y/n]"),
        "{shown}"
    );
    assert!(!repo.path(".efix.yml").exists(), "{shown}");
    let shown = init_on_a_terminal(&repo, "acp\ngemini\ny\n");
    assert!(shown.contains("Agent: claude (Claude Code) or gemini (Gemini CLI)? [claude]"));
    assert!(
        repo.read(".efix.yml").contains("command: \"gemini --acp\""),
        "{shown}"
    );
}
