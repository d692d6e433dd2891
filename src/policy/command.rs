//! Command policy: argv splitting with shlex and the program allowlist.
//!
//! A command string is split like a POSIX shell would split words, but it is never given to a
//! shell: no expansion, no pipes, no redirections (those characters stay literal arguments).
//! The program is then checked by its basename, so `./node_modules/.bin/jest` is checked as
//! `jest` and `/usr/bin/cargo` as `cargo`; a path therefore cannot smuggle in a program that is
//! not allowed by name. Shells and wrappers that run another program given as an argument are
//! refused unless listed in `commands.allow` by name, since allowing them would allow anything.
//!
//! This module decides; it runs nothing. Refusals are data ([`CommandRefusal`]) recorded in
//! the evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Shells: any of them runs arbitrary code from its arguments.
pub const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "fish", "ksh", "csh", "tcsh"];

/// Wrappers: each runs another program named in its arguments (or with other privileges), so
/// allowing one would bypass the allowlist.
pub const WRAPPERS: &[&str] = &[
    "env", "sudo", "su", "doas", "xargs", "nohup", "setsid", "timeout", "nice", "stdbuf", "chroot",
    "busybox",
];

/// Rule id: the command string is empty or only whitespace.
pub const RULE_EMPTY: &str = "command.empty";
/// Rule id: the command string has an unbalanced quote or a trailing backslash.
pub const RULE_UNBALANCED: &str = "command.unbalanced-quotes";
/// Rule id: the program is a shell not listed by name.
pub const RULE_SHELL: &str = "command.shell";
/// Rule id: the program is a wrapper not listed by name.
pub const RULE_WRAPPER: &str = "command.wrapper";
/// Rule id: the program is not in the allowlist.
pub const RULE_NOT_ALLOWED: &str = "command.not-allowed";

/// Why a command may not run; recorded in the evidence and shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandRefusal {
    /// Stable rule id, e.g. `command.shell`.
    pub rule: String,
    /// The program as written (empty when there is none).
    pub program: String,
    /// What is wrong and how to allow it.
    pub message: String,
}

impl std::fmt::Display for CommandRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.rule)
    }
}

/// Split a command string into argv with shell word rules, without a shell.
pub fn split(command: &str) -> Result<Vec<String>, CommandRefusal> {
    if command.trim().is_empty() {
        return Err(CommandRefusal {
            rule: RULE_EMPTY.to_owned(),
            program: String::new(),
            message: "the command is empty; give the program to run and its arguments".to_owned(),
        });
    }
    match shlex::split(command) {
        Some(argv) if !argv.is_empty() => Ok(argv),
        Some(_) => Err(CommandRefusal {
            rule: RULE_EMPTY.to_owned(),
            program: String::new(),
            message: "the command has no words once comments are removed; give the program to run"
                .to_owned(),
        }),
        None => Err(CommandRefusal {
            rule: RULE_UNBALANCED.to_owned(),
            program: String::new(),
            message: format!(
                "cannot split {command:?}: a quote is not closed or the command ends in a \
                 backslash; balance the quotes"
            ),
        }),
    }
}

/// The last path component of a program: what the allowlist compares.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Check argv against the allowlist (`commands.allow`).
pub fn check_argv(argv: &[String], allow: &[String]) -> Result<(), CommandRefusal> {
    let Some(program) = argv.first() else {
        return Err(CommandRefusal {
            rule: RULE_EMPTY.to_owned(),
            program: String::new(),
            message: "the command is empty; give the program to run and its arguments".to_owned(),
        });
    };
    let name = basename(program);
    if name.is_empty() {
        return Err(CommandRefusal {
            rule: RULE_NOT_ALLOWED.to_owned(),
            program: program.clone(),
            message: format!("`{program}` names a directory, not a program"),
        });
    }
    if allow.iter().any(|allowed| allowed == name) {
        return Ok(());
    }
    let refusal = |rule: &str, what: &str| CommandRefusal {
        rule: rule.to_owned(),
        program: program.clone(),
        message: format!(
            "`{name}` is {what}, which would run anything it is given, so it is refused unless \
             `commands.allow` in .efix.yml lists `{name}` by name"
        ),
    };
    if SHELLS.contains(&name) {
        return Err(refusal(RULE_SHELL, "a shell"));
    }
    if WRAPPERS.contains(&name) {
        return Err(refusal(RULE_WRAPPER, "a wrapper that runs another program"));
    }
    Err(CommandRefusal {
        rule: RULE_NOT_ALLOWED.to_owned(),
        program: program.clone(),
        message: format!(
            "`{name}` is not an allowed program (allowed: {}); add `{name}` to `commands.allow` \
             in .efix.yml to run it",
            if allow.is_empty() {
                "none".to_owned()
            } else {
                allow.join(", ")
            }
        ),
    })
}

/// [`split`] then [`check_argv`].
pub fn check(command: &str, allow: &[String]) -> Result<Vec<String>, CommandRefusal> {
    let argv = split(command)?;
    check_argv(&argv, allow)?;
    Ok(argv)
}
