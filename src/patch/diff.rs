//! The normalized unified diff of a set of file changes, and its statistics, both computed
//! with `similar` so evidence always shows a diff whatever form the model used.
//!
//! It does not read or write files.

use std::borrow::Cow;

use similar::udiff::UnifiedHunkHeader;
use similar::{DiffOp, TextDiff};

use crate::patch::git_quote::quote;
use crate::patch::model::FileChange;
use crate::patch::text::{lossless_str, middle_bounds};

/// Lines of context around each change in the normalized diff.
const CONTEXT_LINES: usize = 3;
/// Extra equal lines diffed on each side of the changed middle, so that an added block the
/// diff's compaction slides along equal lines (common at blank lines) rarely reaches the
/// edge, which would mean diffing the whole texts.
const SLIDE_ROOM: usize = 13;

fn text(bytes: Option<&Vec<u8>>) -> Cow<'_, str> {
    bytes.map(|b| lossless_str(b)).unwrap_or_default()
}

/// A unified diff (git style headers, 3 lines of context) of every change, in order.
pub fn diff_of(changes: &[FileChange]) -> String {
    let texts: Vec<Texts<'_>> = changes.iter().map(Texts::of).collect();
    let diffs: Vec<FileDiff<'_>> = texts.iter().map(FileDiff::new).collect();
    unified_of(changes, &diffs)
}

/// [`diff_of`] from diffs already computed, one per change.
pub(crate) fn unified_of<'t>(changes: &[FileChange], diffs: &'t [FileDiff<'t>]) -> String {
    let mut out = String::new();
    for (c, d) in changes.iter().zip(diffs) {
        if c.before == c.after {
            continue;
        }
        let (a, b) = (quote("a/", &c.path), quote("b/", &c.path));
        out.push_str(&format!("diff --git {a} {b}\n"));
        // Like git, a name with a space ends with a tab so that `patch` finds where it ends.
        let tab = if c.path.contains(' ') { "\t" } else { "" };
        let old_name = match c.before {
            Some(_) => format!("{a}{tab}"),
            None => {
                out.push_str("new file mode 100644\n");
                "/dev/null".to_owned()
            }
        };
        let new_name = match c.after {
            Some(_) => format!("{b}{tab}"),
            None => {
                out.push_str("deleted file mode 100644\n");
                "/dev/null".to_owned()
            }
        };
        out.push_str(&d.unified(&old_name, &new_name));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// One change's contents as text (a missing side is empty), which its [`FileDiff`] borrows.
pub(crate) struct Texts<'a> {
    old: Cow<'a, str>,
    new: Cow<'a, str>,
}

impl<'a> Texts<'a> {
    pub fn of(c: &'a FileChange) -> Self {
        Texts {
            old: text(c.before.as_ref()),
            new: text(c.after.as_ref()),
        }
    }
}

/// One change's line diff, computed once for both its line counts and its unified text.
///
/// Only the changed middle and a few lines around it are diffed: tokenizing and
/// hashing every line of a large file showed in the profile. `similar` strips the common
/// leading and trailing lines itself before diffing, so the middle gets the same edit
/// script; only its compaction can slide an added block along equal lines, and when that
/// reaches the edge of the window the whole texts are diffed instead.
pub(crate) struct FileDiff<'t> {
    diff: TextDiff<'t, 't, 't, str>,
    /// Lines of both texts before the diffed part.
    offset: usize,
}

impl<'t> FileDiff<'t> {
    pub fn new(texts: &'t Texts<'_>) -> Self {
        let (old, new) = (texts.old.as_ref(), texts.new.as_ref());
        let whole = || FileDiff {
            diff: TextDiff::from_lines(old, new),
            offset: 0,
        };
        if old == new {
            // Nothing to diff (and no middle to cut around).
            return FileDiff {
                diff: TextDiff::from_lines("", ""),
                offset: 0,
            };
        }
        let (skip, start, cut) = middle_bounds(old, new);
        // Common lines kept before and after the middle: the context, and room to slide.
        let margin = CONTEXT_LINES + SLIDE_ROOM;
        let (lead, from) = lines_back(old, start, margin);
        let Some(suffix) = old.get(old.len() - cut..) else {
            return whole();
        };
        let (_, tail_bytes) = lines_forward(suffix, margin);
        let (Some(old_part), Some(new_part)) = (
            old.get(from..old.len() - cut + tail_bytes),
            new.get(from..new.len() - cut + tail_bytes),
        ) else {
            return whole();
        };
        let diff = TextDiff::from_lines(old_part, new_part);
        let ops = diff.ops();
        // Where the diffed part stops short of a file's start or end, a full context of
        // equal lines must remain there: then no block slid to that edge (it stopped at a
        // line that differs, as it would in the whole texts) and the hunk's context is whole.
        let room = |op: Option<&DiffOp>| matches!(op, Some(&DiffOp::Equal { len, .. }) if len >= CONTEXT_LINES);
        let at_start = from == 0;
        let at_end = tail_bytes == cut;
        if !((at_start || room(ops.first())) && (at_end || room(ops.last()))) {
            return whole();
        }
        FileDiff {
            diff,
            offset: skip - lead,
        }
    }

    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        self.diff
            .ops()
            .iter()
            .fold((0, 0), |(added, removed), op| match *op {
                DiffOp::Equal { .. } => (added, removed),
                DiffOp::Delete { old_len, .. } => (added, removed + old_len),
                DiffOp::Insert { new_len, .. } => (added + new_len, removed),
                DiffOp::Replace {
                    old_len, new_len, ..
                } => (added + new_len, removed + old_len),
            })
    }

    /// What `similar` prints for the whole texts: `---`/`+++` and the hunks, with line
    /// numbers in the whole texts.
    pub fn unified(&'t self, old_name: &str, new_name: &str) -> String {
        let mut out = String::new();
        for (i, hunk) in self
            .diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .missing_newline_hint(true)
            .iter_hunks()
            .enumerate()
        {
            if i == 0 {
                out.push_str(&format!("--- {old_name}\n+++ {new_name}\n"));
            }
            let (Some(&first), Some(&last)) = (hunk.ops().first(), hunk.ops().last()) else {
                continue;
            };
            let header =
                UnifiedHunkHeader::new(&[shifted(first, self.offset), shifted(last, self.offset)]);
            out.push_str(&format!("{header}\n"));
            // The hunk prints its own header (with the diffed part's line numbers) first.
            let body = hunk.to_string();
            out.push_str(body.split_once('\n').map_or("", |(_, rest)| rest));
        }
        out
    }
}

/// `op` moved down by `by` lines on both sides.
fn shifted(op: DiffOp, by: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by,
            new_index: new_index + by,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by,
            new_index: new_index + by,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
            new_len,
        },
    }
}

/// Up to `n` whole lines ending at byte `end` (a line start): `(lines, byte where they start)`.
fn lines_back(text: &str, end: usize, n: usize) -> (usize, usize) {
    let head = text.as_bytes().get(..end).unwrap_or_default();
    let mut from = end;
    let mut lines = 0;
    while lines < n && from > 0 {
        from = head[..from - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        lines += 1;
    }
    (lines, from)
}

/// Up to `n` whole lines at the start of `text`: `(lines, bytes they take)`.
fn lines_forward(text: &str, n: usize) -> (usize, usize) {
    let mut bytes = 0;
    let mut lines = 0;
    for line in text.split_inclusive('\n').take(n) {
        bytes += line.len();
        lines += 1;
    }
    (lines, bytes)
}

/// Lines added and removed in one change.
pub(crate) fn line_counts(c: &FileChange) -> (usize, usize) {
    FileDiff::new(&Texts::of(c)).counts()
}

/// `(files changed, lines added, lines removed)`.
pub fn diff_stats(changes: &[FileChange]) -> (usize, usize, usize) {
    let mut files = 0;
    let (mut added, mut removed) = (0, 0);
    for c in changes.iter().filter(|c| c.before != c.after) {
        files += 1;
        let (a, r) = line_counts(c);
        added += a;
        removed += r;
    }
    (files, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: "src/a.txt".into(),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    #[test]
    fn diff_marks_a_missing_final_newline_and_keeps_crlf() {
        let changes = [change(Some("a\r\nb\r\n"), Some("a\r\nc"))];
        insta::assert_snapshot!(diff_of(&changes).replace('\r', "<CR>"), @r"
        diff --git a/src/a.txt b/src/a.txt
        --- a/src/a.txt
        +++ b/src/a.txt
        @@ -1,2 +1,2 @@
         a<CR>
        -b<CR>
        +c
        \ No newline at end of file
        ");
        assert_eq!(diff_stats(&changes), (1, 1, 1));
    }

    #[test]
    fn unchanged_files_are_left_out_of_the_diff_and_the_counts() {
        let changes = [
            change(Some("a\nb"), Some("a\nb")),
            change(Some("x\n"), Some("y\n")),
        ];
        assert_eq!(diff_of(&changes).matches("diff --git").count(), 1);
        assert_eq!(diff_stats(&changes), (1, 1, 1));
        assert_eq!(line_counts(&changes[0]), (0, 0));
    }

    #[test]
    fn created_and_deleted_files_get_dev_null_headers() {
        let changes = [change(None, Some("x\n")), change(Some("y\n"), None)];
        insta::assert_snapshot!(diff_of(&changes), @r"
        diff --git a/src/a.txt b/src/a.txt
        new file mode 100644
        --- /dev/null
        +++ b/src/a.txt
        @@ -0,0 +1 @@
        +x
        diff --git a/src/a.txt b/src/a.txt
        deleted file mode 100644
        --- a/src/a.txt
        +++ /dev/null
        @@ -1 +0,0 @@
        -y
        ");
    }

    fn windowed(old: &str, new: &str) -> String {
        let texts = Texts {
            old: Cow::Borrowed(old),
            new: Cow::Borrowed(new),
        };
        FileDiff::new(&texts).unified("a", "b")
    }

    /// What `similar` prints for the whole texts, which the windowed diff must reproduce.
    fn whole(old: &str, new: &str) -> String {
        TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .missing_newline_hint(true)
            .header("a", "b")
            .to_string()
    }

    #[test]
    fn the_windowed_diff_prints_what_the_whole_texts_give() {
        let long: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let cases = [
            (format!("{long}x\n{long}"), format!("{long}y\n{long}")),
            (format!("{long}x\n{long}"), format!("{long}{long}")),
            (format!("{long}a"), format!("{long}a\n")),
            (
                "x\na\nb\nc\nd\n".to_owned(),
                "a\nb\nc\nd\ny\na\nb\nc\nd\n".to_owned(),
            ),
            (
                format!("{long}p\na\nb\nc\nd\ne\nq\n{long}"),
                format!("{long}p\na\nb\nc\nd\ne\na\nb\nc\nd\ne\nq\n{long}"),
            ),
        ];
        for (old, new) in &cases {
            assert_eq!(windowed(old, new), whole(old, new), "{old:?} -> {new:?}");
        }
        // Few distinct lines make many equally good scripts, where compaction slides blocks.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        let pieces = ["a\n", "b\n", "\n", "a", "b\r\n"];
        for _ in 0..3000 {
            let len = next(30);
            let old: Vec<&str> = (0..len).map(|_| pieces[next(3)]).collect();
            let mut new = old.clone();
            for _ in 0..=next(4) {
                let at = next(new.len() as u64 + 1);
                match next(3) {
                    0 if at < new.len() => {
                        new.remove(at);
                    }
                    _ => new.insert(at, pieces[next(5)]),
                }
            }
            // Only the last line may lack a newline.
            let join = |v: &[&str]| -> String {
                let n = v.len();
                v.iter()
                    .enumerate()
                    .map(|(i, p)| {
                        if i + 1 < n && !p.ends_with('\n') {
                            format!("{p}\n")
                        } else {
                            (*p).to_owned()
                        }
                    })
                    .collect()
            };
            // Long common runs of the same few lines around the change let blocks slide
            // past the diffed part's edges.
            let head: String = (0..next(40)).map(|_| ["a\n", "\n"][next(2)]).collect();
            let tail: String = (0..next(40)).map(|_| ["a\n", "\n"][next(2)]).collect();
            let (old, new) = (
                format!("{head}{}{tail}", join(&old)),
                format!("{head}{}{tail}", join(&new)),
            );
            assert_eq!(
                windowed(&old, &new),
                whole(&old, &new),
                "{old:?} -> {new:?}"
            );
            let counts =
                TextDiff::from_lines(&old, &new)
                    .ops()
                    .iter()
                    .fold((0, 0), |(a, r), op| {
                        let (_, o, n) = op.as_tag_tuple();
                        match op.tag() {
                            similar::DiffTag::Equal => (a, r),
                            _ => (a + n.len(), r + o.len()),
                        }
                    });
            let texts = Texts {
                old: Cow::Borrowed(&old),
                new: Cow::Borrowed(&new),
            };
            assert_eq!(FileDiff::new(&texts).counts(), counts, "{old:?} -> {new:?}");
        }
    }
}
