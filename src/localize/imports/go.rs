//! Go: the other files of a file's package (same directory, not `_test.go`), whose names
//! it uses unqualified, and imports of the module's own packages (`example.com/m/sub`,
//! under the module path of the nearest `go.mod`), used as `sub.Name`.

use std::sync::LazyLock;

use regex::Regex;

use super::{Import, statement};
use crate::localize::tree::{Tree, child, line_at, parent};

static IMPORT_BLOCK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?s)\bimport[ \t]*\((.*?)\)").ok());
static IMPORT_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?m)^[ \t]*(?:import[ \t]+)?([\w.]+[ \t]+)?"([^"]+)""#).ok());
static MODULE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^module[ \t]+(\S+)").ok());

pub(super) fn imports<'a>(tree: &Tree<'a>, path: &str, text: &str) -> Vec<Import<'a>> {
    let dir = parent(path);
    let mut found = vec![Import {
        statement: format!("package {}", if dir.is_empty() { "." } else { dir }),
        line: 0,
        names: vec![("*".to_owned(), "*".to_owned())],
        alias: None,
        files: package_files(tree, dir),
        same_package: true,
    }];
    let Some((module_dir, module)) = module_of(tree, path) else {
        return found;
    };
    let mut specs: Vec<(usize, &str)> = Vec::new();
    if let Some(block) = IMPORT_BLOCK.as_ref() {
        for caps in block.captures_iter(text) {
            if let Some(body) = caps.get(1) {
                specs.push((body.start(), body.as_str()));
            }
        }
    }
    if let Some(single) = text.find("import \"") {
        let end = text[single..].find('\n').map_or(text.len(), |n| single + n);
        specs.push((single, &text[single..end]));
    }
    let Some(line_re) = IMPORT_LINE.as_ref() else {
        return found;
    };
    for (offset, body) in specs {
        for caps in line_re.captures_iter(body) {
            let (Some(whole), Some(import_path)) = (caps.get(0), caps.get(2)) else {
                continue;
            };
            let Some(sub) = import_path
                .as_str()
                .strip_prefix(module.as_str())
                .and_then(|rest| rest.strip_prefix('/').or((rest.is_empty()).then_some("")))
            else {
                continue;
            };
            let package_dir = child(&module_dir, sub);
            let alias = caps
                .get(1)
                .map(|m| m.as_str().trim().to_owned())
                .unwrap_or_else(|| sub.rsplit('/').next().unwrap_or(sub).to_owned());
            found.push(Import {
                statement: statement(whole.as_str()),
                line: line_at(text, offset + whole.start()),
                names: Vec::new(),
                alias: Some(alias),
                files: package_files(tree, package_dir.trim_end_matches('/')),
                same_package: false,
            });
        }
    }
    found
}

/// The non-test Go files of the package in `dir`.
fn package_files<'a>(tree: &Tree<'a>, dir: &str) -> Vec<&'a str> {
    tree.files_in(dir)
        .into_iter()
        .filter(|p| p.ends_with(".go") && !p.ends_with("_test.go"))
        .collect()
}

/// The directory of the nearest `go.mod` and its module path.
fn module_of(tree: &Tree<'_>, path: &str) -> Option<(String, String)> {
    let mut dir = parent(path).to_owned();
    loop {
        let manifest = child(&dir, "go.mod");
        if tree.is_tracked(&manifest) {
            let text = tree.read(&manifest)?;
            let caps = MODULE.as_ref()?.captures(&text)?;
            return Some((dir, caps.get(1)?.as_str().to_owned()));
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(&dir).to_owned();
    }
}
