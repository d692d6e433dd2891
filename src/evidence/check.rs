//! One check of a round and what it says about the claim: passed, failed, or passed without
//! vouching for the change (closed by default: not judged, or flagged for a person's review).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One check and its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CheckRecord {
    /// Stable id, e.g. `patch.apply`, `diff.max-files`, `prevent.guard`, `prove.reproduction`.
    pub id: String,
    pub passed: bool,
    /// What was measured, e.g. `2 files (limit 8)`.
    pub detail: String,
    /// Set when the check passed without vouching for the change: it could not be built or
    /// judged, or it found something a person must look at. Closed by default: a run whose
    /// proven round holds such a check is never `fixed`; its status says which and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weakens: Option<Weakness>,
}

/// How a passing check leaves the claim weaker than "fixed and proven".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Weakness {
    /// The change reads something a cheat could use to behave one way under the tests (the
    /// process's arguments, environment, stack, ...): legitimate uses exist, so it is not
    /// refused, but a person must review it (status `fixed-flagged`).
    Flagged,
    /// The check did not run or its result could not be judged (a canary not built, a
    /// target that does not pass alone): the proof is missing a part (status
    /// `fixed-not-judged`).
    NotJudged,
}

impl CheckRecord {
    /// A check that passed and vouches for the change.
    pub fn passed(id: &str, detail: impl Into<String>) -> Self {
        CheckRecord {
            id: id.to_owned(),
            passed: true,
            detail: detail.into(),
            weakens: None,
        }
    }

    /// A check that could not be built or judged: it blocks nothing, and the claim says so.
    pub fn not_judged(id: &str, detail: impl Into<String>) -> Self {
        CheckRecord {
            weakens: Some(Weakness::NotJudged),
            ..CheckRecord::passed(id, detail)
        }
    }

    /// A check that flags the change for a person's review without refusing it.
    pub fn flagged(id: &str, detail: impl Into<String>) -> Self {
        CheckRecord {
            weakens: Some(Weakness::Flagged),
            ..CheckRecord::passed(id, detail)
        }
    }
}
