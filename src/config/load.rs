//! Finding and parsing the config file: `--config FILE` when given, else `.efix.yml` at the
//! repository root when present, else nothing (defaults).
//!
//! It turns serde/YAML errors into [`ConfigError`]s with `file:line:column`, the full key path
//! and what was expected. It applies no defaults; that is `resolve`.

use std::path::{Path, PathBuf};

use super::error::{ConfigError, SerdeProblem, classify};
use super::file::FileConfig;

/// The config file looked for at the repository root.
pub const DEFAULT_FILE_NAME: &str = ".efix.yml";

/// Load the config: `explicit` (which must exist) or `<repo>/.efix.yml` (which may be absent:
/// `Ok(None)` means "use the defaults").
pub fn load(
    repo: &Path,
    explicit: Option<&Path>,
) -> Result<Option<(PathBuf, FileConfig)>, ConfigError> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let path = repo.join(DEFAULT_FILE_NAME);
            if !path.exists() {
                tracing::debug!(path = %path.display(), "no config file; using defaults");
                return Ok(None);
            }
            path
        }
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConfigError::NotFound { path });
        }
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let config = parse(&path, &text)?;
    Ok(Some((path, config)))
}

/// Parse config text; `path` is only used in error messages.
pub fn parse(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    let is_blank = text.lines().all(|line| {
        line.trim().is_empty() || line.trim_start().starts_with('#') || line.trim() == "---"
    });
    if is_blank {
        return Err(ConfigError::Empty {
            path: path.to_path_buf(),
        });
    }
    let deserializer = yaml_serde::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|err| translate(path, &err))
}

fn translate(path: &Path, err: &serde_path_to_error::Error<yaml_serde::Error>) -> ConfigError {
    let inner = err.inner();
    let (line, column) = inner
        .location()
        .map_or((0, 0), |at| (at.line(), at.column()));
    let key = key_path(err.path());
    let path = path.to_path_buf();
    match classify(&inner.to_string()) {
        SerdeProblem::UnknownField { name, expected } => {
            // serde_path_to_error's path already ends in the unknown key for nested maps but
            // not always at the top level, so join only when it is missing.
            let key = if key == name || key.ends_with(&format!(".{name}")) {
                key
            } else if key.is_empty() {
                name
            } else {
                format!("{key}.{name}")
            };
            ConfigError::UnknownKey {
                path,
                line,
                column,
                key,
                expected,
            }
        }
        SerdeProblem::MissingField { name } if name == "version" && key.is_empty() => {
            ConfigError::MissingVersion { path }
        }
        SerdeProblem::MissingField { name } => ConfigError::Syntax {
            path,
            line,
            column,
            message: format!("missing key `{name}`"),
        },
        SerdeProblem::Invalid { found, .. } if key.is_empty() => ConfigError::Syntax {
            path,
            line,
            column,
            message: format!(
                "the top level holds {found}; expected a mapping of keys such as `version: 1`"
            ),
        },
        SerdeProblem::Invalid { found, expected } => ConfigError::Invalid {
            path,
            line,
            column,
            key,
            found,
            expected,
        },
        SerdeProblem::Other(message) => ConfigError::Syntax {
            path,
            line,
            column,
            message,
        },
    }
}

/// `openai.timeout-ms`, `commands.allow[2]`; empty at the top level.
fn key_path(path: &serde_path_to_error::Path) -> String {
    let text = path.to_string();
    if text == "." { String::new() } else { text }
}
