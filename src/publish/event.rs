//! The GitHub Actions context efix runs in: the `GITHUB_*` variables and the event payload at
//! `GITHUB_EVENT_PATH`, parsed into what the trigger checks and `efix publish` need.
//!
//! Only fields efix uses are read, and every one of them is optional in the parser: a payload
//! that lacks one is refused where the field is needed, with the field named, not here.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::PublishError;
use crate::config::Env;

/// GitHub's public API, when `GITHUB_API_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://api.github.com";
/// GitHub's web server, when `GITHUB_SERVER_URL` is not set.
pub const DEFAULT_SERVER_URL: &str = "https://github.com";

/// The `GITHUB_*` variables efix reads, taken once from the environment snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GithubEnv {
    pub api_url: String,
    pub server_url: String,
    /// `owner/name`.
    pub repository: Option<String>,
    pub run_id: Option<String>,
    /// `GITHUB_REF`, e.g. `refs/heads/main`.
    pub git_ref: Option<String>,
    pub event_name: Option<String>,
    pub event_path: Option<PathBuf>,
}

impl GithubEnv {
    /// Read the variables from `env`; empty values count as unset.
    pub fn from_env(env: &Env) -> GithubEnv {
        let get = |name: &str| {
            env.get(name)
                .and_then(|v| v.to_str())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        GithubEnv {
            api_url: get("GITHUB_API_URL").unwrap_or_else(|| DEFAULT_API_URL.to_owned()),
            server_url: get("GITHUB_SERVER_URL").unwrap_or_else(|| DEFAULT_SERVER_URL.to_owned()),
            repository: get("GITHUB_REPOSITORY"),
            run_id: get("GITHUB_RUN_ID"),
            git_ref: get("GITHUB_REF"),
            event_name: get("GITHUB_EVENT_NAME"),
            event_path: get("GITHUB_EVENT_PATH").map(PathBuf::from),
        }
    }

    /// `owner/name` of the repository efix works for.
    pub fn repository(&self) -> Result<&str, PublishError> {
        let Some(repository) = self.repository.as_deref() else {
            return Err(PublishError::MissingEnv {
                name: "GITHUB_REPOSITORY",
                remedy: "set it to the repository as owner/name (GitHub Actions sets it)",
            });
        };
        let valid = repository.split('/').count() == 2
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            });
        if !valid {
            return Err(PublishError::BadEnv {
                name: "GITHUB_REPOSITORY",
                message: format!("{repository:?} is not owner/name"),
            });
        }
        Ok(repository)
    }

    /// The web address of this workflow run, when efix runs in one.
    pub fn run_url(&self) -> Option<String> {
        Some(format!(
            "{}/{}/actions/runs/{}",
            self.server_url.trim_end_matches('/'),
            self.repository.as_deref()?,
            self.run_id.as_deref()?
        ))
    }
}

/// The token from the variable `name`.
pub fn token(env: &Env, name: &str) -> Result<String, PublishError> {
    env.get(name)
        .and_then(|v| v.to_str())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| PublishError::NoToken {
            name: name.to_owned(),
        })
}

/// A comment on an issue or a pull request (`issue_comment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// `created`, `edited` or `deleted`.
    pub action: String,
    pub id: u64,
    pub body: String,
    pub login: String,
    /// `User`, `Bot` or `Organization`.
    pub user_type: String,
    /// `OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, `NONE`, ...
    pub association: String,
    pub issue: u64,
    /// The issue is a pull request.
    pub on_pull_request: bool,
}

/// A finished run of another workflow (`workflow_run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    pub id: u64,
    pub conclusion: Option<String>,
    pub head_branch: Option<String>,
    /// `owner/name` of the repository the run's code came from (a fork for a fork's PR).
    pub head_repository: Option<String>,
}

/// What started the workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// `workflow_dispatch`, with its `command` and `suite` inputs when given.
    Dispatch {
        command: Option<String>,
        suite: Option<String>,
    },
    Comment(Comment),
    WorkflowRun(WorkflowRun),
    /// Any other event (`push`, `schedule`, `pull_request`, ...): the command comes from the
    /// step.
    Other,
}

/// The event efix runs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub trigger: Trigger,
    /// `repository.full_name` of the payload.
    pub repository: Option<String>,
    pub default_branch: Option<String>,
    /// `ref` of a `workflow_dispatch` or `push` payload.
    pub git_ref: Option<String>,
    /// The issue or pull request the event belongs to.
    pub issue: Option<u64>,
}

impl Event {
    /// Read the event named by `GITHUB_EVENT_NAME` from `GITHUB_EVENT_PATH`.
    pub fn load(github: &GithubEnv) -> Result<Event, PublishError> {
        let Some(name) = github.event_name.as_deref() else {
            return Err(PublishError::MissingEnv {
                name: "GITHUB_EVENT_NAME",
                remedy: "run --from-event inside GitHub Actions, or pass --repro CMD instead",
            });
        };
        let Some(path) = github.event_path.as_deref() else {
            return Err(PublishError::MissingEnv {
                name: "GITHUB_EVENT_PATH",
                remedy: "run --from-event inside GitHub Actions, or pass --repro CMD instead",
            });
        };
        let text = std::fs::read_to_string(path).map_err(|err| PublishError::Event {
            event: name.to_owned(),
            path: path.to_owned(),
            message: err.to_string(),
        })?;
        let payload: Value = serde_json::from_str(&text).map_err(|err| PublishError::Event {
            event: name.to_owned(),
            path: path.to_owned(),
            message: format!("not JSON: {err}"),
        })?;
        Event::parse(name, &payload, path)
    }

    /// Parse a payload of the event `name`.
    pub fn parse(name: &str, payload: &Value, path: &Path) -> Result<Event, PublishError> {
        let text = |pointer: &str| {
            payload
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let need = |pointer: &'static str| -> Result<&Value, PublishError> {
            payload.pointer(pointer).ok_or_else(|| PublishError::Event {
                event: name.to_owned(),
                path: path.to_owned(),
                message: format!("it has no `{}`", &pointer[1..].replace('/', ".")),
            })
        };
        let number = |pointer: &'static str| -> Result<u64, PublishError> {
            need(pointer)?.as_u64().ok_or_else(|| PublishError::Event {
                event: name.to_owned(),
                path: path.to_owned(),
                message: format!("`{}` is not a number", &pointer[1..].replace('/', ".")),
            })
        };
        let input = |key: &str| {
            text(&format!("/inputs/{key}"))
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let trigger = match name {
            "workflow_dispatch" => Trigger::Dispatch {
                command: input("command"),
                suite: input("suite"),
            },
            "issue_comment" => Trigger::Comment(Comment {
                action: text("/action").unwrap_or_default(),
                id: number("/comment/id")?,
                body: need("/comment/body")?
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                login: text("/comment/user/login").unwrap_or_default(),
                user_type: text("/comment/user/type").unwrap_or_default(),
                association: text("/comment/author_association").unwrap_or_default(),
                issue: number("/issue/number")?,
                on_pull_request: payload
                    .pointer("/issue/pull_request")
                    .is_some_and(|v| !v.is_null()),
            }),
            "workflow_run" => Trigger::WorkflowRun(WorkflowRun {
                id: number("/workflow_run/id")?,
                conclusion: text("/workflow_run/conclusion"),
                head_branch: text("/workflow_run/head_branch"),
                head_repository: text("/workflow_run/head_repository/full_name"),
            }),
            _ => Trigger::Other,
        };
        let issue = match &trigger {
            Trigger::Comment(comment) => Some(comment.issue),
            _ => payload
                .pointer("/issue/number")
                .or_else(|| payload.pointer("/pull_request/number"))
                .and_then(Value::as_u64),
        };
        Ok(Event {
            name: name.to_owned(),
            trigger,
            repository: text("/repository/full_name"),
            default_branch: text("/repository/default_branch"),
            git_ref: text("/ref"),
            issue,
        })
    }

    /// The branch a pull request for this run goes into: the branch of the failed run for
    /// `workflow_run`, the branch the workflow runs on (`GITHUB_REF`, or a dispatch's `ref`)
    /// when it is a branch, else the repository's default branch.
    pub fn base_branch(&self, github: &GithubEnv) -> Option<String> {
        if let Trigger::WorkflowRun(run) = &self.trigger
            && let Some(branch) = &run.head_branch
        {
            return Some(branch.clone());
        }
        [self.git_ref.as_deref(), github.git_ref.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|r| r.strip_prefix("refs/heads/"))
            .map(str::to_owned)
            .or_else(|| self.default_branch.clone())
    }
}

/// What the first line of a comment asks of efix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentCommand {
    /// The comment does not start with `/efix`: it is not addressed to efix.
    NotForEfix,
    /// `/efix` alone: run the step's configured command.
    Bare,
    /// `/efix <command>`: the rest of the first line.
    Command(String),
}

/// Read `/efix <command>` from the first line of a comment; the rest of the comment is
/// ignored, so a command cannot continue onto another line.
pub fn comment_command(body: &str) -> CommentCommand {
    let first = body
        .trim_start_matches('\u{feff}')
        .trim_start()
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches('\r');
    let Some(rest) = first.strip_prefix("/efix") else {
        return CommentCommand::NotForEfix;
    };
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return CommentCommand::NotForEfix;
    }
    match rest.trim() {
        "" => CommentCommand::Bare,
        command => CommentCommand::Command(command.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_command_is_the_rest_of_the_first_line_only() {
        assert_eq!(
            comment_command("/efix cargo test -p parser crlf\r\nthanks!\n/efix rm -rf /"),
            CommentCommand::Command("cargo test -p parser crlf".to_owned())
        );
        assert_eq!(
            comment_command("  /efix   pytest -k 'a and b'  "),
            CommentCommand::Command("pytest -k 'a and b'".to_owned())
        );
        assert_eq!(comment_command("/efix\nplease"), CommentCommand::Bare);
        assert_eq!(comment_command("/efixit now"), CommentCommand::NotForEfix);
        assert_eq!(
            comment_command("LGTM\n/efix cargo test"),
            CommentCommand::NotForEfix
        );
        assert_eq!(comment_command(""), CommentCommand::NotForEfix);
    }

    #[test]
    fn a_pull_request_comment_is_recognised_and_numbers_are_required() {
        let payload = json!({
            "action": "created",
            "issue": {"number": 7, "pull_request": {"url": "x"}},
            "comment": {"id": 99, "body": "/efix cargo test", "user": {"login": "ann", "type": "User"}, "author_association": "MEMBER"},
            "repository": {"full_name": "o/r", "default_branch": "main"}
        });
        let event = Event::parse("issue_comment", &payload, Path::new("e.json")).unwrap();
        let Trigger::Comment(comment) = &event.trigger else {
            panic!("{event:?}")
        };
        assert!(comment.on_pull_request);
        assert_eq!(event.issue, Some(7));
        assert_eq!(
            event.base_branch(&GithubEnv::default()),
            Some("main".to_owned())
        );

        let broken = json!({"action": "created", "issue": {"number": 7}, "comment": {"body": "x"}});
        let err = Event::parse("issue_comment", &broken, Path::new("e.json")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "read the issue_comment event payload e.json: it has no `comment.id`"
        );
    }

    #[test]
    fn the_base_branch_follows_the_event() {
        let github = GithubEnv {
            git_ref: Some("refs/heads/release".to_owned()),
            ..GithubEnv::default()
        };
        let run = json!({"workflow_run": {"id": 5, "head_branch": "dev"}, "repository": {"default_branch": "main"}});
        let event = Event::parse("workflow_run", &run, Path::new("e")).unwrap();
        assert_eq!(event.base_branch(&github), Some("dev".to_owned()));
        let dispatch = json!({"ref": "refs/heads/topic", "inputs": {"command": " cargo test "}});
        let event = Event::parse("workflow_dispatch", &dispatch, Path::new("e")).unwrap();
        assert_eq!(event.base_branch(&github), Some("topic".to_owned()));
        assert_eq!(
            event.trigger,
            Trigger::Dispatch {
                command: Some("cargo test".to_owned()),
                suite: None
            }
        );
        let tag = GithubEnv {
            git_ref: Some("refs/tags/v1".to_owned()),
            ..GithubEnv::default()
        };
        let push = json!({"repository": {"default_branch": "main"}});
        let event = Event::parse("schedule", &push, Path::new("e")).unwrap();
        assert_eq!(event.base_branch(&tag), Some("main".to_owned()));
    }

    #[test]
    fn the_repository_must_be_owner_slash_name() {
        let github = GithubEnv {
            repository: Some("o/r/x".to_owned()),
            ..GithubEnv::default()
        };
        assert_eq!(
            github.repository().unwrap_err().to_string(),
            "read GITHUB_REPOSITORY: \"o/r/x\" is not owner/name"
        );
    }
}
