//! Python imports: `import a.b`, `import a.b as m`, `from a.b import c, d as e` (also
//! parenthesized over several lines), relative `from . import x` and `from ..m import y`.
//! A module `a.b` is `a/b.py` or `a/b/__init__.py` under the repository root or under a
//! source root such as `src/` (the src layout); a name imported from a package may be a
//! submodule (`from pkg import mod`).

use std::sync::LazyLock;

use regex::Regex;

use super::{Import, statement};
use crate::localize::tree::{Tree, child, join, line_at, parent};

static FROM: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)").ok()
});
static IMPORT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*import[ \t]+([\w. \t,]+)").ok());

/// Source roots a top-level module may sit under, besides the importing file's ancestors.
const SOURCE_ROOTS: &[&str] = &["", "src", "lib", "python"];
/// At most this many files are kept for one absolute module.
const MAX_MATCHES: usize = 2;

pub(super) fn imports<'a>(tree: &Tree<'a>, path: &str, text: &str) -> Vec<Import<'a>> {
    let mut found = Vec::new();
    if let Some(from) = FROM.as_ref() {
        for caps in from.captures_iter(text) {
            let (Some(whole), Some(dots), Some(module), Some(list)) =
                (caps.get(0), caps.get(1), caps.get(2), caps.get(3))
            else {
                continue;
            };
            let line = line_at(text, whole.start());
            let statement = statement(whole.as_str());
            let base = if dots.as_str().is_empty() {
                None
            } else {
                relative_base(path, dots.as_str().len(), module.as_str())
            };
            let module_files = match &base {
                Some(base) => package_or_module(tree, base),
                None => absolute(tree, module.as_str(), path),
            };
            let mut names = Vec::new();
            let mut submodules = 0;
            for (local, imported) in bound_names(list.as_str()) {
                // `from pkg import mod` binds a submodule when one exists.
                let submodule = match &base {
                    Some(base) => package_or_module(tree, &child(base, &imported)),
                    None if module.as_str().is_empty() => Vec::new(),
                    None => absolute(tree, &format!("{}.{imported}", module.as_str()), path),
                };
                if submodule.is_empty() {
                    names.push((local, imported));
                } else {
                    submodules += 1;
                    found.push(Import {
                        statement: statement.clone(),
                        line,
                        names: Vec::new(),
                        alias: Some(local),
                        files: submodule,
                        same_package: false,
                    });
                }
            }
            if !names.is_empty() || submodules == 0 {
                found.push(Import {
                    statement,
                    line,
                    names,
                    alias: None,
                    files: module_files,
                    same_package: false,
                });
            }
        }
    }
    if let Some(import) = IMPORT.as_ref() {
        for caps in import.captures_iter(text) {
            let (Some(whole), Some(list)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let line = line_at(text, whole.start());
            for item in list.as_str().split(',') {
                let mut words = item.split_whitespace();
                let Some(dotted) = words.next() else {
                    continue;
                };
                let alias = match (words.next(), words.next()) {
                    (Some("as"), Some(alias)) => alias,
                    _ => dotted.rsplit('.').next().unwrap_or(dotted),
                };
                found.push(Import {
                    statement: statement(whole.as_str()),
                    line,
                    names: Vec::new(),
                    alias: Some(alias.to_owned()),
                    files: absolute(tree, dotted, path),
                    same_package: false,
                });
            }
        }
    }
    found.sort_by_key(|import| import.line);
    found
}

/// `name` or `name as local` entries of an import list; `*` binds every name.
fn bound_names(list: &str) -> Vec<(String, String)> {
    list.trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .filter_map(|item| {
            let item = item.split('#').next().unwrap_or(item);
            let mut words = item.split_whitespace();
            let imported = words.next()?;
            let local = match (words.next(), words.next()) {
                (Some("as"), Some(local)) => local,
                _ => imported,
            };
            Some((local.to_owned(), imported.to_owned()))
        })
        .collect()
}

/// The directory a relative import with `dots` leading dots names, plus its module path.
fn relative_base(path: &str, dots: usize, module: &str) -> Option<String> {
    let mut dir = parent(path).to_owned();
    for _ in 1..dots {
        dir = join(&dir, "..")?;
    }
    if module.is_empty() {
        Some(dir)
    } else {
        Some(child(&dir, &module.replace('.', "/")))
    }
}

/// `base.py` or `base/__init__.py`, when tracked.
fn package_or_module<'a>(tree: &Tree<'a>, base: &str) -> Vec<&'a str> {
    [format!("{base}.py"), child(base, "__init__.py")]
        .iter()
        .find_map(|wanted| tree.tracked(wanted))
        .into_iter()
        .collect()
}

/// The tracked files an absolute module names: `a/b.py` or `a/b/__init__.py` at a source
/// root, i.e. in a directory that is not itself a package.
fn absolute<'a>(tree: &Tree<'a>, dotted: &str, importer: &str) -> Vec<&'a str> {
    if dotted.is_empty() {
        return Vec::new();
    }
    let relative = dotted.replace('.', "/");
    let top_level = !dotted.contains('.');
    let mut found: Vec<&'a str> = Vec::new();
    for (wanted, is_module_file) in [
        (format!("{relative}.py"), true),
        (format!("{relative}/__init__.py"), false),
    ] {
        for path in tree.with_suffix(&wanted) {
            let root = path[..path.len() - wanted.len()].trim_end_matches('/');
            if tree.is_tracked(&child(root, "__init__.py")) {
                continue;
            }
            // A lone `x.py` somewhere must not answer `import json`: a top-level module
            // file counts only at a source root or beside the importer.
            let near = SOURCE_ROOTS.contains(&root)
                || importer.starts_with(&format!("{root}/"))
                || parent(importer) == root;
            if top_level && is_module_file && !near {
                continue;
            }
            found.push(path);
        }
    }
    found.sort_by_key(|path| (path.len(), *path));
    found.truncate(MAX_MATCHES);
    found
}
