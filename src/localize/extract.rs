//! Locations named in failure output: panics, stack frames, tracebacks, compiler errors, test
//! summaries. Pure text parsing; mapping to tracked files happens in `resolve`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Lines longer than this are cut (at a character boundary) before matching; failure output
/// sometimes carries minified code or base64 on one line.
const MAX_LINE_BYTES: usize = 2048;

/// At most this many locations are extracted from one output.
const MAX_LOCATIONS: usize = 4096;

/// A place in a file named by failure output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    /// The path as written in the output (absolute, relative, or a `file://` URL's path).
    pub path: String,
    /// 1-based line, when the output names one.
    pub line: Option<u64>,
    /// 1-based column, when the output names one.
    pub column: Option<u64>,
    /// What named it: `rust-panic`, `rust-backtrace`, `rust-doctest`, `rustc-error`,
    /// `rustc-warning`, `python-traceback`, `pytest-node`, `pytest-failure`, `js-stack`,
    /// `node-assertion`, `node-throw`, `jest-fail`, `go-test`, `go-panic`, `tsc-error`,
    /// `compiler-error` or `compiler-warning`.
    pub kind: String,
}

/// A location with the output line it came from, so frames can be grouped into stacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub location: Location,
    pub output_line: usize,
}

/// A path token: no whitespace, quotes, brackets or colons (Windows drive paths are not
/// supported).
const PATH: &str = r#"[^\s:'"()\[\]<>,]+"#;

struct Pattern {
    kind: &'static str,
    regex: Regex,
}

/// Patterns in priority order; the first that matches a line wins.
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let specs: [(&str, String); 18] = [
        // Rust 1.73+: `thread 'x' panicked at src/lib.rs:12:5:`.
        (
            "rust-panic",
            format!(r"panicked at (?P<path>{PATH}\.rs):(?P<line>\d+):(?P<col>\d+)"),
        ),
        // Older Rust: `thread 'x' panicked at 'msg', src/lib.rs:12:5`.
        (
            "rust-panic",
            format!(r"panicked at .*, (?P<path>{PATH}\.rs):(?P<line>\d+):(?P<col>\d+)\s*$"),
        ),
        (
            "rustc-error",
            format!(r"^\s*--> (?P<path>{PATH}):(?P<line>\d+):(?P<col>\d+)"),
        ),
        (
            "python-traceback",
            r#"^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)"#.to_owned(),
        ),
        // Stack frames: Rust backtraces (`at ./src/lib.rs:12:5`) and JS/TS
        // (`at fn (/abs/a.js:10:5)`, `at /abs/a.ts:3:1`, `at fn (file:///abs/a.mjs:1:2)`).
        (
            "at-frame",
            format!(
                r"^\s*at (?:[^()]*? \()?(?:file://)?(?P<path>{PATH}):(?P<line>\d+)(?::(?P<col>\d+))?\)?\s*$"
            ),
        ),
        // Vitest: `❯ src/a.test.ts:12:5`.
        (
            "js-stack",
            format!(r"^\s*❯ (?:[^()]*? \()?(?P<path>{PATH}):(?P<line>\d+):(?P<col>\d+)\)?\s*$"),
        ),
        // node:test's TAP `stack: |-` block prints frames without `at`:
        // `TestContext.<anonymous> (/abs/test/a.test.js:12:10)`.
        (
            "js-stack",
            format!(
                r"^\s*(?:async )?[\w$.<>\[\]]+(?: \[as [\w$]+\])? \((?:file://)?(?P<path>{PATH}\.(?:[cm]?[jt]s|[jt]sx)):(?P<line>\d+):(?P<col>\d+)\)\s*$"
            ),
        ),
        // node:test / TAP: `location: '/abs/test/a.test.js:5:3'`.
        (
            "node-assertion",
            format!(r"^\s*location: '(?:file://)?(?P<path>{PATH}):(?P<line>\d+):(?P<col>\d+)'"),
        ),
        // tsc --pretty: `src/a.ts:3:5 - error TS2304: ...`.
        (
            "tsc-error",
            format!(r"^(?P<path>{PATH}):(?P<line>\d+):(?P<col>\d+) - error TS\d+"),
        ),
        // Rust doctests: `---- src/lib.rs - add (line 5) stdout ----`.
        (
            "rust-doctest",
            format!(r"^---- (?P<path>{PATH}\.rs) - .*\(line (?P<line>\d+)\) stdout ----"),
        ),
        (
            "tsc-error",
            format!(r"^(?P<path>{PATH})\((?P<line>\d+),(?P<col>\d+)\): error TS\d+"),
        ),
        // Go panics: `\t/abs/pkg/foo.go:12 +0x1d`.
        (
            "go-panic",
            format!(r"^\s+(?P<path>{PATH}\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$"),
        ),
        // Go test failures: `    foo_test.go:12: got 1 want 2`.
        (
            "go-test",
            format!(r"^\s+(?P<path>{PATH}\.go):(?P<line>\d+): "),
        ),
        // pytest short summary and mypy: `tests/test_a.py:12: AssertionError`.
        (
            "pytest-failure",
            format!(r"^(?P<path>{PATH}\.py):(?P<line>\d+):(?: |$)"),
        ),
        (
            "pytest-node",
            r"(?:^|\s)(?P<path>[\w./-]+\.py)::[\w\[\]().,:/ -]*[\w\]]".to_owned(),
        ),
        // jest `FAIL src/a.test.js`, vitest ` FAIL  src/a.test.ts > suite > name`.
        (
            "jest-fail",
            format!(r"^\s*FAIL\s+(?P<path>{PATH}\.[A-Za-z]+)(?:\s|$)"),
        ),
        // gcc, clang, go build, eslint unix format: `src/a.c:3:9: error: ...`.
        (
            "compiler-error",
            format!(
                r"^(?P<path>{PATH}\.[A-Za-z0-9]+):(?P<line>\d+):(?P<col>\d+):(?P<severity> (?:warning|note))?"
            ),
        ),
        // Node's uncaught-exception header: `/abs/src/a.js:10` above the source line.
        (
            "node-throw",
            format!(r"^(?P<path>/{PATH}\.(?:[cm]?[jt]s|[jt]sx)):(?P<line>\d+)\s*$"),
        ),
    ];
    specs
        .into_iter()
        .filter_map(|(kind, source)| match Regex::new(&source) {
            Ok(regex) => Some(Pattern { kind, regex }),
            Err(err) => {
                // Patterns are constants covered by tests; a bad one is dropped, not fatal.
                tracing::error!(%err, kind, "invalid localization pattern");
                None
            }
        })
        .collect()
});

/// Locations named in `text`, in order of appearance.
pub fn extract_locations(text: &str) -> Vec<Location> {
    extract(text)
        .into_iter()
        .map(|found| found.location)
        .collect()
}

/// Locations with the output line they came from.
pub(crate) fn extract(text: &str) -> Vec<Found> {
    let mut found = Vec::new();
    // rustc prints `warning: ...` or `error[E...]: ...` above each `-->` line.
    let mut in_warning = false;
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("warning") {
            in_warning = true;
        } else if line.starts_with("error") {
            in_warning = false;
        }
        if found.len() >= MAX_LOCATIONS {
            tracing::debug!(limit = MAX_LOCATIONS, "location limit reached");
            break;
        }
        let line = strip_ansi(clip(line));
        if let Some(mut location) = match_line(&line) {
            if in_warning && location.kind == "rustc-error" {
                location.kind = "rustc-warning".to_owned();
            }
            found.push(Found {
                location,
                output_line: index,
            });
        }
    }
    found
}

fn match_line(line: &str) -> Option<Location> {
    for pattern in PATTERNS.iter() {
        let Some(caps) = pattern.regex.captures(line) else {
            continue;
        };
        let Some(path) = caps.name("path").map(|m| m.as_str()) else {
            continue;
        };
        let number = |name: &str| caps.name(name).and_then(|m| m.as_str().parse::<u64>().ok());
        let kind = match pattern.kind {
            "at-frame" if path.ends_with(".rs") => "rust-backtrace",
            "at-frame" => "js-stack",
            "compiler-error" if caps.name("severity").is_some() => "compiler-warning",
            kind => kind,
        };
        return Some(Location {
            path: path.to_owned(),
            line: number("line"),
            column: number("col"),
            kind: kind.to_owned(),
        });
    }
    None
}

/// The line without terminal colour and style escapes (runners colour their output when
/// they think they talk to a terminal).
pub(crate) fn strip_ansi(line: &str) -> Cow<'_, str> {
    static ANSI: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07").ok());
    match ANSI.as_ref() {
        Some(ansi) if line.contains('\x1b') => ansi.replace_all(line, ""),
        _ => Cow::Borrowed(line),
    }
}

pub(crate) fn clip(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}
