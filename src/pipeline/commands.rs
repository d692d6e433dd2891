//! Running one recorded command: policy decision, runner under the run's budget and cancel
//! flag, per-test parsing, and the record appended to the evidence.

use std::time::Duration;

use crate::evidence::{CommandRecord, Phase, PolicyDecision, Purpose};
use crate::policy::command;
use crate::runner::{self, CommandSpec};
use crate::testreport;

use super::PipelineError;
use super::run::Ctx;

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
        if self.stop_reason().is_some() {
            return Ok(None);
        }
        let id = self.evidence.commands.len();
        let checked = command::check(command, &self.config.allow);
        let argv = match checked {
            Ok(argv) => argv,
            Err(refusal) => {
                self.evidence.commands.push(CommandRecord {
                    id,
                    phase,
                    purpose,
                    round,
                    command: command.to_owned(),
                    policy: PolicyDecision {
                        allowed: false,
                        rule: Some(refusal.rule.clone()),
                        message: Some(refusal.message.clone()),
                    },
                    outcome: None,
                    tests: None,
                });
                return Ok(Some(id));
            }
        };
        let remaining = self.remaining();
        if remaining < MIN_COMMAND_TIME {
            return Ok(None);
        }
        let spec = CommandSpec {
            argv,
            cwd: self.root.clone(),
            timeout: self.config.command_timeout.min(remaining),
        };
        let outcome = {
            let _ticker = self.reporter.running(&format!("`{command}`"));
            runner::run_cancellable(&spec, &self.config.runner, self.cancel)?
        };
        let tests = testreport::parse(&outcome.stdout, &outcome.stderr);
        self.reporter.info(&format!(
            "exit {} in {}{}",
            outcome.exit_code.map(|c| c.to_string()).unwrap_or_else(|| {
                if outcome.timed_out {
                    "timed out".to_owned()
                } else {
                    "signal".to_owned()
                }
            }),
            crate::evidence::duration_text(outcome.duration_ms),
            tests
                .as_ref()
                .map(|t| format!(", {} passed, {} failed ({})", t.passed, t.failed, t.format))
                .unwrap_or_default()
        ));
        if self.evidence.sandbox.is_none() {
            self.evidence.sandbox = Some(outcome.sandbox.clone());
        }
        self.evidence.commands.push(CommandRecord {
            id,
            phase,
            purpose,
            round,
            command: command.to_owned(),
            policy: PolicyDecision {
                allowed: true,
                rule: None,
                message: None,
            },
            outcome: Some(outcome),
            tests,
        });
        Ok(Some(id))
    }
}
