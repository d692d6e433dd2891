//! The one integration test binary: a module per feature, all driving the built `efix` binary
//! through the small fluent harness in `harness`.

mod harness;

mod cli;
mod demo;
mod pipeline;
