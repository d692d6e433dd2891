//! Localization on realistic failure outputs.

#![expect(
    clippy::unwrap_used,
    reason = "a failed setup step should fail the test loudly"
)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::*;

/// A working tree holding `files`; returns it with the tracked list, sorted.
fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
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

/// Candidates as text: one block per file.
fn render(candidates: &[Candidate]) -> String {
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
src/x.c:3:9: error: expected ';'
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
    compiler-error   src/x.c Some(3) Some(9)
    compiler-error   ./main.go Some(8) Some(2)
    ");
}
