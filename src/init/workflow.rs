//! The `.github/workflows/efix.yml` `efix init` writes: the `/efix <command>` comment trigger
//! and, when the repository has CI workflows that run tests, the CI-failure fan-out through
//! `efix triage` (one fix job per cause), as in `examples/workflows/`.
//!
//! Permissions are granted per job and only what each job does; third-party actions are
//! pinned by commit; `run:` blocks take event data only through `env:`, never through
//! `${{ }}` inside the script. The dependencies are installed before efix runs, the way the
//! package manager's lockfile says, into places git ignores or outside the checkout (efix
//! refuses to run on a tree with untracked files).

use std::fmt::Write as _;

use super::EngineChoice;
use super::config_file::{OPENAI_KEY, one_line, scalar};
use super::detect::{Findings, PackageManager, Runner};

/// actions/checkout, pinned as in this repository's own workflows.
const CHECKOUT: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1";
const UPLOAD: &str = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0";
const DOWNLOAD: &str =
    "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1";
/// The efix action when `--action` does not name a pinned one.
pub const ACTION_PLACEHOLDER: &str = "OWNER/efix@v1";

/// The `uses:` line of the efix action: pinned when `action` names a commit, else the
/// placeholder with the one lint exception it needs.
fn efix_uses(action: Option<&str>) -> String {
    match action {
        Some(action) => format!("uses: {action}"),
        None => format!(
            "uses: {ACTION_PLACEHOLDER} # zizmor: ignore[unpinned-uses] replace with the efix \
             action pinned by commit (efix init --action OWNER/REPO@SHA)"
        ),
    }
}

/// Steps that install the dependencies of the runners found, indented for a job's `steps:`.
fn dependency_steps(findings: &Findings, engine: EngineChoice) -> String {
    let mut out = String::new();
    let python = findings.python.as_ref().map(|f| f.what);
    let needs_pytest = findings.runners.iter().any(|r| r.what == Runner::Pytest);
    match python {
        Some(PackageManager::Uv) => step(
            &mut out,
            "Install the Python dependencies (uv.lock)",
            &[
                "pipx install uv",
                "uv sync --frozen",
                "echo \"$PWD/.venv/bin\" >> \"$GITHUB_PATH\"",
            ],
        ),
        Some(PackageManager::Poetry) => step(
            &mut out,
            "Install the Python dependencies (poetry)",
            &[
                "pipx install poetry",
                "poetry config virtualenvs.in-project true",
                "poetry install --no-interaction",
                "echo \"$PWD/.venv/bin\" >> \"$GITHUB_PATH\"",
            ],
        ),
        Some(_) => {
            let mut lines = vec!["python3 -m venv \"$RUNNER_TEMP/venv\"".to_owned()];
            let pip = "\"$RUNNER_TEMP/venv/bin/pip\" install";
            for file in findings.files.iter().filter(|f| {
                !f.contains('/') && f.starts_with("requirements") && f.ends_with(".txt")
            }) {
                lines.push(format!("{pip} -r {}", scalar(file)));
            }
            if findings.python_package {
                lines.push(format!("{pip} -e ."));
            }
            if needs_pytest {
                lines.push(format!("{pip} pytest"));
            }
            lines.push("echo \"$RUNNER_TEMP/venv/bin\" >> \"$GITHUB_PATH\"".to_owned());
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            step(&mut out, "Install the Python dependencies (pip)", &lines);
        }
        None => {}
    }
    let has = |name: &str| findings.files.iter().any(|f| f == name);
    match findings.javascript.as_ref().map(|f| f.what) {
        Some(PackageManager::Pnpm) => step(
            &mut out,
            "Install the JavaScript dependencies (pnpm)",
            &[
                "npm install --global pnpm",
                if has("pnpm-lock.yaml") {
                    "pnpm install --frozen-lockfile"
                } else {
                    "pnpm install"
                },
            ],
        ),
        Some(PackageManager::Yarn) => step(
            &mut out,
            "Install the JavaScript dependencies (yarn)",
            &[if has(".yarnrc.yml") {
                "corepack enable && yarn install --immutable"
            } else if has("yarn.lock") {
                "yarn install --frozen-lockfile"
            } else {
                "yarn install"
            }],
        ),
        Some(_) => step(
            &mut out,
            "Install the JavaScript dependencies (npm)",
            &[if has("package-lock.json") {
                "npm ci"
            } else {
                "npm install"
            }],
        ),
        None => {}
    }
    if let EngineChoice::Acp(agent) = engine {
        let install = format!("npm install --global {}", agent.package());
        step(
            &mut out,
            &format!("Install the agent ({})", agent.name()),
            &[install.as_str()],
        );
    }
    out
}

fn step(out: &mut String, name: &str, lines: &[&str]) {
    // zizmor reads its exceptions from YAML comments, so they go on the `run:` line.
    let mut rules = Vec::new();
    let mut reasons = Vec::new();
    if lines.iter().any(|l| l.contains("GITHUB_PATH")) {
        rules.push("github-env");
        reasons.push("the only value written to GITHUB_PATH is a fixed directory");
    }
    if let Some(line) = lines.iter().find(|l| l.contains("npm install --global")) {
        rules.push("adhoc-packages");
        reasons.push(if line.contains('@') {
            "the agent's release, pinned as the end-to-end tests run it"
        } else {
            "the package manager that then installs the lockfile"
        });
    }
    let ignore = if rules.is_empty() {
        String::new()
    } else {
        format!(
            " # zizmor: ignore[{}] {}",
            rules.join(","),
            reasons.join("; ")
        )
    };
    let _ = writeln!(out, "      - name: {name}\n        run: |{ignore}");
    for line in lines {
        let _ = writeln!(out, "          {line}");
    }
}

/// The `with:`/`env:` of the efix step that runs a fix: the engine's key.
fn engine_inputs(engine: EngineChoice) -> (String, String) {
    match engine {
        EngineChoice::Openai => (
            format!("          api-key: ${{{{ secrets.{OPENAI_KEY} }}}}\n"),
            String::new(),
        ),
        EngineChoice::Acp(agent) => (
            String::new(),
            format!(
                "        env:\n          {key}: ${{{{ secrets.{key} }}}}\n",
                key = agent.key()
            ),
        ),
    }
}

/// The workflow's text; `example` is a test command of the repository, quoted in its header.
pub fn render(
    findings: &Findings,
    engine: EngineChoice,
    action: Option<&str>,
    example: &str,
) -> String {
    let ci: Vec<String> = findings.ci.iter().map(|w| w.name.clone()).collect();
    let deps = dependency_steps(findings, engine);
    let uses = efix_uses(action);
    let (with, env) = engine_inputs(engine);
    let mut out = String::new();
    let _ = write!(
        out,
        "# Written by `efix init` (see docs/init.md). A `/efix <command>` comment on an issue by\n\
         # someone with write permission runs efix on that command, e.g.\n\
         #   /efix {example}\n\
         # efix checks the commenter itself and opens a pull request with the proven fix.\n",
        example = one_line(example),
    );
    if !ci.is_empty() {
        out.push_str(
            "# When a CI workflow below fails on a branch of this repository, a triage job groups the\n\
             # failing tests by cause and one efix job per cause runs the command that reproduces it.\n",
        );
    }
    out.push_str(
        "name: efix\n\non:\n  # issue_comment runs with this repository's permissions for anyone's comment; the job runs\n  \
         # only the default branch's code, and efix decides who may trigger it before running anything.\n  \
         issue_comment: # zizmor: ignore[dangerous-triggers] efix checks the commenter's association and write permission, refuses forks and bots, and never checks out a pull request's code\n    \
         types: [created]\n",
    );
    if !ci.is_empty() {
        let names: Vec<String> = ci.iter().map(|n| scalar(n)).collect();
        let _ = write!(
            out,
            "  # workflow_run runs with this repository's permissions, which is why the jobs only act on\n  \
             # runs of this repository's own branches and check them out without credentials.\n  \
             workflow_run: # zizmor: ignore[dangerous-triggers] only runs of this repository's own branches are used (see the triage job's if:), and efix refuses a fork's run as well\n    \
             workflows: [{}]\n    types: [completed]\n",
            names.join(", ")
        );
    }
    // One run per issue (and, for CI failures, per branch) at a time; a newer one waits.
    let group = if ci.is_empty() {
        "github.event.issue.number"
    } else {
        "github.event.issue.number || github.event.workflow_run.head_branch"
    };
    let _ = write!(
        out,
        "\npermissions: {{}}\n\n\
         concurrency:\n  group: efix-${{{{ {group} }}}}\n  \
         cancel-in-progress: false\n\njobs:\n",
    );
    let _ = write!(
        out,
        "  comment:\n    name: efix from a comment\n    \
         # Cheap filters only; the real checks (association, permission, forks, bots) are efix's.\n    \
         if: github.event_name == 'issue_comment' && startsWith(github.event.comment.body, '/efix') && !endsWith(github.event.comment.user.login, '[bot]')\n    \
         runs-on: ubuntu-24.04\n    timeout-minutes: 60\n    \
         # Keep the engine's key in this environment's secrets, away from other workflows.\n    \
         environment: efix\n    permissions:\n      \
         contents: write # the commit and branch of the fix\n      \
         pull-requests: write # open or update the pull request\n      \
         issues: write # react to the comment and answer on the issue\n    steps:\n      \
         # The default branch, never the code of a pull request: efix refuses forks anyway.\n      \
         - uses: {CHECKOUT}\n        with:\n          persist-credentials: false\n\
         {deps}      - {uses}\n{env}{with_block}",
        with_block = if with.is_empty() {
            String::new()
        } else {
            format!("        with:\n{with}")
        },
    );
    if ci.is_empty() {
        return out;
    }
    let _ = write!(
        out,
        "\n  triage:\n    name: group the failures by cause\n    \
         if: github.event_name == 'workflow_run' && github.event.workflow_run.conclusion == 'failure' && github.event.workflow_run.head_repository.full_name == github.repository\n    \
         runs-on: ubuntu-24.04\n    timeout-minutes: 10\n    permissions:\n      \
         contents: read # check out the failed commit (its .efix.yml and go.mod)\n      \
         actions: read # the failed jobs and their logs\n      \
         pull-requests: read # causes that already have an open efix pull request\n    \
         outputs:\n      matrix: ${{{{ steps.triage.outputs.matrix }}}}\n      \
         jobs: ${{{{ steps.triage.outputs.jobs }}}}\n    steps:\n      \
         - uses: {CHECKOUT}\n        with:\n          ref: ${{{{ github.event.workflow_run.head_sha }}}}\n          \
         persist-credentials: false\n      \
         - {uses}\n        id: triage\n        with:\n          mode: triage\n          max-jobs: 8\n\n  \
         fix:\n    name: \"efix: ${{{{ matrix.cause }}}}\"\n    needs: triage\n    \
         if: needs.triage.outputs.jobs != '' && needs.triage.outputs.jobs != '0'\n    \
         runs-on: ubuntu-24.04\n    timeout-minutes: 60\n    \
         # Keep the engine's key in this environment's secrets, away from other workflows.\n    \
         environment: efix\n    permissions:\n      \
         contents: write # the commit and branch of the fix\n      \
         pull-requests: write # open or update the pull request\n      \
         actions: read # read the CI run that failed\n    strategy:\n      \
         matrix: ${{{{ fromJSON(needs.triage.outputs.matrix) }}}}\n      fail-fast: false\n      max-parallel: 4\n    \
         # One efix job per cause and branch at a time; a second failure of the same cause waits.\n    \
         concurrency:\n      group: efix-fix-${{{{ github.event.workflow_run.head_branch }}}}-${{{{ matrix.id }}}}\n      \
         cancel-in-progress: false\n    steps:\n      \
         - uses: {CHECKOUT}\n        with:\n          ref: ${{{{ github.event.workflow_run.head_sha }}}}\n          \
         persist-credentials: false\n\
         {deps}      - {uses}\n        id: efix\n{env}        with:\n          \
         command: ${{{{ matrix.command }}}}\n{with}          \
         # One summary for the whole fan-out comes from the report job.\n          comment: false\n      \
         - name: Record this cause's result\n        if: always()\n        env:\n          \
         CAUSE_ID: ${{{{ matrix.id }}}}\n          CAUSE: ${{{{ matrix.cause }}}}\n          \
         COMMAND: ${{{{ matrix.command }}}}\n          RESULT: ${{{{ steps.efix.outputs.result }}}}\n          \
         PR_URL: ${{{{ steps.efix.outputs.pr-url }}}}\n        run: |\n          \
         mkdir -p \"$RUNNER_TEMP/efix-cause\"\n          \
         jq -n --arg id \"$CAUSE_ID\" --arg cause \"$CAUSE\" --arg command \"$COMMAND\" \\\n            \
         --arg result \"${{RESULT:-error}}\" --arg pr \"$PR_URL\" \\\n            \
         '{{id: $id, cause: $cause, command: $command, result: $result, \"pr-url\": $pr}}' \\\n            \
         > \"$RUNNER_TEMP/efix-cause/$CAUSE_ID.json\"\n      \
         - uses: {UPLOAD}\n        if: always()\n        with:\n          \
         name: efix-cause-${{{{ matrix.id }}}}\n          path: ${{{{ runner.temp }}}}/efix-cause/\n          \
         if-no-files-found: warn\n\n  \
         report:\n    name: collect the results\n    needs: [triage, fix]\n    \
         if: always() && needs.triage.outputs.jobs != '' && needs.triage.outputs.jobs != '0'\n    \
         runs-on: ubuntu-24.04\n    timeout-minutes: 5\n    permissions:\n      \
         actions: read # download this run's artifacts\n    steps:\n      \
         - uses: {DOWNLOAD}\n        with:\n          pattern: efix-cause-*\n          path: causes\n          \
         merge-multiple: true\n      \
         - name: One summary for every cause\n        env:\n          FIX_RESULT: ${{{{ needs.fix.result }}}}\n        \
         run: |\n          {{\n            printf '## efix: one job per cause\\n\\n'\n            \
         printf '| cause | command | result | pull request |\\n|---|---|---|---|\\n'\n            \
         for file in causes/*.json; do\n              [ -f \"$file\" ] || continue\n              \
         jq -r '\"| \\(.cause | gsub(\"\\\\|\"; \"\\\\\\\\|\")) | `\\(.command | gsub(\"\\\\|\"; \"\\\\\\\\|\"))` | \\(.result) | \\(if .[\"pr-url\"] == \"\" then \"none\" else .[\"pr-url\"] end) |\"' \"$file\"\n            \
         done\n            printf '\\nThe fix jobs ended with: %s\\n' \"$FIX_RESULT\"\n          \
         }} >> \"$GITHUB_STEP_SUMMARY\"\n",
    );
    out
}
