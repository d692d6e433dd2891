//! Suites derived from the reproduction when none is configured, so the proof covers the
//! repository's own tests and a fix that breaks a test elsewhere is caught.
//!
//! A derivation is a ladder of forms, widest first: for a runner efix knows (`known`), its
//! whole suite, the same runner on the test directory holding the reproduction's tests
//! (`root`), and the reproduction's own files or targets; for any other command (`widen`),
//! the same program with no selector, then the reproduction's selector widened step by step.
//! The pipeline runs them in turn before the fix until one establishes a baseline
//! (`pipeline/baseline.rs`).
//!
//! This module only computes argv; it runs nothing and decides nothing about results.

mod count;
mod derived;
mod django;
mod forms;
mod known;
mod listing;
mod options;
mod related;
mod root;
mod widen;

#[cfg(test)]
mod tests;

pub(crate) use count::count;
pub(crate) use forms::{Derivation, Form, derive};
pub(crate) use listing::{Listing, listing};
pub(crate) use related::runner as related_runner;
