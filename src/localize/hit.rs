//! A hit: one piece of evidence that a tracked file is relevant, with its weight and the
//! reason a maintainer reads in `evidence.md`.

/// Evidence that a file is relevant, with its weight and a human reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    pub path: String,
    pub line: Option<u64>,
    pub weight: f64,
    pub reason: String,
    /// The hit only says "this file holds a failing test"; several such hits on one file
    /// are one fact and count once.
    pub names_failing_test: bool,
}

/// `path:line:column`, with what is known.
pub(crate) fn place(path: &str, line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!("{path}:{line}:{column}"),
        (Some(line), None) => format!("{path}:{line}"),
        _ => path.to_owned(),
    }
}
