//! What the proof's integrity needs from a run: the commands it executes (the reproduction and
//! the suites), so the patch policy counts the files that define them as test harness
//! (`Makefile` when the reproduction is `make test`), and the rule that the test side of a
//! change alone must not make the reproduction pass (`prevent.tests-pass-without-fix`).

use crate::evidence::CommandRecord;
use crate::patch::PatchPolicy;
use crate::policy::Issue;

use super::super::checks::pass_text;

/// The commands a run executes: the reproduction, then the suites, then any configured suite
/// not among them, without repeats.
pub(crate) fn commands_in_play(
    command: &str,
    suites: &[String],
    configured: &[String],
) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    for c in std::iter::once(command)
        .chain(suites.iter().map(String::as_str))
        .chain(configured.iter().map(String::as_str))
    {
        if !commands.iter().any(|k| k == c) {
            commands.push(c.to_owned());
        }
    }
    commands
}

/// The configured patch policy with this run's commands in play.
pub(crate) fn patch_policy(
    configured: &PatchPolicy,
    command: &str,
    suites: &[String],
) -> PatchPolicy {
    PatchPolicy {
        commands: commands_in_play(command, suites, &configured.commands),
        ..configured.clone()
    }
}

/// Whether a run counts as passing for this rule: it exited 0 in time and its output, when
/// understood, names no failure. A run that ran no test passes too: a test side that renames
/// or filters away the failing test makes the command succeed just the same.
fn passed(record: &CommandRecord) -> bool {
    record.succeeded()
        && record
            .tests
            .as_ref()
            .is_none_or(|t| t.failed == 0 && t.errors == 0)
}

/// The rule on the reproduction's run with only the test side applied (`test_files`): it must
/// still fail. `Ok` holds the detail of the passed check, `Err` the issue to refuse with.
pub(crate) fn tests_pass_without_fix(
    record: &CommandRecord,
    test_files: &[String],
) -> Result<String, Issue> {
    let result = pass_text(record);
    if !passed(record) {
        return Ok(format!(
            "the reproduction `{}` still fails with only the test side of the change applied \
             ({result})",
            record.command
        ));
    }
    Err(Issue::new(
        "prevent.tests-pass-without-fix",
        format!(
            "with only the test side of the change applied ({}), the reproduction `{}` already \
             passes ({result}), so the test changes, not a fix, make it pass: keep the failing \
             test and the test harness as they are and fix the code that fails",
            test_files.join(", "),
            record.command
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Phase, PolicyDecision, Purpose};
    use crate::runner::Outcome;

    fn record(exit: i32, tests: Option<(u64, u64)>) -> CommandRecord {
        let outcome = Outcome {
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
        };
        CommandRecord {
            id: 1,
            phase: Phase::Prevent,
            purpose: Purpose::TestsOnlyReproduction,
            round: Some(1),
            command: "pytest tests/test_words.py".into(),
            policy: PolicyDecision::allowed(),
            outcome: Some(outcome),
            tests: tests.map(|(failed, passed)| crate::testreport::TestReport {
                format: "pytest".into(),
                tests: Vec::new(),
                passed,
                failed,
                skipped: 0,
                errors: 0,
                lists_passed: false,
            }),
            channel: None,
            confirms: None,
        }
    }

    #[test]
    fn the_reproduction_must_still_fail_with_only_the_test_side() {
        let files = ["tests/conftest.py".to_owned()];
        assert_eq!(
            tests_pass_without_fix(&record(1, Some((1, 2))), &files),
            Ok(
                "the reproduction `pytest tests/test_words.py` still fails with only the test \
                side of the change applied (exit 1, 1 failed, 2 passed)"
                    .to_owned()
            )
        );
        let refused = |r: &CommandRecord| tests_pass_without_fix(r, &files).map_err(|i| i.rule);
        assert_eq!(
            [
                refused(&record(0, Some((0, 3)))),
                refused(&record(0, Some((0, 0)))),
                refused(&record(0, None)),
            ],
            [
                Err("prevent.tests-pass-without-fix".to_owned()),
                Err("prevent.tests-pass-without-fix".to_owned()),
                Err("prevent.tests-pass-without-fix".to_owned()),
            ]
        );
    }

    #[test]
    fn the_commands_in_play_are_the_reproduction_and_every_suite_once() {
        let policy = patch_policy(
            &PatchPolicy {
                commands: vec!["make lint".into(), "pytest".into()],
                ..PatchPolicy::default()
            },
            "make test",
            &["pytest".into()],
        );
        assert_eq!(policy.commands, ["make test", "pytest", "make lint"]);
    }
}
