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
            "`{name}` is {what}, so it is refused unless `commands.allow` in .efix.yml lists \
             `{name}` by name"
        ),
    };
    if SHELLS.contains(&name) {
        return Err(refusal(
            RULE_SHELL,
            "a shell and would run any command it is given",
        ));
    }
    if WRAPPERS.contains(&name) {
        return Err(refusal(
            RULE_WRAPPER,
            "a wrapper that runs whatever program it is given",
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    fn refusal(command: &str, allowed: &[&str]) -> CommandRefusal {
        check(command, &allow(allowed)).unwrap_err()
    }

    #[test]
    fn split_follows_shell_word_rules_without_expanding_anything() {
        assert_eq!(
            split(r#"cargo test -p "my parser" -- 'crlf $HOME' a\ b | tee out"#).unwrap(),
            [
                "cargo",
                "test",
                "-p",
                "my parser",
                "--",
                "crlf $HOME",
                "a b",
                "|",
                "tee",
                "out"
            ]
        );
    }

    #[test]
    fn empty_and_blank_commands_are_refused_as_empty() {
        let refusals = [split(""), split("  \t\n"), split("# only a comment")]
            .map(|result| result.unwrap_err().rule);
        assert_eq!(refusals, [RULE_EMPTY, RULE_EMPTY, RULE_EMPTY]);
    }

    #[test]
    fn unbalanced_quotes_are_refused_with_their_own_rule() {
        insta::assert_json_snapshot!(split(r#"pytest -k "parser"#).unwrap_err(), @r#"
        {
          "rule": "command.unbalanced-quotes",
          "program": "",
          "message": "cannot split \"pytest -k \\\"parser\": a quote is not closed or the command ends in a backslash; balance the quotes"
        }
        "#);
    }

    #[test]
    fn allowed_program_passes_and_returns_argv() {
        assert_eq!(
            check("cargo test", &allow(&["cargo"])).unwrap(),
            ["cargo", "test"]
        );
    }

    #[test]
    fn a_path_is_checked_by_its_basename() {
        let allowed = allow(&["jest", "cargo"]);
        assert_eq!(
            [
                check("./node_modules/.bin/jest --ci", &allowed).is_ok(),
                check("/usr/local/bin/cargo test", &allowed).is_ok(),
                check("./node_modules/.bin/bash -c x", &allowed).is_ok(),
            ],
            [true, true, false]
        );
    }

    #[test]
    fn shells_are_refused_unless_listed_by_name() {
        let refused = refusal("bash -c 'rm -rf /'", &["cargo"]);
        assert_eq!(
            check("bash -c 'echo hi'", &allow(&["bash"])).unwrap(),
            ["bash", "-c", "echo hi"]
        );
        insta::assert_json_snapshot!(refused, @r#"
        {
          "rule": "command.shell",
          "program": "bash",
          "message": "`bash` is a shell and would run any command it is given, so it is refused unless `commands.allow` in .efix.yml lists `bash` by name"
        }
        "#);
    }

    #[test]
    fn every_shell_and_wrapper_gets_its_rule() {
        let rules: Vec<(String, String)> = SHELLS
            .iter()
            .chain(WRAPPERS)
            .map(|program| {
                let refused = refusal(&format!("/bin/{program} cargo test"), &["cargo"]);
                (refused.program, refused.rule)
            })
            .collect();
        insta::assert_snapshot!(
            rules.iter().map(|(p, r)| format!("{p} {r}")).collect::<Vec<_>>().join("\n"),
            @r"
        /bin/sh command.shell
        /bin/bash command.shell
        /bin/dash command.shell
        /bin/zsh command.shell
        /bin/fish command.shell
        /bin/ksh command.shell
        /bin/csh command.shell
        /bin/tcsh command.shell
        /bin/env command.wrapper
        /bin/sudo command.wrapper
        /bin/su command.wrapper
        /bin/doas command.wrapper
        /bin/xargs command.wrapper
        /bin/nohup command.wrapper
        /bin/setsid command.wrapper
        /bin/timeout command.wrapper
        /bin/nice command.wrapper
        /bin/stdbuf command.wrapper
        /bin/chroot command.wrapper
        /bin/busybox command.wrapper
        "
        );
    }

    #[test]
    fn wrapper_refusal_names_the_program_and_the_config_key() {
        insta::assert_snapshot!(refusal("env FOO=1 cargo test", &["cargo"]).to_string(), @"`env` is a wrapper that runs whatever program it is given, so it is refused unless `commands.allow` in .efix.yml lists `env` by name (command.wrapper)");
    }

    #[test]
    fn unlisted_program_refusal_lists_what_is_allowed() {
        insta::assert_json_snapshot!(refusal("rm -rf target", &["cargo", "make"]), @r#"
        {
          "rule": "command.not-allowed",
          "program": "rm",
          "message": "`rm` is not an allowed program (allowed: cargo, make); add `rm` to `commands.allow` in .efix.yml to run it"
        }
        "#);
    }

    #[test]
    fn a_trailing_slash_is_not_a_program() {
        assert_eq!(refusal("./bin/ test", &["bin"]).rule, RULE_NOT_ALLOWED);
    }

    #[test]
    fn empty_argv_is_refused_as_empty() {
        assert_eq!(
            check_argv(&[], &allow(&["cargo"])).unwrap_err().rule,
            RULE_EMPTY
        );
    }
}
