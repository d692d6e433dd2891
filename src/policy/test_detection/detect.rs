//! The entry point: which lines a change adds to production code, their code without
//! comments, and the detector for the file's language.

use similar::{DiffOp, TextDiff};

use super::added::{Added, Detection};
use super::code::{Syntax, code_lines};
use super::{go, javascript, python, rust};
use crate::policy::test_integrity::is_test_path;

/// Lines `after` adds to a production file that detect or patch the test run, at most one
/// finding per line. Test files give none.
pub fn test_detections(path: &str, before: Option<&str>, after: &str) -> Vec<Detection> {
    if is_test_path(path) {
        return Vec::new();
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let syntax = match ext {
        "py" => Syntax::Python,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Syntax::JavaScript,
        "rs" => Syntax::Rust,
        "go" => Syntax::Go,
        _ => return Vec::new(),
    };
    let before = before.unwrap_or("");
    let lines = added_lines(before, after);
    if lines.is_empty() {
        return Vec::new();
    }
    let added = Added {
        path,
        before,
        after,
        lines,
        code: code_lines(after, syntax),
    };
    let mut found = match syntax {
        Syntax::Python => python::detect(&added),
        Syntax::JavaScript => javascript::detect(&added),
        Syntax::Rust => rust::detect(&added),
        Syntax::Go => go::detect(&added),
    };
    found.sort_by_key(|d| d.line);
    found.dedup_by_key(|d| d.line);
    found
}

/// 0-based indices of the lines of `after` that are not in `before`: a line diff over the
/// changed middle only (the common head and tail are most of a file).
fn added_lines(before: &str, after: &str) -> Vec<usize> {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let diff = TextDiff::from_slices(&old[head..old.len() - tail], &new[head..new.len() - tail]);
    diff.ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. } | DiffOp::Delete { .. }))
        .flat_map(|op| op.new_range())
        .map(|i| i + head)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_added_lines_are_found_with_their_line_numbers() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nx\nd\ne\n";
        assert_eq!(added_lines(before, after), vec![1, 3, 5]);
        assert_eq!(added_lines("", "x\ny\n"), vec![0, 1]);
        assert!(added_lines(before, before).is_empty());
    }
}
