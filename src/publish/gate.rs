//! The trigger checks of `efix run --from-event`: who may start a run, with which command,
//! on whose code. Every refusal happens before anything runs and becomes exit 4; a human
//! whose comment is refused gets a comment saying why, a bot gets nothing (two bots must not
//! answer each other forever).
//!
//! For an `issue_comment`: the comment must be new, from a person, start with `/efix`, come
//! from an allowed `author_association` (`trigger.allowed-associations`), and the commenter
//! must have write, maintain or admin permission according to the API; a comment on a pull
//! request from a fork is refused, since running the fix loop there would run the fork's code.
//! A `workflow_run` from a fork is refused for the same reason.

use serde_json::Value;

use super::PublishError;
use super::api::Op;
use super::event::{Comment, CommentCommand, Event, Trigger, WorkflowRun, comment_command};
use super::github::{Github, text_at};

/// Permissions that may start efix, as `role_name` or the legacy `permission` field says.
const WRITE_ROLES: &[&str] = &["admin", "maintain", "write"];
/// The prefix GitHub gives an unnamed `run:` step: the step's name is its first line.
const RUN_STEP_PREFIX: &str = "Run ";

/// The result of the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run `command` (with these suites, when the event names any).
    Run {
        command: String,
        suites: Vec<String>,
        /// The comment to acknowledge with an `eyes` reaction.
        acknowledge: Option<u64>,
    },
    /// Refused before anything ran.
    Refuse(Refusal),
}

/// Why a trigger was refused, and the answer a human gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// One line for the log.
    pub reason: String,
    /// The issue to answer on and the comment's text; `None` for bots and for comments not
    /// addressed to efix.
    pub reply: Option<(u64, String)>,
}

/// What the checks read besides the event.
pub struct Inputs<'a> {
    /// `--repro`: the step's command, used when the event names none.
    pub fallback: Option<&'a str>,
    /// `trigger.allowed-associations`.
    pub associations: &'a [String],
    /// `commands.allow`, so a refused command is answered before anything runs.
    pub allow: &'a [String],
}

/// Check the event. `github` is needed for comments and for a `workflow_run` without a
/// fallback command; without it those checks fail with [`PublishError::NoToken`] from the
/// caller.
pub(crate) fn check(
    event: &Event,
    inputs: &Inputs<'_>,
    github: Option<&mut Github<'_>>,
) -> Result<Verdict, PublishError> {
    match &event.trigger {
        Trigger::Comment(comment) => check_comment(comment, inputs, github, event),
        Trigger::WorkflowRun(run) => check_workflow_run(run, inputs, github, event),
        Trigger::Dispatch { command, suite } => {
            let command = command
                .clone()
                .or_else(|| inputs.fallback.map(str::to_owned))
                .ok_or_else(|| PublishError::NoCommand {
                    message: "the workflow_dispatch event has no `command` input and the step \
                              passes none; add a `command` input to the workflow"
                        .to_owned(),
                })?;
            let suites = suite
                .iter()
                .flat_map(|s| s.lines())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            Ok(Verdict::Run {
                command,
                suites,
                acknowledge: None,
            })
        }
        Trigger::Other => Ok(Verdict::Run {
            command: fallback(inputs, &event.name)?,
            suites: Vec::new(),
            acknowledge: None,
        }),
    }
}

fn fallback(inputs: &Inputs<'_>, event: &str) -> Result<String, PublishError> {
    inputs
        .fallback
        .map(str::to_owned)
        .ok_or_else(|| PublishError::NoCommand {
            message: format!(
                "a {event} event carries no command; pass it with --repro (the action's \
                 `command` input)"
            ),
        })
}

/// The API, which this check cannot do without.
fn need_api<'g, 't>(
    github: Option<&'g mut Github<'t>>,
) -> Result<&'g mut Github<'t>, PublishError> {
    github.ok_or_else(|| PublishError::NoToken {
        name: "GITHUB_TOKEN".to_owned(),
    })
}

fn silent(reason: String) -> Verdict {
    Verdict::Refuse(Refusal {
        reason,
        reply: None,
    })
}

fn answered(comment: &Comment, reason: String, text: String) -> Verdict {
    Verdict::Refuse(Refusal {
        reason,
        reply: Some((comment.issue, format!("@{} {text}", comment.login))),
    })
}

fn check_comment(
    comment: &Comment,
    inputs: &Inputs<'_>,
    github: Option<&mut Github<'_>>,
    event: &Event,
) -> Result<Verdict, PublishError> {
    if comment.action != "created" {
        return Ok(silent(format!(
            "the comment was {}; only a new comment starts efix",
            if comment.action.is_empty() {
                "not created"
            } else {
                &comment.action
            }
        )));
    }
    if comment.login.ends_with("[bot]") || comment.user_type == "Bot" {
        return Ok(silent(format!(
            "comments by bots never start efix (@{})",
            comment.login
        )));
    }
    let asked = match comment_command(&comment.body) {
        CommentCommand::NotForEfix => {
            return Ok(silent(
                "the comment does not start with /efix; it is not addressed to efix".to_owned(),
            ));
        }
        CommentCommand::Bare => None,
        CommentCommand::Command(command) => Some(command),
    };
    if !inputs.associations.contains(&comment.association) {
        let allowed = or_list(inputs.associations);
        return Ok(answered(
            comment,
            format!(
                "@{} is {} here; efix runs only for {allowed} (trigger.allowed-associations)",
                comment.login,
                association_name(&comment.association)
            ),
            format!(
                "efix did not run: it runs only for `/efix` comments by {allowed} of this \
                 repository who have write permission, and GitHub lists you as {}.",
                association_name(&comment.association)
            ),
        ));
    }
    let github = need_api(github)?;
    if comment.on_pull_request {
        let request = github.request(Op::GetPull, &[&comment.issue.to_string()]);
        let pull = github.call(request)?;
        let head = pull.pointer("/head/repo/full_name").and_then(Value::as_str);
        let base = pull
            .pointer("/base/repo/full_name")
            .and_then(Value::as_str)
            .or(event.repository.as_deref());
        if head.is_none() || head != base {
            let fork = head.unwrap_or("a deleted fork");
            return Ok(answered(
                comment,
                format!("pull request #{} comes from the fork {fork}", comment.issue),
                format!(
                    "efix did not run: this pull request comes from the fork {fork}, and efix \
                     never runs code from a fork. Push the branch to this repository and open a \
                     pull request from there to use efix on it."
                ),
            ));
        }
    }
    let request = github.request(Op::GetPermission, &[&comment.login]);
    let answer = github.call(request.clone())?;
    let permission = text_at(&answer, "/permission", &request)?;
    let role = answer
        .pointer("/role_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !WRITE_ROLES.contains(&permission.as_str()) && !WRITE_ROLES.contains(&role) {
        let shown = if role.is_empty() { &permission } else { role };
        return Ok(answered(
            comment,
            format!("@{} has {shown} permission, not write", comment.login),
            format!(
                "efix did not run: you have {shown} permission on this repository, and efix \
                 runs only for people with write, maintain or admin permission."
            ),
        ));
    }
    let command = match asked.or_else(|| inputs.fallback.map(str::to_owned)) {
        Some(command) => command,
        None => {
            return Ok(answered(
                comment,
                "the comment names no command and the step passes none".to_owned(),
                "efix did not run: no command. Write the failing command after `/efix` on the \
                 first line of a comment, e.g. `/efix cargo test -p parser crlf`."
                    .to_owned(),
            ));
        }
    };
    if let Err(refusal) = crate::policy::command::check(&command, inputs.allow) {
        return Ok(answered(
            comment,
            format!("{} [{}]", refusal.message, refusal.rule),
            format!(
                "efix did not run {}: {} (rule `{}`).",
                code_span(&command),
                refusal.message,
                refusal.rule
            ),
        ));
    }
    Ok(Verdict::Run {
        command,
        suites: Vec::new(),
        acknowledge: Some(comment.id),
    })
}

fn check_workflow_run(
    run: &WorkflowRun,
    inputs: &Inputs<'_>,
    github: Option<&mut Github<'_>>,
    event: &Event,
) -> Result<Verdict, PublishError> {
    if run.head_repository.is_none() || run.head_repository != event.repository {
        return Ok(silent(format!(
            "the workflow run built code from {}, not from this repository; efix never runs \
             code from a fork",
            run.head_repository
                .as_deref()
                .unwrap_or("an unknown repository")
        )));
    }
    if run.conclusion.as_deref() != Some("failure") {
        return Ok(silent(format!(
            "the workflow run concluded {}, not failure; there is nothing to fix",
            run.conclusion.as_deref().unwrap_or("nothing yet")
        )));
    }
    if let Some(command) = inputs.fallback {
        return Ok(Verdict::Run {
            command: command.to_owned(),
            suites: Vec::new(),
            acknowledge: None,
        });
    }
    let github = need_api(github)?;
    let request = github
        .request(Op::ListJobs, &[&run.id.to_string()])
        .query("filter", "latest")
        .query("per_page", "100");
    let answer = github.call(request)?;
    let command = failing_step_command(&answer)?;
    Ok(Verdict::Run {
        command,
        suites: Vec::new(),
        acknowledge: None,
    })
}

/// The command of the first failed step of the first failed job: an unnamed `run:` step is
/// named `Run <its first line>` by GitHub, which is the command.
fn failing_step_command(jobs: &Value) -> Result<String, PublishError> {
    let failed = |v: &&Value| v.get("conclusion").and_then(Value::as_str) == Some("failure");
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let Some(job) = jobs
        .get("jobs")
        .and_then(Value::as_array)
        .and_then(|jobs| jobs.iter().find(failed))
    else {
        return Err(PublishError::NoCommand {
            message: "no job of the workflow run failed; pass the command to run with the \
                      action's `command` input"
                .to_owned(),
        });
    };
    let Some(step) = job
        .get("steps")
        .and_then(Value::as_array)
        .and_then(|steps| steps.iter().find(failed))
    else {
        return Err(PublishError::NoCommand {
            message: format!(
                "job `{}` failed outside its steps; pass the command to run with the action's \
                 `command` input",
                name(job)
            ),
        });
    };
    let step_name = name(step);
    match step_name.strip_prefix(RUN_STEP_PREFIX).map(str::trim) {
        Some(command) if !command.is_empty() => Ok(command.to_owned()),
        _ => Err(PublishError::NoCommand {
            message: format!(
                "the failing step `{step_name}` of job `{}` has its own name, so its command is \
                 not known; remove its `name:` or pass the command with the action's `command` \
                 input",
                name(job)
            ),
        }),
    }
}

/// Post the `eyes` reaction on an accepted comment, or the answer to a refused one.
pub(crate) fn acknowledge(github: &mut Github<'_>, comment: u64) -> Result<(), PublishError> {
    let request = github
        .request(Op::CreateReaction, &[&comment.to_string()])
        .body(serde_json::json!({"content": "eyes"}));
    github.call(request).map(|_| ())
}

/// Post the refusal's answer.
pub(crate) fn reply(github: &mut Github<'_>, issue: u64, text: &str) -> Result<(), PublishError> {
    let request = github
        .request(Op::CreateComment, &[&issue.to_string()])
        .body(serde_json::json!({"body": text}));
    github.call(request).map(|_| ())
}

fn association_name(association: &str) -> String {
    if association.is_empty() {
        "having no association".to_owned()
    } else {
        association.to_owned()
    }
}

fn or_list(items: &[String]) -> String {
    match items {
        [] => "nobody".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Markdown code span that survives backticks inside `text`.
pub(crate) fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_command_of_a_failed_unnamed_step_is_its_first_line() {
        let jobs = json!({"total_count": 2, "jobs": [
            {"name": "lint", "conclusion": "success", "steps": []},
            {"name": "test", "conclusion": "failure", "steps": [
                {"name": "Set up job", "conclusion": "success"},
                {"name": "Run cargo test --locked", "conclusion": "failure"},
                {"name": "Post", "conclusion": "skipped"}
            ]}
        ]});
        assert_eq!(failing_step_command(&jobs).unwrap(), "cargo test --locked");
        let named = json!({"jobs": [{"name": "test", "conclusion": "failure", "steps": [
            {"name": "Unit tests", "conclusion": "failure"}
        ]}]});
        assert_eq!(
            failing_step_command(&named).unwrap_err().to_string(),
            "find the command to run: the failing step `Unit tests` of job `test` has its own \
             name, so its command is not known; remove its `name:` or pass the command with the \
             action's `command` input"
        );
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code_span("cargo test"), "`cargo test`");
        assert_eq!(code_span("echo `id`"), "`` echo `id` ``");
        assert_eq!(
            or_list(&["A".to_owned(), "B".to_owned(), "C".to_owned()]),
            "A, B or C"
        );
    }
}
