//! Failing test names mapped to the files and lines that define them, in every runner's
//! naming: pytest node ids (`tests/test_a.py::TestX::test_y[1]`), unittest ids
//! (`test_y (pkg.tests.test_a.TestX.test_y)`), test files (jest, vitest, node:test), Go
//! tests and subtests (`TestX/case`), cargo test paths (`parser::tests::crlf`) and JS
//! titles with their suites (`suite > test`, `suite › test`, mocha's `suite test`).
//!
//! Names the runner does not place in a file (Rust and Go test functions, JS titles) are
//! looked for first in the files the output already names (its stack frames and locations),
//! and only then in the source index; each is confirmed by reading its file.

use super::defs::Lang;
use super::hit::Hit;
use super::resolve::is_test_path;
use super::tree::{Def, Tree};

/// Weight of a file that holds a failing test.
const FAILING_TEST_WEIGHT: f64 = 45.0;
/// Weight of a Rust test definition in a file whose path names the test's module.
const FAILING_TEST_MODULE_WEIGHT: f64 = 55.0;
/// At most this many failing test names are mapped.
const MAX_FAILING_TESTS: usize = 50;
/// At most this many files are kept per test name.
const MAX_FILES_PER_TEST: usize = 3;
/// At most this many title suffixes are tried for one JS test name.
const MAX_TITLE_TRIES: usize = 24;

/// Where to look for a test name: the files the output names, else the whole repository.
struct Scope<'t, 'a> {
    tree: &'t Tree<'a>,
    named: &'t [&'a str],
}

impl<'a> Scope<'_, 'a> {
    /// Files that may define `name` and that `keep` accepts: the named ones that do, else
    /// the source index's.
    fn definitions(&self, name: &str, keep: impl Fn(&str) -> bool) -> Vec<Def<'a>> {
        let named: Vec<Def<'a>> = self
            .named
            .iter()
            .filter(|path| keep(path))
            .filter_map(|path| self.tree.definition_in(path, name))
            .collect();
        if !named.is_empty() {
            return named;
        }
        self.tree
            .definition_files(name)
            .into_iter()
            .filter(|path| keep(path))
            .filter_map(|path| self.tree.definition_in(path, name))
            .take(MAX_FILES_PER_TEST)
            .collect()
    }

    /// The first of `titles` that a named file gives a test, else the first that any JS
    /// test file does. A title that is a plain identifier is only looked for in the named
    /// files: it is as likely a test function's name, looked for next.
    fn titles(&self, titles: &[String]) -> Vec<Def<'a>> {
        let in_named = |title: &String| -> Vec<Def<'a>> {
            self.named
                .iter()
                .filter_map(|path| self.tree.title_in(path, title))
                .collect()
        };
        let anywhere = |title: &String| -> Vec<Def<'a>> {
            self.tree
                .title_files(title)
                .into_iter()
                .filter_map(|path| self.tree.title_in(path, title))
                .collect()
        };
        titles
            .iter()
            .map(in_named)
            .find(|defs| !defs.is_empty())
            .or_else(|| {
                titles
                    .iter()
                    .filter(|title| !is_identifier(title))
                    .map(anywhere)
                    .find(|defs| !defs.is_empty())
            })
            .unwrap_or_default()
    }
}

/// Files (and lines) that define the failing tests; `named` are the files the output's
/// locations name, where test names are looked for first.
pub(crate) fn failing_test_hits<'a>(
    tree: &Tree<'a>,
    failing_tests: &[String],
    named: &[&'a str],
) -> Vec<Hit> {
    let scope = Scope { tree, named };
    let mut hits = Vec::new();
    for test in failing_tests.iter().take(MAX_FAILING_TESTS) {
        let test = test.trim();
        if test.is_empty() {
            continue;
        }
        let found = pytest_id(tree, test)
            .or_else(|| unittest_id(tree, test))
            .or_else(|| test_file(tree, test))
            .or_else(|| go_test(&scope, test))
            .or_else(|| rust_test(&scope, test))
            .or_else(|| js_title(&scope, test))
            .or_else(|| test_function(&scope, test))
            .unwrap_or_default();
        hits.extend(found);
    }
    hits
}

fn hit(path: &str, line: Option<u64>, weight: f64, reason: String) -> Hit {
    Hit {
        path: path.to_owned(),
        line,
        weight,
        reason,
        names_failing_test: true,
    }
}

fn defines(test: &str, line: u64) -> String {
    format!("defines failing test {test} at line {line}")
}

/// `path.py::Class::name[param]`: the file, and the test's line when found.
fn pytest_id(tree: &Tree<'_>, test: &str) -> Option<Vec<Hit>> {
    let (file, rest) = test.split_once("::")?;
    if !file.ends_with(".py") {
        return None;
    }
    let name = rest.rsplit("::").next().unwrap_or(rest);
    let name = name.split('[').next().unwrap_or(name);
    let hits = tree
        .paths
        .resolve(file)
        .into_iter()
        .map(|path| {
            let line = tree.definition_in(path, name).map(|def| def.line);
            let reason = match line {
                Some(line) => format!("holds failing test {test} (line {line})"),
                None => format!("holds failing test {test}"),
            };
            hit(path, line, FAILING_TEST_WEIGHT, reason)
        })
        .collect();
    Some(hits)
}

/// unittest: `name (pkg.module.Class.name)` or a bare `pkg.module.Class.name`.
fn unittest_id(tree: &Tree<'_>, test: &str) -> Option<Vec<Hit>> {
    let dotted = match test.split_once(" (") {
        Some((_, inside)) => inside.strip_suffix(')')?,
        None => test,
    };
    let segments: Vec<&str> = dotted.split('.').collect();
    if segments.len() < 2 || !segments.iter().all(|s| is_identifier(s)) {
        return None;
    }
    let name = segments[segments.len() - 1];
    // The longest prefix of the dotted path that is a module file.
    for end in (1..segments.len()).rev() {
        let wanted = format!("{}.py", segments[..end].join("/"));
        let paths = tree.with_suffix(&wanted);
        if paths.is_empty() || paths.len() > MAX_FILES_PER_TEST {
            continue;
        }
        let hits = paths
            .into_iter()
            .map(|path| {
                let line = tree.definition_in(path, name).map(|def| def.line);
                let reason = match line {
                    Some(line) => defines(test, line),
                    None => format!("holds failing test {test}"),
                };
                hit(path, line, FAILING_TEST_WEIGHT, reason)
            })
            .collect();
        return Some(hits);
    }
    None
}

/// A runner that names failing test files (jest, vitest, node:test, TAP).
fn test_file(tree: &Tree<'_>, test: &str) -> Option<Vec<Hit>> {
    if !test.contains('.') || test.contains(char::is_whitespace) {
        return None;
    }
    let paths = tree.paths.resolve(test);
    if paths.is_empty() {
        return None;
    }
    Some(
        paths
            .into_iter()
            .map(|path| {
                hit(
                    path,
                    None,
                    FAILING_TEST_WEIGHT,
                    format!("is failing test file {test}"),
                )
            })
            .collect(),
    )
}

/// `TestName` or `TestName/subtest`: the `func TestName(` in a `_test.go` file.
fn go_test(scope: &Scope<'_, '_>, test: &str) -> Option<Vec<Hit>> {
    let name = test.split('/').next().unwrap_or(test);
    let rest = name.strip_prefix("Test")?;
    if !is_identifier(name) || rest.starts_with(|c: char| c.is_lowercase()) {
        return None;
    }
    defining_hits(test, &scope.definitions(name, |p| p.ends_with("_test.go")))
}

/// `module::tests::name`: a Rust `fn name`, preferring files whose path names a module.
fn rust_test(scope: &Scope<'_, '_>, test: &str) -> Option<Vec<Hit>> {
    // A bare name (an integration test's) is left to `test_function`.
    if !test.contains("::") {
        return None;
    }
    let segments: Vec<&str> = test.split("::").collect();
    let name = *segments.last()?;
    if !is_identifier(name) {
        return None;
    }
    let modules: Vec<&str> = segments[..segments.len() - 1]
        .iter()
        .copied()
        .filter(|segment| *segment != "tests")
        .collect();
    let named = |path: &str| modules.iter().any(|module| path.contains(module));
    let mut defs = scope.definitions(name, |path| Lang::of(path) == Some(Lang::Rust));
    // Stable: the files' order within each group.
    defs.sort_by_key(|def| !named(def.path));
    defs.truncate(MAX_FILES_PER_TEST);
    found(&defs, |def| {
        let weight = if named(def.path) {
            FAILING_TEST_MODULE_WEIGHT
        } else {
            FAILING_TEST_WEIGHT
        };
        hit(def.path, Some(def.line), weight, defines(test, def.line))
    })
}

/// A JS test title, possibly prefixed by its suites.
fn js_title(scope: &Scope<'_, '_>, test: &str) -> Option<Vec<Hit>> {
    let mut tries = titles(test);
    tries.truncate(MAX_TITLE_TRIES);
    let mut defs = scope.titles(&tries);
    let share = defs.len().min(MAX_FILES_PER_TEST) as f64;
    defs.truncate(MAX_FILES_PER_TEST);
    found(&defs, |def| {
        hit(
            def.path,
            Some(def.line),
            FAILING_TEST_WEIGHT / share,
            format!("defines failing test {test:?} at line {}", def.line),
        )
    })
}

/// Titles a test name may have been built from, most specific first: the last part after
/// a suite separator, then (for names joined with spaces) every word suffix, longest first.
fn titles(test: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |title: &str| {
        let title = title.trim();
        if !title.is_empty() && !out.iter().any(|t| t == title) {
            out.push(title.to_owned());
        }
    };
    // tape names assertions after their test: `name #3`.
    let base = match test.rsplit_once(" #") {
        Some((head, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => head,
        _ => test,
    };
    for separator in [" > ", " › ", " / "] {
        if let Some((_, last)) = base.rsplit_once(separator) {
            push(last);
        }
    }
    push(base);
    let words: Vec<&str> = base.split(' ').collect();
    for start in 1..words.len() {
        push(&words[start..].join(" "));
    }
    out
}

/// A bare function name: its definition in a test file (a pytest `-q` name, a test named
/// by a runner that prints only the function).
fn test_function(scope: &Scope<'_, '_>, test: &str) -> Option<Vec<Hit>> {
    if !is_identifier(test) {
        return None;
    }
    defining_hits(test, &scope.definitions(test, is_test_path))
}

/// One hit per definition of failing test `test`.
fn defining_hits(test: &str, defs: &[Def<'_>]) -> Option<Vec<Hit>> {
    found(defs, |def| {
        hit(
            def.path,
            Some(def.line),
            FAILING_TEST_WEIGHT,
            defines(test, def.line),
        )
    })
}

fn found(defs: &[Def<'_>], to_hit: impl Fn(&Def<'_>) -> Hit) -> Option<Vec<Hit>> {
    (!defs.is_empty()).then(|| defs.iter().map(to_hit).collect())
}

pub(crate) fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}
