//! [`ConfigError`]: everything that can be wrong with a config, worded for the user who has to
//! fix it, plus the translation of serde/YAML errors into it.
//!
//! Every message names where the problem is (`file:line:column` when the file says it, or the
//! environment variable or command-line flag), the full key path, and what was expected.

use std::path::PathBuf;

/// Where a resolved value came from; named in validation errors so the user knows what to edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Built-in default (only reachable if a default itself is invalid, i.e. a bug).
    Default,
    /// The config file at this path.
    File(PathBuf),
    /// This environment variable.
    Env(&'static str),
    /// This command-line flag.
    Cli(&'static str),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("the built-in default"),
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Env(name) => write!(f, "environment variable {name}"),
            Origin::Cli(flag) => write!(f, "command-line flag {flag}"),
        }
    }
}

/// Errors of loading and resolving the configuration. All of them mean "exit 2 and show the
/// message": none is retryable without the user editing something.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--config FILE` names a file that does not exist; the user must fix the path.
    #[error(
        "read config file {}: no such file; pass an existing file to --config, or drop --config \
         to use .efix.yml at the repository root (or the defaults when there is none)",
        path.display()
    )]
    NotFound { path: PathBuf },
    /// The config file exists but cannot be read (permissions, a directory, not UTF-8).
    #[error("read config file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is empty or holds only comments; it must at least say `version: 1`.
    #[error("parse {}: the file is empty; expected at least `version: 1`", path.display())]
    Empty { path: PathBuf },
    /// The file is not valid YAML, or its top level is not a mapping.
    #[error("parse {}: {message}", place(path, *line, *column))]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A key that efix does not know (often a typo); the user should rename or remove it.
    #[error(
        "parse {}: unknown key `{key}`; expected {}",
        place(path, *line, *column),
        expected_keys(expected)
    )]
    UnknownKey {
        path: PathBuf,
        line: usize,
        column: usize,
        key: String,
        expected: Vec<String>,
    },
    /// A key whose value has the wrong type or an unaccepted value.
    #[error(
        "parse {}: `{key}` has {found}; expected {expected}",
        place(path, *line, *column)
    )]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        key: String,
        found: String,
        expected: String,
    },
    /// The file has no `version` key; the user should add `version: 1` at the top.
    #[error("parse {}: missing key `version`; expected `version: 1` at the top level", path.display())]
    MissingVersion { path: PathBuf },
    /// An environment override holds something that is not a value of the right kind.
    #[error("read environment variable {name}: found {value:?}; expected {expected}")]
    EnvValue {
        name: &'static str,
        value: String,
        expected: String,
    },
    /// A value, wherever it came from, is zero, absurdly large or otherwise unusable.
    #[error("validate `{key}` from {origin}: {problem}")]
    OutOfRange {
        key: String,
        origin: Origin,
        problem: String,
    },
}

/// `file:line:column`, or just `file` when the YAML parser gave no position (line 0).
fn place(path: &std::path::Path, line: usize, column: usize) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}:{column}", path.display())
    }
}

fn expected_keys(keys: &[String]) -> String {
    match keys {
        [] => "no keys here".to_owned(),
        [one] => one.clone(),
        many => format!("one of {}", many.join(", ")),
    }
}

/// What a serde message says, as far as we need it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SerdeProblem {
    /// `unknown field`: the unknown name and the accepted names.
    UnknownField { name: String, expected: Vec<String> },
    /// `invalid type`, `invalid value`, `unknown variant`, `invalid length`.
    Invalid { found: String, expected: String },
    /// `missing field`.
    MissingField { name: String },
    /// Anything else (YAML syntax errors among them).
    Other(String),
}

/// The phrases serde's own `de::Error` helpers start with; everything before them in a
/// `yaml_serde` message is its path prefix, everything after ` at line` its location.
const SERDE_PHRASES: &[&str] = &[
    "unknown field",
    "invalid type",
    "invalid value",
    "unknown variant",
    "missing field",
    "invalid length",
    "duplicate field",
];

/// Take apart a `yaml_serde` error message. It depends on serde's wording (stable for years);
/// the snapshot tests of every error fail if it changes.
pub(crate) fn classify(message: &str) -> SerdeProblem {
    let body = match message.rfind(" at line ") {
        Some(at) => &message[..at],
        None => message,
    };
    if body.contains("more than one document") {
        return SerdeProblem::Other(
            "the file holds more than one YAML document; keep only one (remove the extra `---`)"
                .to_owned(),
        );
    }
    let Some(start) = SERDE_PHRASES.iter().filter_map(|p| body.find(p)).min() else {
        return SerdeProblem::Other(body.to_owned());
    };
    let body = &body[start..];
    let ticked: Vec<String> = body
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    if body.starts_with("unknown field") {
        let mut names = ticked.into_iter();
        let name = names.next().unwrap_or_default();
        return SerdeProblem::UnknownField {
            name,
            expected: names.collect(),
        };
    }
    if body.starts_with("missing field") {
        return SerdeProblem::MissingField {
            name: ticked.into_iter().next().unwrap_or_default(),
        };
    }
    if body.starts_with("unknown variant") {
        let mut names = ticked.into_iter();
        let found = format!("`{}`", names.next().unwrap_or_default());
        return SerdeProblem::Invalid {
            found,
            expected: expected_keys(&names.collect::<Vec<_>>()),
        };
    }
    if body.starts_with("duplicate field") {
        let name = ticked.into_iter().next().unwrap_or_default();
        return SerdeProblem::Other(format!("key `{name}` appears twice; keep only one"));
    }
    // `invalid type: X, expected Y` and `invalid value: X, expected Y`.
    let rest = body.split_once(": ").map_or(body, |(_, rest)| rest);
    match rest.split_once(", expected ") {
        Some((found, expected)) => SerdeProblem::Invalid {
            found: with_article(found),
            expected: expected.to_owned(),
        },
        None => SerdeProblem::Other(body.to_owned()),
    }
}

/// serde says `map`, `sequence`, `string "x"`; a sentence wants "a mapping", "a list", "a
/// string "x"".
fn with_article(found: &str) -> String {
    match found {
        "map" => "a mapping".to_owned(),
        "sequence" => "a list".to_owned(),
        "unit value" => "no value".to_owned(),
        _ if found.starts_with('`') => found.to_owned(),
        _ if found.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {found}"),
        _ => format!("a {found}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_takes_unknown_field_and_accepted_names_from_serde_wording() {
        let problem = classify(
            "openai: unknown field `timeot-ms`, expected one of `model`, `timeout-ms` at line 3 column 3",
        );
        assert_eq!(
            problem,
            SerdeProblem::UnknownField {
                name: "timeot-ms".into(),
                expected: vec!["model".into(), "timeout-ms".into()],
            }
        );
    }

    #[test]
    fn classify_splits_invalid_type_into_found_and_expected() {
        let problem = classify(
            "openai.timeout-ms: invalid type: string \"abc\", expected an integer number of milliseconds at line 3 column 15",
        );
        assert_eq!(
            problem,
            SerdeProblem::Invalid {
                found: "a string \"abc\"".into(),
                expected: "an integer number of milliseconds".into(),
            }
        );
    }

    #[test]
    fn classify_keeps_unrecognised_messages_whole_without_location() {
        let problem = classify("mapping values are not allowed in this context at line 2 column 8");
        assert_eq!(
            problem,
            SerdeProblem::Other("mapping values are not allowed in this context".into())
        );
    }
}
