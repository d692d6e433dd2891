//! One conversation over a started agent's stdin and stdout: `initialize`, `session/new`
//! (only the user's agent settings: see `profile`), `session/set_mode` when the agent starts
//! in a mode that would not ask before a change, one `session/prompt`, and what the agent
//! reported it spent (the prompt answer's `usage`, Gemini CLI's `_meta.quota`, the cost of
//! the last `usage_update`).

use std::cell::RefCell;
use std::rc::Rc;

use agent_client_protocol::{self as acp, Agent as _};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::AcpSettings;
use super::client::{Collected, EfixClient};
use super::process::BoundedLines;
use super::profile::{self, Known};
use crate::engine::Usage;

/// How a conversation ended well.
#[derive(Debug)]
pub(crate) struct Ended {
    pub stop: acp::StopReason,
    /// Tokens the agent reported for the turn.
    pub usage: Option<Usage>,
    /// The model the agent says answered.
    pub model: Option<String>,
}

/// Why a conversation failed: the sentence, and whether no later call can succeed.
#[derive(Debug)]
pub(crate) struct Broke {
    pub message: String,
    pub fatal: bool,
}

impl Broke {
    fn new(message: String) -> Broke {
        Broke {
            message,
            fatal: false,
        }
    }
}

/// The agent, as far as the conversation has learned it.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    pub known: Option<Known>,
    pub notes: Vec<String>,
}

/// The protocol over the agent's stdin and stdout.
pub(crate) async fn converse(
    settings: &AcpSettings,
    (stdin, stdout): (tokio::process::ChildStdin, tokio::process::ChildStdout),
    text: String,
    allow_edits: bool,
    collected: &Rc<RefCell<Collected>>,
    learned: &Rc<RefCell<Learned>>,
) -> Result<Ended, Broke> {
    let handler = EfixClient {
        collected: Rc::clone(collected),
        root: settings.root.clone(),
        allow_edits,
        paths: settings.paths.clone(),
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
            .map_err(|err| Broke::new(format!("initialize failed: {err}")))?;
        if init.protocol_version != acp::ProtocolVersion::V1 {
            return Err(Broke::new(format!(
                "the agent speaks ACP protocol version {}; efix speaks version 1",
                serde_json::to_string(&init.protocol_version).unwrap_or_default()
            )));
        }
        let name = init.agent_info.as_ref().map(|info| info.name.clone());
        let known = Known::identify(name.as_deref(), &settings.argv);
        learned.borrow_mut().known = known;
        let shown_name = name.unwrap_or_else(|| settings.argv.join(" "));
        if let Some(refusal) = profile::refusal(known, &shown_name, &settings.root) {
            return Err(Broke {
                message: refusal,
                fatal: true,
            });
        }
        let session = connection
            .new_session(
                acp::NewSessionRequest::new(settings.root.clone()).meta(profile::session_meta()),
            )
            .await
            .map_err(|err| refused("session/new", &err, known))?;
        if allow_edits && let Some(modes) = &session.modes {
            let notes = set_mode(&connection, &session.session_id, modes, known).await?;
            learned.borrow_mut().notes.extend(notes);
        }
        let response = connection
            .prompt(acp::PromptRequest::new(
                session.session_id,
                vec![acp::ContentBlock::from(text)],
            ))
            .await
            .map_err(|err| refused("session/prompt", &err, known))?;
        let (usage, model) = reported_usage(&response);
        Ok(Ended {
            stop: response.stop_reason,
            usage,
            model,
        })
    };
    tokio::select! {
        result = conversation => result,
        ended = io => Err(Broke::new(match ended {
            Ok(()) => "the agent closed its output before answering".to_owned(),
            Err(err) => format!("the connection failed: {err}"),
        })),
    }
}

/// Switch a session that would change files without asking to the mode that asks; the notes
/// say what efix found and did.
async fn set_mode(
    connection: &acp::ClientSideConnection,
    session: &acp::SessionId,
    modes: &acp::SessionModeState,
    known: Option<Known>,
) -> Result<Vec<String>, Broke> {
    let current = modes.current_mode_id.0.to_string();
    let Some(asking) = profile::asking_mode(modes) else {
        if current == "default" {
            return Ok(Vec::new());
        }
        return Ok(vec![format!(
            "the agent started in mode `{current}` and offers no `default` mode to switch to; \
             edits it makes without a permission request are restored and recorded, not used"
        )]);
    };
    connection
        .set_session_mode(acp::SetSessionModeRequest::new(
            session.clone(),
            asking.clone(),
        ))
        .await
        .map_err(|err| refused("session/set_mode", &err, known))?;
    Ok(vec![format!(
        "the agent started in mode `{current}` (from its own settings); efix switched it to \
         `{}` so that it asks before each edit",
        asking.0
    )])
}

/// The error of a refused request, with the remedy for a missing key.
fn refused(method: &str, err: &acp::Error, known: Option<Known>) -> Broke {
    if err.code == acp::ErrorCode::AuthRequired {
        return Broke {
            message: format!(
                "{method} failed: the agent needs authentication ({}); {}",
                err.message,
                profile::auth_remedy(known)
            ),
            fatal: true,
        };
    }
    Broke::new(format!("{method} failed: {err}"))
}

/// Tokens and model of the turn: the answer's `usage`, else Gemini CLI's `_meta.quota`.
fn reported_usage(response: &acp::PromptResponse) -> (Option<Usage>, Option<String>) {
    let quota = response
        .meta
        .as_ref()
        .and_then(|meta| meta.get("quota"))
        .cloned()
        .unwrap_or_default();
    let model = quota["model_usage"]
        .as_array()
        .and_then(|models| models.iter().find_map(|m| m["model"].as_str()))
        .map(str::to_owned);
    if let Some(usage) = &response.usage {
        let cached = usage.cached_read_tokens.unwrap_or(0);
        let prompt = usage.total_tokens.saturating_sub(usage.output_tokens);
        return (
            Some(Usage {
                prompt_tokens: prompt.max(usage.input_tokens),
                completion_tokens: usage.output_tokens,
                cached_tokens: cached,
            }),
            model,
        );
    }
    let count = &quota["token_count"];
    match (
        count["input_tokens"].as_u64(),
        count["output_tokens"].as_u64(),
    ) {
        (Some(input), Some(output)) => (
            Some(Usage {
                prompt_tokens: input,
                completion_tokens: output,
                cached_tokens: 0,
            }),
            model,
        ),
        _ => (None, model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_read_from_the_answer_or_from_gemini_clis_quota() {
        let claude: acp::PromptResponse = serde_json::from_value(serde_json::json!({
            "stopReason": "end_turn",
            "usage": {"totalTokens": 1300, "inputTokens": 1000, "outputTokens": 200,
                      "cachedReadTokens": 100}
        }))
        .unwrap();
        let gemini: acp::PromptResponse = serde_json::from_value(serde_json::json!({
            "stopReason": "end_turn",
            "_meta": {"quota": {"token_count": {"input_tokens": 50, "output_tokens": 7},
                      "model_usage": [{"model": "gemini-2.5-pro",
                                       "token_count": {"input_tokens": 50, "output_tokens": 7}}]}}
        }))
        .unwrap();
        let silent: acp::PromptResponse =
            serde_json::from_value(serde_json::json!({"stopReason": "end_turn"})).unwrap();
        assert_eq!(
            [
                reported_usage(&claude),
                reported_usage(&gemini),
                reported_usage(&silent)
            ],
            [
                (
                    Some(Usage {
                        prompt_tokens: 1100,
                        completion_tokens: 200,
                        cached_tokens: 100
                    }),
                    None
                ),
                (
                    Some(Usage {
                        prompt_tokens: 50,
                        completion_tokens: 7,
                        cached_tokens: 0
                    }),
                    Some("gemini-2.5-pro".to_owned())
                ),
                (None, None)
            ]
        );
    }
}
