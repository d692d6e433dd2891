//! The code of each line with its comments removed, so a comment or a docstring that mentions
//! `pytest` or `cfg!(test)` is not read as code. String literals on one line are kept (the
//! markers are often strings: `os.environ["PYTEST_CURRENT_TEST"]`); the inside of a Python
//! triple-quoted string is blanked, since it is documentation or data, not a test marker.
//!
//! A small scanner, not a tokenizer: it knows quotes, escapes and comment openers, which is all
//! it takes to tell code from comments line by line.

/// Which comment and string syntax a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// `#` comments, `'`/`"` strings, triple-quoted strings across lines.
    Python,
    /// `//` and `/* */` comments, `'`, `"` and `` ` `` strings.
    JavaScript,
    /// `//` and `/* */` comments, `"` strings; `'` starts a char literal or a lifetime.
    Rust,
    /// `//` and `/* */` comments, `"` and `` ` `` strings, `'` runes.
    Go,
}

enum State {
    Code,
    /// Inside a string opened by this quote; `triple` for Python's `"""`/`'''`.
    Str {
        quote: u8,
        triple: bool,
    },
    Block,
}

/// The code of the `wanted` lines of `text` (0-based, ascending), one entry per line of
/// `text.lines()` up to the last wanted one; the other entries are empty. Every line up to
/// there is scanned, since a string or comment opened above a wanted line decides what it
/// holds.
///
/// The scan works on bytes: every delimiter is ASCII, and UTF-8 never uses ASCII bytes inside
/// a multi-byte character, so a character is always kept or dropped whole.
pub(crate) fn code_lines(text: &str, syntax: Syntax, wanted: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let mut state = State::Code;
    let last = wanted.last().copied();
    let mut wanted = wanted.iter().peekable();
    for (index, line) in text.lines().enumerate() {
        if last.is_none_or(|last| index > last) {
            break;
        }
        while wanted.next_if(|&&w| w < index).is_some() {}
        let keep = wanted.peek().is_some_and(|&&w| w == index);
        let bytes = line.as_bytes();
        let mut code: Vec<u8> = Vec::new();
        let mut push = |part: &[u8]| {
            if keep {
                code.extend_from_slice(part);
            }
        };
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let next = bytes.get(i + 1).copied();
            match state {
                State::Block => {
                    if c == b'*' && next == Some(b'/') {
                        state = State::Code;
                        i += 1;
                    }
                }
                State::Str { quote, triple } => {
                    let closes = c == quote
                        && (!triple || (next == Some(quote) && bytes.get(i + 2) == Some(&quote)));
                    if c == b'\\' {
                        if !triple {
                            push(&bytes[i..(i + 2).min(bytes.len())]);
                        }
                        i += 1;
                    } else if closes {
                        if triple {
                            push(&bytes[i..i + 3]);
                            i += 2;
                        } else {
                            push(&[c]);
                        }
                        state = State::Code;
                    } else if !triple {
                        push(&[c]);
                    }
                }
                State::Code => {
                    let line_comment = match syntax {
                        Syntax::Python => c == b'#',
                        _ => c == b'/' && next == Some(b'/'),
                    };
                    if line_comment {
                        break;
                    }
                    if syntax != Syntax::Python && c == b'/' && next == Some(b'*') {
                        state = State::Block;
                        i += 2;
                        continue;
                    }
                    if let Some(skip) = char_literal(syntax, bytes, i) {
                        push(&bytes[i..i + skip]);
                        i += skip;
                        continue;
                    }
                    if opens_string(syntax, c) {
                        let triple = syntax == Syntax::Python
                            && next == Some(c)
                            && bytes.get(i + 2) == Some(&c);
                        if triple {
                            push(&bytes[i..i + 3]);
                            i += 2;
                        } else {
                            push(&[c]);
                        }
                        state = State::Str { quote: c, triple };
                    } else {
                        push(&[c]);
                    }
                }
            }
            i += 1;
        }
        // Only triple-quoted strings and JavaScript's and Go's backquoted strings span lines.
        if let State::Str { quote, triple } = state
            && !triple
            && quote != b'`'
        {
            state = State::Code;
        }
        out.push(String::from_utf8_lossy(&code).into_owned());
    }
    out
}

fn opens_string(syntax: Syntax, c: u8) -> bool {
    match syntax {
        Syntax::Python => c == b'"' || c == b'\'',
        Syntax::JavaScript => c == b'"' || c == b'\'' || c == b'`',
        Syntax::Rust => c == b'"',
        Syntax::Go => c == b'"' || c == b'`',
    }
}

/// The length of a Rust or Go char literal (`'"'`, `'\''`, `'\u{22}'`) starting at `i`, so
/// its quote is not taken for a string; `None` for anything else (a Rust lifetime stays code).
fn char_literal(syntax: Syntax, bytes: &[u8], i: usize) -> Option<usize> {
    if !matches!(syntax, Syntax::Rust | Syntax::Go) || bytes.get(i) != Some(&b'\'') {
        return None;
    }
    if bytes.get(i + 1) == Some(&b'\\') {
        let end = bytes
            .get(i + 2..)?
            .iter()
            .take(12)
            .position(|&c| c == b'\'')?;
        return Some(end + 3);
    }
    (bytes.get(i + 2) == Some(&b'\'')).then_some(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_docstrings_are_not_code_and_strings_are() {
        let py = "import os  # not pytest\n\"\"\"Runs under pytest.\nimport pytest\n\"\"\"\nx = os.environ['PYTEST_CURRENT_TEST']  # why\ns = 'a # b'\n";
        assert_eq!(
            code_lines(py, Syntax::Python, &[0, 1, 2, 3, 4, 5]),
            [
                "import os  ",
                "\"\"\"",
                "",
                "\"\"\"",
                "x = os.environ['PYTEST_CURRENT_TEST']  ",
                "s = 'a # b'",
            ]
        );
        let js = "/* typeof jest\n still */ const a = 1; // typeof it\nconst u = 'http://x';\n";
        assert_eq!(
            code_lines(js, Syntax::JavaScript, &[0, 1, 2]),
            ["", " const a = 1; ", "const u = 'http://x';"]
        );
        let rs = "/// uses cfg!(test)\nlet q = '\"'; let s = \"//\"; // cfg!(test)\nfn f<'a>(x: &'a str) {}\n";
        assert_eq!(
            code_lines(rs, Syntax::Rust, &[0, 1, 2]),
            [
                "",
                "let q = '\"'; let s = \"//\"; ",
                "fn f<'a>(x: &'a str) {}"
            ]
        );
    }
}
