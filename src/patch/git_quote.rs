//! Git's C-style quoting of path names, both ways: `git diff` writes a name that holds a
//! double quote, a backslash, a control character or (by default, `core.quotePath`) a
//! non-ASCII byte between double quotes with backslash escapes (`"a/\303\251.py"`).
//!
//! [`unquote`] decodes exactly what git's `unquote_c_style` accepts (`\a \b \f \n \r \t \v`,
//! `\\`, `\"` and three octal digits whose first is 0-3); [`quote`] writes a name the way
//! git does, except that non-ASCII text is left as it is (git apply accepts it, and a PR
//! body stays readable). Neither knows about `a/`/`b/` prefixes or policy.

/// Decode a quoted name at the start of `s` (which must begin with `"`): the name and the
/// text after its closing quote. `None` when `s` is not a well-formed quoted name (git then
/// reads the text literally) or the bytes it spells are not UTF-8.
pub(crate) fn unquote(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out: Vec<u8> = Vec::new();
    let mut i = 1;
    loop {
        let &c = bytes.get(i)?;
        i += 1;
        match c {
            b'"' => break,
            b'\\' => {
                let &e = bytes.get(i)?;
                i += 1;
                let decoded = match e {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 0x0b,
                    b'\\' | b'"' => e,
                    // Octal with a first digit over 3 would overflow a byte; git refuses it.
                    b'0'..=b'3' => {
                        let digit = |k: usize| match bytes.get(k) {
                            Some(&d @ b'0'..=b'7') => Some(d - b'0'),
                            _ => None,
                        };
                        let (d2, d3) = (digit(i)?, digit(i + 1)?);
                        i += 2;
                        ((e - b'0') << 6) | (d2 << 3) | d3
                    }
                    _ => return None,
                };
                out.push(decoded);
            }
            _ => out.push(c),
        }
    }
    let name = String::from_utf8(out).ok()?;
    Some((name, &s[i..]))
}

/// `s` decoded when it is exactly one quoted name (surrounding whitespace aside), else `None`.
pub(crate) fn unquote_whole(s: &str) -> Option<String> {
    let (name, rest) = unquote(s.trim())?;
    rest.trim().is_empty().then_some(name)
}

/// Whether git would quote this character even with `core.quotePath` off.
fn needs_quote(c: char) -> bool {
    c == '"' || c == '\\' || c.is_ascii_control()
}

/// `prefix` and `path` as one name, quoted the way git quotes it when it has to be.
pub(crate) fn quote(prefix: &str, path: &str) -> String {
    let name = format!("{prefix}{path}");
    if !name.chars().any(needs_quote) {
        return name;
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_git_quotes_them_decode_to_the_file_names() {
        // Each written by git 2.47 (`git diff`) for the file named on the right.
        let cases = [
            (r#""a/\303\251.py""#, "a/é.py"),
            (r#""b/\303\261 dir.py""#, "b/ñ dir.py"),
            (r#""a/back\\slash.py""#, "a/back\\slash.py"),
            (r#""a/q\"uote.py""#, "a/q\"uote.py"),
            (r#""b/x\ty.py""#, "b/x\ty.py"),
            (r#""a\n\a\b\f\r\v\001""#, "a\n\x07\x08\x0c\r\x0b\x01"),
        ];
        for (quoted, name) in cases {
            assert_eq!(unquote(quoted), Some((name.to_owned(), "")), "{quoted}");
            // Written back, it reads the same (git itself would also quote the non-ASCII).
            let written = quote("", name);
            assert_eq!(
                unquote_whole(&written).unwrap_or_else(|| written.to_string()),
                name
            );
            if name.is_ascii() {
                assert_eq!(written, quoted);
            }
        }
        assert_eq!(
            unquote("\"a/x.py\"\t2024-01-01"),
            Some(("a/x.py".to_owned(), "\t2024-01-01"))
        );
    }

    #[test]
    fn malformed_quoting_is_not_decoded() {
        for bad in [
            "a/x.py",
            "\"a/x.py",
            r#""a/\q.py""#,
            r#""a/\4001""#,
            r#""a/\38""#,
            r#""a/\""#,
            r#""\377""#,
        ] {
            assert_eq!(unquote(bad), None, "{bad}");
        }
        assert_eq!(unquote_whole(r#" "a/b" "#), Some("a/b".to_owned()));
        assert_eq!(unquote_whole(r#""a/b" x"#), None);
    }

    #[test]
    fn plain_names_are_not_quoted() {
        assert_eq!(quote("a/", "src/é x.py"), "a/src/é x.py");
    }
}
