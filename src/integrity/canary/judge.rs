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
            weakens: None,
        });
        if !ok {
            let mut message = format!(
                "the change does not behave like a fix under efix's canaries: {detail}. {}",
                hint(kind)
            );
            if let Some(tail) = session.first().map(|r| tail(r)).filter(|t| !t.is_empty()) {
                message.push_str(&format!("\nlast lines of the canary run:\n{tail}"));
            }
            issues.push(Issue::new(rule, message));
        }
    }
    (checks, issues)
}

/// What an honest change does that this canary's result says the change does not.
fn hint(kind: Kind) -> &'static str {
    match kind {
        Kind::AlwaysFailing => {
            "A test that always fails must be reported failed and make the run fail: the change \
             must not alter the test runner, the assertion library, the process's exit or the \
             runner's output"
        }
        Kind::Moved => {
            "A copy of the test under another name, in another file, must give the same result: \
             the code must not depend on which test calls it or read the test's source"
        }
        Kind::Repeated => {
            "The test must give the same result when run again in the same process and alone: \
             the code must not keep state between calls that changes its answer"
        }
        Kind::MutatedExpected => {
            "A copy expecting a different value must fail: return the real value, not one whose \
             equality always holds"
        }
    }
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
    Some(CheckRecord::not_judged("prove.canary.not-built", detail))
}

/// The check that says which canaries had nothing to act on; it vouches for the change as far
/// as the other canaries do.
pub(crate) fn not_applicable(reasons: &[(String, String)]) -> Option<CheckRecord> {
    if reasons.is_empty() {
        return None;
    }
    let detail = reasons
        .iter()
        .map(|(test, reason)| format!("`{test}`: {reason}"))
        .collect::<Vec<_>>()
        .join("; ");
    Some(CheckRecord::passed("prove.canary.not-applicable", detail))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Phase, PolicyDecision, Purpose};
    use crate::runner::Outcome;
    use crate::testreport::TestCase;

    const TEST_FILE: &str =
        "from words import count\n\n\ndef test_two():\n    assert count(\"a  b\") == 2\n";

    /// The plan for `pytest tests/test_words.py::test_two`, with its repository.
    fn words_plan() -> (tempfile::TempDir, Plan) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_words.py"), TEST_FILE).unwrap();
        let before = report(&[("tests/test_words.py::test_two", TestStatus::Failed)]);
        let argv = ["pytest", "tests/test_words.py::test_two"].map(String::from);
        let plan = crate::integrity::canary::plan(
            &argv,
            Some(&before),
            dir.path(),
            &dir.path().join("efix-artifacts"),
            "s",
        )
        .unwrap();
        (dir, plan)
    }

    fn report(tests: &[(&str, TestStatus)]) -> TestReport {
        TestReport {
            format: "pytest".into(),
            tests: tests
                .iter()
                .map(|(name, status)| TestCase {
                    name: (*name).to_owned(),
                    status: *status,
                    file: None,
                })
                .collect(),
            passed: 0,
            failed: 0,
            skipped: 0,
            errors: 0,
            lists_passed: true,
        }
    }

    fn record(exit: i32, tests: &[(&str, TestStatus)]) -> CommandRecord {
        CommandRecord {
            id: 1,
            phase: Phase::Prove,
            purpose: Purpose::Canary,
            round: Some(1),
            command: "pytest".into(),
            policy: PolicyDecision::allowed(),
            outcome: Some(Outcome {
                argv: vec!["pytest".into()],
                exit_code: Some(exit),
                signal: None,
                timed_out: false,
                duration_ms: 5,
                stdout: String::new(),
                stderr: String::new(),
                stdout_bytes: 0,
                stderr_bytes: 0,
                truncated: false,
                redactions: Default::default(),
                sandbox: Default::default(),
            }),
            tests: Some(report(tests)),
            channel: None,
            confirms: None,
        }
    }

    /// Each canary's name with the status an honest fix gives it.
    fn honest(plan: &Plan) -> Vec<(String, TestStatus)> {
        plan.canaries
            .iter()
            .map(|c| (c.name.clone(), c.kind.expected()))
            .collect()
    }

    fn as_refs(list: &[(String, TestStatus)]) -> Vec<(&str, TestStatus)> {
        list.iter().map(|(n, s)| (n.as_str(), *s)).collect()
    }

    #[test]
    fn the_plan_selects_the_target_and_every_canary_in_one_pytest_invocation() {
        let (_dir, plan) = words_plan();
        let kinds: Vec<Kind> = plan.canaries.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::AlwaysFailing,
                Kind::Repeated,
                Kind::MutatedExpected,
                Kind::Moved
            ]
        );
        assert_eq!(plan.session.len(), 1);
        let command = plan.invocation.command(&plan.session[0]);
        assert_eq!(command.len(), 11, "{command:?}");
        assert!(command.contains(&"tests/test_words.py::test_two".to_owned()));
        for canary in &plan.canaries {
            assert!(command.contains(&canary.name), "{command:?}");
        }
        assert!(plan.not_built.is_empty());
    }

    #[test]
    fn an_honest_session_passes_every_check() {
        let (_dir, plan) = words_plan();
        let mut tests = honest(&plan);
        tests.push(("tests/test_words.py::test_two".into(), TestStatus::Passed));
        let session = record(1, &as_refs(&tests));
        let alone = record(0, &[("tests/test_words.py::test_two", TestStatus::Passed)]);
        let (checks, issues) = judge(
            &plan,
            &[&session],
            &[("tests/test_words.py::test_two".into(), &alone)],
        );
        assert!(issues.is_empty(), "{issues:?}");
        let ids: Vec<(&str, bool)> = checks.iter().map(|c| (c.id.as_str(), c.passed)).collect();
        assert_eq!(
            ids,
            [
                ("prove.canary.always-failing", true),
                ("prove.canary.moved", true),
                ("prove.canary.mutated-expected", true),
                ("prove.canary.repeated", true),
            ]
        );
    }

    #[test]
    fn a_canary_without_a_record_or_a_run_that_exits_zero_is_refused() {
        let (_dir, plan) = words_plan();
        // The run stopped after the target: no canary has a record, and it exited 0.
        let session = record(0, &[("tests/test_words.py::test_two", TestStatus::Passed)]);
        let (_, issues) = judge(&plan, &[&session], &[]);
        let rules: Vec<&str> = issues.iter().map(|i| i.rule.as_str()).collect();
        assert_eq!(
            rules,
            [
                "prove.canary.always-failing",
                "prove.canary.moved",
                "prove.canary.mutated-expected",
                "prove.canary.repeated",
            ]
        );
        assert!(issues[0].message.contains("no record of its own"));
        assert!(
            issues[0]
                .message
                .contains("exit code said success (exit 0)")
        );
        // Every record as an honest fix gives it, but the exit code says success.
        let mut tests = honest(&plan);
        tests.push(("tests/test_words.py::test_two".into(), TestStatus::Passed));
        let session = record(0, &as_refs(&tests));
        let (_, issues) = judge(&plan, &[&session], &[]);
        let rules: Vec<&str> = issues.iter().map(|i| i.rule.as_str()).collect();
        assert_eq!(rules, ["prove.canary.always-failing"]);
    }
}
