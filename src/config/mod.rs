//! Configuration: the `.efix.yml` file layer (every field optional, unknown keys rejected),
//! loading it, and the resolved [`Config`] with every default in one place.
//!
//! Precedence is CLI > environment > file > default. After [`Config::resolve`] nothing is
//! optional and nothing reads the environment again. The environment overrides are listed in
//! `resolve`'s module doc.

mod engine;
mod error;
mod file;
mod layers;
mod load;
mod model;
pub mod resolve;
mod summary;

pub use error::{ConfigError, Origin};
pub use file::{
    AcpFile, BudgetFile, Bytes, CONFIG_VERSION, CommandsFile, Count, DiffFile, FileConfig, FixFile,
    Millis, OpenaiFile, PathsFile, PriceFile, PromptsFile, RequiredTier, SandboxFile, SecurityFile,
    StringList, TestFile, Tokens, TriggerFile, Usd, Version, schema_json,
};
pub use load::{DEFAULT_FILE_NAME, load, parse};
pub use model::{
    AcpMode, Candidates, Config, EngineBudget, EngineKind, Env, FixFormat, OpenaiConfig,
    OpenaiFlavor, Overrides, Price, PromptOverrides, SecretsInPrompt, TestConfig, TriggerConfig,
};
pub use summary::check_summary;

#[cfg(test)]
mod tests;
