//! Integrity: the checks that keep a change from emptying the proof without fixing anything.
//!
//! The patch-time policy (`policy::test_integrity`, `policy::harness`,
//! `policy::test_detection`) reads the change; the checks here add what a model cannot see
//! coming: canary runs in the same session as the proof, results taken from a channel the
//! code under test cannot write, protection of whatever a runner discovers on its own, and
//! static families of cheats in the non-test side of a change. Each check is data (an
//! [`Issue`](crate::policy::Issue) with its own rule id), never an error.

pub mod channel;
pub mod completeness;
pub(crate) mod proof;
