//! The HTTP client for GitHub's REST API: reqwest (blocking) over rustls with the ring
//! provider, so the static binary needs no OpenSSL. Every request carries `User-Agent`,
//! `Accept: application/vnd.github+json`, `X-GitHub-Api-Version` and the token as a bearer
//! header; the token never goes anywhere else (no URL, no file, no git config).
//!
//! Rate limits and server errors are retried as `retry` decides. Everything GitHub answers is
//! redacted with the runner's rules (the token's exact value and its encodings, plus token
//! patterns) before it can reach a message.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::PublishError;
use super::api::{Reply, Request, Transport};
use super::retry::{self, Decision, RateHeaders};
use crate::runner::{Redactor, Secret};

/// Sent as `User-Agent`, which GitHub requires.
pub(crate) const USER_AGENT: &str = concat!("efix/", env!("CARGO_PKG_VERSION"));
/// The REST API version efix is written against.
pub(crate) const API_VERSION: &str = "2022-11-28";
/// GitHub's media type.
pub(crate) const ACCEPT: &str = "application/vnd.github+json";
/// Timeout of one request, connection included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Timeout of establishing a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A client for one API base URL and one token.
pub(crate) struct Client {
    http: reqwest::blocking::Client,
    api: String,
    token: String,
    redactor: Arc<Redactor>,
}

impl Client {
    /// A client for `api_url` (e.g. `https://api.github.com`, or a GitHub Enterprise
    /// `https://HOST/api/v3`) authenticating with `token`; `secrets` are redacted from
    /// everything GitHub answers, besides the token itself.
    pub(crate) fn new(
        api_url: &str,
        token: String,
        secrets: &[Secret],
    ) -> Result<Client, PublishError> {
        // Installing fails only when a provider is already installed, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|err| PublishError::Client {
                message: err.to_string(),
            })?;
        let mut all = secrets.to_vec();
        all.push(Secret {
            name: "github-token".to_owned(),
            value: token.clone(),
        });
        let redactor = Redactor::cached(&all).map_err(|err| PublishError::Client {
            message: err.to_string(),
        })?;
        Ok(Client {
            http,
            api: api_url.trim_end_matches('/').to_owned(),
            token,
            redactor,
        })
    }

    fn redact(&self, text: &str) -> String {
        self.redactor.redact_text(text, &mut Default::default())
    }

    fn attempt(&self, request: &Request) -> Result<reqwest::blocking::Response, reqwest::Error> {
        let method =
            reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let url = format!("{}{}", self.api, request.path_and_query());
        let mut builder = self
            .http
            .request(method, url)
            .header(reqwest::header::ACCEPT, ACCEPT)
            .header("X-GitHub-Api-Version", API_VERSION)
            .bearer_auth(&self.token);
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        builder.send()
    }
}

impl Transport for Client {
    fn send(&mut self, request: &Request) -> Result<Reply, PublishError> {
        let mut attempt = 0;
        loop {
            let response = match self.attempt(request) {
                Ok(response) => response,
                Err(err) if request.op.repeatable() && attempt < retry::MAX_RETRIES => {
                    tracing::warn!(error = %self.redact(&err.to_string()), "retrying");
                    std::thread::sleep(Duration::from_secs(1u64 << attempt.min(5)));
                    attempt += 1;
                    continue;
                }
                Err(err) => {
                    return Err(PublishError::Transport {
                        what: request.op.what(),
                        method: request.method,
                        path: request.path.clone(),
                        message: self.redact(&err.without_url().to_string()),
                    });
                }
            };
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let headers = RateHeaders {
                retry_after: header("retry-after"),
                remaining: header("x-ratelimit-remaining"),
                reset: header("x-ratelimit-reset"),
            };
            let accepted_permissions = header("x-accepted-github-permissions");
            let status = response.status().as_u16();
            let text = self.redact(&response.text().unwrap_or_default());
            let body = if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            let reply = Reply {
                status,
                body,
                accepted_permissions,
            };
            tracing::debug!(method = request.method, path = %request.path, status, "github");
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            match retry::decide(
                attempt,
                status,
                &headers,
                &reply.message(),
                request.op.repeatable(),
                now,
                retry::jitter(),
            ) {
                Decision::Keep => return Ok(reply),
                Decision::Retry(wait) => {
                    tracing::warn!(
                        method = request.method,
                        path = %request.path,
                        status,
                        wait_ms = wait.as_millis() as u64,
                        "GitHub asked efix to slow down; retrying"
                    );
                    std::thread::sleep(wait);
                    attempt += 1;
                }
                Decision::GiveUp(reason) => {
                    return Err(PublishError::Api {
                        what: request.op.what(),
                        method: request.method,
                        path: request.path.clone(),
                        status,
                        message: reply.message(),
                        remedy: reason,
                    });
                }
            }
        }
    }
}
