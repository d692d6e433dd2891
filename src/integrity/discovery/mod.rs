//! Protection by discovery rules: what a runner or an interpreter loads without being
//! imported by name, found from the repository as the change leaves it, beyond the file names
//! and manifest sections of [`super::harness`]:
//!
//! - a new Python module or package whose name shadows the standard library, a test runner
//!   or an installed dependency, where it lands on the import path (`shadowing`);
//! - a new `.js`/`.mjs`/`.cjs`/`.jsx` beside a `.ts`/`.tsx` of the same stem, which vite and
//!   vitest resolve first (`shadowing`);
//! - a setup file or plugin that a runner's configuration names (jest's and vitest's
//!   `setupFiles`, `globalSetup`, `testEnvironment`, mocha's `require`, pytest's `-p` plugins
//!   and `pytest_plugins`) (`setup_files`).
//!
//! The first two are `check.shadowing`, the last `check.test-harness`. Reads only the files it
//! names through the patch engine's [`FileSource`]; runs nothing.

mod names;
mod setup_files;
mod shadowing;

use crate::patch::{FileChange, FileSource};
use crate::policy::Issue;

/// The discovery issues of a change.
pub(crate) fn discovery_issues(changes: &[FileChange], source: &dyn FileSource) -> Vec<Issue> {
    let mut issues = shadowing::issues(changes, source);
    issues.extend(setup_files::issues(changes, source));
    issues
}

/// The text of `path` as the change leaves it: the change's content, else the file's.
pub(crate) fn after_text(
    path: &str,
    changes: &[FileChange],
    source: &dyn FileSource,
) -> Option<String> {
    if let Some(change) = changes.iter().find(|c| c.path == path) {
        return change
            .after
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
    }
    source
        .read(path)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Whether `path` exists as the change leaves it.
pub(crate) fn exists_after(path: &str, changes: &[FileChange], source: &dyn FileSource) -> bool {
    match changes.iter().find(|c| c.path == path) {
        Some(change) => change.after.is_some(),
        None => source.read(path).ok().flatten().is_some(),
    }
}
