//! The one integration test binary: a module per feature, all driving the built `efix` binary
//! through the small fluent harness in `harness`.

#![expect(
    clippy::unwrap_used,
    reason = "a test whose setup fails should fail loudly"
)]

mod harness;

mod adversarial;
mod cli;
mod demo;
mod ecosystems;
mod patch;
mod patch_fixtures;
mod pipeline;
mod runner;
