//! Parsing test-runner output into per-test results: cargo test (libtest and nextest), pytest,
//! jest, vitest, mocha, go test (text and `-json`), node:test (spec and TAP), tape and other TAP,
//! Python's unittest and JUnit XML.
//!
//! Pure text in, structured results out; it never runs anything and never decides what a
//! result means for the pipeline (that is `pipeline`'s job). It also owns the before/after
//! comparison and the best-effort extraction of test filters from a command's argv.
//!
//! Every parser is tolerant: unknown lines are skipped, nothing panics on any input, and a
//! text with no recognised signal gives `None` so the caller falls back to the exit code.

mod argv;
mod cargo;
mod compare;
mod detect;
pub(crate) mod django;
mod duration;
mod gotest;
mod jest;
mod jest_json;
mod junit;
mod mocha;
mod mocha_json;
mod model;
mod pytest;
mod select;
mod tap;
mod text;
mod unittest;
mod volatile;

pub use argv::requested_tests;
pub(crate) use compare::group_status;
pub use compare::{Comparison, compare};
pub(crate) use detect::console_lines;
pub use detect::parse;
pub(crate) use duration::reported_ms;
pub use jest_json::parse_jest_json;
pub use junit::parse_junit_xml;
pub(crate) use junit::unescape as xml_unescape;
pub use mocha_json::parse_mocha_json;
pub(crate) use model::{NO_TEST_RAN, combined};
pub use model::{TestCase, TestReport, TestStatus};
pub use volatile::align as align_volatile;

#[cfg(test)]
mod fixture_tests;
