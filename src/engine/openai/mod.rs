//! The OpenAI-compatible engine: `POST {base-url}/chat/completions` with `reqwest` (rustls)
//! on a tokio runtime the engine owns; the trait stays blocking. It works unchanged with
//! OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter, and with Azure OpenAI
//! (`openai.flavor: azure`: an `api-key` header and the `api-version` query parameter).
//!
//! Answers are asked for as structured output (`response_format: json_schema`, strict, named
//! `efix_plan` / `efix_fix`). When the server rejects that (HTTP 400 naming
//! `response_format` or `json_schema`) or answers with content that is not the JSON asked
//! for, the engine falls back, once and for the rest of the run, to a plain-text answer under
//! the patch contract, and the call records why. A refusal, an empty choice or
//! `finish_reason: length` is an outcome of the call, never an error.
//!
//! The key is only ever a header value: it is never logged, never passed to a child, and
//! redacted from every server message this engine repeats.

mod http;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::json;

use self::http::{Exchange, send};
use super::{
    AnswerStyle, CallKind, CallMeta, CallOutcome, Engine, EngineError, EngineInfo, FixRequest,
    FixResponse, PlanRequest, PlanResponse, Prompt, Reply, Usage,
};
use super::{FIX_SCHEMA_NAME, PLAN_SCHEMA_NAME, fix_schema, plan_schema};
use crate::config::{OpenaiConfig, OpenaiFlavor};
use crate::runner::Secret;

/// Bytes of a server's error message repeated in an error at most.
const MESSAGE_BYTES: usize = 600;

/// The OpenAI-compatible engine.
pub struct OpenaiEngine {
    config: OpenaiConfig,
    url: String,
    headers: HeaderMap,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    /// Secrets (the key among them) redacted from server messages.
    secrets: Vec<Secret>,
    /// Set once the server refused structured output or broke it: ask for text from then on.
    text_mode: bool,
}

/// A server's chat completion, as far as efix reads it.
#[derive(Debug, Deserialize)]
struct Completion {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ApiUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ApiUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// What one exchange produced, before the answer is read as a plan or a fix.
struct Raw {
    content: Option<String>,
    meta: CallMeta,
}

impl OpenaiEngine {
    /// An engine for `config`; `key` is the API key (`None` sends none).
    pub fn new(
        config: OpenaiConfig,
        key: Option<String>,
        secrets: Vec<Secret>,
    ) -> Result<OpenaiEngine, EngineError> {
        let setup = |message: String| EngineError::Setup {
            engine: "openai".to_owned(),
            message,
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = key {
            let (name, value) = match config.flavor {
                OpenaiFlavor::Openai => (AUTHORIZATION, format!("Bearer {key}")),
                OpenaiFlavor::Azure => (
                    reqwest::header::HeaderName::from_static("api-key"),
                    key.clone(),
                ),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                setup(format!(
                    "the API key in ${} holds characters an HTTP header cannot carry",
                    config.api_key_env
                ))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let url = match config.flavor {
            OpenaiFlavor::Openai => format!("{}/chat/completions", config.base_url),
            OpenaiFlavor::Azure => format!(
                "{}/chat/completions?api-version={}",
                config.base_url, config.api_version
            ),
        };
        // rustls needs its crypto provider chosen once per process (ring, as for publish); a
        // second install by another client is not an error.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .user_agent(concat!("efix/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| setup(err.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| setup(err.to_string()))?;
        Ok(OpenaiEngine {
            config,
            url,
            headers,
            client,
            runtime,
            secrets,
            text_mode: false,
        })
    }

    /// Ask, falling back to text once when structured output is refused or broken; returns
    /// the content and the call's metadata.
    fn ask(
        &mut self,
        kind: CallKind,
        prompt: &Prompt,
        text_prompt: Option<&Prompt>,
        deadline: std::time::Instant,
        parses: impl Fn(&str) -> bool,
    ) -> Result<Raw, EngineError> {
        let structured = !self.text_mode && text_prompt.is_some();
        let first = self.exchange(kind, prompt, structured, deadline)?;
        let (first_raw, retries) = match first {
            Exchanged::Refused { message } if structured => {
                let reason = format!(
                    "the server rejected structured output (HTTP 400: {message}); asked for a \
                     plain-text answer instead"
                );
                return self.fall_back(kind, text_prompt, deadline, reason, 0);
            }
            Exchanged::Refused { message } => {
                return Err(EngineError::Rejected {
                    status: 400,
                    message,
                    hint: hint(400, &self.config),
                });
            }
            Exchanged::Done(raw) => {
                let retries = raw.meta.retries;
                (*raw, retries)
            }
        };
        let broken = structured
            && first_raw.meta.outcome == CallOutcome::Answered
            && !first_raw.content.as_deref().is_some_and(&parses);
        if broken {
            let reason = "the server's answer was not the JSON object the schema asks for; \
                          asked for a plain-text answer instead"
                .to_owned();
            let mut raw = self.fall_back(kind, text_prompt, deadline, reason, retries)?;
            if let (Some(a), Some(b)) = (first_raw.meta.usage, raw.meta.usage) {
                raw.meta.usage = Some(add(a, b));
            }
            return Ok(raw);
        }
        Ok(first_raw)
    }

    fn fall_back(
        &mut self,
        kind: CallKind,
        text_prompt: Option<&Prompt>,
        deadline: std::time::Instant,
        reason: String,
        retries: u32,
    ) -> Result<Raw, EngineError> {
        self.text_mode = true;
        tracing::info!("falling back to plain-text answers");
        let Some(prompt) = text_prompt else {
            return Err(EngineError::BadResponse { message: reason });
        };
        match self.exchange(kind, prompt, false, deadline)? {
            Exchanged::Done(mut raw) => {
                raw.meta.fallback = Some(reason);
                raw.meta.retries += retries;
                Ok(*raw)
            }
            Exchanged::Refused { message } => Err(EngineError::Rejected {
                status: 400,
                message,
                hint: hint(400, &self.config),
            }),
        }
    }

    /// One request (with its retries) and the reading of its answer.
    fn exchange(
        &self,
        kind: CallKind,
        prompt: &Prompt,
        structured: bool,
        deadline: std::time::Instant,
    ) -> Result<Exchanged, EngineError> {
        let body = self.body(kind, prompt, structured);
        let exchange = Exchange {
            client: &self.client,
            url: &self.url,
            headers: &self.headers,
            body: &body,
            timeout: self.config.timeout,
            max_retries: self.config.max_retries,
            deadline,
        };
        let (answer, retries) =
            self.runtime
                .block_on(send(&exchange))
                .map_err(|gave_up| EngineError::Unreachable {
                    attempts: gave_up.attempts,
                    message: self.redact(&gave_up.message),
                })?;
        if !(200..300).contains(&answer.status) {
            let message = self.redact(&server_message(&answer.body));
            let about_format =
                message.contains("response_format") || message.contains("json_schema");
            if answer.status == 400 && about_format {
                return Ok(Exchanged::Refused { message });
            }
            return Err(EngineError::Rejected {
                status: answer.status,
                message,
                hint: hint(answer.status, &self.config),
            });
        }
        let completion: Completion =
            serde_json::from_slice(&answer.body).map_err(|err| EngineError::BadResponse {
                message: format!("it is not a chat completion ({err})"),
            })?;
        Ok(Exchanged::Done(Box::new(read(completion, retries))))
    }

    fn body(&self, kind: CallKind, prompt: &Prompt, structured: bool) -> Vec<u8> {
        let mut messages = Vec::new();
        if !prompt.system.is_empty() {
            messages.push(json!({"role": "system", "content": prompt.system}));
        }
        messages.push(json!({"role": "user", "content": prompt.user}));
        let mut body = json!({"model": self.config.model, "messages": messages});
        if structured {
            let (name, schema) = match kind {
                CallKind::Plan => (PLAN_SCHEMA_NAME, plan_schema()),
                CallKind::Fix => (FIX_SCHEMA_NAME, fix_schema()),
            };
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema}
            });
        }
        serde_json::to_vec(&body).unwrap_or_default()
    }

    fn redact(&self, text: &str) -> String {
        crate::runner::redact_text(&self.secrets, text)
            .unwrap_or_else(|_| "(not shown: it could not be redacted)".to_owned())
    }
}

enum Exchanged {
    Done(Box<Raw>),
    /// HTTP 400 about `response_format`.
    Refused {
        message: String,
    },
}

/// The content and metadata of a completion.
fn read(completion: Completion, retries: u32) -> Raw {
    let usage = completion.usage.map(|u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        cached_tokens: u.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
    });
    let mut meta = CallMeta {
        usage,
        model: completion.model,
        retries,
        ..CallMeta::default()
    };
    let Some(choice) = completion.choices.into_iter().next() else {
        meta.outcome = CallOutcome::Empty;
        meta.detail = Some("the server returned no choice".to_owned());
        return Raw {
            content: None,
            meta,
        };
    };
    let message = choice.message.unwrap_or(Message {
        content: None,
        refusal: None,
    });
    if let Some(refusal) = message.refusal.filter(|r| !r.trim().is_empty()) {
        meta.outcome = CallOutcome::Refused;
        meta.detail = Some(refusal);
        return Raw {
            content: None,
            meta,
        };
    }
    if choice.finish_reason.as_deref() == Some("length") {
        meta.outcome = CallOutcome::Truncated;
        meta.detail = Some("finish_reason: length".to_owned());
        return Raw {
            content: message.content,
            meta,
        };
    }
    let content = message.content.filter(|c| !c.trim().is_empty());
    if content.is_none() {
        meta.outcome = CallOutcome::Empty;
        meta.detail = Some("the choice has no content".to_owned());
    }
    Raw { content, meta }
}

fn add(a: Usage, b: Usage) -> Usage {
    Usage {
        prompt_tokens: a.prompt_tokens + b.prompt_tokens,
        completion_tokens: a.completion_tokens + b.completion_tokens,
        cached_tokens: a.cached_tokens + b.cached_tokens,
    }
}

/// The server's error message: `error.message` of an OpenAI-style error body, else the
/// body's start.
fn server_message(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: ErrorDetail,
    }
    #[derive(Deserialize)]
    struct ErrorDetail {
        message: String,
    }
    let text = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(parsed) => parsed.error.message,
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim();
    if text.is_empty() {
        return "(no message)".to_owned();
    }
    let mut end = text.len().min(MESSAGE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// What to check after a refusal with this status.
fn hint(status: u16, config: &OpenaiConfig) -> String {
    match status {
        401 | 403 => format!(
            "check the API key in ${} and that it may use model {}",
            config.api_key_env, config.model
        ),
        404 => format!(
            "check openai.base-url ({}; it ends before /chat/completions, like \
             https://api.openai.com/v1) and openai.model ({})",
            config.base_url, config.model
        ),
        _ => format!(
            "check openai.model ({}) and what the server at {} supports",
            config.model, config.base_url
        ),
    }
}

impl Engine for OpenaiEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "openai".to_owned(),
            model: self.config.model.clone(),
        }
    }

    fn style(&self, _kind: CallKind) -> AnswerStyle {
        if self.text_mode {
            AnswerStyle::Text
        } else {
            AnswerStyle::Structured
        }
    }

    fn plan(&mut self, request: &PlanRequest) -> Result<Reply<PlanResponse>, EngineError> {
        self.answer(
            CallKind::Plan,
            &request.prompt,
            request.text_prompt.as_ref(),
            request.deadline,
            PlanResponse::from_text,
        )
    }

    fn fix(&mut self, request: &FixRequest) -> Result<Reply<FixResponse>, EngineError> {
        self.answer(
            CallKind::Fix,
            &request.prompt,
            request.text_prompt.as_ref(),
            request.deadline,
            FixResponse::from_text,
        )
    }
}

impl OpenaiEngine {
    /// Ask and read the answer: as the schema's JSON when it came as structured output, as
    /// text (`from_text`) when it came after a fallback.
    fn answer<T: serde::de::DeserializeOwned + Default>(
        &mut self,
        kind: CallKind,
        prompt: &Prompt,
        text_prompt: Option<&Prompt>,
        deadline: std::time::Instant,
        from_text: fn(&str) -> T,
    ) -> Result<Reply<T>, EngineError> {
        let raw = self.ask(kind, prompt, text_prompt, deadline, |text| {
            serde_json::from_str::<T>(text).is_ok()
        })?;
        let structured = raw.meta.fallback.is_none() && !self.text_mode;
        let content = raw.content.unwrap_or_default();
        let response = if structured {
            serde_json::from_str(&content).unwrap_or_default()
        } else {
            from_text(&content)
        };
        Ok(Reply {
            response,
            meta: raw.meta,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(value: serde_json::Value) -> Raw {
        read(serde_json::from_value(value).unwrap(), 2)
    }

    #[test]
    fn usage_model_and_content_are_read() {
        let raw = completion(json!({
            "model": "m-2025",
            "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                      "prompt_tokens_details": {"cached_tokens": 4}}
        }));
        assert_eq!(raw.content.as_deref(), Some("{}"));
        assert_eq!(
            raw.meta,
            CallMeta {
                usage: Some(Usage {
                    prompt_tokens: 10,
                    completion_tokens: 5,
                    cached_tokens: 4
                }),
                model: Some("m-2025".to_owned()),
                retries: 2,
                ..CallMeta::default()
            }
        );
    }

    #[test]
    fn no_choice_no_content_a_refusal_and_length_are_outcomes() {
        let outcome = |value| completion(value).meta.outcome;
        assert_eq!(outcome(json!({"choices": []})), CallOutcome::Empty);
        assert_eq!(
            outcome(json!({"choices": [{"message": {"content": "  "}}]})),
            CallOutcome::Empty
        );
        assert_eq!(
            outcome(json!({"choices": [{"message": {"content": null, "refusal": "no"}}]})),
            CallOutcome::Refused
        );
        assert_eq!(
            outcome(
                json!({"choices": [{"message": {"content": "{\"out"}, "finish_reason": "length"}]})
            ),
            CallOutcome::Truncated
        );
    }

    #[test]
    fn server_messages_are_read_from_openai_errors_or_the_body() {
        assert_eq!(
            server_message(br#"{"error": {"message": "model not found", "type": "x"}}"#),
            "model not found"
        );
        assert_eq!(server_message(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(server_message(b""), "(no message)");
        assert_eq!(server_message(&[b'x'; 2000]).len(), MESSAGE_BYTES);
    }
}
