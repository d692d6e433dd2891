//! Rust `use` paths and `mod` declarations mapped to files. The crate is the nearest
//! `Cargo.toml` above the file; its root is `src/lib.rs` (else `src/main.rs`). `crate::`,
//! `self::`, `super::`, the crate's own name (as integration tests write it) and a child
//! module's name walk `a.rs` / `a/mod.rs` files; what remains of the path is the item.
//!
//! A file outside the crate's `src/` (an integration test under `<crate>/tests/`, an example)
//! links the crate's library: the paths it writes through the crate's name without a `use`
//! (`data_url::DataUrl::process(..)`) are imports too, so the library's root and the modules
//! they name are reached (in a workspace as in a single crate).

use std::sync::LazyLock;

use regex::Regex;

use super::{Import, statement};
use crate::localize::tree::{Tree, child, line_at, parent};

static USE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t]+([^;]+);").ok());
static MOD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;").ok()
});
static PACKAGE_NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?m)^[ \t]*name[ \t]*=[ \t]*"([^"]+)""#).ok());

/// At most this many paths are expanded from one `use` tree.
const MAX_USE_PATHS: usize = 64;

struct Crate<'a> {
    dir: String,
    /// The library name as code writes it (`semver-lite` is `semver_lite`).
    name: Option<String>,
    root: Option<&'a str>,
}

pub(super) fn imports<'a>(tree: &Tree<'a>, path: &str, text: &str) -> Vec<Import<'a>> {
    let Some(krate) = crate_of(tree, path) else {
        return Vec::new();
    };
    let module = module_of(&krate, path);
    let mut found = Vec::new();
    if let Some(regex) = MOD.as_ref() {
        for caps in regex.captures_iter(text) {
            let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let mut child_module = module.clone().unwrap_or_default();
            child_module.push(name.as_str().to_owned());
            if let Some(file) = module_file(tree, &krate, &child_module) {
                found.push(Import {
                    statement: statement(whole.as_str()),
                    line: line_at(text, whole.start()),
                    names: Vec::new(),
                    alias: Some(name.as_str().to_owned()),
                    files: vec![file],
                    same_package: false,
                });
            }
        }
    }
    if let Some(regex) = USE.as_ref() {
        for caps in regex.captures_iter(text) {
            let (Some(whole), Some(tree_text)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let mut paths = Vec::new();
            expand(&[], tree_text.as_str(), &mut paths);
            // rustfmt indents a `use` inside an inline `mod tests { ... }` by four columns
            // per level; its `super` is the file's own module.
            let inline = inline_depth(whole.as_str());
            for (segments, local) in paths {
                let Some((file, rest)) =
                    resolve(tree, &krate, module.as_deref(), inline, &segments)
                else {
                    continue;
                };
                let (names, alias) = match rest.first() {
                    None => (Vec::new(), Some(local)),
                    Some(item) => (vec![(local, item.clone())], None),
                };
                found.push(Import {
                    statement: statement(whole.as_str()),
                    line: line_at(text, whole.start()),
                    names,
                    alias,
                    files: vec![file],
                    same_package: false,
                });
            }
        }
    }
    if module.is_none() {
        found.extend(crate_paths(tree, &krate, text));
    }
    found.sort_by_key(|import| import.line);
    found
}

/// At most this many paths through the crate's name are read from one file.
const MAX_CRATE_PATHS: usize = 32;

/// The paths a file outside `src/` writes through the crate's name, outside `use` lines
/// (those are read above): `data_url::forgiving_base64::decode(..)`.
fn crate_paths<'a>(tree: &Tree<'a>, krate: &Crate<'a>, text: &str) -> Vec<Import<'a>> {
    let Some(name) = krate.name.as_deref() else {
        return Vec::new();
    };
    let Ok(regex) = Regex::new(&format!(
        r"\b{}((?:::[A-Za-z_][A-Za-z0-9_]*)+)",
        regex::escape(name)
    )) else {
        return Vec::new();
    };
    let mut found: Vec<Import<'a>> = Vec::new();
    for caps in regex.captures_iter(text).take(MAX_CRATE_PATHS) {
        let (Some(whole), Some(rest)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let line_start = text[..whole.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_text = text[line_start..].lines().next().unwrap_or("");
        if USE.as_ref().is_some_and(|r| r.is_match(line_text)) {
            continue;
        }
        let segments: Vec<String> = std::iter::once(name.to_owned())
            .chain(
                rest.as_str()
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            )
            .collect();
        let Some((file, left)) = resolve(tree, krate, None, 0, &segments) else {
            continue;
        };
        if found.iter().any(|i| i.files == [file]) {
            continue;
        }
        let names = left
            .first()
            .map(|item| vec![(item.clone(), item.clone())])
            .unwrap_or_default();
        found.push(Import {
            statement: statement(whole.as_str()),
            line: line_at(text, whole.start()),
            names,
            alias: None,
            files: vec![file],
            same_package: false,
        });
    }
    found
}

/// The paths of a use tree with the local name each binds (`*` for a glob).
fn expand(prefix: &[String], text: &str, out: &mut Vec<(Vec<String>, String)>) {
    if out.len() >= MAX_USE_PATHS {
        return;
    }
    let text = text.trim();
    if let Some(open) = text.find('{') {
        let head: Vec<String> = segments(&text[..open]);
        let Some(close) = text.rfind('}').filter(|close| *close > open) else {
            return;
        };
        let mut base = prefix.to_vec();
        base.extend(head);
        for part in split_top_level(&text[open + 1..close]) {
            expand(&base, part, out);
        }
        return;
    }
    let (path, alias) = match text.split_once(" as ") {
        Some((path, alias)) => (path, Some(alias.trim())),
        None => (text, None),
    };
    let mut full = prefix.to_vec();
    full.extend(segments(path));
    if full.last().is_some_and(|last| last == "self") {
        full.pop();
    }
    let Some(last) = full.last().cloned() else {
        return;
    };
    let local = match alias {
        Some(alias) => alias.to_owned(),
        None => last,
    };
    if local == "*" {
        full.pop();
        full.push("*".to_owned());
    }
    out.push((full, local));
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Comma-separated parts at brace depth zero.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn crate_of<'a>(tree: &Tree<'a>, path: &str) -> Option<Crate<'a>> {
    let mut dir = parent(path).to_owned();
    loop {
        let manifest = child(&dir, "Cargo.toml");
        if tree.is_tracked(&manifest) {
            let name = tree.read(&manifest).and_then(|text| {
                let package = text.split("[package]").nth(1)?;
                let section = package.split("\n[").next().unwrap_or(package);
                let caps = PACKAGE_NAME.as_ref()?.captures(section)?;
                Some(caps.get(1)?.as_str().replace('-', "_"))
            });
            let src = child(&dir, "src");
            let root = tree
                .tracked(&child(&src, "lib.rs"))
                .or_else(|| tree.tracked(&child(&src, "main.rs")));
            return Some(Crate { dir, name, root });
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(&dir).to_owned();
    }
}

/// The module path of a file under the crate's `src/`; `None` for files outside it
/// (integration tests, examples), which are crate roots of their own.
fn module_of(krate: &Crate<'_>, path: &str) -> Option<Vec<String>> {
    let src = child(&krate.dir, "src");
    let rest = path.strip_prefix(&format!("{src}/"))?;
    let rest = rest.strip_suffix(".rs")?;
    let mut parts: Vec<String> = rest.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) {
        parts.pop();
    }
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    }
    Some(parts)
}

/// The file of module `path` (empty: the crate root).
fn module_file<'a>(tree: &Tree<'a>, krate: &Crate<'a>, path: &[String]) -> Option<&'a str> {
    if path.is_empty() {
        return krate.root;
    }
    let base = child(&child(&krate.dir, "src"), &path.join("/"));
    tree.tracked(&format!("{base}.rs"))
        .or_else(|| tree.tracked(&child(&base, "mod.rs")))
}

/// How many inline modules enclose a statement, from its indentation.
fn inline_depth(statement: &str) -> usize {
    let columns: usize = statement
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();
    columns / 4
}

/// The deepest module file `segments` reaches, and the segments left (the item). `inline`
/// inline modules enclose the path inside the file.
fn resolve<'a>(
    tree: &Tree<'a>,
    krate: &Crate<'a>,
    current: Option<&[String]>,
    inline: usize,
    segments: &[String],
) -> Option<(&'a str, Vec<String>)> {
    let first = segments.first()?;
    let (mut module, rest): (Vec<String>, &[String]) = match first.as_str() {
        "crate" if current.is_some() => (Vec::new(), &segments[1..]),
        "self" => (current?.to_vec(), &segments[1..]),
        "super" => {
            let mut module = current?.to_vec();
            let mut rest = segments;
            let mut inline = inline;
            while rest.first().is_some_and(|s| s == "super") {
                if inline > 0 {
                    inline -= 1;
                } else {
                    module.pop();
                }
                rest = &rest[1..];
            }
            (module, rest)
        }
        name if krate.name.as_deref() == Some(name) => (Vec::new(), &segments[1..]),
        // A child module of the current one (`use version::Version` in lib.rs).
        name => {
            let mut module = current?.to_vec();
            module.push(name.to_owned());
            module_file(tree, krate, &module)?;
            (module, &segments[1..])
        }
    };
    let mut file = module_file(tree, krate, &module)?;
    let mut left = rest;
    while let Some(next) = left.first() {
        module.push(next.clone());
        match module_file(tree, krate, &module) {
            Some(deeper) => {
                file = deeper;
                left = &left[1..];
            }
            None => break,
        }
    }
    Some((file, left.to_vec()))
}
