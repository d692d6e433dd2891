//! Module resolution as node and the bundlers do it, on tracked files only:
//!
//! - relative specifiers (`./x`, `../`, `.`, `..`): the file as written, with an added
//!   extension (`.js`, `.ts`, ...), TypeScript's `.js`-names-`.ts` convention, then a
//!   directory: its `package.json` entry, else its `index` file;
//! - bare specifiers naming a package of the repository (a self-reference or a workspace
//!   member, by the `name` in its `package.json`), with an optional subpath;
//! - tsconfig.json/jsconfig.json `paths` and `baseUrl` (the nearest config, when simple).
//!
//! A package entry is read from `exports` (a string, the `"."` entry or condition objects,
//! `require`/`import` as the importing style asks), then `source`, `module`, `main`; an
//! entry in untracked build output (`dist/index.js`) is looked for under `src/`.

use serde_json::Value;

use crate::localize::index::is_vendored;
use crate::localize::tree::{Tree, child, join, parent};

/// How the module is loaded, which picks the `exports` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Require,
    Import,
}

/// Extensions tried after a path without one, in bundlers' usual order.
const EXTENSIONS: &[&str] = &[
    ".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json",
];
/// Directory index files, in the same order.
const INDEXES: &[&str] = &[
    "index.js",
    "index.ts",
    "index.tsx",
    "index.jsx",
    "index.mjs",
    "index.cjs",
    "index.mts",
    "index.cts",
];
/// Build output directories whose files are compiled from `src/`.
const BUILD_DIRS: &[&str] = &["dist", "build", "lib", "out", "esm", "cjs", "es"];
/// At most this many `package.json` files are read to find the repository's packages.
const MAX_PACKAGES: usize = 300;
/// At most this many `package.json` entries are followed from one specifier.
const MAX_ENTRY_DEPTH: usize = 4;
/// Config files whose `compilerOptions.paths` map specifiers.
const CONFIGS: &[&str] = &["tsconfig.json", "jsconfig.json"];

/// The tracked files `spec`, imported from `from`, resolves to (at most one).
pub(crate) fn resolve<'a>(tree: &Tree<'a>, from: &str, spec: &str, style: Style) -> Vec<&'a str> {
    let spec = spec.split(['?', '#']).next().unwrap_or(spec);
    if spec.is_empty() || spec.starts_with("node:") {
        return Vec::new();
    }
    let found = if spec.starts_with('.') || spec.starts_with('/') {
        join(parent(from), spec).and_then(|base| path(tree, &base, style, 0))
    } else {
        bare(tree, from, spec, style)
    };
    found.into_iter().collect()
}

/// A file or directory path, as node and bundlers complete it; `depth` counts the
/// `package.json` entries followed (they may point at each other).
fn path<'a>(tree: &Tree<'a>, base: &str, style: Style, depth: usize) -> Option<&'a str> {
    if !base.is_empty()
        && let Some(file) = tree.tracked(base)
    {
        return Some(file);
    }
    if !base.is_empty() {
        if let Some(file) = EXTENSIONS
            .iter()
            .find_map(|ext| tree.tracked(&format!("{base}{ext}")))
        {
            return Some(file);
        }
        // TypeScript sources import each other by their compiled names (`./a.js`).
        for (js, ts) in [
            (".js", ".ts"),
            (".js", ".tsx"),
            (".jsx", ".tsx"),
            (".mjs", ".mts"),
            (".cjs", ".cts"),
        ] {
            if let Some(stem) = base.strip_suffix(js)
                && let Some(file) = tree.tracked(&format!("{stem}{ts}"))
            {
                return Some(file);
            }
        }
    }
    if depth < MAX_ENTRY_DEPTH
        && tree.is_tracked(&child(base, "package.json"))
        && let Some(file) = package_entry(tree, base, None, style, depth + 1)
    {
        return Some(file);
    }
    INDEXES
        .iter()
        .find_map(|index| tree.tracked(&child(base, index)))
}

/// A bare specifier: a package of the repository, or a tsconfig path mapping.
fn bare<'a>(tree: &Tree<'a>, from: &str, spec: &str, style: Style) -> Option<&'a str> {
    let mut parts = spec.splitn(if spec.starts_with('@') { 3 } else { 2 }, '/');
    let name = if spec.starts_with('@') {
        format!("{}/{}", parts.next()?, parts.next()?)
    } else {
        parts.next()?.to_owned()
    };
    let subpath = parts.next();
    if let Some(dir) = package_dir(tree, from, &name) {
        return match subpath {
            None => package_entry(tree, &dir, None, style, 0),
            Some(sub) => package_entry(tree, &dir, Some(sub), style, 0)
                .or_else(|| join(&dir, sub).and_then(|base| path(tree, &base, style, 0))),
        };
    }
    mapped(tree, from, spec, style)
}

/// The directory of the repository's package called `name`: the importer's own package
/// first (a self-reference), then any other tracked `package.json` (a workspace member).
fn package_dir(tree: &Tree<'_>, from: &str, name: &str) -> Option<String> {
    let mut dir = parent(from).to_owned();
    loop {
        let manifest = child(&dir, "package.json");
        if tree.is_tracked(&manifest) {
            if manifest_name(tree, &manifest).as_deref() == Some(name) {
                return Some(dir);
            }
            break;
        }
        if dir.is_empty() {
            break;
        }
        dir = parent(&dir).to_owned();
    }
    tree.with_suffix("package.json")
        .into_iter()
        .filter(|manifest| !is_vendored(manifest))
        .take(MAX_PACKAGES)
        .find(|manifest| manifest_name(tree, manifest).as_deref() == Some(name))
        .map(|manifest| parent(manifest).to_owned())
}

fn manifest_name(tree: &Tree<'_>, manifest: &str) -> Option<String> {
    let json = json(tree, manifest)?;
    json.get("name")?.as_str().map(str::to_owned)
}

fn json(tree: &Tree<'_>, path: &str) -> Option<Value> {
    let text = tree.read(path)?;
    serde_json::from_str(&strip_jsonc(&text)).ok()
}

/// The file a package's entry (or `subpath` of it) names.
fn package_entry<'a>(
    tree: &Tree<'a>,
    dir: &str,
    subpath: Option<&str>,
    style: Style,
    depth: usize,
) -> Option<&'a str> {
    let manifest = json(tree, &child(dir, "package.json"))?;
    let key = match subpath {
        None => ".".to_owned(),
        Some(sub) => format!("./{sub}"),
    };
    let mut entries: Vec<String> = Vec::new();
    if let Some(exports) = manifest.get("exports") {
        entries.extend(export_target(exports, &key, style));
    }
    if subpath.is_none() {
        for field in ["source", "module", "main"] {
            if let Some(entry) = manifest.get(field).and_then(Value::as_str) {
                entries.push(entry.to_owned());
            }
        }
    }
    for entry in &entries {
        let Some(base) = join(dir, entry) else {
            continue;
        };
        if base == dir {
            continue;
        }
        let file = path(tree, &base, style, depth)
            .or_else(|| from_build_output(tree, dir, entry, style, depth));
        if file.is_some() {
            return file;
        }
    }
    if subpath.is_some() {
        return None;
    }
    // No usable entry: bundlers and TypeScript projects conventionally start at src/index.
    path(tree, &child(dir, "src"), style, depth)
}

/// The targets `exports` gives `key` (`.` or `./sub`), preferred condition first.
fn export_target(exports: &Value, key: &str, style: Style) -> Vec<String> {
    match exports {
        Value::String(target) if key == "." => vec![target.clone()],
        Value::Object(map) if map.keys().any(|k| k.starts_with('.')) => {
            if let Some(target) = map.get(key) {
                return conditions(target, style);
            }
            // A pattern: `"./*": "./src/*.js"`.
            map.iter()
                .filter_map(|(pattern, target)| {
                    let (prefix, suffix) = pattern.split_once('*')?;
                    let middle = key.strip_prefix(prefix)?.strip_suffix(suffix)?;
                    Some(
                        conditions(target, style)
                            .into_iter()
                            .map(|t| t.replacen('*', middle, 1))
                            .collect::<Vec<_>>(),
                    )
                })
                .flatten()
                .collect()
        }
        Value::Object(_) | Value::Array(_) if key == "." => conditions(exports, style),
        _ => Vec::new(),
    }
}

/// The targets of a condition object, preferred first (`source`, the style's own
/// condition, `node`, `default`, then the rest).
fn conditions(target: &Value, style: Style) -> Vec<String> {
    match target {
        Value::String(target) => vec![target.clone()],
        Value::Array(items) => items
            .iter()
            .flat_map(|item| conditions(item, style))
            .collect(),
        Value::Object(map) => {
            let own = match style {
                Style::Require => "require",
                Style::Import => "import",
            };
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |key: &str| match key {
                "source" => 0,
                k if k == own => 1,
                "node" => 2,
                "default" => 3,
                "types" => 5,
                _ => 4,
            };
            keys.sort_by_key(|key| rank(key));
            keys.into_iter()
                .flat_map(|key| conditions(&map[key], style))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// An entry in untracked build output (`dist/index.js`, `lib/index.d.ts`) mapped to the
/// source it is built from (`src/index.ts`).
fn from_build_output<'a>(
    tree: &Tree<'a>,
    dir: &str,
    entry: &str,
    style: Style,
    depth: usize,
) -> Option<&'a str> {
    let entry = entry.trim_start_matches("./");
    let (first, rest) = entry.split_once('/')?;
    if !BUILD_DIRS.contains(&first) {
        return None;
    }
    let rest = rest.strip_suffix(".d.ts").unwrap_or(rest);
    let stem = rest
        .rsplit_once('.')
        .filter(|(_, ext)| !ext.contains('/'))
        .map_or(rest, |(stem, _)| stem);
    path(tree, &child(&child(dir, "src"), stem), style, depth)
}

/// tsconfig.json/jsconfig.json `paths` (`"@/*": ["src/*"]`) and `baseUrl`, from the
/// nearest config above the importer.
fn mapped<'a>(tree: &Tree<'a>, from: &str, spec: &str, style: Style) -> Option<&'a str> {
    let (dir, config) = nearest_config(tree, from)?;
    let options = config.get("compilerOptions")?;
    let base = match options.get("baseUrl").and_then(Value::as_str) {
        Some(base_url) => join(&dir, base_url)?,
        None => dir.clone(),
    };
    if let Some(paths) = options.get("paths").and_then(Value::as_object) {
        for (pattern, targets) in paths {
            let rest = match pattern.split_once('*') {
                Some((prefix, suffix)) => spec
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(suffix)),
                None => (pattern == spec).then_some(""),
            };
            let Some(rest) = rest else {
                continue;
            };
            for target in targets
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let target = target.replacen('*', rest, 1);
                if let Some(file) = join(&base, &target).and_then(|p| path(tree, &p, style, 0)) {
                    return Some(file);
                }
            }
        }
    }
    if options.get("baseUrl").is_some() {
        return join(&base, spec).and_then(|p| path(tree, &p, style, 0));
    }
    None
}

fn nearest_config(tree: &Tree<'_>, from: &str) -> Option<(String, Value)> {
    let mut dir = parent(from).to_owned();
    loop {
        for name in CONFIGS {
            let config = child(&dir, name);
            if tree.is_tracked(&config) {
                return json(tree, &config).map(|value| (dir, value));
            }
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(&dir).to_owned();
    }
}

/// JSON with comments and trailing commas (tsconfig.json) as plain JSON.
pub(crate) fn strip_jsonc(text: &str) -> String {
    without_trailing_commas(&without_comments(text))
}

/// `text` without `//` and `/* */` comments outside strings.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` without commas that only whitespace separates from a closing `}` or `]`.
fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' && matches!(text[i + 1..].trim_start().chars().next(), Some('}' | ']')) {
            continue;
        }
        out.push(c);
    }
    out
}
