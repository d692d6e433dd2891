//! Perturbed copies of a target test: the test with one input literal of the call under test
//! changed to a neighbour (a character of a string moved by one, a number by one, a boolean
//! flipped), never the value it expects. They run on the base and on the change
//! (`pipeline::canary`); a change whose only effect is on the test's exact input leaves every
//! copy's run as it was on the base.
//!
//! An input literal is a string, number or boolean in the test's body whose nearest enclosing
//! call is not an assertion (`count("a  b")` in `assert count("a  b") == 2`,
//! `slugify('a b')` in `expect(slugify('a b')).toBe('a-b')`, `parse("10s")` in Go and Rust,
//! also inside `assert_eq!`), is not a path or a file name (a perturbed path fails the same
//! way on both trees), and is not output (`print`, `console.log`, `t.Logf`).

use std::ops::Range;

use tree_sitter::Node;

use super::{descendants, text_of};

/// Copies built per target; every one must be unaffected for the change to be refused.
pub(crate) const MAX_COPIES: usize = 3;

/// Why a target has no perturbed copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoCopy {
    /// The test has no input literal: there is nothing to perturb, the check is vacuous.
    NoInput,
    /// The copies could not be built, and why: the check cannot be judged.
    NotBuilt(String),
}

impl std::fmt::Display for NoCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCopy::NoInput => f.write_str("no input literal of the call under test to perturb"),
            NoCopy::NotBuilt(reason) => f.write_str(reason),
        }
    }
}

/// Writes a copy of the test: its new name and the edits (byte range, new text) in it.
pub(super) type CopyOf<'a> = &'a dyn Fn(&str, Vec<(Range<usize>, String)>) -> String;

/// The target's file with its perturbed copies right after it, and each copy's name and what
/// it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Perturbations {
    pub with_copies: String,
    /// The target's own source (its attributes or decorators included), after which
    /// `inserted` goes: in the base tree too, where the file may differ elsewhere.
    pub anchor: String,
    /// The copies' text as inserted right after the target.
    pub inserted: String,
    /// `(copy's name, "`\"a  b\"` → `\"a  c\"`")`.
    pub copies: Vec<(String, String)>,
}

/// Callees whose literal arguments are assertions, output or files, by their last segment
/// (lower case); and roots (the first segment) that are assertion or output objects.
const NOT_INPUT_LAST: &[&str] = &[
    "equal",
    "equals",
    "eql",
    "strictequal",
    "deepequal",
    "deepstrictequal",
    "notequal",
    "same",
    "is",
    "ok",
    "fail",
    "fatal",
    "fatalf",
    "error",
    "errorf",
    "log",
    "logf",
    "print",
    "println",
    "printf",
    "sprintf",
    "format",
    "raises",
    "warns",
    "approx",
    "throws",
    "rejects",
    "match",
    "open",
    "path",
    "join",
    "require",
    "import",
    "resolve",
    "run",
    "skip",
    "describe",
    "it",
    "test",
];
const NOT_INPUT_ROOT: &[&str] = &[
    "expect", "assert", "should", "chai", "t", "tt", "st", "console", "fmt", "log", "os", "fs",
    "path",
];

/// Whether `callee` (a call's function, as written) asserts, prints, names a file or declares
/// a test rather than being code under test.
fn not_input_callee(callee: &str) -> bool {
    let root = callee
        .split(['.', ':', '('])
        .next()
        .unwrap_or(callee)
        .trim()
        .to_ascii_lowercase();
    let last = callee
        .rsplit(['.', ':'])
        .next()
        .unwrap_or(callee)
        .trim()
        .to_ascii_lowercase();
    NOT_INPUT_ROOT.contains(&root.as_str())
        || NOT_INPUT_LAST.contains(&last.as_str())
        || last.starts_with("assert")
        || last.starts_with("expect")
        || last.starts_with("read")
        || last.starts_with("load")
        || last.starts_with("fixture")
        || callee.rsplit('.').next().is_some_and(|l| {
            l.strip_prefix("to")
                .is_some_and(|rest| rest.starts_with(char::is_uppercase))
        })
}

/// The input literals of a test body, in document order. `call` says whether a node is a
/// call and gives its callee's text; `literal` whether a node is a literal this can change.
/// `skip` is the expected literal (the mutated canary's).
pub(super) fn input_literals<'t>(
    body: Node<'t>,
    text: &str,
    literal: &dyn Fn(Node<'t>) -> bool,
    call: &dyn Fn(Node<'t>) -> Option<String>,
    skip: Option<Node<'t>>,
) -> Vec<Node<'t>> {
    descendants(body)
        .into_iter()
        .filter(|node| literal(*node) && Some(node.id()) != skip.map(|s| s.id()))
        .filter(|node| !path_like(text_of(*node, text)))
        .filter(|node| {
            let mut at = node.parent();
            while let Some(current) = at {
                if current.id() == body.id() {
                    return false;
                }
                if let Some(callee) = call(current) {
                    return !not_input_callee(&callee);
                }
                at = current.parent();
            }
            false
        })
        .collect()
}

/// A string that names a file or a URL: a perturbed one fails the same way on both trees.
fn path_like(literal: &str) -> bool {
    let Some((open, close)) = string_parts(literal) else {
        return false;
    };
    let content = &literal[open..close];
    let extension = content.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    !content.contains(char::is_whitespace) && (content.contains('/') || extension)
}

/// Where a string literal's content starts and ends: after its prefix and opening quotes
/// (one or three), before its closing ones. `None` for what is not a quoted string.
fn string_parts(literal: &str) -> Option<(usize, usize)> {
    let open = literal.find(['"', '\'', '`'])?;
    let quote = &literal[open..=open];
    let triple = literal[open..].starts_with(&quote.repeat(3)) && literal.len() >= open + 6;
    let width = if triple { 3 } else { 1 };
    let close = literal.rfind(quote)? + 1 - width;
    // A raw Rust string's hashes sit between the quotes and the content.
    let hashes = literal[..open].bytes().filter(|b| *b == b'#').count();
    let (start, end) = (open + width, close);
    (start <= end && hashes == 0).then_some((start, end))
}

/// A character's neighbour of the same class: `b` for `a`, `a` for `z`, `0` for `9`, the next
/// printable ASCII character for punctuation; `None` where that would need escaping.
fn neighbour(c: char) -> Option<char> {
    let next = match c {
        'z' => 'a',
        'Z' => 'A',
        '9' => '0',
        ' ' => '_',
        c if c.is_ascii_graphic() => char::from(c as u8 + 1),
        _ => return None,
    };
    (next.is_ascii_graphic() && !matches!(next, '"' | '\'' | '`' | '\\' | '$' | '{' | '}'))
        .then_some(next)
}

/// The neighbours of a literal: a string's last and first characters moved by one (one
/// variant for a one-character or empty string), an integer plus and minus one, a boolean
/// flipped. Characters after an escape's backslash are left alone.
pub(super) fn neighbours(literal: &str) -> Vec<String> {
    match literal {
        "true" => return vec!["false".to_owned()],
        "false" => return vec!["true".to_owned()],
        "True" => return vec!["False".to_owned()],
        "False" => return vec!["True".to_owned()],
        _ => {}
    }
    if let Some((whole, fraction)) = literal.split_once('.')
        && !whole.is_empty()
        && !fraction.is_empty()
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        // A decimal float: its last digit moves by one.
        let (head, last) = literal.split_at(literal.len() - 1);
        let digit = last.bytes().next().map_or(0, |b| b - b'0');
        let mut out = vec![format!("{head}{}", (digit + 1) % 10)];
        if digit > 0 {
            out.push(format!("{head}{}", digit - 1));
        }
        return out;
    }
    if literal.starts_with(|c: char| c.is_ascii_digit()) {
        // Decimal integers, with a type suffix (`3u8`, `10n`); not floats, hex or `1_000`.
        let split = literal
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(literal.len());
        let (digits, suffix) = literal.split_at(split);
        let typed = suffix.is_empty()
            || suffix == "n"
            || (suffix.starts_with(['u', 'i'])
                && ["8", "16", "32", "64", "128", "size"].contains(&&suffix[1..]));
        let Ok(n) = digits.parse::<u64>() else {
            return Vec::new();
        };
        if !typed {
            return Vec::new();
        }
        let mut out = vec![format!("{}{suffix}", n + 1)];
        if n > 0 {
            out.push(format!("{}{suffix}", n - 1));
        }
        return out;
    }
    let Some((start, end)) = string_parts(literal) else {
        return Vec::new();
    };
    let content = &literal[start..end];
    let chars: Vec<(usize, char)> = content.char_indices().collect();
    let replace = |at: usize, c: char, new: char| {
        let mut out = literal.to_owned();
        out.replace_range(start + at..start + at + c.len_utf8(), &new.to_string());
        out
    };
    // A character after an odd run of backslashes is part of an escape.
    let escaped = |at: usize| {
        content[..at]
            .chars()
            .rev()
            .take_while(|c| *c == '\\')
            .count()
            % 2
            == 1
    };
    let mut out = Vec::new();
    match chars.as_slice() {
        [] => out.push(format!("{}a{}", &literal[..start], &literal[end..])),
        [.., (at, c)] if !escaped(*at) && *c != '\\' => {
            out.extend(neighbour(*c).map(|n| replace(*at, *c, n)));
        }
        _ => {}
    }
    if let [(at, c), _, ..] = chars.as_slice()
        && *c != '\\'
        && let Some(n) = neighbour(*c)
    {
        out.push(replace(*at, *c, n));
    }
    // The middle character, for strings long enough to have one apart from both ends.
    if chars.len() >= 3
        && let Some((at, c)) = chars.get(chars.len() / 2)
        && *c != '\\'
        && !escaped(*at)
        && let Some(n) = neighbour(*c)
    {
        out.push(replace(*at, *c, n));
    }
    out.dedup();
    out
}

/// The copies of a test: in each, every input literal moved to a neighbour (the k-th copy
/// takes each literal's k-th neighbour, or its first when it has fewer), so no copy keeps
/// any of the test's exact inputs: a test that asserts on several inputs is not passed by a
/// special case of the one left alone. `literals` holds each literal's range, text and
/// neighbours; `copy(name, edits)` writes the test renamed with `edits`.
pub(super) fn copies(
    literals: &[(Range<usize>, String, Vec<String>)],
    names: &[String],
    copy: CopyOf<'_>,
) -> Vec<(String, String, String)> {
    let rounds = literals.iter().map(|(_, _, v)| v.len()).max().unwrap_or(0);
    names
        .iter()
        .take(rounds)
        .enumerate()
        .map(|(round, name)| {
            let moved: Vec<(&Range<usize>, &String, &String)> = literals
                .iter()
                .filter_map(|(range, old, variants)| {
                    Some((range, old, variants.get(round).or(variants.first())?))
                })
                .collect();
            let edits = moved
                .iter()
                .map(|(range, _, new)| ((*range).clone(), (*new).clone()))
                .collect();
            let what = moved
                .iter()
                .map(|(_, old, new)| format!("`{old}` → `{new}`"))
                .collect::<Vec<_>>()
                .join(", ");
            (name.clone(), copy(name, edits), what)
        })
        .collect()
}

/// The perturbations of a test whose copies `copy` writes, inserted after `span` (the
/// target's source) at
/// `indent`: each literal's neighbours as `variants` gives them (`neighbours`, or fewer
/// where a language would reject one).
pub(super) fn build(
    text: &str,
    literals: &[Node<'_>],
    variants: &dyn Fn(&str) -> Vec<String>,
    names: &[String],
    copy: CopyOf<'_>,
    span: Range<usize>,
    indent: &str,
) -> Result<Perturbations, NoCopy> {
    if literals.is_empty() {
        return Err(NoCopy::NoInput);
    }
    let literals: Vec<(Range<usize>, String, Vec<String>)> = literals
        .iter()
        .map(|n| {
            let old = text_of(*n, text).to_owned();
            let new = variants(&old);
            (n.byte_range(), old, new)
        })
        .collect();
    let copies = copies(&literals, names, copy);
    if copies.is_empty() {
        let unmoved: Vec<String> = literals
            .iter()
            .map(|(_, old, _)| format!("`{old}`"))
            .collect();
        return Err(NoCopy::NotBuilt(format!(
            "no input literal has a neighbour efix can write ({})",
            unmoved.join(", ")
        )));
    }
    Ok(assemble(text, span, indent, copies))
}

/// Put `copies` (their texts) right after `end` in `text`, at `indent`, and say what each is.
fn assemble(
    text: &str,
    span: Range<usize>,
    indent: &str,
    copies: Vec<(String, String, String)>,
) -> Perturbations {
    let inserted: String = copies
        .iter()
        .map(|(_, copy, _)| format!("\n\n{indent}{copy}"))
        .collect();
    let end = span.end;
    Perturbations {
        with_copies: format!("{}{inserted}{}", &text[..end], &text[end..]),
        anchor: text[span].to_owned(),
        inserted,
        copies: copies
            .into_iter()
            .map(|(name, _, what)| (name, what))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_move_one_character_or_one_unit() {
        assert_eq!(neighbours("\"a  b\""), ["\"a  c\"", "\"b  b\"", "\"a _b\""]);
        assert_eq!(neighbours("'x'"), ["'y'"]);
        assert_eq!(neighbours("\"\""), ["\"a\""]);
        assert_eq!(neighbours("\"a\\n\""), ["\"b\\n\""]);
        assert_eq!(neighbours("\"abc\""), ["\"abd\"", "\"bbc\"", "\"acc\""]);
        assert_eq!(neighbours("'''ab'''"), ["'''ac'''", "'''bb'''"]);
        assert_eq!(neighbours("b\"az\""), ["b\"aa\"", "b\"bz\""]);
        assert_eq!(neighbours("10"), ["11", "9"]);
        assert_eq!(neighbours("0"), ["1"]);
        assert_eq!(neighbours("3u8"), ["4u8", "2u8"]);
        assert_eq!(neighbours("True"), ["False"]);
        assert_eq!(neighbours("2.5"), ["2.6", "2.4"]);
        assert_eq!(neighbours("0.0"), ["0.1"]);
        assert!(neighbours("1e5").is_empty());
        assert!(neighbours("r#\"a\"#").is_empty());
    }

    #[test]
    fn paths_and_urls_are_not_inputs_but_sentences_are() {
        assert!(path_like("'fixtures/a.json'"));
        assert!(path_like("\"data.csv\""));
        assert!(path_like("'http://x/y'"));
        assert!(!path_like("\"a  b\""));
        assert!(!path_like("'Hello world. Bye.'"));
        assert!(!path_like("\"1.5\""));
    }

    #[test]
    fn assertions_output_and_files_are_not_code_under_test() {
        for callee in [
            "self.assertEqual",
            "expect",
            "expect(x).toBe",
            "assert.strictEqual",
            "t.equal",
            "t.Fatalf",
            "print",
            "console.log",
            "open",
            "fs.readFileSync",
            "pytest.raises",
            "load_fixture",
        ] {
            assert!(not_input_callee(callee), "{callee}");
        }
        for callee in [
            "count",
            "slugify",
            "parser.parse",
            "Duration::parse",
            "totals",
            "it_counts",
        ] {
            assert!(!not_input_callee(callee), "{callee}");
        }
    }
}
