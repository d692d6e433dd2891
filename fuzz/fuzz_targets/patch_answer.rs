//! Fuzzes the whole patch engine on arbitrary model answers: contract, parser, apply,
//! edits and checks must never panic, whatever the bytes.
//!
//! Run: `cargo +nightly fuzz run patch_answer` from the repository root.

#![no_main]

use std::collections::BTreeMap;

use efix::patch::{MemoryFiles, PatchPolicy, evaluate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data);
    let mut files = BTreeMap::new();
    files.insert(
        "app.py".to_owned(),
        b"import os\n\n\ndef f(x):\n    return x\n\n\ndef g():\n    return f(1)\n".to_vec(),
    );
    files.insert("a.txt".to_owned(), b"a\r\nb\r\nc".to_vec());
    let _ = evaluate(&MemoryFiles(files), &raw, &PatchPolicy::default());
});
