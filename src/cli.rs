//! The command line (clap definitions only). Behaviour lives in the areas the commands call.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "\
Exit codes:
  0  fixed and proven (other commands: success)
  1  no proven fix (failure evidence is still written)
  2  usage or configuration error; another efix run is in progress in the repository; an
     interrupted run left the tree changed (run `efix restore`)
  3  the reproduction command did not fail
  4  refused by policy before anything ran
  5  a fix passed, but it is not fixed and proven: a check could not be judged
     (fixed-not-judged) or the change is flagged for review (fixed-flagged); the PR is a draft

Logging: set EFIX_LOG (e.g. EFIX_LOG=debug) for diagnostics on stderr.";

const RESTORE_EXIT_CODES: &str = "\
Exit codes:
  0  the tree was put back, or no interrupted run had left it changed
  1  the restore failed (the run's journal is kept: fix the cause and run it again)
  2  usage error, not a git repository, or another efix run is in progress

Logging: set EFIX_LOG (e.g. EFIX_LOG=debug) for diagnostics on stderr.";

/// efix: turns a failing command into a proven fix and a pull request whose body is built
/// only from what efix ran and recorded.
#[derive(Debug, Parser)]
#[command(name = "efix", version, after_help = EXIT_CODES, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reproduce a failure, ask the engine for a fix, prove it, write the evidence.
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Run the whole pipeline on the bundled example, offline, with the replay engine.
    #[command(after_help = EXIT_CODES)]
    Demo(DemoArgs),
    /// Run one command through the sandboxed runner and print its outcome as JSON.
    #[command(after_help = EXIT_CODES)]
    Exec(ExecArgs),
    /// Read a model's raw answer on stdin, validate it against the patch contract and apply it.
    #[command(after_help = EXIT_CODES)]
    Patch(PatchArgs),
    /// Check a configuration file.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a JSON Schema.
    Schema(SchemaArgs),
    /// Re-run the commands recorded in an artifacts directory and confirm the evidence holds.
    #[command(after_help = EXIT_CODES)]
    Verify(VerifyArgs),
    /// Put back the working tree of an interrupted run (even one killed with SIGKILL) and
    /// print what was put back as JSON.
    #[command(after_help = RESTORE_EXIT_CODES)]
    Restore(RestoreArgs),
    /// Turn a finished run into a signed commit, a pull request and an issue comment through
    /// the GitHub REST API (a run without a proven fix: the comment only).
    #[command(after_help = PUBLISH_EXIT_CODES)]
    Publish(PublishArgs),
    /// Group the failures of a red CI run by cause and print a GitHub Actions job matrix with
    /// one entry per cause: the command that reproduces exactly its tests, the tests, the
    /// cause. Reads JUnit reports, runner logs, or a workflow run's failed jobs on GitHub.
    #[command(after_help = TRIAGE_EXIT_CODES)]
    Triage(TriageArgs),
    /// Read the repository (manifests, lockfiles, test configs, CI workflows) and write a
    /// checked .efix.yml and .github/workflows/efix.yml for the test runners it uses.
    #[command(after_help = INIT_EXIT_CODES)]
    Init(InitArgs),
}

const INIT_EXIT_CODES: &str = "\
Runners: pytest, Django's test runner, unittest, jest, vitest, mocha, tape, node --test, cargo
test and go test; package managers pip, uv, poetry, npm, pnpm and yarn. The summary (stdout)
says what was found and why, the secrets to add and the command to try next.

Exit codes:
  0  the files were written (with --dry-run: printed)
  2  usage error, no test runner found or a file exists already (without --force): nothing
     was written; or a file could not be written";

/// The engine `efix init` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InitEngineArg {
    Openai,
    Acp,
}

/// The ACP agent `efix init` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    /// Claude Code (claude-agent-acp).
    Claude,
    /// Gemini CLI (gemini --acp).
    Gemini,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// The engine to configure (default: asked on a terminal, else openai; acp with --agent).
    #[arg(long, value_enum)]
    pub engine: Option<InitEngineArg>,
    /// The agent of the acp engine (default: asked on a terminal, else claude).
    #[arg(long, value_enum)]
    pub agent: Option<AgentArg>,
    /// Ask nothing: take the defaults and write.
    #[arg(long)]
    pub yes: bool,
    /// Replace files that exist.
    #[arg(long)]
    pub force: bool,
    /// Print the summary and the files instead of writing them.
    #[arg(long)]
    pub dry_run: bool,
    /// The efix action pinned by commit for the workflow, OWNER/REPO@SHA (default: a
    /// placeholder the summary asks you to replace).
    #[arg(long, value_name = "REF")]
    pub action: Option<String>,
}

const TRIAGE_EXIT_CODES: &str = "\
Output:
  stdout          {\"include\":[{\"id\",\"command\",\"tests\",\"rule\",\"cause\"}]}, for strategy.matrix
  --github-output matrix=<the JSON>, jobs=<entries>, failures=<failing tests>,
                  left-out=<causes over --max-jobs, listed with their commands in the summary>
                  (default: $GITHUB_OUTPUT when set)
  --summary       a Markdown table of the groups and of what was left out and why
                  (default: $GITHUB_STEP_SUMMARY when set)

Cause, by the first rule that applies (--group-by forces one, then the test's file):
  frame    the deepest stack frame outside the test's own file, the runtime and the
           dependencies (file:line)
  target   where efix would look, read in the repository at --root: the function the
           failing assertion calls (through the test's imports), a data file the failing
           test reads, else the localizer's top-ranked file
  message  the failure message with addresses, durations and temporary paths taken out
           and literals abstracted (<num>, <str>, [...])
  file     the test's file
Each matrix entry's cause names its rule. Each command is checked against
commands.allow. A cause whose command already has an open efix pull request (a branch
efix/<issue or run>-<hash of the command>) is skipped when a token is available.

Exit codes:
  0  a matrix was written (empty when every cause already has an open efix pull request)
  2  usage or input error: an unreadable, malformed or truncated report or log (the message
     names the file and line), a runner that cannot be told, GitHub refused a request
  3  the inputs hold no failing test: nothing to triage
  4  every cause's command is refused by commands.allow

GitHub context (--run-id and the open pull request check): GITHUB_API_URL,
GITHUB_REPOSITORY and the token in --token-env.";

const PUBLISH_EXIT_CODES: &str = "\
Exit codes:
  0  published (or nothing to publish: no proven fix and no issue to comment on)
  1  refused (an artifact differs from what evidence.json renders) or GitHub refused a request
  2  usage or configuration error (no token, no GITHUB_REPOSITORY, unreadable artifacts)

GitHub context: GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID,
GITHUB_REF, GITHUB_EVENT_NAME and GITHUB_EVENT_PATH, as GitHub Actions sets them.";

/// Which engine proposes plans and fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Openai,
    Acp,
    Replay,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The failing command to reproduce, e.g. "cargo test -p parser crlf" (split with shell
    /// quoting rules, never run by a shell).
    #[arg(
        long,
        value_name = "CMD",
        required_unless_present_any = ["resume", "from_event"]
    )]
    pub repro: Option<String>,
    /// Take the command from the GitHub Actions event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH):
    /// a `/efix <command>` comment by someone with write permission, a workflow_dispatch
    /// `command` input, or the failed step of a workflow_run; --repro is the fallback. A
    /// refused trigger exits 4 before anything runs.
    #[arg(long, conflicts_with = "resume")]
    pub from_event: bool,
    /// The variable holding the GitHub token that --from-event's checks use.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub token_env: String,
    /// Append `result` and `artifacts-dir` to this GitHub Actions output file.
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<PathBuf>,
    /// The repository to fix (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Configuration file (default: .efix.yml at the repository root, if present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The engine to use (overrides `engine` in the config and EFIX_ENGINE).
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// Replay file for `--engine replay`.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// A suite that must pass after the fix (repeatable; replaces test.required-suites).
    #[arg(long, value_name = "CMD")]
    pub suite: Vec<String>,
    /// Where to write the artifacts (default: efix-artifacts/ under the repository).
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
    /// Do everything except leaving the patch applied; artifacts are still written.
    #[arg(long)]
    pub dry_run: bool,
    /// Time budget for the whole run, in seconds.
    #[arg(long, value_name = "N")]
    pub timeout_seconds: Option<u64>,
    /// Maximum number of fix rounds (default 3).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Ask for K independent fixes per round, prove each in its own scratch copy of the base
    /// commit, and keep the smallest proven one (default 1).
    #[arg(long, value_name = "K")]
    pub candidates: Option<u32>,
    /// Prove at most J candidates at the same time (default: the number of cores, at most K).
    #[arg(long, value_name = "J")]
    pub jobs: Option<u32>,
    /// Stop a round at the first fully proven candidate and cancel the others.
    #[arg(long)]
    pub first_proven: bool,
    /// Run the reproduction N times; differing outcomes mark it flaky and no fix is claimed.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Continue an interrupted run from the checkpoint in this artifacts directory (a tree the
    /// run left changed, e.g. after SIGKILL, is put back first).
    #[arg(long, value_name = "ARTIFACTS_DIR", conflicts_with_all = ["repro", "replay"])]
    pub resume: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the artifacts (default: efix-artifacts/demo under the current directory).
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Working directory and repository whose .efix.yml applies (default: current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Time limit for the command, in seconds (default: commands.timeout-ms).
    #[arg(long, value_name = "N")]
    pub timeout_seconds: Option<u64>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PatchArgs {
    /// The repository to apply the patch to.
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// Validate only; never write.
    #[arg(long)]
    pub check: bool,
    /// Configuration file (paths, diff limits).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a configuration file and print the resolved settings.
    Check {
        /// The file to check (default: .efix.yml in the current directory).
        file: Option<PathBuf>,
        /// Describe this engine instead of the one the file names (as `efix run --engine`).
        #[arg(long, value_enum)]
        engine: Option<EngineArg>,
    },
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which schema.
    #[arg(value_enum)]
    pub which: SchemaKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    Config,
    Evidence,
    Replay,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The artifacts directory of a finished run.
    #[arg(value_name = "ARTIFACTS_DIR")]
    pub artifacts: PathBuf,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

/// The runners `efix triage` builds commands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunnerArg {
    Pytest,
    Jest,
    Vitest,
    Cargo,
    Go,
    Node,
}

/// The rules `efix triage --group-by` can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GroupByArg {
    // The variants are listed without docs: clap would switch the whole help to its long
    // layout for them. `--help`'s epilogue says what each rule is.
    Frame,
    Target,
    Message,
    File,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true)))]
pub struct TriageArgs {
    /// A JUnit XML report, or a directory searched for *.xml (repeatable): pytest
    /// --junitxml, jest-junit, vitest --reporter=junit, cargo-nextest, go-junit-report,
    /// gotestsum --junitfile, node --test-reporter=junit.
    #[arg(long, value_name = "PATH", group = "input")]
    pub junit: Vec<PathBuf>,
    /// A test runner's log (repeatable): cargo test, nextest, pytest, jest, vitest, go test
    /// (text or -json), node --test; GitHub's timestamps are removed.
    #[arg(long, value_name = "FILE", group = "input")]
    pub log: Vec<PathBuf>,
    /// A workflow run of GITHUB_REPOSITORY: the logs of its failed jobs (latest attempt),
    /// read through the REST API with the token in --token-env (`actions: read`).
    #[arg(long, value_name = "N", group = "input")]
    pub run_id: Option<u64>,
    /// The runner that wrote the inputs, when their content does not say.
    #[arg(long, value_enum)]
    pub runner: Option<RunnerArg>,
    /// The program the commands start with instead of the runner's default (pytest, npx
    /// jest, npx vitest run, cargo test, go test, node --test), e.g. "python -m pytest".
    #[arg(long, value_name = "CMD")]
    pub runner_command: Option<String>,
    /// The checkout the failed run used (default: the current directory): paths in stacks
    /// are made relative to it, and its .efix.yml and go.mod are read.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Configuration file (default: .efix.yml under --root, if present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Group by this rule only (then by the test's file) instead of the first that applies
    /// (see Cause below).
    #[arg(long, value_enum, value_name = "RULE")]
    pub group_by: Option<GroupByArg>,
    /// At most this many matrix entries, largest groups first; the rest are listed as left
    /// out.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub max_jobs: u64,
    /// Append `matrix`, `jobs`, `failures` and `left-out` to this GitHub Actions output file.
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<PathBuf>,
    /// Append the Markdown table to this file.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// The variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub token_env: String,
    /// Do not look for open efix pull requests, even with a token.
    #[arg(long)]
    pub no_open_check: bool,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The artifacts directory of a finished run.
    #[arg(long, value_name = "DIR")]
    pub artifacts: PathBuf,
    /// The local repository holding the recorded base commit (default: the one the run
    /// recorded).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Print the requests that would be sent (as JSON) and send nothing; needs no token.
    #[arg(long)]
    pub dry_run: bool,
    /// The variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub token_env: String,
    /// Open the pull request as a draft.
    #[arg(long)]
    pub draft: bool,
    /// A label for the pull request (repeatable).
    #[arg(long = "label", value_name = "LABEL")]
    pub labels: Vec<String>,
    /// Never create a branch or a pull request; only comment.
    #[arg(long)]
    pub no_pr: bool,
    /// Do not comment on the triggering issue.
    #[arg(long)]
    pub no_comment: bool,
    /// The issue to comment on and to name the branch after (default: the event's).
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
    /// The branch the pull request goes into (default: from the event, else GITHUB_REF).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Append `pr-url` and `pr-number` to this GitHub Actions output file.
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<PathBuf>,
}
