//! What to tell the maintainer when GitHub refuses a call: the repository setting, workflow
//! permission or branch rule to change. GitHub's own message is kept beside it; the remedy
//! comes from the status, the operation and the message's known phrases.

use super::api::{Op, Reply};

/// The phrase GitHub answers with when the repository (or organization) does not let the
/// Actions token open pull requests.
const ACTIONS_MAY_NOT_CREATE_PRS: &str = "not permitted to create or approve pull requests";

/// The remedy for a failed answer to `op`.
pub(crate) fn remedy(op: Op, reply: &Reply, repository: &str) -> String {
    let message = reply.message().to_ascii_lowercase();
    let permission = reply
        .accepted_permissions
        .as_deref()
        .map(|p| p.replace('=', ": ").replace(',', ", "))
        .unwrap_or_else(|| op.permission().as_yaml().to_owned());
    if message.contains(ACTIONS_MAY_NOT_CREATE_PRS) {
        return "enable Settings → Actions → General → Workflow permissions → \"Allow GitHub \
                Actions to create and approve pull requests\" for the repository (and for its \
                organization, where that setting is locked), or pass the token of a GitHub App \
                as `github-token`"
            .to_owned();
    }
    if is_branch_rule(&message) {
        return "a branch protection rule or ruleset covers the efix/ branches; exclude \
                `efix/**` from it, or let the token's app bypass it"
            .to_owned();
    }
    match reply.status {
        401 => "GitHub rejected the token; pass a valid token (the action passes its \
                `github-token` input, by default the job's GITHUB_TOKEN)"
            .to_owned(),
        403 => format!(
            "the token lacks `{permission}`; add `permissions: {{ {permission} }}` to the job (or \
             the workflow) that runs efix"
        ),
        404 => match op {
            Op::GetCommit => "the recorded base commit is not on GitHub; push it (efix works \
                              on a commit that GitHub has) or run efix on a pushed commit"
                .to_owned(),
            Op::GetPull => "the pull request does not exist in this repository".to_owned(),
            Op::ListJobs | Op::DownloadJobLogs => {
                "the workflow run is not in this repository, or the token lacks \
                             `actions: read`"
                    .to_owned()
            }
            _ => format!(
                "{repository} is not visible to this token, or does not exist: check \
                 GITHUB_REPOSITORY and that the token has `{permission}` on it"
            ),
        },
        422 => match op {
            Op::CreatePull if message.contains("no commits between") => {
                "the fix makes no difference against the base branch (was it merged already?)"
                    .to_owned()
            }
            Op::CreatePull | Op::UpdatePull => {
                "check that the base branch exists and the title and body are not empty".to_owned()
            }
            Op::CreateTree | Op::CreateCommit => {
                "the recorded base commit or tree is not on GitHub; push the base commit first"
                    .to_owned()
            }
            _ => "GitHub refused the request as invalid; see its message above".to_owned(),
        },
        status if status >= 500 => {
            "GitHub had a server error; run efix publish again (it creates or moves the same \
             branch and updates the same pull request)"
                .to_owned()
        }
        _ => format!("check the token's `{permission}` permission and GitHub's message"),
    }
}

/// Whether a refusal comes from a branch protection rule or a ruleset.
fn is_branch_rule(message: &str) -> bool {
    [
        "protected branch",
        "repository rule violations",
        "ruleset",
        "branch protection",
    ]
    .iter()
    .any(|phrase| message.contains(phrase))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reply(status: u16, message: &str, accepted: Option<&str>) -> Reply {
        Reply {
            status,
            body: json!({"message": message, "documentation_url": "https://docs.github.com"}),
            accepted_permissions: accepted.map(str::to_owned),
        }
    }

    #[test]
    fn the_actions_pull_request_setting_is_named() {
        let text = remedy(
            Op::CreatePull,
            &reply(
                403,
                "GitHub Actions is not permitted to create or approve pull requests.",
                None,
            ),
            "o/r",
        );
        assert!(text.contains("Allow GitHub Actions to create and approve pull requests"));
    }

    #[test]
    fn a_missing_permission_names_the_permissions_line() {
        let text = remedy(
            Op::CreateBlob,
            &reply(403, "Resource not accessible by integration", None),
            "o/r",
        );
        assert_eq!(
            text,
            "the token lacks `contents: write`; add `permissions: { contents: write }` to the \
             job (or the workflow) that runs efix"
        );
        let text = remedy(
            Op::CreateComment,
            &reply(
                403,
                "Resource not accessible by integration",
                Some("issues=write"),
            ),
            "o/r",
        );
        assert!(
            text.starts_with("the token lacks `issues: write`"),
            "{text}"
        );
        let text = remedy(
            Op::CreatePull,
            &reply(403, "Resource not accessible by integration", None),
            "o/r",
        );
        assert!(
            text.starts_with("the token lacks `pull-requests: write`"),
            "{text}"
        );
    }

    #[test]
    fn branch_protection_is_named() {
        let text = remedy(
            Op::UpdateRef,
            &reply(422, "Repository rule violations found", None),
            "o/r",
        );
        assert!(text.contains("exclude `efix/**`"), "{text}");
        let text = remedy(
            Op::CreateRef,
            &reply(403, "Cannot create ref due to protected branch", None),
            "o/r",
        );
        assert!(text.contains("branch protection"), "{text}");
    }

    #[test]
    fn a_base_commit_github_lacks_says_push_it() {
        let text = remedy(Op::GetCommit, &reply(404, "Not Found", None), "o/r");
        assert!(text.contains("push it"), "{text}");
    }
}
