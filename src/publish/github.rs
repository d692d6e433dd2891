//! Calls on one repository through a [`Transport`], with GitHub's error answers turned into
//! [`PublishError::Api`] carrying a remedy, and the fields efix reads from answers.

use serde_json::Value;

use super::PublishError;
use super::api::{Request, Transport};
use super::remedy::remedy;

/// One repository (`owner/name`) on one transport.
pub(crate) struct Github<'t> {
    pub(crate) transport: &'t mut dyn Transport,
    pub(crate) repository: String,
}

impl Github<'_> {
    /// The request for `op` on this repository.
    pub(crate) fn request(&self, op: super::api::Op, params: &[&str]) -> Request {
        Request::new(op, &self.repository, params)
    }

    /// Send `request`; a 2xx answer gives its body, anything else an error with a remedy.
    pub(crate) fn call(&mut self, request: Request) -> Result<Value, PublishError> {
        self.call_optional(request, false)
            .map(|body| body.unwrap_or(Value::Null))
    }

    /// Like [`Github::call`], but a 404 is `None` when `missing_is_none` (a branch that does
    /// not exist yet).
    pub(crate) fn call_optional(
        &mut self,
        request: Request,
        missing_is_none: bool,
    ) -> Result<Option<Value>, PublishError> {
        let reply = self.transport.send(&request)?;
        if reply.ok() {
            return Ok(Some(reply.body));
        }
        if missing_is_none && reply.status == 404 {
            return Ok(None);
        }
        Err(PublishError::Api {
            what: request.op.what(),
            method: request.method,
            path: request.path.clone(),
            status: reply.status,
            message: reply.message(),
            remedy: remedy(request.op, &reply, &self.repository),
        })
    }
}

/// The string at `pointer` (a JSON pointer such as `/tree/sha`) of an answer to `request`.
pub(crate) fn text_at(
    body: &Value,
    pointer: &'static str,
    request: &Request,
) -> Result<String, PublishError> {
    body.pointer(pointer)
        .and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .ok_or_else(|| PublishError::Answer {
            what: request.op.what(),
            method: request.method,
            path: request.path.clone(),
            field: pointer,
        })
}

/// The integer at `pointer` of an answer to `request`.
pub(crate) fn number_at(
    body: &Value,
    pointer: &'static str,
    request: &Request,
) -> Result<u64, PublishError> {
    body.pointer(pointer)
        .and_then(Value::as_u64)
        .ok_or_else(|| PublishError::Answer {
            what: request.op.what(),
            method: request.method,
            path: request.path.clone(),
            field: pointer,
        })
}
