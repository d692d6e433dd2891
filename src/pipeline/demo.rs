//! `efix demo`: the whole pipeline on the bundled example (`examples/demo`, a small Rust crate
//! with a real CRLF bug and its failing test), in a scratch git repository, with the replay
//! engine (`examples/demo-replay.yml`), offline.

use std::path::{Path, PathBuf};

use crate::git::{Repo, init_with_files};

use super::PipelineError;

/// The reproduction command of the demo.
pub const COMMAND: &str = "cargo test crlf";
/// The demo's replay file.
pub const REPLAY: &str = include_str!("../../examples/demo-replay.yml");
/// Name shown for the replay file in the evidence.
pub const REPLAY_NAME: &str = "examples/demo-replay.yml";

/// The example crate, compiled into the binary so the demo works from anywhere.
const FILES: &[(&str, &str)] = &[
    (".gitignore", include_str!("../../examples/demo/.gitignore")),
    ("Cargo.lock", include_str!("../../examples/demo/Cargo.lock")),
    ("Cargo.toml", include_str!("../../examples/demo/Cargo.toml")),
    ("README.md", include_str!("../../examples/demo/README.md")),
    ("src/lib.rs", include_str!("../../examples/demo/src/lib.rs")),
];

/// Write the example into `dir/kvconf` as a fresh git repository with one commit.
pub fn prepare(dir: &Path) -> Result<PathBuf, PipelineError> {
    let root = dir.join("kvconf");
    let files: Vec<(&str, &[u8])> = FILES.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
    let repo: Repo = init_with_files(&root, &files, "kvconf: parse key = value files")?;
    Ok(repo.root)
}
