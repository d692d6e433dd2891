//! Fuzzes the test-report parsers on arbitrary runner output: every format's parser runs on
//! every input (as in a real run), and none may panic, whatever the bytes. The input is split
//! at its first NUL into stdout and stderr, since both streams are read.
//!
//! Run: `cargo +nightly fuzz run test_output` from the repository root. The captured outputs
//! in `src/testreport/fixtures/` make a good seed corpus; copy them (the fuzzer writes into its
//! corpus): `mkdir -p fuzz/corpus/test_output && cp src/testreport/fixtures/* fuzz/corpus/test_output/`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (stdout, stderr) = text.split_once('\0').unwrap_or((&text, ""));
    let _ = efix::testreport::parse(stdout, stderr);
    let _ = efix::testreport::parse_junit_xml(&text);
});
