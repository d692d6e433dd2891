//! `efix init` on scratch repositories of each runner and package manager: what it finds, the
//! commands and suites it derives, and the files and summary it would write (snapshots).

use std::path::Path;

use super::*;

/// A scratch directory holding `files`.
fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn options(root: &Path, engine: EngineChoice) -> InitOptions {
    InitOptions {
        root: root.to_path_buf(),
        engine,
        action: None,
    }
}

/// The environment `efix config check` resolves `~/` in.
fn home() -> Env {
    [("HOME", "/home/user")]
        .into_iter()
        .map(|(k, v)| (std::ffi::OsString::from(k), std::ffi::OsString::from(v)))
        .collect()
}

fn plan_of(files: &[(&str, &str)], engine: EngineChoice) -> (tempfile::TempDir, Plan) {
    let dir = scratch(files);
    let plan = plan(&options(dir.path(), engine), &home()).unwrap();
    (dir, plan)
}

/// (runner, example, suites, programs) of each runner found.
fn derived(plan: &Plan) -> Vec<(Runner, String, Vec<String>, Vec<String>)> {
    plan.commands
        .iter()
        .map(|c| {
            (
                c.runner,
                c.example.clone(),
                c.suites.clone(),
                c.programs.clone(),
            )
        })
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| (*i).to_owned()).collect()
}

const CI_PYTEST: &str = "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: |\n          pip install -r requirements.txt\n          python -m pytest -q\n";

fn python_pip() -> Vec<(&'static str, &'static str)> {
    vec![
        ("words.py", "def count(t):\n    return len(t.split(' '))\n"),
        (
            "tests/test_words.py",
            "from words import count\n\ndef test_a():\n    assert count('a  b') == 2\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("requirements.txt", "pytest>=8\n"),
        (".github/workflows/ci.yml", CI_PYTEST),
    ]
}

#[test]
fn pytest_with_pip_and_a_ci_workflow_writes_the_comment_trigger_and_the_fan_out() {
    let (dir, plan) = plan_of(&python_pip(), EngineChoice::Openai);
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Pytest,
            "pytest tests/test_words.py".to_owned(),
            strings(&["pytest", "pytest tests/"]),
            strings(&["pytest"]),
        )]
    );
    assert_eq!(
        plan.findings.python.as_ref().unwrap().what,
        PackageManager::Pip
    );
    assert_eq!(plan.config.allow, strings(&["pytest"]));
    insta::assert_snapshot!(dry_run(&plan, dir.path()));
}

#[test]
fn unittest_with_uv_runs_the_module_with_python3() {
    let (dir, plan) = plan_of(
        &[
            ("pyproject.toml", "[project]\nname = \"w\"\n"),
            ("uv.lock", "version = 1\n"),
            (
                "tests/test_words.py",
                "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n",
            ),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Unittest,
            "python3 -m unittest tests.test_words".to_owned(),
            strings(&[
                "python3 -m unittest",
                "python3 -m unittest discover -s tests -t ."
            ]),
            strings(&["python3"]),
        )]
    );
    assert_eq!(
        plan.findings.python.as_ref().unwrap().what,
        PackageManager::Uv
    );
    insta::assert_snapshot!(dry_run(&plan, dir.path()));
}

#[test]
fn django_with_poetry_runs_manage_py_test() {
    let (_dir, plan) = plan_of(
        &[
            (
                "manage.py",
                "import os\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'site.settings')\nfrom django.core.management import execute_from_command_line\n",
            ),
            ("pyproject.toml", "[tool.poetry]\nname = \"site\"\n"),
            ("poetry.lock", ""),
            ("polls/tests.py", "from django.test import TestCase\n"),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan)[0].1,
        "python3 manage.py test polls.tests".to_owned()
    );
    assert_eq!(derived(&plan)[0].3, strings(&["python3"]));
    assert_eq!(
        plan.findings.python.as_ref().unwrap().what,
        PackageManager::Poetry
    );
    let workflow = &plan.files[1].text;
    assert!(
        workflow.contains("poetry install --no-interaction"),
        "{workflow}"
    );
}

#[test]
fn jest_with_npm_runs_npx_jest_on_a_spec_file() {
    let (dir, plan) = plan_of(
        &[
            (
                "package.json",
                r#"{"scripts": {"test": "jest --ci"}, "devDependencies": {"jest": "^29"}}"#,
            ),
            ("package-lock.json", "{}"),
            ("src/sum.js", "module.exports = (a, b) => a + b;\n"),
            ("src/sum.test.js", "test('x', () => {});\n"),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Jest,
            "npx jest src/sum.test.js".to_owned(),
            strings(&["npx jest", "npx jest src/"]),
            strings(&["npx"]),
        )]
    );
    assert!(plan.files[1].text.contains("npm ci"));
    insta::assert_snapshot!(dry_run(&plan, dir.path()));
}

#[test]
fn vitest_with_pnpm_runs_through_pnpm_exec() {
    let (_dir, plan) = plan_of(
        &[
            ("package.json", r#"{"scripts": {"test": "vitest"}}"#),
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
            ("test/a.spec.ts", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Vitest,
            "pnpm exec vitest run test/a.spec.ts".to_owned(),
            strings(&["pnpm exec vitest run", "pnpm exec vitest run test/"]),
            strings(&["pnpm"]),
        )]
    );
    assert!(
        plan.files[1]
            .text
            .contains("pnpm install --frozen-lockfile")
    );
}

#[test]
fn mocha_with_yarn_runs_what_the_test_script_gives_mocha() {
    let (_dir, plan) = plan_of(
        &[
            (
                "package.json",
                r#"{"scripts": {"test": "mocha 'test/**/*.js'"}}"#,
            ),
            ("yarn.lock", ""),
            ("test/a.js", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Mocha,
            "yarn mocha test/a.js".to_owned(),
            strings(&["npx mocha 'test/**/*.js'", "yarn mocha --recursive test/"]),
            strings(&["yarn", "npx"]),
        )]
    );
    assert!(
        plan.files[1]
            .text
            .contains("yarn install --frozen-lockfile")
    );
}

#[test]
fn tape_runs_its_test_file_with_node_and_the_suite_with_npx() {
    let (_dir, plan) = plan_of(
        &[
            (
                "package.json",
                r#"{"scripts": {"test": "npm run lint && npm run tests-only", "lint": "eslint .", "tests-only": "nyc tape 'test/**/*.js'"}, "devDependencies": {"tape": "^5"}}"#,
            ),
            ("test/index.js", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::Tape,
            "node test/index.js".to_owned(),
            strings(&["npx tape 'test/**/*.js'"]),
            strings(&["node", "npx"]),
        )]
    );
}

#[test]
fn node_test_runs_node_test_on_a_test_file() {
    let (_dir, plan) = plan_of(
        &[
            ("package.json", r#"{"scripts": {"test": "node --test"}}"#),
            ("test/a.test.mjs", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(
        derived(&plan),
        vec![(
            Runner::NodeTest,
            "node --test test/a.test.mjs".to_owned(),
            strings(&["node --test"]),
            strings(&["node"]),
        )]
    );
}

#[test]
fn cargo_and_go_in_one_repository_are_two_runners() {
    let (dir, plan) = plan_of(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", ""),
            ("tests/api.rs", ""),
            ("go.mod", "module example.com/x\n\ngo 1.22\n"),
            ("pkg/parse/parse_test.go", "package parse\n"),
        ],
        EngineChoice::Acp(Agent::Claude),
    );
    assert_eq!(
        derived(&plan),
        vec![
            (
                Runner::Cargo,
                "cargo test --test api".to_owned(),
                strings(&["cargo test --no-fail-fast"]),
                strings(&["cargo"]),
            ),
            (
                Runner::Go,
                "go test ./pkg/parse".to_owned(),
                strings(&["go test ./...", "go test ./pkg/..."]),
                strings(&["go"]),
            ),
        ]
    );
    assert_eq!(
        plan.config.allow,
        strings(&["cargo", "go", "claude-agent-acp"])
    );
    insta::assert_snapshot!(dry_run(&plan, dir.path()));
}

#[test]
fn pytest_and_jest_in_one_repository_install_both_and_allow_both() {
    let (_dir, plan) = plan_of(
        &[
            ("conftest.py", ""),
            ("tests/test_a.py", ""),
            ("package.json", r#"{"scripts": {"test": "jest"}}"#),
            ("yarn.lock", ""),
            ("web/a.test.js", ""),
        ],
        EngineChoice::Openai,
    );
    let runners: Vec<Runner> = plan.commands.iter().map(|c| c.runner).collect();
    assert_eq!(runners, [Runner::Pytest, Runner::Jest]);
    assert_eq!(plan.config.allow, strings(&["pytest", "yarn"]));
    let workflow = &plan.files[1].text;
    assert!(
        workflow.contains("Install the Python dependencies (pip)"),
        "{workflow}"
    );
    assert!(
        workflow.contains("yarn install --frozen-lockfile"),
        "{workflow}"
    );
}

#[test]
fn gemini_is_configured_as_the_real_agent_tests_run_it() {
    let (_dir, plan) = plan_of(
        &[("go.mod", "module x\n"), ("a_test.go", "package x\n")],
        EngineChoice::Acp(Agent::Gemini),
    );
    assert_eq!(plan.config.acp_command.as_deref(), Some("gemini --acp"));
    assert_eq!(plan.config.allow, strings(&["go", "gemini"]));
    assert_eq!(plan.secrets(), vec!["GEMINI_API_KEY"]);
    assert_eq!(derived(&plan)[0].1, "go test .");
    let workflow = &plan.files[1].text;
    assert!(
        workflow.contains("npm install --global @google/gemini-cli@0.61.0"),
        "{workflow}"
    );
    assert!(workflow.contains("GEMINI_API_KEY: ${{ secrets.GEMINI_API_KEY }}"));
}

#[test]
fn a_repository_without_a_runner_is_an_error_that_names_what_was_looked_for() {
    let dir = scratch(&[("README.md", "hello\n"), ("main.c", "int main(){}\n")]);
    let err = plan(&options(dir.path(), EngineChoice::Openai), &Env::default()).unwrap_err();
    let text = err
        .to_string()
        .replace(&dir.path().display().to_string(), "[ROOT]");
    insta::assert_snapshot!(text);
}

#[test]
fn existing_files_are_kept_without_force_and_replaced_with_it() {
    let mut files = python_pip();
    files.push((".efix.yml", "version: 1\n"));
    let (dir, plan) = plan_of(&files, EngineChoice::Openai);
    let err = write(dir.path(), &plan, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "write .efix.yml: it already exists (nothing was written; --force replaces it, \
         --dry-run shows what would be written)"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".efix.yml")).unwrap(),
        "version: 1\n"
    );
    assert!(!dir.path().join(WORKFLOW_PATH).exists());
    write(dir.path(), &plan, true).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".efix.yml")).unwrap(),
        plan.files[0].text
    );
}

#[test]
fn pip_installs_the_project_only_when_it_is_a_package() {
    let files = |pyproject: &'static str| {
        vec![
            ("pyproject.toml", pyproject),
            ("tests/test_a.py", ""),
            ("conftest.py", ""),
        ]
    };
    let (_dir, plan) = plan_of(&files("[tool.pytest.ini_options]\n"), EngineChoice::Openai);
    assert!(!plan.files[1].text.contains("install -e ."));
    let (_dir, plan) = plan_of(
        &files("[project]\nname = \"a\"\n\n[tool.pytest.ini_options]\n"),
        EngineChoice::Openai,
    );
    assert!(
        plan.files[1]
            .text
            .contains("\"$RUNNER_TEMP/venv/bin/pip\" install -e .\n")
    );
}

#[test]
fn a_line_break_in_a_script_or_a_file_name_cannot_add_keys_to_the_files() {
    let (_dir, plan) = plan_of(
        &[
            (
                "package.json",
                r#"{"scripts": {"test": "jest\nengine: replay"}}"#,
            ),
            ("a\nengine: replay.test.js", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(plan.config.engine, crate::config::EngineKind::Openai);
    for file in &plan.files {
        assert!(!file.text.contains("\nengine: replay"), "{}", file.text);
    }
}

#[test]
fn a_repo_that_is_not_a_directory_is_named() {
    let dir = scratch(&[]);
    let missing = dir.path().join("nope");
    let err = plan(&options(&missing, EngineChoice::Openai), &home()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("set up efix in {}: not a directory", missing.display())
    );
}

#[test]
fn the_action_must_be_pinned_by_a_full_commit() {
    let dir = scratch(&python_pip());
    let with = |action: &str| {
        plan(
            &InitOptions {
                action: Some(action.to_owned()),
                ..options(dir.path(), EngineChoice::Openai)
            },
            &Env::default(),
        )
    };
    assert!(matches!(with("me/efix@v1"), Err(InitError::Action { .. })));
    assert!(matches!(
        with("efix@0123456789abcdef0123456789abcdef01234567"),
        Err(InitError::Action { .. })
    ));
    let pinned = with("me/efix@0123456789abcdef0123456789abcdef01234567").unwrap();
    let workflow = &pinned.files[1].text;
    assert!(workflow.contains("uses: me/efix@0123456789abcdef0123456789abcdef01234567\n"));
    assert!(!workflow.contains("unpinned-uses"));
}

#[test]
fn efix_own_workflow_is_not_taken_for_ci_and_node_modules_is_not_read() {
    let (_dir, plan) = plan_of(
        &[
            ("go.mod", "module x\n"),
            (
                ".github/workflows/efix.yml",
                "name: efix\non: [push]\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: me/efix@v1\n      - run: go test ./...\n",
            ),
            ("node_modules/jest/package.json", "{}"),
            ("node_modules/x/a.test.js", ""),
        ],
        EngineChoice::Openai,
    );
    assert!(plan.findings.ci.is_empty());
    assert_eq!(derived(&plan)[0].1, "go test ./...");
    assert!(!plan.files[1].text.contains("workflow_run"));
}

#[test]
fn the_example_is_a_test_of_the_suite_not_a_fixture_or_an_example() {
    let (_dir, plan) = plan_of(
        &[
            ("conftest.py", ""),
            ("aaa/test_first.py", ""),
            ("examples/test_demo.py", ""),
            ("tests/fixtures/test_data.py", ""),
            ("tests/test_real.py", ""),
        ],
        EngineChoice::Openai,
    );
    assert_eq!(derived(&plan)[0].1, "pytest tests/test_real.py");
}

#[test]
fn runner_lines_name_the_runner_whatever_launches_it() {
    for (line, runner) in [
        ("python -m pytest -q", Runner::Pytest),
        ("uv run pytest tests", Runner::Pytest),
        ("python manage.py test", Runner::Django),
        ("python -m unittest discover", Runner::Unittest),
        ("npx jest --ci", Runner::Jest),
        ("c8 node --test test/", Runner::NodeTest),
        ("cargo nextest run", Runner::Cargo),
        ("go test -race ./...", Runner::Go),
        (
            "${{ env.CARGO }} test --workspace ${{ env.TARGET_FLAGS }}",
            Runner::Cargo,
        ),
        ("$CARGO test", Runner::Cargo),
    ] {
        assert_eq!(detect::runners_in_line(line), vec![runner], "{line}");
    }
    assert!(detect::runners_in_line("cargo build && go vet ./...").is_empty());
}

#[test]
fn ci_workflows_that_run_tests_through_a_task_runner_are_found() {
    for run in [
        "uv run --locked --group dev tox run",
        "RICHGO_FORCE_COLOR=1 make richtest",
        "npm run test:unit",
        "hatch test",
    ] {
        let workflow = format!(
            "name: Tests\non: [push]\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo hi\n      - run: {run}\n"
        );
        let (_dir, plan) = plan_of(
            &[
                ("go.mod", "module x\n"),
                (".github/workflows/t.yml", &workflow),
            ],
            EngineChoice::Openai,
        );
        assert_eq!(
            plan.findings.ci,
            vec![CiWorkflow {
                file: ".github/workflows/t.yml".to_owned(),
                name: "Tests".to_owned(),
                runs: run.to_owned(),
            }],
            "{run}"
        );
    }
    let (_dir, plan) = plan_of(
        &[
            ("go.mod", "module x\n"),
            (
                ".github/workflows/lint.yml",
                "on: [push]\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: make lint\n",
            ),
        ],
        EngineChoice::Openai,
    );
    assert!(plan.findings.ci.is_empty());
}
