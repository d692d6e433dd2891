//! What `efix triage` prints: the job matrix (`strategy.matrix` takes it as is, through
//! `fromJSON`) and the Markdown table for the step summary.

use serde::Serialize;

use super::group::{Group, Skipped, Triage};

#[derive(Serialize)]
struct Matrix<'a> {
    include: Vec<Entry<'a>>,
}

#[derive(Serialize)]
struct Entry<'a> {
    id: &'a str,
    command: &'a str,
    tests: &'a [String],
    rule: &'static str,
    cause: &'a str,
}

/// `{"include":[{"id","command","tests","rule","cause"}]}` on one line. Only matrix entries are in
/// it: any other top-level key would become a matrix dimension.
pub fn matrix_json(triage: &Triage) -> String {
    let matrix = Matrix {
        include: triage
            .groups
            .iter()
            .map(|group| Entry {
                id: &group.id,
                command: &group.command,
                tests: &group.tests,
                rule: group.rule.name(),
                cause: &group.cause,
            })
            .collect(),
    };
    serde_json::to_string(&matrix).unwrap_or_else(|_| "{\"include\":[]}".to_owned())
}

/// Tests listed per group in the table before the rest are counted.
const TESTS_SHOWN: usize = 5;

/// The step summary: one row per matrix job, then what was left out and why.
pub fn markdown(triage: &Triage) -> String {
    let causes =
        triage.groups.len() + triage.left_out.len() + triage.refused.len() + triage.open.len();
    let mut out = format!(
        "## efix triage: {} failing {} from {} {}\n\n",
        triage.failures,
        plural(triage.failures, "test", "tests"),
        causes,
        plural(causes, "cause", "causes"),
    );
    if triage.groups.is_empty() {
        out.push_str("No efix job to start.\n");
    } else {
        out.push_str("| job | rule | cause | tests | command |\n|---|---|---|---|---|\n");
        for group in &triage.groups {
            out.push_str(&row(group));
        }
    }
    section(&mut out, "Left out (over the job limit)", &triage.left_out);
    section(&mut out, "Refused by `commands.allow`", &triage.refused);
    section(
        &mut out,
        "Skipped: an efix pull request is already open",
        &triage.open,
    );
    out
}

fn row(group: &Group) -> String {
    format!(
        "| `{}` | {} | {} | {} | {} |\n",
        group.id,
        group.rule.name(),
        cell(&group.cause),
        cell(&tests_text(&group.tests)),
        code(&group.command)
    )
}

fn section(out: &mut String, title: &str, skipped: &[Skipped]) {
    if skipped.is_empty() {
        return;
    }
    out.push_str(&format!("\n**{title}**\n\n"));
    for item in skipped {
        out.push_str(&format!(
            "- `{}` {} ({} {}): {}; {}\n",
            item.group.id,
            item.group.cause.replace('\n', " "),
            item.group.tests.len(),
            plural(item.group.tests.len(), "test", "tests"),
            code(&item.group.command),
            item.reason
        ));
    }
}

fn tests_text(tests: &[String]) -> String {
    let mut text = tests
        .iter()
        .take(TESTS_SHOWN)
        .map(|test| format!("`{test}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if tests.len() > TESTS_SHOWN {
        text.push_str(&format!(" and {} more", tests.len() - TESTS_SHOWN));
    }
    format!("{} ({text})", tests.len())
}

/// A table cell: no line breaks, `|` escaped.
fn cell(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace('|', "\\|")
}

/// Inline code that survives backticks in the text (a longer fence) and table pipes.
fn code(text: &str) -> String {
    let text = cell(text);
    let fence = if text.contains('`') { "`` " } else { "`" };
    let close = if text.contains('`') { " ``" } else { "`" };
    format!("{fence}{text}{close}")
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}
