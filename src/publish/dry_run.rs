//! `efix publish --dry-run`: a [`Transport`] that sends nothing and records every request,
//! answering with placeholders (`<blob 1>`, `<commit>`, ...) so the rest of publish runs
//! unchanged and the printed list is exactly what a real publish would send. It assumes the
//! branch and the pull request do not exist yet (a real publish would find them and move or
//! update them instead).

use serde_json::{Value, json};

use super::PublishError;
use super::api::{Op, Reply, Request, Transport};

/// Records requests instead of sending them.
#[derive(Debug, Default)]
pub(crate) struct DryRun {
    pub(crate) requests: Vec<Request>,
    blobs: usize,
}

impl Transport for DryRun {
    fn send(&mut self, request: &Request) -> Result<Reply, PublishError> {
        self.requests.push(request.clone());
        let (status, body) = match request.op {
            Op::GetCommit => (200, json!({"tree": {"sha": "<tree of the base commit>"}})),
            Op::CreateBlob => {
                self.blobs += 1;
                (201, json!({"sha": format!("<blob {}>", self.blobs)}))
            }
            Op::CreateTree => (201, json!({"sha": "<tree>"})),
            Op::CreateCommit => (201, json!({"sha": "<commit>"})),
            Op::GetRef => (404, json!({"message": "Not Found"})),
            Op::ListPulls => (200, json!([])),
            Op::CreatePull => (201, json!({"number": 0, "html_url": "<pull request>"})),
            Op::CreateComment => (201, json!({"id": 0, "html_url": "<comment>"})),
            _ => (200, Value::Null),
        };
        Ok(Reply {
            status,
            body,
            accepted_permissions: None,
        })
    }
}
