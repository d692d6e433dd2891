//! The ACP engine: an agent started as a subprocess (`acp.command`) and spoken to with the
//! Agent Client Protocol over its stdin and stdout, with the `agent-client-protocol` crate
//! (whose types stay inside this module).
//!
//! Each request is one conversation: start the agent through the runner's sandbox
//! (`runner::Agent`: the helper's `no_new_privs`, seccomp, landlock and namespaces, the
//! network kept for its model), `initialize` (no file-system and no terminal capability),
//! `session/new` with the repository as cwd, one `session/prompt`, the agent's message text
//! collected (up to 2 MiB), then the agent stopped (its process group, then whatever escaped
//! it), on completion, timeout (`acp.timeout-ms`, or the run's deadline when sooner) or error
//! alike. What confined the agent goes into the call's record. Errors end with the redacted
//! tail of the agent's stderr.
//!
//! In answer mode every permission request is rejected, the repository is read-only to the
//! agent, and the text is the answer. In edit mode (fix requests only) the repository is
//! writable to the agent (`.git` stays read-only) and tool calls that only edit files inside
//! the repository are allowed once; the pipeline then takes the change the agent made to the
//! tree as its proposal and restores the tree (see `pipeline::tree`).

mod client;
mod failure;
mod process;
mod profile;
mod session;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_client_protocol as acp;

use self::client::Collected;
use self::process::{Pipes, StderrTail, drain_stderr, spawn_agent};
use self::session::{Broke, Ended, Learned, converse};
use super::{
    AnswerStyle, CallKind, CallMeta, CallOutcome, Engine, EngineError, EngineInfo, FixRequest,
    FixResponse, PlanRequest, PlanResponse, Prompt, Reply,
};
use crate::config::AcpMode;
use crate::patch::PatchPolicy;
use crate::runner::{Access, Agent, RunnerSettings, SandboxReport, Secret};

/// How long efix waits for an agent that broke off the conversation to exit (500 ms).
const EXIT_WAIT: Duration = Duration::from_millis(500);
/// How often efix looks whether that agent has exited (10 ms).
const EXIT_POLL: Duration = Duration::from_millis(10);
/// How long efix keeps reading the agent's stderr after stopping it (500 ms).
const STDERR_DRAIN_TIMEOUT: Duration = Duration::from_millis(500);
/// How often a running conversation looks whether the run was interrupted (50 ms).
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Everything needed to start and talk to the agent.
#[derive(Debug, Clone)]
pub struct AcpSettings {
    /// The agent's argv (`acp.command`, split).
    pub argv: Vec<String>,
    /// The repository root: the session's cwd.
    pub root: PathBuf,
    /// How the agent is started: its whole environment (`Config::acp_env`), the sandbox, and
    /// the secrets redacted from its stderr before it goes into an error.
    pub runner: RunnerSettings,
    pub timeout: Duration,
    pub mode: AcpMode,
    /// The path policy an edit must pass before efix allows it (protected paths).
    pub paths: PatchPolicy,
    /// Set when the run is interrupted (SIGINT, SIGTERM): the agent is killed at once.
    pub cancel: Option<&'static AtomicBool>,
}

/// The ACP engine.
pub struct AcpEngine {
    settings: AcpSettings,
    runtime: tokio::runtime::Runtime,
}

impl AcpEngine {
    /// An engine for these settings; the runtime it runs the conversation on is its own.
    pub fn new(mut settings: AcpSettings) -> Result<AcpEngine, EngineError> {
        if let Ok(root) = settings.root.canonicalize() {
            settings.root = root;
        }
        // Gemini CLI loads no workspace settings from an untrusted folder (see `profile`).
        settings
            .runner
            .env
            .retain(|(name, _)| name != profile::GEMINI_TRUST_VARIABLE);
        settings
            .runner
            .env
            .push((profile::GEMINI_TRUST_VARIABLE.into(), "false".into()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| EngineError::Setup {
                engine: "acp".to_owned(),
                message: err.to_string(),
            })?;
        Ok(AcpEngine { settings, runtime })
    }

    /// One conversation with one prompt; returns the agent's text and what happened. A
    /// conversation that fails keeps its record (permissions, tool calls, sandbox): the
    /// failure is in the meta's `error`.
    fn ask(
        &mut self,
        prompt: &Prompt,
        allow_edits: bool,
        deadline: Instant,
    ) -> Result<(String, CallMeta), EngineError> {
        let text = if prompt.system.is_empty() {
            prompt.user.clone()
        } else {
            format!("{}\n\n{}", prompt.system, prompt.user)
        };
        let limit = self
            .settings
            .timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        // A plan is words whatever the mode: only an agent allowed to edit may write.
        let access = if allow_edits {
            Access::editing_agent()
        } else {
            Access::agent()
        };
        let settings = &self.settings;
        let mut agent = spawn_agent(&settings.argv, &settings.root, access, &settings.runner)?;
        let stderr = Rc::new(RefCell::new(StderrTail::default()));
        let collected = Rc::new(RefCell::new(Collected::default()));
        let learned = Rc::new(RefCell::new(Learned::default()));
        let local = tokio::task::LocalSet::new();
        let (result, drained) = self.runtime.block_on(local.run_until(talk(
            settings,
            &mut agent,
            text,
            allow_edits,
            limit,
            (&stderr, &collected, &learned),
        )));
        // The runner stops the agent outside the runtime: it waits for the group to end and
        // sweeps what escaped it, which may take its grace period (none when interrupted).
        let interrupted = settings.cancel.is_some_and(|c| c.load(Ordering::SeqCst));
        let sandbox = if interrupted {
            agent.kill()
        } else {
            agent.stop()
        };
        record_sandbox(&sandbox);
        if let Some(drained) = drained {
            // Read what the agent wrote to stderr before it died (its pipe closes with it).
            self.runtime.block_on(local.run_until(async {
                let _ = tokio::time::timeout(STDERR_DRAIN_TIMEOUT, drained).await;
            }));
        }
        let tail = stderr.borrow().text();
        let collected = std::mem::take(&mut *collected.borrow_mut());
        let learned = std::mem::take(&mut *learned.borrow_mut());
        let secrets = &self.settings.runner.secrets;
        let mut meta = CallMeta {
            permissions: collected.permissions.clone(),
            tool_calls: collected.tool_call_records(),
            sandbox: Some(Box::new(sandbox)),
            notes: learned.notes,
            ..CallMeta::default()
        };
        if collected.dropped_tool_calls > 0 {
            meta.notes.push(format!(
                "the agent reported {} more tool calls than the {} recorded",
                collected.dropped_tool_calls,
                client::MAX_TOOL_CALLS
            ));
        }
        if let Some(note) = unasked_note(&meta.tool_calls) {
            meta.notes.push(note);
        }
        let ended = match result {
            Ok(ended) => ended,
            Err(broke) => {
                let mut message = broke.message;
                if !broke.fatal {
                    message =
                        failure::explain(&message, &collected.last_updates(), &tail, settings);
                }
                meta.outcome = CallOutcome::Failed;
                meta.error = Some(
                    EngineError::Agent {
                        message: with_stderr(
                            &message,
                            &failure::shown_stderr(&tail, settings),
                            secrets,
                        ),
                    }
                    .to_string(),
                );
                meta.fatal = broke.fatal;
                hide_in_meta(secrets, &mut meta);
                // What the agent was allowed to edit before it failed is efix's doing, not a
                // write outside the protocol.
                meta.edited_tree = allow_edits && !collected.allowed_paths.is_empty();
                meta.allowed_paths = collected.allowed_paths;
                return Ok((String::new(), meta));
            }
        };
        let (outcome, detail) = outcome_of(&ended, &collected);
        let edited = allow_edits && !collected.allowed_paths.is_empty();
        let outcome = match outcome {
            CallOutcome::Answered if collected.text.trim().is_empty() && !edited => {
                CallOutcome::Empty
            }
            other => other,
        };
        meta.outcome = outcome;
        meta.detail = detail;
        meta.edited_tree = edited;
        meta.allowed_paths = collected.allowed_paths;
        meta.usage = ended.usage;
        meta.model = ended.model;
        meta.cost_usd = match &collected.cost {
            Some((amount, currency)) if currency.eq_ignore_ascii_case("USD") => Some(*amount),
            _ => None,
        };
        if meta.usage.is_none() && meta.cost_usd.is_none() {
            meta.notes.push(
                "the agent reported neither tokens nor cost for this call: budget.max-tokens \
                 and budget.max-cost-usd cannot count it"
                    .to_owned(),
            );
        }
        let text = hide_values(secrets, &collected.text);
        hide_in_meta(secrets, &mut meta);
        Ok((text, meta))
    }
}

/// `text` with the values of `secrets` (the configured ones and those efix passed the agent)
/// replaced by `[REDACTED:env:NAME]`: the agent got them, so its words may repeat them. Only
/// exact values are replaced, not token-shaped text, which an answer's code may hold.
fn hide_values(secrets: &[Secret], text: &str) -> String {
    let Ok(matches) = crate::runner::secret_matches(secrets, text) else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for found in matches.iter().filter(|m| m.rule.starts_with("env:")) {
        if found.range.start < from {
            continue;
        }
        out.push_str(&text[from..found.range.start]);
        out.push_str(&format!("[REDACTED:{}]", found.rule));
        from = found.range.end;
    }
    out.push_str(&text[from..]);
    out
}

/// The agent's words in the record (titles, paths, reasons, notes) without the values.
fn hide_in_meta(secrets: &[Secret], meta: &mut CallMeta) {
    for permission in &mut meta.permissions {
        permission.title = hide_values(secrets, &permission.title);
        permission.reason = hide_values(secrets, &permission.reason);
        for path in &mut permission.paths {
            *path = hide_values(secrets, path);
        }
    }
    for call in &mut meta.tool_calls {
        call.title = hide_values(secrets, &call.title);
        for path in &mut call.paths {
            *path = hide_values(secrets, path);
        }
    }
    for note in &mut meta.notes {
        *note = hide_values(secrets, note);
    }
    if let Some(detail) = &mut meta.detail {
        *detail = hide_values(secrets, detail);
    }
}

/// How the turn ended, from its stop reason and the collected text.
fn outcome_of(ended: &Ended, collected: &Collected) -> (CallOutcome, Option<String>) {
    match ended.stop {
        _ if collected.cut => (
            CallOutcome::Truncated,
            Some(format!(
                "the agent's answer was longer than {} bytes and was cut",
                client::MAX_TEXT_BYTES
            )),
        ),
        acp::StopReason::EndTurn => (CallOutcome::Answered, None),
        acp::StopReason::MaxTokens | acp::StopReason::MaxTurnRequests => (
            CallOutcome::Truncated,
            Some("the agent stopped at its token or turn limit".to_owned()),
        ),
        acp::StopReason::Refusal => (
            CallOutcome::Refused,
            Some("the agent's stop reason is refusal".to_owned()),
        ),
        acp::StopReason::Cancelled => (
            CallOutcome::Empty,
            Some("the agent cancelled its turn".to_owned()),
        ),
        // A stop reason newer than this efix: take the answer as it is.
        _ => (CallOutcome::Answered, None),
    }
}

/// The note on tool calls that changed something or ran a command without asking.
fn unasked_note(calls: &[crate::engine::ToolCall]) -> Option<String> {
    let risky: Vec<String> = calls
        .iter()
        .filter(|call| {
            call.unasked_run && !matches!(call.kind.as_str(), "read" | "search" | "think")
        })
        .map(|call| format!("`{}` ({})", call.title, call.kind))
        .collect();
    if risky.is_empty() {
        return None;
    }
    Some(format!(
        "{} tool call{} ran without a permission request (the agent's own settings allowed \
         {}): {}",
        risky.len(),
        if risky.len() == 1 { "" } else { "s" },
        if risky.len() == 1 { "it" } else { "them" },
        risky.join(", ")
    ))
}

/// What the conversation fills in while it runs: the agent's stderr tail, what it sent, and
/// what efix learned about it.
type Shared<'a> = (
    &'a Rc<RefCell<StderrTail>>,
    &'a Rc<RefCell<Collected>>,
    &'a Rc<RefCell<Learned>>,
);

/// The conversation with a started agent within `limit`, and the task reading its stderr.
async fn talk(
    settings: &AcpSettings,
    agent: &mut Agent,
    text: String,
    allow_edits: bool,
    limit: Duration,
    (stderr, collected, learned): Shared<'_>,
) -> (Result<Ended, Broke>, Option<tokio::task::JoinHandle<()>>) {
    let pipes = match Pipes::take(agent) {
        Ok(pipes) => pipes,
        Err(message) => {
            return (
                Err(Broke {
                    message,
                    fatal: false,
                }),
                None,
            );
        }
    };
    let Pipes {
        stdin,
        stdout,
        stderr: stderr_pipe,
    } = pipes;
    let drained = tokio::task::spawn_local(drain_stderr(stderr_pipe, Rc::clone(stderr)));
    let conversation = converse(
        settings,
        (stdin, stdout),
        text,
        allow_edits,
        collected,
        learned,
    );
    let result = tokio::select! {
        outcome = tokio::time::timeout(limit, conversation) => match outcome {
            Ok(Ok(ended)) => Ok(ended),
            // An agent that broke off has usually exited; say how, when it did so promptly.
            Ok(Err(mut broke)) => {
                if let Some(status) = exited(agent).await {
                    broke.message = format!("{} (the agent exited: {status})", broke.message);
                }
                Err(broke)
            }
            Err(_) => Err(Broke {
                message: format!(
                    "the agent did not finish within {} ms (acp.timeout-ms, or the run's time \
                     budget); its process group was killed",
                    limit.as_millis()
                ),
                fatal: false,
            }),
        },
        () = interrupted(settings.cancel) => Err(Broke {
            message: "the run was interrupted; the agent's process group was killed".to_owned(),
            fatal: true,
        }),
    };
    (result, Some(drained))
}

/// Resolves once the run is interrupted (never without a flag).
async fn interrupted(cancel: Option<&'static AtomicBool>) {
    let Some(cancel) = cancel else {
        return std::future::pending().await;
    };
    while !cancel.load(Ordering::SeqCst) {
        tokio::time::sleep(CANCEL_POLL).await;
    }
}

/// How the agent exited, when it does within [`EXIT_WAIT`].
async fn exited(agent: &mut Agent) -> Option<std::process::ExitStatus> {
    let deadline = tokio::time::Instant::now() + EXIT_WAIT;
    loop {
        if let Some(status) = agent.try_wait() {
            return Some(status);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(EXIT_POLL).await;
    }
}

/// Log what confined the agent: the record of a failed call has no room for it, and the
/// processes it left behind deserve a warning.
fn record_sandbox(report: &SandboxReport) {
    tracing::debug!(
        tier = %report.tier,
        landlock = ?report.landlock_abi,
        seccomp = report.seccomp,
        missing = ?report.missing,
        "the ACP agent's sandbox"
    );
    if report.leaked_processes > 0 {
        tracing::warn!(
            count = report.leaked_processes,
            leaked = ?report.leaked,
            "the ACP agent left processes outside its group; they were killed"
        );
    }
}

/// The message with the redacted end of the agent's stderr, when it wrote any.
fn with_stderr(message: &str, tail: &str, secrets: &[Secret]) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        return message.to_owned();
    }
    let redacted = crate::runner::redact_text(secrets, tail)
        .unwrap_or_else(|_| "(stderr not shown: it could not be redacted)".to_owned());
    format!("{message}; the agent's stderr ends with:\n{redacted}")
}

impl Engine for AcpEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "acp".to_owned(),
            model: shlex::try_join(self.settings.argv.iter().map(String::as_str))
                .unwrap_or_else(|_| self.settings.argv.join(" ")),
        }
    }

    fn style(&self, kind: CallKind) -> AnswerStyle {
        match (kind, self.settings.mode) {
            (CallKind::Fix, AcpMode::Edit) => AnswerStyle::EditFiles,
            _ => AnswerStyle::Text,
        }
    }

    fn writes_tree(&self) -> bool {
        true
    }

    fn plan(&mut self, request: &PlanRequest) -> Result<Reply<PlanResponse>, EngineError> {
        // A plan is words: no edit is allowed whatever the mode.
        let (text, meta) = self.ask(&request.prompt, false, request.deadline)?;
        Ok(Reply {
            response: PlanResponse::from_text(&text),
            meta,
        })
    }

    fn fix(&mut self, request: &FixRequest) -> Result<Reply<FixResponse>, EngineError> {
        let edit = self.settings.mode == AcpMode::Edit;
        let (text, meta) = self.ask(&request.prompt, edit, request.deadline)?;
        Ok(Reply {
            response: FixResponse::from_text(&text),
            meta,
        })
    }
}

#[cfg(all(test, target_os = "linux"))]
pub(crate) mod tests {
    use super::*;

    /// Settings for an agent in a scratch repository, with the runner's test settings.
    pub(crate) fn settings() -> AcpSettings {
        AcpSettings {
            argv: vec!["true".to_owned()],
            root: std::env::temp_dir().join("efix-acp-test-repo"),
            runner: crate::runner::tests::settings(),
            timeout: Duration::from_secs(5),
            mode: AcpMode::Answer,
            paths: PatchPolicy::default(),
            cancel: None,
        }
    }

    #[test]
    fn values_passed_to_the_agent_are_hidden_in_its_words_but_token_shapes_are_kept() {
        let secrets = [Secret {
            name: "GATEWAY".to_owned(),
            value: "gw-credential-123456".to_owned(),
        }];
        assert_eq!(
            hide_values(
                &secrets,
                "token gw-credential-123456 and ghp_000000000000000000000000000000000000"
            ),
            "token [REDACTED:env:GATEWAY] and ghp_000000000000000000000000000000000000"
        );
    }

    #[test]
    fn tool_calls_that_change_things_without_asking_are_named() {
        let call = |title: &str, kind: &str, unasked_run: bool| crate::engine::ToolCall {
            title: title.to_owned(),
            kind: kind.to_owned(),
            status: "completed".to_owned(),
            paths: Vec::new(),
            asked: !unasked_run,
            unasked_run,
        };
        assert_eq!(
            unasked_note(&[
                call("Read calc.py", "read", true),
                call("curl example.com", "execute", true),
                call("Edit calc.py", "edit", false),
            ]),
            Some(
                "1 tool call ran without a permission request (the agent's own settings \
                 allowed it): `curl example.com` (execute)"
                    .to_owned()
            )
        );
        assert_eq!(unasked_note(&[call("Read", "read", true)]), None);
    }
}
