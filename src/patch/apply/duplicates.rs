//! The two guards against lines a model re-added instead of keeping or replacing them: an
//! added block that repeats the lines next to it (`duplicated_block`, for hunks that landed
//! without exact context), and an added line that nearly repeats the nearest line next to it
//! (`near_repeat`, for hunks that landed anywhere but exactly where their header said).
//!
//! A near repeat is one of three shapes on lines of the same indentation: an assignment to
//! the same target where the later one does not read it (one of the two is dead: `x = [a, b,
//! d]` added next to `x = [a, b]`), the same call with one argument added, dropped or (among
//! several) changed, or a second `return`/`raise`/`throw` (one is unreachable). Only added
//! lines of a pure insertion count: a change that removes lines did replace something.
//!
//! It looks at the result being built; it does not land hunks.

use crate::patch::text::{OutLine, quoted};
use crate::policy::Issue;

/// Added lines shorter than this (trimmed), such as `}` or `)`, may legitimately repeat a
/// neighbour, so the duplicate guards ignore blocks made only of them.
const MIN_DUPLICATE_LINE_LEN: usize = 4;

/// An added block that repeats the lines right next to it means the model left existing
/// lines out of its context and "re-added" them.
pub(super) fn duplicated_block(path: &str, out: &[OutLine]) -> Option<Issue> {
    let mut i = 0;
    while i < out.len() {
        if !out[i].added {
            i += 1;
            continue;
        }
        let start = i;
        while i < out.len() && out[i].added {
            i += 1;
        }
        if !out[start..i].iter().any(|l| l.inexact) {
            continue;
        }
        let block: Vec<&str> = out[start..i].iter().map(|l| l.text.trim_end()).collect();
        let k = block.len();
        let same = |range: &[OutLine], part: &[&str]| {
            range.len() == part.len()
                && range.iter().zip(part).all(|(o, b)| o.text.trim_end() == *b)
        };
        let significant = |part: &[&str]| {
            part.iter()
                .any(|t| t.trim().len() >= MIN_DUPLICATE_LINE_LEN)
        };
        // The whole block, or its end (start), repeating the lines right after (before) it:
        // a replaced line followed by a re-added neighbour is the same mistake as a bare one.
        let after = (1..=k).any(|j| {
            let part = &block[k - j..];
            significant(part) && out.get(i..i + j).is_some_and(|r| same(r, part))
        });
        let before = (1..=k).any(|j| {
            let part = &block[..j];
            significant(part) && start >= j && same(&out[start - j..start], part)
        });
        if after || before {
            let side = if after { "after" } else { "before" };
            return Some(
                Issue::new(
                    "apply.duplicate-block",
                    format!(
                        "{path}: the {k} added line(s) at line {} repeat the lines right {side} \
                         them; existing lines must be context (' '), not re-added with '+'",
                        start + 1
                    ),
                )
                .at_path(path)
                .at_line((start + 1) as u64),
            );
        }
    }
    None
}

/// Added lines of a pure insertion, landed inexactly, that nearly repeat the kept lines
/// right before or after them, pair by pair (the block's first `j` lines against the `j`
/// nearest non-blank lines before it, its last `j` against those after it): the model most
/// likely meant to replace those lines.
pub(super) fn near_repeat(path: &str, out: &[OutLine]) -> Option<Issue> {
    let nonblank = |j: &usize| !out[*j].text.trim().is_empty();
    let mut i = 0;
    while i < out.len() {
        if !out[i].added {
            i += 1;
            continue;
        }
        let start = i;
        while i < out.len() && out[i].added {
            i += 1;
        }
        if !out[start..i].iter().all(|l| l.inexact && !l.replaces) {
            continue;
        }
        let added: Vec<usize> = (start..i).filter(nonblank).collect();
        // The nearest non-blank lines on each side, nearest first, up to an added one.
        let side = |range: &mut dyn Iterator<Item = usize>| -> Vec<usize> {
            range
                .filter(nonblank)
                .take(added.len())
                .take_while(|&j| !out[j].added)
                .collect()
        };
        let mut before = side(&mut (0..start).rev());
        before.reverse();
        let after = side(&mut (i..out.len()));
        for j in 1..=added.len() {
            let candidates = [
                (
                    &added[..j],
                    before.get(before.len().saturating_sub(j)..),
                    "before",
                ),
                (&added[added.len() - j..], after.get(..j), "after"),
            ];
            for (ours, theirs, side) in candidates {
                let Some(theirs) = theirs.filter(|t| t.len() == j) else {
                    continue;
                };
                let added_first = side == "after";
                // Beyond one line, only copies and in-place edits count: new code written
                // after similar code (a sibling `elif`, a test like the one above) repeats
                // its structure pair by pair, and the pairs are not neighbours, so neither
                // a dead store nor unreachable code follows from them.
                let pair = |a: &str, k: &str| {
                    if j == 1 {
                        repeats(a, k, added_first)
                    } else if leading(a) != leading(k) {
                        None
                    } else {
                        copy(a.trim(), k.trim()).or_else(|| one_edit(a.trim(), k.trim()))
                    }
                };
                let whys: Option<Vec<String>> = ours
                    .iter()
                    .zip(theirs)
                    .map(|(&a, &k)| {
                        let text = &out[a].text;
                        (text.trim().len() >= MIN_DUPLICATE_LINE_LEN)
                            .then(|| pair(text, &out[k].text))
                            .flatten()
                    })
                    .collect();
                let Some(whys) = whys else { continue };
                // Name the first pair that is not an exact copy, if any.
                let m = whys
                    .iter()
                    .position(|w| !w.starts_with("the same line"))
                    .unwrap_or(0);
                let (a, k) = (ours[m], theirs[m]);
                let kept_line = out[k].origin.map_or(k, |o| o) + 1;
                let lines = if j == 1 {
                    String::new()
                } else {
                    format!(" (one of {j} added lines that repeat the {j} lines {side} them)")
                };
                return Some(
                    Issue::new(
                        "apply.duplicate-block",
                        format!(
                            "{path}: the added line {:?} nearly repeats line {kept_line} {:?} \
                             right {side} it ({}){lines}; if it replaces that line, mark the \
                             old line with '-'; if both are meant, send the hunk with the \
                             file's exact line numbers and context",
                            quoted(&out[a].text),
                            quoted(&out[k].text),
                            whys[m],
                        ),
                    )
                    .at_path(path)
                    .at_line((a + 1) as u64),
                );
            }
        }
    }
    None
}

fn leading(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// Why `added` nearly repeats its neighbour `kept` (`added_first`: it comes before it), or
/// `None` when it does not.
fn repeats(added: &str, kept: &str, added_first: bool) -> Option<String> {
    if leading(added) != leading(kept) {
        return None;
    }
    let (a, k) = (added.trim(), kept.trim());
    if let Some(why) = copy(a, k) {
        return Some(why);
    }
    match (shape(a), shape(k)) {
        // Assignments to other targets (`self.a = None`, `self.b = None`) are never repeats.
        (Some(Shape::Assign { target: ta, .. }), Some(Shape::Assign { target: tk, .. }))
            if ta != tk =>
        {
            return None;
        }
        (Some(Shape::Assign { target, rhs: ra }), Some(Shape::Assign { rhs: rk, .. })) => {
            let later = if added_first { rk } else { ra };
            if !reads(later, &target) {
                return Some(format!(
                    "both assign `{target}`, and one value is never used"
                ));
            }
        }
        // Calls are judged by their arguments alone: registrations and checks of other
        // things repeat a call with another first argument on purpose.
        (
            Some(Shape::Call {
                callee: ca,
                args: aa,
            }),
            Some(Shape::Call {
                callee: ck,
                args: ak,
            }),
        ) if ca == ck => {
            return one_argument_apart(&aa, &ak)
                .then(|| format!("the same call to `{ca}` with other arguments"));
        }
        (Some(Shape::Exit(ea)), Some(Shape::Exit(ek))) if ea == ek => {
            return Some(format!(
                "two `{ea}` statements in a row; one is unreachable"
            ));
        }
        _ => {}
    }
    one_edit(a, k).or_else(|| one_token(a, k))
}

/// Whether a line imports (`import x`, `from x import y`): a new import next to a similar
/// one is the usual way to add one.
fn is_import(t: &str) -> bool {
    t.starts_with("import ") || (t.starts_with("from ") && t.contains(" import "))
}

/// The tokens of a line: names and numbers, string literals, single other characters.
fn tokens(t: &str) -> Vec<&str> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'_'
                    || b[i] >= 0x80
                    || b[i] == b'.' && c.is_ascii_digit())
            {
                i += 1;
            }
        } else {
            i += 1;
        }
        if let Some(tok) = t.get(start..i) {
            out.push(tok);
        }
    }
    out
}

/// Whether two lines differ in exactly one token that is not their first (`assert f(x) ==
/// 32` next to `assert f(x) == 6`, `if max(v) > n:` next to `if sum(v) > n:`): a line
/// edited in place. Imports and lines that differ in their first token (a dict key, a list
/// entry) are how similar new lines are written, so they do not count.
fn one_token(a: &str, k: &str) -> Option<String> {
    if is_import(a) || is_import(k) {
        return None;
    }
    let (ta, tk) = (tokens(a), tokens(k));
    if ta.len() != tk.len() || ta.len() < MIN_TOKENS {
        return None;
    }
    // A definition's name is its first token too: `def test_b():` after `def test_a():`.
    let name = ta.iter().position(|t| !DEFINES.contains(t)).unwrap_or(0);
    let mut differing = ta.iter().zip(&tk).enumerate().filter(|(_, (x, y))| x != y);
    match (differing.next(), differing.next()) {
        (Some((at, (x, y))), None) if at > 0 && at != name => Some(format!(
            "it is that line with `{}` for `{}`",
            quoted(x),
            quoted(y)
        )),
        _ => None,
    }
}

/// Keywords that introduce a definition whose name follows.
const DEFINES: &[&str] = &[
    "def",
    "class",
    "async",
    "fn",
    "pub",
    "function",
    "func",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
];

/// Lines with fewer tokens than this (`x = 1`) are too short to call one an edit of another.
const MIN_TOKENS: usize = 3;

/// Whether two (trimmed) lines are the same, or the same but for their spacing.
fn copy(a: &str, k: &str) -> Option<String> {
    if a == k {
        return Some("the same line".to_owned());
    }
    let squeezed = |t: &str| t.split_whitespace().collect::<String>();
    (squeezed(a) == squeezed(k)).then(|| "the same line but for its spacing".to_owned())
}

/// The shorter line of a near repeat by one edit must be at least this long (trimmed), so
/// that `x` next to `xs` is not one.
const MIN_EDITED_LINE_LEN: usize = 8;

/// Whether one line is the other with one stretch of text inserted (`f(a, b)` and
/// `f(a, b, c)`, `if x:` and `if x and y:`): the shape of a line edited in place, rarely of
/// a new line written next to a similar one (those differ in several places, or replace a
/// word: `from typing import Iterator` next to `from typing import Generator`).
fn one_edit(a: &str, k: &str) -> Option<String> {
    let (short, long) = if a.len() < k.len() { (a, k) } else { (k, a) };
    if short.len() < MIN_EDITED_LINE_LEN || short.len() == long.len() {
        return None;
    }
    let prefix = short
        .char_indices()
        .zip(long.chars())
        .find(|((_, x), y)| x != y)
        .map_or(short.len(), |((i, _), _)| i);
    let suffix = short[prefix..]
        .chars()
        .rev()
        .zip(long.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum::<usize>();
    if prefix + suffix < short.len() {
        return None;
    }
    let middle = long[prefix..long.len() - suffix].trim();
    if middle.is_empty() {
        return None;
    }
    let verb = if long.len() == a.len() {
        "added"
    } else {
        "removed"
    };
    Some(format!("it is that line with `{}` {verb}", quoted(middle)))
}

/// The statement shapes a near repeat compares.
#[derive(Debug, PartialEq, Eq)]
enum Shape<'a> {
    /// `target = value` (also `let`/`const`/`var`, an annotation, `:=`).
    Assign { target: String, rhs: &'a str },
    /// `callee(arg, ...)` as a whole statement, with its top-level arguments.
    Call { callee: &'a str, args: Vec<&'a str> },
    /// `return`, `raise` or `throw`.
    Exit(&'a str),
}

fn shape(t: &str) -> Option<Shape<'_>> {
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    for kw in ["return", "raise", "throw"] {
        if t.strip_prefix(kw)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '(', ';']))
        {
            return Some(Shape::Exit(kw));
        }
    }
    if let Some((target, rhs)) = assignment(t) {
        return Some(Shape::Assign { target, rhs });
    }
    call(t)
}

/// Byte positions in `t` at bracket depth 0 and outside string literals, with their byte.
fn top_level(t: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let b = t.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    b.iter().enumerate().filter_map(move |(i, &c)| {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            return None;
        }
        match c {
            b'"' | b'\'' | b'`' => {
                quote = Some(c);
                None
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                None
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                (depth == 0).then_some((i, c))
            }
            _ => (depth == 0).then_some((i, c)),
        }
    })
}

/// `target = rhs`: the normalized target (declaration keywords and a type annotation
/// dropped) and the value, when `t` is a plain assignment (not `==`, `+=`, `=>`, ...).
fn assignment(t: &str) -> Option<(String, &str)> {
    let b = t.as_bytes();
    let (eq, _) = top_level(t).find(|&(i, c)| {
        c == b'='
            && !matches!(b.get(i + 1), Some(b'=' | b'>'))
            && !matches!(
                i.checked_sub(1).map(|k| b[k]),
                Some(b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|')
                    | Some(b'^' | b'~' | b'@')
            )
    })?;
    let rhs = t[eq + 1..].trim();
    let mut lhs = t[..eq].trim_end().trim_end_matches(':').trim_end();
    for kw in ["let mut ", "let ", "const ", "var ", "mut "] {
        if let Some(rest) = lhs.strip_prefix(kw) {
            lhs = rest.trim_start();
            break;
        }
    }
    // A type annotation (`x: int`, `let x: u32`) is not part of the target.
    if let Some((colon, _)) = top_level(lhs).find(|&(_, c)| c == b':') {
        lhs = lhs[..colon].trim_end();
    }
    // Two words side by side (`lambda x`, `print x`) are not a target.
    let words: Vec<&str> = lhs.split_whitespace().collect();
    let word_end = |w: &str| w.chars().next_back().is_some_and(is_word_char);
    let word_start = |w: &str| w.chars().next().is_some_and(is_word_char);
    if words.windows(2).any(|p| word_end(p[0]) && word_start(p[1])) {
        return None;
    }
    let target: String = words.concat();
    let first = target
        .split(|c: char| !is_word_char(c))
        .next()
        .unwrap_or("");
    (is_target(&target) && !KEYWORDS.contains(&first)).then_some((target, rhs))
}

/// Words that start a statement but never an assignment target (`else: x = 1`).
const KEYWORDS: &[&str] = &[
    "else", "elif", "if", "for", "while", "with", "try", "except", "finally", "case", "default",
    "lambda", "return", "yield", "not", "and", "or", "in", "is", "async", "await",
];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Names, attribute chains and subscripts (`x`, `self.a`, `d["k"]`, `a, b`): what can be
/// assigned to, and nothing that merely contains an `=` (`def f(a=1`, `if x`).
fn is_target(t: &str) -> bool {
    !t.is_empty()
        && t.split(',').all(|part| {
            let part = part.trim_start_matches('*');
            let Some(first) = part.chars().next() else {
                return false;
            };
            let mut depth = 0usize;
            (first.is_alphabetic() || first == '_' || first == '$')
                && part.chars().all(|c| {
                    match c {
                        '[' => depth += 1,
                        ']' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    depth > 0 || c == ']' || c.is_alphanumeric() || matches!(c, '_' | '$' | '.')
                })
        })
}

/// Whether `rhs` reads any name of `target` (a word boundary on both sides).
fn reads(rhs: &str, target: &str) -> bool {
    let compact: String = rhs.split_whitespace().collect();
    target.split(',').any(|name| {
        let name = name.trim_start_matches('*');
        compact.match_indices(name).any(|(i, _)| {
            let before = compact[..i].chars().next_back();
            let after = compact[i + name.len()..].chars().next();
            !before.is_some_and(|c| is_word_char(c) || c == '.') && !after.is_some_and(is_word_char)
        })
    })
}

/// `callee(args)` as the whole statement (optionally awaited), split into top-level
/// arguments.
fn call(t: &str) -> Option<Shape<'_>> {
    let t = t.strip_prefix("await ").unwrap_or(t);
    let open = t.find('(')?;
    let callee = t[..open].trim_end();
    let callee_ok = callee
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && callee
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '!' | ':' | '$'));
    if !callee_ok || !t.ends_with(')') {
        return None;
    }
    // The parenthesis that opens the arguments must be the one that closes the line.
    let inner = &t[open + 1..t.len() - 1];
    let mut depth = 0i64;
    for (_, c) in top_level_all(inner) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    let mut args = Vec::new();
    let mut start = 0;
    for (i, c) in top_level(inner) {
        if c == b',' {
            args.push(inner[start..i].trim());
            start = i + 1;
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        args.push(last);
    }
    Some(Shape::Call { callee, args })
}

/// Every bracket of `t` outside string literals, with its position.
fn top_level_all(t: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    t.bytes().enumerate().filter(move |&(_, c)| {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            return false;
        }
        if matches!(c, b'"' | b'\'' | b'`') {
            quote = Some(c);
            return false;
        }
        matches!(c, b'(' | b'[' | b'{' | b')' | b']' | b'}')
    })
}

/// Whether two argument lists differ by one argument added or dropped, by one changed
/// among several after the same first one, or not at all.
fn one_argument_apart(a: &[&str], b: &[&str]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        // A changed argument counts when the first one is the same: calls that differ in
        // their first argument register or check another thing (`add_value('b', ...)`).
        0 => {
            let differing = a.iter().zip(b).filter(|(x, y)| x != y).count();
            differing == 0 || (differing == 1 && a.len() >= 2 && a[0] == b[0])
        }
        1 => (0..long.len()).any(|skip| {
            long.iter()
                .enumerate()
                .filter(|&(k, _)| k != skip)
                .map(|(_, x)| x)
                .eq(short.iter())
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_repeats_are_assignments_calls_and_exits_that_one_line_should_replace() {
        let cases = [
            (
                "from m import a, b, d",
                "from m import a, b",
                Some("it is that line with `, d` added"),
            ),
            (
                "if has_dups(t) and not cycle:",
                "if has_dups(t):",
                Some("it is that line"),
            ),
            (
                "assert f(x) == [1, 2]",
                "assert f(x) == [1, 2, 3]",
                Some("it is that line"),
            ),
            ("x = [a, b, c]", "x = [a, d]", Some("both assign `x`")),
            (
                "self.items = list(items)",
                "self.items = []",
                Some("both assign `self.items`"),
            ),
            (
                "let mut total: u32 = 0;",
                "let total = 1;",
                Some("both assign `total`"),
            ),
            (
                "check(x, 2)",
                "check(x, 1)",
                Some("the same call to `check`"),
            ),
            (
                "log.info(msg, 2, extra)",
                "log.info(msg, 1, extra)",
                Some("the same call"),
            ),
            (
                "return new_value",
                "return old_value",
                Some("two `return` statements"),
            ),
            ("do_something(x)", "do_something(x)", Some("the same line")),
            (
                "assert f(x) == 6",
                "assert f(x) == 32",
                Some("it is that line with `6` for `32`"),
            ),
            (
                "if sum(v) >= n:",
                "if max(v) >= n:",
                Some("it is that line with `sum`"),
            ),
            (
                "x == [a, b]",
                "x = [a, b]",
                Some("it is that line with `=` added"),
            ),
            // A reassignment that reads the old value, other targets, other calls, a word
            // replaced, a registration of another key.
            ("x = x.strip()", "x = read()", None),
            ("y = [a, b]", "x = [a, b]", None),
            ("out.append(b)", "out.append(a)", None),
            (
                "from typing import Iterator",
                "from typing import Generator",
                None,
            ),
            (
                "add_value('b', False, None)",
                "add_value('a', False, None)",
                None,
            ),
            ("assert_eq(f(2), 4)", "assert_eq(f(1), 1)", None),
            ("x += 1", "x = 0", None),
            (
                "def f(a=1):",
                "def f(a=2):",
                Some("it is that line with `1` for `2`"),
            ),
            (
                "else: x = 2",
                "else: x = 1",
                Some("it is that line with `2` for `1`"),
            ),
            (
                "lambda x=1: x",
                "lambda x=2: x",
                Some("it is that line with `1` for `2`"),
            ),
            ("def test_b(x):", "def test_a(x):", None),
            ("self.data_size = None", "self.data = None", None),
            ("\"b\": 1,", "\"a\": 1,", None),
        ];
        for (added, kept, want) in cases {
            let got = repeats(added, kept, false);
            assert_eq!(
                got.as_deref()
                    .map(|w| want.is_some_and(|p| w.starts_with(p))),
                want.map(|_| true),
                "{added:?} next to {kept:?}: {got:?}"
            );
        }
        // Other indentation: another block.
        assert_eq!(repeats("    x = 2", "x = 1", false), None);
        // The later line reads the target: added first, the kept line reads it.
        assert_eq!(repeats("x = read()", "x = x.strip()", true), None);
        assert!(repeats("x = read()", "x = other()", true).is_some());
    }

    #[test]
    fn statement_shapes_read_strings_and_brackets_whole() {
        assert_eq!(
            shape("d['a=b'] = {\"k\": f(1, 2)}"),
            Some(Shape::Assign {
                target: "d['a=b']".to_owned(),
                rhs: "{\"k\": f(1, 2)}"
            })
        );
        assert_eq!(
            shape("self.log(\"a, b\", (1, 2), x=3);"),
            Some(Shape::Call {
                callee: "self.log",
                args: vec!["\"a, b\"", "(1, 2)", "x=3"]
            })
        );
        assert_eq!(shape("f(a)(b)"), None);
        assert_eq!(shape("(a) + f(b)"), None);
    }

    fn out_lines(
        kept: &[&'static str],
        added: &[&'static str],
        at: usize,
    ) -> Vec<OutLine<'static>> {
        let mut out: Vec<OutLine<'static>> = kept
            .iter()
            .enumerate()
            .map(|(i, t)| OutLine::kept(&crate::patch::text::Line { text: t, eol: "\n" }, i))
            .collect();
        for (k, t) in added.iter().enumerate() {
            let mut l = OutLine::added((*t).to_owned(), false, false);
            l.inexact = true;
            out.insert(at + k, l);
        }
        out
    }

    #[test]
    fn a_block_that_repeats_the_lines_before_it_pair_by_pair_is_refused() {
        let kept = ["from a import b, c", "from d import e", "", "x = 1"];
        let added = ["from a import b, c, f", "from d import e, g"];
        let issue = near_repeat("m.py", &out_lines(&kept, &added, 2)).map(|i| i.message);
        assert_eq!(
            issue.as_deref(),
            Some(
                "m.py: the added line \"from a import b, c, f\" nearly repeats line 1 \"from a \
                 import b, c\" right before it (it is that line with `, f` added) (one of 2 \
                 added lines that repeat the 2 lines before them); if it replaces that line, \
                 mark the old line with '-'; if both are meant, send the hunk with the file's \
                 exact line numbers and context"
            )
        );
        // Landed exactly where its header said, or replacing lines, the same block stands.
        let mut exact = out_lines(&kept, &added, 2);
        exact.iter_mut().for_each(|l| l.inexact = false);
        assert_eq!(near_repeat("m.py", &exact), None);
        let mut replacing = out_lines(&kept, &added, 2);
        replacing.iter_mut().for_each(|l| l.replaces = l.added);
        assert_eq!(near_repeat("m.py", &replacing), None);
        // New lines unlike their neighbours stand too.
        let other = ["import os", "y = compute(x)"];
        assert_eq!(near_repeat("m.py", &out_lines(&kept, &other, 2)), None);
    }
}
