//! The one integration test binary: a module per feature, all driving the built `efix` binary
//! through the small fluent harness in `harness`.

#![expect(
    clippy::unwrap_used,
    reason = "a test whose setup fails should fail loudly"
)]

mod engines;
mod harness;
mod http;
mod openai_server;

mod acp;
mod action;
mod adversarial;
mod canary;
mod canary_env;
mod candidates;
mod channels;
mod cheat_matrix;
mod cheats;
mod cheats_static;
mod cli;
mod coverage;
mod demo;
mod django;
mod docs;
mod durability;
mod ecosystems;
mod github_api;
mod init;
mod install;
mod localize;
mod localize_cases;
mod openai;
mod patch;
mod patch_fixtures;
mod pipeline;
mod publish;
mod real_agents;
mod related;
mod runner;
mod suites;
mod triage;
mod triage_targets;
mod trigger;
