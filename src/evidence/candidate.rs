//! One fix candidate of a round that asked for several (`--candidates K`): the answer, the
//! round it went through in its own scratch copy of the base commit, the commands it ran
//! there, and the verdict of the selection by proof. It records; the choosing is in
//! `pipeline::candidates`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{CommandRecord, Round};

/// One candidate and why it won or lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CandidateRecord {
    /// 1-based position among the round's answers (earlier answers win ties).
    pub number: u32,
    /// Its round as run in the scratch copy: the answer and its diff (`attempts`), each check,
    /// Prevent and Prove, the blocking issues.
    pub round: Round,
    /// The commands its Prevent and Prove ran in the scratch copy (ids continue the run's
    /// numbering at the time the candidates started, so they repeat across candidates).
    pub commands: Vec<CommandRecord>,
    /// Lines added plus lines removed by its change.
    pub lines: u64,
    /// Files its change touches.
    pub files: u64,
    pub verdict: CandidateVerdict,
    /// Why it was not chosen; empty for the winner.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lost: String,
}

/// How a candidate came out of the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CandidateVerdict {
    /// Fully proven and the smallest: applied to the working tree and proven there again.
    Won,
    /// Fully proven, but another proven candidate is smaller (or was proven first with
    /// `--first-proven`).
    Proven,
    /// Its proof passed with a check that could not be judged or that flags it for review:
    /// never chosen over a fully proven one, never chosen at all.
    Weakened,
    /// A check refused it (the contract, a policy check, Prevent or Prove).
    Refused,
    /// The engine answered `NO_CHANGE`.
    NoChange,
    /// Its proof could not finish (the budget ran out, the run was interrupted, or another
    /// candidate was proven first with `--first-proven`): not judged, never proven.
    NotJudged,
}

impl CandidateVerdict {
    /// The word shown in tables.
    pub fn label(self) -> &'static str {
        match self {
            CandidateVerdict::Won => "won",
            CandidateVerdict::Proven => "proven",
            CandidateVerdict::Weakened => "weakened",
            CandidateVerdict::Refused => "refused",
            CandidateVerdict::NoChange => "no change",
            CandidateVerdict::NotJudged => "not judged",
        }
    }
}
