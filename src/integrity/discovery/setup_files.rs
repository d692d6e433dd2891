//! Files a runner's configuration names and loads before the tests: jest's and vitest's
//! `setupFiles`, `setupFilesAfterEnv`, `globalSetup`, `globalTeardown`, `testEnvironment`,
//! `snapshotResolver`, `moduleNameMapper` targets and `resolve.alias`; mocha's `require` and
//! `file`; pytest's `-p` plugins in `addopts` and `pytest_plugins` in a `conftest.py`. A change
//! to one of them runs before every test, like a change to the configuration itself.
//!
//! The configurations are read as the change leaves them, at the repository root and in every
//! directory above a changed file; a reference is a string literal after one of those keys,
//! resolved against the configuration's directory (`<rootDir>` is that directory).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::after_text;
use crate::integrity::pattern::Pattern;
use crate::patch::{FileChange, FileSource};
use crate::policy::Issue;

/// Configuration files that name JavaScript setup files.
const JS_CONFIGS: &[&str] = &[
    "package.json",
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "jest.config.json",
    "vitest.config.ts",
    "vitest.config.js",
    "vitest.config.mts",
    "vitest.config.mjs",
    "vitest.workspace.ts",
    "vitest.workspace.js",
    "vite.config.ts",
    "vite.config.js",
    "vite.config.mts",
    "vite.config.mjs",
    ".mocharc.json",
    ".mocharc.js",
    ".mocharc.cjs",
    ".mocharc.yml",
    ".mocharc.yaml",
];

/// Configuration files that name pytest plugins.
const PY_CONFIGS: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "conftest.py",
];

/// A key that names setup files, and what follows it up to the end of its value (one string or
/// a bracketed list, or an object for `moduleNameMapper` and `alias`).
static JS_KEY: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"(?s)['"]?\b(setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|testEnvironment|snapshotResolver|moduleNameMapper|alias|require|file|setupFile)\b['"]?\s*[:=]\s*(\[[^\]]*\]|\{[^}]*\}|['"][^'"]*['"]|(?:\n\s*-\s*[^\n]+)+)"#,
    )
});
static STRING: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#"['"]([^'"]+)['"]|^\s*-\s*(\S+)\s*$"#));
static PYTEST_PLUGIN: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#"(?:^|\s)-p\s*([A-Za-z_][\w.]*)(?:\s|$|["'])"#));
static PYTEST_PLUGINS: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#"(?s)\bpytest_plugins\s*=\s*(\[[^\]]*\]|\([^)]*\)|['"][^'"]*['"])"#)
});

fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." | "<rootDir>" => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The directories whose configurations can govern `path`: the root and every ancestor.
fn governing_dirs(path: &str) -> Vec<String> {
    let mut dirs = vec![String::new()];
    let parts: Vec<&str> = path.split('/').collect();
    for i in 1..parts.len() {
        dirs.push(parts[..i].join("/"));
    }
    dirs
}

/// The repository paths `config` (in `dir`) names as setup files or plugins. A reference
/// without an extension stands for the file with any usual one.
fn referenced(dir: &str, config: &str, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |rel: &str| {
        let rel = rel.trim();
        if rel.is_empty() || rel.contains("://") || rel.starts_with('^') {
            return;
        }
        // A leading `/` is the repository root.
        let path = match rel.strip_prefix('/') {
            Some(from_root) => join("", from_root),
            None => join(dir, rel),
        };
        out.insert(path.clone());
        for ext in ["js", "ts", "mjs", "cjs", "jsx", "tsx", "mts", "cts", "py"] {
            out.insert(format!("{path}.{ext}"));
        }
        out.insert(format!("{path}/index.js"));
        out.insert(format!("{path}/index.ts"));
    };
    if PY_CONFIGS.contains(&config) {
        // A plugin is a module name, found from the root (pytest's rootdir is on the path) or
        // from the configuration's directory.
        let mut modules: Vec<String> = PYTEST_PLUGIN
            .captures_iter(text)
            .map(|c| c[1].replace('.', "/"))
            .collect();
        for c in PYTEST_PLUGINS.captures_iter(text) {
            modules.extend(
                STRING
                    .captures_iter(&c[1])
                    .filter_map(|s| s.get(1).map(|m| m.as_str().replace('.', "/"))),
            );
        }
        for module in modules {
            add(&module);
            add(&format!("/{module}"));
        }
        return out;
    }
    for c in JS_KEY.captures_iter(text) {
        let value = &c[2];
        let values: Vec<String> = if value.contains('\n') && !value.starts_with(['[', '{']) {
            value
                .lines()
                .filter_map(|l| Some(STRING.captures(l)?.get(2)?.as_str().to_owned()))
                .collect()
        } else {
            STRING
                .captures_iter(value)
                .filter_map(|s| s.get(1).map(|m| m.as_str().to_owned()))
                .collect()
        };
        for v in values {
            // Only paths: a package name (`jsdom`, `ts-node/register`) is not the project's.
            if v.starts_with('.')
                || v.starts_with("<rootDir>")
                || v.contains('/') && !v.starts_with('@')
            {
                add(&v);
            }
        }
    }
    out
}

pub(crate) fn issues(changes: &[FileChange], source: &dyn FileSource) -> Vec<Issue> {
    let mut out = Vec::new();
    for change in changes {
        let path = change.path.as_str();
        let found = governing_dirs(path).into_iter().find_map(|dir| {
            JS_CONFIGS.iter().chain(PY_CONFIGS).find_map(|config| {
                let config_path = if dir.is_empty() {
                    (*config).to_owned()
                } else {
                    format!("{dir}/{config}")
                };
                if config_path == path {
                    return None;
                }
                let text = after_text(&config_path, changes, source)?;
                referenced(&dir, config, &text)
                    .contains(path)
                    .then_some(config_path)
            })
        });
        if let Some(config) = found {
            out.push(
                Issue::new(
                    "check.test-harness",
                    format!(
                        "{path} is part of the test harness (a file {config} loads before the \
                         tests); a change there can make failing tests pass without a fix, so \
                         efix refuses it: fix the code instead, or, if the fix truly needs this \
                         file, the user can allow it with `paths.allow-harness` in .efix.yml"
                    ),
                )
                .at_path(path),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::patch::MemoryFiles;

    fn change(path: &str) -> FileChange {
        FileChange {
            path: path.into(),
            before: Some(b"a\n".to_vec()),
            after: Some(b"b\n".to_vec()),
        }
    }

    fn flagged(files: &[(&str, &str)], changed: &[&str]) -> Vec<String> {
        let source = MemoryFiles(
            files
                .iter()
                .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
                .collect::<BTreeMap<_, _>>(),
        );
        let changes: Vec<FileChange> = changed.iter().map(|p| change(p)).collect();
        issues(&changes, &source)
            .into_iter()
            .filter_map(|i| i.path)
            .collect()
    }

    #[test]
    fn files_a_runner_config_loads_are_harness() {
        let files = [
            (
                "package.json",
                r#"{"jest": {"setupFilesAfterEnv": ["<rootDir>/test/setup.js"], "testEnvironment": "jsdom"}}"#,
            ),
            (
                "web/vitest.config.ts",
                "export default { test: { setupFiles: ['./src/setup-tests.ts'], globalSetup: './global' } }",
            ),
            (
                ".mocharc.yml",
                "require:\n  - ./support/hooks.js\n  - ts-node/register\n",
            ),
            ("pytest.ini", "[pytest]\naddopts = -q -p support.plugin\n"),
            (
                "tests/conftest.py",
                "pytest_plugins = ['tests.fixtures.db']\n",
            ),
        ];
        let changed = [
            "test/setup.js",
            "web/src/setup-tests.ts",
            "web/global.ts",
            "support/hooks.js",
            "support/plugin.py",
            "tests/fixtures/db.py",
        ];
        assert_eq!(flagged(&files, &changed), changed.to_vec());
    }

    #[test]
    fn files_no_config_names_are_not_harness() {
        let files = [
            (
                "package.json",
                r#"{"main": "lib/index.js", "jest": {"testEnvironment": "node"}}"#,
            ),
            ("pytest.ini", "[pytest]\naddopts = -q -p no:cacheprovider\n"),
        ];
        let changed = ["lib/index.js", "src/setup.js", "no/cacheprovider.py"];
        assert_eq!(flagged(&files, &changed), Vec::<String>::new());
    }
}
