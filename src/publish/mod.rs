//! GitHub delivery, through the REST API only: the trigger checks of `efix run --from-event`
//! (who may start a run, with which command) and `efix publish` (a proven run becomes a signed
//! commit, a branch, a pull request and a comment; a failed run becomes a comment).
//!
//! It never runs git or any other process and never writes a credential anywhere: the token
//! lives in memory and goes out only as the `Authorization` header. It reads the `GITHUB_*`
//! variables from the environment snapshot, never from `std::env`.
//!
//! Layout: `event` (the Actions context and payloads), `gate` (trigger checks), `api` (the
//! operations and requests), `client` (HTTP, retries), `retry` and `remedy` (when to retry,
//! what to tell the user), `github` (calls with errors turned into remedies), `commit` and
//! `pull` (the Git Data API and pull requests), `deliver` (the publish flow), `dry_run`,
//! `runs` (what `efix triage` reads: failed jobs' logs, open efix pull requests).

mod api;
mod client;
mod commit;
mod deliver;
mod dry_run;
mod error;
pub mod event;
mod gate;
mod github;
mod pull;
mod remedy;
mod retry;
mod runs;

pub use deliver::{Options, Report};
pub use error::PublishError;
pub use event::{Event, GithubEnv};
pub use gate::{Inputs, Refusal, Verdict};
pub use pull::{Comment, PullRequest};
pub use runs::{JobLog, Runs, branch_is_for};

use crate::config::Config;
use crate::evidence::Evidence;
use crate::report::Reporter;

/// How `efix publish` and the trigger checks reach GitHub.
pub enum Connection {
    /// Send requests with this token.
    Token(String),
    /// Send nothing; record the requests (`--dry-run`).
    DryRun,
}

/// `efix publish`: publish the run recorded in `evidence` (`evidence_json` is the file's
/// bytes, hashed into the commit trailer).
#[expect(
    clippy::too_many_arguments,
    reason = "each argument is an independent input of one command"
)]
pub fn publish(
    options: &Options,
    evidence: &Evidence,
    evidence_json: &[u8],
    config: &Config,
    env: &GithubEnv,
    event: Option<&Event>,
    connection: Connection,
    reporter: &Reporter,
) -> Result<Report, PublishError> {
    let mut recorder = dry_run::DryRun::default();
    let mut client = match connection {
        Connection::Token(token) => Some(client::Client::new(
            &env.api_url,
            token,
            &config.runner.secrets,
        )?),
        Connection::DryRun => None,
    };
    let transport: &mut dyn api::Transport = match client.as_mut() {
        Some(client) => client,
        None => &mut recorder,
    };
    let mut report = deliver::publish(
        options,
        evidence,
        evidence_json,
        &config.patch,
        env,
        event,
        transport,
        reporter,
    )?;
    if client.is_none() {
        report.dry_run = true;
        report.requests = recorder.requests;
    }
    Ok(report)
}

/// The trigger checks of `efix run --from-event`. `token` is needed for comments and for a
/// `workflow_run` whose command must be looked up; an accepted comment gets an `eyes`
/// reaction and a refused human gets a comment saying why (a failure to post either is only
/// a warning: the verdict stands).
pub fn check_trigger(
    event: &Event,
    inputs: &Inputs<'_>,
    env: &GithubEnv,
    token: Option<String>,
    config: &Config,
    reporter: &Reporter,
) -> Result<Verdict, PublishError> {
    let mut client = match token {
        Some(token) => Some(client::Client::new(
            &env.api_url,
            token,
            &config.runner.secrets,
        )?),
        None => None,
    };
    let repository = match (&client, env.repository()) {
        (Some(_), Ok(repository)) => repository.to_owned(),
        (Some(_), Err(err)) => return Err(err),
        (None, _) => String::new(),
    };
    let mut github = client.as_mut().map(|client| github::Github {
        transport: client as &mut dyn api::Transport,
        repository: repository.clone(),
    });
    let verdict = gate::check(event, inputs, github.as_mut())?;
    if let Some(github) = github.as_mut() {
        let posted = match &verdict {
            Verdict::Run {
                acknowledge: Some(comment),
                ..
            } => gate::acknowledge(github, *comment),
            Verdict::Refuse(Refusal {
                reply: Some((issue, text)),
                ..
            }) => gate::reply(github, *issue, text),
            _ => Ok(()),
        };
        if let Err(err) = posted {
            reporter.warn(&format!("could not answer on GitHub: {err}"));
        }
    }
    Ok(verdict)
}
