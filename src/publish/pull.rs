//! The pull request of a published fix (opened, or updated when one is already open for the
//! branch), its labels, and the comment on the triggering issue.

use serde::Serialize;
use serde_json::{Value, json};

use super::PublishError;
use super::api::Op;
use super::github::{Github, number_at, text_at};

/// A comment GitHub made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Comment {
    pub id: u64,
    pub url: String,
}

/// What the pull request step did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct PullRequest {
    pub number: u64,
    pub url: String,
    /// `true` when efix opened it, `false` when it updated an open one.
    pub created: bool,
}

/// What to put in the pull request.
pub(crate) struct PullContent<'a> {
    pub(crate) branch: &'a str,
    pub(crate) base: &'a str,
    pub(crate) title: &'a str,
    pub(crate) body: &'a str,
    pub(crate) draft: bool,
    pub(crate) labels: &'a [String],
}

/// Open the pull request for `content.branch`, or update the one already open.
pub(crate) fn open_or_update(
    github: &mut Github<'_>,
    content: &PullContent<'_>,
) -> Result<PullRequest, PublishError> {
    let owner = github
        .repository
        .split_once('/')
        .map(|(owner, _)| owner.to_owned())
        .unwrap_or_default();
    let request = github
        .request(Op::ListPulls, &[])
        .query("head", &format!("{owner}:{}", content.branch))
        .query("state", "open");
    let open = github.call(request)?;
    let existing = open.as_array().and_then(|pulls| pulls.first()).cloned();
    let (answer, request, created) = match existing {
        Some(pull) => {
            let number = pull.get("number").and_then(Value::as_u64).unwrap_or(0);
            let request = github
                .request(Op::UpdatePull, &[&number.to_string()])
                .body(json!({"title": content.title, "body": content.body}));
            (github.call(request.clone())?, request, false)
        }
        None => {
            let request = github.request(Op::CreatePull, &[]).body(json!({
                "title": content.title,
                "head": content.branch,
                "base": content.base,
                "body": content.body,
                "draft": content.draft,
            }));
            (github.call(request.clone())?, request, true)
        }
    };
    let number = number_at(&answer, "/number", &request)?;
    let url = text_at(&answer, "/html_url", &request)?;
    if !content.labels.is_empty() {
        let request = github
            .request(Op::AddLabels, &[&number.to_string()])
            .body(json!({"labels": content.labels}));
        github.call(request)?;
    }
    Ok(PullRequest {
        number,
        url,
        created,
    })
}

/// Comment `body` on issue (or pull request) `issue`.
pub(crate) fn comment(
    github: &mut Github<'_>,
    issue: u64,
    body: &str,
) -> Result<Comment, PublishError> {
    let request = github
        .request(Op::CreateComment, &[&issue.to_string()])
        .body(json!({"body": body}));
    let answer = github.call(request.clone())?;
    Ok(Comment {
        id: number_at(&answer, "/id", &request)?,
        url: text_at(&answer, "/html_url", &request)?,
    })
}
