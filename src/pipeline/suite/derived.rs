//! What a runner's suites derive to, shared by the generic runners (`known`) and Django's
//! (`django`), so neither imports the other's helpers.

use std::path::Path;

/// What the pipeline may run to guard against regressions, derived from the reproduction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derived {
    /// The whole suite of the reproduction's runner.
    pub whole: Vec<String>,
    /// The same runner on the test directory that holds the reproduction's tests, with only
    /// the options the runner needs; `None` when it would be the whole suite or the
    /// reproduction itself.
    pub root: Option<Vec<String>>,
    /// The reproduction's own files or targets; `None` when there is none narrower than the
    /// whole suite that is not the reproduction itself.
    pub narrow: Option<Vec<String>>,
}

/// The module part of a unittest id (`tests.test_a.TestA.test_b` → `tests.test_a`): the
/// longest dotted prefix that names a file under `root`; file paths stay as they are.
pub(crate) fn unittest_module(id: &str, root: &Path) -> String {
    if id.ends_with(".py") || id.contains('/') {
        return id.to_owned();
    }
    let parts: Vec<&str> = id.split('.').collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("."))
        .find(|module| {
            root.join(format!("{}.py", module.replace('.', "/")))
                .is_file()
        })
        .unwrap_or_else(|| id.to_owned())
}
