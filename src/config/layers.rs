//! The building blocks of resolution: a value with the layer it came from, the layers of one
//! key (command line, environment, file, default), the checks every value passes, and the
//! paths and secrets read from efix's own environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{ConfigError, Origin};
use super::file::StringList;
use super::model::Env;
use crate::runner::Secret;

/// Largest accepted head or tail capture per stream.
pub const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Every `author_association` value GitHub sends.
pub const AUTHOR_ASSOCIATIONS: &[&str] = &[
    "COLLABORATOR",
    "CONTRIBUTOR",
    "FIRST_TIMER",
    "FIRST_TIME_CONTRIBUTOR",
    "MANNEQUIN",
    "MEMBER",
    "NONE",
    "OWNER",
];

/// A value and where it came from.
pub(super) struct Picked<T> {
    pub(super) value: T,
    pub(super) origin: Origin,
}

/// The layers of one key, highest precedence first.
pub(super) struct Layers<'a> {
    pub(super) file_origin: Origin,
    pub(super) env: &'a Env,
}

impl Layers<'_> {
    pub(super) fn pick<T>(
        &self,
        cli: Option<(T, &'static str)>,
        env: Option<(T, &'static str)>,
        file: Option<T>,
        default: T,
    ) -> Picked<T> {
        if let Some((value, flag)) = cli {
            return Picked {
                value,
                origin: Origin::Cli(flag),
            };
        }
        if let Some((value, name)) = env {
            return Picked {
                value,
                origin: Origin::Env(name),
            };
        }
        match file {
            Some(value) => Picked {
                value,
                origin: self.file_origin.clone(),
            },
            None => Picked {
                value: default,
                origin: Origin::Default,
            },
        }
    }

    pub(super) fn file<T>(&self, file: Option<T>, default: T) -> Picked<T> {
        self.pick(None, None, file, default)
    }

    /// A non-empty UTF-8 environment override.
    pub(super) fn env_text(
        &self,
        name: &'static str,
    ) -> Result<Option<(String, &'static str)>, ConfigError> {
        let Some(value) = self.env.get(name) else {
            return Ok(None);
        };
        if value.is_empty() {
            return Ok(None);
        }
        match value.to_str() {
            Some(text) => Ok(Some((text.to_owned(), name))),
            None => Err(ConfigError::EnvValue {
                name,
                value: value.to_string_lossy().into_owned(),
                expected: "UTF-8 text".to_owned(),
            }),
        }
    }

    pub(super) fn env_number<T: std::str::FromStr>(
        &self,
        name: &'static str,
        expected: &str,
    ) -> Result<Option<(T, &'static str)>, ConfigError> {
        let Some((text, name)) = self.env_text(name)? else {
            return Ok(None);
        };
        match text.trim().parse() {
            Ok(value) => Ok(Some((value, name))),
            Err(_) => Err(ConfigError::EnvValue {
                name,
                value: text,
                expected: expected.to_owned(),
            }),
        }
    }
}

pub(super) fn millis(value: Option<super::file::Millis>) -> Option<Duration> {
    value.map(|m| Duration::from_millis(m.0))
}

pub(super) fn list(value: Option<StringList>) -> Option<Vec<String>> {
    value.map(|l| l.0)
}

pub(super) fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) fn out_of_range(key: &str, origin: &Origin, problem: String) -> ConfigError {
    ConfigError::OutOfRange {
        key: key.to_owned(),
        origin: origin.clone(),
        problem,
    }
}

pub(super) fn check_duration(
    key: &str,
    picked: &Picked<Duration>,
    min: Duration,
    max: Duration,
) -> Result<Duration, ConfigError> {
    let value = picked.value;
    if value < min || value > max {
        return Err(out_of_range(
            key,
            &picked.origin,
            format!(
                "{} ms is out of range; expected {} to {} milliseconds",
                value.as_millis(),
                min.as_millis(),
                max.as_millis()
            ),
        ));
    }
    Ok(value)
}

pub(super) fn check_count(
    key: &str,
    picked: &Picked<u32>,
    min: u32,
    max: u32,
    unit: &str,
) -> Result<u32, ConfigError> {
    let value = picked.value;
    if value < min || value > max {
        return Err(out_of_range(
            key,
            &picked.origin,
            format!("{value} is out of range; expected {min} to {max} {unit}"),
        ));
    }
    Ok(value)
}

pub(super) fn check_bytes(key: &str, picked: &Picked<u64>, min: u64) -> Result<usize, ConfigError> {
    let value = picked.value;
    if value < min || value > MAX_OUTPUT_BYTES {
        return Err(out_of_range(
            key,
            &picked.origin,
            format!(
                "{value} bytes is out of range; expected {min} to {MAX_OUTPUT_BYTES} bytes (64 MiB)"
            ),
        ));
    }
    usize::try_from(value).map_err(|_| {
        out_of_range(
            key,
            &picked.origin,
            format!("{value} bytes does not fit in memory"),
        )
    })
}

pub(super) fn check_text(key: &str, picked: &Picked<String>) -> Result<String, ConfigError> {
    if picked.value.trim().is_empty() {
        return Err(out_of_range(
            key,
            &picked.origin,
            "is empty; expected a value".to_owned(),
        ));
    }
    Ok(picked.value.clone())
}

/// Each entry must be a bare program name, because the allowlist compares basenames.
pub(super) fn check_programs(
    key: &str,
    picked: &Picked<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    for (index, name) in picked.value.iter().enumerate() {
        if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
            return Err(out_of_range(
                &format!("{key}[{index}]"),
                &picked.origin,
                format!(
                    "{name:?} is not a program name; expected a bare name such as `cargo` (paths are matched by their basename)"
                ),
            ));
        }
    }
    Ok(picked.value.clone())
}

pub(super) fn check_env_name(key: &str, name: &str, origin: &Origin) -> Result<(), ConfigError> {
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return Ok(());
    }
    Err(out_of_range(
        key,
        origin,
        format!("{name:?} is not an environment variable name; expected letters, digits and `_`"),
    ))
}

pub(super) fn check_env_names(
    key: &str,
    picked: &Picked<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    for (index, name) in picked.value.iter().enumerate() {
        check_env_name(&format!("{key}[{index}]"), name, &picked.origin)?;
    }
    Ok(picked.value.clone())
}

pub(super) fn check_globs(
    key: &str,
    picked: &Picked<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    for (index, glob) in picked.value.iter().enumerate() {
        if let Err(err) = globset::Glob::new(glob) {
            return Err(out_of_range(
                &format!("{key}[{index}]"),
                &picked.origin,
                format!(
                    "{glob:?} is not a valid glob ({}); expected a pattern such as `src/**`",
                    err.kind()
                ),
            ));
        }
    }
    Ok(picked.value.clone())
}

/// A command string must split into a non-empty argv; the allowlist is checked when it runs.
pub(super) fn check_command(key: &str, command: &str, origin: &Origin) -> Result<(), ConfigError> {
    crate::policy::command::split(command)
        .map(|_| ())
        .map_err(|refusal| out_of_range(key, origin, refusal.message))
}

/// Association names are compared in GitHub's upper case; a name GitHub never sends is a typo
/// that would silently lock everyone out (or in), so it is an error.
pub(super) fn check_associations(
    key: &str,
    picked: &Picked<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    picked
        .value
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let upper = name.trim().to_ascii_uppercase();
            if AUTHOR_ASSOCIATIONS.contains(&upper.as_str()) {
                Ok(upper)
            } else {
                Err(out_of_range(
                    &format!("{key}[{index}]"),
                    &picked.origin,
                    format!(
                        "{name:?} is not an author association; expected one of {}",
                        AUTHOR_ASSOCIATIONS.join(", ")
                    ),
                ))
            }
        })
        .collect()
}

/// A trailing slash is dropped so engines can append `/chat/completions` without doubling it.
pub(super) fn check_url(key: &str, picked: &Picked<String>) -> Result<String, ConfigError> {
    let url = picked.value.trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() <= "https://".len()
    {
        return Err(out_of_range(
            key,
            &picked.origin,
            format!(
                "{:?} is not an HTTP URL; expected something like `https://api.openai.com/v1`",
                picked.value
            ),
        ));
    }
    Ok(url.to_owned())
}

pub(super) fn join_prompt(
    repo: &Path,
    path: Option<String>,
    key: &str,
    origin: &Origin,
) -> Result<Option<PathBuf>, ConfigError> {
    match path {
        None => Ok(None),
        Some(path) if path.trim().is_empty() => Err(out_of_range(
            key,
            origin,
            "is empty; expected a path relative to the repository".to_owned(),
        )),
        Some(path) => Ok(Some(repo.join(path))),
    }
}

/// A `sandbox.writable` entry: absolute, or `~/...` under `HOME`.
pub(super) fn writable_path(
    key: &str,
    path: &str,
    origin: &Origin,
    env: &Env,
) -> Result<PathBuf, ConfigError> {
    if let Some(rest) = path.strip_prefix("~/") {
        let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) else {
            return Err(out_of_range(
                key,
                origin,
                format!("{path:?} starts with `~/` but HOME is not set; write an absolute path"),
            ));
        };
        return Ok(Path::new(home).join(rest));
    }
    if Path::new(path).is_absolute() {
        return Ok(PathBuf::from(path));
    }
    Err(out_of_range(
        key,
        origin,
        format!(
            "{path:?} is not an absolute path; expected a path such as `/opt/cache` or \
             `~/.cache/tool` (the repository is always writable)"
        ),
    ))
}

/// The package and build caches commands may write by default, from efix's environment:
/// cargo's registry and git checkouts with the lock and last-use files cargo keeps beside
/// them (never `$CARGO_HOME` itself, where `config.toml` and `bin/` would let a command plant
/// code for later steps), npm's cache, pip's and uv's caches, go's build and module caches.
pub(super) fn default_writable(env: &Env) -> Vec<PathBuf> {
    let var = |name: &str| {
        env.get(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let Some(home) = var("HOME") else {
        return Vec::new();
    };
    let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    let cargo = var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo"));
    let go_path = var("GOPATH").unwrap_or_else(|| home.join("go"));
    let mut paths: Vec<PathBuf> = [
        "registry",
        "git",
        ".package-cache",
        ".package-cache-mutate",
        ".global-cache",
    ]
    .iter()
    .map(|name| cargo.join(name))
    .collect();
    paths.push(var("npm_config_cache").unwrap_or_else(|| home.join(".npm")));
    paths.push(var("PIP_CACHE_DIR").unwrap_or_else(|| cache.join("pip")));
    paths.push(var("UV_CACHE_DIR").unwrap_or_else(|| cache.join("uv")));
    paths.push(var("GOCACHE").unwrap_or_else(|| cache.join("go-build")));
    paths.push(var("GOMODCACHE").unwrap_or_else(|| go_path.join("pkg").join("mod")));
    // A shared cargo target directory is passed to commands; cargo must be able to build
    // there (a relative one is inside the repository, which is writable anyway).
    paths.extend(var("CARGO_TARGET_DIR"));
    paths
}

/// The values of the `redact` names in efix's own environment; unset, empty and non-UTF-8
/// values are skipped (an empty secret would match everywhere).
pub(super) fn secrets(redact: &[String], env: &Env) -> Vec<Secret> {
    redact
        .iter()
        .filter_map(|name| {
            let value = env.get(name)?;
            if value.is_empty() {
                return None;
            }
            let Some(value) = value.to_str() else {
                tracing::warn!(name = %name, "not redacting a secret that is not UTF-8");
                return None;
            };
            Some(Secret {
                name: name.clone(),
                value: value.to_owned(),
            })
        })
        .collect()
}
