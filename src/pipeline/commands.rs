//! Running one recorded command: policy decision, runner under the run's budget and cancel
//! flag, per-test parsing, and the record appended to the evidence.

use std::time::Duration;

use crate::evidence::{CommandRecord, Phase, PolicyDecision, Purpose};
use crate::integrity::channel;
use crate::policy::command;
use crate::runner::{self, CommandSpec};
use crate::testreport;

use super::PipelineError;
use super::ctx::Ctx;

/// Commands shorter than this are not started when the budget is nearly spent.
const MIN_COMMAND_TIME: Duration = Duration::from_millis(200);

impl Ctx<'_> {
    /// Run `command` for `purpose`, record it, and return its id in `evidence.commands`.
    /// Returns `None` when the run must stop first (budget spent or interrupted).
    pub(crate) fn run_command(
        &mut self,
        command: &str,
        phase: Phase,
        purpose: Purpose,
        round: Option<u32>,
    ) -> Result<Option<usize>, PipelineError> {
        self.run_command_within(command, phase, purpose, round, None)
    }

    /// Run commands one after the other in `phase`, recording each; their ids, or `None` when
    /// the run must stop before one of them (the ones before it stay recorded).
    pub(crate) fn run_batch(
        &mut self,
        batch: impl IntoIterator<Item = (String, Purpose)>,
        phase: Phase,
        round: Option<u32>,
    ) -> Result<Option<Vec<usize>>, PipelineError> {
        let mut ids = Vec::new();
        for (command, purpose) in batch {
            match self.run_command(&command, phase, purpose, round)? {
                Some(id) => ids.push(id),
                None => return Ok(None),
            }
        }
        Ok(Some(ids))
    }

    /// [`Ctx::run_command`] with a tighter time limit than the configured command timeout.
    pub(crate) fn run_command_within(
        &mut self,
        command: &str,
        phase: Phase,
        purpose: Purpose,
        round: Option<u32>,
        limit: Option<Duration>,
    ) -> Result<Option<usize>, PipelineError> {
        let root = self.root.clone();
        self.run_command_at(&root, command, phase, purpose, round, limit)
    }

    /// [`Ctx::run_command_within`] in another directory than the repository (a scratch copy:
    /// it is the directory the command may write).
    pub(crate) fn run_command_at(
        &mut self,
        cwd: &std::path::Path,
        command: &str,
        phase: Phase,
        purpose: Purpose,
        round: Option<u32>,
        limit: Option<Duration>,
    ) -> Result<Option<usize>, PipelineError> {
        if self.stop_reason().is_some() {
            return Ok(None);
        }
        let id = self.evidence.commands.len();
        let mut observed = None;
        let (policy, outcome) = match command::check(command, &self.config.allow) {
            Err(refusal) => (PolicyDecision::refused(&refusal), None),
            Ok(argv) => {
                let remaining = self.remaining();
                if remaining < MIN_COMMAND_TIME {
                    return Ok(None);
                }
                let timeout = self
                    .config
                    .command_timeout
                    .min(remaining)
                    .min(limit.unwrap_or(Duration::MAX));
                let access = if purpose == Purpose::Setup {
                    runner::Access::setup()
                } else {
                    runner::Access::command(self.config.network)
                };
                let _ticker = self.reporter.running(&format!("`{command}`"));
                self.commands_since_restore = true;
                let spec = CommandSpec {
                    argv,
                    cwd: cwd.to_path_buf(),
                    timeout,
                    access,
                };
                let (outcome, seen) = if purpose == Purpose::Setup {
                    let outcome = runner::run_cancellable(&spec, &self.config.runner, self.cancel)?;
                    let tests = testreport::parse(&outcome.stdout, &outcome.stderr);
                    (outcome, (tests, None))
                } else if purpose == Purpose::SuiteListing {
                    // A listing runs no test: its output is read by the estimate alone.
                    let outcome = runner::run_cancellable(&spec, &self.config.runner, self.cancel)?;
                    (outcome, (None, None))
                } else {
                    let before_change =
                        matches!(purpose, Purpose::Reproduction | Purpose::SuiteBaseline);
                    // The confirming rerun of a terse run (`--verbose`) reads the channel
                    // its command's baseline read.
                    let as_written = !before_change
                        && self.evidence.commands.iter().any(|c| {
                            (c.command == command
                                || super::confirm::per_test_command(&c.command, cwd).as_deref()
                                    == Some(command))
                                && matches!(
                                    c.purpose,
                                    Purpose::Reproduction | Purpose::SuiteBaseline
                                )
                                && c.channel.as_ref().is_some_and(|ch| {
                                    ch.status == channel::ChannelStatus::Unsupported
                                })
                        });
                    let run = channel::run(
                        &spec,
                        &self.config.runner,
                        self.cancel,
                        before_change,
                        as_written,
                    )?;
                    (run.outcome, (run.tests, run.channel))
                };
                observed = Some(seen);
                (PolicyDecision::allowed(), Some(outcome))
            }
        };
        let (tests, channel) = observed.unwrap_or((None, None));
        if let Some(outcome) = &outcome {
            self.reporter.info(&progress_line(outcome, tests.as_ref()));
            if self.evidence.sandbox.is_none() {
                self.evidence.sandbox = Some(outcome.sandbox.clone());
            }
        }
        self.evidence.commands.push(CommandRecord {
            id,
            phase,
            purpose,
            round,
            command: command.to_owned(),
            policy,
            outcome,
            tests,
            channel,
            confirms: None,
        });
        Ok(Some(id))
    }
}

/// `exit 101 in 1.05 s, 0 passed, 1 failed (cargo)`.
fn progress_line(
    outcome: &crate::runner::Outcome,
    tests: Option<&testreport::TestReport>,
) -> String {
    let exit = match (outcome.exit_code, outcome.timed_out) {
        (_, true) => "timed out".to_owned(),
        (Some(code), false) => format!("exit {code}"),
        (None, false) => "killed by a signal".to_owned(),
    };
    let tests = tests
        .map(|t| format!(", {} ({})", t.counts_text(), t.format))
        .unwrap_or_default();
    format!(
        "{exit} in {}{tests}",
        crate::evidence::duration_text(outcome.duration_ms)
    )
}
