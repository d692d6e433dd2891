//! A stand-in for an OpenAI-compatible server on 127.0.0.1 (on the tests' `http` server),
//! started by a test: it answers
//! with scripted replies in order (one per request, retries included), records every request,
//! and validates every request body against the chat-completions request schema trimmed from
//! OpenAI's official OpenAPI description (`tests/openai/`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Wait this long before answering (a hang past the client's timeout).
    pub delay: Duration,
}

impl Reply {
    /// HTTP 200 with a chat completion whose message content is `content`.
    pub fn content(content: &str) -> Reply {
        Reply::completion(json!({"role": "assistant", "content": content}), "stop")
    }

    /// HTTP 200 with one choice made of `message` and `finish_reason`, and a usage block.
    pub fn completion(message: Value, finish_reason: &str) -> Reply {
        Reply::json(
            200,
            json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 1,
                "model": "stand-in-model-2025",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {
                    "prompt_tokens": 1200,
                    "completion_tokens": 300,
                    "total_tokens": 1500,
                    "prompt_tokens_details": {"cached_tokens": 200}
                }
            }),
        )
    }

    /// A JSON body with this status.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::raw(status, &body.to_string())
    }

    /// An OpenAI-style error.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": "invalid_request_error"}}),
        )
    }

    pub fn raw(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// Path and query.
    pub target: String,
    /// Header names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// What the chat-completions request schema says is wrong with the body.
    pub schema_errors: Vec<String>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running stand-in server (it stops when dropped).
pub struct Server {
    /// The base URL to configure as `openai.base-url` (`http://127.0.0.1:PORT/v1`).
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    _http: crate::http::Server,
}

impl Server {
    /// Listen on a free port of 127.0.0.1 and answer with `replies` in order; once they run
    /// out, every request gets HTTP 500.
    pub fn start(replies: Vec<Reply>) -> Server {
        let replies = Mutex::new(VecDeque::from(replies));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let http = crate::http::Server::start(move |request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let query: Vec<String> = request
                .query
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let target = if query.is_empty() {
                request.path.clone()
            } else {
                format!("{}?{}", request.path, query.join("&"))
            };
            recorded.lock().unwrap().push(Request {
                target,
                headers: request.headers.into_iter().collect(),
                schema_errors: validate(&body),
                body,
            });
            let reply = replies.lock().unwrap().pop_front().unwrap_or_else(|| {
                Reply::error(500, "the stand-in server has no scripted reply left")
            });
            // One thread per connection: a client that gave up on this one is already on
            // the next.
            std::thread::sleep(reply.delay);
            crate::http::HttpResponse {
                status: reply.status,
                headers: reply.headers,
                body: reply.body.into_bytes(),
            }
        });
        Server {
            url: format!("{}/v1", http.url),
            requests,
            _http: http,
        }
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Errors of `body` against the trimmed chat-completions request schema.
pub fn validate(body: &Value) -> Vec<String> {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let text = include_str!("../openai/chat-completions-request.schema.json");
        let schema: Value = serde_json::from_str(text).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    });
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn the_request_schema_rejects_what_the_api_would() {
    assert_eq!(
        validate(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})),
        Vec::<String>::new()
    );
    assert!(
        !validate(&json!({"model": "m"})).is_empty(),
        "messages are required"
    );
    assert!(
        !validate(&json!({"model": "m", "messages": [{"role": "robot", "content": "hi"}]}))
            .is_empty()
    );
    let bad_format = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema"}});
    assert!(
        !validate(&bad_format).is_empty(),
        "json_schema needs its json_schema object"
    );
}
