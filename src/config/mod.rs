//! Configuration: the `.efix.yml` file layer (every field optional, unknown keys rejected),
//! loading it, and the resolved [`Config`] with every default in one place.
//!
//! Precedence is CLI > environment > file > default. After [`Config::resolve`] nothing is
//! optional and nothing reads the environment again. The environment overrides are listed in
//! `resolve`'s module doc.

mod error;
mod file;
mod load;
mod model;
pub mod resolve;
mod summary;

pub use error::{ConfigError, Origin};
pub use file::{
    AcpFile, BudgetFile, Bytes, CONFIG_VERSION, CommandsFile, Count, DiffFile, FileConfig, Millis,
    OpenaiFile, PathsFile, PromptsFile, RequiredTier, SandboxFile, SecurityFile, StringList,
    TestFile, Version, schema_json,
};
pub use load::{DEFAULT_FILE_NAME, load, parse};
pub use model::{Config, EngineKind, Env, OpenaiConfig, Overrides, PromptOverrides, TestConfig};
pub use summary::check_summary;

#[cfg(test)]
mod tests;
