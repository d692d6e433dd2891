//! Hooks for `benches/runner.rs` only: the redaction and capture path without a child or a
//! pipe, so its own throughput can be told apart from the generator's and the kernel's.
//!
//! Not part of the interface; hidden from the docs.

use super::capture::Capture;
use super::model::{RunnerError, RunnerSettings, Secret};
use super::redact::{Counts, Redactor};

/// Compile the redaction rules for `secrets` without the cache.
#[doc(hidden)]
pub fn compile_rules(secrets: &[Secret]) -> Result<(), RunnerError> {
    Redactor::new(secrets).map(|_| ())
}

/// Feed `data` through redaction and capture in `chunk`-byte reads, as `run` does with a
/// child's stdout; returns whether the capture was truncated and the redactions.
#[doc(hidden)]
pub fn redact_and_capture(
    data: &[u8],
    chunk: usize,
    settings: &RunnerSettings,
) -> Result<(bool, Counts), RunnerError> {
    let redactor = Redactor::cached(&settings.secrets)?;
    let mut stream = redactor.stream();
    let mut capture = Capture::new(settings.output_head_bytes, settings.output_tail_bytes);
    for piece in data.chunks(chunk.max(1)) {
        stream.push(piece, &mut |bytes: &[u8]| capture.write(bytes));
    }
    stream.finish(&mut |bytes: &[u8]| capture.write(bytes));
    let mut counts = Counts::new();
    stream.add_counts(&mut counts);
    Ok((capture.finish().truncated, counts))
}
