//! Code a failing test reaches by a string rather than an import: a string literal in the
//! failing test's body that names a module, a command, an entry point or a file stem of the
//! repository (`call_command('sqlmigrate', ...)` → `.../management/commands/sqlmigrate.py`,
//! `importlib.import_module('pkg.mod')` → `pkg/mod.py`, `require(name)` with
//! `name = './lib/parse'` → `lib/parse.js`).
//!
//! A literal counts only when it is shaped like a name (no spaces, at least
//! [`MIN_STEM_CHARS`] characters, not a generic stem such as `index` or `utils`) and names at
//! most [`MAX_FILES_PER_STRING`] non-test source files: a word that many files share says
//! nothing about which one the test exercises.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::calls::test_block;
use super::defs::Lang;
use super::hit::Hit;
use super::resolve::is_test_path;
use super::tree::{Tree, line_at};

/// A file a failing test names by a string: weaker than a call resolved through imports,
/// as strong as a module an error message names.
const STRING_WEIGHT: f64 = 35.0;
/// A bare word shorter than this is too common to name a file.
const MIN_STEM_CHARS: usize = 4;
/// A string that names more files than this names none of them.
const MAX_FILES_PER_STRING: usize = 3;
/// Literals read from one test file.
const MAX_STRINGS: usize = 200;
/// A file the test's imports reach whose stem the failing test's own words name
/// (`mime_types_are_lowercased` and `mime.rs`): enough to lift it above the other files of
/// the same import step, not above what the test calls.
const STEM_WORD_WEIGHT: f64 = 20.0;

/// Stems too generic to point at one file.
const GENERIC_STEMS: &[&str] = &[
    "__init__", "__main__", "base", "common", "config", "conftest", "core", "default", "helper",
    "helpers", "index", "init", "lib", "main", "misc", "mod", "models", "settings", "setup",
    "test", "tests", "types", "util", "utils", "views",
];

/// Source extensions a named stem may carry, per language of the test.
const EXTENSIONS: &[&str] = &[
    ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts", ".rs", ".go",
];

static LITERAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?:^|[^\w])(?:r|b|u|f)?(?:'([A-Za-z0-9_./:@-]{1,120})'|"([A-Za-z0-9_./:@-]{1,120})"|`([A-Za-z0-9_./:@-]{1,120})`)"#)
        .ok()
});

/// Hits for the files that string literals in the failing tests of `path` name. `lines` are
/// the failing tests' lines in the file (their blocks are read); with none, the whole file.
pub(crate) fn hits(tree: &Tree<'_>, path: &str, text: &str, lines: &[u64]) -> Vec<Hit> {
    let Some(regex) = LITERAL.as_ref() else {
        return Vec::new();
    };
    let lang = Lang::of(path);
    let mut ranges: Vec<(u64, u64)> = lang
        .map(|lang| {
            lines
                .iter()
                .filter_map(|line| test_block(lang, text, *line))
                .collect()
        })
        .unwrap_or_default();
    if ranges.is_empty() {
        ranges.push((1, u64::MAX));
    }
    let mut seen = BTreeSet::new();
    let mut reached = BTreeSet::new();
    let mut out = Vec::new();
    for caps in regex.captures_iter(text).take(MAX_STRINGS) {
        let Some(literal) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) else {
            continue;
        };
        let line = line_at(text, literal.start());
        if !ranges.iter().any(|(a, b)| (*a..=*b).contains(&line)) {
            continue;
        }
        let value = literal.as_str();
        if !seen.insert(value.to_owned()) {
            continue;
        }
        let files = named_files(tree, value);
        if files.is_empty() || files.len() > MAX_FILES_PER_STRING {
            continue;
        }
        let each = STRING_WEIGHT / (files.len() as f64).sqrt();
        for file in files {
            if file == path || !reached.insert(file) {
                continue;
            }
            out.push(Hit {
                path: file.to_owned(),
                line: None,
                weight: each,
                reason: format!(
                    "named by the string `{value}` in failing test file {path} at line {line}"
                ),
                names_failing_test: false,
            });
        }
    }
    out
}

/// Hits for the files among `reached` (what the test's imports reach) whose stem is one of
/// the words of the failing tests' code in `path` (identifiers split at `_` and case changes):
/// a test named `mime_types_are_lowercased` is about `mime.rs` more than about its sibling
/// modules.
pub(crate) fn stem_hits(path: &str, text: &str, lines: &[u64], reached: &[&str]) -> Vec<Hit> {
    let Some(lang) = Lang::of(path) else {
        return Vec::new();
    };
    let all: Vec<&str> = text.lines().collect();
    let mut words = BTreeSet::new();
    for (first, last) in lines
        .iter()
        .filter_map(|line| test_block(lang, text, *line))
    {
        let from = usize::try_from(first.saturating_sub(1)).unwrap_or(usize::MAX);
        let to = usize::try_from(last).unwrap_or(usize::MAX).min(all.len());
        for line in all.get(from..to).unwrap_or_default() {
            words.extend(identifier_words(line));
        }
    }
    let mut out = Vec::new();
    for file in reached {
        if is_test_path(file) {
            continue;
        }
        let name = file.rsplit('/').next().unwrap_or(file);
        let stem = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
        if stem.len() < MIN_STEM_CHARS || GENERIC_STEMS.contains(&stem.as_str()) {
            continue;
        }
        if words.contains(&stem) {
            out.push(Hit {
                path: (*file).to_owned(),
                line: None,
                weight: STEM_WORD_WEIGHT,
                reason: format!(
                    "its name `{stem}` is a word of the failing test in {path}, whose imports \
                     reach it"
                ),
                names_failing_test: false,
            });
        }
    }
    out
}

/// The lowercase words of the identifiers on a line: each identifier whole, and its parts
/// split at `_` and at lower-to-upper case changes (`mimeType` → `mimetype`, `mime`, `type`).
fn identifier_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ident in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if ident.is_empty() {
            continue;
        }
        out.push(ident.to_ascii_lowercase());
        let mut word = String::new();
        let mut previous_lower = false;
        for c in ident.chars() {
            if (c == '_' || (c.is_uppercase() && previous_lower)) && !word.is_empty() {
                out.push(std::mem::take(&mut word).to_ascii_lowercase());
            }
            if c != '_' {
                word.push(c);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
        }
        if !word.is_empty() {
            out.push(word.to_ascii_lowercase());
        }
    }
    out
}

/// The non-test source files a literal names: a dotted module, a relative path, or a file
/// stem (also as a directory's entry file).
fn named_files<'a>(tree: &Tree<'a>, value: &str) -> Vec<&'a str> {
    if value.contains("://") || value.contains('@') || value.contains(':') {
        return Vec::new();
    }
    let mut trimmed = value.trim_end_matches('/');
    while let Some(rest) = trimmed
        .strip_prefix("../")
        .or_else(|| trimmed.strip_prefix("./"))
    {
        trimmed = rest;
    }
    let mut found: Vec<&'a str> = Vec::new();
    let mut add = |files: Vec<&'a str>| {
        for file in files {
            if !is_test_path(file) && !found.contains(&file) {
                found.push(file);
            }
        }
    };
    let has_extension = EXTENSIONS.iter().any(|ext| trimmed.ends_with(ext));
    if has_extension {
        add(tree.with_suffix(trimmed));
        return found;
    }
    let stem = trimmed.rsplit(['/', '.']).next().unwrap_or(trimmed);
    if stem.len() < MIN_STEM_CHARS
        || GENERIC_STEMS.contains(&stem)
        || trimmed.starts_with('.')
        || trimmed.contains("..")
        || stem.chars().all(|c| c.is_ascii_digit())
    {
        return found;
    }
    // `pkg.mod` is a Python module path; `lib/parse` a path without its extension.
    let relative = if trimmed.contains('/') {
        trimmed.to_owned()
    } else {
        trimmed.replace('.', "/")
    };
    for ext in EXTENSIONS {
        add(tree.with_suffix(&format!("{relative}{ext}")));
    }
    for entry in ["__init__.py", "index.js", "index.ts", "mod.rs"] {
        add(tree.with_suffix(&format!("{relative}/{entry}")));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::tests::tree;
    use super::*;

    fn named(files: &[(&str, &str)], test: &str, lines: &[u64]) -> Vec<(String, String)> {
        let (dir, tracked) = tree(files);
        let tree = Tree::new(dir.path(), &tracked, &[]);
        let text = files
            .iter()
            .find(|(p, _)| *p == test)
            .map(|(_, t)| *t)
            .unwrap_or_default();
        hits(&tree, test, text, lines)
            .into_iter()
            .map(|h| (h.path, h.reason))
            .collect()
    }

    #[test]
    fn a_command_named_by_a_string_resolves_to_its_file() {
        let files = [
            (
                "django/core/management/commands/sqlmigrate.py",
                "class Command: pass\n",
            ),
            (
                "django/core/management/commands/migrate.py",
                "class Command: pass\n",
            ),
            (
                "django/core/management/__init__.py",
                "def call_command(name): pass\n",
            ),
            (
                "tests/migrations/test_commands.py",
                "from django.core.management import call_command\n\n\nclass T:\n    def test_sqlmigrate(self):\n        out = call_command('sqlmigrate', 'migrations', '0001')\n        self.assertIn('CREATE TABLE', out)\n\n    def test_other(self):\n        call_command('migrate')\n",
            ),
        ];
        assert_eq!(
            named(&files, "tests/migrations/test_commands.py", &[7]),
            [(
                "django/core/management/commands/sqlmigrate.py".to_owned(),
                "named by the string `sqlmigrate` in failing test file \
                 tests/migrations/test_commands.py at line 6"
                    .to_owned()
            )]
        );
    }

    #[test]
    fn dotted_modules_and_relative_paths_resolve_and_common_words_do_not() {
        let files = [
            ("pkg/loader.py", ""),
            ("lib/parse.js", ""),
            ("lib/index.js", ""),
            ("a/utils.py", ""),
            ("b/value.py", ""),
            ("c/value.py", ""),
            ("d/value.py", ""),
            ("e/value.py", ""),
            (
                "tests/test_load.py",
                "import importlib\nm = importlib.import_module(\"pkg.loader\")\nx = 'utils'\ny = 'value'\nz = 'hello world'\n",
            ),
            (
                "test/parse.test.js",
                "const p = require('../lib/parse');\nconst q = './lib/parse';\n",
            ),
        ];
        let found: Vec<String> = named(&files, "tests/test_load.py", &[])
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, ["pkg/loader.py"]);
        let found: Vec<String> = named(&files, "test/parse.test.js", &[])
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, ["lib/parse.js"]);
    }

    #[test]
    fn a_reached_file_whose_stem_the_failing_test_names_is_lifted() {
        let text = "#[test]\nfn mime_types_are_lowercased() {\n    let url = data_url::DataUrl::process(\"data:A/B,x\");\n    assert_eq!(url.mimeType, 1);\n}\n";
        let reached = [
            "data-url/src/lib.rs",
            "data-url/src/forgiving_base64.rs",
            "data-url/src/mime.rs",
            "data-url/src/process.rs",
        ];
        let found: Vec<String> = stem_hits("data-url/tests/wpt.rs", text, &[4], &reached)
            .into_iter()
            .map(|h| h.path)
            .collect();
        // `lib` is generic; `process` is a word of the test's code too.
        assert_eq!(found, ["data-url/src/mime.rs", "data-url/src/process.rs"]);
        assert_eq!(
            identifier_words("url.mimeType"),
            ["url", "url", "mimetype", "mime", "type"]
        );
    }
}
