//! The entry point: which lines a change adds to production code, their code without
//! comments, and the detector for the file's language.

use similar::{DiffOp, TextDiff};

use super::added::{Added, Detection};
use super::code::{Syntax, code_lines};
use super::{families, go, javascript, python, rust};
use crate::integrity::test_policy::is_test_path;

/// The syntax of a production file the detectors read; `None` for test files and languages
/// they do not know.
fn syntax(path: &str) -> Option<Syntax> {
    if is_test_path(path) {
        return None;
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    Some(match ext {
        "py" => Syntax::Python,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Syntax::JavaScript,
        "rs" => Syntax::Rust,
        "go" => Syntax::Go,
        _ => return None,
    })
}

/// Whether [`test_detections`] reads a change to `path` at all, so a caller can skip
/// decoding its contents.
pub fn is_read(path: &str) -> bool {
    syntax(path).is_some()
}

/// Lines `after` adds to a production file that detect or patch the test run, at most one
/// finding per line. Test files give none.
pub fn test_detections(path: &str, before: Option<&str>, after: &str) -> Vec<Detection> {
    let Some(syntax) = syntax(path) else {
        return Vec::new();
    };
    let before = before.unwrap_or("");
    let middle = Middle::of(before, after);
    // Most changes mention nothing a detector looks for: the changed middle, which holds every
    // added line, is searched once before any line diff (diffing large files showed in the
    // corpus bench).
    let screened = match syntax {
        Syntax::Python => python::screen(middle.after, after),
        Syntax::JavaScript => true,
        Syntax::Rust => rust::screen(middle.after),
        Syntax::Go => go::screen(middle.after),
    } || families::screen(middle.after, syntax)
        || families::screen_file(after, syntax);
    if !screened {
        return Vec::new();
    }
    let lines = middle.added_lines();
    if lines.is_empty() {
        return Vec::new();
    }
    let code = code_lines(after, syntax, &lines);
    let added = Added {
        path,
        before,
        after,
        lines,
        code,
    };
    let mut found = match syntax {
        Syntax::Python => python::detect(&added),
        Syntax::JavaScript => javascript::detect(&added),
        Syntax::Rust => rust::detect(&added),
        Syntax::Go => go::detect(&added),
    };
    found.extend(families::detect(&added, syntax));
    // One finding per line, of the most precise family.
    found.sort_by_key(|d| (d.line, d.family));
    found.dedup_by_key(|d| d.line);
    found
}

/// The part of a change between its common head and tail, as whole lines.
struct Middle<'a> {
    before: &'a str,
    after: &'a str,
    /// Lines of the common head: the middle's first line is this line of `after`.
    skipped: usize,
}

impl<'a> Middle<'a> {
    /// The patch engine's byte comparison finds the common head and tail, much cheaper than
    /// splitting whole files into lines.
    fn of(before: &'a str, after: &'a str) -> Middle<'a> {
        let (skipped, start, tail) = crate::patch::middle_bounds(before, after);
        Middle {
            before: before.get(start..before.len() - tail).unwrap_or(""),
            after: after.get(start..after.len() - tail).unwrap_or(""),
            skipped,
        }
    }

    /// 0-based indices (in the whole file) of the lines the change adds.
    fn added_lines(&self) -> Vec<usize> {
        let old: Vec<&str> = self.before.split_inclusive('\n').collect();
        let new: Vec<&str> = self.after.split_inclusive('\n').collect();
        // A new file (or a block added between common lines) needs no diff.
        let indices: Vec<usize> = if old.is_empty() {
            (0..new.len()).collect()
        } else {
            TextDiff::from_slices(&old, &new)
                .ops()
                .iter()
                .filter(|op| !matches!(op, DiffOp::Equal { .. } | DiffOp::Delete { .. }))
                .flat_map(|op| op.new_range())
                .collect()
        };
        indices.into_iter().map(|i| i + self.skipped).collect()
    }
}

/// 0-based indices of the lines of `after` that are not in `before` (the reads matcher counts
/// only what a change adds, as the families do).
pub(crate) fn added_lines(before: &str, after: &str) -> Vec<usize> {
    Middle::of(before, after).added_lines()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain version: a line diff of the whole texts.
    fn added_lines_by_whole_diff(before: &str, after: &str) -> Vec<usize> {
        let old: Vec<&str> = before.split_inclusive('\n').collect();
        let new: Vec<&str> = after.split_inclusive('\n').collect();
        TextDiff::from_slices(&old, &new)
            .ops()
            .iter()
            .filter(|op| !matches!(op, DiffOp::Equal { .. } | DiffOp::Delete { .. }))
            .flat_map(|op| op.new_range())
            .collect()
    }

    #[test]
    fn the_middle_diff_adds_the_lines_a_whole_diff_adds() {
        let texts = [
            "",
            "a",
            "a\n",
            "a\nb\n",
            "a\nb",
            "a\r\nb\r\n",
            "x\na\nb\n",
            "a\nb\nx\n",
            "a\nab\nb\n",
            "ab\nb\n",
            "a\n\nb\n",
            "b\na\n",
            "a\nb\na\nb\n",
        ];
        for before in texts {
            for after in texts {
                // Both are minimal diffs; where several exist they may align differently, so
                // compare the added lines' texts, not their places.
                let lines: Vec<&str> = after.lines().collect();
                let text = |indices: Vec<usize>| {
                    let mut t: Vec<&str> = indices.iter().map(|&i| lines[i]).collect();
                    t.sort_unstable();
                    t
                };
                assert_eq!(
                    text(added_lines(before, after)),
                    text(added_lines_by_whole_diff(before, after)),
                    "{before:?} -> {after:?}"
                );
            }
        }
    }

    #[test]
    fn only_added_lines_are_found_with_their_line_numbers() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nx\nd\ne\n";
        assert_eq!(added_lines(before, after), vec![1, 3, 5]);
        assert_eq!(added_lines("", "x\ny\n"), vec![0, 1]);
        assert_eq!(added_lines("a\nbc\n", "a\nbd\n"), vec![1]);
        assert!(added_lines(before, before).is_empty());
    }
}
