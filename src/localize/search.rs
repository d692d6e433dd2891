//! Searches in tracked files: failing test names to the files that define them, and
//! identifiers quoted in error messages to the files that define or use them.
//!
//! Work is bounded: files over [`MAX_FILE_BYTES`] are skipped, at most [`MAX_FILES_READ`]
//! files and [`MAX_TOTAL_BYTES`] bytes are read per localization, and at most
//! [`MAX_FAILING_TESTS`] test names and [`MAX_IDENTIFIERS`] identifiers are searched.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::extract::{clip, strip_ansi};
use super::resolve::{PathIndex, is_test_path};

/// Files larger than this are never read (generated code, fixtures, bundles).
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many files are read in one localization.
pub(crate) const MAX_FILES_READ: usize = 2000;
/// At most this many bytes are read in one localization.
pub(crate) const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024;
/// Weight of a file that holds a failing test (pytest node id, test definition found).
const FAILING_TEST_WEIGHT: f64 = 45.0;
/// Weight of a Rust test definition in a file whose path names the test's module.
const FAILING_TEST_MODULE_WEIGHT: f64 = 55.0;
/// Weight of a file defining an identifier quoted in an error message.
const IDENTIFIER_DEFINITION_WEIGHT: f64 = 40.0;
/// Weight of a file merely using such an identifier.
const IDENTIFIER_USE_WEIGHT: f64 = 15.0;
/// At most this many failing test names are mapped (each may scan every cached file).
const MAX_FAILING_TESTS: usize = 50;
/// At most this many identifiers from error messages are searched.
const MAX_IDENTIFIERS: usize = 8;
/// At most this many files are kept per searched name.
const MAX_FILES_PER_NAME: usize = 3;

/// Extensions of source files worth searching.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "c", "h", "cc", "cpp",
    "hpp", "java", "kt", "rb",
];

/// Evidence that a file is relevant, with its weight and a human reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    pub path: String,
    pub line: Option<u64>,
    pub weight: f64,
    pub reason: String,
    /// The hit only says "this file holds a failing test"; several such hits on one file
    /// are one fact and count once.
    pub names_failing_test: bool,
}

/// Reads tracked files within the bounds, caching contents.
pub(crate) struct Reader<'a> {
    root: &'a Path,
    files_read: usize,
    bytes_read: u64,
    cache: HashMap<String, Option<String>>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(root: &'a Path) -> Self {
        Reader {
            root,
            files_read: 0,
            bytes_read: 0,
            cache: HashMap::new(),
        }
    }

    fn read(&mut self, path: &str) -> Option<&str> {
        if !self.cache.contains_key(path) {
            let content = self.load(path);
            self.cache.insert(path.to_owned(), content);
        }
        self.cache.get(path).and_then(|content| content.as_deref())
    }

    fn load(&mut self, path: &str) -> Option<String> {
        if self.files_read >= MAX_FILES_READ || self.bytes_read >= MAX_TOTAL_BYTES {
            return None;
        }
        let abs = self.root.join(path);
        let size = std::fs::metadata(&abs).ok()?.len();
        if size > MAX_FILE_BYTES {
            return None;
        }
        self.files_read += 1;
        self.bytes_read += size;
        let bytes = std::fs::read(&abs).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Files that define the failing tests.
pub(crate) fn failing_test_hits(
    index: &PathIndex<'_>,
    tracked: &[String],
    reader: &mut Reader<'_>,
    failing_tests: &[String],
) -> Vec<Hit> {
    let mut hits = Vec::new();
    for test in failing_tests.iter().take(MAX_FAILING_TESTS) {
        let test = test.trim();
        if let Some((file, _)) = test.split_once("::")
            && file.ends_with(".py")
        {
            for path in index.resolve(file) {
                hits.push(Hit {
                    path: path.to_owned(),
                    line: None,
                    weight: FAILING_TEST_WEIGHT,
                    names_failing_test: true,
                    reason: format!("holds failing test {test}"),
                });
            }
            continue;
        }
        // A runner that names failing test files (jest, vitest, node:test, TAP).
        if test.contains('.') && !test.contains(char::is_whitespace) {
            let paths = index.resolve(test);
            if !paths.is_empty() {
                hits.extend(paths.into_iter().map(|path| Hit {
                    path: path.to_owned(),
                    line: None,
                    weight: FAILING_TEST_WEIGHT,
                    names_failing_test: true,
                    reason: format!("is failing test file {test}"),
                }));
                continue;
            }
        }
        if let Some(name) = go_test_name(test) {
            let files = tracked.iter().filter(|path| path.ends_with("_test.go"));
            let pattern = format!("func {name}(");
            hits.extend(definitions(reader, files, &pattern, &[], |line| {
                format!("defines failing test {test} at line {line}")
            }));
            continue;
        }
        let segments: Vec<&str> = test.split("::").collect();
        let name = segments.last().copied().unwrap_or(test);
        if is_identifier(name) {
            let modules: Vec<&str> = segments[..segments.len() - 1]
                .iter()
                .copied()
                .filter(|segment| *segment != "tests")
                .collect();
            let files = tracked.iter().filter(|path| path.ends_with(".rs"));
            let pattern = format!("fn {name}(");
            let found = definitions(reader, files, &pattern, &modules, |line| {
                format!("defines failing test {test} at line {line}")
            });
            if !found.is_empty() {
                hits.extend(found);
                continue;
            }
        }
        // A JS test title, possibly prefixed by its suites: `math › adds numbers`.
        let title = test.rsplit(" › ").next().unwrap_or(test);
        let title = title.rsplit(" > ").next().unwrap_or(title).trim();
        if title.is_empty() {
            continue;
        }
        let files = tracked
            .iter()
            .filter(|path| is_js(path) && is_test_path(path));
        let quoted = [
            format!("'{title}'"),
            format!("\"{title}\""),
            format!("`{title}`"),
        ];
        for path in files {
            let Some(content) = reader.read(path) else {
                continue;
            };
            if let Some(line) = quoted.iter().find_map(|q| line_of(content, q)) {
                hits.push(Hit {
                    path: path.clone(),
                    line: Some(line),
                    weight: FAILING_TEST_WEIGHT,
                    names_failing_test: true,
                    reason: format!("defines failing test {test:?} at line {line}"),
                });
            }
        }
    }
    hits
}

/// Identifiers quoted in error messages: (identifier, the message kind that quoted it).
pub(crate) fn quoted_identifiers(output: &str) -> Vec<(String, &'static str)> {
    static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
        [
            ("NameError", r"NameError: name '(\w+)' is not defined"),
            (
                "AttributeError",
                r"AttributeError: .*has no attribute '(\w+)'",
            ),
            ("ImportError", r"ImportError: cannot import name '(\w+)'"),
            (
                "rustc",
                r"cannot find (?:value|function|type|struct|macro|trait) `(\w+)`",
            ),
            (
                "rustc",
                r"no (?:method|field|function|associated item) named `(\w+)`",
            ),
            ("rustc", r"unresolved import `(?:\w+::)*(\w+)`"),
            ("ReferenceError", r"ReferenceError: (\w+) is not defined"),
            (
                "TypeError",
                r"TypeError: (?:[\w$.]+\.)?([\w$]+) is not a function",
            ),
            (
                "TypeError",
                r"Cannot read propert(?:y|ies) of \w+ \(reading '(\w+)'\)",
            ),
            ("go", r"undefined: (\w+)"),
            ("tsc", r"Cannot find name '(\w+)'"),
            ("tsc", r"Property '(\w+)' does not exist"),
        ]
        .into_iter()
        .filter_map(|(kind, source)| Regex::new(source).ok().map(|regex| (kind, regex)))
        .collect()
    });
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for line in output.lines() {
        if found.len() >= MAX_IDENTIFIERS {
            break;
        }
        let line = strip_ansi(clip(line));
        for (kind, regex) in PATTERNS.iter() {
            if let Some(ident) = regex.captures(&line).and_then(|caps| caps.get(1))
                && ident.as_str().len() >= 2
                && seen.insert(ident.as_str().to_owned())
            {
                found.push((ident.as_str().to_owned(), *kind));
            }
        }
    }
    found
}

/// Tracked source files defining (or, failing that, mentioning) each identifier.
pub(crate) fn identifier_hits(
    tracked: &[String],
    reader: &mut Reader<'_>,
    identifiers: &[(String, &'static str)],
) -> Vec<Hit> {
    if identifiers.is_empty() {
        return Vec::new();
    }
    let definers: Vec<Regex> = identifiers
        .iter()
        .filter_map(|(ident, _)| {
            Regex::new(&format!(
                r"\b(?:fn|def|class|function|func|struct|enum|trait|type|const|let|var|static|mod|interface)\s+{}\b",
                regex::escape(ident)
            ))
            .ok()
        })
        .collect();
    let mut defined: Vec<Vec<Hit>> = vec![Vec::new(); identifiers.len()];
    let mut mentioned: Vec<Vec<Hit>> = vec![Vec::new(); identifiers.len()];
    for path in tracked.iter().filter(|path| is_source(path)) {
        let Some(content) = reader.read(path) else {
            continue;
        };
        for (i, (ident, kind)) in identifiers.iter().enumerate() {
            if !content.contains(ident.as_str()) {
                continue;
            }
            if let Some(m) = definers.get(i).and_then(|regex| regex.find(content)) {
                let line = line_at(content, m.start());
                defined[i].push(Hit {
                    path: path.clone(),
                    line: Some(line),
                    weight: IDENTIFIER_DEFINITION_WEIGHT,
                    names_failing_test: false,
                    reason: format!("defines `{ident}` ({kind} in the output) at line {line}"),
                });
            } else if let Some(line) = word_line(content, ident) {
                mentioned[i].push(Hit {
                    path: path.clone(),
                    line: Some(line),
                    weight: IDENTIFIER_USE_WEIGHT,
                    names_failing_test: false,
                    reason: format!("uses `{ident}` ({kind} in the output) at line {line}"),
                });
            }
        }
    }
    let mut hits = Vec::new();
    for (defs, uses) in defined.into_iter().zip(mentioned) {
        if !defs.is_empty() {
            hits.extend(defs.into_iter().take(MAX_FILES_PER_NAME));
        } else {
            hits.extend(uses.into_iter().take(MAX_FILES_PER_NAME));
        }
    }
    hits
}

/// Files containing `pattern`, those whose path names a module segment first, bounded.
fn definitions<'t>(
    reader: &mut Reader<'_>,
    files: impl Iterator<Item = &'t String>,
    pattern: &str,
    modules: &[&str],
    reason: impl Fn(u64) -> String,
) -> Vec<Hit> {
    let mut files: Vec<&String> = files.collect();
    let named = |path: &str| modules.iter().any(|module| path.contains(module));
    // Stable sort keeps tracked order within each group, so the result is deterministic.
    files.sort_by_key(|path| !named(path));
    let mut hits = Vec::new();
    for path in files {
        let Some(content) = reader.read(path) else {
            continue;
        };
        if let Some(line) = line_of(content, pattern) {
            hits.push(Hit {
                path: path.clone(),
                line: Some(line),
                weight: if named(path) {
                    FAILING_TEST_MODULE_WEIGHT
                } else {
                    FAILING_TEST_WEIGHT
                },
                reason: reason(line),
                names_failing_test: true,
            });
            if hits.len() >= MAX_FILES_PER_NAME {
                break;
            }
        }
    }
    hits
}

fn go_test_name(test: &str) -> Option<&str> {
    let name = test.split('/').next().unwrap_or(test);
    let rest = name.strip_prefix("Test")?;
    (is_identifier(name) && !rest.starts_with(|c: char| c.is_lowercase())).then_some(name)
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("")
}

fn is_source(path: &str) -> bool {
    SOURCE_EXTENSIONS.contains(&extension(path))
}

fn is_js(path: &str) -> bool {
    matches!(
        extension(path),
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts"
    )
}

/// 1-based line of the first occurrence of `needle`.
fn line_of(content: &str, needle: &str) -> Option<u64> {
    content.find(needle).map(|at| line_at(content, at))
}

/// 1-based line of the first whole-word occurrence of `ident`.
fn word_line(content: &str, ident: &str) -> Option<u64> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    content.match_indices(ident).find_map(|(at, _)| {
        let before = content[..at].chars().next_back();
        let after = content[at + ident.len()..].chars().next();
        (!before.is_some_and(is_word) && !after.is_some_and(is_word)).then(|| line_at(content, at))
    })
}

fn line_at(content: &str, at: usize) -> u64 {
    content[..at].bytes().filter(|byte| *byte == b'\n').count() as u64 + 1
}
