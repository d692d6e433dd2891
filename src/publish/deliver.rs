//! `efix publish`: a proven run becomes a signed commit on `efix/<issue or run>-<hash>`, a
//! pull request (opened or updated) and a comment on the triggering issue; a run without a
//! proven fix becomes only that comment, with the failure summary the evidence renders.
//!
//! What is published is the change recorded in `evidence.json`; the caller has already
//! checked that `patch.diff`, `pr-title.txt` and `pr-body.md` are what the evidence renders.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::PublishError;
use super::api::{Request, Transport};
use super::commit::{self, BranchUpdate};
use super::event::{Event, GithubEnv};
use super::gate::code_span;
use super::github::Github;
use super::pull::{self, Comment, PullContent, PullRequest};
use crate::evidence::{self, Evidence, Status};
use crate::git::Repo;
use crate::patch::PatchPolicy;
use crate::report::Reporter;

/// Hex digits of the command's hash in the branch name.
const BRANCH_HASH_LEN: usize = 8;

/// What `efix publish` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The local repository holding the recorded base commit.
    pub repo: PathBuf,
    /// Open or update a pull request for a proven fix.
    pub create_pr: bool,
    /// Comment on the triggering issue.
    pub comment: bool,
    pub draft: bool,
    pub labels: Vec<String>,
    /// The issue to comment on and to name the branch after (default: the event's).
    pub issue: Option<u64>,
    /// The branch the pull request goes into (default: from the event).
    pub base: Option<String>,
}

/// What was published, printed on stdout.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Report {
    pub dry_run: bool,
    /// The run's result, from the evidence.
    pub status: Status,
    pub branch: Option<String>,
    pub base: Option<String>,
    pub commit: Option<String>,
    /// `created` or `moved`.
    pub branch_update: Option<&'static str>,
    pub pull_request: Option<PullRequest>,
    pub comment: Option<Comment>,
    /// Why nothing (or only part) was published, when that is so.
    pub note: Option<String>,
    /// With `--dry-run`: every request a real publish would send, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<Request>,
}

/// Publish `evidence` (whose `evidence.json` bytes are `evidence_json`).
#[expect(
    clippy::too_many_arguments,
    reason = "each argument is an independent input of one command"
)]
pub(crate) fn publish(
    options: &Options,
    evidence: &Evidence,
    evidence_json: &[u8],
    policy: &PatchPolicy,
    env: &GithubEnv,
    event: Option<&Event>,
    transport: &mut dyn Transport,
    reporter: &Reporter,
) -> Result<Report, PublishError> {
    let repository = env.repository()?.to_owned();
    let issue = options.issue.or(event.and_then(|e| e.issue));
    let mut report = Report {
        dry_run: false,
        status: evidence.result.status,
        branch: None,
        base: None,
        commit: None,
        branch_update: None,
        pull_request: None,
        comment: None,
        note: None,
        requests: Vec::new(),
    };
    if evidence.result.status == Status::InProgress {
        return Err(PublishError::Unpublishable {
            what: "the run".to_owned(),
            message: "it has not finished (evidence.json is a checkpoint); finish it with \
                      `efix run --resume DIR` first"
                .to_owned(),
        });
    }
    let mut github = Github {
        transport,
        repository,
    };
    let body = evidence::render_pr_body(evidence);
    let fix = evidence.fix.as_ref().filter(|_| options.create_pr);
    let comment_text = match fix {
        Some(fix) => {
            let base_commit = evidence.repo.base_commit.as_deref().ok_or_else(|| {
                PublishError::Unpublishable {
                    what: "the fix".to_owned(),
                    message: "the run recorded no base commit".to_owned(),
                }
            })?;
            let key = match (issue, env.run_id.as_deref()) {
                (Some(issue), _) => issue.to_string(),
                (None, Some(run)) => run.to_owned(),
                (None, None) => {
                    return Err(PublishError::Unpublishable {
                        what: "the fix".to_owned(),
                        message: "no issue number and no GITHUB_RUN_ID to name the branch \
                                  after; pass --issue N"
                            .to_owned(),
                    });
                }
            };
            let branch = branch_name(&key, &evidence.request.command);
            let base = options
                .base
                .clone()
                .or_else(|| event.and_then(|e| e.base_branch(env)))
                .or_else(|| {
                    env.git_ref
                        .as_deref()
                        .and_then(|r| r.strip_prefix("refs/heads/"))
                        .map(str::to_owned)
                })
                .ok_or_else(|| PublishError::Unpublishable {
                    what: "the pull request".to_owned(),
                    message: "the branch to merge into is unknown; pass --base BRANCH".to_owned(),
                })?;
            reporter.phase("publish: commit");
            let (_, changes) =
                commit::rebuild(&Repo::open(&options.repo)?, base_commit, &fix.diff, policy)?;
            let title = evidence::render_pr_title(evidence);
            let message = commit_message(evidence, &title, env, evidence_json);
            let sha = commit::create_commit(&mut github, base_commit, &changes, &message)?;
            let update = commit::set_branch(&mut github, &branch, &sha)?;
            reporter.info(&format!(
                "{} {branch} at {sha} ({} changed, parent {base_commit})",
                match update {
                    BranchUpdate::Created => "created",
                    BranchUpdate::Moved => "moved",
                },
                match changes.len() {
                    1 => "1 file".to_owned(),
                    n => format!("{n} files"),
                }
            ));
            reporter.end_phase();
            reporter.phase("publish: pull request");
            let pull = pull::open_or_update(
                &mut github,
                &PullContent {
                    branch: &branch,
                    base: &base,
                    title: &title,
                    body: &body,
                    // A claim weaker than "fixed and proven" is never offered as ready.
                    draft: options.draft
                        || matches!(
                            evidence.result.status,
                            Status::FixedNotJudged | Status::FixedFlagged
                        ),
                    labels: &options.labels,
                },
            )?;
            reporter.info(&format!(
                "{} pull request #{}: {}",
                if pull.created { "opened" } else { "updated" },
                pull.number,
                pull.url
            ));
            reporter.end_phase();
            let text = success_comment(evidence, &pull);
            report.branch = Some(branch);
            report.base = Some(base);
            report.commit = Some(sha);
            report.branch_update = Some(match update {
                BranchUpdate::Created => "created",
                BranchUpdate::Moved => "moved",
            });
            report.pull_request = Some(pull);
            text
        }
        // Without a proven fix (or without a pull request), the comment is the summary the
        // evidence renders: the same text as pr-body.md.
        None => body.clone(),
    };
    match (issue, options.comment) {
        (Some(issue), true) => {
            let link = pull::comment(&mut github, issue, &comment_text)?;
            reporter.info(&format!("commented on #{issue}: {}", link.url));
            report.comment = Some(link);
        }
        (None, true) if report.pull_request.is_none() => {
            report.note = Some(
                "no triggering issue to comment on and no proven fix to open a pull request \
                 for: nothing was published"
                    .to_owned(),
            );
        }
        _ => {}
    }
    Ok(report)
}

/// `efix/<issue number or run id>-<first hex digits of the command's SHA-256>`.
pub(crate) fn branch_name(key: &str, command: &str) -> String {
    let digest = hex(&Sha256::digest(command.as_bytes()));
    format!("efix/{key}-{}", &digest[..BRANCH_HASH_LEN])
}

/// The commit message: the PR title, the fixed tests, and the `Efix-Run` and
/// `Efix-Evidence-Sha256` trailers.
pub(crate) fn commit_message(
    evidence: &Evidence,
    title: &str,
    env: &GithubEnv,
    evidence_json: &[u8],
) -> String {
    let fixed: Vec<&str> = evidence
        .fix
        .as_ref()
        .and_then(|fix| evidence.rounds.iter().find(|r| r.number == fix.round))
        .and_then(|round| round.prove.as_ref())
        .map(|prove| prove.table.fixed.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let mut message = format!("{title}\n\n");
    match fixed.as_slice() {
        [] => {
            let _ = writeln!(
                message,
                "Proven: `{}` failed before this change and passes with it.",
                evidence.request.command
            );
        }
        [one] => {
            let _ = writeln!(message, "Fixed test: {one}");
        }
        many => {
            let _ = writeln!(message, "Fixed tests: {}", many.join(", "));
        }
    }
    let _ = write!(
        message,
        "\nEfix-Run: {}\nEfix-Evidence-Sha256: {}\n",
        env.run_url().unwrap_or_else(|| "local".to_owned()),
        hex(&Sha256::digest(evidence_json))
    );
    message
}

/// The comment on the triggering issue after a pull request was opened or updated.
pub(crate) fn success_comment(evidence: &Evidence, pull: &PullRequest) -> String {
    let claim = match evidence.result.status {
        Status::FixedNotJudged => "fixed, not fully proven (a check could not be judged; draft)",
        Status::FixedFlagged => "fixed, flagged for review (draft)",
        Status::FixedReproductionOnly => "fixed and proven by the reproduction only",
        _ => "fixed and proven",
    };
    format!(
        "efix: {claim} — {} #{} ({})\n\n{} failed on the base commit and passes with \
         the change; the pull request's description shows the evidence.\n",
        if pull.created { "opened" } else { "updated" },
        pull.number,
        pull.url,
        code_span(&evidence.request.command)
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branch_is_named_after_the_issue_and_the_command() {
        assert_eq!(
            branch_name("12", "cargo test crlf"),
            format!("efix/12-{}", &hex(&Sha256::digest(b"cargo test crlf"))[..8])
        );
        assert_ne!(
            branch_name("12", "cargo test a"),
            branch_name("12", "cargo test b")
        );
    }
}
