//! Why a hunk found no place in its file, said so that a model can correct it: already
//! applied, out of order, or where the nearest candidate stops matching.

use super::{Attempt, Failure, Ws, attempts, match_at, old_side, ws_eq};
use crate::patch::model::Level;
use crate::patch::parse::{Hunk, HunkLine, Kind};
use crate::patch::text::{Lines, ws_runs_eq};
use crate::policy::Issue;

/// Explain why a hunk found no place: already applied, out of order, or the first mismatch.
pub(super) fn diagnose(
    path: &str,
    file: &Lines,
    hunk: &Hunk,
    n: usize,
    cursor: usize,
    prev_line: Option<u64>,
) -> Failure {
    let new_side: Vec<HunkLine> = hunk
        .lines
        .iter()
        .filter(|l| l.kind != Kind::Remove)
        .map(|l| HunkLine {
            kind: Kind::Context,
            ..l.clone()
        })
        .collect();
    let loose = Attempt {
        level: Level::BlankLines,
        ws: Ws::Trailing,
        indent: false,
        skip_blank: true,
        trim: (0, 0),
    };
    let new_old = old_side(&new_side);
    // Only added text can show a hunk is already in: a pure deletion's new side is bare
    // context, found wherever that context is.
    let adds_text = hunk
        .lines
        .iter()
        .any(|l| l.kind == Kind::Add && !l.text.trim().is_empty());
    if adds_text
        && let Some(p) =
            (0..file.lines.len()).find(|&p| match_at(file, p, &new_old, loose).is_some())
    {
        {
            return Failure {
                issue: Issue::new(
                    "apply.already-applied",
                    format!(
                        "hunk {n} of {path} is already in the file at line {}; do not resend \
                         changes that are already made",
                        p + 1
                    ),
                )
                .at_path(path)
                .at_line((p + 1) as u64),
                already_applied: true,
            };
        }
    }
    let exact_old = old_side(&hunk.lines);
    let offset = attempts()[1];
    if cursor > 0
        && let Some(p) = (0..cursor).find(|&p| match_at(file, p, &exact_old, offset).is_some())
    {
        return Failure {
            issue: Issue::new(
                "apply.overlap",
                format!(
                    "hunk {n} of {path} matches at line {} which is before or inside hunk {} \
                     (line {}); hunks must be in file order and must not overlap",
                    p + 1,
                    n - 1,
                    prev_line.unwrap_or(0)
                ),
            )
            .at_path(path)
            .at_line((p + 1) as u64),
            already_applied: false,
        };
    }
    let detail = first_mismatch(file, hunk)
        .unwrap_or_else(|| "no line of its context or `-` lines was found".to_owned());
    Failure {
        issue: Issue::new(
            "apply.no-match",
            format!(
                "hunk {n} of {path} (header line {}): context not found: {detail}; copy the \
                 context and `-` lines exactly from the numbered file",
                hunk.old_start
            ),
        )
        .at_path(path)
        .at_line(hunk.old_start.max(1) as u64),
        already_applied: false,
    }
}

/// The nearest place where the hunk's first old line that the file has occurs, and where the
/// hunk stops matching from there.
fn first_mismatch(file: &Lines, hunk: &Hunk) -> Option<String> {
    let old: Vec<&HunkLine> = hunk
        .lines
        .iter()
        .filter(|l| l.kind != Kind::Add && !l.text.trim().is_empty())
        .collect();
    let hint = hunk.old_start.saturating_sub(1);
    let (skipped, p) = old.iter().enumerate().find_map(|(k, h)| {
        (0..file.lines.len())
            .filter(|&p| ws_runs_eq(file.lines[p].text, &h.text))
            .min_by_key(|p| p.abs_diff(hint))
            .map(|p| (k, p))
    })?;
    let missing = (skipped > 0).then(|| {
        format!(
            "its first {} is not in the file",
            if skipped == 1 {
                format!("line {:?}", old[0].text)
            } else {
                format!("{skipped} lines (from {:?})", old[0].text)
            }
        )
    });
    let file_nonblank = file.lines[p..]
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.text.trim().is_empty())
        .map(|(i, l)| (i + p, l));
    let mut rest = old[skipped..].iter();
    for ((at, fl), h) in file_nonblank.zip(rest.by_ref()) {
        // As the ladder compares: indentation counts (a uniform shift aside).
        let ok = if h.kind == Kind::Remove {
            h.text == fl.text
        } else {
            ws_eq(Ws::Runs, &h.text, fl.text)
        };
        if !ok {
            let mismatch = format!(
                "the nearest start is line {} but line {} is {:?} where the hunk has {:?}",
                p + 1,
                at + 1,
                fl.text,
                h.text
            );
            return Some(match missing {
                Some(m) => format!("{m}; {mismatch}"),
                None => mismatch,
            });
        }
    }
    if let Some(h) = rest.next() {
        return Some(format!("the file ends before {:?}", h.text));
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::super::apply_hunks;
    use crate::patch::model::Level;
    use crate::patch::parse::parse;

    fn no_match_message(file: &str, diff: &str) -> String {
        let patches = parse(diff).expect("the test diff parses");
        let failure = apply_hunks("f.py", file, &patches[0].hunks).expect_err("must not apply");
        failure.issue.message
    }

    #[test]
    fn the_mismatch_report_skips_context_the_file_does_not_have() {
        let file = "def f(x):\n    y = g(x)\n    if y:\n        return y\n    return 0\n";
        let diff = "--- a/f.py\n+++ b/f.py\n@@ -1,5 +1,5 @@\n def f(x, z):\n     y = g(x)\n-    if y:\n+    if y and z:\n       return y\n     return 0\n";
        assert_eq!(
            no_match_message(file, diff),
            "hunk 1 of f.py (header line 1): context not found: its first line \"def f(x, z):\" \
             is not in the file; the nearest start is line 2 but line 4 is \"        return y\" \
             where the hunk has \"      return y\"; copy the context and `-` lines exactly from \
             the numbered file"
        );
    }

    #[test]
    fn a_shift_shown_only_by_removed_lines_is_not_applied() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let shifted = "--- a/f.py\n+++ b/f.py\n@@ -2,2 +2,2 @@\n def f(self):\n-    return 1\n+    return 2\n";
        let patches = parse(shifted).expect("parses");
        let applied = apply_hunks("f.py", file, &patches[0].hunks).expect("a whole-hunk shift");
        assert_eq!(applied.hunks[0].level, Level::Indentation);
        assert_eq!(
            applied.text,
            "class A:\n    def f(self):\n        return 2\n"
        );
        let bare = "--- a/f.py\n+++ b/f.py\n@@ -3 +3 @@\n-    return 1\n+    return 2\n";
        assert!(no_match_message(file, bare).contains("context not found"));
    }
}
