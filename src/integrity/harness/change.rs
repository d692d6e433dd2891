//! The one question the patch check and Prevent ask: does this change touch the harness, and
//! which part of it.

use super::{changed_sections, defining_command, harness_file};

/// What part of the harness a change to `path` touches, in words that follow "`path` is part
/// of the test harness" in a refusal message (`pytest configuration`, `its "scripts" field`,
/// `it defines \`make test\`, a command efix runs`), or `None` when the change leaves the
/// harness alone.
///
/// `before` and `after` are the file's contents (`None` when absent); `commands` are the
/// commands efix runs (the reproduction and the suites), whose defining files count only when
/// one of them uses it.
pub fn harness_change(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    commands: &[String],
) -> Option<String> {
    if let Some(what) = harness_file(path) {
        return Some(what.to_owned());
    }
    if let Some(command) = defining_command(path, commands) {
        return Some(format!("it defines `{command}`, a command efix runs"));
    }
    changed_sections(path, before, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_changes_are_named_by_what_they_touch() {
        let commands = vec!["make test".to_owned()];
        let got = [
            harness_change("tests/conftest.py", Some(""), Some("x"), &commands),
            harness_change("Makefile", Some("a"), Some("b"), &commands),
            harness_change(
                "package.json",
                Some(r#"{"scripts":{"test":"mocha"}}"#),
                Some(r#"{"scripts":{"test":"mocha test/ok.js"}}"#),
                &commands,
            ),
            harness_change("src/lib.rs", Some("a"), Some("b"), &commands),
        ];
        assert_eq!(
            got,
            [
                Some("pytest configuration".to_owned()),
                Some("it defines `make test`, a command efix runs".to_owned()),
                Some("its \"scripts\" field".to_owned()),
                None,
            ]
        );
    }
}
