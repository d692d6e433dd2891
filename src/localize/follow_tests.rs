//! Localization that follows the code: failing test names mapped to their files for every
//! runner, failures at the call site followed through imports and re-exports, the cost of
//! a failure the imports explain, and robustness against mixed-up sources.

use super::tests::{render, tree, tree_of};
use super::*;

#[test]
fn failing_test_names_map_to_their_files_for_every_runner() {
    let (dir, tracked) = tree(&[
        (
            "tests/test_calc.py",
            "import pytest\n\nclass TestDivide:\n    @pytest.mark.parametrize('n', [1, 2])\n    def test_by_zero(self, n):\n        pass\n",
        ),
        (
            "stats/tests/test_central.py",
            "import unittest\n\nclass MedianTest(unittest.TestCase):\n    def test_odd(self):\n        pass\n",
        ),
        ("src/math.test.js", "test('adds', () => {});\n"),
        (
            "test/parse.js",
            "describe('parse()', function () {\n    it('decodes plus signs as spaces', function () {});\n});\n",
        ),
        (
            "test/index.js",
            "var test = require('tape');\n\ntest('pads with a multi-character fill', function (t) {\n  t.end();\n});\n",
        ),
        (
            "src/parser.rs",
            "pub fn parse() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn crlf() {}\n}\n",
        ),
        ("tests/cli.rs", "#[test]\nfn crlf() {}\n"),
        (
            "strutil/reverse_test.go",
            "package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {}\n",
        ),
    ]);
    let tree = super::tree::Tree::new(dir.path(), &tracked, &[]);
    let names = [
        "tests/test_calc.py::TestDivide::test_by_zero[2]",
        "test_odd (stats.tests.test_central.MedianTest.test_odd)",
        "src/math.test.js",
        "parse() > decodes plus signs as spaces",
        "parse() decodes plus signs as spaces",
        "pads with a multi-character fill #3",
        "parser::tests::crlf",
        "TestReverse/unicode",
    ];
    let rendered: Vec<String> = names
        .iter()
        .map(|name| {
            let hits = super::search::failing_test_hits(&tree, &[(*name).to_owned()], &[]);
            let places: Vec<String> = hits
                .iter()
                .map(|hit| format!("{}:{}", hit.path, hit.line.unwrap_or(0)))
                .collect();
            format!("{name} -> {}", places.join(", "))
        })
        .collect();
    assert_eq!(
        rendered,
        [
            "tests/test_calc.py::TestDivide::test_by_zero[2] -> tests/test_calc.py:5",
            "test_odd (stats.tests.test_central.MedianTest.test_odd) -> stats/tests/test_central.py:4",
            "src/math.test.js -> src/math.test.js:0",
            "parse() > decodes plus signs as spaces -> test/parse.js:2",
            "parse() decodes plus signs as spaces -> test/parse.js:2",
            "pads with a multi-character fill #3 -> test/index.js:3",
            "parser::tests::crlf -> src/parser.rs:6, tests/cli.rs:2",
            "TestReverse/unicode -> strutil/reverse_test.go:5",
        ]
    );
}

#[test]
fn a_failure_at_the_call_site_is_followed_to_the_definition_through_a_reexport() {
    let (dir, tracked) = tree(&[
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
        ),
        ("src/tempo/__init__.py", "from .duration import Duration\n"),
        (
            "src/tempo/duration.py",
            "class Duration:\n    @classmethod\n    def from_parts(cls, hours=0):\n        return cls()\n",
        ),
        ("src/tempo/other.py", "def from_parts():\n    pass\n"),
        (
            "tests/test_duration.py",
            "from tempo import Duration\n\n\ndef test_seconds():\n    Duration.from_parts(seconds=5)\n",
        ),
    ]);
    let output = "\
    def test_seconds():
>       Duration.from_parts(seconds=5)
E       TypeError: Duration.from_parts() got an unexpected keyword argument 'seconds'

tests/test_duration.py:5: TypeError
";
    let candidates = localize(
        dir.path(),
        &tracked,
        output,
        &["tests/test_duration.py::test_seconds".to_owned()],
    );
    insta::assert_snapshot!(render(&candidates), @r"
    tests/test_duration.py score=84 lines=[4, 5]
      - deepest application frame of a pytest-failure stack at tests/test_duration.py:5 (+75)
      - holds failing test tests/test_duration.py::test_seconds (line 4) (+45)
    src/tempo/duration.py score=74.4 lines=[1, 3]
      - defines function `from_parts` at line 3, which failing test file tests/test_duration.py calls as `Duration.from_parts` at line 5 through `Duration` (`from tempo import Duration`) (+50)
      - defines type `Duration` at line 1, named by the error `E       TypeError: Duration.from_parts() got an unexpected keyword argument 'seconds'` (imported: `from tempo import Duration`) (+45)
      - defines function `from_parts` at line 3, named by the error `E       TypeError: Duration.from_parts() got an unexpected keyword argument 'seconds'` (reached from the imports of tests/test_duration.py) (+40)
      - its name `duration` is a word of the failing test in tests/test_duration.py, whose imports reach it (+20)
      - imported by src/tempo/__init__.py, which failing test file tests/test_duration.py reaches through its imports (+16.8)
    src/tempo/__init__.py score=33.6 lines=[]
      - imported by failing test file tests/test_duration.py at line 1 (`from tempo import Duration`) (+33.6)
    ");
}

#[test]
fn a_javascript_package_tested_through_require_parent_reaches_the_module_behind_its_main() {
    let (dir, tracked) = tree(&[
        (
            "package.json",
            "{\"name\": \"qs-lite\", \"main\": \"lib/index.js\"}\n",
        ),
        (
            "lib/index.js",
            "var parse = require('./parse');\nmodule.exports = { parse: parse };\n",
        ),
        (
            "lib/parse.js",
            "module.exports = function parse(str) {\n    return {};\n};\n",
        ),
        ("benchmark/parse.js", "function parse() {}\n"),
        (
            "test/parse.js",
            "var assert = require('assert');\nvar qs = require('..');\n\nit('decodes', function () {\n    assert.deepStrictEqual(qs.parse('a=b+c'), { a: 'b c' });\n});\n",
        ),
    ]);
    let root = dir.path().display();
    let output = format!(
        "  1) decodes:\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n      at Context.<anonymous> ({root}/test/parse.js:5:16)\n"
    );
    let candidates = localize(dir.path(), &tracked, &output, &["decodes".to_owned()]);
    insta::assert_snapshot!(render(&candidates), @r#"
    test/parse.js score=94 lines=[4, 5]
      - deepest application frame of a js-stack stack at test/parse.js:5:16 (+85)
      - defines failing test "decodes" at line 4 (+45)
    lib/parse.js score=57.8 lines=[1]
      - defines function `parse` at line 1, which failing test file test/parse.js calls as `qs.parse` at line 5 through `qs` (`var qs = require('..')`) (+50)
      - its name `parse` is a word of the failing test in test/parse.js, whose imports reach it (+20)
      - imported by lib/index.js, which failing test file test/parse.js reaches through its imports (+18.8)
    lib/index.js score=37.6 lines=[]
      - imported by failing test file test/parse.js at line 2 (`var qs = require('..')`) (+37.6)
    "#);
}

/// The bug sits in a helper the package entry imports; the test calls only the entry's
/// function: the helper is a candidate, below the files the failure names, with how it is
/// reached. A file nothing imports stays out.
#[test]
fn a_helper_behind_the_package_entry_is_a_candidate_reached_through_imports() {
    let (dir, tracked) = tree(&[
        ("package.json", "{\"name\": \"mime-lite\"}\n"),
        (
            "index.js",
            "var score = require('./score');\nexports.lookup = function lookup(ext) {\n    return score(ext);\n};\n",
        ),
        (
            "score.js",
            "module.exports = function score(ext) {\n    return ext === 'mp4' ? 'application/mp4' : null;\n};\n",
        ),
        ("unrelated.js", "module.exports = 1;\n"),
        (
            "test/test.js",
            "var assert = require('assert');\nvar mime = require('..');\n\nit('finds mp4', function () {\n    assert.strictEqual(mime.lookup('mp4'), 'video/mp4');\n});\n",
        ),
    ]);
    let root = dir.path().display();
    let output = format!(
        "  1) finds mp4:\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n      at Context.<anonymous> ({root}/test/test.js:5:16)\n"
    );
    let candidates = localize(dir.path(), &tracked, &output, &["finds mp4".to_owned()]);
    insta::assert_snapshot!(render(&candidates), @r#"
    test/test.js score=94 lines=[4, 5]
      - deepest application frame of a js-stack stack at test/test.js:5:16 (+85)
      - defines failing test "finds mp4" at line 4 (+45)
    index.js score=57.5 lines=[2]
      - defines value `lookup` at line 2, which failing test file test/test.js calls as `mime.lookup` at line 5 through `mime` (`var mime = require('..')`) (+50)
      - imported by failing test file test/test.js at line 2 (`var mime = require('..')`) (+37.6)
    score.js score=18.8 lines=[]
      - imported by index.js, which failing test file test/test.js reaches through its imports (+18.8)
    "#);
}

#[test]
fn a_failure_its_imports_explain_never_reads_the_rest_of_the_repository() {
    let mut files: Vec<(String, String)> = vec![
        ("package.json".into(), "{\"name\": \"qs-lite\", \"main\": \"lib/index.js\"}\n".into()),
        ("lib/index.js".into(), "var parse = require('./parse');\nmodule.exports = { parse: parse };\n".into()),
        ("lib/parse.js".into(), "module.exports = function parse(str) {\n    return {};\n};\n".into()),
        (
            "test/parse.js".into(),
            "var assert = require('assert');\nvar qs = require('..');\n\nit('decodes', function () {\n    assert.deepStrictEqual(qs.parse('a=b+c'), { a: 'b c' });\n});\n".into(),
        ),
    ];
    files.extend((0..300).map(|n| {
        (
            format!("other/m{n}.js"),
            format!("function parse{n}() {{}}\n"),
        )
    }));
    let (dir, tracked) = tree_of(&files);
    let output = format!(
        "  1) decodes:\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n      at Context.<anonymous> ({}/test/parse.js:5:16)\n",
        dir.path().display()
    );
    let named = super::names::named(&output);
    let tree = super::tree::Tree::new(dir.path(), &tracked, &[]);
    let candidates = super::rank::candidates(&tree, &output, &["decodes".to_owned()], &named);
    let paths: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["test/parse.js", "lib/parse.js", "lib/index.js"]);
    assert!(!tree.index_built(), "the whole repository was searched");
}

/// Import statements, definitions and output lines cut and mixed at random: localization
/// must never panic on what repositories and runners really contain.
#[test]
fn mixed_up_sources_and_output_never_panic() {
    const PIECES: &[&str] = &[
        "import ",
        "from ",
        " import ",
        "require(",
        "'..'",
        "\"./x\"",
        "export * from ",
        "use ",
        "crate::",
        "super::",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "mod ",
        "def ",
        "class ",
        "function ",
        "fn ",
        "func ",
        "it('",
        "describe(`",
        "test(\"",
        " as ",
        ",",
        ";",
        "\n",
        "    ",
        "\t",
        "=",
        "=>",
        ".",
        "..",
        "/",
        "::",
        "x",
        "parse",
        "Foo",
        "é",
        "\u{0}",
        "File \"",
        "\", line ",
        "at ",
        ":12:5",
        " (",
        "src/a.py",
        "lib/index.js",
        "::test_x",
        "TypeError: ",
        "() got an unexpected keyword argument 'y'",
        " is not a function",
        "AttributeError: 'Foo' object has no attribute 'bar'",
        "E       ",
        ">       ",
        "package.json",
        "tsconfig.json",
        "{\"main\": \"",
        "\"exports\": {",
        "go.mod",
        "module ",
        "Cargo.toml",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for round in 0..40 {
        let mut text = || {
            (0..next(200))
                .map(|_| PIECES[next(PIECES.len())])
                .collect::<String>()
        };
        let names = [
            "package.json",
            "tsconfig.json",
            "Cargo.toml",
            "go.mod",
            "src/a.py",
            "src/__init__.py",
            "lib/index.js",
            "lib/x.ts",
            "src/lib.rs",
            "src/x/mod.rs",
            "tests/test_a.py",
            "test/a.test.js",
            "tests/a.rs",
            "pkg/a_test.go",
            "pkg/a.go",
        ];
        let contents: Vec<(String, String)> = names
            .iter()
            .map(|name| ((*name).to_owned(), text()))
            .collect();
        let (dir, tracked) = tree_of(&contents);
        let output = format!(
            "{}\n  File \"{}/tests/test_a.py\", line 3, in t\n{}",
            text(),
            dir.path().display(),
            text()
        );
        let failing = [
            text(),
            "tests/test_a.py::test_x".to_owned(),
            format!("x::{round}"),
        ];
        let candidates = localize(dir.path(), &tracked, &output, &failing);
        assert!(candidates.iter().all(|c| tracked.contains(&c.path)));
    }
}
