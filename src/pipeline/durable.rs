//! Nothing lost across processes: the working tree's lock (one `run`, `verify` or `restore`
//! at a time), the check for a run that died without restoring its tree, and `efix restore`,
//! which puts such a tree back from the run's journal.

use std::path::Path;

use serde::Serialize;

use crate::git::{GitError, Journal, Repo, RestoreReport, RunLock, RunRecord};

use super::PipelineError;
use super::artifacts::now_rfc3339;

/// What `efix restore` did: printed as JSON on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RestoreSummary {
    /// Whether an interrupted run's tree was put back (false: there was none).
    pub restored: bool,
    /// The working tree's root.
    pub repo: String,
    /// The run that left the tree changed.
    pub interrupted_run: Option<RunRecord>,
    /// What the restore changed.
    pub changes: Option<RestoreReport>,
    /// The scratch directory of a round of candidates the run left behind, removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch_removed: Option<String>,
}

/// Take the working tree's lock, or fail with [`PipelineError::Busy`] naming its holder.
pub(crate) fn lock(repo: &Repo) -> Result<RunLock, PipelineError> {
    repo.lock(&now_rfc3339()).map_err(|err| match err {
        busy @ GitError::Busy { .. } => PipelineError::Busy(busy),
        other => PipelineError::Git(other),
    })
}

/// With the lock held: refuse to start over the changes of a run that died ([`PipelineError::
/// Unfinished`]), or, when `restore_first` (a resumed run), put its tree back and say what
/// was put back.
pub(crate) fn settle_unfinished(
    repo: &Repo,
    restore_first: bool,
) -> Result<Option<(RunRecord, RestoreReport)>, PipelineError> {
    let Some(unfinished) = Journal::unfinished(repo)? else {
        return Ok(None);
    };
    if !restore_first {
        return Err(PipelineError::Unfinished {
            root: repo.root.clone(),
            run: Box::new(unfinished.run),
        });
    }
    Ok(Some(unfinished.restore()?))
}

/// `efix restore`: with the lock held, put back the tree an interrupted run left changed.
pub fn restore(repo: &Path) -> Result<RestoreSummary, PipelineError> {
    let repo = Repo::open(repo)?;
    let _lock = lock(&repo)?;
    let root = repo.root.display().to_string();
    let scratch_removed = super::scratch::remove_left(&repo)?;
    Ok(match settle_unfinished(&repo, true)? {
        Some((run, changes)) => RestoreSummary {
            restored: true,
            repo: root,
            interrupted_run: Some(run),
            changes: Some(changes),
            scratch_removed,
        },
        None => RestoreSummary {
            restored: false,
            repo: root,
            interrupted_run: None,
            changes: None,
            scratch_removed,
        },
    })
}

/// One line for people: what a restore of an interrupted run did.
pub fn describe(run: &RunRecord, changes: &RestoreReport) -> String {
    let mut parts = Vec::new();
    for (count, what) in [
        (changes.rewritten.len(), "rewritten"),
        (changes.recreated.len(), "recreated"),
        (changes.removed.len(), "removed"),
        (changes.modes_restored.len(), "with permissions put back"),
    ] {
        if count > 0 {
            parts.push(format!(
                "{count} file{} {what}",
                if count == 1 { "" } else { "s" }
            ));
        }
    }
    for (done, what) in [
        (changes.index_restored, "the index"),
        (changes.head_restored, "HEAD"),
        (changes.exclude_restored, ".git/info/exclude"),
    ] {
        if done {
            parts.push(format!("{what} put back"));
        }
    }
    let what = if parts.is_empty() {
        "nothing had changed".to_owned()
    } else {
        parts.join(", ")
    };
    format!(
        "restored the working tree left by the interrupted efix run (pid {}, started {}): {what}",
        run.pid, run.started_at
    )
}
