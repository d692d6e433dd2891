//! Results from a channel the code under test cannot write.
//!
//! A runner's console is shared with the code it tests: library code can print `ok 3 - name`,
//! `test x ... ok` or `PASSED ...` and end the process with status 0 before the real results.
//! For runners that can write a structured report (pytest, jest, vitest, `node --test`, and
//! mocha through a reporter efix writes that keeps the command's console reporter), efix
//! adds the report's arguments to the argv it runs (the user's command, as shown, is
//! unchanged) and points them at a fresh file in a directory made for that command alone,
//! outside the repository; it then reads per-test results from that file and refuses a
//! console that contradicts it. A report that is missing or truncated when the runner ended is
//! a failure of that run. Where the console is the only channel (tape and other TAP, cargo's
//! libtest), it must at least agree with itself: plans and counts, one result per test, no
//! result after the summary.
//!
//! What the pipeline does with the findings (refusing a proof) is `pipeline::prove`'s; this
//! module plans, reads and compares.

mod agree;
mod console;
mod identity;
mod plan;

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::sync::atomic::AtomicBool;

use crate::runner::{self, CommandSpec, Outcome, RunnerError, RunnerSettings, Secret};
use crate::testreport::{self, TestReport};

pub(crate) use plan::{Choice, ReportFormat};

/// The name of the report file in the command's report directory.
const REPORT_FILE: &str = "report";

/// How a command's per-test results were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelStatus {
    /// The runner's structured report was read.
    Read,
    /// The runner was asked for a report and ended without writing it.
    Missing,
    /// The report was written but is cut short or not in the expected format.
    Truncated,
    /// The runner rejected the report's arguments (a version without them); the command ran
    /// again as written and its console is the only channel.
    Unsupported,
    /// The runner has no structured report efix can ask for here; the console is the only
    /// channel.
    ConsoleOnly,
}

/// Where a command's per-test results came from, and what the channels said of each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ResultChannel {
    /// The runner recognised (`pytest`, `jest`, `vitest`, `node`, `mocha`, `cargo`, `tap`).
    pub runner: String,
    pub status: ChannelStatus,
    /// The arguments efix added to the command to get the report, with the file shown as
    /// `<report>`; the argv actually run is the outcome's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Why the console is the only channel, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Per-test results from the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<TestReport>,
    /// Where the console contradicts the report, or itself; each one refuses a proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<String>,
}

impl ResultChannel {
    /// Whether this channel makes the run a failure whatever its exit code: the report is
    /// missing or truncated, or the channels disagree.
    pub fn fails_run(&self) -> bool {
        matches!(
            self.status,
            ChannelStatus::Missing | ChannelStatus::Truncated
        ) || !self.disagreements.is_empty()
    }

    /// The per-test results the run can be held to, or `None` when there are none: a missing
    /// or truncated report means no test can be counted as having run.
    pub fn trusted(&self) -> Option<&TestReport> {
        match self.status {
            ChannelStatus::Read => self.report.as_ref(),
            _ => None,
        }
    }
}

/// A command about to run: the argv to run and, when a report was asked for, where.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub argv: Vec<String>,
    choice: Choice,
    /// Holds the report directory until the report is read; removed when dropped.
    dir: Option<tempfile::TempDir>,
}

impl Prepared {
    /// The directory the runner writes its report to, which must be writable for it.
    pub(crate) fn report_dir(&self) -> Option<&Path> {
        self.dir.as_ref().map(tempfile::TempDir::path)
    }
}

/// Plan the report for `argv`, in a fresh directory under `temp_base`. When the directory
/// cannot be made, the command runs as written and the console is the only channel.
pub(crate) fn prepare(argv: &[String], temp_base: &Path) -> Prepared {
    let unchanged = |choice| Prepared {
        argv: argv.to_vec(),
        choice,
        dir: None,
    };
    if matches!(plan::plan(argv, Path::new(REPORT_FILE)), Choice::Unknown) {
        return unchanged(Choice::Unknown);
    }
    let dir = match tempfile::Builder::new()
        .prefix("efix-report-")
        .tempdir_in(temp_base)
    {
        Ok(dir) => dir,
        Err(error) => {
            tracing::warn!(%error, "no report directory; reading the console only");
            return unchanged(Choice::Unknown);
        }
    };
    let path = dir.path().join(REPORT_FILE);
    let choice = plan::plan(argv, &path);
    if matches!(&choice, Choice::Report(plan) if plan.format == ReportFormat::MochaJson) {
        let reporter = dir.path().join(plan::MOCHA_REPORTER_FILE);
        if let Err(error) = std::fs::write(&reporter, plan::MOCHA_REPORTER) {
            tracing::warn!(%error, "could not write the mocha reporter; reading the console only");
            return unchanged(Choice::Unknown);
        }
    }
    match choice {
        Choice::Report(plan) => Prepared {
            argv: plan.argv.clone(),
            choice: Choice::Report(plan),
            dir: Some(dir),
        },
        other => unchanged(other),
    }
}

/// What a run's channels said.
#[derive(Debug)]
pub(crate) struct Observed {
    /// The per-test results to record: the console's when it was recognised (its names are
    /// the ones the rest of the run speaks), each test named by its report id where the report
    /// names it ([`identity`]), else the report's.
    pub tests: Option<TestReport>,
    pub channel: Option<ResultChannel>,
    /// The runner rejected the report's arguments: run the command again as written.
    pub rerun_as_written: bool,
}

/// Read the channels of a finished run: the report when one was asked for, and the
/// console's consistency. The report's text goes through the same redaction as the console
/// (`secrets`, the runner's rules) before it is read, so the channels are compared on the
/// same footing and the report stored in the evidence holds no secret either.
pub(crate) fn observe(
    prepared: &Prepared,
    outcome: &Outcome,
    root: &Path,
    secrets: &[Secret],
) -> Observed {
    let console = testreport::parse(&outcome.stdout, &outcome.stderr);
    match &prepared.choice {
        Choice::Report(plan) => {
            let path = prepared.report_dir().map(|dir| dir.join(REPORT_FILE));
            let added = plan
                .added
                .iter()
                .map(|arg| match prepared.report_dir() {
                    Some(dir) => arg
                        .replace(&dir.join(REPORT_FILE).display().to_string(), "<report>")
                        .replace(&dir.display().to_string(), "<report-dir>"),
                    None => arg.clone(),
                })
                .collect();
            let mut channel = ResultChannel {
                runner: plan.runner.to_owned(),
                status: ChannelStatus::Read,
                added,
                note: None,
                report: None,
                disagreements: Vec::new(),
            };
            let text = path
                .and_then(|path| std::fs::read_to_string(path).ok())
                .map(|text| redacted(secrets, text));
            let Some(text) = text else {
                if rejected_arguments(outcome, &plan.added) {
                    channel.status = ChannelStatus::Unsupported;
                    channel.note = Some(format!(
                        "this {} rejected `{}`; the console is the only channel",
                        plan.runner,
                        channel.added.join(" ")
                    ));
                    return Observed {
                        tests: console,
                        channel: Some(channel),
                        rerun_as_written: true,
                    };
                }
                channel.status = ChannelStatus::Missing;
                return Observed {
                    tests: console,
                    channel: Some(channel),
                    rerun_as_written: false,
                };
            };
            let report = read_report(&text, plan.format, plan.runner, root);
            let Some(report) = report else {
                channel.status = ChannelStatus::Truncated;
                return Observed {
                    tests: console,
                    channel: Some(channel),
                    rerun_as_written: false,
                };
            };
            if let Some(console) = &console {
                channel.disagreements = agree::disagreements(console, &report, &text);
            }
            // One test, one id: the console's tests take the report's ids where they match.
            let tests = match console {
                Some(console) => Some(identity::by_report_ids(console, &report)),
                None => Some(report.clone()),
            };
            channel.report = Some(report);
            Observed {
                tests,
                channel: Some(channel),
                rerun_as_written: false,
            }
        }
        Choice::ConsoleOnly { runner, reason } => Observed {
            channel: Some(ResultChannel {
                runner: (*runner).to_owned(),
                status: ChannelStatus::ConsoleOnly,
                added: Vec::new(),
                note: Some(reason.clone()),
                report: None,
                disagreements: console_findings(console.as_ref(), outcome),
            }),
            tests: console,
            rerun_as_written: false,
        },
        Choice::Unknown => {
            let findings = console_findings(console.as_ref(), outcome);
            let channel = (!findings.is_empty()).then(|| ResultChannel {
                runner: console
                    .as_ref()
                    .map(|report| report.format.clone())
                    .unwrap_or_default(),
                status: ChannelStatus::ConsoleOnly,
                added: Vec::new(),
                note: None,
                report: None,
                disagreements: findings,
            });
            Observed {
                tests: console,
                channel,
                rerun_as_written: false,
            }
        }
    }
}

/// A test command's run with its channels read.
#[derive(Debug)]
pub(crate) struct Run {
    pub outcome: Outcome,
    pub tests: Option<TestReport>,
    pub channel: Option<ResultChannel>,
}

/// Run a test command with its runner's structured report requested: the argv run gains the
/// report's arguments, the report's directory is writable for it (and only for it), and a
/// runner that rejects the arguments runs again as written, its console the only channel.
///
/// On the original source (`before_change`: the reproduction and the suites' baselines, where
/// no line of the change runs), a run that wrote no report runs again as written too, whether
/// it stopped before any test ran or after some: the report's arguments may be what stopped
/// it (a project's tests that read `process.argv` and refuse options they do not know), or
/// the project's own tests end the process before the runner writes its report (a jest suite
/// whose tests call `process.exit`). A run with the change never gets this second chance:
/// there a vanished report is the change's doing, so a change that makes the runner skip its
/// report is still refused. A command whose baseline ran as written runs as written after the
/// change too (`as_written`), so the before and after runs read the same channel.
pub(crate) fn run(
    spec: &CommandSpec,
    settings: &RunnerSettings,
    cancel: &AtomicBool,
    before_change: bool,
    as_written: bool,
) -> Result<Run, RunnerError> {
    // Its baseline ran as written (above): the runs after it must read the same channel.
    if as_written {
        let outcome = runner::run_cancellable(spec, settings, cancel)?;
        let tests = testreport::parse(&outcome.stdout, &outcome.stderr);
        return Ok(Run {
            outcome,
            tests,
            channel: None,
        });
    }
    let prepared = prepare(&spec.argv, &settings.sandbox.temp_base);
    let planned = CommandSpec {
        argv: prepared.argv.clone(),
        ..spec.clone()
    };
    let outcome = match prepared.report_dir() {
        Some(dir) => {
            let mut settings = settings.clone();
            settings.sandbox.writable.push(dir.to_path_buf());
            runner::run_cancellable(&planned, &settings, cancel)?
        }
        None => runner::run_cancellable(&planned, settings, cancel)?,
    };
    let mut observed = observe(&prepared, &outcome, &spec.cwd, &settings.secrets);
    let ran_no_test = observed
        .tests
        .as_ref()
        .is_none_or(|t| t.passed + t.failed + t.skipped == 0);
    if before_change
        && let Some(channel) = observed
            .channel
            .as_mut()
            .filter(|c| c.status == ChannelStatus::Missing)
    {
        let when = if ran_no_test {
            "stopped before any test ran"
        } else {
            "ended without writing its report"
        };
        channel.status = ChannelStatus::Unsupported;
        channel.note = Some(format!(
            "the run {when} with `{}` added, on the source as it was (before the change); it \
             ran again as written and its console is the only channel, before and after the \
             change",
            channel.added.join(" ")
        ));
        observed.rerun_as_written = true;
    }
    if !observed.rerun_as_written {
        return Ok(Run {
            outcome,
            tests: observed.tests,
            channel: observed.channel,
        });
    }
    tracing::info!(argv = ?prepared.argv, "the runner rejected the report's arguments; running the command as written");
    let outcome = runner::run_cancellable(spec, settings, cancel)?;
    let tests = testreport::parse(&outcome.stdout, &outcome.stderr);
    Ok(Run {
        outcome,
        tests,
        channel: observed.channel,
    })
}

/// A report's text redacted as the console was. Redaction belongs to what is stored and sent,
/// not to a test's identity; but the console reaches efix already redacted (the capture
/// redacts every byte before it is kept), so identity can only be compared on both channels
/// redacted alike. The rules are deterministic per text, so a name the two channels share is
/// still shared after redaction, and a name one channel invents is still its own. The
/// replacement `[REDACTED:<id>]` holds no quote, angle bracket or backslash, so a report
/// stays well formed; a redactor that cannot be built leaves the text as it is (the report is
/// then kept only in memory for the comparison and the evidence).
fn redacted(secrets: &[Secret], text: String) -> String {
    match runner::redact_text(secrets, &text) {
        Ok(redacted) => redacted,
        Err(error) => {
            tracing::warn!(%error, "the report could not be redacted");
            text
        }
    }
}

/// The report in `text`, or `None` when it is cut short or not the expected format.
fn read_report(
    text: &str,
    format: ReportFormat,
    runner: &'static str,
    root: &Path,
) -> Option<TestReport> {
    match format {
        ReportFormat::JunitXml => {
            // The scanner is tolerant; a report is whole only when its root element closed.
            let end = text.trim_end();
            let closed = end.ends_with("</testsuites>") || end.ends_with("</testsuite>");
            let mut report = testreport::parse_junit_xml(text).filter(|_| closed)?;
            report.format = runner.to_owned();
            Some(report)
        }
        ReportFormat::JestJson => {
            let format = if runner == "jest" { "jest" } else { "vitest" };
            testreport::parse_jest_json(text, format, root)
        }
        ReportFormat::MochaJson => testreport::parse_mocha_json(text, root),
    }
}

/// Whether the runner's output says it rejected one of the arguments efix added (an older
/// version without them), rather than failing on its own.
fn rejected_arguments(outcome: &Outcome, added: &[String]) -> bool {
    let text = format!("{}\n{}", outcome.stdout, outcome.stderr).to_lowercase();
    let complained = [
        "unrecognized arguments",
        "unrecognized option",
        "unknown option",
        "unknown argument",
        "bad option",
        "invalid option",
        "unrecognized cli parameter",
    ]
    .iter()
    .any(|phrase| text.contains(phrase));
    complained
        && added.iter().any(|arg| {
            let name = arg.split('=').next().unwrap_or(arg);
            let bare = name.trim_start_matches('-').to_lowercase();
            // `--outputFile.json` is reported as `outputFile`.
            let bare = bare.split('.').next().unwrap_or(&bare).to_owned();
            !bare.is_empty() && text.contains(&bare)
        })
}

/// Where a console that is its runner's only channel contradicts itself.
fn console_findings(console: Option<&TestReport>, outcome: &Outcome) -> Vec<String> {
    // A capture cut in the middle loses lines; its consistency cannot be judged.
    let Some(console) = console.filter(|_| !outcome.truncated) else {
        return Vec::new();
    };
    let lines = testreport::console_lines(&outcome.stdout, &outcome.stderr);
    match console.format.as_str() {
        "cargo" => console::libtest(&lines),
        "tap" => console::tap(&lines),
        _ => Vec::new(),
    }
}

/// Whether `path` is a report directory efix made (for tests of the sandbox's writable list).
#[cfg(test)]
pub(crate) fn is_report_dir(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("efix-report-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(stderr: &str) -> Outcome {
        Outcome {
            argv: Vec::new(),
            exit_code: Some(2),
            signal: None,
            timed_out: false,
            duration_ms: 0,
            stdout: String::new(),
            stderr: stderr.to_owned(),
            stdout_bytes: 0,
            stderr_bytes: stderr.len() as u64,
            truncated: false,
            redactions: Default::default(),
            sandbox: Default::default(),
        }
    }

    #[test]
    fn a_runner_that_rejects_the_report_arguments_is_told_from_one_that_failed() {
        let pytest = ["--junitxml=/r/report".to_owned()];
        let node = [
            "--test-reporter=junit".to_owned(),
            "--test-reporter-destination=/r/report".to_owned(),
        ];
        let cases = [
            (
                "ERROR: usage: pytest [options] [file_or_dir]\npytest: error: unrecognized arguments: --junitxml=/r/report\n",
                &pytest[..],
                true,
            ),
            (
                "node: bad option: --test-reporter-destination=/r/report\n",
                &node[..],
                true,
            ),
            // A test that fails printing the word "option" is not a rejection.
            (
                "AssertionError: unknown option 'x' in parse()\n",
                &pytest[..],
                false,
            ),
            ("E   assert 1 == 2\n", &pytest[..], false),
        ];
        let got: Vec<bool> = cases
            .iter()
            .map(|(stderr, added, _)| rejected_arguments(&outcome(stderr), added))
            .collect();
        let want: Vec<bool> = cases.iter().map(|(_, _, rejected)| *rejected).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_report_directory_is_made_only_for_a_runner_that_writes_one() {
        let base = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let argv = |text: &str| -> Vec<String> { text.split(' ').map(str::to_owned).collect() };
        let cargo = prepare(&argv("cargo test"), base.path());
        assert_eq!(
            (cargo.argv, cargo.dir.is_none()),
            (argv("cargo test"), true)
        );
        let pytest = prepare(&argv("pytest -q"), base.path());
        let Some(dir) = pytest.report_dir().map(Path::to_path_buf) else {
            panic!("no report directory for pytest")
        };
        assert!(is_report_dir(&dir) && dir.starts_with(base.path()));
        assert_eq!(
            pytest.argv,
            vec![
                "pytest".to_owned(),
                "-q".to_owned(),
                format!("--junitxml={}", dir.join(REPORT_FILE).display())
            ]
        );
        drop(pytest);
        assert!(!dir.exists());
    }
}
