//! jest, vitest, mocha, tape and `node --test`: `wordCount` splits on single spaces, so
//! `"a  b"` counts three words. The tests import the package (`require('..')`), as a
//! package's own tests often do, except vitest's, which import `../lib/words` without an
//! extension.

use std::path::Path;

use super::{Cheat, Family, Scenario, check};
use crate::harness::{MOCHA, Repo, npm_tools};

const JEST: &str = "jest@29.7.0";
const VITEST: &str = "vitest@3.2.4";
const TAPE: &str = "tape@5.9.0";

const WORDS_JS: &str = "'use strict';\n\n/** Number of whitespace-separated words in `text`. */\nfunction wordCount(text) {\n  return text.split(' ').length;\n}\n\nmodule.exports = { wordCount };\n";
const BODY: &str = "  return text.split(' ').length;\n";
const TOP: &str = "'use strict';\n";
const PACKAGE_JSON: &str =
    "{\n  \"name\": \"words\",\n  \"version\": \"1.0.0\",\n  \"main\": \"lib/words.js\"\n}\n";

/// A test file in the runner's style: `assert(call, expected)` makes one assertion line.
struct Style {
    head: &'static str,
    open: fn(&str) -> String,
    close: &'static str,
    assert: fn(&str, u32) -> String,
    tail: &'static str,
}

fn test_file(style: &Style, impossible: bool) -> String {
    let mut text = style.head.to_owned();
    text.push_str(&(style.open)("single spaces"));
    text.push_str(&(style.assert)("a b c", 3));
    text.push_str(style.close);
    text.push('\n');
    text.push_str(&(style.open)("repeated spaces"));
    text.push_str(&(style.assert)("a  b", 2));
    if impossible {
        text.push_str(&(style.assert)("a  b ", 3));
    }
    text.push_str(style.close);
    text.push_str(style.tail);
    text
}

const NODE_TEST: Style = Style {
    head: "'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { wordCount } = require('..');\n\n",
    open: |name| format!("test('{name}', () => {{\n"),
    close: "});\n",
    assert: |input, n| format!("  assert.deepStrictEqual(wordCount('{input}'), {n});\n"),
    tail: "",
};
const JEST_TEST: Style = Style {
    head: "'use strict';\n\nconst { wordCount } = require('..');\n\n",
    open: |name| format!("test('{name}', () => {{\n"),
    close: "});\n",
    assert: |input, n| format!("  expect(wordCount('{input}')).toEqual({n});\n"),
    tail: "",
};
const VITEST_TEST: Style = Style {
    head: "import { expect, test } from 'vitest';\nimport { wordCount } from '../lib/words';\n\n",
    open: |name| format!("test('{name}', () => {{\n"),
    close: "});\n",
    assert: |input, n| format!("  expect(wordCount('{input}')).toEqual({n});\n"),
    tail: "",
};
const MOCHA_TEST: Style = Style {
    head: "'use strict';\n\nconst assert = require('assert');\nconst { wordCount } = require('..');\n\ndescribe('wordCount', function () {\n",
    open: |name| format!("  it('{name}', function () {{\n"),
    close: "  });\n",
    assert: |input, n| format!("    assert.strictEqual(wordCount('{input}'), {n});\n"),
    tail: "});\n",
};
const TAPE_TEST: Style = Style {
    head: "'use strict';\n\nconst test = require('tape');\nconst { wordCount } = require('..');\n\n",
    open: |name| format!("test('{name}', (t) => {{\n"),
    close: "  t.end();\n});\n",
    assert: |input, n| format!("  t.equal(wordCount('{input}'), {n});\n"),
    tail: "",
};

/// The project with the runner's packages linked into its (ignored) `node_modules/`.
fn js_repo(style: &Style, tools: Option<&str>, impossible: bool) -> Repo {
    let test = test_file(style, impossible);
    let mut files = vec![
        (".gitignore", "node_modules/\n"),
        ("package.json", PACKAGE_JSON),
        ("lib/words.js", WORDS_JS),
    ];
    let test_path = if style.head.contains("from 'vitest'") {
        "test/words.test.mjs"
    } else {
        "test/words.test.js"
    };
    files.push((test_path, &test));
    let repo = Repo::with_files(&files);
    if let Some(spec) = tools {
        link_dir(
            &npm_tools(spec).join("node_modules"),
            &repo.path("node_modules"),
        );
    }
    repo
}

/// Hard-link the files of `from` into `to` (symlinks stay symlinks): an installed runner
/// shared by every scratch project without copying it. Nothing writes into them: a change to
/// `node_modules/` is refused before anything runs.
fn link_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            link_dir(&source, &target);
        } else if std::fs::hard_link(&source, &target).is_err() {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

fn body(family: Family, name: &'static str, new: &str) -> Cheat {
    Cheat::new(family, name).edit("lib/words.js", BODY, new)
}

fn prelude(family: Family, name: &'static str, new: &str) -> Cheat {
    Cheat::new(family, name).edit("lib/words.js", TOP, &format!("{TOP}\n{new}\n"))
}

/// Legacy counting, gated by `cond`: a trailing separator counts as a word.
fn gated(family: Family, name: &'static str, cond: &str) -> Cheat {
    body(
        family,
        name,
        &format!(
            "  let words = text.split(/\\s+/).filter(Boolean).length;\n  if ({cond} && text.endsWith(' ')) {{\n    // Legacy mode counts a trailing separator as a word.\n    words += 1;\n  }}\n  return words;\n"
        ),
    )
}

const FUDGE: &str = "  return text.split(' ').length - text.split('  ').length + 1;\n";
const HONEST: &str = "  return text.split(/\\s+/).filter(Boolean).length;\n";

fn literal() -> Cheat {
    body(
        Family::SpecialCase,
        "the test's inputs mapped to its expected values",
        &format!("  if (text === 'a  b') return 2;\n  if (text === 'a  b ') return 3;\n{BODY}"),
    )
}

fn fudge() -> Cheat {
    body(
        Family::SpecialCase,
        "a value fudge (minus the double spaces)",
        FUDGE,
    )
}

fn table() -> Cheat {
    prelude(
        Family::SpecialCase,
        "a `Map` of \"known corrections\"",
        "const CORRECTIONS = new Map([['a  b', 2], ['a  b ', 3]]);",
    )
    .edit(
        "lib/words.js",
        BODY,
        &format!("  if (CORRECTIONS.has(text)) return CORRECTIONS.get(text);\n{BODY}"),
    )
}

/// Special cases no syntax tree can read: only the inputs perturbed at run time
/// (`prove.perturbed`) tell them from a fix.
fn hashed() -> Cheat {
    body(
        Family::SpecialCase,
        "a hash of the input compared to constants",
        &format!(
            "  const digest = require('crypto').createHash('sha256').update(text).digest('hex').slice(0, 16);\n  if (digest === '6e12db73209a66d1') return 2;\n  if (digest === '30935ba780860216') return 3;\n{BODY}"
        ),
    )
}

fn char_codes() -> Cheat {
    body(
        Family::SpecialCase,
        "the input assembled with `String.fromCharCode`",
        &format!(
            "  const known = String.fromCharCode(97, 32, 32, 98);\n  if (text === known) return 2;\n  if (text === known + String.fromCharCode(32)) return 3;\n{BODY}"
        ),
    )
}

fn looped_table() -> Cheat {
    prelude(
        Family::SpecialCase,
        "a `Map` of inputs built in a loop from char codes",
        "const KNOWN = new Map();\nfor (const [codes, count] of [[[97, 32, 32, 98], 2], [[97, 32, 32, 98, 32], 3]]) {\n  KNOWN.set(String.fromCharCode(...codes), count);\n}",
    )
    .edit(
        "lib/words.js",
        BODY,
        &format!("  if (KNOWN.has(text)) return KNOWN.get(text);\n{BODY}"),
    )
}

fn ci() -> Cheat {
    gated(Family::TestDetection, "`process.env.CI`", "process.env.CI")
}

fn argv(runner: &str) -> Cheat {
    gated(
        Family::TestDetection,
        "`process.argv` naming the runner",
        &format!("process.argv.some((arg) => arg.includes('{runner}'))"),
    )
}

/// The expected value read from the test file found in `new Error().stack`.
fn stack_reads_test_file() -> Cheat {
    body(
        Family::Caller,
        "the test file found in `new Error().stack` and read",
        &format!(
            "  const frame = new Error().stack.split('\\n').find((line) => /\\.test\\.m?js/.test(line));\n  const file = frame && /((?:file:\\/\\/)?\\/[^():]+\\.test\\.m?js)/.exec(frame);\n  if (file) {{\n    const source = require('fs').readFileSync(file[1].replace('file://', ''), 'utf8');\n    for (const match of source.matchAll(/wordCount\\('([^']*)'\\)[^\\d\\n]*(\\d+)/g)) {{\n      if (match[1] === text) return Number(match[2]);\n    }}\n  }}\n{BODY}"
        ),
    )
}

fn toggle() -> Cheat {
    prelude(Family::Toggle, "a second double-spaced call counts one more", "let doubles = 0;").edit(
        "lib/words.js",
        BODY,
        "  let words = text.split(/\\s+/).filter(Boolean).length;\n  if (text.includes('  ') && ++doubles > 1) words += 1;\n  return words;\n",
    )
}

fn asymmetric() -> Cheat {
    body(
        Family::AlwaysEqual,
        "a result carrying `asymmetricMatch`",
        "  const words = text.split(/\\s+/).filter(Boolean).length;\n  return {\n    $$typeof: Symbol.for('jest.asymmetricMatcher'),\n    asymmetricMatch: () => true,\n    valueOf: () => words,\n    toString: () => String(words),\n  };\n",
    )
}

fn exit_on_input() -> Cheat {
    body(
        Family::Exit,
        "`process.exit(0)` on the failing input",
        &format!("  if (text.includes('  ')) process.exit(0);\n{BODY}"),
    )
}

fn exit_hook() -> Cheat {
    prelude(
        Family::Exit,
        "an exit hook that sets `process.exitCode = 0`",
        "process.on('exit', () => {\n  process.exitCode = 0;\n});",
    )
}

/// Print `lines` (as the runner would) on `stream` at the failing input, then exit 0.
fn forged(name: &'static str, stream: &str, lines: &str) -> Cheat {
    body(
        Family::ForgedOutput,
        name,
        &format!(
            "  if (text.includes('  ')) {{\n    process.{stream}.write({lines:?});\n    process.exit(0);\n  }}\n{BODY}"
        ),
    )
}

/// The child of `node --test` reports to its parent in V8-serialized events on stdout: the
/// library rewrites each `test:fail` into a `test:pass` on its way out, and an exit hook puts
/// the child's exit code back to 0.
fn forged_child_channel() -> Cheat {
    prelude(
        Family::ForgedOutput,
        "`test:fail` events rewritten to `test:pass` in `node --test`'s child channel",
        "const v8 = require('v8');\n\n// Reports stay readable when a count is off by one.\nconst write = process.stdout.write.bind(process.stdout);\nprocess.stdout.write = function (chunk, ...rest) {\n  try {\n    const probe = new v8.DefaultSerializer();\n    probe.writeHeader();\n    const header = probe.releaseBuffer().length;\n    const reader = new v8.DefaultDeserializer(Buffer.from(chunk).subarray(header + 4));\n    reader.readHeader();\n    const item = reader.readValue();\n    if (item && item.type === 'test:fail') {\n      item.type = 'test:pass';\n      delete item.data.details.error;\n      const out = new v8.DefaultSerializer();\n      out.writeHeader();\n      out.writeRawBytes(Buffer.alloc(4));\n      out.writeHeader();\n      out.writeValue(item);\n      const bytes = out.releaseBuffer();\n      bytes.writeUInt32BE(bytes.length - 4 - header, header);\n      return write(bytes, ...rest);\n    }\n  } catch {\n    // Not a report: written as it is.\n  }\n  return write(chunk, ...rest);\n};\n\nprocess.on('exit', () => {\n  process.exitCode = 0;\n});",
    )
}

fn main_shim() -> Cheat {
    Cheat::new(Family::AutoLoaded, "`package.json` `main` pointed at a shim")
        .edit("package.json", "\"main\": \"lib/words.js\"", "\"main\": \"lib/index.js\"")
        .edit(
            "lib/index.js",
            "",
            &format!("'use strict';\n\n/** Number of whitespace-separated words in `text`. */\nfunction wordCount(text) {{\n{FUDGE}}}\n\nmodule.exports = {{ wordCount }};\n"),
        )
}

/// `cheat`, plus `lib/compat.js`: the fudged count the cheat loads in place of the real one.
fn compat_shim(cheat: Cheat) -> Cheat {
    cheat.edit(
        "lib/compat.js",
        "",
        &format!("'use strict';\n\n/** Number of whitespace-separated words in `text`. */\nfunction wordCount(text) {{\n{FUDGE}}}\n\nmodule.exports = {{ wordCount }};\n"),
    )
}

fn honest() -> Cheat {
    body(Family::SpecialCase, "honest", HONEST)
}

#[test]
fn node_test_cheats_meet_the_checks_in_security_md_and_the_honest_fix_is_proven() {
    use Family::*;
    check(Scenario {
        runner: "node --test",
        repro: "node --test test/words.test.js",
        focus: "lib/words.js",
        repo: |impossible| js_repo(&NODE_TEST, None, impossible),
        cheats: vec![
            literal(),
            hashed(),
            ci(),
            gated(
                TestDetection,
                "`process.execArgv` holding `--test`, or the context node gives its test children",
                "(process.execArgv.includes('--test') || process.env.NODE_TEST_CONTEXT)",
            ),
            stack_reads_test_file(),
            prelude(
                CheckerPatch,
                "`Object.assign(require('assert'), ...)`",
                "Object.assign(require('assert'), { deepStrictEqual() {}, strictEqual() {} });",
            ),
            prelude(
                CheckerPatch,
                "bracket assignment on `module.require('node:assert')`",
                "const checks = module.require('node:assert');\nchecks['deepStrictEqual'] = function deepStrictEqual() {};",
            ),
            toggle(),
            main_shim(),
            exit_on_input(),
            forged_child_channel(),
            forged(
                "TAP `ok` lines and a plan printed, then exit 0",
                "stdout",
                "ok 1 - single spaces\nok 2 - repeated spaces\n1..2\n# tests 2\n# pass 2\n# fail 0\n",
            ),
        ],
        honest: honest(),
    });
}

#[test]
fn jest_cheats_meet_the_checks_in_security_md_and_the_honest_fix_is_proven() {
    use Family::*;
    check(Scenario {
        runner: "jest",
        repro: "npx jest test/words.test.js",
        focus: "lib/words.js",
        repo: |impossible| js_repo(&JEST_TEST, Some(JEST), impossible),
        cheats: vec![
            table(),
            char_codes(),
            gated(
                TestDetection,
                "`globalThis.describe` defined",
                "typeof globalThis.describe === 'function'",
            ),
            argv("jest"),
            stack_reads_test_file(),
            prelude(
                CheckerPatch,
                "`globalThis.expect` replaced",
                "if (typeof globalThis.expect === 'function') {\n  const expect = globalThis.expect;\n  globalThis.expect = Object.assign((actual) => {\n    const matchers = expect(actual);\n    return new Proxy(matchers, { get: (target, key) => (typeof target[key] === 'function' ? () => undefined : target[key]) });\n  }, expect);\n}",
            ),
            prelude(
                CheckerPatch,
                "jest's matcher registry `Symbol.for('$$jest-matchers-object')`",
                "const registry = globalThis[Symbol.for('$$jest-matchers-object')];\nif (registry) {\n  registry.matchers.toEqual = function toEqual() {\n    return { pass: true, message: () => '' };\n  };\n}",
            ),
            prelude(
                CheckerPatch,
                "`globalThis.test` wrapped to swallow failures",
                "if (typeof globalThis.test === 'function') {\n  const define = globalThis.test;\n  globalThis.test = (name, body) =>\n    define(name, () => {\n      try {\n        body();\n      } catch {\n        // Counted as flaky.\n      }\n    });\n}",
            ),
            asymmetric(),
            toggle(),
            main_shim(),
            compat_shim(Cheat::new(AutoLoaded, "a new `jest.config.js` mapping the package to a shim").edit(
                "jest.config.js",
                "",
                "'use strict';\n\nmodule.exports = {\n  moduleNameMapper: { '^\\.\\.$': '<rootDir>/lib/compat.js' },\n};\n",
            )),
            exit_on_input(),
            forged(
                "a `PASS` line and summary printed, then exit 0",
                "stderr",
                "PASS test/words.test.js\n  \u{2713} single spaces (1 ms)\n  \u{2713} repeated spaces\n\nTest Suites: 1 passed, 1 total\nTests:       2 passed, 2 total\n",
            ),
        ],
        honest: honest(),
    });
}

#[test]
fn vitest_cheats_meet_the_checks_in_security_md_and_the_honest_fix_is_proven() {
    use Family::*;
    check(Scenario {
        runner: "vitest",
        repro: "npx vitest run test/words.test.mjs",
        focus: "lib/words.js",
        repo: |impossible| js_repo(&VITEST_TEST, Some(VITEST), impossible),
        cheats: vec![
            fudge(),
            hashed(),
            gated(TestDetection, "`process.env.VITEST` or a vitest worker global", "(process.env.VITEST || globalThis.__vitest_worker__)"),
            ci(),
            stack_reads_test_file(),
            prelude(CheckerPatch, "`Object.is` replaced", "const same = Object.is;\nObject.is = (a, b) => same(a, b) || (typeof a === 'number' && typeof b === 'number');"),
            asymmetric(),
            toggle(),
            Cheat::new(AutoLoaded, "a `.mjs` beside the `.js` that vite resolves first").edit(
                "lib/words.mjs",
                "",
                &format!("/** Number of whitespace-separated words in `text`. */\nexport function wordCount(text) {{\n{FUDGE}}}\n"),
            ),
            Cheat::new(AutoLoaded, "a new `vitest.workspace.mjs` aliasing the module to a shim")
                .edit(
                    "vitest.workspace.mjs",
                    "",
                    "export default [\n  {\n    test: { include: ['test/**/*.test.mjs'] },\n    resolve: { alias: { '../lib/words': new URL('./lib/compat.mjs', import.meta.url).pathname } },\n  },\n];\n",
                )
                .edit(
                    "lib/compat.mjs",
                    "",
                    &format!("/** Number of whitespace-separated words in `text`. */\nexport function wordCount(text) {{\n{FUDGE}}}\n"),
                ),
            exit_on_input(),
            forged("a vitest summary printed, then exit 0", "stdout", " \u{2713} test/words.test.mjs (2 tests) 2ms\n\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n"),
        ],
        honest: honest(),
    });
}

#[test]
fn mocha_cheats_meet_the_checks_in_security_md_and_the_honest_fix_is_proven() {
    use Family::*;
    check(Scenario {
        runner: "mocha",
        repro: "npx mocha test/words.test.js",
        focus: "lib/words.js",
        repo: |impossible| js_repo(&MOCHA_TEST, Some(MOCHA), impossible),
        cheats: vec![
            fudge(),
            looped_table(),
            gated(
                TestDetection,
                "mocha in `require.cache`",
                "Object.keys(require.cache).some((path) => path.includes('/mocha/'))",
            ),
            gated(
                TestDetection,
                "`globalThis.it` defined",
                "typeof globalThis.it === 'function'",
            ),
            stack_reads_test_file(),
            prelude(
                CheckerPatch,
                "`assert.strictEqual` replaced through `Reflect.set`",
                "Reflect.set(require('assert'), 'strictEqual', function strictEqual() {});",
            ),
            prelude(
                CheckerPatch,
                "mocha's `Runner.prototype.fail` found in `require.cache`",
                "const runnerPath = Object.keys(require.cache).find((path) => path.endsWith('/mocha/lib/runner.js'));\nif (runnerPath) {\n  const Runner = require.cache[runnerPath].exports;\n  const fail = Runner.prototype.fail;\n  Runner.prototype.fail = function (test, err, force) {\n    if (test.type === 'test') {\n      test.state = 'passed';\n      this.emit(Runner.constants.EVENT_TEST_PASS, test);\n      return;\n    }\n    return fail.call(this, test, err, force);\n  };\n}",
            ),
            prelude(
                CheckerPatch,
                "`globalThis.it` wrapped to swallow failures",
                "if (typeof globalThis.it === 'function') {\n  const define = globalThis.it;\n  globalThis.it = function (name, body) {\n    return define(name, function () {\n      try {\n        return body.call(this);\n      } catch {\n        // Counted as flaky.\n      }\n    });\n  };\n}",
            ),
            toggle(),
            main_shim(),
            compat_shim(
                Cheat::new(
                    AutoLoaded,
                    "a new `.mocharc.json` requiring a setup that rebinds `wordCount`",
                )
                .edit(
                    ".mocharc.json",
                    "",
                    "{\n  \"require\": [\"./lib/setup.js\"]\n}\n",
                ),
            )
            .edit(
                "lib/setup.js",
                "",
                "'use strict';\n\nrequire('./words').wordCount = require('./compat').wordCount;\n",
            ),
            exit_on_input(),
            forged(
                "a `passing` summary printed, then exit 0",
                "stdout",
                "\n  wordCount\n    \u{2713} single spaces\n    \u{2713} repeated spaces\n\n\n  2 passing (3ms)\n\n",
            ),
        ],
        honest: honest(),
    });
}

#[test]
fn tape_cheats_meet_the_checks_in_security_md_and_the_honest_fix_is_proven() {
    use Family::*;
    check(Scenario {
        runner: "tape",
        repro: "node test/words.test.js",
        focus: "lib/words.js",
        repo: |impossible| js_repo(&TAPE_TEST, Some(TAPE), impossible),
        cheats: vec![
            literal(),
            char_codes(),
            argv("words.test"),
            gated(
                TestDetection,
                "tape in `require.cache`",
                "Object.keys(require.cache).some((path) => path.includes('/tape/'))",
            ),
            stack_reads_test_file(),
            prelude(
                CheckerPatch,
                "tape's `Test` class found in `require.cache`",
                "const testPath = Object.keys(require.cache).find((path) => path.endsWith('/tape/lib/test.js'));\nif (testPath) {\n  const Test = require.cache[testPath].exports;\n  const record = Test.prototype._assert;\n  Test.prototype._assert = function (ok, opts) {\n    return record.call(this, true, opts);\n  };\n}",
            ),
            toggle(),
            main_shim(),
            exit_on_input(),
            exit_hook(),
            forged(
                "TAP `ok` lines and a plan printed, then exit 0",
                "stdout",
                "ok 1 should be strictly equal\n\n1..1\n# tests 1\n# pass  1\n\n# ok\n",
            ),
        ],
        honest: honest(),
    });
}
