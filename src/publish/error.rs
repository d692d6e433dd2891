//! [`PublishError`]: what can stop `efix publish` or the trigger checks of
//! `efix run --from-event`, worded for the maintainer who has to act on it.

use std::path::PathBuf;

/// Errors of the GitHub delivery. Every message says what to do next; none of them carries a
/// credential (messages built from GitHub's answers are redacted before they get here).
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// A GitHub variable efix needs is not set (outside Actions, or a step without it); the
    /// user sets it or passes the matching flag.
    #[error("read {name}: it is not set; {remedy}")]
    MissingEnv {
        name: &'static str,
        remedy: &'static str,
    },
    /// A GitHub variable is set to something unusable.
    #[error("read {name}: {message}")]
    BadEnv { name: &'static str, message: String },
    /// The token variable is unset or empty; the user passes a token (the action passes
    /// `github-token`).
    #[error(
        "read the GitHub token from {name}: it is not set; pass a token with contents, \
         pull-requests and issues write permission in {name} (the action passes its \
         `github-token` input), or name another variable with --token-env"
    )]
    NoToken { name: String },
    /// The event payload at `GITHUB_EVENT_PATH` cannot be read or is not the event it claims.
    #[error("read the {event} event payload {}: {message}", path.display())]
    Event {
        event: String,
        path: PathBuf,
        message: String,
    },
    /// Neither the event nor the command line names a command to run.
    #[error("find the command to run: {message}")]
    NoCommand { message: String },
    /// What `efix publish` was asked to publish is not publishable as it stands (a run still
    /// in progress, no base commit, no branch name); the message says what is missing.
    #[error("publish {what}: {message}")]
    Unpublishable { what: String, message: String },
    /// The HTTP client could not be built (TLS set-up).
    #[error("set up the HTTP client: {message}")]
    Client { message: String },
    /// The request never got an HTTP answer (DNS, connection, TLS, timeout).
    #[error("{what} ({method} {path}): {message}")]
    Transport {
        what: &'static str,
        method: &'static str,
        path: String,
        message: String,
    },
    /// GitHub answered with an error status; `remedy` says what to change (a permission, a
    /// repository setting, a branch protection rule).
    #[error("{what} ({method} {path}): GitHub answered {status}: {message}; {remedy}")]
    Api {
        what: &'static str,
        method: &'static str,
        path: String,
        status: u16,
        message: String,
        remedy: String,
    },
    /// GitHub answered 2xx with a body that lacks a field efix needs.
    #[error("{what} ({method} {path}): the answer has no {field}")]
    Answer {
        what: &'static str,
        method: &'static str,
        path: String,
        field: &'static str,
    },
    /// The recorded change could not be rebuilt from the local repository.
    #[error("rebuild the recorded change")]
    Git(#[from] crate::git::GitError),
    /// The recorded patch could not be re-applied to the recorded base.
    #[error("re-apply the recorded patch")]
    Patch(#[from] crate::patch::PatchError),
    /// Scratch space for the rebuilt change could not be made.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}
