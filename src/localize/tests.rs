//! Localization on realistic failure outputs.

use std::fmt::Write as _;
use std::fs;

use super::*;

/// A working tree holding `files`; returns it with the tracked list, sorted.
pub(super) fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let abs = dir.path().join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, content).unwrap();
    }
    let mut tracked: Vec<String> = files.iter().map(|(path, _)| (*path).to_owned()).collect();
    tracked.sort();
    (dir, tracked)
}

/// [`tree`] from generated (owned) paths and contents.
pub(super) fn tree_of(files: &[(String, String)]) -> (tempfile::TempDir, Vec<String>) {
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    tree(&borrowed)
}

/// Candidates as text: one block per file.
pub(super) fn render(candidates: &[Candidate]) -> String {
    let mut out = String::new();
    for candidate in candidates {
        writeln!(
            out,
            "{} score={} lines={:?}",
            candidate.path, candidate.score, candidate.lines
        )
        .unwrap();
        for reason in &candidate.reasons {
            writeln!(out, "  - {reason}").unwrap();
        }
    }
    out
}

fn render_locations(locations: &[Location]) -> String {
    locations
        .iter()
        .map(|l| format!("{:<16} {} {:?} {:?}", l.kind, l.path, l.line, l.column))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn extract_locations_understands_every_supported_format() {
    let text = r#"
thread 'parser::tests::crlf' panicked at src/parser.rs:42:9:
thread 'main' panicked at 'index out of bounds', src/old.rs:7:5
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:645:5
   3: demo::parse
             at ./src/parser.rs:42:9
error[E0425]: cannot find value `x` in this scope
 --> src/lib.rs:3:9
  File "/repo/pkg/mod.py", line 12, in f
FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2
tests/test_a.py:12: AssertionError
    at add (/repo/src/a.js:10:5)
    at /repo/src/b.ts:3:1
    at Object.<anonymous> (file:///repo/test/c.test.mjs:4:2)
 ❯ src/d.test.ts:12:5
  location: '/repo/test/e.test.js:5:3'
FAIL src/math.test.js
    foo_test.go:12: got 1, want 2
	/home/u/proj/pkg/foo.go:12 +0x1d
src/a.ts(3,5): error TS2304: Cannot find name 'foo'.
src/b.ts:4:7 - error TS2322: Type 'string' is not assignable to type 'number'.
---- src/lib.rs - add (line 5) stdout ----
src/x.c:3:9: error: expected ';'
src/x.c:1:1: warning: unused
warning: unused variable: `y`
 --> src/warn.rs:4:9
/repo/src/server.js:10
./main.go:8:2: undefined: helper
just prose: nothing here:1
"#;
    insta::assert_snapshot!(render_locations(&extract_locations(text)), @r"
    rust-panic       src/parser.rs Some(42) Some(9)
    rust-panic       src/old.rs Some(7) Some(5)
    rust-backtrace   /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs Some(645) Some(5)
    rust-backtrace   ./src/parser.rs Some(42) Some(9)
    rustc-error      src/lib.rs Some(3) Some(9)
    python-traceback /repo/pkg/mod.py Some(12) None
    pytest-node      tests/test_a.py None None
    pytest-failure   tests/test_a.py Some(12) None
    js-stack         /repo/src/a.js Some(10) Some(5)
    js-stack         /repo/src/b.ts Some(3) Some(1)
    js-stack         /repo/test/c.test.mjs Some(4) Some(2)
    js-stack         src/d.test.ts Some(12) Some(5)
    node-assertion   /repo/test/e.test.js Some(5) Some(3)
    jest-fail        src/math.test.js None None
    go-test          foo_test.go Some(12) None
    go-panic         /home/u/proj/pkg/foo.go Some(12) None
    tsc-error        src/a.ts Some(3) Some(5)
    tsc-error        src/b.ts Some(4) Some(7)
    rust-doctest     src/lib.rs Some(5) None
    compiler-error   src/x.c Some(3) Some(9)
    compiler-warning src/x.c Some(1) Some(1)
    rustc-warning    src/warn.rs Some(4) Some(9)
    node-throw       /repo/src/server.js Some(10) None
    compiler-error   ./main.go Some(8) Some(2)
    ");
}

const RUST_PARSER: &str = "pub fn parse_line(s: &str) -> &str {\n    s.trim_end_matches('\\n')\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn crlf() {\n        assert_eq!(parse_line(\"a\\r\\n\"), \"a\");\n    }\n}\n";

fn rust_tree() -> (tempfile::TempDir, Vec<String>) {
    tree(&[
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("src/lib.rs", "pub mod parser;\npub mod util;\n"),
        ("src/parser.rs", RUST_PARSER),
        ("src/util.rs", "pub fn helper() {}\n"),
        (
            "tests/cli.rs",
            "#[test]\nfn runs() { demo::parser::parse_line(\"x\"); }\n",
        ),
    ])
}

#[test]
fn a_rust_panic_with_backtrace_ranks_the_panicking_file_first() {
    let (dir, tracked) = rust_tree();
    let output = "\
running 2 tests
test util::tests::ok ... ok
test parser::tests::crlf ... FAILED

failures:

---- parser::tests::crlf stdout ----

thread 'parser::tests::crlf' panicked at src/parser.rs:11:9:
assertion `left == right` failed
  left: \"a\\r\"
 right: \"a\"
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:645:5
   1: core::panicking::assert_failed
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs:297:5
   2: demo::parser::tests::crlf
             at ./src/parser.rs:11:9
   3: demo::parser::tests::crlf::{{closure}}
             at ./src/parser.rs:10:14
   4: core::ops::function::FnOnce::call_once
             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/foo-1.0.0/src/lib.rs:250:5

failures:
    parser::tests::crlf

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";
    let candidates = localize(
        dir.path(),
        &tracked,
        output,
        &["parser::tests::crlf".to_owned()],
    );
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn a_rustc_error_ranks_the_file_and_finds_the_definition_of_the_missing_name() {
    let (dir, tracked) = rust_tree();
    let output = "\
   Compiling demo v0.1.0 (/work/demo)
error[E0425]: cannot find function `parse_line` in this scope
 --> tests/cli.rs:2:13
  |
2 | fn runs() { parse_line(\"x\"); }
  |             ^^^^^^^^^^ not found in this scope
";
    let candidates = localize(dir.path(), &tracked, output, &[]);
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn a_pytest_long_report_ranks_the_source_below_the_test_first() {
    let (dir, tracked) = tree(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", "def divide(a, b):\n    return a // b - 1\n"),
        (
            "tests/test_calc.py",
            "from pkg.calc import divide\n\ndef test_divide():\n    assert divide(6, 0) == 0\n",
        ),
    ]);
    // pytest ends the test frame's line with a space; editors often strip it, so both forms.
    let output = "\
============================= test session starts ==============================
collected 2 items

tests/test_calc.py .F                                                    [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(6, 0) == 0

tests/test_calc.py:4:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

a = 6, b = 0

    def divide(a, b):
>       return a // b - 1
E       ZeroDivisionError: integer division or modulo by zero

pkg/calc.py:2: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide - ZeroDivisionError: integer division or modulo by zero
========================= 1 failed, 1 passed in 0.02s ==========================
";
    let candidates = localize(
        dir.path(),
        &tracked,
        output,
        &["tests/test_calc.py::test_divide".to_owned()],
    );
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn a_python_traceback_skips_library_frames_and_maps_another_checkout() {
    let (dir, tracked) = tree(&[
        ("app/__init__.py", ""),
        (
            "app/models.py",
            "class User:\n    def total(self):\n        return totl\n",
        ),
        (
            "app/cli.py",
            "from app.models import User\n\ndef main():\n    User().total()\n",
        ),
        (
            "case.py",
            "# a tracked file sharing a name with the standard library\n",
        ),
    ]);
    let root = dir.path().display();
    let output = format!(
        "\
Traceback (most recent call last):
  File \"{root}/app/cli.py\", line 4, in main
    User().total()
  File \"/usr/lib/python3.12/unittest/case.py\", line 58, in testPartExecutor
    yield
  File \"/home/runner/work/app/app/app/models.py\", line 3, in total
    return totl
NameError: name 'totl' is not defined
"
    );
    let candidates = localize(dir.path(), &tracked, &output, &[]);
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn a_jest_failure_ranks_the_throwing_source_above_the_test() {
    let (dir, tracked) = tree(&[
        ("package.json", "{}\n"),
        (
            "src/math.js",
            "function mean(xs) {\n  return sum(xs) / xs.size;\n}\nmodule.exports = { mean };\n",
        ),
        (
            "src/math.test.js",
            "const { mean } = require('./math');\ntest('mean of two', () => {\n  expect(mean([1, 3])).toBe(2);\n});\n",
        ),
        ("node_modules/jest-circus/build/run.js", "// vendored\n"),
    ]);
    let root = dir.path().display();
    let output = format!(
        "\
FAIL src/math.test.js
  ● mean of two

    ReferenceError: sum is not defined

      1 | function mean(xs) {{
    > 2 |   return sum(xs) / xs.size;
        |   ^

      at sum (src/math.js:2:3)
      at Object.mean (src/math.test.js:3:10)
      at Promise.then.completed ({root}/node_modules/jest-circus/build/run.js:298:28)

Tests:       1 failed, 1 total
"
    );
    let candidates = localize(dir.path(), &tracked, &output, &["mean of two".to_owned()]);
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn a_go_panic_ranks_the_application_frame_and_maps_test_names() {
    let (dir, tracked) = tree(&[
        ("go.mod", "module example.com/proj\n"),
        (
            "parse/split.go",
            "package parse\n\nfunc Split(s string) string {\n\treturn s[:3]\n}\n",
        ),
        (
            "parse/split_test.go",
            "package parse\n\nimport \"testing\"\n\nfunc TestSplit(t *testing.T) {\n\tSplit(\"ab\")\n}\n",
        ),
        (
            "parse/join_test.go",
            "package parse\n\nimport \"testing\"\n\nfunc TestJoin(t *testing.T) {\n\tt.Fatal(1)\n}\n",
        ),
    ]);
    let output = "\
--- FAIL: TestJoin (0.00s)
    join_test.go:6: 1
--- FAIL: TestSplit (0.00s)
panic: runtime error: slice bounds out of range [:3] with length 2 [recovered]
	panic: runtime error: slice bounds out of range [:3] with length 2

goroutine 7 [running]:
testing.tRunner.func1.2({0x5183a0, 0xc000016180})
	/usr/local/go/src/testing/testing.go:1545 +0x238
panic({0x5183a0?, 0xc000016180?})
	/usr/local/go/src/runtime/panic.go:914 +0x21f
example.com/proj/parse.Split(...)
	/home/runner/work/proj/proj/parse/split.go:4
example.com/proj/parse.TestSplit(0x0?)
	/home/runner/work/proj/proj/parse/split_test.go:6 +0x1d
testing.tRunner(0xc0000836c0, 0x5391e8)
	/usr/local/go/src/testing/testing.go:1595 +0xff
FAIL	example.com/proj/parse	0.002s
";
    let candidates = localize(
        dir.path(),
        &tracked,
        output,
        &["TestJoin".to_owned(), "TestSplit".to_owned()],
    );
    insta::assert_snapshot!(render(&candidates));
}

#[test]
fn an_ambiguous_relative_path_is_shared_between_its_matches_and_ties_sort_by_path() {
    let (dir, tracked) = tree(&[
        ("crates/b/src/lib.rs", "pub fn b() {}\n"),
        ("crates/a/src/lib.rs", "pub fn a() {}\n"),
        ("README.md", "# ws\n"),
    ]);
    let output = "thread 'main' panicked at src/lib.rs:1:5:\nboom\n";
    let candidates = localize(dir.path(), &tracked, output, &[]);
    insta::assert_snapshot!(render(&candidates), @r"
    crates/a/src/lib.rs score=50 lines=[1]
      - rust-panic at crates/a/src/lib.rs:1:5 (one of 2 files matching src/lib.rs) (+50)
    crates/b/src/lib.rs score=50 lines=[1]
      - rust-panic at crates/b/src/lib.rs:1:5 (one of 2 files matching src/lib.rs) (+50)
    ");
}

#[test]
fn typescript_compiler_and_vitest_locations_rank_the_named_files() {
    let (dir, tracked) = tree(&[
        ("src/a.ts", "export const foo = 1;\n"),
        ("src/b.ts", "export const bar = fooo;\n"),
        ("src/b.test.ts", "import { bar } from './b';\n"),
    ]);
    let output = "\
src/b.ts(1,20): error TS2304: Cannot find name 'fooo'.
 FAIL  src/b.test.ts > bar
 ❯ src/b.test.ts:1:1
";
    let candidates = localize(dir.path(), &tracked, output, &["src/b.test.ts".to_owned()]);
    insta::assert_snapshot!(render(&candidates), @r"
    src/b.ts score=110.5 lines=[1]
      - tsc-error at src/b.ts:1:20 (+100)
      - imported by failing test file src/b.test.ts at line 1 (`import { bar } from './b'`) (+37.6)
      - uses `fooo` at line 1, named by the error `src/b.ts(1,20): error TS2304: Cannot find name 'fooo'.` (no file defines it) (+15)
    src/b.test.ts score=94 lines=[1]
      - deepest application frame of a js-stack stack at src/b.test.ts:1:1 (+85)
      - jest-fail at src/b.test.ts (+45)
      - is failing test file src/b.test.ts (+45, already counted)
    ");
}

#[test]
fn output_without_locations_in_the_repository_gives_no_candidates() {
    let (dir, tracked) = tree(&[("src/lib.rs", "pub fn f() {}\n")]);
    let output = "\
thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1/serde-1.0.0/src/de.rs:10:5:
  File \"/usr/lib/python3.12/json/decoder.py\", line 355, in raw_decode
    at /repo/node_modules/x/index.js:1:1
error: could not compile `demo`
";
    assert_eq!(localize(dir.path(), &tracked, output, &[]), Vec::new());
}

#[test]
fn a_huge_output_is_handled_within_bounds_and_keeps_the_real_failure() {
    let (dir, tracked) = rust_tree();
    let mut output = String::new();
    // About 300 KiB of noise: compiler progress and frames outside the repository.
    while output.len() < 300 * 1024 {
        output.push_str("   Compiling some-dependency v1.2.3\n");
        output.push_str("             at /rustc/abc/library/core/src/ops/function.rs:250:5\n");
    }
    output.push_str("thread 'parser::tests::crlf' panicked at src/parser.rs:11:9:\n");
    output.push_str(&"x".repeat(100_000));
    let candidates = localize(dir.path(), &tracked, &output, &[]);
    let paths: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec!["src/parser.rs"]);
    assert_eq!(candidates[0].lines, vec![11]);
}

#[test]
fn the_same_inputs_always_give_the_same_ranking() {
    let (dir, tracked) = rust_tree();
    let output = "error[E0425]: cannot find value `helper` in this scope\n --> src/lib.rs:3:9\n";
    let first = localize(dir.path(), &tracked, output, &["runs".to_owned()]);
    for _ in 0..5 {
        assert_eq!(
            localize(dir.path(), &tracked, output, &["runs".to_owned()]),
            first
        );
    }
    let paths: Vec<&str> = first.iter().map(|c| c.path.as_str()).collect();
    // The failing test `runs` calls `demo::parser::parse_line` inline: the parser ranks too.
    assert_eq!(
        paths,
        vec!["src/lib.rs", "src/parser.rs", "tests/cli.rs", "src/util.rs"]
    );
}

#[test]
fn paths_resolve_through_the_root_as_given_or_canonical_urls_and_other_checkouts() {
    let (dir, tracked) = tree(&[
        ("src/a.js", ""),
        ("pkg/foo_test.go", ""),
        ("lib/case.py", ""),
        ("node_modules/x/index.js", ""),
    ]);
    let link = tempfile::tempdir().unwrap();
    let via_link = link.path().join("repo");
    std::os::unix::fs::symlink(dir.path(), &via_link).unwrap();
    let index = super::resolve::PathIndex::new(&via_link, &tracked);
    let canonical = dir.path().canonicalize().unwrap();
    let cases = [
        format!("{}/src/a.js", via_link.display()),
        format!("{}/src/a.js", canonical.display()),
        format!("file://{}/src/a.js", canonical.display()),
        "./src/a.js".to_owned(),
        "foo_test.go".to_owned(),
        "/home/runner/work/r/r/lib/case.py".to_owned(),
        "/usr/lib/python3.12/unittest/case.py".to_owned(),
        format!("{}/node_modules/x/index.js", canonical.display()),
        "/elsewhere/a.js".to_owned(),
    ];
    let resolved: Vec<Vec<&str>> = cases.iter().map(|raw| index.resolve(raw)).collect();
    assert_eq!(
        resolved,
        vec![
            vec!["src/a.js"],
            vec!["src/a.js"],
            vec!["src/a.js"],
            vec!["src/a.js"],
            vec!["pkg/foo_test.go"],
            vec!["lib/case.py"],
            vec![],
            vec![],
            vec![],
        ]
    );
}

/// Timings for the report, not assertions: run with
/// `cargo test --release --lib -- --ignored --nocapture measure_`.
#[test]
#[ignore = "measurement, prints timings"]
#[expect(clippy::print_stderr, reason = "a measurement reports its numbers")]
fn measure_localize_on_300_kib_of_output_and_5000_files() {
    let contents: Vec<(String, String)> = (0..5000)
        .map(|n| {
            (
                format!("pkg/m{}/f{n}.py", n % 50),
                format!("def f{n}():\n    return {n}\n").repeat(20),
            )
        })
        .collect();
    let (dir, tracked) = tree_of(&contents);
    let mut output = String::new();
    let mut n = 0;
    while output.len() < 300 * 1024 {
        output.push_str(&format!(
            "  File \"{}/pkg/m{}/f{n}.py\", line 2, in f{n}\n    return x\n",
            dir.path().display(),
            n % 50
        ));
        n = (n + 7) % 5000;
    }
    output.push_str("NameError: name 'f4999' is not defined\n");
    let start = std::time::Instant::now();
    let candidates = localize(
        dir.path(),
        &tracked,
        &output,
        &["pkg/m0/f0.py::test_x".into()],
    );
    eprintln!(
        "localize: {} bytes of output, {} tracked files -> {} candidates in {:?}",
        output.len(),
        tracked.len(),
        candidates.len(),
        start.elapsed()
    );
}

#[test]
fn coloured_output_is_read_like_plain_output() {
    let text = "\x1b[1m\x1b[31mthread 'main' panicked at \x1b[0msrc/lib.rs:3:5:\n\
                \x1b[2m    at \x1b[22mObject.<anonymous> (\x1b[36msrc/a.test.js\x1b[39m:4:9)\n";
    assert_eq!(
        extract_locations(text),
        vec![
            Location {
                path: "src/lib.rs".into(),
                line: Some(3),
                column: Some(5),
                kind: "rust-panic".into(),
            },
            Location {
                path: "src/a.test.js".into(),
                line: Some(4),
                column: Some(9),
                kind: "js-stack".into(),
            },
        ]
    );
}
