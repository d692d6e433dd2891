//! New modules that take the place of another: a Python module or package whose name is the
//! standard library's, a test runner's or an installed dependency's, added where it lands on
//! the import path, and a JavaScript file added beside a TypeScript file of the same stem.
//!
//! A new Python file is on the import path under its own name when its directory is not a
//! package (no `__init__.py` as the change leaves it): the repository root, a `src/` layout,
//! and the test directories pytest puts first on `sys.path` are all such directories. Inside a
//! package a module is `pkg.json`, which shadows nothing.
//!
//! Dependencies are read from the manifests (`requirements*.txt`, `pyproject.toml`,
//! `setup.cfg`, `setup.py`) by name, normalized as pip does (`-` and `.` become `_`,
//! lowercase), and a project virtualenv's `site-packages` is asked for the module's name.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::names::{PYTHON_RUNNERS, PYTHON_STDLIB};
use super::{after_text, exists_after};
use crate::integrity::pattern::Pattern;
use crate::patch::{FileChange, FileSource};
use crate::policy::Issue;

/// Manifests that list a Python project's dependencies.
const MANIFESTS: &[&str] = &[
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements/base.txt",
    "requirements/dev.txt",
    "requirements/test.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
];

/// Virtualenv directories a project keeps beside its code.
const VENVS: &[&str] = &[".venv", "venv", "env", ".env"];

/// A requirement's distribution name at the start of a quoted string or a line.
static REQUIREMENT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"(?m)(?:^|["'])\s*([A-Za-z][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\]\s*)?(?:[<>=!~;@,"']|$)"#,
    )
});

fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// The top-level module a new Python file defines on the import path, if it does: `x` for a
/// new `dir/x.py` or `dir/x/__init__.py` whose directory `dir` is not a package.
fn top_level_module(path: &str, changes: &[FileChange], source: &dyn FileSource) -> Option<String> {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let (module, parent) = if name == "__init__.py" {
        let (parent, package) = dir.rsplit_once('/').unwrap_or(("", dir));
        (package.to_owned(), parent.to_owned())
    } else {
        (name.strip_suffix(".py")?.to_owned(), dir.to_owned())
    };
    if module.is_empty() || module.contains('.') {
        return None;
    }
    let init = if parent.is_empty() {
        "__init__.py".to_owned()
    } else {
        format!("{parent}/__init__.py")
    };
    (!exists_after(&init, changes, source)).then_some(module)
}

/// Distribution names the project's manifests list, normalized.
fn dependencies(changes: &[FileChange], source: &dyn FileSource) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for manifest in MANIFESTS {
        let Some(text) = after_text(manifest, changes, source) else {
            continue;
        };
        let relevant: String = if manifest.ends_with(".txt") {
            text.lines()
                .filter(|l| !l.trim_start().starts_with(['#', '-']))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            // Quoted requirement strings (PEP 621 arrays, `install_requires`), and poetry's
            // `name = "^1"` keys.
            text.lines()
                .filter(|l| l.contains('"') || l.contains('\''))
                .map(|l| {
                    l.split_once('=')
                        .filter(|(k, _)| !k.contains(['"', '\'', '[']))
                        .map_or(l, |(k, _)| k)
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        for c in REQUIREMENT.captures_iter(&relevant) {
            if let Some(m) = c.get(1) {
                out.insert(normalize(m.as_str()));
            }
        }
    }
    out
}

/// Whether a virtualenv in the repository has `module` installed.
fn installed(module: &str, source: &dyn FileSource) -> bool {
    VENVS.iter().any(|venv| {
        (8..=14).any(|minor| {
            let site = format!("{venv}/lib/python3.{minor}/site-packages");
            source
                .read(&format!("{site}/{module}/__init__.py"))
                .ok()
                .flatten()
                .is_some()
                || source
                    .read(&format!("{site}/{module}.py"))
                    .ok()
                    .flatten()
                    .is_some()
        })
    })
}

/// What `module` would shadow, in words, if anything.
fn shadowed(
    module: &str,
    deps: &dyn Fn() -> BTreeSet<String>,
    source: &dyn FileSource,
) -> Option<String> {
    if PYTHON_STDLIB.contains(&module) {
        return Some(format!("the standard library's `{module}`"));
    }
    if PYTHON_RUNNERS.contains(&module) {
        return Some(format!("the test runner's `{module}`"));
    }
    if deps().contains(&normalize(module)) || installed(module, source) {
        return Some(format!("the installed dependency `{module}`"));
    }
    None
}

pub(crate) fn issues(changes: &[FileChange], source: &dyn FileSource) -> Vec<Issue> {
    let deps = std::cell::OnceCell::new();
    let deps = || deps.get_or_init(|| dependencies(changes, source)).clone();
    let mut out = Vec::new();
    for change in changes
        .iter()
        .filter(|c| c.before.is_none() && c.after.is_some())
    {
        let path = change.path.as_str();
        if path.ends_with(".py") {
            let Some(module) = top_level_module(path, changes, source) else {
                continue;
            };
            if let Some(what) = shadowed(&module, &deps, source) {
                out.push(issue(
                    path,
                    format!(
                        "{path} is a new module `{module}` on the import path, where it takes the \
                         place of {what}; name the module after what it does instead"
                    ),
                ));
            }
        } else if let Some(typescript) = typescript_twin(path, changes, source) {
            out.push(issue(
                path,
                format!(
                    "{path} is new beside {typescript}, and vite, vitest and bundlers resolve an \
                     import of that stem to the JavaScript file first, so it replaces the code \
                     under test; change {typescript} instead"
                ),
            ));
        }
    }
    out
}

/// The TypeScript file a new JavaScript file sits beside with the same stem, if any.
fn typescript_twin(path: &str, changes: &[FileChange], source: &dyn FileSource) -> Option<String> {
    let (stem, ext) = path.rsplit_once('.')?;
    if !matches!(ext, "js" | "mjs" | "cjs" | "jsx") {
        return None;
    }
    ["ts", "tsx", "mts", "cts"]
        .iter()
        .map(|ts| format!("{stem}.{ts}"))
        .find(|twin| exists_after(twin, changes, source))
}

fn issue(path: &str, message: String) -> Issue {
    Issue::new("check.shadowing", message).at_path(path)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::patch::MemoryFiles;

    fn new_file(path: &str) -> FileChange {
        FileChange {
            path: path.into(),
            before: None,
            after: Some(b"x = 1\n".to_vec()),
        }
    }

    fn repo(files: &[(&str, &str)]) -> MemoryFiles {
        MemoryFiles(
            files
                .iter()
                .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    fn flagged(files: &[(&str, &str)], new: &[&str]) -> Vec<String> {
        let changes: Vec<FileChange> = new.iter().map(|p| new_file(p)).collect();
        issues(&changes, &repo(files))
            .into_iter()
            .filter_map(|i| i.path)
            .collect()
    }

    #[test]
    fn new_modules_that_shadow_stdlib_runner_or_dependencies_are_refused() {
        let files = [
            ("pkg/__init__.py", ""),
            ("pkg/core.py", ""),
            ("src/lib/app.ts", ""),
            ("requirements.txt", "requests>=2\n# comment\nPyYAML==6\n"),
            (
                "pyproject.toml",
                "[project]\ndependencies = [\n  \"attrs>=22\",\n  'numpy; python_version>\"3\"',\n]\n",
            ),
            (
                ".venv/lib/python3.12/site-packages/sortedcontainers/__init__.py",
                "",
            ),
        ];
        let new = [
            "fractions.py",
            "tests/pytest.py",
            "_pytest/__init__.py",
            "requests.py",
            "src/attrs/__init__.py",
            "numpy.py",
            "sortedcontainers.py",
            "src/lib/app.mjs",
        ];
        assert_eq!(flagged(&files, &new), new.to_vec());
    }

    #[test]
    fn modules_inside_packages_and_ordinary_names_are_allowed() {
        let files = [
            ("pkg/__init__.py", ""),
            ("src/lib/app.ts", ""),
            ("src/lib/app.d.ts", ""),
            ("requirements.txt", "requests>=2\n"),
        ];
        let new = [
            "pkg/json.py",
            "pkg/requests.py",
            "tests/test_json.py",
            "helpers.py",
            "src/lib/other.js",
        ];
        assert_eq!(flagged(&files, &new), Vec::<String>::new());
    }
}
