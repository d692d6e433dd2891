//! Line model shared by hunk application and edits: a file split into lines with their own
//! endings, so CRLF files stay CRLF and a missing final newline survives.
//!
//! It knows nothing about hunks or levels.

use std::borrow::Cow;

/// One line of a file: its text without the ending, and the ending (`""`, `"\n"`, `"\r\n"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub text: &'a str,
    pub eol: &'a str,
}

/// A file as lines, with the ending new lines should get.
#[derive(Debug, Clone)]
pub(crate) struct Lines<'a> {
    pub lines: Vec<Line<'a>>,
    pub default_eol: &'static str,
}

/// One line of a result being built. Kept lines borrow from the file: copying every line of
/// large files showed in the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutLine<'a> {
    pub text: Cow<'a, str>,
    /// `None` = the file's default ending; `Some("")` = no ending if last.
    pub eol: Option<&'a str>,
    pub added: bool,
    /// Emitted by a hunk that did not land exactly where its header said, or that had no
    /// context at all (see the near-repeat guard).
    pub inexact: bool,
    /// An added line of a change that also removes lines: a replacement, not an insertion.
    pub replaces: bool,
    /// For a kept line, its 0-based line in the original file.
    pub origin: Option<usize>,
}

impl<'a> OutLine<'a> {
    /// Line `index` of the original file, kept.
    pub fn kept(l: &Line<'a>, index: usize) -> Self {
        OutLine {
            text: Cow::Borrowed(l.text),
            eol: Some(l.eol),
            added: false,
            inexact: false,
            replaces: false,
            origin: Some(index),
        }
    }

    pub fn added(text: String, no_eol: bool, replaces: bool) -> Self {
        OutLine {
            text: Cow::Owned(text),
            eol: no_eol.then_some(""),
            added: true,
            inexact: false,
            replaces,
            origin: None,
        }
    }
}

impl<'a> Lines<'a> {
    pub fn split(s: &'a str) -> Self {
        let mut lines = Vec::new();
        let (mut crlf, mut lf) = (0usize, 0usize);
        for piece in s.split_inclusive('\n') {
            let line = if let Some(t) = piece.strip_suffix("\r\n") {
                crlf += 1;
                Line {
                    text: t,
                    eol: "\r\n",
                }
            } else if let Some(t) = piece.strip_suffix('\n') {
                lf += 1;
                Line { text: t, eol: "\n" }
            } else {
                Line {
                    text: piece,
                    eol: "",
                }
            };
            lines.push(line);
        }
        let default_eol = if crlf > lf { "\r\n" } else { "\n" };
        Lines { lines, default_eol }
    }

    pub fn ends_without_eol(&self) -> bool {
        self.lines.last().is_some_and(|l| l.eol.is_empty())
    }

    /// Join result lines; `keep_missing_final` leaves the last line without an ending when
    /// the original had none and the patch did not say otherwise.
    pub fn join(out: &[OutLine<'_>], default_eol: &str, keep_missing_final: bool) -> String {
        let len = out.iter().map(|l| l.text.len() + 2).sum();
        let mut s = String::with_capacity(len);
        let last = out.len().saturating_sub(1);
        for (i, l) in out.iter().enumerate() {
            s.push_str(&l.text);
            let eol = match l.eol {
                Some("") if i == last => "",
                Some("") | None => default_eol,
                Some(e) => e,
            };
            if i == last && keep_missing_final && l.eol.is_none() {
                continue;
            }
            s.push_str(eol);
        }
        s
    }
}

/// Bytes as text: borrowed when valid UTF-8 (the fast, common case), lossy otherwise.
pub(crate) fn lossless_str(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// A line as a message quotes it: trimmed, and cut after 80 characters.
pub(crate) fn quoted(line: &str) -> String {
    const MAX_QUOTED: usize = 80;
    let t = line.trim();
    match t.char_indices().nth(MAX_QUOTED) {
        Some((cut, _)) => format!("{}...", &t[..cut]),
        None => t.to_owned(),
    }
}

/// Trim both ends and make every inner whitespace run one space.
pub(crate) fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether two lines are equal once every whitespace run counts as one space and both ends
/// are trimmed (no allocation: this runs for every candidate line).
pub(crate) fn ws_runs_eq(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// Number of leading whitespace characters.
pub(crate) fn indent_len(s: &str) -> usize {
    s.chars().take_while(|c| c.is_whitespace()).count()
}

/// The parts of two texts between their common leading and trailing whole lines:
/// `(common leading line count, before middle, after middle)`. Counting or diffing only the
/// middles gives the same answer as the whole texts, much faster on large files.
pub(crate) fn middles<'a>(before: &'a str, after: &'a str) -> (usize, &'a str, &'a str) {
    let (lines, start, cut) = middle_bounds(before, after);
    let b_mid = before.get(start..before.len() - cut).unwrap_or("");
    let a_mid = after.get(start..after.len() - cut).unwrap_or("");
    (lines, b_mid, a_mid)
}

/// Where [`middles`] cuts: `(common leading line count, byte offset where both middles
/// start, common trailing byte count)`.
pub(crate) fn middle_bounds(before: &str, after: &str) -> (usize, usize, usize) {
    let (bb, ab) = (before.as_bytes(), after.as_bytes());
    let common = common_prefix(bb, ab);
    // Back up to the start of the line the texts first differ in.
    let head = &bb[..common];
    let start = head.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let lines = head.iter().filter(|&&c| c == b'\n').count();
    if common == bb.len() && common == ab.len() {
        return (lines, bb.len(), 0);
    }
    let max_tail = (bb.len() - start).min(ab.len() - start);
    let tail = common_suffix(&bb[bb.len() - max_tail..], &ab[ab.len() - max_tail..]);
    // Only whole lines count as common: the tail must begin right after a newline in both
    // texts (or at the start), else a changed line's end would be cut off as "common".
    let at_line_start = |t: &[u8], pos: usize| pos <= start || t[pos - 1] == b'\n';
    let mut cut = tail;
    while cut > 0 && !(at_line_start(bb, bb.len() - cut) && at_line_start(ab, ab.len() - cut)) {
        cut -= 1;
    }
    (lines, start, cut)
}

/// Chunk width for the prefix and suffix scans: comparing whole chunks first lets the
/// compiler use wide compares on large, mostly equal files.
const CHUNK: usize = 32;

/// Length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let whole = a
        .chunks_exact(CHUNK)
        .zip(b.chunks_exact(CHUNK))
        .take_while(|(x, y)| x == y)
        .count()
        * CHUNK;
    whole
        + a[whole..]
            .iter()
            .zip(&b[whole..])
            .take_while(|(x, y)| x == y)
            .count()
}

/// Length of the common suffix of two byte strings.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let whole = a
        .rchunks_exact(CHUNK)
        .zip(b.rchunks_exact(CHUNK))
        .take_while(|(x, y)| x == y)
        .count()
        * CHUNK;
    whole
        + a[..a.len() - whole]
            .iter()
            .rev()
            .zip(b[..b.len() - whole].iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middles_keep_whole_changed_lines_only() {
        assert_eq!(middles("a\nb\nc\n", "a\nB\nc\n"), (1, "b\n", "B\n"));
        assert_eq!(middles("a\nbc\n", "a\nbd\n"), (1, "bc\n", "bd\n"));
        assert_eq!(middles("x\n", "x\n"), (1, "", ""));
        assert_eq!(middles("a\n", "a\nb\n"), (1, "", "b\n"));
        // Long equal runs go through the chunked scans; the answer must not change.
        let long = "x".repeat(100);
        let (b, a) = (
            format!("{long}\n{long}1\n{long}\n"),
            format!("{long}\n{long}2\n{long}\n"),
        );
        assert_eq!(middles(&b, &a), (1, &b[101..203], &a[101..203]));
        assert_eq!(common_suffix(b"abcd", b"xbcd"), 3);
        // Regression: a line that only gained a prefix kept just that prefix as its middle.
        assert_eq!(
            middles("a\nskip(\n", "a\n.skip(\n"),
            (1, "skip(\n", ".skip(\n")
        );
        assert_eq!(common_prefix(&[7; 70], &[7; 65]), 65);
    }
}
