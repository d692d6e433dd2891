//! The state of a run in progress, shared by every phase: configuration, budget and cancel
//! flag, the working tree's snapshot and its journal, the evidence being recorded and the
//! checkpoint.
//!
//! It imports nothing of the phases: phases import it, and the orchestrator (`run`) drives
//! them. Running one recorded command is in `commands`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::evidence::{Evidence, RunResult, Status};
use crate::exit::ExitStatus;
use crate::git::{Journal, Snapshot};
use crate::patch::{self, FileChange};
use crate::report::Reporter;

use super::PipelineError;
use super::checkpoint::{Checkpoint, Stage};
use super::shared::SharedRuns;

/// The state of a run in progress, shared by the phases.
pub(crate) struct Ctx<'a> {
    pub config: &'a Config,
    pub reporter: Reporter,
    pub root: PathBuf,
    pub artifacts: PathBuf,
    pub cancel: &'a AtomicBool,
    pub deadline: Instant,
    pub snapshot: Snapshot,
    /// The snapshot made durable; `None` once the run has ended it.
    pub journal: Option<Journal>,
    /// Whether a command ran since the last full restore: if not, only the files efix wrote
    /// can differ from the snapshot.
    pub commands_since_restore: bool,
    pub evidence: Evidence,
    pub checkpoint: Checkpoint,
    pub command: String,
    pub suites: Vec<String>,
    pub repeat: u32,
    pub dry_run: bool,
    /// Runs shared with the other candidates of a round, when this context proves one.
    pub shared: Option<&'a SharedRuns>,
}

impl Ctx<'_> {
    /// Why the run must stop now, if it must.
    pub(crate) fn stop_reason(&self) -> Option<Status> {
        if self.cancel.load(Ordering::Relaxed) {
            Some(Status::Interrupted)
        } else if Instant::now() >= self.deadline {
            Some(Status::BudgetExhausted)
        } else {
            None
        }
    }

    /// Time left in the run's budget.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Put the working tree back exactly as it was at the start: everything after a command
    /// ran, else only what efix wrote.
    pub(crate) fn restore(&mut self) -> Result<(), PipelineError> {
        let report = if self.commands_since_restore {
            let _span = tracing::debug_span!("restore").entered();
            self.snapshot.restore()?
        } else {
            let _span = tracing::debug_span!("restore_written").entered();
            self.snapshot.restore_written()?
        };
        self.commands_since_restore = false;
        if !report.is_noop() {
            tracing::debug!(?report, "restored the working tree");
        }
        Ok(())
    }

    /// Write a change into the working tree, recording its files in the journal first so a
    /// restore (even after `kill -9`) checks them by content.
    pub(crate) fn write_changes(&mut self, changes: &[FileChange]) -> Result<(), PipelineError> {
        let paths = changes.iter().map(|c| c.path.as_str());
        self.snapshot.note_written(paths.clone());
        if let Some(journal) = self.journal.as_mut() {
            journal.note_written(paths)?;
        }
        patch::write_changes(&self.root, changes)?;
        Ok(())
    }

    /// Write files into the working tree in place (an existing file keeps its inode and
    /// permissions, a new one gets the umask's, as the user's own editor would), recording
    /// them in the journal first so a restore (even after `kill -9`) removes or rewrites
    /// them. Canaries use it: a file efix writes must not differ from one the user wrote.
    pub(crate) fn write_files(&mut self, files: &[(String, String)]) -> Result<(), PipelineError> {
        let paths = files.iter().map(|(p, _)| p.as_str());
        self.snapshot.note_written(paths.clone());
        if let Some(journal) = self.journal.as_mut() {
            journal.note_written(paths)?;
        }
        for (path, text) in files {
            let full = self.root.join(path);
            let io = |what: &str| {
                let what = format!("{what} {}", full.display());
                move |source| crate::patch::PatchError::Io { what, source }
            };
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent).map_err(io("create the directory of"))?;
            }
            std::fs::write(&full, text).map_err(io("write"))?;
        }
        Ok(())
    }

    /// End the journal: the tree is restored, or changed on purpose by a proven fix.
    pub(crate) fn finish_journal(&mut self) -> Result<(), PipelineError> {
        match self.journal.take() {
            Some(journal) => Ok(journal.finish()?),
            None => Ok(()),
        }
    }

    /// Save the checkpoint (evidence so far plus engine answers) after a phase or answer.
    pub(crate) fn save_checkpoint(&mut self, stage: Stage) -> Result<(), PipelineError> {
        self.checkpoint.stage = stage;
        self.checkpoint.evidence = self.evidence.clone();
        self.checkpoint.save(&self.root, &self.artifacts)
    }

    /// Set the result.
    pub(crate) fn conclude(&mut self, status: Status, exit: ExitStatus, reason: impl Into<String>) {
        self.evidence.result = RunResult {
            status,
            exit_code: exit.code(),
            reason: reason.into(),
        };
    }

    /// The result for a stop caused by budget or signal.
    pub(crate) fn conclude_stop(&mut self, status: Status) {
        let reason = match status {
            Status::Interrupted => "efix was interrupted; the working tree was restored and the \
                                    run can be continued with --resume"
                .to_owned(),
            _ => format!(
                "the time budget of {} ran out; the working tree was restored",
                crate::evidence::duration_text(self.evidence.request.timeout_ms)
            ),
        };
        self.conclude(status, ExitStatus::NoProvenFix, reason);
    }
}
