//! [`TriageError`]: what stops `efix triage` before it can print a matrix.

use std::path::PathBuf;

/// Errors of `efix triage`. Each names the input and, for a malformed report, the line, so
/// the user knows which file to regenerate or which flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    /// An input file or directory cannot be read; the user checks the path and permissions.
    #[error("read {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    /// A JUnit file is not well-formed where triage needs it to be (truncated, a tag that
    /// is never closed, an unterminated attribute); the user regenerates the report, or
    /// passes the complete file.
    #[error("read the JUnit report {}:{line}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A file given as JUnit holds no `testsuite` or `testcase`; the user passes the
    /// runner's JUnit output (or the log with `--log`).
    #[error(
        "read the JUnit report {}: it holds no <testsuite> or <testcase>; pass a JUnit XML \
         file (pytest --junitxml, jest-junit, vitest --reporter=junit, cargo-nextest's junit, \
         go-junit-report or gotestsum --junitfile), or a runner's log with --log",
        path.display()
    )]
    NotJunit { path: PathBuf },
    /// A log holds no output of a runner efix knows; the user passes the test step's log or
    /// the runner's JUnit report.
    #[error(
        "read the log {}: no test runner's output was recognised in it (cargo test, nextest, \
         pytest, jest, vitest, go test, node --test); pass the test step's own log, or the \
         runner's JUnit report with --junit",
        path.display()
    )]
    UnknownLog { path: PathBuf },
    /// A log is of a runner triage cannot build a selector for (mocha, unittest, a JUnit
    /// document printed in a log); the user passes `--runner` or the runner's JUnit report.
    #[error(
        "read the log {}: it is {format} output, for which triage has no test selector; pass \
         --runner (pytest, jest, vitest, cargo, go or node), or the JUnit report with --junit",
        path.display()
    )]
    UnsupportedLog { path: PathBuf, format: String },
    /// The runner of a report cannot be told from its content; the user names it.
    #[error(
        "tell which runner wrote {}: its content does not say; pass --runner \
         (pytest, jest, vitest, cargo, go or node)",
        path.display()
    )]
    UnknownRunner { path: PathBuf },
    /// Reading a workflow run or the open pull requests on GitHub failed.
    #[error("{0}")]
    Github(#[from] crate::publish::PublishError),
}
