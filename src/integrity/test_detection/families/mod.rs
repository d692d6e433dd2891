//! The static families of cheats beyond detecting the test run, read from the lines a change
//! adds to production code: looking at the caller (`introspection`), ending the process or
//! hooking its end outside an entry point (`exits`), reading test files (`reads`), equality
//! that always holds (`equality`), printing a runner's result lines (`spoofing`), more ways to
//! ask whether a runner is there (`runner`) and more ways to patch what the tests use
//! (`patching`).
//!
//! Every rule is about what the change adds: a line that was already in the file is never
//! read, and a file that already did the same thing before the change (a CLI module that
//! exits, a reporter that prints result lines) keeps doing it.

mod entry;
mod equality;
mod equality_tree;
mod exits;
mod introspection;
mod patching;
mod reads;
mod runner;
mod spoofing;

use super::added::{Added, Detection};
use super::code::Syntax;

/// Whether any family may find something in the changed middle (which holds every added
/// line): each names the words its patterns need.
pub(crate) fn screen(middle: &str, syntax: Syntax) -> bool {
    introspection::screen(middle, syntax)
        || exits::screen(middle, syntax)
        || reads::screen(middle)
        || equality::screen(middle, syntax)
        || spoofing::screen(middle)
        || runner::screen(middle, syntax)
        || patching::screen(middle, syntax)
}

/// Whether a family that reads the whole file around the added lines may find something:
/// an equality method whose body changed may have no word of its name on an added line.
pub(crate) fn screen_file(after: &str, syntax: Syntax) -> bool {
    equality_tree::screen(after, syntax)
}

/// The detections of every family in the added lines.
pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    let mut found = Vec::new();
    found.extend(introspection::detect(added, syntax));
    found.extend(exits::detect(added, syntax));
    found.extend(reads::detect(added));
    found.extend(equality::detect(added, syntax));
    found.extend(equality_tree::detect(added, syntax));
    found.extend(spoofing::detect(added));
    found.extend(runner::detect(added, syntax));
    found.extend(patching::detect(added, syntax));
    found
}

/// The families a change to one file is found in, for the families' tests.
#[cfg(test)]
fn families(
    path: &str,
    before: &str,
    after: &str,
) -> Vec<crate::integrity::test_detection::Family> {
    crate::integrity::test_detection::test_detections(path, Some(before), after)
        .into_iter()
        .map(|d| d.family)
        .collect()
}
