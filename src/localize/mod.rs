//! Deterministic localization: paths and line numbers in failure output, failing test names
//! mapped to files, identifiers searched in tracked files, ranked into candidates.
//!
//! The engine's hypothesis is merged later by the pipeline; this module never asks a model
//! and never writes. It reads only tracked files, within fixed bounds.

mod extract;
mod rank;
mod resolve;
mod search;

#[cfg(test)]
mod tests;

pub use extract::{Location, extract_locations};
pub use rank::{Candidate, localize};
