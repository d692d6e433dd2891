//! Literal values as the languages read them, and how strongly a value of added code ties to
//! the failing test: `"bar\tbaz"` and a string holding a real tab are one value, `0x10` and
//! `16` one number, and a value ties to a test literal when it is that literal (the test's
//! whole input) or a large part of it (a sub-value: a word of an argument, an element of an
//! expected collection).
//!
//! A tie is strong when the value is shaped like data (it holds white space or punctuation
//! beyond a leading `-` or `.`): such a value in a comparison answers that input and no
//! class of inputs. A tie to a word (`json`, `__init__`) or a number is weak: ordinary code
//! compares with keywords and small numbers, so a weak tie needs the guarded result to be
//! what the test expects as well.

/// How strongly a value of added code ties to a literal of the failing test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tie {
    /// A word or a number the test uses: a special case only with the test's expected result.
    Weak,
    /// Data-shaped text the test passes (or a large part of it): a special case whatever it
    /// guards.
    Strong,
}

/// Fewest characters of a part of a test literal that ties to it.
const MIN_PART: usize = 4;

/// The value of a string literal's body: escapes read as C-like languages read them (`\t`,
/// `\n`, `\\`, `\"`, `\x41`, `\u{41}`, `\u0041`, `\101`, a line continuation); an unknown escape
/// stays as written, as Python keeps it.
pub(crate) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match next {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            '0' if !chars.peek().is_some_and(|d| d.is_digit(8)) => Some('\0'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' | '$' => Some(next),
            '\n' => {
                // A line continuation: the newline and the next line's indent go.
                while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                    chars.next();
                }
                continue;
            }
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize, radix| {
            let mut s = String::new();
            while s.len() < n && chars.peek().is_some_and(|d| d.is_digit(radix)) {
                s.extend(chars.next());
            }
            s
        };
        let code = match next {
            'x' => u32::from_str_radix(&digits(&mut chars, 2, 16), 16).ok(),
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let hex = digits(&mut chars, 6, 16);
                if chars.peek() == Some(&'}') {
                    chars.next();
                }
                u32::from_str_radix(&hex, 16).ok()
            }
            'u' => u32::from_str_radix(&digits(&mut chars, 4, 16), 16).ok(),
            'U' => u32::from_str_radix(&digits(&mut chars, 8, 16), 16).ok(),
            '0'..='7' => {
                let rest = digits(&mut chars, 2, 8);
                u32::from_str_radix(&format!("{next}{rest}"), 8).ok()
            }
            _ => None,
        };
        match code.and_then(char::from_u32) {
            Some(c) => out.push(c),
            None => {
                out.push('\\');
                out.push(next);
            }
        }
    }
    out
}

/// A number's text as one canonical spelling (`1_000`, `1000usize`, `0x3e8` and `1000.0` are
/// `1000`); `None` when the text is not a number.
pub(crate) fn number(text: &str) -> Option<String> {
    let t = text.trim().replace('_', "");
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start().to_owned()),
        None => (false, t),
    };
    let lower = t.to_ascii_lowercase();
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok().map(|v| v as f64)
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok().map(|v| v as f64)
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok().map(|v| v as f64)
    } else {
        // Type suffixes: Rust's `10usize`, `2.5f64`, JavaScript's `10n`, Python's `1j` is
        // not a plain number.
        let trimmed = [
            "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128",
            "f32", "f64", "n", "l",
        ]
        .iter()
        .find_map(|s| lower.strip_suffix(s))
        .unwrap_or(&lower);
        if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return None;
        }
        trimmed.parse::<f64>().ok()
    }?;
    let value = if negative { -value } else { value };
    if !value.is_finite() {
        return None;
    }
    Some(if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    })
}

/// Whether a value is too common to tie anything: the empty string, one character, a
/// boolean or null, and the numbers -1, 0, 1 and 2.
pub(crate) fn is_trivial(value: &str) -> bool {
    if let Some(n) = number(value) {
        return ["-1", "0", "1", "2"].contains(&n.as_str());
    }
    value.chars().count() < 2
        || [
            "true",
            "false",
            "True",
            "False",
            "None",
            "null",
            "nil",
            "undefined",
        ]
        .contains(&value)
}

/// Whether text is shaped like data rather than a word: it holds white space, a control
/// character or punctuation after any leading `-` or `.` (`a  b`, `//example.com`,
/// `bar\tbaz`; not `json`, `--verbose`, `.py`).
fn data_like(value: &str) -> bool {
    let core = value.trim_start_matches(['-', '.']);
    core.chars().count() >= 3
        && core
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || !(c.is_alphanumeric() || c == '_'))
}

/// Whether `part` is a meaningful part of `whole`: it occurs in it, holds at least
/// [`MIN_PART`] characters with two letters or digits, and is at least a third of it.
pub(crate) fn is_part(part: &str, whole: &str) -> bool {
    let n = part.chars().count();
    n >= MIN_PART
        && part.chars().filter(|c| c.is_alphanumeric()).count() >= 2
        && 3 * n >= whole.chars().count()
        && whole.contains(part)
}

/// How strongly `value` (a literal of added code) ties to the test literal `test`; `None`
/// when it does not.
pub(crate) fn tie(value: &str, test: &str) -> Option<Tie> {
    if is_trivial(value) {
        return None;
    }
    if let (Some(a), Some(b)) = (number(value), number(test)) {
        return (a == b).then_some(Tie::Weak);
    }
    if value == test {
        return Some(if data_like(value) {
            Tie::Strong
        } else {
            Tie::Weak
        });
    }
    if !is_part(value, test) {
        return None;
    }
    // A part that is half the input and shaped like data is that input's answer.
    Some(
        if data_like(value) && 2 * value.chars().count() >= test.chars().count() {
            Tie::Strong
        } else {
            Tie::Weak
        },
    )
}

/// Whether a result of added code is what the test expects: equal to an expected value
/// (numbers compared as numbers), or a meaningful part of one, or one a meaningful part of it.
pub(crate) fn answers(result: &str, expected: &str) -> bool {
    if let (Some(a), Some(b)) = (number(result), number(expected)) {
        return a == b;
    }
    result == expected || is_part(result, expected) || is_part(expected, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_read_as_the_languages_read_them() {
        assert_eq!(unescape(r"bar\tbaz"), "bar\tbaz");
        assert_eq!(unescape(r#"a\"b\\c\x41\u0042\u{43}\101"#), "a\"b\\cABCA");
        assert_eq!(unescape(r"\d+"), r"\d+");
        assert_eq!(unescape("a\\\n    b"), "ab");
    }

    #[test]
    fn numbers_have_one_spelling() {
        assert_eq!(number("1_000usize").as_deref(), Some("1000"));
        assert_eq!(number("0x3e8").as_deref(), Some("1000"));
        assert_eq!(number("1000.0").as_deref(), Some("1000"));
        assert_eq!(number("-2.5").as_deref(), Some("-2.5"));
        assert_eq!(number("abc"), None);
        assert_eq!(number("e10"), None);
    }

    #[test]
    fn ties_are_strong_for_data_and_weak_for_words_and_numbers() {
        assert_eq!(tie("a  b", "a  b"), Some(Tie::Strong));
        assert_eq!(tie("bar\tbaz", "foo bar\tbaz"), Some(Tie::Strong));
        assert_eq!(tie("json", "json"), Some(Tie::Weak));
        assert_eq!(tie("37", "37.0"), Some(Tie::Weak));
        // A separator the input holds handles a class of inputs.
        assert_eq!(tie("\t", "foo bar\tbaz"), None);
        assert_eq!(tie("2", "2"), None);
        assert_eq!(
            tie(
                "example",
                "a long sentence that mentions an example in passing"
            ),
            None
        );
    }
}
