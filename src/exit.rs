//! The process exit codes of ARCHITECTURE §3, in one place.
//!
//! Outcomes are values: "not reproduced" or "refused by policy" are exit codes, not errors.

/// What efix tells its caller through the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// `0`: fixed and proven (or, for other commands, success).
    Success,
    /// `1`: no proven fix; failure evidence is still written.
    NoProvenFix,
    /// `2`: usage or configuration error.
    Usage,
    /// `3`: the reproduction command did not fail.
    NotReproduced,
    /// `4`: refused by policy before anything ran.
    PolicyRefused,
    /// `5`: a fix passed, but the claim is weaker than "fixed and proven": a check could not
    /// be judged, or the change is flagged for review.
    NeedsReview,
    /// Any other code: the sandbox helper's own status when it could not execute a command
    /// (the parent efix reads the reason from its report; users never see this).
    Raw(u8),
}

impl ExitStatus {
    /// The numeric code the process exits with.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::NoProvenFix => 1,
            ExitStatus::Usage => 2,
            ExitStatus::NotReproduced => 3,
            ExitStatus::PolicyRefused => 4,
            ExitStatus::NeedsReview => 5,
            ExitStatus::Raw(code) => code,
        }
    }
}
