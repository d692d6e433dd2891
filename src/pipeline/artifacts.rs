//! The artifacts of a run (ARCHITECTURE §4): `evidence.json`, `evidence.md`, `patch.diff`,
//! `pr-title.txt`, `pr-body.md` and `run.json` (the summary also printed on stdout).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::evidence::{self, Evidence, Status};
use crate::nofollow::{Dir, UnsafePath};

use super::PipelineError;

/// Default artifacts directory, under the repository root.
pub const DEFAULT_DIR: &str = "efix-artifacts";
/// The files every run writes.
pub const ARTIFACT_FILES: &[&str] = &[
    "evidence.json",
    "evidence.md",
    "patch.diff",
    "pr-title.txt",
    "pr-body.md",
    "run.json",
];

/// The run summary: `run.json`, and efix run's stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunSummary {
    pub status: Status,
    pub exit_code: u8,
    pub reason: String,
    /// Short human form of the status.
    pub status_text: String,
    pub artifacts: String,
    pub pr_body: String,
    pub evidence: String,
    pub rounds: u32,
    /// Files the proven fix changes (empty without one).
    pub files_changed: Vec<String>,
    /// Whether the fix was left applied in the working tree.
    pub left_applied: bool,
}

/// Refuse an artifacts directory inside the repository that is (or passes through) a
/// symbolic link, or that git tracks: a repository that commits `efix-artifacts` (as a link
/// pointing elsewhere, or as files) would have efix write where the repository says, or mix
/// its records with the repository's. Nothing is created or written before this check.
pub(crate) fn refuse_unsafe(
    repo: &crate::git::Repo,
    root: &Path,
    dir: &Path,
) -> Result<(), PipelineError> {
    let Ok(relative) = dir.strip_prefix(root) else {
        return Ok(());
    };
    match Dir::open(root, dir, false) {
        Ok(_) => {}
        Err(error) if error.source.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(unsafe_artifacts(error)),
    }
    let relative = relative.to_string_lossy();
    if relative.is_empty() {
        return Err(PipelineError::UnsafeArtifacts {
            path: dir.to_owned(),
            reason: "is the repository root; pass --artifacts DIR naming a directory of its \
                     own"
            .to_owned(),
        });
    }
    let prefix = format!("{relative}/");
    let tracked = repo.tracked_files()?;
    if let Some(file) = tracked
        .iter()
        .find(|path| **path == relative || path.starts_with(&prefix))
    {
        return Err(PipelineError::UnsafeArtifacts {
            path: dir.to_owned(),
            reason: format!(
                "is tracked by git ({file}); efix's artifacts are never part of the \
                 repository: remove them from git, or pass --artifacts DIR"
            ),
        });
    }
    Ok(())
}

/// Open the artifacts directory without following links below the repository root.
pub(crate) fn open_dir(root: &Path, dir: &Path, create: bool) -> Result<Dir, PipelineError> {
    Dir::open(root, dir, create).map_err(unsafe_artifacts)
}

fn unsafe_artifacts(error: UnsafePath) -> PipelineError {
    PipelineError::UnsafeArtifacts {
        path: error.path,
        reason: error.reason,
    }
}

/// Create the artifacts directory and make git ignore it, so the run's own files never make
/// the tree dirty and are never removed by a restore.
pub(crate) fn prepare_dir(root: &Path, dir: &Path) -> Result<(), PipelineError> {
    let opened = open_dir(root, dir, true)?;
    if !opened.exists(".gitignore") {
        opened
            .write_atomic(
                ".gitignore",
                b"# Written by efix: run artifacts are never committed.\n*\n",
            )
            .map_err(unsafe_artifacts)?;
    }
    Ok(())
}

/// Write `name` in the artifacts directory through a temporary sibling and a rename, never
/// through a link.
pub(crate) fn write_atomic(
    root: &Path,
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<(), PipelineError> {
    open_dir(root, dir, false)?
        .write_atomic(name, bytes)
        .map_err(unsafe_artifacts)
}

/// Write every artifact of `evidence` into `dir`; returns the summary.
pub(crate) fn write_all(
    root: &Path,
    dir: &Path,
    evidence: &Evidence,
) -> Result<RunSummary, PipelineError> {
    let json = serde_json::to_string_pretty(evidence).map_err(|err| PipelineError::Artifacts {
        what: "serialize the evidence".to_owned(),
        source: std::io::Error::other(err),
    })?;
    let opened = open_dir(root, dir, false)?;
    let write =
        |name: &str, bytes: &[u8]| opened.write_atomic(name, bytes).map_err(unsafe_artifacts);
    write("evidence.json", format!("{json}\n").as_bytes())?;
    write(
        "evidence.md",
        evidence::render_evidence_md(evidence).as_bytes(),
    )?;
    for (name, text) in rendered(evidence) {
        write(name, text.as_bytes())?;
    }
    let body = dir.join("pr-body.md");
    let summary = summary(dir, evidence, &body);
    let text = serde_json::to_string_pretty(&summary).map_err(|err| PipelineError::Artifacts {
        what: "serialize the summary".to_owned(),
        source: std::io::Error::other(err),
    })?;
    write("run.json", format!("{text}\n").as_bytes())?;
    Ok(summary)
}

/// The artifacts that carry what gets published, as the evidence renders them: `patch.diff`
/// (the proven change), `pr-title.txt` and `pr-body.md`.
pub fn rendered(evidence: &Evidence) -> [(&'static str, String); 3] {
    let diff = evidence
        .fix
        .as_ref()
        .map(|f| f.diff.clone())
        .unwrap_or_default();
    [
        ("patch.diff", diff),
        (
            "pr-title.txt",
            format!("{}\n", evidence::render_pr_title(evidence)),
        ),
        ("pr-body.md", evidence::render_pr_body(evidence)),
    ]
}

/// A published artifact that is not what the evidence renders (edited after the run, or
/// written by another efix version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ArtifactMismatch {
    /// The file name inside the artifacts directory.
    pub file: String,
    /// What is wrong: `missing`, `unreadable: ...` or `differs from what evidence.json renders`.
    pub problem: String,
}

/// Compare the published artifacts of `dir` with what `evidence` renders; empty when they all
/// match. Publishing and `efix verify` both refuse a directory where this is not empty, since
/// what reaches GitHub must be exactly what the evidence proves.
pub fn mismatches(dir: &Path, evidence: &Evidence) -> Vec<ArtifactMismatch> {
    rendered(evidence)
        .into_iter()
        .filter_map(|(name, expected)| {
            let problem = match std::fs::read(dir.join(name)) {
                Ok(bytes) if bytes == expected.as_bytes() => return None,
                Ok(_) => "differs from what evidence.json renders".to_owned(),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => "missing".to_owned(),
                Err(err) => format!("unreadable: {err}"),
            };
            Some(ArtifactMismatch {
                file: name.to_owned(),
                problem,
            })
        })
        .collect()
}

fn summary(dir: &Path, evidence: &Evidence, body: &Path) -> RunSummary {
    let status_text = match evidence.result.status {
        Status::Fixed => "fixed and proven",
        Status::FixedReproductionOnly => "fixed and proven by the reproduction only",
        Status::FixedNotJudged => "fixed, not fully proven (a check could not be judged)",
        Status::FixedFlagged => "fixed, flagged for review",
        Status::NoProvenFix => "no proven fix",
        Status::NoChange => "no change proposed",
        Status::NotReproduced => "the failure did not reproduce",
        Status::Flaky => "flaky reproduction",
        Status::PolicyRefused => "refused by policy",
        Status::BudgetExhausted => "budget exhausted",
        Status::Interrupted => "interrupted",
        Status::InProgress => "in progress",
    };
    let display = |p: PathBuf| p.display().to_string();
    RunSummary {
        status: evidence.result.status,
        exit_code: evidence.result.exit_code,
        reason: evidence.result.reason.clone(),
        status_text: status_text.to_owned(),
        artifacts: dir.display().to_string(),
        pr_body: body.display().to_string(),
        evidence: display(dir.join("evidence.json")),
        rounds: u32::try_from(evidence.rounds.len()).unwrap_or(u32::MAX),
        files_changed: evidence
            .fix
            .as_ref()
            .map(|f| f.files.clone())
            .unwrap_or_default(),
        left_applied: evidence.fix.as_ref().is_some_and(|f| f.left_applied),
    }
}

/// The current UTC time as RFC 3339 with seconds.
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Format seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (civil-from-days, proleptic
/// Gregorian), to avoid a date crate for one timestamp.
fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_651_200), "2026-11-26T00:00:00Z");
    }
}
