//! The patch engine's public data: policy, mode, outcome, per-file and per-hunk reports, the
//! error type. No logic beyond defaults lives here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::policy::Issue;

/// Errors that stop the patch engine from producing a [`PatchReport`] (I/O only; everything
/// wrong with the model's output is an [`Issue`] in the report).
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// Reading or writing a file under the repository failed; the caller should report it and
    /// stop, since the working tree may be unreadable or full.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A protected or allow glob in the policy does not compile; the caller should fix the
    /// configuration (`paths.protected`, `paths.allow`, `paths.allow-harness`).
    #[error("invalid path glob {glob:?}")]
    Glob {
        glob: String,
        #[source]
        source: globset::Error,
    },
}

/// Limits and path rules a patch must satisfy; resolved from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchPolicy {
    /// Globs no patch may touch (default `.github/workflows/**`, `.efix.yml`).
    pub protected: Vec<String>,
    /// When non-empty, only paths matching one of these globs may be touched.
    pub allow: Vec<String>,
    /// Whether a patch may delete files.
    pub allow_delete: bool,
    /// Maximum number of files changed.
    pub max_files: usize,
    /// Maximum number of changed lines (added plus removed).
    pub max_loc: usize,
    /// Globs of test-harness files a patch may change all the same (`paths.allow-harness`);
    /// every other harness change is `check.test-harness`.
    pub allow_harness: Vec<String>,
    /// The commands efix runs (the reproduction and the suites): the files that define them
    /// (`Makefile` for `make test`) are harness files too.
    pub commands: Vec<String>,
    /// Configured secrets: a change that adds one of their values (in any encoding) is
    /// refused, like a change that adds a provider token (`check.secret-in-change`).
    pub secrets: Vec<crate::runner::Secret>,
    /// What the failing tests expect (their inputs and expected literals), read from the
    /// reproduction's failing tests: non-test code that maps those inputs to those values is
    /// `check.special-case`. Empty outside a run.
    pub expectations: Vec<crate::integrity::special_case::Expectation>,
}

/// Default maximum number of files one patch may change.
pub const DEFAULT_MAX_FILES: usize = 8;
/// Default maximum number of changed lines (added plus removed) in one patch.
pub const DEFAULT_MAX_LOC: usize = 300;

impl PatchPolicy {
    /// The globs protected when the config names none.
    pub fn default_protected() -> Vec<String> {
        vec![".github/workflows/**".to_owned(), ".efix.yml".to_owned()]
    }
}

impl Default for PatchPolicy {
    fn default() -> Self {
        PatchPolicy {
            protected: Self::default_protected(),
            allow: Vec::new(),
            allow_delete: false,
            max_files: DEFAULT_MAX_FILES,
            max_loc: DEFAULT_MAX_LOC,
            allow_harness: Vec::new(),
            commands: Vec::new(),
            secrets: Vec::new(),
            expectations: Vec::new(),
        }
    }
}

/// Whether to write the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Validate only; never write.
    Check,
    /// Write the result when (and only when) everything passed.
    Write,
}

/// The overall result of processing one model answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatchOutcome {
    /// Every check passed and the result differs from the original.
    Applied,
    /// The answer was `NO_CHANGE`, or the patch would leave every file as it was.
    NoChange,
    /// At least one blocking issue; nothing was written.
    Rejected,
}

/// A file's content before and after the patch (`None` = absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

/// How much tolerance a hunk (or edit) needed to land, from none to the most.
///
/// Every level includes the tolerances of the levels before it except where noted; `-` lines
/// are compared exactly (only their line ending may differ) apart from the `Indentation`
/// level's one shift of the whole hunk. Above `Exact` a hunk's landing must rest on two
/// matched non-blank lines or on one that occurs once in the file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Exactly where the hunk header says (or the only place an edit's text occurs).
    Exact,
    /// Exact text, elsewhere in the file; the nearest single match.
    Offset,
    /// Context lines equal once trailing whitespace is ignored.
    TrailingWhitespace,
    /// The whole old side equal once one uniform indentation shift is applied: context lines
    /// with whitespace runs collapsed, `-` lines exactly after their indentation; a non-blank
    /// context line must show the shift, and the landing must rest on two matched non-blank
    /// lines or on one that is unique in the file and at least 20 characters long. Added
    /// lines are shifted by the same amount.
    Indentation,
    /// Context lines equal once every whitespace run counts as one space (indentation
    /// amounts may differ line by line; added lines are kept as written).
    WhitespaceRuns,
    /// Blank context lines may be missing on either side (models miscount blank lines).
    BlankLines,
    /// Up to two context lines dropped at the hunk's edges; the change stays anchored by a
    /// non-blank context line on every side that had context.
    TrimmedContext,
}

impl Level {
    /// Every level in ladder order.
    pub const ALL: [Level; 7] = [
        Level::Exact,
        Level::Offset,
        Level::TrailingWhitespace,
        Level::Indentation,
        Level::WhitespaceRuns,
        Level::BlankLines,
        Level::TrimmedContext,
    ];

    /// The kebab-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::Offset => "offset",
            Level::TrailingWhitespace => "trailing-whitespace",
            Level::WhitespaceRuns => "whitespace-runs",
            Level::Indentation => "indentation",
            Level::BlankLines => "blank-lines",
            Level::TrimmedContext => "trimmed-context",
        }
    }
}

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileAction {
    Modify,
    Create,
    Delete,
    Rename,
}

/// How one hunk (or one structured edit) landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HunkReport {
    /// 1-based hunk (or edit) number within its file.
    pub index: usize,
    /// The tolerance needed.
    pub level: Level,
    /// 1-based old line the header pointed at, when the hunk had a header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_line: Option<u64>,
    /// 1-based line in the original file where the hunk's old side starts.
    pub line: u64,
    /// Context lines dropped at the edges (only at `trimmed-context`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_context: usize,
    /// Columns added to (positive) or removed from (negative) added lines' indentation.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub indent_shift: i64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileReport {
    /// Repository-relative path after the patch.
    pub path: String,
    /// The previous path, for renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub action: FileAction,
    /// Lines added and removed in this file.
    pub added: usize,
    pub removed: usize,
    /// One entry per hunk or edit, in order.
    pub hunks: Vec<HunkReport>,
}

/// The result printed by `efix patch` and recorded in the evidence.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PatchReport {
    pub outcome: PatchOutcome,
    pub files: Vec<FileReport>,
    pub issues: Vec<Issue>,
    /// The normalized unified diff of the result (empty unless applied).
    pub diff: String,
    #[serde(skip)]
    pub changes: Vec<FileChange>,
}

impl PatchReport {
    pub(crate) fn rejected(issues: Vec<Issue>) -> Self {
        PatchReport {
            outcome: PatchOutcome::Rejected,
            files: Vec::new(),
            issues,
            diff: String::new(),
            changes: Vec::new(),
        }
    }
}
