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
        quote: char,
        triple: bool,
    },
    Block,
}

/// The code of every line of `text`, in order (one entry per line of `text.lines()`).
pub(crate) fn code_lines(text: &str, syntax: Syntax) -> Vec<String> {
    let mut out = Vec::new();
    let mut state = State::Code;
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut code = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match state {
                State::Block => {
                    if c == '*' && next == Some('/') {
                        state = State::Code;
                        i += 1;
                    }
                }
                State::Str { quote, triple } => {
                    if c == '\\' {
                        if !triple {
                            code.push(c);
                            code.extend(next);
                        }
                        i += 1;
                    } else if c == quote
                        && (!triple || (next == Some(quote) && chars.get(i + 2) == Some(&quote)))
                    {
                        if triple {
                            i += 2;
                            code.push_str(&quote.to_string().repeat(3));
                        } else {
                            code.push(c);
                        }
                        state = State::Code;
                    } else if !triple {
                        code.push(c);
                    }
                }
                State::Code => {
                    let line_comment = match syntax {
                        Syntax::Python => c == '#',
                        _ => c == '/' && next == Some('/'),
                    };
                    if line_comment {
                        break;
                    }
                    if syntax != Syntax::Python && c == '/' && next == Some('*') {
                        state = State::Block;
                        i += 2;
                        continue;
                    }
                    if let Some(skip) = char_literal(syntax, &chars, i) {
                        code.extend(&chars[i..i + skip]);
                        i += skip;
                        continue;
                    }
                    if opens_string(syntax, c) {
                        let triple = syntax == Syntax::Python
                            && next == Some(c)
                            && chars.get(i + 2) == Some(&c);
                        if triple {
                            code.push_str(&c.to_string().repeat(3));
                            i += 2;
                        } else {
                            code.push(c);
                        }
                        state = State::Str { quote: c, triple };
                    } else {
                        code.push(c);
                    }
                }
            }
            i += 1;
        }
        // Only triple-quoted strings and JavaScript's template literals span lines.
        if let State::Str { quote, triple } = state
            && !triple
            && !(syntax == Syntax::JavaScript && quote == '`')
            && !(syntax == Syntax::Go && quote == '`')
        {
            state = State::Code;
        }
        out.push(code);
    }
    out
}

fn opens_string(syntax: Syntax, c: char) -> bool {
    match syntax {
        Syntax::Python => c == '"' || c == '\'',
        Syntax::JavaScript => c == '"' || c == '\'' || c == '`',
        Syntax::Rust => c == '"',
        Syntax::Go => c == '"' || c == '`',
    }
}

/// The length of a Rust or Go char literal (`'"'`, `'\''`, `'\u{22}'`) starting at `i`, so its
/// quote is not taken for a string; `None` for anything else (a Rust lifetime stays code).
fn char_literal(syntax: Syntax, chars: &[char], i: usize) -> Option<usize> {
    if !matches!(syntax, Syntax::Rust | Syntax::Go) || chars.get(i) != Some(&'\'') {
        return None;
    }
    if chars.get(i + 1) == Some(&'\\') {
        let end = chars[i + 2..].iter().take(12).position(|&c| c == '\'')?;
        return Some(end + 3);
    }
    (chars.get(i + 2) == Some(&'\'')).then_some(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_docstrings_are_not_code_and_strings_are() {
        let py = "import os  # not pytest\n\"\"\"Runs under pytest.\nimport pytest\n\"\"\"\nx = os.environ['PYTEST_CURRENT_TEST']  # why\ns = 'a # b'\n";
        assert_eq!(
            code_lines(py, Syntax::Python),
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
            code_lines(js, Syntax::JavaScript),
            ["", " const a = 1; ", "const u = 'http://x';"]
        );
        let rs = "/// uses cfg!(test)\nlet q = '\"'; let s = \"//\"; // cfg!(test)\nfn f<'a>(x: &'a str) {}\n";
        assert_eq!(
            code_lines(rs, Syntax::Rust),
            [
                "",
                "let q = '\"'; let s = \"//\"; ",
                "fn f<'a>(x: &'a str) {}"
            ]
        );
    }
}
