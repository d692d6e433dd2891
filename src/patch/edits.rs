//! Structured edits (`{"edits":[{"path","old_text","new_text"}]}`): `old_text` must occur
//! exactly once; then the same whitespace ladder as hunks (trailing whitespace, whitespace
//! runs, uniform indentation) on whole lines. Empty `old_text` creates a file.
//!
//! It works on one file's text at a time; paths and writing are the caller's.

use crate::patch::model::{HunkReport, Level};
use crate::patch::text::{Lines, collapse_ws, indent_len};
use crate::policy::Issue;

/// How many line numbers an ambiguity message lists.
const MAX_LISTED: usize = 8;

/// Apply one edit to `content`; returns the new content and how it landed.
pub(crate) fn apply_edit(
    path: &str,
    index: usize,
    content: &str,
    old: &str,
    new: &str,
) -> Result<(String, HunkReport), Issue> {
    let report = |level, line: usize, shift: i64| HunkReport {
        index,
        level,
        header_line: None,
        line: line as u64,
        dropped_context: 0,
        indent_shift: shift,
    };
    let crlf = Lines::split(content).default_eol == "\r\n";
    let (old, new) = if crlf && !old.contains("\r\n") {
        (old.replace('\n', "\r\n"), new.replace('\n', "\r\n"))
    } else {
        (old.to_owned(), new.to_owned())
    };
    let starts: Vec<usize> = content
        .match_indices(old.as_str())
        .map(|(i, _)| i)
        .collect();
    let line_of = |byte: usize| content[..byte].matches('\n').count() + 1;
    match starts.as_slice() {
        [at] => {
            let text = format!("{}{}{}", &content[..*at], new, &content[at + old.len()..]);
            return Ok((text, report(Level::Exact, line_of(*at), 0)));
        }
        [] => {}
        many => {
            return Err(ambiguous(
                path,
                index,
                many.iter().map(|&b| line_of(b)).collect(),
            ));
        }
    }
    for level in [
        Level::TrailingWhitespace,
        Level::WhitespaceRuns,
        Level::Indentation,
    ] {
        let found = fuzzy_matches(content, &old, level);
        match found.as_slice() {
            [(start, end, shift)] => {
                let text = replace_lines(content, *start, *end, &new, *shift);
                return Ok((text, report(level, start + 1, *shift)));
            }
            [] => {}
            many => {
                return Err(ambiguous(
                    path,
                    index,
                    many.iter().map(|m| m.0 + 1).collect(),
                ));
            }
        }
    }
    if !new.is_empty() && content.matches(new.as_str()).count() == 1 {
        let line = content.find(new.as_str()).map_or(1, line_of);
        return Err(Issue::new(
            "edit.already-applied",
            format!(
                "edit {index} of {path}: old_text is absent but new_text is already there (line \
                 {line}); do not resend changes that are already made"
            ),
        )
        .at_path(path)
        .at_line(line as u64));
    }
    Err(not_found(path, index, content, &old))
}

fn ambiguous(path: &str, index: usize, lines: Vec<usize>) -> Issue {
    let listed: Vec<String> = lines
        .iter()
        .take(MAX_LISTED)
        .map(|l| l.to_string())
        .collect();
    Issue::new(
        "edit.ambiguous",
        format!(
            "edit {index} of {path}: old_text occurs {} times (lines {}); include more \
             surrounding lines so it occurs exactly once",
            lines.len(),
            listed.join(", ")
        ),
    )
    .at_path(path)
    .at_line(lines.first().copied().unwrap_or(1) as u64)
}

fn not_found(path: &str, index: usize, content: &str, old: &str) -> Issue {
    let first = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let nearest = content
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (similar::TextDiff::from_chars(l.trim(), first).ratio(), i, l))
        .filter(|(r, _, _)| *r >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let hint = match nearest {
        Some((_, i, l)) => format!("; the closest line is {} : {:?}", i + 1, l.trim()),
        None => String::new(),
    };
    let mut issue = Issue::new(
        "edit.not-found",
        format!(
            "edit {index} of {path}: old_text was not found{hint}; copy old_text exactly from \
             the file"
        ),
    )
    .at_path(path);
    if let Some((_, i, _)) = nearest {
        issue = issue.at_line(i as u64 + 1);
    }
    issue
}

/// Line windows that match `old` at `level`: `(first line, end line, indent shift)`.
fn fuzzy_matches(content: &str, old: &str, level: Level) -> Vec<(usize, usize, i64)> {
    let file: Vec<&str> = content.lines().collect();
    let want: Vec<&str> = old.lines().collect();
    if want.is_empty() || want.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for p in 0..file.len().saturating_sub(want.len() - 1) {
        let mut shift: Option<i64> = None;
        let ok = want.iter().enumerate().all(|(k, w)| {
            let f = file[p + k];
            match level {
                Level::TrailingWhitespace => f.trim_end() == w.trim_end(),
                Level::WhitespaceRuns => {
                    indent_len(f) == indent_len(w) && collapse_ws(f) == collapse_ws(w)
                }
                _ => {
                    if f.trim().is_empty() || w.trim().is_empty() {
                        return f.trim().is_empty() && w.trim().is_empty();
                    }
                    let d = indent_len(f) as i64 - indent_len(w) as i64;
                    collapse_ws(f) == collapse_ws(w) && *shift.get_or_insert(d) == d
                }
            }
        });
        if ok && (level != Level::Indentation || shift.unwrap_or(0) != 0) {
            out.push((p, p + want.len(), shift.unwrap_or(0)));
        }
    }
    out
}

fn replace_lines(content: &str, start: usize, end: usize, new: &str, shift: i64) -> String {
    let lines = Lines::split(content);
    let eol = lines.default_eol;
    let mut out = String::new();
    for l in &lines.lines[..start] {
        out.push_str(l.text);
        out.push_str(l.eol);
    }
    let last_eol = lines.lines.get(end - 1).map_or(eol, |l| l.eol);
    let new_lines: Vec<&str> = new.lines().collect();
    for (k, l) in new_lines.iter().enumerate() {
        let l = l.strip_suffix('\r').unwrap_or(l);
        if shift > 0 && !l.trim().is_empty() {
            out.push_str(&" ".repeat(shift as usize));
            out.push_str(l);
        } else if shift < 0 {
            let drop = ((-shift) as usize).min(indent_len(l));
            out.extend(l.chars().skip(drop));
        } else {
            out.push_str(l);
        }
        out.push_str(if k + 1 == new_lines.len() {
            last_eol
        } else {
            eol
        });
    }
    for l in &lines.lines[end..] {
        out.push_str(l.text);
        out.push_str(l.eol);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_old_text_is_replaced_and_located() {
        let got =
            apply_edit("a.py", 1, "a\nb\nc\n", "b\n", "B\n").map(|(t, r)| (t, r.line, r.level));
        assert_eq!(got, Ok(("a\nB\nc\n".into(), 2, Level::Exact)));
    }

    #[test]
    fn repeated_old_text_is_rejected_with_every_line() {
        let err = apply_edit("a.py", 1, "x\ny\nx\n", "x", "z").err();
        assert_eq!(
            err.map(|i| i.message),
            Some(
                "edit 1 of a.py: old_text occurs 2 times (lines 1, 3); include more surrounding \
                 lines so it occurs exactly once"
                    .into()
            )
        );
    }

    #[test]
    fn indentation_shift_is_applied_to_the_new_text() {
        let content = "def f():\n    if x:\n        return 1\n";
        let got = apply_edit(
            "a.py",
            1,
            content,
            "if x:\n    return 1\n",
            "if y:\n    return 2\n",
        )
        .map(|(t, r)| (t, r.level, r.indent_shift));
        assert_eq!(
            got,
            Ok((
                "def f():\n    if y:\n        return 2\n".into(),
                Level::Indentation,
                4
            ))
        );
    }

    #[test]
    fn absent_old_text_names_the_closest_line() {
        let err = apply_edit(
            "a.py",
            2,
            "def compute(x):\n    return x\n",
            "def compute(y):",
            "",
        )
        .err();
        assert_eq!(
            err.map(|i| (i.rule, i.line)),
            Some(("edit.not-found".into(), Some(1)))
        );
    }
}
