//! JavaScript and TypeScript: reading a runner's environment (`process.env.JEST_WORKER_ID`,
//! `VITEST`, `NODE_ENV === 'test'`), probing its globals (`typeof jest`, `typeof it`),
//! importing a test framework, and patching an assertion or test library or a builtin
//! (`require('assert').throws = ...`, `assert.equal = ...`, `Object.defineProperty(assert,
//! ...)`, `Array.prototype.x = ...`).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::added::{Added, Detection, Family, at, is_test_support_path, of};
use crate::integrity::pattern::Pattern;

/// Module specifiers of assertion and test libraries (a regex alternation).
const LIBRARIES: &str = r"(?:node:)?assert(?:/strict)?|chai|should|expect|power-assert|uvu/assert|node:test|jest|@jest/globals|vitest|mocha|tape|ava|tap";

/// Test frameworks whose import into production code is a cheat (`assert` is not one: using it
/// for invariants is allowed).
const FRAMEWORKS: &str = r"node:test|chai|jest|@jest/[\w-]+|vitest|@vitest/[\w-]+|mocha|tape|ava|should|uvu|tap|jasmine|@playwright/test";

/// Names bound to an assertion or test library without an import (globals of the runners),
/// and the builtins whose members production code must not replace.
const PATCHED_ROOTS: &[&str] = &[
    "assert", "chai", "expect", "should", "jest", "vi", "mocha", "Mocha", "Object", "Array",
    "Function", "String", "Number", "Boolean", "Symbol", "Promise", "Error", "RegExp", "Date",
    "Map", "Set", "WeakMap", "JSON", "Math", "Reflect", "console", "process",
];

/// Assignments to builtins that libraries make for good reasons and that change no test
/// result.
const ALLOWED_TARGETS: &[&str] = &[
    "process.env",
    "process.exitCode",
    "process.title",
    "Error.stackTraceLimit",
    "Error.prepareStackTrace",
];

/// The global objects; a member of one is a global (`globalThis.it`).
const GLOBAL_OBJECTS: &[&str] = &["globalThis", "global", "window", "self"];

/// Environment variables that test runners set (and npm's name of the running script).
const ENV_MARKERS: &str = r"JEST_WORKER_ID|VITEST|VITEST_WORKER_ID|VITEST_POOL_ID|NODE_TEST_CONTEXT|MOCHA_WORKER_ID|TAP|npm_lifecycle_event";

static ENV_READ: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"(?:\bprocess\s*\.\s*env|\bimport\.meta\.env)\s*(?:\.\s*|\[\s*['"])({ENV_MARKERS})\b|\{{[^}}]*\b({ENV_MARKERS})\b[^}}]*\}}\s*=\s*process\s*\.\s*env\b|['"]({ENV_MARKERS})['"]\s+in\s+process\s*\.\s*env\b"#
    ))
});
static TEST_MODE: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\b(NODE_ENV|BABEL_ENV|MODE)\b"));
static TEST_STRING: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r#"['"`]test['"`]"#));
static ARGV_RUNNER: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\bprocess\s*\.\s*argv\b.*\b(_?mocha|jest|vitest|ava|tape)\b"));
static TYPEOF: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\btypeof\s*\(?\s*(?:(?:globalThis|global|window|self)\s*\.\s*)?(jest|vi|describe|it|mocha|jasmine|expect|suite|beforeEach|afterEach|beforeAll|afterAll)\b(\s*[.\[])?",
    )
});
static GLOBAL_PROBE: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\b(?:globalThis|global|window|self)\s*(?:\.\s*|\[\s*['"])(describe|it|jest|vi|mocha|jasmine|expect|suite|beforeEach|afterEach)\b|['"](describe|it|jest|vi|mocha)['"]\s+in\s+(?:globalThis|global|window|self)\b"#,
    )
});
static FRAMEWORK_IMPORT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"(?:\brequire\s*\(\s*|\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]((?:{FRAMEWORKS})(?:/[^'"]*)?)['"]"#
    ))
});
static ASSIGNMENT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"(?:^|[^\w$.])([A-Za-z_$][\w$]*|require\s*\(\s*['"](?:{LIBRARIES})['"]\s*\))((?:\s*\.\s*[\w$]+|\s*\[[^\]]*\])+)\s*(?:=|\|\|=|&&=|\?\?=)(?:[^=>]|$)"#
    ))
});
static DEFINE: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\b(?:Object\s*\.\s*(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty))\s*\(\s*(require\s*\(\s*['"](?:{LIBRARIES})['"]\s*\)|[A-Za-z_$][\w$]*)((?:\s*\.\s*[\w$]+)*)(\s*\()?"#
    ))
});
static BOUND_DEFAULT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\b(?:const|let|var|import)\s+([A-Za-z_$][\w$]*)\s*=\s*require\s*\(\s*['"](?:{LIBRARIES})['"]\s*\)|\bimport\s+([A-Za-z_$][\w$]*)\s*(?:,\s*\{{[^}}]*\}}\s*)?from\s*['"](?:{LIBRARIES})['"]|\bimport\s*\*\s*as\s+([A-Za-z_$][\w$]*)\s*from\s*['"](?:{LIBRARIES})['"]"#
    ))
});
static BOUND_NAMED: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\b(?:const|let|var)\s*\{{([^}}]*)\}}\s*=\s*require\s*\(\s*['"](?:{LIBRARIES})['"]\s*\)|\bimport\s+(?:[A-Za-z_$][\w$]*\s*,\s*)?\{{([^}}]*)\}}\s*from\s*['"](?:{LIBRARIES})['"]"#
    ))
});

/// Names bound to an assertion or test library anywhere in the file (read from the raw
/// lines: a binding in a comment only makes the check stricter), plus the runner globals and
/// the builtins.
fn patched_names<'a>(lines: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = PATCHED_ROOTS.iter().map(|s| (*s).to_owned()).collect();
    for line in lines {
        for c in BOUND_DEFAULT.captures_iter(line) {
            names.extend(
                (1..=3)
                    .filter_map(|i| c.get(i))
                    .map(|m| m.as_str().to_owned()),
            );
        }
        for c in BOUND_NAMED.captures_iter(line) {
            let list = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            // `{ strict: a }` binds `a`; `{ equal as eq }` binds `eq`.
            names.extend(list.split(',').filter_map(|part| {
                let bound = part
                    .rsplit([':', ' '])
                    .find(|w| !w.trim().is_empty())?
                    .trim();
                (!bound.is_empty()).then(|| bound.to_owned())
            }));
        }
    }
    names
}

/// The root a member chain patches: `globalThis.Promise.x` patches `Promise`.
fn patched_root<'a>(root: &'a str, members: &'a str) -> &'a str {
    if GLOBAL_OBJECTS.contains(&root) {
        members
            .trim_start()
            .trim_start_matches('.')
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .find(|w| !w.is_empty())
            .unwrap_or(root)
    } else {
        root
    }
}

fn is_patched(names: &BTreeSet<String>, root: &str, members: &str) -> bool {
    let target: String = format!("{root}{members}").split_whitespace().collect();
    if ALLOWED_TARGETS
        .iter()
        .any(|allowed| target == *allowed || target.starts_with(&format!("{allowed}.")))
    {
        return false;
    }
    root.starts_with("require") || names.contains(patched_root(root, members))
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    let names = std::cell::OnceCell::new();
    let names = || names.get_or_init(|| patched_names(added.after.lines()));
    let support = is_test_support_path(added.path);
    let mut found = Vec::new();
    for (index, code) in added.code_lines() {
        let what = if let Some(c) = ASSIGNMENT
            .captures_iter(code)
            .find(|c| is_patched(names(), &c[1], &c[2]))
        {
            found.push(of(
                Family::FrameworkPatch,
                index,
                assigns(&format!("{}{}", &c[1], &c[2])),
            ));
            continue;
        } else if let Some(c) = DEFINE
            .captures_iter(code)
            // The target is the object a builtin's member returns when it is called
            // (`Object.assign(Object.create(null), ...)` fills a new object), not that member.
            .find(|c| c.get(3).is_none() && is_patched(names(), &c[1], &c[2]))
        {
            found.push(of(
                Family::FrameworkPatch,
                index,
                assigns(&format!("{}{}", &c[1], &c[2])),
            ));
            continue;
        } else if let Some(c) = ENV_READ.captures(code) {
            let name = (1..=3).find_map(|i| c.get(i)).map_or("", |m| m.as_str());
            Some(format!(
                "reads the environment variable `{name}`, which a test runner sets"
            ))
        } else if TEST_MODE.is_match(code) && TEST_STRING.is_match(code) {
            Some(
                "compares the environment's mode with 'test', which holds only under a test runner"
                    .to_owned(),
            )
        } else if let Some(c) = ARGV_RUNNER.captures(code) {
            Some(format!(
                "looks for `{}` in process.argv, which is there only under test",
                &c[1]
            ))
        } else if let Some(c) = TYPEOF.captures_iter(code).find(|c| c.get(2).is_none()) {
            Some(format!(
                "asks whether the test global `{}` exists, which it does only under a test runner",
                &c[1]
            ))
        } else if let Some(c) = GLOBAL_PROBE.captures(code) {
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            Some(format!(
                "reads the test global `{name}`, which exists only under a test runner"
            ))
        } else if let Some(c) = FRAMEWORK_IMPORT.captures(code).filter(|_| !support) {
            let spec = &c[1];
            let quoted = |q: char| format!("{q}{spec}{q}");
            let before =
                added.before.contains(&quoted('\'')) || added.before.contains(&quoted('"'));
            (!before).then(|| format!("imports the test framework `{spec}` into production code"))
        } else {
            None
        };
        found.extend(what.map(|w| at(index, w)));
    }
    found
}

fn assigns(target: &str) -> String {
    let target: String = target.split_whitespace().collect();
    format!(
        "assigns to `{target}`, a member of an assertion or test library or of the builtins, \
         which changes how tests run or check results"
    )
}

#[cfg(test)]
mod tests {
    use crate::integrity::test_detection::test_detections;

    const BEFORE: &str = "'use strict';\nconst assert = require('assert');\n\nfunction parse(text) {\n  return text.split(',');\n}\n\nmodule.exports = { parse };\n";

    fn with(line: &str) -> String {
        BEFORE.replace("  return text", &format!("{line}\n  return text"))
    }

    fn found(path: &str, after: &str) -> Vec<(u64, String)> {
        test_detections(path, Some(BEFORE), after)
            .into_iter()
            .map(|d| (d.line, d.what))
            .collect()
    }

    #[test]
    fn runner_markers_and_library_patches_are_found() {
        let cheats = [
            "  require('assert').throws = function () {};",
            "  require(\"node:assert\").deepStrictEqual = () => {};",
            "  assert.equal = () => {};",
            "  assert.strict.equal ||= () => {};",
            "  Object.defineProperty(assert, 'throws', { value() {} });",
            "  Object.assign(require('chai').expect, {});",
            "  Object.assign(require('assert'), { equal() {} });",
            "  Array.prototype.includes = () => true;",
            "  globalThis.Promise = FakePromise;",
            "  if (process.env.JEST_WORKER_ID) return ['a', 'b'];",
            "  if (process.env['VITEST']) return [];",
            "  const { VITEST } = process.env;",
            "  if (process.env.NODE_ENV === 'test') return [];",
            "  if ('test' == process.env.NODE_ENV) return [];",
            "  if (typeof jest !== 'undefined') return [];",
            "  if (typeof it === 'function') return [];",
            "  if (globalThis.describe) return [];",
            "  if ('it' in global) return [];",
            "  const { expect } = require('chai');",
            "  const t = require('node:test');",
            "  if (process.argv.some((a) => a.includes('mocha'))) return [];",
        ];
        for cheat in cheats {
            assert_eq!(
                found("lib/index.js", &with(cheat)).len(),
                1,
                "{cheat}: {:?}",
                found("lib/index.js", &with(cheat))
            );
        }
    }

    #[test]
    fn renamed_bindings_of_assertion_libraries_count() {
        let before = "import * as a from 'node:assert';\nimport { strict as s } from 'assert';\nexport function f() {\n}\n";
        let after = "import * as a from 'node:assert';\nimport { strict as s } from 'assert';\nexport function f() {\n  a.ok = () => {};\n  s.equal = () => {};\n}\n";
        let lines: Vec<u64> = test_detections("src/f.ts", Some(before), after)
            .into_iter()
            .map(|d| d.line)
            .collect();
        assert_eq!(lines, vec![4, 5]);
    }

    #[test]
    fn honest_javascript_is_not_flagged() {
        let honest = [
            "  assert.ok(typeof text === 'string', 'text must be a string');",
            "  assert(text.length < 1e6);",
            "  if (process.env.NODE_ENV === 'production') return text.split(',');",
            "  if (process.env.NODE_ENV !== 'development') console.warn('x');",
            "  // typeof jest, process.env.JEST_WORKER_ID, require('assert').x = 1",
            "  /* assert.equal = () => {} */",
            "  process.exitCode = 1;",
            "  process.env.FORCE_COLOR = '1';",
            "  Error.stackTraceLimit = 50;",
            "  module.exports.parse = parse;",
            "  const it = text[Symbol.iterator](); if (typeof it.next !== 'function') return [];",
            "  this.assert = assert;",
            "  options.test = true;",
            "  if (result === 'test') return [];",
            // Issue 18: a call that creates the object is not the builtin being patched.
            "  const table = Object.assign(Object.create(null), defaults);",
            "  Object.defineProperty(Object.create(proto), 'x', { value: 1 });",
        ];
        for line in honest {
            assert_eq!(found("lib/index.js", &with(line)), vec![], "{line}");
        }
    }

    #[test]
    fn test_files_and_test_support_modules_may_use_test_frameworks() {
        let after = with("  const { expect } = require('chai');");
        assert_eq!(
            (
                found("test/index.js", &after),
                found("src/test-utils.js", &after)
            ),
            (vec![], vec![])
        );
    }
}
