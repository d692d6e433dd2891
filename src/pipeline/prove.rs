//! Prove: with the whole change applied, the reproduction must pass, every suite must pass
//! (a derived suite must gain no failure), and the per-test table compares before and after.

use std::collections::{BTreeMap, BTreeSet};

use crate::evidence::{CommandRecord, Phase, Prove, Purpose, Round, RoundVerdict, TestTable};
use crate::patch::{self, FileChange};
use crate::policy::Issue;
use crate::testreport::{self, TestReport, TestStatus};

use crate::integrity::guard::status_in_scope;

use super::PipelineError;
use super::checks::{check, pass_text};
use super::ctx::Ctx;

/// Lines of output quoted in a failed-proof issue.
const ISSUE_TAIL_LINES: usize = 15;

/// What Prove ran with the whole change, and the blocking issues it found.
pub(crate) struct Proof {
    /// The reproduction's run with the whole change.
    pub reproduction: usize,
    /// Each suite's run with the whole change, in suite order.
    pub suites: Vec<usize>,
    pub issues: Vec<Issue>,
}

/// Run the reproduction and every suite with the whole change, record the checks and the
/// before/after table in the round. The whole change is in the working tree on entry and on
/// return. `None` when the run must stop (the round's verdict says so; the tree is restored).
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    round: &mut Round,
) -> Result<Option<Proof>, PipelineError> {
    ctx.reporter.info("prove: running with the whole change");
    let command = ctx.command.clone();
    // The tests related to the change run last, after the suites, when their baseline held.
    let related = super::related::planned(round);
    let batch = std::iter::once((command, Purpose::FixedReproduction))
        .chain(
            ctx.suites
                .clone()
                .into_iter()
                .map(|s| (s, Purpose::FixedSuite)),
        )
        .chain(
            related
                .as_ref()
                .map(|(command, _)| (command.clone(), Purpose::RelatedFixed)),
        );
    let Some(ids) = ctx.run_batch(batch, Phase::Prove, Some(number))? else {
        ctx.restore()?;
        round.verdict = RoundVerdict::Stopped;
        return Ok(None);
    };
    // Commands may have written files; put the change back exactly.
    ctx.restore()?;
    patch::write_changes(&ctx.root, changes)?;
    // A run that does not name its passing tests is decided by its per-test rerun.
    let mut ids = ids;
    if !super::confirm::terse_runs(ctx, number, changes, &mut ids)? {
        round.verdict = RoundVerdict::Stopped;
        return Ok(None);
    }
    let reproduction = ids[0];
    let related = related.and_then(|(_, baseline)| Some((baseline, ids.pop()?)));
    let suites = ids[1..].to_vec();
    if let (Some(record), Some((_, fixed))) = (round.related.as_mut(), related) {
        record.fixed = Some(fixed);
    }
    let (table, mut issues) = judge(ctx, reproduction, &suites, related, round);
    // Canaries only for a change that passed: they tell a cheat from a fix, not a failure.
    if issues.is_empty() {
        let Some(canary_issues) = super::canary::run(ctx, number, changes, round)? else {
            ctx.restore()?;
            round.verdict = RoundVerdict::Stopped;
            return Ok(None);
        };
        issues.extend(canary_issues);
    }
    round.prove = Some(Prove {
        reproduction,
        suites: suites.clone(),
        table,
    });
    Ok(Some(Proof {
        reproduction,
        suites,
        issues,
    }))
}

/// The checks of Prove over the recorded runs, in order: the reproduction, each suite, no new
/// failures. Returns the table and the blocking issues.
fn judge(
    ctx: &Ctx<'_>,
    fixed_repro: usize,
    fixed_suites: &[usize],
    related: Option<(usize, usize)>,
    round: &mut Round,
) -> (TestTable, Vec<Issue>) {
    let evidence = &ctx.evidence;
    let repro_before = evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first())
        .and_then(|id| evidence.command(*id));
    let baselines: Vec<usize> = evidence
        .reproduction
        .as_ref()
        .map(|r| r.suite_baselines.clone())
        .unwrap_or_default();
    let fixed_repro_record = evidence.command(fixed_repro);
    let mut pairs = vec![(repro_before, fixed_repro_record)];
    for (i, id) in fixed_suites.iter().enumerate() {
        pairs.push((
            baselines.get(i).and_then(|b| evidence.command(*b)),
            evidence.command(*id),
        ));
    }
    if let Some((before, after)) = related {
        pairs.push((evidence.command(before), evidence.command(after)));
    }
    let table = table(&pairs);

    let mut issues = Vec::new();
    let repro_ok = fixed_repro_record.is_some_and(passes);
    round.checks.push(check(
        "prove.reproduction",
        repro_ok,
        &fixed_repro_record
            .map(|r| format!("`{}` {}", r.command, pass_text(r)))
            .unwrap_or_default(),
    ));
    if !repro_ok && let Some(record) = fixed_repro_record {
        issues.push(failure_issue(
            "prove.reproduction",
            "the reproduction",
            record,
        ));
    }
    // Any form of the derived suite (the one chosen before the fix replaced it).
    let derived = &evidence.request.suite_forms;
    for (i, id) in fixed_suites.iter().enumerate() {
        let Some(record) = evidence.command(*id) else {
            continue;
        };
        let is_derived = derived
            .iter()
            .any(|form| form.command == record.origin_command());
        let baseline = baselines.get(i).and_then(|b| evidence.command(*b));
        let ok = if is_derived {
            gains_no_failure(baseline, record)
        } else {
            passes(record)
        };
        let id_name = if is_derived {
            "prove.derived-suite"
        } else {
            "prove.suite"
        };
        round.checks.push(check(
            id_name,
            ok,
            &format!("`{}` {}", record.command, pass_text(record)),
        ));
        if !ok {
            issues.push(failure_issue(id_name, "a test suite", record));
        }
    }
    if let Some((before, after)) = related
        && let Some(record) = evidence.command(after)
    {
        let ok = gains_no_failure(evidence.command(before), record);
        round.checks.push(check(
            "prove.related-suite",
            ok,
            &format!("`{}` {}", record.command, pass_text(record)),
        ));
        if !ok {
            issues.push(failure_issue(
                "prove.related-suite",
                "the related form",
                record,
            ));
        }
    }
    let newly_ok = table.newly_failing.is_empty();
    round.checks.push(check(
        "prove.no-new-failures",
        newly_ok,
        &if newly_ok {
            "no test that passed before fails now".to_owned()
        } else {
            format!("newly failing: {}", table.newly_failing.join(", "))
        },
    ));
    if !newly_ok && issues.is_empty() {
        issues.push(Issue::new(
            "prove.no-new-failures",
            format!(
                "the change makes these tests fail: {}",
                table.newly_failing.join(", ")
            ),
        ));
    }
    let mut table = table;
    let (checks, found) = crate::integrity::proof::judge(&pairs, &mut table);
    round.checks.extend(checks);
    issues.extend(found);
    (table, issues)
}

/// Whether a derived or related run gained no failure over its baseline: failures that
/// predate the fix may stay; a run whose tests are not understood must pass if its baseline
/// did.
fn gains_no_failure(baseline: Option<&CommandRecord>, record: &CommandRecord) -> bool {
    let newly = table(&[(baseline, Some(record))]).newly_failing;
    newly.is_empty() && (record.tests.is_some() || !baseline.is_some_and(passes) || passes(record))
}

/// The before/after table over pairs of (before, after) records.
pub(crate) fn table(pairs: &[(Option<&CommandRecord>, Option<&CommandRecord>)]) -> TestTable {
    let mut before_failed = BTreeSet::new();
    let mut after_passed = BTreeSet::new();
    let (mut fixed, mut still, mut newly, mut missing) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    for (before, after) in pairs {
        let before = before.and_then(|r| r.tests.as_ref());
        let Some(after) = after.and_then(|r| r.tests.as_ref()) else {
            continue;
        };
        names_with(after, TestStatus::Passed, &mut after_passed);
        let Some(before) = before else {
            // No baseline: every failure after is new.
            names_with(after, TestStatus::Failed, &mut newly);
            continue;
        };
        names_with(before, TestStatus::Failed, &mut before_failed);
        // The test report's comparison speaks in ids; the table speaks in the runner's names.
        let name_of: BTreeMap<String, String> = before
            .tests
            .iter()
            .chain(&after.tests)
            .map(|t| (t.id(), t.name.clone()))
            .collect();
        let name = |id: &String| name_of.get(id).cloned().unwrap_or_else(|| id.clone());
        let comparison = testreport::compare(before, after);
        fixed.extend(comparison.fixed.iter().map(name));
        still.extend(comparison.still_failing.iter().map(name));
        newly.extend(comparison.newly_failing.iter().map(name));
        missing.extend(comparison.missing.iter().map(name));
        // A runner that lists only failures leaves them unconfirmed; a clean run settles it.
        for id in &comparison.unconfirmed {
            let test = name(id);
            if status_in_scope(after, Some(before), &test) == Some(TestStatus::Passed) {
                after_passed.insert(test.clone());
                fixed.insert(test);
            } else {
                missing.insert(test);
            }
        }
    }
    let missing: Vec<String> = missing
        .into_iter()
        .filter(|t| !fixed.contains(t) && !still.contains(t))
        .collect();
    TestTable {
        fixed: fixed.iter().cloned().collect(),
        still_failing: still.into_iter().collect(),
        newly_failing: newly
            .into_iter()
            .filter(|t| !before_failed.contains(t))
            .collect(),
        missing,
        lost: Vec::new(),
        passing_after: after_passed.len() as u64,
    }
}

fn names_with(report: &TestReport, status: TestStatus, into: &mut BTreeSet<String>) {
    into.extend(
        report
            .tests
            .iter()
            .filter(|t| t.status == status)
            .map(|t| t.name.clone()),
    );
}

/// Whether a command proves success: exit 0, not timed out, (when the runner's output is
/// understood) at least one test ran and none failed, and its result channels agree (a
/// report asked for was written whole, and the console does not contradict it).
pub(crate) fn passes(record: &CommandRecord) -> bool {
    record.succeeded()
        && !record.ran_no_tests()
        && record.tests.as_ref().is_none_or(|t| t.failed == 0)
        && record.channel.as_ref().is_none_or(|c| !c.fails_run())
}

/// The blocking issue for a command that should have passed.
pub(crate) fn failure_issue(rule: &str, what: &str, record: &CommandRecord) -> Issue {
    let Some(outcome) = &record.outcome else {
        return Issue::new(
            rule,
            format!(
                "{what} could not run: {}",
                record.policy.message.clone().unwrap_or_default()
            ),
        );
    };
    let status = if outcome.timed_out {
        "timed out".to_owned()
    } else {
        match outcome.exit_code {
            Some(code) => format!("exited with {code}"),
            None => format!(
                "was killed by {}",
                outcome.signal.as_deref().unwrap_or("a signal")
            ),
        }
    };
    let failing: Vec<String> = record
        .tests
        .as_ref()
        .map(|t| {
            t.tests
                .iter()
                .filter(|c| c.status == TestStatus::Failed)
                .map(|c| c.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut message = if record.ran_no_tests() {
        format!("{what} ran no test")
    } else {
        format!("{what} still fails: `{}` {status}", record.command)
    };
    if !failing.is_empty() {
        message.push_str(&format!("; failing tests: {}", failing.join(", ")));
    }
    let text = format!("{}\n{}", outcome.stdout, outcome.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(ISSUE_TAIL_LINES)..].join("\n");
    if !tail.is_empty() {
        message.push_str(&format!("\nlast lines of output:\n{tail}"));
    }
    Issue::new(rule, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::TestCase;

    /// A vitest-style report that names only failures.
    fn report(passed: u64, failed: u64, skipped: u64, failing: &[&str]) -> TestReport {
        TestReport {
            format: "vitest".to_owned(),
            tests: failing
                .iter()
                .map(|name| TestCase {
                    name: (*name).to_owned(),
                    status: TestStatus::Failed,
                    file: None,
                })
                .collect(),
            passed,
            failed,
            skipped,
            errors: 0,
            lists_passed: false,
        }
    }

    #[test]
    fn a_clean_run_passes_a_test_the_runner_does_not_list_when_nothing_went_missing() {
        let before = report(5, 1, 2, &["parses crlf"]);
        let after = report(6, 0, 2, &[]);
        assert_eq!(
            status_in_scope(&after, Some(&before), "parses crlf"),
            Some(TestStatus::Passed)
        );
        // Suites with skipped tests are the norm; without the run before, a skip is doubt.
        assert_eq!(status_in_scope(&after, None, "parses crlf"), None);
    }

    #[test]
    fn a_failing_test_turned_into_a_skip_or_gone_is_not_a_pass() {
        let before = report(5, 1, 2, &["parses crlf"]);
        let skipped_now = report(5, 0, 3, &[]);
        assert_eq!(
            status_in_scope(&skipped_now, Some(&before), "parses crlf"),
            None
        );
        let gone = report(5, 0, 2, &[]);
        assert_eq!(status_in_scope(&gone, Some(&before), "parses crlf"), None);
        let still_failing = report(5, 1, 2, &["parses crlf"]);
        assert_eq!(
            status_in_scope(&still_failing, Some(&before), "parses crlf"),
            Some(TestStatus::Failed)
        );
    }
}
