//! Shortcuts models take in a diff that no tolerance should carry into the tree: code left
//! out behind a placeholder comment (`# ... existing code ...`, `// rest of the function
//! unchanged`), and the prompt's line numbers (`12| `) copied into the hunk lines.
//!
//! It reads parsed hunks only; it does not look at the files.

use crate::patch::parse::{FilePatch, Hunk, Kind};
use crate::patch::text::quoted;
use crate::policy::Issue;

/// The first shortcut in the parsed answer, as an issue.
pub(crate) fn shortcut(files: &[FilePatch]) -> Option<Issue> {
    for f in files {
        for (n, h) in f.hunks.iter().enumerate() {
            if let Some(issue) = numbered(f.path(), n + 1, h).or_else(|| elided(f.path(), n + 1, h))
            {
                return Some(issue.at_path(f.path().to_owned()));
            }
        }
    }
    None
}

/// The number of a line copied from the prompt's numbered files (`12| code`), if it is one.
fn prompt_number(text: &str) -> Option<u64> {
    let (digits, rest) = text.split_once('|')?;
    let digits = digits.trim_start();
    let number =
        !digits.is_empty() && digits.len() <= 7 && digits.bytes().all(|b| b.is_ascii_digit());
    (number && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Hunk lines that carry the numbered file's line numbers: most non-blank lines, counting
/// up by one.
fn numbered(path: &str, n: usize, h: &Hunk) -> Option<Issue> {
    let lines: Vec<&str> = h
        .lines
        .iter()
        .map(|l| l.text.as_str())
        .filter(|t| !t.trim().is_empty())
        .collect();
    let numbers: Vec<u64> = lines.iter().filter_map(|t| prompt_number(t)).collect();
    let rising = numbers.windows(2).filter(|w| w[1] > w[0]).count();
    if numbers.len() < 2 || numbers.len() * 2 < lines.len() || rising * 2 < numbers.len() {
        return None;
    }
    let example = lines.iter().find(|t| prompt_number(t).is_some())?;
    Some(Issue::new(
        "parse.line-numbers",
        format!(
            "hunk {n} of {path} copies the numbered file's line numbers into its lines ({:?}); \
             the numbers are not part of the file, leave them out",
            quoted(example)
        ),
    ))
}

/// Words that, with an ellipsis, make a comment stand for code left out.
const ELISION_WORDS: &[&str] = &[
    "existing",
    "rest of",
    "unchanged",
    "remain",
    "omitted",
    "previous",
    "original",
    "same as",
    "as before",
    "continues",
    "code here",
    "goes here",
];

/// Endings that make a comment about the code stand for it, without an ellipsis.
const ELISION_ENDINGS: &[&str] = &[
    "unchanged",
    "remains the same",
    "remain the same",
    "stays the same",
    "omitted for brevity",
    "as before",
    "continues below",
    "goes here",
];

/// What such an ending must be about to stand for code (`# leave x unchanged` is not).
const CODE_WORDS: &[&str] = &[
    "code",
    "rest",
    "logic",
    "function",
    "method",
    "class",
    "implementation",
    "body",
    "lines",
];

/// Whether an added line is only a comment that stands for code left out.
fn placeholder(text: &str) -> bool {
    let t = text.trim();
    let Some(body) = ["#", "//", "/*", "<!--", "--", "*"]
        .iter()
        .find_map(|m| t.strip_prefix(m))
    else {
        return false;
    };
    let body = body
        .trim()
        .trim_end_matches("*/")
        .trim_end_matches("-->")
        .to_lowercase();
    if body.contains("...") || body.contains('\u{2026}') {
        return ELISION_WORDS.iter().any(|w| body.contains(w));
    }
    let end = body.trim_end_matches(['.', ':', '-', ' ']);
    ELISION_ENDINGS.iter().any(|e| end.ends_with(e))
        && CODE_WORDS
            .iter()
            .any(|w| end.split_whitespace().any(|x| x == *w))
}

/// A placeholder added in new code, or where code was removed and not written back, or
/// anywhere but at the end of its change right before the context it stands for: the change
/// would drop, or never write, the code the comment stands for.
fn elided(path: &str, n: usize, h: &Hunk) -> Option<Issue> {
    let mut start = 0;
    for run in h
        .lines
        .chunk_by(|a, b| (a.kind == Kind::Context) == (b.kind == Kind::Context))
    {
        let end = start + run.len();
        let next_is_context = h.lines.get(end).is_some_and(|l| l.kind == Kind::Context);
        start = end;
        let Some(at) = run
            .iter()
            .position(|l| l.kind == Kind::Add && placeholder(&l.text))
        else {
            continue;
        };
        // A change that writes back every line it removes (a block wrapped in `try:`) and
        // whose placeholder sits right before the kept lines it refers to has left nothing
        // out, whatever its comment says.
        let added: Vec<&str> = run
            .iter()
            .filter(|l| l.kind == Kind::Add)
            .map(|l| l.text.trim())
            .collect();
        let mut removed = run
            .iter()
            .filter(|l| l.kind == Kind::Remove && !l.text.trim().is_empty());
        let last_added = run.iter().rposition(|l| l.kind == Kind::Add) == Some(at);
        let rewritten =
            removed.clone().next().is_some() && removed.all(|l| added.contains(&l.text.trim()));
        if rewritten && last_added && next_is_context {
            continue;
        }
        return Some(Issue::new(
            "check.placeholder",
            format!(
                "hunk {n} of {path} adds {:?}, which stands for code left out; write out every \
                 line the change keeps (as context) or adds, in full",
                quoted(&run[at].text)
            ),
        ));
    }
    None
}

/// The same rule for a structured edit: a placeholder in `new_text` that `old_text` does not
/// have, unless the edit keeps every line of `old_text` and the placeholder is followed only
/// by kept lines (the rest it refers to is there).
pub(crate) fn elided_edit(path: &str, n: usize, old: &str, new: &str) -> Option<Issue> {
    let kept = |l: &str| old.lines().any(|o| o.trim() == l.trim());
    let lines: Vec<&str> = new.lines().collect();
    let at = lines.iter().position(|l| placeholder(l) && !kept(l))?;
    let keeps_all = old
        .lines()
        .filter(|o| !o.trim().is_empty())
        .all(|o| lines.iter().any(|l| l.trim() == o.trim()));
    let rest_kept = lines[at + 1..]
        .iter()
        .all(|l| l.trim().is_empty() || kept(l));
    if !old.trim().is_empty() && keeps_all && rest_kept && at + 1 < lines.len() {
        return None;
    }
    Some(
        Issue::new(
            "check.placeholder",
            format!(
                "edit {n} of {path}: new_text has {:?}, which stands for code left out; write \
                 out every line it keeps or adds, in full",
                quoted(lines[at])
            ),
        )
        .at_path(path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::parse::parse;

    fn rules(diff: &str) -> Option<String> {
        let files = parse(diff).unwrap_or_default();
        shortcut(&files).map(|i| i.rule)
    }

    #[test]
    fn placeholders_for_left_out_code_are_refused() {
        let header = "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,3 @@\n def f():\n";
        let elided =
            format!("{header}-    a = 1\n-    b = 2\n+    # ... existing code ...\n+    c = 3\n");
        assert_eq!(rules(&elided).as_deref(), Some("check.placeholder"));
        let new_code = "--- a/m.py\n+++ b/m.py\n@@ -1 +1,3 @@\n x = 1\n+def g():\n+    // rest of the function remains the same\n";
        assert_eq!(rules(new_code).as_deref(), Some("check.placeholder"));
        // The removed lines come back (wrapped in `try:`): the comment is only a comment.
        let wrapped = format!(
            "{header}-    a = 1\n+    try:\n+        a = 1\n+    except E:\n+        pass\n+    \
             # The rest of the code remains unchanged\n     b = 2\n"
        );
        assert_eq!(rules(&wrapped), None);
        // The same with nothing after it: the "rest" is not in the hunk.
        let cut = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n def f():\n-    a = 1\n+    a = 1\n+    \
                   # ... rest of the function remains the same ...\n";
        assert_eq!(rules(cut).as_deref(), Some("check.placeholder"));
        // Comments that merely mention such words, and real ellipses.
        let fine = format!(
            "{header}+    # keep the original order\n+    # leave x unchanged\n+    x = f(...)  \
             # see above\n"
        );
        assert_eq!(rules(&fine), None);
        for marker in [
            "# ... existing code ...",
            "// ... rest of the function remains the same ...",
            "# Existing logic continues below...",
            "/* rest of the implementation unchanged */",
            "# The rest of the code remains unchanged",
        ] {
            assert!(placeholder(marker), "{marker}");
        }
    }

    #[test]
    fn line_numbers_copied_from_the_prompt_are_refused() {
        let diff = "--- a/m.py\n+++ b/m.py\n@@ -3,2 +3,3 @@\n 3| def f():\n-4|     return 1\n+4|     return 2\n+5|     # done\n";
        assert_eq!(rules(diff).as_deref(), Some("parse.line-numbers"));
        // A table whose rows happen to start with numbers and a `|`, once, is data.
        let table = "--- a/t.md\n+++ b/t.md\n@@ -1,2 +1,3 @@\n | a | b |\n |---|---|\n+| 1 | 2 |\n";
        assert_eq!(rules(table), None);
    }

    #[test]
    fn an_edit_whose_new_text_leaves_code_out_is_refused() {
        let old = "def f():\n    a = 1\n    b = 2\n";
        let rule = |new: &str| elided_edit("m.py", 1, old, new).map(|i| i.rule);
        assert_eq!(
            rule("def f():\n    a = 3\n    # ... existing code ...\n").as_deref(),
            Some("check.placeholder")
        );
        // Every old line kept, the placeholder followed by kept lines: only a comment.
        assert_eq!(
            rule("def f():\n    x = 0\n    # rest of the code unchanged\n    a = 1\n    b = 2\n"),
            None
        );
        assert_eq!(rule("def f():\n    a = 1\n    b = 20\n"), None);
    }
}
