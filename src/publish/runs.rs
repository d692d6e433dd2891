//! What `efix triage` reads from GitHub: the logs of a workflow run's failed jobs, and the
//! branches of open efix pull requests (a cause whose command already has one is skipped).
//! Same client, token rules and redaction as `efix publish`; read-only (`actions: read`,
//! `pull-requests: read`).

use serde_json::Value;

use super::PublishError;
use super::api::Op;
use super::client::Client;
use super::event::GithubEnv;
use super::github::Github;
use crate::runner::Secret;

/// Jobs and pull requests are listed this many per page (GitHub's maximum).
const PER_PAGE: usize = 100;
/// At most this many pages are read of any list (10,000 jobs or pull requests).
const MAX_PAGES: usize = 100;

/// The log of one failed job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLog {
    pub id: u64,
    pub name: String,
    pub log: String,
}

/// A read-only connection to one repository.
pub struct Runs {
    client: Client,
    repository: String,
}

impl Runs {
    /// Connect to `GITHUB_REPOSITORY` on `GITHUB_API_URL` with `token`; `secrets` are
    /// redacted from every answer besides the token.
    pub fn connect(
        env: &GithubEnv,
        token: String,
        secrets: &[Secret],
    ) -> Result<Runs, PublishError> {
        let repository = env.repository()?.to_owned();
        Ok(Runs {
            client: Client::new(&env.api_url, token, secrets)?,
            repository,
        })
    }

    fn github(&mut self) -> Github<'_> {
        Github {
            transport: &mut self.client,
            repository: self.repository.clone(),
        }
    }

    /// Call `each` with the log of every job of run `run_id` (its latest attempt) whose
    /// conclusion is `failure`, one job at a time.
    pub fn failed_job_logs(
        &mut self,
        run_id: u64,
        each: &mut dyn FnMut(JobLog),
    ) -> Result<usize, PublishError> {
        let mut failed = Vec::new();
        for page in 1..=MAX_PAGES {
            let mut github = self.github();
            let request = github
                .request(Op::ListJobs, &[&run_id.to_string()])
                .query("filter", "latest")
                .query("per_page", &PER_PAGE.to_string())
                .query("page", &page.to_string());
            let answer = github.call(request)?;
            let jobs = answer
                .get("jobs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for job in &jobs {
                if job.get("conclusion").and_then(Value::as_str) == Some("failure")
                    && let Some(id) = job.get("id").and_then(Value::as_u64)
                {
                    let name = job
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    failed.push((id, name));
                }
            }
            if jobs.len() < PER_PAGE {
                break;
            }
        }
        let count = failed.len();
        for (id, name) in failed {
            let mut github = self.github();
            let request = github.request(Op::DownloadJobLogs, &[&id.to_string()]);
            let log = match github.call(request)? {
                Value::String(text) => text,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            each(JobLog { id, name, log });
        }
        Ok(count)
    }

    /// The head branches of the repository's open pull requests that start with `efix/`.
    pub fn open_efix_branches(&mut self) -> Result<Vec<String>, PublishError> {
        let mut branches = Vec::new();
        for page in 1..=MAX_PAGES {
            let mut github = self.github();
            let request = github
                .request(Op::ListPulls, &[])
                .query("state", "open")
                .query("per_page", &PER_PAGE.to_string())
                .query("page", &page.to_string());
            let answer = github.call(request)?;
            let pulls = answer.as_array().cloned().unwrap_or_default();
            for pull in &pulls {
                let own = pull.pointer("/head/repo/full_name").and_then(Value::as_str)
                    == Some(self.repository.as_str());
                if let Some(branch) = pull.pointer("/head/ref").and_then(Value::as_str)
                    && own
                    && branch.starts_with("efix/")
                {
                    branches.push(branch.to_owned());
                }
            }
            if pulls.len() < PER_PAGE {
                break;
            }
        }
        Ok(branches)
    }
}

/// Whether `branch` is the efix branch of `command` (`efix/<issue or run>-<hash>`, as
/// `efix publish` names it).
pub fn branch_is_for(branch: &str, command: &str) -> bool {
    let name = super::deliver::branch_name("", command);
    let hash = name.rsplit('-').next().unwrap_or_default();
    branch.starts_with("efix/") && branch.ends_with(&format!("-{hash}"))
}
