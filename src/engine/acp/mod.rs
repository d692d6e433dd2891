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
mod process;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use agent_client_protocol::{self as acp, Agent as _};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use self::client::{Collected, EfixClient};
use self::process::{BoundedLines, Pipes, StderrTail, drain_stderr, spawn_agent};
use super::{
    AnswerStyle, CallKind, CallMeta, CallOutcome, Engine, EngineError, EngineInfo, FixRequest,
    FixResponse, PlanRequest, PlanResponse, Prompt, Reply,
};
use crate::config::AcpMode;
use crate::runner::{Access, Agent, RunnerSettings, SandboxReport, Secret};

/// How long efix waits for an agent that broke off the conversation to exit (500 ms).
const EXIT_WAIT: Duration = Duration::from_millis(500);
/// How often efix looks whether that agent has exited (10 ms).
const EXIT_POLL: Duration = Duration::from_millis(10);
/// How long efix keeps reading the agent's stderr after stopping it (500 ms).
const STDERR_DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

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
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| EngineError::Setup {
                engine: "acp".to_owned(),
                message: err.to_string(),
            })?;
        Ok(AcpEngine { settings, runtime })
    }

    /// One conversation with one prompt; returns the agent's text and what happened.
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
        let local = tokio::task::LocalSet::new();
        let (result, drained) = self.runtime.block_on(local.run_until(talk(
            settings,
            &mut agent,
            text,
            allow_edits,
            limit,
            (&stderr, &collected),
        )));
        // The runner stops the agent outside the runtime: it waits for the group to end and
        // sweeps what escaped it, which may take its grace period.
        let sandbox = agent.stop();
        record_sandbox(&sandbox);
        if let Some(drained) = drained {
            // Read what the agent wrote to stderr before it died (its pipe closes with it).
            self.runtime.block_on(local.run_until(async {
                let _ = tokio::time::timeout(STDERR_DRAIN_TIMEOUT, drained).await;
            }));
        }
        let tail = stderr.borrow().text();
        let stop = result.map_err(|message| EngineError::Agent {
            message: with_stderr(&message, &tail, &self.settings.runner.secrets),
        })?;
        let collected = std::mem::take(&mut *collected.borrow_mut());
        let (outcome, detail) = match stop {
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
        };
        let edited = allow_edits && !collected.allowed_paths.is_empty();
        let outcome = match outcome {
            CallOutcome::Answered if collected.text.trim().is_empty() && !edited => {
                CallOutcome::Empty
            }
            other => other,
        };
        let meta = CallMeta {
            outcome,
            detail,
            permissions: collected.permissions,
            edited_tree: edited,
            allowed_paths: collected.allowed_paths,
            sandbox: Some(Box::new(sandbox)),
            ..CallMeta::default()
        };
        Ok((collected.text, meta))
    }
}

/// The conversation with a started agent within `limit`, and the task reading its stderr;
/// `Err` is a sentence for the error (the stderr tail is added later).
async fn talk(
    settings: &AcpSettings,
    agent: &mut Agent,
    text: String,
    allow_edits: bool,
    limit: Duration,
    (stderr, collected): (&Rc<RefCell<StderrTail>>, &Rc<RefCell<Collected>>),
) -> (
    Result<acp::StopReason, String>,
    Option<tokio::task::JoinHandle<()>>,
) {
    let pipes = match Pipes::take(agent) {
        Ok(pipes) => pipes,
        Err(message) => return (Err(message), None),
    };
    let Pipes {
        stdin,
        stdout,
        stderr: stderr_pipe,
    } = pipes;
    let drained = tokio::task::spawn_local(drain_stderr(stderr_pipe, Rc::clone(stderr)));
    let conversation = converse(settings, (stdin, stdout), text, allow_edits, collected);
    let result = match tokio::time::timeout(limit, conversation).await {
        Ok(Ok(stop)) => Ok(stop),
        // An agent that broke off has usually exited; say how, when it did so promptly.
        Ok(Err(message)) => Err(match exited(agent).await {
            Some(status) => format!("{message} (the agent exited: {status})"),
            None => message,
        }),
        Err(_) => Err(format!(
            "the agent did not finish within {} ms (acp.timeout-ms, or the run's time \
             budget); its process group was killed",
            limit.as_millis()
        )),
    };
    (result, Some(drained))
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

/// The protocol over the agent's stdin and stdout.
async fn converse(
    settings: &AcpSettings,
    (stdin, stdout): (tokio::process::ChildStdin, tokio::process::ChildStdout),
    text: String,
    allow_edits: bool,
    collected: &Rc<RefCell<Collected>>,
) -> Result<acp::StopReason, String> {
    let handler = EfixClient {
        collected: Rc::clone(collected),
        root: settings.root.clone(),
        allow_edits,
    };
    let (connection, io) = acp::ClientSideConnection::new(
        handler,
        stdin.compat_write(),
        BoundedLines::new(stdout).compat(),
        |task| {
            tokio::task::spawn_local(task);
        },
    );
    let conversation = async {
        let init = connection
            .initialize(
                acp::InitializeRequest::new(acp::ProtocolVersion::V1)
                    .client_capabilities(acp::ClientCapabilities::default())
                    .client_info(acp::Implementation::new("efix", env!("CARGO_PKG_VERSION"))),
            )
            .await
            .map_err(|err| format!("initialize failed: {err}"))?;
        if init.protocol_version != acp::ProtocolVersion::V1 {
            return Err(format!(
                "the agent speaks ACP protocol version {}; efix speaks version 1",
                serde_json::to_string(&init.protocol_version).unwrap_or_default()
            ));
        }
        let session = connection
            .new_session(acp::NewSessionRequest::new(settings.root.clone()))
            .await
            .map_err(|err| format!("session/new failed: {err}"))?;
        let response = connection
            .prompt(acp::PromptRequest::new(
                session.session_id,
                vec![acp::ContentBlock::from(text)],
            ))
            .await
            .map_err(|err| format!("session/prompt failed: {err}"))?;
        Ok(response.stop_reason)
    };
    tokio::select! {
        result = conversation => result,
        ended = io => Err(match ended {
            Ok(()) => "the agent closed its output before answering".to_owned(),
            Err(err) => format!("the connection failed: {err}"),
        }),
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
