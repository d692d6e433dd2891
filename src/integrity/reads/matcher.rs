//! The one matcher: runs every family's query over the nodes a change adds to non-test code,
//! evaluates the queries' predicates with the file's resolver, and keeps the reads the file
//! did not already make before the change.

use std::collections::HashMap;

use tree_sitter::{Node, Parser, Point, QueryCursor, QueryPredicateArg, StreamingIterator};

use super::families::{FAMILIES, Lang, queries};
use super::go::Go;
use super::javascript::JavaScript;
use super::python::Python;
use super::rust::Rust;
use super::scope::Resolver;
use crate::integrity::test_detection::{added_lines, test_rows};
use crate::integrity::test_policy::is_test_path;
use crate::patch::FileChange;

/// At most this many characters of a read are quoted.
const QUOTED_CHARS: usize = 60;

/// One read of process state a change adds to non-test code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFlag {
    /// The family's rule id (`check.reads.argv`, ...).
    pub rule: &'static str,
    /// The file, repository-relative.
    pub path: String,
    /// 1-based line in the file after the change.
    pub line: usize,
    /// The expression as written (whitespace collapsed, cut after 60 characters).
    pub read: String,
    /// What it reads: the path it stands for when the spelling hides it, and the family's
    /// words.
    pub what: String,
}

/// Every read of process state the changes add to non-test code, by file and line; one per
/// family and line. Test files and Rust test code (`#[cfg(test)]`, `#[test]`) are not read.
pub fn process_reads(changes: &[FileChange]) -> Vec<ReadFlag> {
    let mut out = Vec::new();
    for change in changes {
        if is_test_path(&change.path) {
            continue;
        }
        let (Some(lang), Some(after)) = (Lang::of(&change.path), change.after.as_deref()) else {
            continue;
        };
        let after = String::from_utf8_lossy(after);
        let before = change.before.as_deref().map(String::from_utf8_lossy);
        out.extend(file_reads(&change.path, lang, before.as_deref(), &after));
    }
    out
}

/// One read found in a text.
#[derive(Debug, Clone)]
struct Hit {
    family: usize,
    /// 0-based row of the read's first line.
    row: usize,
    read: String,
    /// The path the read stands for (the table entry it matched), or the built string.
    path: String,
}

impl Hit {
    /// What identifies a read across the change: its family, its text and its line's text.
    fn key(&self, lines: &[&str]) -> (usize, String, String) {
        let line = lines.get(self.row).map(|l| l.trim()).unwrap_or("");
        (self.family, self.read.clone(), line.to_owned())
    }
}

/// The reads a change to one file adds.
fn file_reads(path: &str, lang: Lang, before: Option<&str>, after: &str) -> Vec<ReadFlag> {
    let added = added_lines(before.unwrap_or(""), after);
    if added.is_empty() {
        return Vec::new();
    }
    let excluded = match lang {
        Lang::Rust => test_rows(after),
        _ => Vec::new(),
    };
    let rows: Vec<usize> = added
        .into_iter()
        .filter(|r| !excluded.iter().any(|range| range.contains(r)))
        .collect();
    let new = hits(lang, after, Some(&rows));
    if new.is_empty() {
        return Vec::new();
    }
    // A read whose line the file already had (moved or re-indented code) is not new: count
    // each read with its line's text in the whole file before and after.
    let after_lines: Vec<&str> = after.lines().collect();
    let mut fresh: HashMap<(usize, String, String), isize> = HashMap::new();
    for hit in hits(lang, after, None) {
        if !excluded.iter().any(|r| r.contains(&hit.row)) {
            *fresh.entry(hit.key(&after_lines)).or_default() += 1;
        }
    }
    if let Some(before) = before {
        let before_lines: Vec<&str> = before.lines().collect();
        let before_excluded = match lang {
            Lang::Rust => test_rows(before),
            _ => Vec::new(),
        };
        for hit in hits(lang, before, None) {
            if !before_excluded.iter().any(|r| r.contains(&hit.row)) {
                *fresh.entry(hit.key(&before_lines)).or_default() -= 1;
            }
        }
    }
    let mut out = Vec::new();
    for hit in new {
        let Some(count) = fresh.get_mut(&hit.key(&after_lines)) else {
            continue;
        };
        if *count <= 0 {
            continue;
        }
        *count -= 1;
        let family = &FAMILIES[hit.family];
        let what = if hit.read == hit.path {
            family.what.to_owned()
        } else {
            format!("`{}`: {}", hit.path, family.what)
        };
        out.push(ReadFlag {
            rule: family.rule,
            path: path.to_owned(),
            line: hit.row + 1,
            read: hit.read,
            what,
        });
    }
    out
}

/// The file's resolver for `lang`.
fn resolver<'t>(lang: Lang, root: Node<'t>, text: &'t str) -> Box<dyn Resolver<'t> + 't> {
    match lang {
        Lang::Python => Box::new(Python::new(root, text)),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => Box::new(JavaScript::new(root, text)),
        Lang::Rust => Box::new(Rust::new(root, text)),
        Lang::Go => Box::new(Go::new(root, text)),
    }
}

/// Every read in `text`, or only those on `rows` (0-based, ascending); one per family and row.
fn hits(lang: Lang, text: &str, rows: Option<&[usize]>) -> Vec<Hit> {
    let mut parser = Parser::new();
    if parser.set_language(&lang.grammar()).is_err() {
        return Vec::new();
    }
    // Rust macros take token trees, which tree-sitter does not parse as expressions: read
    // `format!(...)` as the call `format_(...)`, which keeps every byte where it was.
    let source = match lang {
        Lang::Rust => macros_as_calls(text),
        _ => text.to_owned(),
    };
    let Some(tree) = parser.parse(&source, None) else {
        return Vec::new();
    };
    let root = tree.root_node();
    let resolver = resolver(lang, root, &source);
    let mut paths: HashMap<usize, Vec<String>> = HashMap::new();
    let mut out: Vec<Hit> = Vec::new();
    let on_rows = |node: Node<'_>| match rows {
        None => true,
        Some(rows) => {
            let span = node.start_position().row..=node.end_position().row;
            rows.iter().any(|r| span.contains(r))
        }
    };
    for (family, query) in queries(lang).iter().enumerate() {
        let Ok(query) = query else {
            tracing::warn!("a reads query does not compile: {query:?}");
            continue;
        };
        let Some(read_index) = query.capture_index_for_name("read") else {
            continue;
        };
        let mut cursor = QueryCursor::new();
        if let Some(rows) = rows {
            let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
                return Vec::new();
            };
            cursor.set_point_range(Point::new(*first, 0)..Point::new(last + 1, 0));
        }
        let mut matches = cursor.matches(query, root, source.as_bytes());
        while let Some(found) = matches.next() {
            let Some(node) = found
                .captures
                .iter()
                .find(|c| c.index == read_index)
                .map(|c| c.node)
            else {
                continue;
            };
            if !on_rows(node) {
                continue;
            }
            let row = node.start_position().row;
            if out.iter().any(|h| h.family == family && h.row == row) {
                continue;
            }
            let mut matched: Option<String> = None;
            let mut holds = true;
            for predicate in query.general_predicates(found.pattern_index) {
                let strings: Vec<&str> = predicate
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        QueryPredicateArg::String(s) => Some(&**s),
                        QueryPredicateArg::Capture(_) => None,
                    })
                    .collect();
                let result = match &*predicate.operator {
                    "reads?" => {
                        // A node is resolved once, whichever families ask.
                        let candidates = paths.entry(node.id()).or_insert_with(|| {
                            if resolver.is_reference(node) {
                                resolver.paths(node, 0)
                            } else {
                                Vec::new()
                            }
                        });
                        {
                            candidates
                                .iter()
                                .find_map(|p| strings.iter().find(|e| path_matches(p, e)))
                                .map(|entry| {
                                    candidates
                                        .iter()
                                        .find(|p| path_matches(p, entry))
                                        .cloned()
                                        .unwrap_or_default()
                                })
                        }
                    }
                    "git-path?" => git_path(&*resolver, node),
                    "proc-path?" => proc_path(&*resolver, node),
                    "dynamic-argument?" => dynamic_argument(&*resolver, node),
                    "caught?" => caught(&*resolver, node),
                    _ => None,
                };
                match result {
                    Some(path) => matched = Some(path),
                    None => holds = false,
                }
            }
            if let (true, Some(path)) = (holds, matched) {
                out.push(Hit {
                    family,
                    row,
                    read: quoted(text.get(node.byte_range()).unwrap_or("")),
                    path,
                });
            }
        }
    }
    out.sort_by_key(|h| (h.row, h.family));
    out
}

/// Rust source with every macro invocation whose arguments are in parentheses or brackets
/// (`format!(..)`, `vec![..]`) turned into a call or an index of the same length, so the
/// arguments parse as expressions.
fn macros_as_calls(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    for (i, byte) in bytes.iter().enumerate() {
        if *byte != b'!' || i == 0 {
            continue;
        }
        let before = bytes[i - 1];
        let after = bytes[i + 1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .copied();
        if (before.is_ascii_alphanumeric() || before == b'_') && matches!(after, Some(b'(' | b'['))
        {
            out[i] = b'_';
        }
    }
    // Only an ASCII byte was replaced by another, so the text is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Whether a resolved path is a table entry: equal, or ending in the text after `*`.
fn path_matches(path: &str, entry: &str) -> bool {
    match entry.strip_prefix('*') {
        Some(suffix) => path.ends_with(suffix),
        None => path == entry,
    }
}

/// The string a node builds when it names a `.git` path segment (`.git`, `.git/HEAD`,
/// `root/.git`): built from constants where it can be, else its literal text. Documentation
/// strings are not values.
fn git_path<'t>(resolver: &dyn Resolver<'t>, node: Node<'t>) -> Option<String> {
    if resolver.is_documentation(node) {
        return None;
    }
    // A string inside a constant concatenation is reported with the whole.
    let built = resolver.constant(node, 0);
    let text = match &built {
        Some(s) => s.as_str(),
        None if node.kind().contains("binary") => return None,
        None => resolver.scope().text(node),
    };
    let names_git = text
        .split(['/', '\\', '"', '\'', '`', '{', '}', ' '])
        .any(|segment| segment == ".git");
    names_git.then(|| text.to_owned())
}

/// The string a node builds when it is a path under `/proc` (`/proc/self/environ`,
/// `/proc/1234/stat`, `f"/proc/{pid}/cmdline"`): built from constants where it can be, else
/// its literal text (a template's constant head counts). Documentation is not a value.
fn proc_path<'t>(resolver: &dyn Resolver<'t>, node: Node<'t>) -> Option<String> {
    if resolver.is_documentation(node) {
        return None;
    }
    let built = resolver.constant(node, 0);
    let text = match &built {
        Some(s) => s.as_str(),
        None if node.kind().contains("binary") => return None,
        None => resolver.scope().text(node),
    };
    // `/proc` as a whole path segment at the start of a string (after its quote or prefix).
    let starts = text.match_indices("/proc").any(|(at, _)| {
        let before = text[..at].chars().last();
        let after = text[at + "/proc".len()..].chars().next();
        before.is_none_or(|c| matches!(c, '"' | '\'' | '`'))
            && after.is_none_or(|c| matches!(c, '/' | '"' | '\'' | '`'))
    });
    starts.then(|| text.to_owned())
}

/// The callee's path when the call's first argument is not a constant (`__import__(name)`,
/// `importlib.import_module(prefix + x)`): what it loads cannot be read.
fn dynamic_argument<'t>(resolver: &dyn Resolver<'t>, callee: Node<'t>) -> Option<String> {
    let call = callee.parent()?;
    let arguments = call.child_by_field_name("arguments")?;
    let first = arguments.named_child(0)?;
    if resolver.constant(first, 0).is_some() {
        return None;
    }
    Some(resolver.scope().text(callee).to_owned())
}

/// The member read when its object is a caught exception: the parameter of an enclosing
/// `catch (e)` clause, or of a callback given to `.catch(...)`.
fn caught<'t>(resolver: &dyn Resolver<'t>, node: Node<'t>) -> Option<String> {
    let object = node.child_by_field_name("object")?;
    let scope = resolver.scope();
    let name = scope.text(object);
    let mut at = node.parent();
    while let Some(current) = at {
        let parameter = match current.kind() {
            "catch_clause" => current.child_by_field_name("parameter"),
            "arrow_function" | "function_expression" | "function" => {
                let given_to_catch = current
                    .parent()
                    .and_then(|args| args.parent())
                    .and_then(|call| call.child_by_field_name("function"))
                    .is_some_and(|f| scope.text(f).ends_with(".catch"));
                given_to_catch
                    .then(|| {
                        current.child_by_field_name("parameter").or_else(|| {
                            current
                                .child_by_field_name("parameters")
                                .and_then(|p| p.named_child(0))
                        })
                    })
                    .flatten()
            }
            _ => None,
        };
        if parameter.is_some_and(|p| scope.text(p) == name) {
            return Some(format!("{name}.stack"));
        }
        at = current.parent();
    }
    None
}

/// A read as quoted in a flag: whitespace collapsed, cut after [`QUOTED_CHARS`].
fn quoted(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &collapsed[..at]),
        None => collapsed,
    }
}

/// The reads a change to one file adds, for the tests.
#[cfg(test)]
pub(super) fn reads_of(path: &str, before: Option<&str>, after: &str) -> Vec<ReadFlag> {
    process_reads(&[FileChange {
        path: path.to_owned(),
        before: before.map(|b| b.as_bytes().to_vec()),
        after: Some(after.as_bytes().to_vec()),
    }])
}
