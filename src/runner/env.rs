//! The child environment: cleared, then an explicit pass-through list, and never a variable
//! that looks like a credential.
//!
//! It does not read efix's own environment (the caller passes it in, so config resolution
//! stays the only place that does) and it does not decide which values are redacted.

use std::ffi::OsString;

/// Names passed to every child unless dropped by [`is_never_passed`]; `LC_*` is passed too.
///
/// The list is what build and test tools need to find themselves and their caches: the
/// basics (`PATH`, `HOME`, `USER`, `LOGNAME`, `LANG`, `TERM`, `TMPDIR`, `TZ`, `CI`,
/// `XDG_CACHE_HOME`), Rust (`CARGO_HOME`, `CARGO_TARGET_DIR`, `RUSTUP_HOME`,
/// `RUSTUP_TOOLCHAIN`, `RUSTFLAGS`), Go (`GOPATH`, `GOCACHE`, `GOMODCACHE`, `GOROOT`,
/// `GOFLAGS`), Python (`VIRTUAL_ENV`, `PYENV_ROOT`, `PYTHONPATH`), JavaScript (`NODE_PATH`,
/// `NVM_DIR`, `PNPM_HOME`) and Java (`JAVA_HOME`). Anything else must be listed in
/// `sandbox.env-pass`.
pub const DEFAULT_ENV_PASS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TMPDIR",
    "TZ",
    "CI",
    "XDG_CACHE_HOME",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOROOT",
    "GOFLAGS",
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYTHONPATH",
    "NODE_PATH",
    "NVM_DIR",
    "PNPM_HOME",
    "JAVA_HOME",
];

/// Whether a variable is never handed to a child, even when listed explicitly: GitHub's
/// tokens and workflow-command files, `ACTIONS_*` and `INPUT_*` (see [`is_github_channel`]),
/// and any name containing `TOKEN`, `SECRET`, `KEY` or `PASSWORD` in any case.
pub fn is_never_passed(name: &str) -> bool {
    const FRAGMENTS: &[&str] = &["TOKEN", "SECRET", "KEY", "PASSWORD"];
    let upper = name.to_ascii_uppercase();
    is_github_channel(name) || FRAGMENTS.iter().any(|f| upper.contains(f))
}

/// Whether a variable carries GitHub's token or the runner's own channels: `GITHUB_TOKEN`,
/// `GH_TOKEN`, the workflow-command files (`GITHUB_ENV`, `GITHUB_OUTPUT`, ...), `ACTIONS_*`
/// and `INPUT_*` (runner internals and action inputs, which often carry tokens). No child may
/// get these, not even an ACP agent that is given its own credentials.
pub fn is_github_channel(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
    ];
    const PREFIXES: &[&str] = &["ACTIONS_", "INPUT_"];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p))
}

fn is_listed(name: &str, extra_pass: &[String]) -> bool {
    DEFAULT_ENV_PASS.contains(&name)
        || name.starts_with("LC_")
        || extra_pass.iter().any(|extra| extra == name)
}

/// Build the child environment from efix's own environment: cleared, then the pass-through
/// list plus `extra_pass`; returns the environment (sorted) and the listed names that were
/// dropped because they look like credentials (sorted, each logged with `tracing::warn!`).
///
/// A name in `extra_pass` that is never passed is reported even when it is not set, since the
/// listing itself is the mistake the user should hear about. Names that are not valid UTF-8
/// are never passed.
pub fn child_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    extra_pass: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env = Vec::new();
    let mut dropped: Vec<String> = extra_pass
        .iter()
        .filter(|name| is_never_passed(name))
        .cloned()
        .collect();
    for (name, value) in parent {
        let Some(text) = name.to_str() else { continue };
        if !is_listed(text, extra_pass) {
            continue;
        }
        if is_never_passed(text) {
            dropped.push(text.to_owned());
            continue;
        }
        env.push((name, value));
    }
    env.sort();
    dropped.sort();
    dropped.dedup();
    for name in &dropped {
        tracing::warn!(name = %name, "not passing a credential-like variable to commands");
    }
    (env, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn child_env_keeps_only_listed_names_and_drops_credentials() {
        let parent = vars(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("OPENAI_API_KEY", "sk-x"),
            ("FOO_TOKEN", "t"),
            ("MY_SECRET", "s"),
            ("UNLISTED", "u"),
            ("MY_TOOL_DIR", "/opt/tool"),
        ]);
        let extra = vec![
            "MY_SECRET".to_owned(),
            "MY_TOOL_DIR".to_owned(),
            "GH_TOKEN".to_owned(),
        ];
        let (env, dropped) = child_env(parent, &extra);
        assert_eq!(
            env,
            vars(&[
                ("HOME", "/home/u"),
                ("LC_ALL", "C.UTF-8"),
                ("MY_TOOL_DIR", "/opt/tool"),
                ("PATH", "/usr/bin"),
            ])
        );
        assert_eq!(dropped, vec!["GH_TOKEN".to_owned(), "MY_SECRET".to_owned()]);
    }

    #[test]
    fn never_passed_covers_github_internals_and_credential_fragments_in_any_case() {
        let refused: Vec<&str> = [
            "GITHUB_TOKEN",
            "gh_token",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_CACHE_URL",
            "INPUT_API",
            "GITHUB_ENV",
            "GITHUB_PATH",
            "GITHUB_OUTPUT",
            "GITHUB_STATE",
            "GITHUB_STEP_SUMMARY",
            "npm_token",
            "Db_Password",
            "AWS_SECRET_ACCESS_KEY",
            "SSH_KEYFILE",
            "PATH",
            "GITHUB_SHA",
            "CARGO_HOME",
        ]
        .into_iter()
        .filter(|name| is_never_passed(name))
        .collect();
        assert_eq!(
            refused,
            vec![
                "GITHUB_TOKEN",
                "gh_token",
                "ACTIONS_RUNTIME_TOKEN",
                "ACTIONS_CACHE_URL",
                "INPUT_API",
                "GITHUB_ENV",
                "GITHUB_PATH",
                "GITHUB_OUTPUT",
                "GITHUB_STATE",
                "GITHUB_STEP_SUMMARY",
                "npm_token",
                "Db_Password",
                "AWS_SECRET_ACCESS_KEY",
                "SSH_KEYFILE",
            ]
        );
    }

    #[test]
    fn default_pass_list_holds_no_credential_like_name() {
        let bad: Vec<&&str> = DEFAULT_ENV_PASS
            .iter()
            .filter(|name| is_never_passed(name))
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
    }
}
