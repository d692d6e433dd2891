//! The GitHub REST operations efix calls, each with its method, path template and the
//! OpenAPI `operationId` of GitHub's description, and the [`Request`] value that names one
//! call. Nothing here sends anything; `client` does, and `dry_run` only records.
//!
//! The committed OpenAPI subset (`tests/fixtures/github/openapi-subset.json`) holds exactly
//! these operations; a unit test keeps the two in step.

use serde::Serialize;
use serde_json::Value;

/// One REST operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    GetCommit,
    CreateBlob,
    CreateTree,
    CreateCommit,
    GetRef,
    CreateRef,
    UpdateRef,
    ListPulls,
    GetPull,
    CreatePull,
    UpdatePull,
    AddLabels,
    CreateComment,
    CreateReaction,
    GetPermission,
    ListJobs,
    DownloadJobLogs,
}

/// The permission of the Actions token an operation needs, named as in a workflow's
/// `permissions:` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permission {
    ContentsRead,
    ContentsWrite,
    PullRequestsRead,
    PullRequestsWrite,
    IssuesWrite,
    ActionsRead,
    /// Every token can read collaborator permissions of its own repository.
    Metadata,
}

impl Permission {
    /// As written in `permissions:`.
    pub(crate) fn as_yaml(self) -> &'static str {
        match self {
            Permission::ContentsRead => "contents: read",
            Permission::ContentsWrite => "contents: write",
            Permission::PullRequestsRead => "pull-requests: read",
            Permission::PullRequestsWrite => "pull-requests: write",
            Permission::IssuesWrite => "issues: write",
            Permission::ActionsRead => "actions: read",
            Permission::Metadata => "metadata: read",
        }
    }
}

impl Op {
    /// Every operation, in the order a publish uses them.
    #[cfg(test)]
    pub(crate) const ALL: [Op; 17] = [
        Op::GetCommit,
        Op::CreateBlob,
        Op::CreateTree,
        Op::CreateCommit,
        Op::GetRef,
        Op::CreateRef,
        Op::UpdateRef,
        Op::ListPulls,
        Op::GetPull,
        Op::CreatePull,
        Op::UpdatePull,
        Op::AddLabels,
        Op::CreateComment,
        Op::CreateReaction,
        Op::GetPermission,
        Op::ListJobs,
        Op::DownloadJobLogs,
    ];

    /// (method, path template, operationId).
    fn spec(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Op::GetCommit => (
                "GET",
                "/repos/{owner}/{repo}/git/commits/{commit_sha}",
                "git/get-commit",
            ),
            Op::CreateBlob => ("POST", "/repos/{owner}/{repo}/git/blobs", "git/create-blob"),
            Op::CreateTree => ("POST", "/repos/{owner}/{repo}/git/trees", "git/create-tree"),
            Op::CreateCommit => (
                "POST",
                "/repos/{owner}/{repo}/git/commits",
                "git/create-commit",
            ),
            Op::GetRef => ("GET", "/repos/{owner}/{repo}/git/ref/{ref}", "git/get-ref"),
            Op::CreateRef => ("POST", "/repos/{owner}/{repo}/git/refs", "git/create-ref"),
            Op::UpdateRef => (
                "PATCH",
                "/repos/{owner}/{repo}/git/refs/{ref}",
                "git/update-ref",
            ),
            Op::ListPulls => ("GET", "/repos/{owner}/{repo}/pulls", "pulls/list"),
            Op::GetPull => (
                "GET",
                "/repos/{owner}/{repo}/pulls/{pull_number}",
                "pulls/get",
            ),
            Op::CreatePull => ("POST", "/repos/{owner}/{repo}/pulls", "pulls/create"),
            Op::UpdatePull => (
                "PATCH",
                "/repos/{owner}/{repo}/pulls/{pull_number}",
                "pulls/update",
            ),
            Op::AddLabels => (
                "POST",
                "/repos/{owner}/{repo}/issues/{issue_number}/labels",
                "issues/add-labels",
            ),
            Op::CreateComment => (
                "POST",
                "/repos/{owner}/{repo}/issues/{issue_number}/comments",
                "issues/create-comment",
            ),
            Op::CreateReaction => (
                "POST",
                "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
                "reactions/create-for-issue-comment",
            ),
            Op::GetPermission => (
                "GET",
                "/repos/{owner}/{repo}/collaborators/{username}/permission",
                "repos/get-collaborator-permission-level",
            ),
            Op::ListJobs => (
                "GET",
                "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
                "actions/list-jobs-for-workflow-run",
            ),
            Op::DownloadJobLogs => (
                "GET",
                "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
                "actions/download-job-logs-for-workflow-run",
            ),
        }
    }

    pub(crate) fn method(self) -> &'static str {
        self.spec().0
    }

    pub(crate) fn template(self) -> &'static str {
        self.spec().1
    }

    #[cfg(test)]
    pub(crate) fn operation_id(self) -> &'static str {
        self.spec().2
    }

    /// What the call does, as a fragment after "failed to".
    pub(crate) fn what(self) -> &'static str {
        match self {
            Op::GetCommit => "read the base commit",
            Op::CreateBlob => "upload a file",
            Op::CreateTree => "create the tree",
            Op::CreateCommit => "create the commit",
            Op::GetRef => "look up the branch",
            Op::CreateRef => "create the branch",
            Op::UpdateRef => "move the branch",
            Op::ListPulls => "look for an open pull request",
            Op::GetPull => "read the pull request",
            Op::CreatePull => "open the pull request",
            Op::UpdatePull => "update the pull request",
            Op::AddLabels => "label the pull request",
            Op::CreateComment => "comment on the issue",
            Op::CreateReaction => "react to the comment",
            Op::GetPermission => "read the commenter's permission",
            Op::ListJobs => "list the jobs of the workflow run",
            Op::DownloadJobLogs => "download the log of a failed job",
        }
    }

    /// The token permission the call needs.
    pub(crate) fn permission(self) -> Permission {
        match self {
            Op::GetCommit | Op::GetRef => Permission::ContentsRead,
            Op::CreateBlob | Op::CreateTree | Op::CreateCommit | Op::CreateRef | Op::UpdateRef => {
                Permission::ContentsWrite
            }
            Op::ListPulls | Op::GetPull => Permission::PullRequestsRead,
            Op::CreatePull | Op::UpdatePull => Permission::PullRequestsWrite,
            Op::AddLabels | Op::CreateComment | Op::CreateReaction => Permission::IssuesWrite,
            Op::GetPermission => Permission::Metadata,
            Op::ListJobs | Op::DownloadJobLogs => Permission::ActionsRead,
        }
    }

    /// Whether sending the call twice does no harm, so a server error may be retried: reads,
    /// updates that set a value, and Git objects (content-addressed: a second copy is the same
    /// object). Creating a pull request, a comment, a label or a reaction twice is visible.
    pub(crate) fn repeatable(self) -> bool {
        !matches!(
            self,
            Op::CreatePull | Op::AddLabels | Op::CreateComment | Op::CreateReaction
        )
    }
}

/// One call: the operation, its filled-in path, query and JSON body (what `--dry-run` prints).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    #[serde(skip)]
    pub(crate) op: Op,
    pub(crate) method: &'static str,
    pub(crate) path: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) query: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<Value>,
}

impl Request {
    /// A call of `op` on `owner/name`, with the remaining path parameters in template order.
    pub(crate) fn new(op: Op, repository: &str, params: &[&str]) -> Request {
        let (owner, name) = repository.split_once('/').unwrap_or((repository, ""));
        let mut path = String::new();
        let mut rest = params.iter();
        for (index, part) in op.template().split('{').enumerate() {
            if index == 0 {
                path.push_str(part);
                continue;
            }
            let (param, literal) = part.split_once('}').unwrap_or((part, ""));
            let value = match param {
                "owner" => encode(owner, false),
                "repo" => encode(name, false),
                // A ref keeps its slashes: `heads/efix/12-ab12cd34`.
                "ref" => encode(rest.next().copied().unwrap_or_default(), true),
                _ => encode(rest.next().copied().unwrap_or_default(), false),
            };
            path.push_str(&value);
            path.push_str(literal);
        }
        Request {
            op,
            method: op.method(),
            path,
            query: Vec::new(),
            body: None,
        }
    }

    pub(crate) fn query(mut self, name: &str, value: &str) -> Request {
        self.query.push((name.to_owned(), value.to_owned()));
        self
    }

    pub(crate) fn body(mut self, body: Value) -> Request {
        self.body = Some(body);
        self
    }

    /// The path with its query string, as sent.
    pub(crate) fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let query: Vec<String> = self
            .query
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k, false), encode(v, false)))
            .collect();
        format!("{}?{}", self.path, query.join("&"))
    }
}

/// Percent-encode everything but RFC 3986 unreserved characters (and `/` when asked).
pub(crate) fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && byte == b'/');
        if keep {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A GitHub answer: the status and the JSON body (`Null` when empty or not JSON).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Value,
    /// `x-accepted-github-permissions`, which names the permission a 403 lacked.
    pub(crate) accepted_permissions: Option<String>,
}

impl Reply {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// GitHub's `message` field, or the body as text.
    pub(crate) fn message(&self) -> String {
        match self.body.get("message").and_then(Value::as_str) {
            Some(message) => {
                let details: Vec<String> = self
                    .body
                    .get("errors")
                    .and_then(Value::as_array)
                    .map(|errors| {
                        errors
                            .iter()
                            .filter_map(|e| match e {
                                Value::String(s) => Some(s.clone()),
                                other => other
                                    .get("message")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if details.is_empty() {
                    message.to_owned()
                } else {
                    format!("{message} ({})", details.join("; "))
                }
            }
            None if self.body.is_null() => "(no body)".to_owned(),
            None => self.body.to_string(),
        }
    }
}

/// Anything that can carry a [`Request`] to GitHub: the real client, or the dry-run recorder.
pub(crate) trait Transport {
    /// Send one request and return GitHub's answer whatever its status (rate limits already
    /// retried); `Err` only when no answer came.
    fn send(&mut self, request: &Request) -> Result<Reply, super::PublishError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_openapi_subset_holds_exactly_the_operations_efix_calls() {
        let text = std::fs::read_to_string("tests/fixtures/github/openapi-subset.json").unwrap();
        let subset: Value = serde_json::from_str(&text).unwrap();
        let mut committed: Vec<(String, String, String)> = Vec::new();
        for (path, item) in subset["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                committed.push((
                    method.to_ascii_uppercase(),
                    path.clone(),
                    operation["operationId"].as_str().unwrap().to_owned(),
                ));
            }
        }
        committed.sort();
        let mut called: Vec<(String, String, String)> = Op::ALL
            .iter()
            .map(|op| {
                (
                    op.method().to_owned(),
                    op.template().to_owned(),
                    op.operation_id().to_owned(),
                )
            })
            .collect();
        called.sort();
        assert_eq!(
            committed, called,
            "regenerate the subset with scripts/openapi-subset.py"
        );
    }

    #[test]
    fn paths_fill_owner_repo_and_parameters_in_order() {
        let request = Request::new(Op::GetRef, "octo-org/demo", &["heads/efix/12-ab12cd34"]);
        assert_eq!(
            request.path,
            "/repos/octo-org/demo/git/ref/heads/efix/12-ab12cd34"
        );
        let request = Request::new(Op::GetPermission, "octo-org/demo", &["a user[bot]"]);
        assert_eq!(
            request.path,
            "/repos/octo-org/demo/collaborators/a%20user%5Bbot%5D/permission"
        );
        let request = Request::new(Op::ListPulls, "octo-org/demo", &[])
            .query("head", "octo-org:efix/1-ab")
            .query("state", "open");
        assert_eq!(
            request.path_and_query(),
            "/repos/octo-org/demo/pulls?head=octo-org%3Aefix%2F1-ab&state=open"
        );
    }
}
