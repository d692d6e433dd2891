//! efix: turn a failing command into a proven fix.
//!
//! The library owns everything; `main.rs` only sets up logging, calls [`run`] and turns the
//! result into an exit code. Modules follow the data flow of ARCHITECTURE §2:
//! `cli -> config -> pipeline/{reproduce,localize,fix,prevent,prove} -> report`, with `runner`,
//! `patch`, `policy`, `engine`, `evidence`, `git` and `testreport` beside it, and `publish`
//! (GitHub delivery) after it.

pub mod cli;
pub mod config;
pub mod engine;
pub mod evidence;
pub mod exit;
pub mod git;
pub mod init;
pub mod integrity;
pub mod localize;
pub(crate) mod nofollow;
pub mod patch;
pub mod pipeline;
pub mod policy;
pub mod prompt;
pub mod publish;
pub mod report;
pub mod runner;
pub mod testreport;
pub mod triage;

mod app;

pub use app::run;
pub use exit::ExitStatus;
