//! Deterministic localization: paths and line numbers in failure output, failing test names
//! mapped to files, the failing tests' imports and calls followed to the code they exercise,
//! and the names error messages talk about resolved to their definitions; ranked into
//! candidates, each with the reasons a maintainer reads in `evidence.md`.
//!
//! The engine's hypothesis is merged later by the pipeline; this module never asks a model
//! and never writes. It reads only tracked files: every source file once per run, through
//! the source index, and a few files whole, within fixed bounds.

mod calls;
mod candidate;
mod defs;
mod extract;
mod follow;
mod frames;
mod hit;
mod imports;
mod index;
mod names;
mod phrases;
mod rank;
mod reach;
mod related;
mod resolve;
mod search;
mod strings;
mod target;
mod tree;

#[cfg(test)]
mod follow_tests;
#[cfg(test)]
mod related_tests;
#[cfg(test)]
mod tests;

pub use candidate::Candidate;
pub(crate) use extract::strip_ansi;
pub use extract::{Location, extract_locations};
pub use rank::localize;
pub use related::{Related, Selection, related_tests};
pub use target::{Repository, Target, Targets, list_files};
