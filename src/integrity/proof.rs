//! The proof's integrity checks over the runs with the whole change, each with its own rule:
//!
//! - `prove.report-missing`: a runner asked for its structured report ended without writing
//!   it, or wrote it cut short (the run stopped before its end);
//! - `prove.channel-mismatch`: the console contradicts the runner's report, or, where the
//!   console is the only channel, itself;
//! - `prove.missing-tests`: a test with a record in a baseline has none after the change.
//!
//! `pipeline::prove` runs the commands and calls [`judge`] with (baseline, after) pairs.

use std::fmt::Write as _;

use crate::evidence::{CheckRecord, CommandRecord, TestTable};
use crate::policy::Issue;

use super::channel::ChannelStatus;
use super::completeness::{self, Lost, Side};

/// Names of lost tests quoted in an issue before the rest are counted.
const NAMED_AT_MOST: usize = 20;

/// The checks and blocking issues for the runs with the whole change, given as (baseline,
/// after) pairs: the reproduction first, then each suite. Lost tests are added to the table.
pub(crate) fn judge(
    pairs: &[(Option<&CommandRecord>, Option<&CommandRecord>)],
    table: &mut TestTable,
) -> (Vec<CheckRecord>, Vec<Issue>) {
    let mut checks = Vec::new();
    let mut issues = Vec::new();
    let afters: Vec<&CommandRecord> = pairs.iter().filter_map(|(_, after)| *after).collect();

    let asked: Vec<&CommandRecord> = afters
        .iter()
        .copied()
        .filter(|r| {
            r.channel
                .as_ref()
                .is_some_and(|c| c.report.is_some() || failed(c.status))
        })
        .collect();
    // Commands whose baseline wrote no report ran as written, before and after the change:
    // the evidence names each and says why its report channel was not used.
    let as_written: Vec<String> = pairs
        .iter()
        .filter_map(|(before, after)| {
            let channel = (*before)?.channel.as_ref()?;
            let after = (*after)?;
            (channel.status == ChannelStatus::Unsupported && after.channel.is_none()).then(|| {
                format!(
                    "`{}` ran as written, its console the only channel: {}",
                    after.origin_command(),
                    channel
                        .note
                        .as_deref()
                        .unwrap_or("its runner rejected the report")
                )
            })
        })
        .collect();
    if !asked.is_empty() || !as_written.is_empty() {
        let broken: Vec<&CommandRecord> = asked
            .iter()
            .copied()
            .filter(|r| r.channel.as_ref().is_some_and(|c| failed(c.status)))
            .collect();
        let mut parts = if asked.is_empty() {
            Vec::new()
        } else if broken.is_empty() {
            vec![format!(
                "the runner's report was read for {} run(s)",
                asked.len()
            )]
        } else {
            broken.iter().map(|r| missing_text(r)).collect::<Vec<_>>()
        };
        parts.extend(as_written);
        let detail = parts.join("; ");
        checks.push(record("prove.report-missing", broken.is_empty(), &detail));
        for r in broken {
            issues.push(Issue::new(
                "prove.report-missing",
                format!(
                    "{}: a run that ends before its runner writes its report is a failure, \
                     whatever its exit code",
                    missing_text(r)
                ),
            ));
        }
    }

    let disagreeing: Vec<(&CommandRecord, &[String])> = afters
        .iter()
        .filter_map(|r| {
            let c = r.channel.as_ref()?;
            (!c.disagreements.is_empty()).then_some((*r, c.disagreements.as_slice()))
        })
        .collect();
    if !disagreeing.is_empty() || afters.iter().any(|r| r.channel.is_some()) {
        let detail = if disagreeing.is_empty() {
            "the console agrees with the runner's report".to_owned()
        } else {
            disagreeing
                .iter()
                .map(|(r, found)| format!("`{}`: {}", r.command, found.join("; ")))
                .collect::<Vec<_>>()
                .join("; ")
        };
        checks.push(record(
            "prove.channel-mismatch",
            disagreeing.is_empty(),
            &detail,
        ));
        for (r, found) in disagreeing {
            let mut message = format!(
                "the test results of `{}` disagree: printed result lines are not results; \
                 the runner's own report and counts are",
                r.command
            );
            for line in found {
                let _ = write!(message, "\n- {line}");
            }
            issues.push(Issue::new("prove.channel-mismatch", message));
        }
    }

    let mut lost = Lost::default();
    for (before, after) in pairs {
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        lost.extend(completeness::lost(side(before), side(after)));
    }
    let mut names: Vec<String> = lost.named.iter().cloned().collect();
    // A failing test that did not run after is already in the table's `missing`.
    table.lost = names
        .iter()
        .filter(|name| !table.missing.contains(name))
        .cloned()
        .collect();
    let mut detail = if lost.is_empty() {
        "every test with a record before has one after".to_owned()
    } else {
        lost_text(&mut names, lost.uncounted)
    };
    let unstable = unstable(pairs);
    if !unstable.is_empty() {
        let _ = write!(
            detail,
            "; unstable ids (parameters that change from run to run: times, addresses, random \
             values), matched by their stable part: {}",
            unstable.join(", ")
        );
    }
    checks.push(record("prove.missing-tests", lost.is_empty(), &detail));
    if !lost.is_empty() {
        issues.push(Issue::new(
            "prove.missing-tests",
            format!(
                "{detail}; a test that ran before must run after the change and pass (a \
                 process that exits early does not make its tests pass)"
            ),
        ));
    }
    (checks, issues)
}

/// The tests whose ids differ between a baseline and its run after the change only in
/// volatile parameter values, as `before -> after`, each once.
fn unstable(pairs: &[(Option<&CommandRecord>, Option<&CommandRecord>)]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for (before, after) in pairs {
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        let reports = [
            (before.tests.as_ref(), after.tests.as_ref()),
            (
                before.channel.as_ref().and_then(|c| c.trusted()),
                after.channel.as_ref().and_then(|c| c.trusted()),
            ),
        ];
        for (was, now) in reports {
            let (Some(was), Some(now)) = (was, now) else {
                continue;
            };
            let (_, matched) = crate::testreport::align_volatile(was, now);
            out.extend(
                matched
                    .into_iter()
                    .map(|(was, now)| format!("`{was}` -> `{now}`")),
            );
        }
    }
    out.into_iter().collect()
}

fn failed(status: ChannelStatus) -> bool {
    matches!(status, ChannelStatus::Missing | ChannelStatus::Truncated)
}

fn side(record: &CommandRecord) -> Side<'_> {
    Side {
        tests: record.tests.as_ref(),
        channel: record.channel.as_ref(),
    }
}

fn record(id: &str, passed: bool, detail: &str) -> CheckRecord {
    CheckRecord {
        id: id.to_owned(),
        passed,
        detail: detail.to_owned(),
        weakens: None,
    }
}

fn missing_text(r: &CommandRecord) -> String {
    let runner = r.channel.as_ref().map_or("", |c| c.runner.as_str());
    let what = match r.channel.as_ref().map(|c| c.status) {
        Some(ChannelStatus::Truncated) => "wrote its report cut short",
        _ => "ended without writing its report",
    };
    format!("`{}`: {runner} {what}", r.command)
}

fn lost_text(names: &mut Vec<String>, uncounted: Option<(u64, u64)>) -> String {
    let mut parts = Vec::new();
    if !names.is_empty() {
        let total = names.len();
        names.truncate(NAMED_AT_MOST);
        let mut text = format!(
            "{total} test(s) with a record before have none after (absent, skipped or \
             unconfirmed): {}",
            names.join(", ")
        );
        if total > NAMED_AT_MOST {
            let _ = write!(text, " and {} more", total - NAMED_AT_MOST);
        }
        parts.push(text);
    }
    if let Some((before, after)) = uncounted {
        parts.push(format!(
            "{before} test(s) ran before the change and {after} after"
        ));
    }
    parts.join("; ")
}
