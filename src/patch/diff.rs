//! The normalized unified diff of a set of file changes, and its statistics, both computed
//! with `similar` so evidence always shows a diff whatever form the model used.
//!
//! It does not read or write files.

use similar::{ChangeTag, TextDiff};

use crate::patch::model::FileChange;
use crate::patch::text::{lossless_str, middles};

fn text(bytes: Option<&Vec<u8>>) -> std::borrow::Cow<'_, str> {
    bytes.map(|b| lossless_str(b)).unwrap_or_default()
}

/// A unified diff (git style headers, 3 lines of context) of every change, in order.
pub fn diff_of(changes: &[FileChange]) -> String {
    let mut out = String::new();
    for c in changes {
        let (old, new) = (text(c.before.as_ref()), text(c.after.as_ref()));
        if c.before == c.after {
            continue;
        }
        out.push_str(&format!("diff --git a/{p} b/{p}\n", p = c.path));
        let old_name = match c.before {
            Some(_) => format!("a/{}", c.path),
            None => {
                out.push_str("new file mode 100644\n");
                "/dev/null".to_owned()
            }
        };
        let new_name = match c.after {
            Some(_) => format!("b/{}", c.path),
            None => {
                out.push_str("deleted file mode 100644\n");
                "/dev/null".to_owned()
            }
        };
        let diff = TextDiff::from_lines(&old, &new);
        let body = diff
            .unified_diff()
            .context_radius(3)
            .missing_newline_hint(true)
            .header(&old_name, &new_name)
            .to_string();
        out.push_str(&body);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Lines added and removed in one change.
pub(crate) fn line_counts(c: &FileChange) -> (usize, usize) {
    let (old, new) = (text(c.before.as_ref()), text(c.after.as_ref()));
    let (_, old, new) = middles(&old, &new);
    let diff = TextDiff::from_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for op in diff.iter_all_changes() {
        match op.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
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
}
