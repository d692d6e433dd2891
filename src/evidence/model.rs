//! The types of `evidence.json`. Field names are kebab-case; every list is in the order things
//! happened.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check::CheckRecord;
use crate::config::SecretsInPrompt;
pub use crate::engine::CallKind;
use crate::engine::{CallOutcome, EngineInfo, FixResponse, Permission, ToolCall, Usage};
use crate::localize::Candidate;
use crate::policy::Issue;
use crate::prompt::CutRecord;
use crate::runner::{Outcome, SandboxReport, Tier};
use crate::testreport::TestReport;

/// The version of the evidence format this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of efix, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Evidence {
    /// Format version (1).
    pub schema_version: u32,
    /// The efix version that recorded this.
    pub efix_version: String,
    /// UTC start time, RFC 3339.
    pub started_at: String,
    /// UTC end time, RFC 3339; absent while the run is in progress.
    #[serde(default)]
    pub finished_at: Option<String>,
    pub request: RunRequest,
    pub repo: RepoInfo,
    pub engine: EngineRecord,
    /// The isolation actually achieved for the commands (observed on the first command).
    #[serde(default)]
    pub sandbox: Option<SandboxReport>,
    /// Every command efix considered running, with the policy decision and outcome.
    pub commands: Vec<CommandRecord>,
    #[serde(default)]
    pub reproduction: Option<Reproduction>,
    #[serde(default)]
    pub localization: Option<Localization>,
    pub rounds: Vec<Round>,
    pub result: RunResult,
    /// The proven change; present only when the result is `fixed`.
    #[serde(default)]
    pub fix: Option<FinalFix>,
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunRequest {
    /// The reproduction command as written.
    pub command: String,
    /// Suites that must pass after the fix.
    pub suites: Vec<String>,
    /// With no suite configured: the whole suite of the reproduction's runner (the same
    /// runner and options without what selects tests), run before and after so a fix that
    /// breaks another test of the repository is caught (it must gain no failure).
    #[serde(default)]
    pub derived_suite: Option<String>,
    /// Every form of the derived suite, widest first (`derived-suite` is the first): the
    /// forms tried in turn until one establishes a baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_forms: Vec<SuiteForm>,
    /// The suite budget in milliseconds (`test.suite-budget-ms`).
    #[serde(default)]
    pub suite_budget_ms: u64,
    /// How many times the reproduction is run to detect flakiness.
    pub repeat: u32,
    pub max_rounds: u32,
    pub dry_run: bool,
    /// The config file used, if any.
    #[serde(default)]
    pub config: Option<String>,
    /// Whole-run time budget in milliseconds.
    pub timeout_ms: u64,
    /// Whether a regression guard was required (`test.required`).
    pub test_required: bool,
    /// The weakest sandbox tier commands could run under (`sandbox.require`).
    #[serde(default)]
    pub sandbox_require: Tier,
}

/// The repository the run worked on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RepoInfo {
    /// Work-tree root.
    pub root: String,
    /// HEAD at the start; the base the patch applies to.
    #[serde(default)]
    pub base_commit: Option<String>,
}

/// The engine and every call made to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineRecord {
    pub info: EngineInfo,
    pub calls: Vec<EngineCall>,
}

impl EngineRecord {
    /// Total tokens reported over all calls (prompt, completion, cached).
    pub fn tokens(&self) -> Usage {
        self.calls
            .iter()
            .filter_map(|call| call.usage)
            .fold(Usage::default(), |sum, u| Usage {
                prompt_tokens: sum.prompt_tokens + u.prompt_tokens,
                completion_tokens: sum.completion_tokens + u.completion_tokens,
                cached_tokens: sum.cached_tokens + u.cached_tokens,
            })
    }

    /// Calls that reached the engine (not skipped, not answered from a checkpoint).
    pub fn calls_made(&self) -> usize {
        self.calls
            .iter()
            .filter(|call| call.reached_engine())
            .count()
    }

    /// Total cost of the priced calls, in US dollars.
    pub fn cost_usd(&self) -> f64 {
        self.calls.iter().filter_map(|call| call.cost_usd).sum()
    }

    /// Whether any call reported usage at all.
    pub fn reports_tokens(&self) -> bool {
        self.calls.iter().any(|call| call.usage.is_some())
    }
}

/// One engine call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineCall {
    pub kind: CallKind,
    /// Round number for fix calls.
    #[serde(default)]
    pub round: Option<u32>,
    /// Bytes of the prompt sent.
    pub prompt_bytes: u64,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Whether the answer came from the checkpoint of an interrupted run instead of the engine.
    #[serde(default)]
    pub reused: bool,
    /// The engine failed to answer; its error.
    #[serde(default)]
    pub error: Option<String>,
    /// How the call ended.
    #[serde(default)]
    pub outcome: CallOutcome,
    /// Wall-clock time of the call, retries and waits included, in milliseconds.
    #[serde(default)]
    pub latency_ms: u64,
    /// Requests repeated after a transient failure (429, 5xx, reset, timeout).
    #[serde(default)]
    pub retries: u32,
    /// The model the server says answered.
    #[serde(default)]
    pub model: Option<String>,
    /// Why structured output was dropped for a plain-text answer, when it was.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The refusal, or why the answer is empty or cut off.
    #[serde(default)]
    pub detail: Option<String>,
    /// What the call cost, from `budget.prices`, when the model has a price.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// What was cut from the prompt to fit `budget.max-input-bytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<CutRecord>,
    /// Secrets the redaction rules found in the prompt (never their values), and what was
    /// done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretsFound>,
    /// An ACP agent's permission requests and efix's answers, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<Permission>,
    /// The agent edited files itself (ACP edit mode) and its change was taken as the answer.
    #[serde(default)]
    pub edited_tree: bool,
    /// Files the agent wrote outside the protocol (without a permission efix granted); they
    /// were restored and are not part of any answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrequested_writes: Vec<String>,
    /// What confined the agent process the engine started for this call (ACP), as its sandbox
    /// helper reported it, with the processes it left outside its group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxReport>,
    /// Every tool call an ACP agent reported, asked for or not, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Facts about the call a reader needs (an agent's mode, a usage it did not report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl EngineCall {
    /// A call with everything but its kind, round and prompt size empty.
    pub fn new(kind: CallKind, round: Option<u32>, prompt_bytes: u64) -> EngineCall {
        EngineCall {
            kind,
            round,
            prompt_bytes,
            usage: None,
            reused: false,
            error: None,
            outcome: CallOutcome::Answered,
            latency_ms: 0,
            retries: 0,
            model: None,
            fallback: None,
            detail: None,
            cost_usd: None,
            cut: Vec::new(),
            secrets: None,
            permissions: Vec::new(),
            edited_tree: false,
            unrequested_writes: Vec::new(),
            sandbox: None,
            tool_calls: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Whether the call was sent to the engine (it counts against the budgets).
    pub fn reached_engine(&self) -> bool {
        !self.reused
            && !matches!(
                self.outcome,
                CallOutcome::SkippedBudget | CallOutcome::SkippedSecrets
            )
    }
}

/// Secrets found in a prompt before it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SecretsFound {
    /// How many matches.
    pub count: u64,
    /// The ids of the rules that matched (`github-token`, `env:NAME`, ...).
    pub rules: Vec<String>,
    /// What `security.secrets-in-prompt` made of them.
    pub action: SecretsInPrompt,
    /// Every match, placeholders (test data sent as it is) included, with where it sits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detections: Vec<SecretDetection>,
}

/// One match of a secret rule in a prompt: never the value, only the rule and the place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SecretDetection {
    /// The rule that matched (`url-credentials`, `github-token`, `env:NAME`, ...).
    pub rule: String,
    /// The repository file the prompt quoted it from, when it sits in a quoted file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Why it is test data rather than a secret (a reserved host, placeholder words, low
    /// entropy); absent for a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
}

/// The pipeline phase a command belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// `commands.setup`, before the reproduction, with the network.
    Setup,
    /// The reproduction (and the suites' baseline) on the original source.
    Reproduce,
    /// The regression guard: the change's tests without the fix.
    Prevent,
    /// The reproduction and the suites with the whole change.
    Prove,
}

/// What a command was run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// A `commands.setup` command (dependency fetch), run once with the network.
    Setup,
    /// The reproduction command on the original source.
    Reproduction,
    /// A required suite on the original source (the baseline for the per-test table).
    SuiteBaseline,
    /// The reproduction with only the change's test hunks applied.
    TestsOnlyReproduction,
    /// A suite with only the change's test hunks applied.
    TestsOnlySuite,
    /// The reproduction with the whole change applied.
    FixedReproduction,
    /// A required suite with the whole change applied.
    FixedSuite,
    /// The reproduction's failing tests with canaries beside them, in the repository's own
    /// tree with the whole change applied (`prove.canary.*`).
    Canary,
    /// A derived suite form's (or the reproduction's) tests listed by its runner, without
    /// running them (`pytest --collect-only -q`), to estimate what running it would cost.
    SuiteListing,
    /// The tests related to the change (those whose imports reach a file it modifies) with
    /// only the change's test hunks applied: the related form's baseline.
    RelatedBaseline,
    /// The tests related to the change with the whole change applied.
    RelatedFixed,
}

/// The policy decision on a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PolicyDecision {
    pub allowed: bool,
    #[serde(default)]
    pub rule: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

impl PolicyDecision {
    /// The command passed the allowlist.
    pub fn allowed() -> PolicyDecision {
        PolicyDecision {
            allowed: true,
            rule: None,
            message: None,
        }
    }

    /// The command was refused.
    pub fn refused(refusal: &crate::policy::command::CommandRefusal) -> PolicyDecision {
        PolicyDecision {
            allowed: false,
            rule: Some(refusal.rule.clone()),
            message: Some(refusal.message.clone()),
        }
    }
}

/// One command efix ran (or refused to run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CommandRecord {
    /// Index in `commands`, referenced by the phases.
    pub id: usize,
    pub phase: Phase,
    pub purpose: Purpose,
    /// Round number for prevent and prove commands.
    #[serde(default)]
    pub round: Option<u32>,
    /// The command as written.
    pub command: String,
    pub policy: PolicyDecision,
    /// What happened; absent when the command was refused.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// Per-test results parsed from the output, when the runner's format was recognised.
    #[serde(default)]
    pub tests: Option<TestReport>,
    /// Where the per-test results came from (the runner's report file or its console) and
    /// whether the channels agreed; absent for a console that is the only channel and agrees
    /// with itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<crate::integrity::channel::ResultChannel>,
    /// Set on a rerun with the runner's per-test flag of a run whose output did not name
    /// passing tests; the proof decides from this rerun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirms: Option<Confirms>,
}

/// The run a per-test rerun confirms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Confirms {
    /// Id of the terse run.
    pub id: usize,
    /// Its command as written.
    pub command: String,
}

impl CommandRecord {
    /// Whether the command ran and exited 0 without timing out.
    pub fn succeeded(&self) -> bool {
        self.outcome
            .as_ref()
            .is_some_and(|o| o.exit_code == Some(0) && !o.timed_out)
    }

    /// The command this run stands for: the terse run's for a per-test rerun, else its own.
    pub fn origin_command(&self) -> &str {
        self.confirms
            .as_ref()
            .map_or(self.command.as_str(), |c| c.command.as_str())
    }

    /// Whether the test runner reported that it executed no test at all.
    pub fn ran_no_tests(&self) -> bool {
        self.tests.as_ref().is_some_and(TestReport::ran_no_tests)
    }
}

/// The Reproduce phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Reproduction {
    /// Command ids of the reproduction runs.
    pub runs: Vec<usize>,
    /// Command ids of the suites' baseline runs.
    pub suite_baselines: Vec<usize>,
    /// Whether every run failed (the failure reproduced).
    pub reproduced: bool,
    /// Whether runs disagreed.
    pub flaky: bool,
    /// Tests the runner reported failing.
    pub failing_tests: Vec<String>,
    /// With no suite configured: how the suite the proof uses was chosen among the forms
    /// derived from the reproduction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_choice: Option<SuiteChoice>,
}

/// One form of the suite derived from the reproduction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteForm {
    pub kind: SuiteFormKind,
    pub command: String,
}

/// How a derived suite form relates to the reproduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteFormKind {
    /// The runner's whole suite: the reproduction without what selects tests.
    WholeSuite,
    /// The same runner on the test directory holding the reproduction's tests, with only
    /// the options the runner needs.
    TestRoot,
    /// The same program with no test selector (a runner efix does not know).
    NoSelector,
    /// The reproduction's selector widened: a dotted label's module or package, a node id's
    /// file or directory, a name pattern dropped.
    WiderSelector,
    /// The reproduction's own files or targets.
    ReproductionFiles,
}

/// The forms tried for the derived suite, widest first, and the one the proof uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteChoice {
    /// Every form in the order tried, with its baseline run and verdict.
    pub attempts: Vec<SuiteAttempt>,
    /// The suite the proof uses; absent when no form wider than the reproduction established
    /// a baseline, and the proof covers the reproduction only.
    #[serde(default)]
    pub chosen: Option<String>,
    /// The suite budget in milliseconds (`test.suite-budget-ms`).
    pub budget_ms: u64,
}

/// One derived suite form and whether its run before the fix is a baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteAttempt {
    pub kind: SuiteFormKind,
    pub command: String,
    /// Id of its run before the fix; absent when it was not run.
    #[serde(default)]
    pub baseline: Option<usize>,
    /// What running it was estimated to cost before it ran, when its runner can list its
    /// tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<SuiteEstimate>,
    pub verdict: BaselineVerdict,
    /// Why, in words: the output line that shows the stop, the tests missing, the budget.
    pub detail: String,
}

/// A derived suite form's cost, estimated from its count of tests (its runner's listing, or
/// read statically from its files) and the reproduction's measured start-up and time per test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SuiteEstimate {
    /// Where the count comes from.
    pub source: CountSource,
    /// Id of the form's listing run, when its runner listed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing: Option<usize>,
    /// The test files read, when the count was read statically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// What the count counts: tests, or test files for runners that list files
    /// (`jest --listTests`).
    pub unit: ListedUnit,
    /// How many were counted.
    pub count: u64,
    /// Id of the reproduction's run the rate was measured on.
    pub reproduction: usize,
    /// Where the reproduction's start-up and time per unit come from.
    pub rate: RateSource,
    /// The start-up counted once for the form, in milliseconds: the larger of the
    /// reproduction's start-up and the form's own listing time.
    pub startup_ms: u64,
    /// The reproduction's time per unit, in microseconds.
    pub per_unit_us: u64,
    /// The estimated duration of its run, in milliseconds: the start-up plus the count times
    /// the time per unit.
    pub estimate_ms: u64,
}

/// Where a suite estimate's count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CountSource {
    /// The runner's own listing (`pytest --collect-only`, `cargo test -- --list`, …).
    Listing,
    /// Counted statically: the test methods and test calls in the files the form runs, for
    /// runners with no listing (unittest, Django, mocha, tape, `node --test`).
    CountedStatically,
}

/// How the reproduction's start-up and time per test were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RateSource {
    /// The test time its runner reported (`Ran 1 test in 0.004s`, `passed in 0.12s`); the
    /// start-up is the rest of its wall time.
    Reported,
    /// Its wall time less its own listing's time, which stands for the start-up.
    RunLessListing,
    /// Its whole wall time over its tests (no start-up could be told apart: every test is
    /// counted as costing a start-up).
    WholeRun,
}

/// What a runner's listing counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ListedUnit {
    Tests,
    TestFiles,
}

/// Whether a suite's run before the fix counts as a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BaselineVerdict {
    /// It ran the reproduction's tests with the reproduction's results, within the budget.
    Established,
    /// It ran longer than the suite budget (and was stopped there).
    OverBudget,
    /// It stopped before its tests ran: a collection error that interrupted the session, a
    /// runner abort, `process.exit`, a crash or a usage error.
    StoppedEarly,
    /// It did not report the reproduction's tests with the reproduction's results.
    MissingTests,
    /// It ran no test.
    NoTests,
    /// It was not run: the attempts' share of time was spent, or a wider form was chosen.
    NotRun,
    /// It was not run: its estimate, from its count of tests and the reproduction's time per
    /// test, exceeds the time it could have.
    EstimatedOverBudget,
    /// It was stopped at a multiple of its estimate: its tests are slower than the
    /// reproduction's, and its estimate cannot be trusted to fit the budget.
    OverEstimate,
}

/// The Localize phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Localization {
    /// Deterministic candidates, best first.
    pub candidates: Vec<Candidate>,
    /// The engine's hypothesis (the model's words).
    #[serde(default)]
    pub hypothesis: Option<String>,
    /// Focus files the engine asked for that exist in the repository.
    pub engine_focus: Vec<String>,
    /// Focus files the engine named that do not exist (ignored).
    pub engine_focus_unknown: Vec<String>,
    /// The files whose numbered contents were sent, in order.
    pub excerpts: Vec<ExcerptRecord>,
}

/// A file whose numbered contents were sent to the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ExcerptRecord {
    pub path: String,
    pub bytes: u64,
    pub truncated: bool,
}

/// One fix round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Round {
    pub number: u32,
    /// Engine answers of this round (a contract retry adds a second one).
    pub attempts: Vec<Attempt>,
    /// Every check with its result, in order.
    pub checks: Vec<CheckRecord>,
    #[serde(default)]
    pub prevent: Option<Prevent>,
    #[serde(default)]
    pub prove: Option<Prove>,
    /// With a derived suite narrower than the runner's whole suite: the tests outside it that
    /// reach the files the change touches, run before and after the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<RelatedSuite>,
    /// Blocking issues handed back to the engine.
    pub issues: Vec<Issue>,
    pub verdict: RoundVerdict,
    /// With `--candidates K` (K > 1): every candidate of the round, proven side by side in
    /// scratch copies; the round's own fields are then the winner's proof in the working tree
    /// (or, when none was proven, one issue per candidate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<super::CandidateRecord>,
}

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RoundVerdict {
    /// Fix applied, regression guard proven, reproduction and suites pass.
    Proven,
    /// The patch was rejected (contract, parse, apply or a check).
    Rejected,
    /// The patch applied but the proof failed.
    ProofFailed,
    /// The engine answered `NO_CHANGE`.
    NoChange,
    /// The engine gave no answer.
    EngineFailed,
    /// The run was stopped (budget or signal) during the round.
    Stopped,
}

/// One engine answer and what the patch engine made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Attempt {
    /// Index of the engine call over the whole run.
    pub call_index: usize,
    /// This attempt is the one retry allowed for output that broke the contract.
    pub contract_retry: bool,
    pub patch: PatchRecord,
    /// The model's own explanation (never a result).
    pub explanation: Explanation,
}

/// What the patch engine reported for one answer (a copy of `efix patch`'s JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PatchRecord {
    pub outcome: crate::patch::PatchOutcome,
    /// Per file and per hunk: the tolerance level used and where it landed.
    pub files: serde_json::Value,
    pub issues: Vec<Issue>,
    /// The normalized unified diff.
    pub diff: String,
}

impl From<&crate::patch::PatchReport> for PatchRecord {
    fn from(report: &crate::patch::PatchReport) -> Self {
        PatchRecord {
            outcome: report.outcome,
            files: serde_json::to_value(&report.files).unwrap_or(serde_json::Value::Null),
            issues: report.issues.clone(),
            diff: report.diff.clone(),
        }
    }
}

/// The model's words about its fix, shown only under a heading that says so.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Explanation {
    pub root_cause: String,
    pub fix_summary: String,
    pub tests_summary: String,
    pub risk_rollback: String,
    pub file_justifications: Vec<crate::engine::FileJustification>,
}

impl From<&FixResponse> for Explanation {
    fn from(response: &FixResponse) -> Self {
        Explanation {
            root_cause: response.root_cause.clone(),
            fix_summary: response.fix_summary.clone(),
            tests_summary: response.tests_summary.clone(),
            risk_rollback: response.risk_rollback.clone(),
            file_justifications: response.file_justifications.clone(),
        }
    }
}

/// Which regression guard held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Guard {
    /// Tests the change adds or modifies fail with only the test hunks and pass with all of it.
    ChangedTests,
    /// The reproduction is a test-runner invocation whose failing tests pass after the fix.
    Reproduction,
    /// `test.required` is false and no guard held.
    NotRequired,
}

/// The Prevent phase of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Prevent {
    /// Test files (or test regions) the change touches.
    pub test_files: Vec<String>,
    /// Test names added or modified by the change.
    pub changed_tests: Vec<String>,
    /// Command ids run with only the test hunks applied.
    pub tests_only_runs: Vec<usize>,
    /// Changed tests that failed with only the test hunks applied.
    pub failed_without_fix: Vec<String>,
    /// Changed tests that passed with the whole change.
    pub passed_with_fix: Vec<String>,
    /// The guard that held, if any.
    #[serde(default)]
    pub guard: Option<Guard>,
    /// Why the guard did or did not hold.
    pub detail: String,
}

/// The related form of a round: the test files whose imports reach a file the change
/// modifies, left out of the suite the proof runs, run in one invocation of the
/// reproduction's runner with only the change's test side (baseline) and with the whole
/// change (`prove.related-suite`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RelatedSuite {
    /// The files the change modifies that are not tests: what the selected tests reach.
    pub changed: Vec<String>,
    /// The test files selected, each with the changed file it reaches and how.
    pub selected: Vec<RelatedTest>,
    /// Test files that reach a changed file but are left out because the suite the proof
    /// already runs holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub already_run: Vec<String>,
    /// How many test files were searched.
    pub searched: u64,
    /// Whether a bound of the search (depth, files, reads) cut part of it short.
    pub bounded: bool,
    /// The command that runs the selected tests; absent when none was built.
    #[serde(default)]
    pub command: Option<String>,
    /// What running it was estimated to cost, when its runner lists its tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<SuiteEstimate>,
    /// Id of its run with only the change's test side applied.
    #[serde(default)]
    pub baseline: Option<usize>,
    /// Whether that run is a baseline; absent when it was not run.
    #[serde(default)]
    pub verdict: Option<BaselineVerdict>,
    /// Id of its run with the whole change (Prove).
    #[serde(default)]
    pub fixed: Option<usize>,
    /// What happened, in words.
    pub detail: String,
}

/// A test file of the related form and why it was selected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RelatedTest {
    pub test: String,
    /// The changed file its imports reach.
    pub reaches: String,
    /// The files from the test to the changed file, both included, each importing the next.
    pub chain: Vec<String>,
}

/// The Prove phase of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Prove {
    /// Command id of the reproduction with the change applied.
    pub reproduction: usize,
    /// Command ids of the suites with the change applied.
    pub suites: Vec<usize>,
    pub table: TestTable,
}

/// Before/after comparison, test by test, over the reproduction and the suites.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TestTable {
    /// Failed before, pass after.
    pub fixed: Vec<String>,
    /// Failed before and after.
    pub still_failing: Vec<String>,
    /// Passed before, fail after.
    pub newly_failing: Vec<String>,
    /// Failed before and did not run after.
    pub missing: Vec<String>,
    /// Passed or skipped before and have no record after: absent, skipped or unconfirmed
    /// (`prove.missing-tests`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<String>,
    /// Tests passing after the change.
    pub passing_after: u64,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A fix was applied and proven, the repository's tests included (a configured suite,
    /// or one derived from the reproduction that established a baseline).
    Fixed,
    /// A fix was applied and proven by the reproduction alone: no suite was configured and no
    /// form wider than the reproduction established a baseline (exit code 0).
    FixedReproductionOnly,
    /// A fix passed every check that ran, but a check that guards the proof could not be
    /// built or judged (its record says which and why): not "fixed and proven" (exit code 5,
    /// the pull request is a draft).
    FixedNotJudged,
    /// A fix was proven, but the change reads process state a cheat could use (its flags say
    /// what and where): a person must review it before it is trusted (exit code 5, the pull
    /// request is a draft).
    FixedFlagged,
    /// No round produced a proven fix.
    NoProvenFix,
    /// The engine answered `NO_CHANGE`.
    NoChange,
    /// The reproduction command did not fail (or ran no test).
    NotReproduced,
    /// The reproduction's outcome differed between runs.
    Flaky,
    /// A command was refused by policy before anything ran.
    PolicyRefused,
    /// A budget ran out: the run's time (`budget.run-timeout-ms`) or an engine budget
    /// (`budget.max-engine-calls`, `max-tokens`, `max-cost-usd`); the reason says which.
    BudgetExhausted,
    /// efix was interrupted by a signal.
    Interrupted,
    /// The run is still going (a checkpoint).
    InProgress,
}

/// The outcome with its exit code and a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunResult {
    pub status: Status,
    pub exit_code: u8,
    pub reason: String,
}

/// The proven change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct FinalFix {
    pub round: u32,
    pub diff: String,
    pub files: Vec<String>,
    pub added: u64,
    pub removed: u64,
    pub guard: Guard,
    /// Whether the change was left applied in the working tree.
    pub left_applied: bool,
}

impl Evidence {
    /// The command record with this id.
    pub fn command(&self, id: usize) -> Option<&CommandRecord> {
        self.commands.get(id)
    }
}
