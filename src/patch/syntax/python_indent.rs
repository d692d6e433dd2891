//! CPython's indentation rules, which tree-sitter does not enforce: a block indented to a
//! column that matches no enclosing level, tabs and spaces mixed inconsistently, a line
//! indented with no block opened above it, a block header with no indented block after it.
//!
//! It follows CPython's tokenizer (`Parser/tokenizer.c`): at the start of every logical line
//! outside brackets the indentation is measured twice, with tabs to multiples of 8 (`col`)
//! and with tab size 1 (`altcol`); an indent pushes both on a stack, a dedent must return to
//! a column on the stack, and the two measures must order the same way (else `TabError`).
//! Blank and comment-only lines, lines inside brackets, continuation lines and the insides
//! of strings are skipped, so the scanner tracks strings (prefixes, triple quotes, f-string
//! replacement fields with nested strings, as Python 3.12 reads them) and bracket depth.
//! The parser's two indentation errors are decided from the tokens as the grammar does: an
//! indent is allowed only after a logical line that ends with `:`, and such a line needs one.
//!
//! On the way it notes statements that cannot run: a logical line right after a `return`,
//! `raise`, `continue` or `break` at the same depth (CPython compiles them; they are what a
//! line indented one block too deep or too shallow looks like).
//!
//! It only reads text; whether the problem is new is the caller's question.

/// CPython's tab stop for `col`.
const TAB_SIZE: usize = 8;
/// CPython's tab stop for `altcol`: a tab counts as one column.
const ALT_TAB_SIZE: usize = 1;
/// CPython's `MAXINDENT`: deeper nesting is `too many levels of indentation`.
const MAX_INDENT: usize = 100;
/// How deeply strings may nest inside f-string replacement fields before the scanner gives
/// up (CPython's own limit is 150); it keeps the recursion bounded on any input.
const MAX_STRING_NESTING: usize = 150;

/// The first indentation problem CPython would report, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndentError {
    /// 1-based line.
    pub line: u64,
    pub problem: Problem,
}

/// What CPython says, one variant per message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// `IndentationError: unindent does not match any outer indentation level`; `levels`
    /// are the columns of the blocks open at the line (any of them would be valid).
    Dedent { col: usize, levels: Vec<usize> },
    /// `TabError: inconsistent use of tabs and spaces in indentation`.
    Tabs,
    /// `IndentationError: unexpected indent`.
    Unexpected,
    /// `IndentationError: expected an indented block after` the header on line `header`.
    Expected { header: u64 },
    /// `IndentationError: too many levels of indentation`.
    TooDeep,
    /// `SyntaxError: unterminated (triple-quoted) string literal` starting on line `start`.
    Unterminated { start: u64 },
}

impl Problem {
    /// CPython's own words for it, then what to do, in one line a model can act on.
    pub(crate) fn explain(&self) -> String {
        match self {
            Problem::Dedent { col, levels } => {
                let levels: Vec<String> = levels.iter().map(usize::to_string).collect();
                format!(
                    "unindent does not match any outer indentation level: the line starts at \
                     column {col} but the enclosing blocks start at columns {}; indent it to \
                     one of them",
                    levels.join(", ")
                )
            }
            Problem::Tabs => "inconsistent use of tabs and spaces in indentation; indent it with \
                              the same characters as the lines around it"
                .to_owned(),
            Problem::Unexpected => "unexpected indent: the line is deeper than the one above, \
                                    which opens no block; give it the indentation of the lines \
                                    around it"
                .to_owned(),
            Problem::Expected { header } => format!(
                "expected an indented block after line {header}, which ends with ':'; indent \
                 the block's lines under it"
            ),
            Problem::TooDeep => "too many levels of indentation; nest less deeply".to_owned(),
            Problem::Unterminated { start } => format!(
                "unterminated string literal: the string that starts on line {start} is not \
                 closed; close it with the quotes that opened it"
            ),
        }
    }
}

/// A statement that cannot run: the 1-based lines of the `return`, `raise`, `continue` or
/// `break` that ends its block, and of the statement after it at the same depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unreachable {
    pub ender: u64,
    pub line: u64,
}

/// The whole file's scan: its unreachable statements, or its first indentation problem.
pub(crate) fn scan(text: &str) -> Result<Vec<Unreachable>, IndentError> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        unreachable: Vec::new(),
    };
    if text.starts_with('\u{feff}') {
        s.i = '\u{feff}'.len_utf8();
    }
    match s.file() {
        Ok(()) => Ok(s.unreachable),
        Err(e) => Err(*e),
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    line: u64,
    unreachable: Vec<Unreachable>,
}

/// Keywords whose statement ends its block.
const ENDERS: [&[u8]; 4] = [b"return", b"raise", b"continue", b"break"];

/// A string's opening: quote character, triple or not, raw, formatted (f or t prefix).
#[derive(Debug, Clone, Copy)]
struct Quote {
    q: u8,
    triple: bool,
    raw: bool,
    fmt: bool,
    start: u64,
}

/// The name that starts at `i` (empty when none does).
fn word_at(b: &[u8], i: usize) -> &[u8] {
    let rest = b.get(i..).unwrap_or_default();
    let n = rest
        .iter()
        .position(|&c| !is_ident_byte(c))
        .unwrap_or(rest.len());
    &rest[..n]
}

fn is_ident_byte(c: u8) -> bool {
    matches!(CLASS[c as usize], Class::Ident)
}

/// What a byte can start, for the scanner's main loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Newline,
    Hash,
    Backslash,
    Quote,
    Open,
    Close,
    /// A name or number character (non-ASCII bytes count: names may be Unicode).
    Ident,
    /// Any other operator or punctuation.
    Other,
}

const CLASS: [Class; 256] = {
    let mut t = [Class::Other; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b' ' | b'\t' | b'\x0c' => Class::Space,
            b'\n' | b'\r' => Class::Newline,
            b'#' => Class::Hash,
            b'\\' => Class::Backslash,
            b'"' | b'\'' => Class::Quote,
            b'(' | b'[' | b'{' => Class::Open,
            b')' | b']' | b'}' => Class::Close,
            b'_' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | 0x80..=0xff => Class::Ident,
            _ => Class::Other,
        };
        c += 1;
    }
    t
};

/// The prefix flags `(raw, formatted)` when `word` is a string prefix Python accepts.
fn string_prefix(word: &[u8]) -> Option<(bool, bool)> {
    let lower = |i: usize| word.get(i).map(u8::to_ascii_lowercase);
    match (word.len(), lower(0), lower(1)) {
        (1, Some(b'r'), _) => Some((true, false)),
        (1, Some(b'u' | b'b'), _) => Some((false, false)),
        (1, Some(b'f' | b't'), _) => Some((false, true)),
        (2, Some(b'b'), Some(b'r')) | (2, Some(b'r'), Some(b'b')) => Some((true, false)),
        (2, Some(b'f' | b't'), Some(b'r')) | (2, Some(b'r'), Some(b'f' | b't')) => {
            Some((true, true))
        }
        _ => None,
    }
}

/// Errors are boxed: the scanner returns a result per token, and the common case must stay
/// small.
type Step = Result<(), Box<IndentError>>;

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    fn fail(&self, line: u64, problem: Problem) -> Step {
        Err(Box::new(IndentError { line, problem }))
    }

    /// Consume one line ending (`\n`, `\r\n` or a lone `\r`, which CPython reads as `\n`).
    fn newline(&mut self) {
        if self.peek() == Some(b'\r') && self.at(1) == Some(b'\n') {
            self.i += 1;
        }
        self.i += 1;
        self.line += 1;
    }

    fn skip_comment(&mut self) {
        let rest = self.b.get(self.i..).unwrap_or_default();
        self.i += rest
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')
            .unwrap_or(rest.len());
    }

    fn is_newline(c: Option<u8>) -> bool {
        matches!(c, Some(b'\n' | b'\r'))
    }

    /// The whole file: one logical line after another.
    fn file(&mut self) -> Step {
        // Columns of the open blocks, measured both ways.
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        // The line of a logical line that ended with `:` and still waits for its block.
        let mut header: Option<u64> = None;
        // The column and line of the last logical line when it ends its block.
        let mut ender: Option<(usize, u64)> = None;
        while self.peek().is_some() {
            let (col, altcol) = self.indentation();
            if matches!(self.peek(), None | Some(b'#' | b'\n' | b'\r')) {
                // Blank and comment-only lines do not count for indentation.
                self.skip_comment();
                if self.peek().is_some() {
                    self.newline();
                }
                continue;
            }
            let line = self.line;
            let &(top, alt_top) = stack.last().unwrap_or(&(0, 0));
            if col > top {
                if altcol <= alt_top {
                    return self.fail(line, Problem::Tabs);
                }
                if header.is_none() {
                    return self.fail(line, Problem::Unexpected);
                }
                if stack.len() >= MAX_INDENT {
                    return self.fail(line, Problem::TooDeep);
                }
                stack.push((col, altcol));
            } else {
                // Dedent to the deepest open block that starts at or before `col` (the stack's
                // columns increase, so that is where CPython's pops stop).
                let keep = stack.iter().rposition(|&(c, _)| c <= col).unwrap_or(0);
                let (top, alt_top) = stack[keep];
                if col != top {
                    let levels = stack.iter().map(|&(c, _)| c).collect();
                    return self.fail(line, Problem::Dedent { col, levels });
                }
                stack.truncate(keep + 1);
                if altcol != alt_top {
                    return self.fail(line, Problem::Tabs);
                }
                if let Some(h) = header {
                    return self.fail(line, Problem::Expected { header: h });
                }
            }
            let word = word_at(self.b, self.i);
            if let Some((c, l)) = ender
                && c == col
                // `return` then `yield` is the idiom for an empty generator.
                && word != b"yield"
            {
                self.unreachable.push(Unreachable { ender: l, line });
            }
            ender = ENDERS.contains(&word).then_some((col, line));
            header = self.logical_line()?;
        }
        match header {
            // CPython names the file's last line.
            Some(h) => {
                let ended = matches!(self.b.last(), Some(b'\n' | b'\r'));
                let line = if ended { self.line - 1 } else { self.line };
                self.fail(line.max(1), Problem::Expected { header: h })
            }
            None => Ok(()),
        }
    }

    /// Measure the indentation at the start of a line as CPython does.
    fn indentation(&mut self) -> (usize, usize) {
        let (mut col, mut altcol) = (0usize, 0usize);
        loop {
            match self.peek() {
                Some(b' ') => {
                    col += 1;
                    altcol += 1;
                }
                Some(b'\t') => {
                    col = (col / TAB_SIZE + 1) * TAB_SIZE;
                    altcol = (altcol / ALT_TAB_SIZE + 1) * ALT_TAB_SIZE;
                }
                // A form feed resets both (CPython's "for Emacs users").
                Some(b'\x0c') => {
                    col = 0;
                    altcol = 0;
                }
                _ => return (col, altcol),
            }
            self.i += 1;
        }
    }

    /// The rest of a logical line, through its newline; returns the line of its last
    /// token when that token is a `:` (a block header).
    fn logical_line(&mut self) -> Result<Option<u64>, Box<IndentError>> {
        let b = self.b;
        let mut depth = 0usize;
        let mut last = 0u8;
        let mut last_line = self.line;
        // The whole file goes through this loop, so bytes are classified by a table and
        // names are skipped in one run.
        while let Some(&c) = b.get(self.i) {
            match CLASS[c as usize] {
                Class::Space => self.i += 1,
                Class::Other => {
                    self.i += 1;
                    last = c;
                    last_line = self.line;
                }
                Class::Newline => {
                    self.newline();
                    if depth == 0 {
                        break;
                    }
                }
                Class::Hash => self.skip_comment(),
                Class::Backslash if Self::is_newline(self.at(1)) => {
                    self.i += 1;
                    self.newline();
                }
                Class::Backslash => {
                    self.i += 1;
                    last = c;
                    last_line = self.line;
                }
                Class::Ident | Class::Quote | Class::Open | Class::Close => {
                    last_line = self.line;
                    last = self.token(&mut depth, 0)?;
                }
            }
        }
        Ok((last == b':').then_some(last_line))
    }

    /// One token that is not whitespace, a comment or a line ending; returns a byte that
    /// stands for it (the character itself for operators, `"` for a string, `a` for a name).
    #[inline]
    fn token(&mut self, depth: &mut usize, nesting: usize) -> Result<u8, Box<IndentError>> {
        let Some(c) = self.peek() else {
            return Ok(0);
        };
        match c {
            b'"' | b'\'' => {
                self.string(false, false, nesting)?;
                Ok(b'"')
            }
            b'(' | b'[' | b'{' => {
                *depth += 1;
                self.i += 1;
                Ok(c)
            }
            b')' | b']' | b'}' => {
                *depth = depth.saturating_sub(1);
                self.i += 1;
                Ok(c)
            }
            c if is_ident_byte(c) => {
                let start = self.i;
                let rest = self.b.get(start..).unwrap_or_default();
                self.i += rest
                    .iter()
                    .position(|&b| !is_ident_byte(b))
                    .unwrap_or(rest.len());
                // Most names are not followed by a quote: look at the name only when one is.
                if !matches!(self.peek(), Some(b'"' | b'\'')) || c.is_ascii_digit() {
                    return Ok(b'a');
                }
                match string_prefix(&self.b[start..self.i]) {
                    Some((raw, fmt)) => {
                        self.string(raw, fmt, nesting)?;
                        Ok(b'"')
                    }
                    None => Ok(b'a'),
                }
            }
            _ => {
                self.i += 1;
                Ok(c)
            }
        }
    }

    /// A string literal from its opening quote.
    fn string(&mut self, raw: bool, fmt: bool, nesting: usize) -> Step {
        let Some(q) = self.peek() else {
            return Ok(());
        };
        let triple = self.at(1) == Some(q) && self.at(2) == Some(q);
        let quote = Quote {
            q,
            triple,
            raw,
            fmt,
            start: self.line,
        };
        if nesting > MAX_STRING_NESTING {
            return self.fail(quote.start, Problem::TooDeep);
        }
        self.i += if triple { 3 } else { 1 };
        self.literal(quote, nesting, false)
    }

    /// Whether the closing quote is here; consumes it.
    fn closes(&mut self, quote: Quote) -> bool {
        let q = Some(quote.q);
        if self.peek() != q || (quote.triple && (self.at(1) != q || self.at(2) != q)) {
            return false;
        }
        self.i += if quote.triple { 3 } else { 1 };
        true
    }

    /// The literal part of a string up to its closing quote; in an f-string's format spec
    /// (`in_spec`), up to the `}` that ends the replacement field.
    fn literal(&mut self, quote: Quote, nesting: usize, in_spec: bool) -> Step {
        let unterminated = Problem::Unterminated { start: quote.start };
        loop {
            let Some(c) = self.peek() else {
                return self.fail(quote.start, unterminated);
            };
            match c {
                b'\\' => {
                    self.i += 1;
                    match self.peek() {
                        // In an f-string a backslash never escapes a brace.
                        Some(b'{' | b'}') if quote.fmt => {}
                        // `\N{NAME}` is one escape, not a replacement field.
                        Some(b'N') if quote.fmt && !quote.raw && self.at(1) == Some(b'{') => {
                            while let Some(c) = self.peek() {
                                if c == b'}' || Self::is_newline(Some(c)) || c == quote.q {
                                    break;
                                }
                                self.i += 1;
                            }
                            if self.peek() == Some(b'}') {
                                self.i += 1;
                            }
                        }
                        Some(b'\n' | b'\r') => self.newline(),
                        Some(_) => self.i += 1,
                        None => {}
                    }
                }
                // A replacement field may span lines even in a one-line f-string (3.12).
                b'\n' | b'\r' => {
                    if !quote.triple && !in_spec {
                        return self.fail(quote.start, unterminated);
                    }
                    self.newline();
                }
                _ if self.closes(quote) => {
                    if in_spec {
                        // The string ended inside a replacement field.
                        return self.fail(quote.start, unterminated);
                    }
                    return Ok(());
                }
                b'{' if quote.fmt => {
                    if self.at(1) == Some(b'{') && !in_spec {
                        self.i += 2;
                    } else {
                        self.i += 1;
                        self.field(quote, nesting)?;
                    }
                }
                b'}' if quote.fmt => {
                    self.i += 1;
                    if in_spec {
                        return Ok(());
                    }
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// An f-string replacement field after its `{`, through its `}`.
    fn field(&mut self, quote: Quote, nesting: usize) -> Step {
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return self.fail(quote.start, Problem::Unterminated { start: quote.start });
            };
            match c {
                b'\n' | b'\r' => self.newline(),
                b'#' => self.skip_comment(),
                b'\\' if Self::is_newline(self.at(1)) => {
                    self.i += 1;
                    self.newline();
                }
                b'}' if depth == 0 => {
                    self.i += 1;
                    return Ok(());
                }
                b'!' if depth == 0 && self.at(1) != Some(b'=') => {
                    // A conversion (`!r`); a format spec or the closing brace follows.
                    self.i += 1;
                    while self.peek().is_some_and(is_ident_byte) {
                        self.i += 1;
                    }
                }
                b'!' => self.i += 2,
                b':' if depth == 0 => {
                    self.i += 1;
                    return self.literal(quote, nesting, true);
                }
                _ => {
                    self.token(&mut depth, nesting + 1)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
