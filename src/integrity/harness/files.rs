//! Harness files recognised by their path alone: every change to them is a harness change.

/// Whole-file harness names and what they are.
const NAMES: &[(&str, &str)] = &[
    ("conftest.py", "pytest configuration"),
    ("pytest.ini", "pytest configuration"),
    (".pytest.ini", "pytest configuration"),
    ("pytest.toml", "pytest configuration"),
    (".pytest.toml", "pytest configuration"),
    (
        ".babelrc",
        "babel configuration, which transforms the tests",
    ),
    ("tox.ini", "tox and pytest configuration"),
    ("sitecustomize.py", "a Python start-up hook"),
    ("usercustomize.py", "a Python start-up hook"),
    (".mocharc", "mocha configuration"),
    ("mocha.opts", "mocha configuration"),
    (".taprc", "node-tap configuration"),
    ("jasmine.json", "jasmine configuration"),
];

/// Prefixes of harness file names followed by any extension (`jest.config.ts`, `.mocharc.yml`),
/// and what they are.
const PREFIXES: &[(&str, &str)] = &[
    ("jest.config.", "jest configuration"),
    ("jest.setup.", "a jest setup file"),
    ("jest-setup.", "a jest setup file"),
    ("setupTests.", "a jest setup file"),
    ("vitest.config.", "vitest configuration"),
    ("vitest.workspace.", "vitest configuration"),
    ("vitest.projects.", "vitest configuration"),
    (
        "babel.config.",
        "babel configuration, which transforms the tests",
    ),
    (
        ".babelrc.",
        "babel configuration, which transforms the tests",
    ),
    ("vitest.setup.", "a vitest setup file"),
    (
        "vite.config.",
        "vite configuration, which holds vitest's settings",
    ),
    (".mocharc.", "mocha configuration"),
    ("ava.config.", "ava configuration"),
    ("karma.conf.", "karma configuration"),
    ("karma.config.", "karma configuration"),
];

/// Whether `path` (repository-relative, `/`-separated) is a harness file whatever its content,
/// and what it is.
pub fn harness_file(path: &str) -> Option<&'static str> {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let parent = parts
        .len()
        .checked_sub(2)
        .and_then(|i| parts.get(i))
        .copied();
    if let Some((_, what)) = NAMES.iter().find(|(n, _)| *n == name) {
        return Some(what);
    }
    if let Some((_, what)) = PREFIXES
        .iter()
        .find(|(prefix, _)| name.len() > prefix.len() && name.starts_with(prefix))
    {
        return Some(what);
    }
    if name == "__init__.py" && is_test_package(&parts[..parts.len() - 1]) {
        return Some("a test package's __init__.py, which runs before its tests");
    }
    if name.ends_with(".pth") {
        return Some("a Python start-up hook");
    }
    if parent == Some(".cargo") && (name == "config" || name == "config.toml") {
        return Some("cargo configuration");
    }
    if parent == Some(".config") && name == "nextest.toml" {
        return Some("nextest configuration");
    }
    // A build script sits next to Cargo.toml; a `build.rs` among the sources is a module.
    if name == "build.rs" && !parts.contains(&"src") {
        return Some("a cargo build script");
    }
    None
}

/// Directories of test data: a package below one is a fixture the tests read, not a package
/// of tests.
const DATA_DIRS: &[&str] = &[
    "roots",
    "fixtures",
    "data",
    "testdata",
    "resources",
    "assets",
    "samples",
    "examples",
];

/// Whether `dirs` (a package's directory, split) is a test package at any depth: below a test
/// directory (`tests`, `test`, `testing`) through directories that can all be packages (a
/// Python identifier, not a data directory). Importing any test in it runs its `__init__.py`.
fn is_test_package(dirs: &[&str]) -> bool {
    let Some(start) = dirs
        .iter()
        .rposition(|d| matches!(*d, "tests" | "test" | "testing"))
    else {
        return false;
    };
    dirs[start..].iter().all(|d| {
        !DATA_DIRS.contains(d)
            && d.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && d.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_configs_hooks_and_build_scripts_are_harness_files() {
        let yes = [
            "conftest.py",
            "tests/unit/conftest.py",
            "tests/__init__.py",
            "pkg/tests/unit/__init__.py",
            "pytest.toml",
            "vitest.projects.ts",
            "babel.config.js",
            "pytest.ini",
            "tox.ini",
            "sitecustomize.py",
            "lib/python3.12/site-packages/evil.pth",
            "jest.config.js",
            "packages/a/jest.config.ts",
            "vitest.config.mts",
            "vite.config.ts",
            ".mocharc.yml",
            ".mocharc",
            "test/mocha.opts",
            "ava.config.mjs",
            "karma.conf.js",
            "src/setupTests.ts",
            ".cargo/config.toml",
            "crates/x/.cargo/config",
            "build.rs",
            "crates/x/build.rs",
            ".config/nextest.toml",
        ];
        let no = [
            "src/conftest_helpers.py",
            "src/jest.ts",
            "jest.config",
            "src/build.rs",
            "src/bin/build.rs",
            "Cargo.toml",
            "config.toml",
            "tests/test_tox.py",
            "setup.py",
            "pkg/__init__.py",
            "src/testsuite/__init__.py",
            "tests/roots/test-ext-napoleon/mypackage/__init__.py",
            "tests/fixtures/pkg/__init__.py",
        ];
        let missed: Vec<&str> = yes
            .into_iter()
            .filter(|p| harness_file(p).is_none())
            .collect();
        let wrong: Vec<&str> = no
            .into_iter()
            .filter(|p| harness_file(p).is_some())
            .collect();
        assert_eq!((missed, wrong), (vec![], vec![]));
    }
}
