//! JavaScript and TypeScript import statements: ESM `import ... from`, side-effect
//! `import '...'`, re-exports (`export * from`, `export { x } from`), CommonJS `require`
//! with or without a binding, and dynamic `import()`. Resolution is `node`'s.

use std::sync::LazyLock;

use regex::Regex;

use super::node::{Style, resolve};
use super::{Import, statement};
use crate::localize::tree::{Tree, line_at};

static ESM_IMPORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)^[ \t]*import[ \t]+(?:type[ \t]+)?([\w$*{},\s]+?)\s*from\s*['"]([^'"\n]+)['"]"#,
    )
    .ok()
});
static SIDE_EFFECT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?m)^[ \t]*import[ \t]*['"]([^'"\n]+)['"]"#).ok());
static RE_EXPORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)^[ \t]*export[ \t]+(?:type[ \t]+)?(\*(?:[ \t]+as[ \t]+[\w$]+)?|\{[^}]*\})\s*from\s*['"]([^'"\n]+)['"]"#,
    )
    .ok()
});
static BOUND_REQUIRE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?:const|let|var)[ \t]+([\w$]+|\{[^}]*\})[ \t]*=[ \t]*require\([ \t]*['"]([^'"\n]+)['"][ \t]*\)(?:\.([\w$]+))?"#,
    )
    .ok()
});
static ANY_LOAD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"\b(require|import)\([ \t]*['"]([^'"\n]+)['"][ \t]*\)"#).ok());

pub(super) fn imports<'a>(tree: &Tree<'a>, path: &str, text: &str) -> Vec<Import<'a>> {
    let mut found: Vec<(usize, Import<'a>)> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let mut add = |whole: regex::Match<'_>,
                   spec: &str,
                   style: Style,
                   names: Vec<(String, String)>,
                   alias: Option<String>| {
        covered.push((whole.start(), whole.end()));
        found.push((
            whole.start(),
            Import {
                statement: statement(whole.as_str()),
                line: line_at(text, whole.start()),
                names,
                alias,
                files: resolve(tree, path, spec, style),
                same_package: false,
            },
        ));
    };
    for_each(&ESM_IMPORT, text, |caps| {
        let (names, alias) = esm_clause(caps.get(1).map_or("", |m| m.as_str()));
        if let (Some(whole), Some(spec)) = (caps.get(0), caps.get(2)) {
            add(whole, spec.as_str(), Style::Import, names, alias);
        }
    });
    for_each(&SIDE_EFFECT, text, |caps| {
        if let (Some(whole), Some(spec)) = (caps.get(0), caps.get(1)) {
            add(whole, spec.as_str(), Style::Import, Vec::new(), None);
        }
    });
    for_each(&RE_EXPORT, text, |caps| {
        let clause = caps.get(1).map_or("", |m| m.as_str());
        let names = if clause.starts_with('*') {
            vec![("*".to_owned(), "*".to_owned())]
        } else {
            braced(clause, " as ")
        };
        if let (Some(whole), Some(spec)) = (caps.get(0), caps.get(2)) {
            add(whole, spec.as_str(), Style::Import, names, None);
        }
    });
    for_each(&BOUND_REQUIRE, text, |caps| {
        let binding = caps.get(1).map_or("", |m| m.as_str());
        let (names, alias) = match (binding.starts_with('{'), caps.get(3)) {
            (true, _) => (braced(binding, ":"), None),
            (false, Some(member)) => (vec![(binding.to_owned(), member.as_str().to_owned())], None),
            (false, None) => (Vec::new(), Some(binding.to_owned())),
        };
        if let (Some(whole), Some(spec)) = (caps.get(0), caps.get(2)) {
            add(whole, spec.as_str(), Style::Require, names, alias);
        }
    });
    let seen = covered;
    if let Some(regex) = ANY_LOAD.as_ref() {
        for caps in regex.captures_iter(text) {
            let (Some(whole), Some(kind), Some(spec)) = (caps.get(0), caps.get(1), caps.get(2))
            else {
                continue;
            };
            if seen
                .iter()
                .any(|(start, end)| whole.start() >= *start && whole.end() <= *end)
            {
                continue;
            }
            let style = if kind.as_str() == "require" {
                Style::Require
            } else {
                Style::Import
            };
            // An unbound load (`module.exports = require('./x')`, `...require('./x')`)
            // passes the module's names on.
            found.push((
                whole.start(),
                Import {
                    statement: statement(line_of(text, whole.start())),
                    line: line_at(text, whole.start()),
                    names: vec![("*".to_owned(), "*".to_owned())],
                    alias: None,
                    files: resolve(tree, path, spec.as_str(), style),
                    same_package: false,
                },
            ));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, import)| import).collect()
}

fn for_each(regex: &LazyLock<Option<Regex>>, text: &str, mut f: impl FnMut(&regex::Captures<'_>)) {
    if let Some(regex) = regex.as_ref() {
        for caps in regex.captures_iter(text) {
            f(&caps);
        }
    }
}

/// The bindings of an ESM import clause: `def`, `* as ns`, `{ a, b as c }`, `def, { a }`.
fn esm_clause(clause: &str) -> (Vec<(String, String)>, Option<String>) {
    let mut names = Vec::new();
    let mut alias = None;
    let (outside, inside) = match (clause.find('{'), clause.rfind('}')) {
        (Some(open), Some(close)) if open < close => (
            format!("{}{}", &clause[..open], &clause[close + 1..]),
            Some(&clause[open..=close]),
        ),
        _ => (clause.to_owned(), None),
    };
    if let Some(inside) = inside {
        names = braced(inside, " as ");
    }
    for part in outside.split(',') {
        let part = part.trim();
        if let Some(namespace) = part.strip_prefix('*') {
            alias = namespace
                .trim()
                .strip_prefix("as")
                .map(|n| n.trim().to_owned());
        } else if !part.is_empty() {
            alias = Some(part.to_owned());
        }
    }
    (names, alias)
}

/// `{ a, b as c }` (ESM, `separator` " as ") or `{ a, b: c }` (destructuring, ":") as
/// (local, imported) pairs.
fn braced(clause: &str, separator: &str) -> Vec<(String, String)> {
    clause
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .filter_map(|item| {
            let item = item.trim();
            let item = item.strip_prefix("type ").unwrap_or(item).trim();
            if item.is_empty() || item.starts_with("...") {
                return None;
            }
            let (imported, local) = match item.split_once(separator) {
                Some((imported, local)) => (imported.trim(), local.trim()),
                None => (item, item),
            };
            // A destructuring default (`{ a = 1 }`) keeps its name.
            let local = local.split('=').next().unwrap_or(local).trim();
            Some((local.to_owned(), imported.to_owned()))
        })
        .collect()
}

/// The whole line holding byte `at`.
fn line_of(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[start..end]
}
