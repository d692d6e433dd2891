//! One failing test as triage sees it, whatever the input it came from, and the runners
//! whose selector syntax triage knows.

use serde::Serialize;

/// The test runners triage can build a reproduction command for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    /// pytest: node ids (`tests/test_a.py::TestB::test_c[1]`).
    Pytest,
    /// jest: `jest FILE -t PATTERN`.
    Jest,
    /// vitest: `vitest run FILE -t PATTERN`.
    Vitest,
    /// cargo test or cargo-nextest: `cargo test -p CRATE --test TARGET -- --exact NAME`.
    Cargo,
    /// go test: `go test -run '^(A|B)$' ./pkg`.
    Go,
    /// node:test: `node --test --test-name-pattern PATTERN FILE`.
    Node,
}

impl Runner {
    /// The runner's name as `--runner` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::Cargo => "cargo",
            Runner::Go => "go",
            Runner::Node => "node",
        }
    }
}

/// One failing test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub runner: Runner,
    /// The name the runner's selector takes: a pytest node id, a cargo test path, the full
    /// name of a jest, vitest or node test (its describe blocks and title, space-separated
    /// for jest and vitest), a go test name (`TestA` or `TestA/sub`).
    pub name: String,
    /// Where the test lives, as the selector needs it: the test file (pytest, jest, vitest,
    /// node), the test binary (`crate`, `crate::target`, `crate::bin/name` for cargo), the
    /// package import path (go). `None` when the input does not say.
    pub scope: Option<String>,
    /// The failure's text: message, stack or traceback, captured output (bounded, see
    /// [`MAX_TEXT_BYTES`]).
    pub text: String,
    /// The failure's one-line message when the input has a separate one (JUnit `message`).
    pub message: Option<String>,
}

/// At most this much of a failure's text is kept: the head and the tail (a Python
/// traceback ends with the deepest frame, a JS stack starts with it).
pub const MAX_TEXT_BYTES: usize = 32 * 1024;

/// `text` cut to [`MAX_TEXT_BYTES`] by dropping its middle, at character boundaries.
pub(crate) fn bounded(text: String) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    let half = MAX_TEXT_BYTES / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let mut out = String::with_capacity(MAX_TEXT_BYTES + 8);
    out.push_str(&text[..head]);
    out.push_str("\n[...]\n");
    out.push_str(&text[tail..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_keeps_head_and_tail_of_long_text() {
        let text = format!(
            "{}{}{}",
            "a".repeat(40_000),
            "é".repeat(10),
            "z".repeat(40_000)
        );
        let cut = bounded(text);
        assert!(cut.len() <= MAX_TEXT_BYTES + 8);
        assert!(cut.starts_with('a') && cut.ends_with('z') && cut.contains("[...]"));
    }
}
