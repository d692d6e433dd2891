//! The syntax check: a file that parsed without error before the patch must parse without
//! error after it (tree-sitter grammars for Rust, Python, JavaScript, TypeScript and Go).
//!
//! Files in other languages, and files that already had errors, are not checked.
//!
//! Parsing whole large files is too slow for the corpus goal (tree-sitter dominated the
//! profile), so only a window is parsed: the changed lines widened to the nearest top-level
//! statements (lines that start at column 0). The after side is parsed first, since most
//! patches parse cleanly after and then the before side does not matter. A window with an
//! error after the patch is parsed before it too: when it did not parse before either, it is
//! not self-contained and widens; when no window of a region is self-contained, small files
//! fall back to a whole-file parse and large ones go unchecked. When a window parsed before
//! and not after, whole-file parses confirm it and give the line (most such windows are
//! false alarms, cut inside a construct the patch added, so the after side goes first there
//! as well).
//!
//! Python is the exception to trusting windows: tree-sitter accepts a block indented deeper
//! than its neighbours, and what such a move breaks is the structure around it (an `elif`
//! cut off from its `if`), so a region whose changed lines start at another depth after the
//! patch is decided by whole-file parses, whatever the file's size.
//!
//! The after side is no longer parsed incrementally from the before tree: with after first,
//! the before tree exists only when the after side already has an error.
//!
//! Python files are also held to CPython's indentation rules (`python_indent`), which
//! tree-sitter does not enforce: a dedent to a column no enclosing block uses, tabs and spaces
//! mixed inconsistently, an unexpected indent, a header without its block. A file that broke
//! those rules before the patch is not judged by them.

mod python_indent;

pub(crate) use python_indent::{IndentError, Unreachable};

use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use similar::{DiffTag, TextDiff};
use tree_sitter::{Language, Node, Parser};

/// The grammar for a path, with a stable name that keys the per-thread parser cache.
fn language(path: &str) -> Option<(&'static str, Language)> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "rs" => ("rust", tree_sitter_rust::LANGUAGE.into()),
        "py" | "pyi" => ("python", tree_sitter_python::LANGUAGE.into()),
        "js" | "jsx" | "mjs" | "cjs" => ("javascript", tree_sitter_javascript::LANGUAGE.into()),
        "ts" | "mts" | "cts" => (
            "typescript",
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        ),
        "tsx" => ("tsx", tree_sitter_typescript::LANGUAGE_TSX.into()),
        "go" => ("go", tree_sitter_go::LANGUAGE.into()),
        _ => return None,
    })
}

thread_local! {
    /// One parser per language and thread: creating a parser and loading its grammar for
    /// every checked file showed in the profile, and a parser keeps its buffers between parses.
    static PARSERS: RefCell<HashMap<&'static str, Parser>> = RefCell::new(HashMap::new());
}

/// Run `f` with this thread's parser for `path`'s language; `None` for other languages.
fn with_parser<R>(path: &str, f: impl FnOnce(&mut Parser) -> Option<R>) -> Option<R> {
    let (name, lang) = language(path)?;
    PARSERS.with(|cell| {
        // A re-entrant call (none exists today) gets a fresh parser instead of a panic.
        let Ok(mut parsers) = cell.try_borrow_mut() else {
            let mut parser = Parser::new();
            parser.set_language(&lang).ok()?;
            return f(&mut parser);
        };
        let parser = match parsers.entry(name) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                let mut parser = Parser::new();
                parser.set_language(&lang).ok()?;
                v.insert(parser)
            }
        };
        // A parse that was cut short would leave state behind; start from a clean slate.
        parser.reset();
        f(parser)
    })
}

/// `None` when the text parses cleanly (or cannot be checked), else the 1-based line of the
/// first error.
fn first_error(parser: &mut Parser, text: &str) -> Option<Option<u64>> {
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    if !root.has_error() {
        return Some(None);
    }
    Some(Some(error_line(root)))
}

fn error_line(node: Node<'_>) -> u64 {
    let mut cursor = node.walk();
    let mut n = node;
    // Descend to the first error or missing node in document order.
    loop {
        if n.is_error() || n.is_missing() {
            return n.start_position().row as u64 + 1;
        }
        let next = n
            .children(&mut cursor)
            .find(|c| c.has_error() || c.is_missing());
        match next {
            Some(c) => n = c,
            None => return n.start_position().row as u64 + 1,
        }
    }
}

/// What a patch broke in a file that was sound before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Broken {
    /// The grammar no longer parses; the 1-based line of the first error.
    Parse { line: u64 },
    /// CPython's tokenizer (or its indentation rules) refuses a Python file that tree-sitter
    /// may well accept.
    Indent(IndentError),
}

impl Broken {
    pub(crate) fn line(&self) -> u64 {
        match self {
            Broken::Parse { line } => *line,
            Broken::Indent(e) => e.line,
        }
    }
}

/// What the patch broke in `path` (`before` is `None` for a new file): first CPython's
/// indentation rules for Python files that kept them before (a linear scan of the whole
/// file, cheap next to a parse), then the grammar.
pub(crate) fn introduced(path: &str, before: Option<&str>, after: &str) -> Option<Broken> {
    review(path, before, after).broken
}

/// What the syntax check finds in one file after the patch.
#[derive(Debug, Default)]
pub(crate) struct Review {
    /// What the patch broke, if anything.
    pub broken: Option<Broken>,
    /// In a Python file that still keeps CPython's indentation rules, the first statement
    /// the patch left unreachable.
    pub unreachable: Option<Unreachable>,
}

/// [`introduced`], and from the same scan of a Python file the first statement the patch
/// left unreachable: one whose two lines (the block's `return`, `raise`, `continue` or
/// `break`, and the statement after it at the same depth), compared trimmed, the file did
/// not already have. Added lines indented one block too deep or too shallow end up there.
pub(crate) fn review(path: &str, before: Option<&str>, after: &str) -> Review {
    let mut review = Review::default();
    if indentation_matters(path) {
        let before_scan = || before.map(python_indent::scan);
        match python_indent::scan(after) {
            Err(e) => {
                if before_scan().is_none_or(|b| b.is_ok()) {
                    review.broken = Some(Broken::Indent(e));
                    return review;
                }
            }
            Ok(found) if !found.is_empty() => match before_scan() {
                Some(Err(_)) => {}
                had => review.unreachable = new_unreachable(before, had, after, found),
            },
            Ok(_) => {}
        }
    }
    let line = match before {
        Some(b) => introduced_error(path, b, after),
        None => error_in_new_file(path, after),
    };
    review.broken = line.map(|line| Broken::Parse { line });
    review
}

/// The first of `found` (the after text's unreachable statements) that `before` did not
/// have (`had`: its scan).
fn new_unreachable(
    before: Option<&str>,
    had: Option<Result<Vec<Unreachable>, IndentError>>,
    after: &str,
    found: Vec<Unreachable>,
) -> Option<Unreachable> {
    let pair = |lines: &[&str], u: &Unreachable| {
        let line = |n: u64| {
            lines
                .get((n - 1) as usize)
                .map_or("", |l| l.trim())
                .to_owned()
        };
        (line(u.ender), line(u.line))
    };
    let mut counts: HashMap<(String, String), usize> = HashMap::new();
    if let (Some(b), Some(Ok(had))) = (before, had) {
        let lines: Vec<&str> = b.lines().collect();
        for u in &had {
            *counts.entry(pair(&lines, u)).or_default() += 1;
        }
    }
    let lines: Vec<&str> = after.lines().collect();
    found
        .into_iter()
        .find(|u| match counts.get_mut(&pair(&lines, u)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
}

/// Files up to this size are parsed whole when the changed window is not self-contained.
const WHOLE_FILE_LIMIT: usize = 32 * 1024;

/// The 1-based line of the first syntax error that the patch introduced, if any.
///
/// The after side is parsed first: most patches parse cleanly after, and then the before
/// side (did the file parse before?) does not matter, so it is parsed only under an error.
fn introduced_error(path: &str, before: &str, after: &str) -> Option<u64> {
    with_parser(path, |parser| {
        // Windows are a fast screen; whole-file parses decide.
        let mut flagged = false;
        let mut isolated = true;
        let moved = indentation_matters(path);
        'regions: for tries in windows(before, after, moved) {
            if tries.is_empty() {
                // A Python region whose changed lines moved to another depth: tree-sitter
                // accepts a misindented block on its own, and what breaks is the structure
                // around it (an `elif` left without its `if`), so only the whole file shows it.
                flagged = true;
                break;
            }
            for w in &tries {
                match window_verdict(parser, w) {
                    Verdict::Clean => continue 'regions,
                    // The window does not parse on its own before the patch: widen it.
                    Verdict::NotSelfContained => continue,
                    // A window's edges can cut a construct the patch changed, so confirm it.
                    Verdict::Introduced => {
                        flagged = true;
                        break 'regions;
                    }
                }
            }
            isolated = false;
        }
        // A flagged window is most often a false alarm (its edges cut a construct the
        // patch added), so the after side is parsed first here too.
        if !flagged && (isolated || before.len() > WHOLE_FILE_LIMIT) {
            return None;
        }
        match first_error(parser, after)? {
            None => None,
            Some(line) => match first_error(parser, before)? {
                None => Some(line),
                Some(_) => None,
            },
        }
    })
}

/// What one window says about its region.
enum Verdict {
    /// The window parses after the patch.
    Clean,
    /// It does not parse after the patch, and did not before either: widen it.
    NotSelfContained,
    /// It parsed before the patch and does not after.
    Introduced,
}

/// Parse the window's after side, and its before side only when the after side has an
/// error. A parse the parser gave up on counts as not self-contained, so the window widens.
fn window_verdict(parser: &mut Parser, w: &Window<'_>) -> Verdict {
    match first_error(parser, &w.after) {
        Some(None) => Verdict::Clean,
        None => Verdict::NotSelfContained,
        Some(Some(_)) => match first_error(parser, &dedent(&w.before, w.cut)) {
            Some(None) => Verdict::Introduced,
            _ => Verdict::NotSelfContained,
        },
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A line that can start a window: not blank, not a closing bracket, not a clause that
/// continues the statement above.
fn starts_statement(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty()
        && !t.starts_with([')', ']', '}'])
        && !["else", "elif", "except", "finally", "case"]
            .iter()
            .any(|k| t.starts_with(k))
}

/// One changed region of both texts, widened to whole statements and dedented.
struct Window<'t> {
    /// The before side's lines, dedented by `cut` only when needed (most windows are clean
    /// after the patch, and then the before side is never parsed).
    before: Vec<&'t str>,
    cut: usize,
    after: String,
}

/// `lines` joined, with up to `cut` leading columns removed from lines indented that much.
fn dedent(lines: &[&str], cut: usize) -> String {
    lines
        .iter()
        .map(|l| {
            if indent(l) >= cut {
                l.get(cut..).unwrap_or(l)
            } else {
                l
            }
        })
        .collect()
}

/// A diff operation with its line ranges in the whole before and after texts.
type Op = (DiffTag, std::ops::Range<usize>, std::ops::Range<usize>);

/// How many times a window may widen to its enclosing block.
const MAX_WIDENINGS: usize = 4;

/// Candidate windows per changed region, narrowest first, widened to whole statements at the changed lines'
/// indentation, never past the unchanged lines that separate it from its neighbours.
///
/// With `moved` set, a region whose changed lines start at another depth after the patch
/// than before gets no window (an empty list): its neighbours' structure may have changed.
fn windows<'t>(before: &'t str, after: &'t str, moved: bool) -> Vec<Vec<Window<'t>>> {
    let b: Vec<&str> = before.split_inclusive('\n').collect();
    // Diff only the changed middles; their line ranges are shifted back afterwards.
    let (skip, b_mid, a_mid) = crate::patch::text::middles(before, after);
    let a = after_lines(&b, skip, b_mid, a_mid);
    let diff = TextDiff::from_lines(b_mid, a_mid);
    let shifted = |r: std::ops::Range<usize>| r.start + skip..r.end + skip;
    // A blank line the diff matched inside a changed block (an added function whose blank
    // line lines up with an existing one) does not split it into two regions: each half's
    // window would be cut inside the block and show an error the patch did not make.
    let mut ops: Vec<Op> = Vec::new();
    for op in diff.ops() {
        let (tag, old, new) = op.as_tag_tuple();
        let (old, new) = (shifted(old), shifted(new));
        if tag != DiffTag::Equal
            && let [
                ..,
                (prev_tag, prev_old, prev_new),
                (DiffTag::Equal, eq_old, _),
            ] = ops.as_slice()
            && *prev_tag != DiffTag::Equal
            && b[eq_old.clone()].iter().all(|l| l.trim().is_empty())
        {
            let joined = (
                DiffTag::Replace,
                prev_old.start..old.end,
                prev_new.start..new.end,
            );
            ops.truncate(ops.len() - 2);
            ops.push(joined);
            continue;
        }
        ops.push((tag, old, new));
    }
    let mut out = Vec::new();
    for (i, (tag, old, new)) in ops.iter().cloned().enumerate() {
        if tag == DiffTag::Equal {
            continue;
        }
        // The unchanged lines around the middles count as equal neighbours too.
        let lower = match i.checked_sub(1).map(|k| &ops[k]) {
            Some((DiffTag::Equal, eq_old, _)) => eq_old.start,
            Some(_) => old.start,
            None => 0,
        };
        let upper = match ops.get(i + 1) {
            Some((DiffTag::Equal, eq_old, _)) => eq_old.end,
            Some(_) => old.end,
            None => b.len(),
        };
        let shift = new.start as i64 - old.start as i64;
        let depth = |lines: &[&str]| {
            lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| indent(l))
                .min()
        };
        let (b_depth, a_depth) = (depth(&b[old.clone()]), depth(&a[new.clone()]));
        if moved
            && moved_without_opener(&a[new.clone()], b_depth, a_depth)
            && reindents(&b[old.clone()], &a[new.clone()])
        {
            out.push(Vec::new());
            continue;
        }
        let mut level = b_depth.into_iter().chain(a_depth).min().unwrap_or(0);
        // Widen step by step to the enclosing blocks until a window parses before the patch.
        let mut tries = Vec::new();
        for _ in 0..MAX_WIDENINGS {
            let opens = |k: usize| indent(b[k]) <= level && starts_statement(b[k]);
            // With no statement start between the previous change and this one, the window
            // starts at the changed line when it starts a statement: the previous change's
            // trailing lines are usually the inside of a bracket or call, which never parses.
            let start = (lower..old.start)
                .rev()
                .find(|&k| opens(k))
                .or_else(|| (old.start < b.len() && opens(old.start)).then_some(old.start))
                .unwrap_or(lower);
            let extra = (old.end..upper)
                .find(|&k| indent(b[k]) <= level && starts_statement(b[k]))
                .map_or(upper - old.end, |k| k - old.end);
            let cut = b.get(start).map_or(0, |l| indent(l).min(level));
            let a_start = (start as i64 + shift).max(0) as usize;
            tries.push(Window {
                before: b[start..old.end + extra].to_vec(),
                cut,
                after: dedent(
                    &a[a_start.min(a.len())..(new.end + extra).min(a.len())],
                    cut,
                ),
            });
            let start_indent = b.get(start).map_or(0, |l| indent(l));
            if start_indent == 0 || start == lower {
                break;
            }
            level = start_indent - 1;
        }
        out.push(tries);
    }
    out
}

/// Whether a region's changed lines (`after`, its new lines) start at another depth than
/// before without opening a block at the new depth: lines moved deeper or shallower than
/// their neighbours. A new `if x:` around the old lines starts shallower and opens a block,
/// which the window sees whole.
fn moved_without_opener(after: &[&str], b_depth: Option<usize>, a_depth: Option<usize>) -> bool {
    let (Some(b), Some(a)) = (b_depth, a_depth) else {
        return false;
    };
    let opens_block = || {
        after.iter().any(|l| {
            let code = l.split('#').next().unwrap_or(l).trim_end();
            indent(l) == a && code.ends_with(':')
        })
    };
    a > b || (a < b && !opens_block())
}

/// Whether some non-blank line of `before` comes back in `after` with the same text at
/// another indentation (a block moved rather than rewritten).
fn reindents(before: &[&str], after: &[&str]) -> bool {
    before.iter().filter(|l| !l.trim().is_empty()).any(|b| {
        after
            .iter()
            .any(|a| a.trim() == b.trim() && indent(a) != indent(b))
    })
}

/// Whether a line's indentation is part of the syntax of `path`'s language.
pub(crate) fn indentation_matters(path: &str) -> bool {
    language(path).is_some_and(|(name, _)| name == "python")
}

/// The lines of the after text, from the before text's lines `b` and the middles that
/// [`crate::patch::text::middles`] cut (`skip` common leading lines): the common leading and
/// trailing lines are the before text's, so only the after middle is split (splitting whole
/// large files twice showed in the profile).
fn after_lines<'t>(b: &[&'t str], skip: usize, b_mid: &str, a_mid: &'t str) -> Vec<&'t str> {
    let tail = b
        .len()
        .saturating_sub(skip + b_mid.split_inclusive('\n').count());
    let mut a = Vec::with_capacity(b.len());
    a.extend_from_slice(b.get(..skip).unwrap_or_default());
    a.extend(a_mid.split_inclusive('\n'));
    a.extend_from_slice(b.get(b.len() - tail..).unwrap_or_default());
    a
}

/// The 1-based line of the first syntax error in a new file, if any (large new files, such
/// as vendored copies, are not checked).
fn error_in_new_file(path: &str, after: &str) -> Option<u64> {
    if after.len() > WHOLE_FILE_LIMIT {
        return None;
    }
    with_parser(path, |parser| first_error(parser, after))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_the_patch_left_unreachable_is_reported_only_when_new() {
        let before = "def f(x):\n    return x\n    old()\n\n\ndef g():\n    pass\n";
        let unreachable = |after: &str| review("m.py", Some(before), after).unreachable;
        // The dead line the file already had is not the patch's doing.
        assert_eq!(
            unreachable("def f(x):\n    return x\n    old()\n\n\ndef g():\n    return 1\n"),
            None
        );
        assert_eq!(
            unreachable(
                "def f(x):\n    return x\n    old()\n\n\ndef g():\n    return 1\n    h()\n"
            ),
            Some(Unreachable { ender: 7, line: 8 })
        );
        assert!(
            review("m.py", None, "def f():\n    raise E\n    g()\n")
                .unreachable
                .is_some()
        );
        assert!(
            review("m.js", None, "function f() {\n  return 1\n  g()\n}\n")
                .unreachable
                .is_none()
        );
    }

    #[test]
    fn an_error_introduced_by_the_patch_is_found_at_its_line() {
        let before = "def f():\n    return 1\n";
        let after = "def f():\n    return 1\n\ndef g(:\n    pass\n";
        assert_eq!(introduced_error("a.py", before, after), Some(4));
        assert_eq!(
            introduced_error("a.rs", "fn a() {}\n", "fn a() {\n"),
            Some(1)
        );
    }

    #[test]
    fn an_error_inside_a_method_is_found_through_a_dedented_window() {
        let before =
            "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
        let after =
            "class A:\n    def f(self):\n        return (1\n\n    def g(self):\n        return 2\n";
        assert_eq!(introduced_error("a.py", before, after), Some(3));
        let fine =
            "class A:\n    def f(self):\n        return 3\n\n    def g(self):\n        return 2\n";
        assert_eq!(introduced_error("a.py", before, fine), None);
    }

    #[test]
    fn files_that_were_already_broken_or_unknown_are_not_checked() {
        assert_eq!(introduced_error("a.py", "def (:\n", "def ((:\n"), None);
        assert_eq!(introduced_error("a.txt", "", "((("), None);
        assert_eq!(
            introduced_error("a.go", "package a\n", "package a\nfunc f() {}\n"),
            None
        );
    }

    #[test]
    fn a_blank_line_the_diff_matched_inside_an_added_function_does_not_split_its_window() {
        let before = "def skip():\n    pass\n\n\ndef fail():\n    pass\n";
        let added = "def skip():\n    pass\ndef skip_module():\n    \"\"\"\n    Skip it.\n\n    \
                     More.\n    \"\"\"\n    pass\n\ndef fail():\n    pass\n";
        // The diff itself lines the added blank line up with the existing one.
        let diff = TextDiff::from_lines(before, added);
        let changes = diff.ops().iter().filter(|op| op.tag() != DiffTag::Equal);
        assert_eq!(changes.count(), 2);
        let regions: Vec<usize> = windows(before, added, true).iter().map(Vec::len).collect();
        assert_eq!(regions.len(), 1, "{regions:?}");
        assert_eq!(introduced_error("a.py", before, added), None);
        let broken = added.replace("    More.\n    \"\"\"\n", "    More.\n");
        assert!(introduced_error("a.py", before, &broken).is_some());
    }

    #[test]
    fn a_window_starts_at_the_changed_statement_when_the_previous_change_leaves_no_start() {
        let before = "assert f(1) == [\n    1, 2,\n    3]\n\nassert f(2) == [\n    4]\n";
        let after = "assert g(1) == [\n    1, 2,\n    3]\n\nassert g(2) == [\n    4]\n";
        let regions = windows(before, after, true);
        assert_eq!(regions.len(), 2);
        assert_eq!(regions[1][0].before.first(), Some(&"assert f(2) == [\n"));
        assert_eq!(introduced_error("a.py", before, after), None);
        let broken = after.replace("    4]\n", "    4\n");
        assert!(introduced_error("a.py", before, &broken).is_some());
    }

    #[test]
    fn a_block_moved_deeper_is_checked_against_the_structure_around_it() {
        let before = "def f(t):\n    \"\"\"Doc.\"\"\"\n    if t is None:\n        return 0\n    \
                      elif t > 1:\n        a = g(t)\n        b = g(t)\n        return h(a, b)\n    \
                      elif t < 0:\n        return 1\n\n\nX = 1\n";
        // Each window alone parses (tree-sitter accepts a block deeper than its neighbours),
        // but the dedent after the block ends the `elif` chain: the last `elif` has no `if`.
        let after = before
            .replace("        return 0\n", "            return 0\n")
            .replace(
                "        a = g(t)\n        b = g(t)\n",
                "            a = g(t)\n            b = g(t)\n",
            );
        assert!(introduced_error("a.py", before, &after).is_some());
        // The same lines moved into a new block are fine.
        let nested = before.replace(
            "        a = g(t)\n        b = g(t)\n",
            "        if t:\n            a = g(t)\n            b = g(t)\n",
        );
        assert_eq!(introduced_error("a.py", before, &nested), None);
    }

    #[test]
    fn after_lines_are_the_split_after_text() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc", "a\nb\nc\nd"),
            ("a\nb\n", "a\n"),
            ("", "x\ny"),
            ("x\n", ""),
            ("a\na\n", "a\n"),
            ("a\nb", "a\nb\n"),
            ("p\nq\nr\n", "p\nx\ny\nq\nr\n"),
        ];
        for (before, after) in cases {
            let b: Vec<&str> = before.split_inclusive('\n').collect();
            let (skip, b_mid, a_mid) = crate::patch::text::middles(before, after);
            let want: Vec<&str> = after.split_inclusive('\n').collect();
            assert_eq!(
                after_lines(&b, skip, b_mid, a_mid),
                want,
                "{before:?} -> {after:?}"
            );
        }
    }

    #[test]
    fn the_whole_file_check_agrees_with_a_fresh_parse() {
        // Unbalanced braces spanning top-level items defeat every window, so this goes
        // through the whole-file path; it must report what a fresh parse of the result does.
        let before = "fn a() {\n    let x = 1;\n}\n\nfn b() {\n    let y = 2;\n}\n";
        let broken = "fn a() {\n    let x = 1;\n\nfn b() {\n    let y = 2;\n}\n";
        let fine = "fn a() {\n    let x = 10;\n}\n\nfn b() {\n    let y = 2;\n}\n";
        let fresh =
            |text: &str| with_parser("a.rs", |p| first_error(p, text)).and_then(|line| line);
        assert!(fresh(broken).is_some());
        assert_eq!(
            (
                introduced_error("a.rs", before, broken),
                introduced_error("a.rs", before, fine)
            ),
            (fresh(broken), None)
        );
    }

    #[test]
    fn python_indentation_cpython_refuses_is_reported_even_when_tree_sitter_parses() {
        let before = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        \
                      return 2\n";
        // A body shifted one column, a dedent to no enclosing level, a tab among spaces.
        let shifted = before.replace("        return 2", "         return 2");
        let dedent = before.replace(
            "    def g(self):\n        return 2",
            "    def g(self):\n        \
                                     x = 1\n      return 2",
        );
        let tab = before.replace("        return 2", "\treturn 2");
        let kinds: Vec<Option<(u64, String)>> = [&shifted, &dedent, &tab]
            .iter()
            .map(|after| match introduced("a.py", Some(before), after) {
                Some(Broken::Indent(e)) => Some((e.line, e.problem.explain())),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                None,
                Some((
                    7,
                    "unindent does not match any outer indentation level: the line starts at \
                     column 6 but the enclosing blocks start at columns 0, 4, 8; indent it to \
                     one of them"
                        .to_owned()
                )),
                Some((
                    6,
                    "inconsistent use of tabs and spaces in indentation; indent it with the \
                     same characters as the lines around it"
                        .to_owned()
                )),
            ]
        );
        // The one-column shift is a consistent deeper body: CPython accepts it.
        assert_eq!(introduced("a.py", Some(before), &shifted), None);
        // A file that already broke the rules is not judged by them; a new file is.
        assert_eq!(
            introduced("a.py", Some("if x:\n  a\n b\n"), "if x:\n  a\n b\nc\n"),
            None
        );
        assert!(matches!(
            introduced("b.py", None, "if x:\n    a = 1\n   b = 2\n"),
            Some(Broken::Indent(_))
        ));
        assert_eq!(
            introduced("a.txt", None, "if x:\n    a = 1\n   b = 2\n"),
            None
        );
    }
}
