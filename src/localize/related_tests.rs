//! The test files related to a change, per language, over trees with generated names: a test
//! is selected when its imports reach a changed file (with the chain that leads there), and
//! left out when they do not.

use super::related::{Related, related_tests};
use super::tests::tree_of;

/// A few distinct identifiers per case: the selection must not depend on one spelling.
fn names(seed: usize) -> (String, String, String) {
    const PARTS: &[&str] = &[
        "alpha", "brook", "cedar", "delta", "ember", "fjord", "grove",
    ];
    let pick = |k: usize| PARTS[(seed * 3 + k) % PARTS.len()];
    (
        format!("{}_{}", pick(0), seed),
        format!("{}{}", pick(1), seed),
        format!("{}_{}", pick(2), seed + 1),
    )
}

fn select(
    files: &[(String, String)],
    changed: &str,
    is_test: &dyn Fn(&str) -> bool,
) -> Vec<Related> {
    let (dir, tracked) = tree_of(files);
    related_tests(dir.path(), &tracked, &[changed.to_owned()], is_test).tests
}

fn owned(files: &[(&str, String)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(path, text)| ((*path).to_owned(), text.clone()))
        .collect()
}

fn python_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with("test") && name.ends_with(".py")
}

#[test]
fn python_tests_reach_a_src_layout_module_through_a_package_and_a_relative_import() {
    for seed in 0..4 {
        let (pkg, module, helper) = names(seed);
        let files = [
            (
                format!("src/{pkg}/__init__.py"),
                format!("from .{module} import run\n"),
            ),
            (
                format!("src/{pkg}/{module}.py"),
                format!("from .{helper} import h\n\ndef run():\n    return h()\n"),
            ),
            (
                format!("src/{pkg}/{helper}.py"),
                "def h():\n    return 1\n".to_owned(),
            ),
            (format!("src/{pkg}/unrelated.py"), "X = 1\n".to_owned()),
            (
                format!("tests/test_{module}.py"),
                format!("from {pkg} import run\n\ndef test_run():\n    assert run()\n"),
            ),
            (
                "tests/test_other.py".to_owned(),
                format!("from {pkg}.unrelated import X\n"),
            ),
            (
                format!("integration/{pkg}/test_deep.py"),
                format!("import {pkg}.{module}\n"),
            ),
        ];
        let found = select(&files, &format!("src/{pkg}/{helper}.py"), &python_test);
        let chains: Vec<(String, Vec<String>)> = found
            .iter()
            .map(|r| (r.test.clone(), r.chain.clone()))
            .collect();
        assert_eq!(
            chains,
            [
                (
                    format!("integration/{pkg}/test_deep.py"),
                    vec![
                        format!("integration/{pkg}/test_deep.py"),
                        format!("src/{pkg}/{module}.py"),
                        format!("src/{pkg}/{helper}.py"),
                    ]
                ),
                (
                    format!("tests/test_{module}.py"),
                    vec![
                        format!("tests/test_{module}.py"),
                        format!("src/{pkg}/__init__.py"),
                        format!("src/{pkg}/{module}.py"),
                        format!("src/{pkg}/{helper}.py"),
                    ]
                ),
            ],
            "seed {seed}"
        );
        assert!(
            found
                .iter()
                .all(|r| r.reaches == format!("src/{pkg}/{helper}.py"))
        );
    }
}

fn js_test(path: &str) -> bool {
    path.contains(".test.") || path.contains("/__tests__/")
}

#[test]
fn js_tests_reach_a_module_through_require_import_and_an_index_re_export() {
    for seed in 0..4 {
        let (dir, module, other) = names(seed);
        let files = owned(&[
            ("package.json", "{\"name\": \"x\"}\n".to_owned()),
            (
                &format!("lib/{dir}/index.js"),
                format!("export {{ {module} }} from './{module}';\n"),
            ),
            (
                &format!("lib/{dir}/{module}.js"),
                format!("export function {module}() {{ return 1; }}\n"),
            ),
            (
                &format!("lib/{other}.js"),
                "module.exports = 2;\n".to_owned(),
            ),
            (
                &format!("test/{dir}.test.js"),
                format!("import {{ {module} }} from '../lib/{dir}';\n"),
            ),
            (
                &format!("spec/__tests__/{module}.js"),
                format!("const m = require('../../lib/{dir}/{module}');\n"),
            ),
            (
                &format!("test/{other}.test.js"),
                format!("const o = require('../lib/{other}');\n"),
            ),
        ]);
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        let (d, m) = (paths[1].to_owned(), paths[2].to_owned());
        let found = select(&files, &m, &js_test);
        let chains: Vec<Vec<String>> = found.iter().map(|r| r.chain.clone()).collect();
        let mut expected = vec![
            vec![paths[5].to_owned(), m.clone()],
            vec![paths[4].to_owned(), d, m.clone()],
        ];
        expected.sort();
        let mut chains_sorted = chains.clone();
        chains_sorted.sort();
        assert_eq!(chains_sorted, expected, "seed {seed}");
    }
}

fn rust_test(path: &str) -> bool {
    path.split('/').rev().nth(1) == Some("tests") && path.ends_with(".rs")
}

#[test]
fn rust_integration_tests_reach_a_module_through_the_crate_name_mod_and_use_crate() {
    for seed in 0..4 {
        let (krate, module, inner) = names(seed);
        let files = owned(&[
            (
                "Cargo.toml",
                format!(
                    "[package]\nname = \"{}\"\nversion = \"0.1.0\"\n",
                    krate.replace('_', "-")
                ),
            ),
            ("src/lib.rs", format!("pub mod {module};\nmod {inner};\n")),
            (
                &format!("src/{module}.rs"),
                format!("use crate::{inner}::step;\npub fn go() {{ step() }}\n"),
            ),
            (&format!("src/{inner}.rs"), "pub fn step() {}\n".to_owned()),
            (
                "tests/api.rs",
                format!("use {krate}::{module}::go;\n#[test]\nfn t() {{ go() }}\n"),
            ),
            ("tests/plain.rs", "#[test]\nfn t() {}\n".to_owned()),
        ]);
        let found = select(&files, &format!("src/{inner}.rs"), &rust_test);
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        assert_eq!(found[0].test, "tests/api.rs");
        assert_eq!(
            found[0].chain.first().map(String::as_str),
            Some("tests/api.rs")
        );
        assert_eq!(found[0].chain.last(), Some(&format!("src/{inner}.rs")));
    }
}

#[test]
fn go_tests_reach_a_changed_package_through_an_import_and_their_own_package() {
    for seed in 0..4 {
        let (pkg, user, other) = names(seed);
        let files = owned(&[
            ("go.mod", "module example.com/m\n\ngo 1.21\n".to_owned()),
            (
                &format!("{pkg}/{pkg}.go"),
                format!("package {pkg}\n\nfunc F() int {{ return 1 }}\n"),
            ),
            (
                &format!("{pkg}/{pkg}_test.go"),
                format!("package {pkg}\n\nimport \"testing\"\n"),
            ),
            (
                &format!("{user}/{user}.go"),
                format!("package {user}\n\nimport \"example.com/m/{pkg}\"\n"),
            ),
            (
                &format!("{user}/{user}_test.go"),
                format!("package {user}\n\nimport \"testing\"\n"),
            ),
            (
                &format!("{other}/{other}_test.go"),
                format!("package {other}\n\nimport \"testing\"\n"),
            ),
        ]);
        let found = select(&files, &format!("{pkg}/{pkg}.go"), &|p: &str| {
            p.ends_with("_test.go")
        });
        let mut tests: Vec<&str> = found.iter().map(|r| r.test.as_str()).collect();
        tests.sort_unstable();
        let mut expected = [
            format!("{pkg}/{pkg}_test.go"),
            format!("{user}/{user}_test.go"),
        ];
        expected.sort();
        assert_eq!(tests, expected, "seed {seed}");
        let through_import = found.iter().find(|r| r.test.starts_with(&user)).unwrap();
        assert_eq!(
            through_import.chain,
            [
                format!("{user}/{user}_test.go"),
                format!("{user}/{user}.go"),
                format!("{pkg}/{pkg}.go")
            ]
        );
    }
}

#[test]
fn nothing_is_selected_when_no_test_reaches_the_change() {
    let files = owned(&[
        ("a.py", "X = 1\n".to_owned()),
        ("b.py", "Y = 2\n".to_owned()),
        ("tests/test_b.py", "from b import Y\n".to_owned()),
    ]);
    assert!(select(&files, "a.py", &python_test).is_empty());
}
