//! `efix triage`: what a failed CI run left behind (JUnit XML reports, raw logs, or the logs
//! of a GitHub workflow run) becomes one group per cause, each with the command that
//! reproduces exactly its tests, as a job matrix for GitHub Actions and a Markdown table.
//!
//! Layout: `failure` (one failing test, the runners), `junit` (a strict, streaming reader of
//! JUnit reports that keeps each failure's text), `logs` (raw runner output, through
//! `testreport`), `cause` (the cause key of one failure), `selector` (the command per group),
//! `group` (grouping, ordering, the job limit), `render` (matrix JSON and Markdown).
//!
//! It never runs a test and never writes outside the output files it is given; GitHub is
//! reached through `publish` (the run's job logs, the open efix pull requests).

mod cause;
mod command;
mod error;
mod failure;
mod group;
mod junit;
mod logs;
mod render;
mod selector;

pub use cause::Rule;
pub use command::run;
pub use error::TriageError;
pub use failure::{Failure, Runner};
pub use group::{Group, Grouper, Options, Skipped, Triage, triage};
pub use junit::read_junit;
pub use logs::read_log;
pub use render::{markdown, matrix_json};
