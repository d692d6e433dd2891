//! What `efix init` tells the user: what it found and why, what it wrote (or would write),
//! the suites Prove derives, the secrets to add by name, and the command to try next.

use std::fmt::Write as _;
use std::path::Path;

use super::config_file::{OPENAI_MODEL, allowed_programs};
use super::workflow::ACTION_PLACEHOLDER;
use super::{EngineChoice, PackageManager, Plan, WORKFLOW_PATH};

/// Width of the first column.
const LABEL: usize = 28;

/// `--repro` as a user types it: double quotes when nothing inside needs escaping.
fn quoted(command: &str) -> String {
    if command.contains(['"', '$', '`', '\\', '!']) {
        shlex::try_quote(command).map_or_else(|_| command.to_owned(), |q| q.into_owned())
    } else {
        format!("\"{command}\"")
    }
}

fn row(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "  {label:<LABEL$}{text}");
}

/// The summary; `written` is false for `--dry-run`. `root` only resolves the agent's
/// program, to say when it is not installed.
pub fn summary(plan: &Plan, written: bool, root: &Path) -> String {
    let mut out = String::from("Found:\n");
    for found in &plan.findings.runners {
        row(&mut out, found.what.name(), &found.why.join("; "));
    }
    for manager in [&plan.findings.python, &plan.findings.javascript]
        .into_iter()
        .flatten()
    {
        row(&mut out, manager.what.name(), &manager.why.join("; "));
    }
    if plan.findings.ci.is_empty() {
        row(
            &mut out,
            "CI",
            "no workflow under .github/workflows runs tests: only the comment trigger is written",
        );
    }
    for workflow in &plan.findings.ci {
        row(
            &mut out,
            "CI",
            &format!(
                "{} (\"{}\") runs `{}`",
                workflow.file, workflow.name, workflow.runs
            ),
        );
    }

    out.push_str(if written {
        "\nWrote:\n"
    } else {
        "\nWould write (--dry-run; the files follow below):\n"
    });
    for file in &plan.files {
        let what = if file.path == WORKFLOW_PATH {
            workflow_text(plan)
        } else {
            config_text(plan)
        };
        let note = match (file.exists, written) {
            (true, true) => " (replaced)",
            (true, false) => " (exists: replaced only with --force)",
            _ => "",
        };
        row(&mut out, &format!("{}{note}", file.path), &what);
    }

    out.push_str("\nSuites: Prove runs the widest of these that passes its baseline check:\n");
    for command in &plan.commands {
        let suites = if command.suites.is_empty() {
            "the whole suite already".to_owned()
        } else {
            command.suites.join(" | ")
        };
        let _ = writeln!(out, "  {}  ->  {suites}", command.example);
    }

    out.push_str("\nSecrets to add (Settings > Environments > efix > Environment secrets):\n");
    for secret in plan.secrets() {
        let _ = writeln!(out, "  {secret}");
    }

    let mut todo = Vec::new();
    if plan.action.is_none() {
        todo.push(format!(
            "replace `{ACTION_PLACEHOLDER}` in {WORKFLOW_PATH} with the efix action pinned by \
             commit (or run efix init again with --action OWNER/REPO@SHA --force)"
        ));
    }
    if let EngineChoice::Acp(agent) = plan.engine {
        let argv = shlex::split(agent.command()).unwrap_or_default();
        if crate::runner::resolve_program(&argv, &plan.config.acp_env, root).is_err() {
            todo.push(format!(
                "install the agent to try it here: npm install -g {} (`{}` is not on PATH)",
                agent.package(),
                agent.program()
            ));
        }
    }
    if !todo.is_empty() {
        out.push_str("\nTo do:\n");
        for item in todo {
            let _ = writeln!(out, "  {item}");
        }
    }

    if let Some(command) = plan.next_command() {
        // efix runs `pytest`, not `uv run pytest`: the project's environment must be on PATH.
        let environment = match plan.findings.python.as_ref().map(|f| f.what) {
            Some(PackageManager::Uv) => {
                " in the project's environment (uv sync; . .venv/bin/activate)"
            }
            Some(PackageManager::Poetry) => {
                " in the project's environment (poetry install; eval \"$(poetry env activate)\")"
            }
            _ => "",
        };
        let _ = write!(
            out,
            "\nTry it here: commit the files (efix runs only on a clean tree), then run a real test \
             of this repository{environment} (--dry-run leaves no change applied):\n  \
             efix run --repro {} --dry-run\n",
            quoted(command)
        );
    }
    out
}

fn config_text(plan: &Plan) -> String {
    let engine = match plan.engine {
        EngineChoice::Openai => format!("engine openai ({OPENAI_MODEL})"),
        EngineChoice::Acp(agent) => format!("engine acp ({}, `{}`)", agent.name(), agent.command()),
    };
    format!(
        "{engine}; commands.allow: {}",
        allowed_programs(&plan.commands, plan.engine).join(", ")
    )
}

fn workflow_text(plan: &Plan) -> String {
    let mut text = "`/efix <command>` comments".to_owned();
    if !plan.findings.ci.is_empty() {
        let names: Vec<String> = plan
            .findings
            .ci
            .iter()
            .map(|w| format!("\"{}\"", w.name))
            .collect();
        let _ = write!(
            text,
            "; failures of {} fanned out by cause through efix triage",
            names.join(", ")
        );
    }
    text
}

/// What `--dry-run` prints: the summary, then each file under a `--- PATH` line.
pub fn dry_run(plan: &Plan, root: &Path) -> String {
    let mut text = summary(plan, false, root);
    for file in &plan.files {
        let _ = write!(text, "\n--- {}\n{}", file.path, file.text);
    }
    text
}
