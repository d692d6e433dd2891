//! `efix verify ARTIFACTS_DIR`: re-run the recorded commands on a scratch copy of the
//! repository at the recorded base (plus the recorded patch where the run applied it) and say,
//! for each recorded outcome, whether it still holds. The repository's lock is held meanwhile,
//! so no run changes it under the copy.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::evidence::{CommandRecord, Evidence, Purpose, SCHEMA_VERSION};
use crate::git::Repo;
use crate::patch::{self, Mode, PatchOutcome};
use crate::report::Reporter;
use crate::runner::{self, CommandSpec};
use crate::testreport::{TestReport, TestStatus};

use super::{PipelineError, durable, prevent, prove};

/// One recorded outcome and whether it held again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Claim {
    /// Id of the recorded command.
    pub command_id: usize,
    pub command: String,
    /// The source state it ran on: `base`, `base + test changes`, `base + patch`.
    pub state: String,
    pub recorded: String,
    pub observed: String,
    pub holds: bool,
}

/// The result of `efix verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct VerifyReport {
    pub artifacts: String,
    pub base_commit: Option<String>,
    pub claims: Vec<Claim>,
    /// Published artifacts (`patch.diff`, `pr-title.txt`, `pr-body.md`) that are not what the
    /// evidence renders; any entry means the directory is not what the run wrote.
    pub artifact_mismatches: Vec<super::ArtifactMismatch>,
    /// Whether every claim held and every published artifact matches the evidence.
    pub holds: bool,
}

/// A source state, the purposes of the commands recorded on it, and what to write first.
type StateGroup<'a> = (
    &'static str,
    &'static [Purpose],
    Option<&'a [patch::FileChange]>,
);

/// Read the evidence of an artifacts directory.
pub fn read_evidence(artifacts: &Path) -> Result<Evidence, PipelineError> {
    let path = artifacts.join("evidence.json");
    let text = std::fs::read_to_string(&path).map_err(|err| PipelineError::Evidence {
        path: path.clone(),
        message: format!("{err}; give the artifacts directory of a finished efix run"),
    })?;
    let evidence: Evidence =
        serde_json::from_str(&text).map_err(|err| PipelineError::Evidence {
            path: path.clone(),
            message: err.to_string(),
        })?;
    if evidence.schema_version != SCHEMA_VERSION {
        return Err(PipelineError::Evidence {
            path,
            message: format!(
                "schema version {} is not supported (this efix reads {SCHEMA_VERSION})",
                evidence.schema_version
            ),
        });
    }
    Ok(evidence)
}

/// Re-run the recorded commands and compare.
pub fn verify(
    artifacts: &Path,
    evidence: &Evidence,
    config: &Config,
    reporter: Reporter,
) -> Result<VerifyReport, PipelineError> {
    let repo = Repo::open(Path::new(&evidence.repo.root))?;
    // No run may move the repository's HEAD or objects while the copy is made and checked.
    let _lock = durable::lock(&repo)?;
    let scratch = tempfile::Builder::new()
        .prefix("efix-verify-")
        .tempdir()
        .map_err(|source| PipelineError::Artifacts {
            what: "create a scratch directory".to_owned(),
            source,
        })?;
    let copy_root: PathBuf = scratch.path().join("repo");
    repo.copy_to(&copy_root, evidence.repo.base_commit.as_deref())?;
    let copy = Repo::open(&copy_root)?;
    let snapshot = copy.snapshot()?;
    let changes = match &evidence.fix {
        Some(fix) => {
            let report = patch::process(&copy_root, &fix.diff, &config.patch, Mode::Check)?;
            if report.outcome != PatchOutcome::Applied {
                return Err(PipelineError::Evidence {
                    path: artifacts.join("patch.diff"),
                    message: "the recorded patch no longer applies to the recorded base".to_owned(),
                });
            }
            report.changes
        }
        None => Vec::new(),
    };
    let request = &evidence.request;
    // The derived suite the proof used: the chosen form, when forms were tried.
    let chosen = evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.suite_choice.as_ref())
        .map_or(request.derived_suite.as_ref(), |c| c.chosen.as_ref());
    let suites: Vec<String> = request.suites.iter().chain(chosen).cloned().collect();
    let commands = prevent::commands_in_play(&request.command, &suites, &config.patch.commands);
    let split = crate::integrity::guard::split(&changes, &commands);
    let mut claims = Vec::new();
    let groups: [StateGroup<'_>; 3] = [
        (
            "base",
            &[Purpose::Reproduction, Purpose::SuiteBaseline],
            None,
        ),
        (
            "base + test changes",
            &[
                Purpose::TestsOnlyReproduction,
                Purpose::TestsOnlySuite,
                Purpose::RelatedBaseline,
            ],
            Some(&split.tests_only),
        ),
        (
            "base + patch",
            &[
                Purpose::FixedReproduction,
                Purpose::FixedSuite,
                Purpose::RelatedFixed,
            ],
            Some(&changes),
        ),
    ];
    let fix_round = evidence.fix.as_ref().map(|f| f.round);
    for (state, purposes, write) in groups {
        let records: Vec<&CommandRecord> = evidence
            .commands
            .iter()
            .filter(|r| purposes.contains(&r.purpose) && r.outcome.is_some())
            .filter(|r| r.round.is_none() || r.round == fix_round)
            .collect();
        if records.is_empty() {
            continue;
        }
        reporter.phase(&format!("verify: {state}"));
        for record in records {
            snapshot.restore()?;
            if let Some(write) = write {
                patch::write_changes(&copy_root, write)?;
            }
            let claim = rerun(record, state, &copy_root, config)?;
            reporter.info(&format!(
                "#{} `{}`: {} (recorded {}, now {})",
                claim.command_id,
                claim.command,
                if claim.holds {
                    "holds"
                } else {
                    "DOES NOT HOLD"
                },
                claim.recorded,
                claim.observed
            ));
            claims.push(claim);
        }
        reporter.end_phase();
    }
    snapshot.restore()?;
    let artifact_mismatches = super::mismatches(artifacts, evidence);
    for mismatch in &artifact_mismatches {
        reporter.warn(&format!(
            "{}: {} (edited after the run?)",
            mismatch.file, mismatch.problem
        ));
    }
    let holds =
        !claims.is_empty() && claims.iter().all(|c| c.holds) && artifact_mismatches.is_empty();
    Ok(VerifyReport {
        artifacts: artifacts.display().to_string(),
        base_commit: evidence.repo.base_commit.clone(),
        claims,
        artifact_mismatches,
        holds,
    })
}

fn rerun(
    record: &CommandRecord,
    state: &str,
    root: &Path,
    config: &Config,
) -> Result<Claim, PipelineError> {
    let recorded = describe(record.succeeded(), record.tests.as_ref());
    let claim = |observed: String, holds: bool| Claim {
        command_id: record.id,
        command: record.command.clone(),
        state: state.to_owned(),
        recorded: recorded.clone(),
        observed,
        holds,
    };
    let argv = match crate::policy::command::check(&record.command, &config.allow) {
        Ok(argv) => argv,
        Err(refusal) => return Ok(claim(format!("refused: {}", refusal.message), false)),
    };
    let spec = CommandSpec {
        argv,
        cwd: root.to_owned(),
        timeout: config.command_timeout,
        access: runner::Access::command(config.network),
    };
    let before_change = matches!(
        record.purpose,
        crate::evidence::Purpose::Reproduction | crate::evidence::Purpose::SuiteBaseline
    );
    let run = crate::integrity::channel::run(
        &spec,
        &config.runner,
        &std::sync::atomic::AtomicBool::new(false),
        before_change,
        // A run recorded without its report (console only, or as written) is re-run the same way.
        record
            .channel
            .as_ref()
            .is_none_or(|c| c.status == crate::integrity::channel::ChannelStatus::Unsupported),
    )?;
    let rerun = CommandRecord {
        outcome: Some(run.outcome),
        tests: run.tests,
        channel: run.channel,
        ..record.clone()
    };
    let observed = describe(rerun.succeeded(), rerun.tests.as_ref());
    let same_class = match record.purpose {
        // Proof runs claim a pass in the strict sense.
        Purpose::FixedReproduction | Purpose::FixedSuite | Purpose::RelatedFixed => {
            prove::passes(record) == prove::passes(&rerun)
        }
        _ => record.succeeded() == rerun.succeeded(),
    };
    let holds = same_class && failing(record.tests.as_ref()) == failing(rerun.tests.as_ref());
    Ok(claim(observed, holds))
}

fn failing(report: Option<&TestReport>) -> Vec<String> {
    report
        .map(|r| {
            let mut names: Vec<String> = r
                .tests
                .iter()
                .filter(|t| t.status == TestStatus::Failed)
                .map(|t| t.name.clone())
                .collect();
            names.sort();
            names
        })
        .unwrap_or_default()
}

fn describe(succeeded: bool, tests: Option<&TestReport>) -> String {
    let status = if succeeded { "passed" } else { "failed" };
    match tests {
        Some(t) => format!("{status} ({})", t.counts_text()),
        None => status.to_owned(),
    }
}
