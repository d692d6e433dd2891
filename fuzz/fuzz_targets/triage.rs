//! Fuzzes `efix triage`'s readers on arbitrary bytes: the strict JUnit reader (which must
//! answer a truncated or broken report with an error naming the line, never a panic), the log
//! reader (runner output, `go test -json`), then the grouping, the commands and both
//! renderings of whatever failures they found. The first byte picks the runner override.
//!
//! Run: `cargo +nightly fuzz run triage` from the repository root. Seed corpus: the real
//! runners' reports and logs, `mkdir -p fuzz/corpus/triage && cp tests/fixtures/triage/*/*.xml
//! tests/fixtures/triage/*/*.log tests/fixtures/triage/go/go-test.json fuzz/corpus/triage/`.

#![no_main]

use std::path::Path;

use efix::triage::{Grouper, Options, Runner, markdown, matrix_json, read_junit, read_log};
use libfuzzer_sys::fuzz_target;

const RUNNERS: [Option<Runner>; 7] = [
    None,
    Some(Runner::Pytest),
    Some(Runner::Jest),
    Some(Runner::Vitest),
    Some(Runner::Cargo),
    Some(Runner::Go),
    Some(Runner::Node),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let runner = RUNNERS[usize::from(pick) % RUNNERS.len()];
    let text = String::from_utf8_lossy(rest);
    let mut grouper = Grouper::default();
    let root = "/home/runner/work/app/app";
    let path = Path::new("fuzz.xml");
    if let Err(err) = read_junit(path, &text, runner, &mut |f| grouper.add(f, root)) {
        // Errors name the file; rendering them must not panic either.
        assert!(err.to_string().contains("fuzz.xml"));
    }
    let _ = read_log(Path::new("fuzz.log"), &text, runner, &mut |f| grouper.add(f, root));
    let triage = grouper.finish(&Options {
        root: root.to_owned(),
        program: None,
        go_module: Some("example.com/m".to_owned()),
        max_jobs: 3,
        allow: vec!["pytest".to_owned(), "npx".to_owned(), "cargo".to_owned(), "go".to_owned(), "node".to_owned()],
    });
    let _ = matrix_json(&triage);
    let _ = markdown(&triage);
});
