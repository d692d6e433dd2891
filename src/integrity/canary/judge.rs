//! Judging the canary runs: each canary's own record in the session's report must show the
//! verdict an honest fix gives it, and the session's exit code must say failure (the
//! always-failing canary ran in it). A canary with no record of its own fails its check: a
//! run that lost records is not a pass.

use std::collections::BTreeMap;

use super::plan::{Kind, Plan};
use crate::evidence::{CheckRecord, CommandRecord};
use crate::policy::Issue;
use crate::testreport::{TestReport, TestStatus};

/// Lines of output quoted in a refusal.
const TAIL_LINES: usize = 12;

/// The checks and blocking issues of one proof's canaries. `session` holds the session's
/// records in plan order; `alone` one record per target, in plan order.
pub(crate) fn judge(
    plan: &Plan,
    session: &[&CommandRecord],
    alone: &[(String, &CommandRecord)],
) -> (Vec<CheckRecord>, Vec<Issue>) {
    let mut seen: BTreeMap<&'static str, (Kind, Vec<String>, Vec<String>)> = BTreeMap::new();
    let mut note = |kind: Kind, ok: bool, text: String| {
        let entry = seen
            .entry(kind.rule())
            .or_insert_with(|| (kind, Vec::new(), Vec::new()));
        if ok {
            entry.1.push(text);
        } else {
            entry.2.push(text);
        }
    };
    let reports: Vec<Option<&TestReport>> = session.iter().map(|r| r.tests.as_ref()).collect();
    let find = |name: &str| -> Option<TestStatus> { status_in(&reports, name) };
    let failed_exit = session.first().is_some_and(|r| {
        r.outcome
            .as_ref()
            .is_some_and(|o| !o.timed_out && o.exit_code.is_some_and(|c| c != 0))
    });
    for target in &plan.targets {
        let status = reports.iter().flatten().find_map(|r| r.status_of(target));
        note(
            Kind::Repeated,
            status == Some(TestStatus::Passed),
            format!(
                "the target `{target}` beside its canaries: {}",
                status_text(status)
            ),
        );
    }
    for canary in &plan.canaries {
        let status = find(&canary.name);
        let mut ok = status == Some(canary.kind.expected());
        let mut text = format!(
            "`{}` ({}) for `{}`: expected {}, saw {}",
            canary.name,
            canary.kind.what(),
            canary.target,
            verdict(canary.kind.expected()),
            status_text(status)
        );
        if canary.kind == Kind::AlwaysFailing && !failed_exit {
            ok = false;
            let exit = session
                .first()
                .and_then(|r| r.outcome.as_ref())
                .and_then(|o| o.exit_code)
                .map_or("no exit code".to_owned(), |c| format!("exit {c}"));
            text.push_str(&format!("; the run's exit code said success ({exit})"));
        }
        note(canary.kind, ok, text);
    }
    for (target, record) in alone {
        let status = record.tests.as_ref().and_then(|r| r.status_of(target));
        note(
            Kind::Repeated,
            status == Some(TestStatus::Passed),
            format!("the target `{target}` run alone: {}", status_text(status)),
        );
    }
    let mut checks = Vec::new();
    let mut issues = Vec::new();
    for (rule, (kind, passed, failed)) in seen {
        let ok = failed.is_empty();
        let detail = if ok {
            passed.join("; ")
        } else {
            failed.join("; ")
        };
        checks.push(CheckRecord {
            id: rule.to_owned(),
            passed: ok,
            detail: detail.clone(),
        });
        if !ok {
            let mut message = format!(
                "a canary did not behave as with an honest fix ({}): {detail}",
                kind.what()
            );
            if let Some(tail) = session.first().map(|r| tail(r)).filter(|t| !t.is_empty()) {
                message.push_str(&format!("\nlast lines of the canary run:\n{tail}"));
            }
            issues.push(Issue::new(rule, message));
        }
    }
    (checks, issues)
}

/// The check that says, per test, why no canary (or no mutated canary) was built.
pub(crate) fn not_built(reasons: &[(String, String)]) -> Option<CheckRecord> {
    if reasons.is_empty() {
        return None;
    }
    let detail = reasons
        .iter()
        .map(|(test, reason)| format!("`{test}`: {reason}"))
        .collect::<Vec<_>>()
        .join("; ");
    Some(CheckRecord {
        id: "prove.canary.not-built".to_owned(),
        passed: true,
        detail,
    })
}

/// A canary's status from its own records across the session's reports: failed if any record
/// failed, passed if every record passed; `None` when no report names it.
fn status_in(reports: &[Option<&TestReport>], name: &str) -> Option<TestStatus> {
    let statuses: Vec<TestStatus> = reports
        .iter()
        .flatten()
        .flat_map(|r| r.tests.iter())
        .filter(|t| t.name.contains(name))
        .map(|t| t.status)
        .collect();
    if statuses.contains(&TestStatus::Failed) {
        Some(TestStatus::Failed)
    } else if statuses.contains(&TestStatus::Skipped) {
        Some(TestStatus::Skipped)
    } else {
        statuses.first().copied()
    }
}

fn verdict(status: TestStatus) -> &'static str {
    match status {
        TestStatus::Passed => "passed",
        TestStatus::Failed => "failed",
        TestStatus::Skipped => "skipped",
    }
}

fn status_text(status: Option<TestStatus>) -> &'static str {
    status.map_or("no record of its own", verdict)
}

fn tail(record: &CommandRecord) -> String {
    let Some(outcome) = &record.outcome else {
        return String::new();
    };
    let text = format!("{}\n{}", outcome.stdout, outcome.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}
