//! A fake ACP agent for efix's integration tests, built on the agent side of the
//! `agent-client-protocol` crate. It answers from a script instead of a model and misbehaves
//! on request: `efix-test-acp-agent SCENARIO SCRIPT_JSON`.
//!
//! The script is `{"plan": TEXT, "fix": TEXT, "edits": [{"path", "old", "new"}],
//! "outside": PATH or null, "pid_file": PATH or null}`. Scenarios:
//!
//! - `answer`: the plan and the fix as text, after asking to run a command (which must be
//!   refused);
//! - `edit`: also asks to edit `outside` (which must be refused), then asks permission for an
//!   edit tool call per entry of `edits` and, when allowed, edits the file itself;
//! - `rogue`: writes `ROGUE.txt` into the repository without asking (when the sandbox lets
//!   it), then answers (in edit mode after the same requests as `edit`);
//! - `hang`: never answers a prompt;
//! - `crash`: writes to stderr and exits 3 when prompted;
//! - `garbage`: sends malformed frames before answering normally;
//! - `spawn`: starts a long-lived child (its pid goes to `pid_file`), then answers.
//!
//! It is a test helper, not part of efix: it is built as a binary of the package only so the
//! integration tests can start it (`CARGO_BIN_EXE_efix-test-acp-agent`).

#![expect(clippy::unwrap_used, clippy::print_stderr, reason = "a test helper")]

use std::cell::{Cell, OnceCell};
use std::path::PathBuf;
use std::rc::Rc;

use agent_client_protocol::{self as acp, Client as _};
use tokio::io::AsyncWriteExt as _;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(serde::Deserialize, Clone, Default)]
struct Script {
    plan: String,
    fix: String,
    #[serde(default)]
    edits: Vec<Edit>,
    #[serde(default)]
    outside: Option<String>,
    #[serde(default)]
    pid_file: Option<String>,
}

#[derive(serde::Deserialize, Clone)]
struct Edit {
    path: String,
    old: String,
    new: String,
}

struct Fake {
    scenario: String,
    script: Script,
    cwd: std::cell::RefCell<PathBuf>,
    conn: Rc<OnceCell<acp::AgentSideConnection>>,
    calls: Cell<u32>,
}

impl Fake {
    fn conn(&self) -> &acp::AgentSideConnection {
        self.conn.get().unwrap()
    }

    async fn say(&self, session: &acp::SessionId, text: &str) -> acp::Result<()> {
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(chars.len().div_ceil(3).max(1)) {
            let text: String = chunk.iter().collect();
            self.conn()
                .session_notification(acp::SessionNotification::new(
                    session.clone(),
                    acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text.into())),
                ))
                .await?;
        }
        Ok(())
    }

    async fn ask(
        &self,
        session: &acp::SessionId,
        id: &str,
        kind: acp::ToolKind,
        path: Option<PathBuf>,
    ) -> acp::Result<bool> {
        let mut fields = acp::ToolCallUpdateFields::new()
            .title(id.to_owned())
            .kind(kind);
        if let Some(path) = path {
            fields = fields.locations(vec![acp::ToolCallLocation::new(path)]);
        }
        let options = vec![
            acp::PermissionOption::new("allow", "Allow once", acp::PermissionOptionKind::AllowOnce),
            acp::PermissionOption::new("reject", "Reject", acp::PermissionOptionKind::RejectOnce),
        ];
        let response = self
            .conn()
            .request_permission(acp::RequestPermissionRequest::new(
                session.clone(),
                acp::ToolCallUpdate::new(id.to_owned(), fields),
                options,
            ))
            .await?;
        let allowed = matches!(
            &response.outcome,
            acp::RequestPermissionOutcome::Selected(selected) if &*selected.option_id.0 == "allow"
        );
        eprintln!(
            "permission {id}: {}",
            if allowed { "allowed" } else { "refused" }
        );
        Ok(allowed)
    }
}

#[async_trait::async_trait(?Send)]
impl acp::Agent for Fake {
    async fn initialize(
        &self,
        args: acp::InitializeRequest,
    ) -> acp::Result<acp::InitializeResponse> {
        let caps = &args.client_capabilities;
        if caps.terminal || caps.fs.read_text_file || caps.fs.write_text_file {
            eprintln!("the client advertised a capability efix must not offer");
            std::process::exit(4);
        }
        Ok(acp::InitializeResponse::new(acp::ProtocolVersion::V1))
    }

    async fn authenticate(
        &self,
        _: acp::AuthenticateRequest,
    ) -> acp::Result<acp::AuthenticateResponse> {
        Ok(acp::AuthenticateResponse::default())
    }

    async fn new_session(
        &self,
        args: acp::NewSessionRequest,
    ) -> acp::Result<acp::NewSessionResponse> {
        *self.cwd.borrow_mut() = args.cwd;
        Ok(acp::NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, args: acp::PromptRequest) -> acp::Result<acp::PromptResponse> {
        self.calls.set(self.calls.get() + 1);
        let text: String = args
            .prompt
            .iter()
            .filter_map(|block| match block {
                acp::ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        let session = args.session_id;
        let cwd = self.cwd.borrow().clone();
        let plan = text.contains("focus_files");
        match self.scenario.as_str() {
            "hang" => std::future::pending::<()>().await,
            "crash" => {
                eprintln!("fake agent: fatal: the model quota is exhausted");
                std::process::exit(3);
            }
            "spawn" => {
                let child = std::process::Command::new("sleep")
                    .arg("1000")
                    .spawn()
                    .unwrap();
                if let Some(file) = &self.script.pid_file
                    && let Err(err) = std::fs::write(file, child.id().to_string())
                {
                    // Exit rather than leave efix waiting for an answer that never comes.
                    eprintln!("fake agent: could not write the pid file {file}: {err}");
                    std::process::exit(5);
                }
                std::mem::forget(child);
            }
            "rogue" => {
                // The sandbox may refuse the write (answer mode): say so and answer anyway.
                if let Err(err) = std::fs::write(cwd.join("ROGUE.txt"), "written without asking\n")
                {
                    eprintln!("fake agent: could not write ROGUE.txt: {err}");
                }
            }
            _ => {}
        }
        if plan {
            self.say(&session, &self.script.plan).await?;
            return Ok(acp::PromptResponse::new(acp::StopReason::EndTurn));
        }
        if self
            .ask(&session, "run the tests", acp::ToolKind::Execute, None)
            .await?
        {
            eprintln!("efix allowed a command");
        }
        if self.scenario == "edit" || self.scenario == "rogue" {
            let outside = self.script.outside.as_ref().map(PathBuf::from);
            if let Some(outside) = outside
                && self
                    .ask(
                        &session,
                        "edit outside",
                        acp::ToolKind::Edit,
                        Some(outside.clone()),
                    )
                    .await?
            {
                std::fs::write(outside, "escaped\n").unwrap();
            }
            for edit in &self.script.edits {
                let target = cwd.join(&edit.path);
                let title = format!("edit {}", edit.path);
                if self
                    .ask(&session, &title, acp::ToolKind::Edit, Some(target.clone()))
                    .await?
                {
                    let before = std::fs::read_to_string(&target).unwrap();
                    std::fs::write(&target, before.replacen(&edit.old, &edit.new, 1)).unwrap();
                }
            }
        }
        self.say(&session, &self.script.fix).await?;
        Ok(acp::PromptResponse::new(acp::StopReason::EndTurn))
    }

    async fn cancel(&self, _: acp::CancelNotification) -> acp::Result<()> {
        Ok(())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenario = args.get(1).cloned().unwrap_or_default();
    let script: Script = args
        .get(2)
        .map(|path| serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
        .unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let mut stdout = tokio::io::stdout();
        if scenario == "garbage" {
            stdout
                .write_all(b"this is not json\n{\"jsonrpc\": \"2.0\", \"oops\": 1}\n[1,2,3]\n")
                .await
                .unwrap();
            stdout.flush().await.unwrap();
        }
        let cell = Rc::new(OnceCell::new());
        let fake = Fake {
            scenario,
            script,
            cwd: std::cell::RefCell::new(PathBuf::from(".")),
            conn: Rc::clone(&cell),
            calls: Cell::new(0),
        };
        let (conn, io) = acp::AgentSideConnection::new(
            fake,
            stdout.compat_write(),
            tokio::io::stdin().compat(),
            |task| {
                tokio::task::spawn_local(task);
            },
        );
        let _ = cell.set(conn);
        let _ = io.await;
    });
}
