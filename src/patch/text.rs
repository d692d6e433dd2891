//! Line model shared by hunk application and edits: a file split into lines with their own
//! endings, so CRLF files stay CRLF and a missing final newline survives.
//!
//! It knows nothing about hunks or levels.

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

/// One line of a result being built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutLine {
    pub text: String,
    /// `None` = the file's default ending; `Some("")` = no ending if last.
    pub eol: Option<String>,
    pub added: bool,
}

impl OutLine {
    pub fn kept(l: &Line<'_>) -> Self {
        OutLine {
            text: l.text.to_owned(),
            eol: Some(l.eol.to_owned()),
            added: false,
        }
    }

    pub fn added(text: String, no_eol: bool) -> Self {
        OutLine {
            text,
            eol: no_eol.then(String::new),
            added: true,
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
    pub fn join(out: &[OutLine], default_eol: &str, keep_missing_final: bool) -> String {
        let mut s = String::new();
        let last = out.len().saturating_sub(1);
        for (i, l) in out.iter().enumerate() {
            s.push_str(&l.text);
            let eol = match l.eol.as_deref() {
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

/// Trim both ends and make every inner whitespace run one space.
pub(crate) fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Number of leading whitespace characters.
pub(crate) fn indent_len(s: &str) -> usize {
    s.chars().take_while(|c| c.is_whitespace()).count()
}
