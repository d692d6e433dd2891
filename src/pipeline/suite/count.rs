//! Static counts of a suite form's tests, for runners that cannot list them: unittest and
//! Django's runners (the `def test*` methods of the test-case classes in the modules the
//! form's labels or discovery select) and mocha, tape and `node --test` (the `it(`, `test(`
//! and `specify(` calls, nested ones included, in the files the form runs). Files are read on
//! syntax trees (tree-sitter), so strings and comments that look like tests do not count.
//!
//! A count is what the source shows, not what the runner will generate: a test made in a loop
//! (`for … it(…)`, `setattr(cls, "test_x", …)`, `it.each(table)`) counts once, a class built
//! with `type()` not at all, a test-case class whose base comes from another module counts only
//! when the base's name says it is one (`…TestCase`, `…Tests`, `…Test`). Runners configured
//! outside argv (a `.mocharc` spec) give no count. This module reads files; it runs nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use tree_sitter::{Language, Node, Parser};

use crate::policy::command::basename;
use crate::testreport::django;

/// What a static count found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    pub tests: u64,
    pub files: u64,
}

/// Directories never walked for test files.
const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__", ".git"];
/// Files larger than this are not parsed (generated bundles, fixtures).
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// At most this many files are read for one count; a form with more gives no count.
const MAX_FILES: usize = 20_000;

/// The static count of the tests a form's argv runs, read against the repository at `root`;
/// `None` when its runner is not one counted statically or its files cannot be told.
pub(crate) fn count(argv: &[String], root: &Path) -> Option<Counted> {
    if let Some(found) = django::recognise_in(argv, root) {
        return count_django(argv, &found, root);
    }
    let (_, tool) = super::known::split_launcher(argv)?;
    let program = basename(tool.first()?);
    let arg = |at: usize| tool.get(at).map(String::as_str);
    match program {
        "python" | "python3" if arg(1) == Some("-m") && arg(2) == Some("unittest") => {
            count_unittest(&tool[3..], root)
        }
        "mocha" | "_mocha" => count_mocha(&tool[1..], root),
        "tape" | "tap" => count_js(&js_files(&positional(&tool[1..], &[]), root, true)?),
        "node" if tool.iter().any(|a| a == "--test") => {
            let given = positional(&tool[1..], NODE_VALUE_OPTIONS);
            if given.is_empty() {
                count_js(&walk(root, root, &|path| node_default(path)))
            } else {
                count_js(&js_files(&given, root, true)?)
            }
        }
        _ => None,
    }
}

const NODE_VALUE_OPTIONS: &[&str] = &[
    "--test-reporter",
    "--test-reporter-destination",
    "--import",
    "--require",
    "-r",
    "--test-name-pattern",
    "--test-skip-pattern",
    "--test-concurrency",
    "--test-timeout",
];
const MOCHA_VALUE_OPTIONS: &[&str] = &[
    "-g",
    "--grep",
    "-f",
    "--fgrep",
    "-r",
    "--require",
    "-R",
    "--reporter",
    "-O",
    "--reporter-option",
    "-t",
    "--timeout",
    "--ui",
    "-u",
    "--extension",
    "--ignore",
    "--config",
    "--package",
    "-s",
    "--slow",
    "-j",
    "--jobs",
];
const UNITTEST_VALUE_OPTIONS: &[&str] = &["-k", "-s", "--start-directory", "-p", "--pattern", "-t"];

/// The arguments that are not options nor option values.
fn positional(args: &[String], value_options: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        if arg.starts_with('-') {
            if value_options.contains(&arg.as_str()) {
                at += 1;
            }
            continue;
        }
        out.push(arg.clone());
    }
    out
}

/// The value of the first of `names` in `args` (`-p x`, `--pattern=x`).
fn option_value(args: &[String], names: &[&str]) -> Option<String> {
    args.iter().enumerate().find_map(|(at, arg)| {
        if names.contains(&arg.as_str()) {
            return args.get(at + 1).cloned();
        }
        let (name, value) = arg.split_once('=')?;
        names.contains(&name).then(|| value.to_owned())
    })
}

// ---- Python: unittest and Django -------------------------------------------------------------

/// `python -m unittest [ids]` or `python -m unittest discover [-s dir] [-p pattern]`.
fn count_unittest(args: &[String], root: &Path) -> Option<Counted> {
    let discover = args.first().map(String::as_str) == Some("discover");
    let rest = if discover { &args[1..] } else { args };
    let given = positional(rest, UNITTEST_VALUE_OPTIONS);
    let pattern = option_value(rest, &["-p", "--pattern"])
        .or_else(|| discover.then(|| given.get(1).cloned()).flatten())
        .unwrap_or_else(|| "test*.py".to_owned());
    if discover || given.is_empty() {
        let start = option_value(rest, &["-s", "--start-directory"])
            .or_else(|| given.first().cloned().filter(|_| discover))
            .unwrap_or_else(|| ".".to_owned());
        return Some(python_discover(&root.join(start), &pattern));
    }
    labels(&given, root, &pattern)
}

/// Django's runners: every label's tests; with no label, `runtests.py` runs every test app (a
/// directory) under its own directory and `manage.py test` discovers from the working
/// directory.
fn count_django(argv: &[String], found: &django::Django, root: &Path) -> Option<Counted> {
    let (options, given) = django::options_and_labels(found, argv);
    let pattern = option_value(&options, &["-p", "--pattern"]).unwrap_or_else(|| "test*.py".into());
    let base = root.join(&found.base);
    if !given.is_empty() {
        return labels(&given, &base, &pattern);
    }
    let script = argv[..found.first_arg].last().map(|s| basename(s));
    if script != Some("runtests.py") {
        return Some(python_discover(&base, &pattern));
    }
    let mut apps: Vec<PathBuf> = std::fs::read_dir(&base)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or(".");
            !name.contains('.') && !SKIPPED_DIRS.contains(&name)
        })
        .collect();
    apps.sort();
    Some(
        apps.iter()
            .map(|app| python_discover(app, &pattern))
            .fold(Counted { tests: 0, files: 0 }, add),
    )
}

fn add(a: Counted, b: Counted) -> Counted {
    Counted {
        tests: a.tests + b.tests,
        files: a.files + b.files,
    }
}

/// The tests of dotted labels (`app`, `app.test_mod`, `app.test_mod.Class`,
/// `app.test_mod.Class.test_x`) or paths, relative to `base`.
fn labels(given: &[String], base: &Path, pattern: &str) -> Option<Counted> {
    let mut total = Counted { tests: 0, files: 0 };
    for label in given {
        if label.contains('/') || label.ends_with(".py") {
            let path = base.join(label);
            total = add(
                total,
                if path.is_dir() {
                    python_discover(&path, pattern)
                } else {
                    python_file(&path, None)?
                },
            );
            continue;
        }
        let parts: Vec<&str> = label.split('.').collect();
        let found = (1..=parts.len()).rev().find_map(|n| {
            let stem = base.join(parts[..n].join("/"));
            let file = stem.with_extension("py");
            if file.is_file() {
                Some((file, n))
            } else if stem.is_dir() {
                Some((stem, n))
            } else {
                None
            }
        });
        let (path, n) = found?;
        let rest = &parts[n..];
        let counted = match rest {
            [] if path.is_dir() => python_discover(&path, pattern),
            [] => python_file(&path, None)?,
            [class] => python_file(&path, Some(class))?,
            _ => Counted { tests: 1, files: 1 },
        };
        total = add(total, counted);
    }
    Some(total)
}

/// unittest's discovery from `start`: the modules whose name matches `pattern`, in `start`
/// and in the packages (directories with `__init__.py`) under it.
fn python_discover(start: &Path, pattern: &str) -> Counted {
    let Ok(glob) = globset::Glob::new(pattern).map(|g| g.compile_matcher()) else {
        return Counted { tests: 0, files: 0 };
    };
    let files = walk_python(start, &glob);
    files
        .iter()
        .filter_map(|file| python_file(file, None))
        .fold(Counted { tests: 0, files: 0 }, add)
}

fn walk_python(dir: &Path, glob: &globset::GlobMatcher) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) && path.join("__init__.py").is_file() {
                    pending.push(path);
                }
            } else if name.ends_with(".py") && glob.is_match(&name) && out.len() < MAX_FILES {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The tests of one Python module (of one class of it, when `only` names one).
fn python_file(path: &Path, only: Option<&str>) -> Option<Counted> {
    let text = read_small(path)?;
    let tests = python_tests(&text, only);
    Some(Counted { tests, files: 1 })
}

/// The test methods of the module's test-case classes: a class counts when one of its bases
/// is named like a test case (`TestCase`, `SimpleTestCase`, `…Tests`) or is a class of the
/// module that counts; it runs its own `test*` methods and those of its bases in the module.
pub(super) fn python_tests(text: &str, only: Option<&str>) -> u64 {
    let Some(tree) = parse(&tree_sitter_python::LANGUAGE.into(), text) else {
        return 0;
    };
    let mut classes: BTreeMap<String, (Vec<String>, BTreeSet<String>)> = BTreeMap::new();
    let root = tree.root_node();
    for node in children(root) {
        let Some(class) = definition(node, "class_definition") else {
            continue;
        };
        let Some(name) = class.child_by_field_name("name") else {
            continue;
        };
        let bases = class
            .child_by_field_name("superclasses")
            .map(|list| {
                children(list)
                    .filter(|b| matches!(b.kind(), "identifier" | "attribute"))
                    .map(|b| {
                        let text = text_of(b, text);
                        text.rsplit('.').next().unwrap_or(text).to_owned()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let methods = class
            .child_by_field_name("body")
            .map(|body| {
                children(body)
                    .filter_map(|n| definition(n, "function_definition"))
                    .filter_map(|f| f.child_by_field_name("name"))
                    .map(|n| text_of(n, text).to_owned())
                    .filter(|n| n.starts_with("test"))
                    .collect()
            })
            .unwrap_or_default();
        classes.insert(text_of(name, text).to_owned(), (bases, methods));
    }
    classes
        .keys()
        .filter(|name| only.is_none_or(|only| only == name.as_str()))
        .filter(|name| is_test_case(name, &classes, 0))
        .map(|name| methods_of(name, &classes, 0).len() as u64)
        .sum()
}

/// How deep base classes are followed within a module.
const BASE_DEPTH: usize = 16;

fn is_test_case(
    name: &str,
    classes: &BTreeMap<String, (Vec<String>, BTreeSet<String>)>,
    depth: usize,
) -> bool {
    let Some((bases, _)) = classes.get(name).filter(|_| depth < BASE_DEPTH) else {
        return false;
    };
    bases.iter().any(|base| {
        if classes.contains_key(base) && base != name {
            return is_test_case(base, classes, depth + 1);
        }
        ["TestCase", "Tests", "Test"]
            .iter()
            .any(|suffix| base.ends_with(suffix))
    })
}

fn methods_of(
    name: &str,
    classes: &BTreeMap<String, (Vec<String>, BTreeSet<String>)>,
    depth: usize,
) -> BTreeSet<String> {
    let Some((bases, own)) = classes.get(name).filter(|_| depth < BASE_DEPTH) else {
        return BTreeSet::new();
    };
    let mut all = own.clone();
    for base in bases.iter().filter(|b| b.as_str() != name) {
        all.extend(methods_of(base, classes, depth + 1));
    }
    all
}

/// The definition a statement holds, through its decorators.
fn definition<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    if node.kind() == kind {
        return Some(node);
    }
    (node.kind() == "decorated_definition")
        .then(|| node.child_by_field_name("definition"))
        .flatten()
        .filter(|d| d.kind() == kind)
}

// ---- JavaScript: mocha, tape, node --test ----------------------------------------------------

const JS_EXTENSIONS: &[&str] = &["js", "cjs", "mjs", "jsx", "ts", "cts", "mts", "tsx"];

/// mocha's spec arguments, or its default `./test` directory (recursive with `--recursive`);
/// nothing when a config file or `package.json` may name other specs.
fn count_mocha(args: &[String], root: &Path) -> Option<Counted> {
    let given = positional(args, MOCHA_VALUE_OPTIONS);
    let recursive = args.iter().any(|a| a == "--recursive");
    if !given.is_empty() {
        return count_js(&js_files(&given, root, recursive)?);
    }
    let configured = [
        ".mocharc.js",
        ".mocharc.cjs",
        ".mocharc.yml",
        ".mocharc.yaml",
        ".mocharc.json",
        ".mocharc.jsonc",
    ]
    .iter()
    .any(|name| root.join(name).is_file())
        || package_has_mocha(root);
    if configured {
        return None;
    }
    count_js(&js_files(&["test".to_owned()], root, recursive)?)
}

fn package_has_mocha(root: &Path) -> bool {
    std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json.get("mocha").is_some())
}

/// The files named by `given`: files, directories (their scripts, all levels down when
/// `recursive`) and globs, relative to `root`. `None` when something names no file.
fn js_files(given: &[String], root: &Path, recursive: bool) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    for item in given {
        let path = root.join(item);
        if path.is_file() {
            out.push(path);
        } else if path.is_dir() {
            if recursive {
                out.extend(walk(&path, root, &|p| is_script(p)));
            } else {
                let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                    .ok()?
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_file() && is_script(p))
                    .collect();
                files.sort();
                out.extend(files);
            }
        } else {
            let glob = globset::GlobBuilder::new(item.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            let matched = walk(root, root, &|p| glob.is_match(p));
            if matched.is_empty() {
                return None;
            }
            out.extend(matched);
        }
    }
    out.sort();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

fn is_script(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| JS_EXTENSIONS.contains(&e))
}

/// node --test's default files: `*.test.*`, `*-test.*`, `*_test.*`, `test-*.*`, `test.*` and
/// everything under a `test` directory, scripts only.
fn node_default(relative: &Path) -> bool {
    if !is_script(relative) {
        return false;
    }
    let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name.split('.').next().unwrap_or("");
    let in_test_dir = relative
        .parent()
        .is_some_and(|dir| dir.components().any(|c| c.as_os_str() == "test"));
    in_test_dir
        || stem == "test"
        || stem.starts_with("test-")
        || stem.ends_with("-test")
        || stem.ends_with("_test")
        || name.split('.').nth(1) == Some("test")
}

/// The files under `dir` (hidden directories and dependencies left out) whose path relative
/// to `root` passes `keep`.
fn walk(dir: &Path, root: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) {
                    pending.push(path);
                }
            } else if out.len() < MAX_FILES && path.strip_prefix(root).is_ok_and(keep) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn count_js(files: &[PathBuf]) -> Option<Counted> {
    if files.is_empty() || files.len() >= MAX_FILES {
        return None;
    }
    let tests = files
        .iter()
        .filter_map(|file| {
            let text = read_small(file)?;
            let typescript = file
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.contains("ts"));
            Some(js_tests(&text, typescript))
        })
        .sum();
    Some(Counted {
        tests,
        files: files.len() as u64,
    })
}

/// The test calls of a script: `it(…)`, `test(…)`, `specify(…)`, their `.only`/`.skip`/…
/// forms and subtests (`t.test(…)`), at any depth of `describe` blocks.
pub(super) fn js_tests(text: &str, typescript: bool) -> u64 {
    let language: Language = if typescript {
        tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
    } else {
        tree_sitter_javascript::LANGUAGE.into()
    };
    let Some(tree) = parse(&language, text) else {
        return 0;
    };
    const NAMES: &[&str] = &["it", "test", "specify"];
    // tape's and node:test's subtests: `t.test(…)` on the test's own argument, by convention
    // `t` (another object's `.test(…)` is usually a RegExp's).
    const SUBTEST_OWNER: &str = "t";
    let mut count = 0;
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "call_expression"
            && let Some(callee) = node.child_by_field_name("function")
        {
            let is_test = match callee.kind() {
                "identifier" => NAMES.contains(&text_of(callee, text)),
                "member_expression" => {
                    let object = callee.child_by_field_name("object");
                    let property = callee.child_by_field_name("property");
                    match (object, property) {
                        (Some(object), Some(property)) if object.kind() == "identifier" => {
                            let (object, property) =
                                (text_of(object, text), text_of(property, text));
                            (NAMES.contains(&object) && property != "each")
                                || (object == SUBTEST_OWNER && property == "test")
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            // `it.each(table)(name, fn)`: the outer call is the test.
            let each = callee.kind() == "call_expression"
                && callee
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "member_expression")
                    .is_some_and(|f| {
                        let named = |field: &str| {
                            f.child_by_field_name(field)
                                .map_or("", |n| text_of(n, text))
                        };
                        NAMES.contains(&named("object")) && named("property") == "each"
                    });
            if is_test || each {
                count += 1;
            }
        }
        stack.extend(node.children(&mut cursor));
    }
    count
}

// ---- shared -----------------------------------------------------------------------------------

fn read_small(path: &Path) -> Option<String> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn parse(language: &Language, text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(language).ok()?;
    parser.parse(text, None)
}

fn children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    let mut cursor = node.walk();
    let nodes: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    nodes.into_iter()
}

fn text_of<'t>(node: Node<'_>, text: &'t str) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn counted(command: &str, root: &Path) -> Option<(u64, u64)> {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        count(&argv, root).map(|c| (c.tests, c.files))
    }

    const MODULE: &str = r#"
import unittest

class Helpers:
    def test_shared(self):
        pass

class BaseTests(Helpers, unittest.TestCase):
    def test_a(self):
        "def test_in_a_string(self):"

    @unittest.skip("slow")
    def test_b(self):
        pass

    def helper(self):
        pass

class MoreTests(BaseTests):
    def test_a(self):
        pass

    def test_c(self):
        pass

class NotATestCase:
    def test_never(self):
        pass

def test_module_level():
    pass

for n in range(3):
    class Generated(unittest.TestCase):
        def test_generated(self):
            pass
"#;

    #[test]
    fn python_counts_test_methods_of_test_case_classes_with_inherited_ones() {
        // BaseTests: test_a, test_b, test_shared; MoreTests: those and test_c (test_a once).
        assert_eq!(python_tests(MODULE, None), 7);
        assert_eq!(python_tests(MODULE, Some("MoreTests")), 4);
        assert_eq!(python_tests(MODULE, Some("NotATestCase")), 0);
        // A class made in a loop or with `type()` is not seen; a base from another module
        // counts when its name says it is a test case.
        let imported = "from .base import AuthViewsTestCase\n\nclass LoginTest(AuthViewsTestCase):\n    def test_x(self):\n        pass\n\nclass Other(Mixin):\n    def test_y(self):\n        pass\n";
        assert_eq!(python_tests(imported, None), 1);
        assert_eq!(python_tests("def test(:\n", None), 0);
    }

    #[test]
    fn unittest_and_django_count_what_their_labels_or_discovery_select() {
        let dir = repo(&[
            ("tests/runtests.py", "import django\n"),
            ("tests/auth_tests/__init__.py", ""),
            ("tests/auth_tests/test_validators.py", MODULE),
            ("tests/auth_tests/models/__init__.py", ""),
            (
                "tests/auth_tests/models/test_inner.py",
                "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n",
            ),
            (
                "tests/auth_tests/helpers.py",
                "import unittest\nclass T(unittest.TestCase):\n    def test_not_discovered(self):\n        pass\n",
            ),
            ("tests/basic/__init__.py", ""),
            (
                "tests/basic/tests.py",
                "from django.test import TestCase\nclass B(TestCase):\n    def test_b(self):\n        pass\n",
            ),
            (
                "tests/stray/test_no_package.py",
                "import unittest\nclass S(unittest.TestCase):\n    def test_s(self):\n        pass\n",
            ),
        ]);
        let root = dir.path();
        let py = "python tests/runtests.py";
        assert_eq!(
            counted(
                &format!("{py} auth_tests.test_validators.MoreTests.test_c"),
                root
            ),
            Some((1, 1))
        );
        assert_eq!(
            counted(&format!("{py} auth_tests.test_validators.MoreTests"), root),
            Some((4, 1))
        );
        assert_eq!(
            counted(&format!("{py} auth_tests.test_validators"), root),
            Some((7, 1))
        );
        assert_eq!(
            counted(&format!("{py} auth_tests --parallel 1"), root),
            Some((8, 2))
        );
        // Every app directory, packages or not.
        assert_eq!(counted(&format!("{py} --parallel 1"), root), Some((10, 4)));
        assert_eq!(
            counted(&format!("{py} -p tests.py basic"), root),
            Some((1, 1))
        );
        assert_eq!(counted(&format!("{py} nowhere"), root), None);
        // unittest: dotted ids relative to the working directory, discovery from it.
        assert_eq!(
            counted("python -m unittest tests.auth_tests.test_validators", root),
            Some((7, 1))
        );
        assert_eq!(
            counted("python3 -m unittest discover -s tests/auth_tests", root),
            Some((8, 2))
        );
        assert_eq!(
            counted(
                "python3 -m unittest discover tests/auth_tests -p test_v*.py",
                root
            ),
            Some((7, 1))
        );
    }

    const SPEC: &str = r#"
const assert = require('assert');
describe('words', () => {
  it('counts', () => {});
  describe('nested', () => {
    it('deeper', () => {});
    it.skip('skipped', () => {});
    describe.each([1, 2])('table %s', (n) => {
      it('in a table', () => {});
    });
  });
  for (const n of [1, 2, 3]) {
    it(`generated ${n}`, () => {});
  }
  it.each([[1], [2]])('each %s', (n) => {});
  const pattern = /x/;
  pattern.test('x');
  // it('in a comment')
  const text = "it('in a string')";
});
test('top level', async (t) => {
  await t.test('subtest', () => {});
});
"#;

    #[test]
    fn javascript_counts_test_calls_at_any_depth_once_per_call_site() {
        // counts, deeper, skipped, in a table, generated (once), each (once), top level,
        // subtest.
        assert_eq!(js_tests(SPEC, false), 8);
        assert_eq!(
            js_tests("it('typed', (): void => { const n: number = 1; });\n", true),
            1
        );
    }

    #[test]
    fn mocha_tape_and_node_test_count_the_files_they_run() {
        let dir = repo(&[
            ("package.json", "{\"scripts\": {\"test\": \"mocha\"}}"),
            ("test/a.spec.js", SPEC),
            ("test/deep/b.spec.js", "it('b', () => {});\n"),
            ("test/fixture.json", "{}"),
            (
                "src/c.test.mjs",
                "import test from 'node:test';\ntest('c', () => {});\n",
            ),
            (
                "node_modules/x/test/d.test.js",
                "it('dependency', () => {});\n",
            ),
        ]);
        let root = dir.path();
        assert_eq!(counted("npx mocha", root), Some((8, 1)));
        assert_eq!(counted("npx mocha --recursive", root), Some((9, 2)));
        assert_eq!(
            counted("npx mocha --timeout 5000 test/deep/b.spec.js", root),
            Some((1, 1))
        );
        assert_eq!(counted("npx tape test/deep/*.js", root), Some((1, 1)));
        assert_eq!(
            counted("npx tape test/*.js test/**/*.js", root),
            Some((9, 2))
        );
        assert_eq!(counted("npx tape nothing/*.js", root), None);
        // node --test's default files: everything under test/ and `*.test.*` elsewhere.
        assert_eq!(counted("node --test", root), Some((10, 3)));
        assert_eq!(counted("node --test src/c.test.mjs", root), Some((1, 1)));
        std::fs::write(root.join(".mocharc.yml"), "spec: spec/**/*.js\n").unwrap();
        assert_eq!(counted("npx mocha", root), None);
        assert_eq!(counted("npx jest", root), None);
    }
}
