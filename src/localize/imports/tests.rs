//! Import resolution as each ecosystem does it, on small trees.

use std::fs;

use super::*;
use crate::localize::tests::tree;
use crate::localize::tree::Tree;

/// `line: files [names] alias` per import.
fn render(imports: &[Import<'_>]) -> Vec<String> {
    imports
        .iter()
        .map(|import| {
            let names: Vec<String> = import
                .names
                .iter()
                .map(|(local, imported)| {
                    if local == imported {
                        local.clone()
                    } else {
                        format!("{imported} as {local}")
                    }
                })
                .collect();
            format!(
                "{}: {:?} {:?} {}",
                import.line,
                import.files,
                names,
                import.alias.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

fn imports_of(files: &[(&str, &str)], path: &str) -> Vec<String> {
    let (dir, tracked) = tree(files);
    let tree = Tree::new(dir.path(), &tracked, &[]);
    let text = fs::read_to_string(dir.path().join(path)).unwrap();
    render(&imports(&tree, path, &text))
}

#[test]
fn python_imports_resolve_in_the_src_layout_relatively_and_to_submodules() {
    let test = "\
import os
import json
from tempo import Duration, humanize
from tempo.format import (
    humanize as human,
    parts,
)
from tempo import format
import tempo.duration as dur
from ..stats import mean
from . import helpers
";
    let found = imports_of(
        &[
            ("src/tempo/__init__.py", ""),
            ("src/tempo/duration.py", ""),
            ("src/tempo/format.py", ""),
            ("tools/json.py", ""),
            ("pkg/__init__.py", ""),
            ("pkg/stats.py", ""),
            ("pkg/tests/__init__.py", ""),
            ("pkg/tests/helpers.py", ""),
            ("pkg/tests/test_a.py", test),
        ],
        "pkg/tests/test_a.py",
    );
    assert_eq!(
        found,
        [
            "1: [] [] os",
            "2: [] [] json",
            r#"3: ["src/tempo/__init__.py"] ["Duration", "humanize"] -"#,
            r#"4: ["src/tempo/format.py"] ["humanize as human", "parts"] -"#,
            r#"8: ["src/tempo/format.py"] [] format"#,
            r#"9: ["src/tempo/duration.py"] [] dur"#,
            r#"10: ["pkg/stats.py"] ["mean"] -"#,
            r#"11: ["pkg/tests/helpers.py"] [] helpers"#,
        ]
    );
}

#[test]
fn node_resolves_parent_directories_through_package_json_and_index_files() {
    let test = "\
var qs = require('..');
var pad = require('../');
const { parse } = require('../lib/parse');
var here = require('.');
const sub = require('./sub').value;
import lodash from 'lodash';
import fs from 'node:fs';
";
    let found = imports_of(
        &[
            (
                "package.json",
                r#"{"name": "qs-lite", "main": "lib/index.js"}"#,
            ),
            ("lib/index.js", ""),
            ("lib/parse.js", ""),
            ("test/index.js", ""),
            ("test/sub/index.mjs", ""),
            ("test/parse.js", test),
        ],
        "test/parse.js",
    );
    assert_eq!(
        found,
        [
            r#"1: ["lib/index.js"] [] qs"#,
            r#"2: ["lib/index.js"] [] pad"#,
            r#"3: ["lib/parse.js"] ["parse"] -"#,
            r#"4: ["test/index.js"] [] here"#,
            r#"5: ["test/sub/index.mjs"] ["value as sub"] -"#,
            "6: [] [] lodash",
            "7: [] [] fs",
        ]
    );
}

#[test]
fn packages_resolve_by_name_through_exports_conditions_and_build_output() {
    let manifest = r#"{
  "name": "@acme/units",
  "exports": {
    ".": { "types": "./dist/index.d.ts", "import": "./esm/index.js", "require": "./src/index.js" },
    "./convert": "./src/convert.js",
    "./fmt/*": "./src/format/*.js"
  }
}"#;
    let test = "\
const units = require('@acme/units');
import * as esm from '@acme/units';
const { toCelsius } = require('@acme/units/convert');
import { pad } from '@acme/units/fmt/pad';
import { sum } from 'workspace-lib';
";
    let found = imports_of(
        &[
            ("package.json", manifest),
            ("src/index.ts", ""),
            ("src/convert.js", ""),
            ("src/format/pad.ts", ""),
            (
                "libs/sum/package.json",
                r#"{"name": "workspace-lib", "main": "dist/index.js"}"#,
            ),
            ("libs/sum/src/index.ts", ""),
            ("test/units.test.js", test),
        ],
        "test/units.test.js",
    );
    assert_eq!(
        found,
        [
            r#"1: ["src/index.ts"] [] units"#,
            r#"2: ["src/index.ts"] [] esm"#,
            r#"3: ["src/convert.js"] ["toCelsius"] -"#,
            r#"4: ["src/format/pad.ts"] ["pad"] -"#,
            r#"5: ["libs/sum/src/index.ts"] ["sum"] -"#,
        ]
    );
}

#[test]
fn typescript_imports_resolve_without_extensions_through_barrels_and_tsconfig_paths() {
    let tsconfig = r#"{
  // Comments and trailing commas, as tsc allows.
  "compilerOptions": {
    "baseUrl": ".",
    "paths": { "@/*": ["src/*"], "~config": ["config/index.ts"], },
  },
}"#;
    let test = "\
import { camelCase, kebabCase } from '../src';
import type { Options } from '../src/types';
import { roundTo } from '@/money/round';
import config from '~config';
import { helper } from 'src/util/helper.js';
export * from '../src/case';
export { truncate as cut } from '../src/truncate';
";
    let found = imports_of(
        &[
            ("tsconfig.json", tsconfig),
            ("src/index.ts", ""),
            ("src/types.ts", ""),
            ("src/case.ts", ""),
            ("src/truncate.ts", ""),
            ("src/money/round.ts", ""),
            ("src/util/helper.ts", ""),
            ("config/index.ts", ""),
            ("test/case.test.ts", test),
        ],
        "test/case.test.ts",
    );
    assert_eq!(
        found,
        [
            r#"1: ["src/index.ts"] ["camelCase", "kebabCase"] -"#,
            r#"2: ["src/types.ts"] ["Options"] -"#,
            r#"3: ["src/money/round.ts"] ["roundTo"] -"#,
            r#"4: ["config/index.ts"] [] config"#,
            r#"5: ["src/util/helper.ts"] ["helper"] -"#,
            r#"6: ["src/case.ts"] ["*"] -"#,
            r#"7: ["src/truncate.ts"] ["truncate as cut"] -"#,
        ]
    );
}

#[test]
fn rust_use_and_mod_paths_walk_module_files() {
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"semver-lite\"\nversion = \"0.1.0\"\n\n[dependencies]\nname-like = \"1\"\n",
        ),
        (
            "src/lib.rs",
            "mod error;\npub mod text;\npub use error::Error;\n#[cfg(test)]\nmod tests;\n",
        ),
        ("src/error.rs", ""),
        ("src/text/mod.rs", "pub mod pad;\npub mod wrap;\n"),
        (
            "src/text/pad.rs",
            "#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::wrap::wrap_words;\n}\n",
        ),
        (
            "src/text/wrap.rs",
            "use super::super::Error;\nuse crate::text::{self, wrap::wrap_words as ww};\n",
        ),
        (
            "src/tests.rs",
            "use crate::text::wrap::wrap_words;\nuse super::*;\nuse std::fmt;\n",
        ),
        (
            "tests/api.rs",
            "use semver_lite::{Error, text::wrap};\nuse semver_lite::}{;\n",
        ),
    ];
    assert_eq!(
        imports_of(&files, "src/lib.rs"),
        [
            r#"1: ["src/error.rs"] [] error"#,
            r#"2: ["src/text/mod.rs"] [] text"#,
            r#"3: ["src/error.rs"] ["Error"] -"#,
            r#"5: ["src/tests.rs"] [] tests"#,
        ]
    );
    assert_eq!(
        imports_of(&files, "src/text/wrap.rs"),
        [
            r#"1: ["src/lib.rs"] ["Error"] -"#,
            r#"2: ["src/text/mod.rs"] [] text"#,
            r#"2: [] ["wrap_words as ww"] -"#,
        ]
    );
    // Inside an inline `mod tests`, `super` is the file's own module.
    assert_eq!(
        imports_of(&files, "src/text/pad.rs"),
        [
            r#"3: [] ["*"] -"#,
            r#"4: ["src/text/wrap.rs"] ["wrap_words"] -"#,
        ]
    );
    assert_eq!(
        imports_of(&files, "src/tests.rs"),
        [
            r#"1: ["src/text/wrap.rs"] ["wrap_words"] -"#,
            r#"2: ["src/lib.rs"] ["*"] -"#,
        ]
    );
    assert_eq!(
        imports_of(&files, "tests/api.rs"),
        [
            r#"1: ["src/lib.rs"] ["Error"] -"#,
            r#"1: ["src/text/wrap.rs"] [] wrap"#,
        ]
    );
}

/// A workspace crate's integration test that writes the crate's paths inline, with no
/// `use` (rust-url's `data-url/tests/wpt.rs` calls `data_url::DataUrl::process(..)`),
/// reaches the crate's library and the modules it names.
#[test]
fn a_workspace_crates_integration_test_reaches_its_library_through_inline_paths() {
    let files = [
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"url\", \"data-url\"]\n",
        ),
        ("url/Cargo.toml", "[package]\nname = \"url\"\n"),
        ("url/src/lib.rs", "pub fn parse() {}\n"),
        (
            "data-url/Cargo.toml",
            "[package]\nname = \"data-url\"\nversion = \"0.3.0\"\n",
        ),
        (
            "data-url/src/lib.rs",
            "pub mod forgiving_base64;\nmod mime;\npub struct DataUrl;\n",
        ),
        (
            "data-url/src/forgiving_base64.rs",
            "pub fn decode_to_vec() {}\n",
        ),
        ("data-url/src/mime.rs", ""),
        (
            "data-url/tests/wpt.rs",
            "use tester as test;\n\nfn run(input: &str) {\n    let url = data_url::DataUrl::process(input);\n    let body = data_url::forgiving_base64::decode_to_vec(input);\n    let again = data_url::DataUrl::process(input);\n}\n",
        ),
    ];
    assert_eq!(
        imports_of(&files, "data-url/tests/wpt.rs"),
        [
            r#"4: ["data-url/src/lib.rs"] ["DataUrl"] -"#,
            r#"5: ["data-url/src/forgiving_base64.rs"] ["decode_to_vec"] -"#,
        ]
    );
}

#[test]
fn go_tests_see_their_package_and_the_module_packages_they_import() {
    let test =
        "package strutil\n\nimport (\n\t\"testing\"\n\n\tfmtx \"example.com/textutil/format\"\n)\n";
    let found = imports_of(
        &[
            ("go.mod", "module example.com/textutil\n\ngo 1.21\n"),
            ("strutil/reverse.go", ""),
            ("strutil/pad.go", ""),
            ("strutil/other_test.go", ""),
            ("strutil/sub/deep.go", ""),
            ("format/format.go", ""),
            ("strutil/reverse_test.go", test),
        ],
        "strutil/reverse_test.go",
    );
    assert_eq!(
        found,
        [
            r#"0: ["strutil/pad.go", "strutil/reverse.go"] ["*"] -"#,
            r#"6: ["format/format.go"] [] fmtx"#,
        ]
    );
}
