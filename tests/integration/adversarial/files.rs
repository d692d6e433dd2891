//! Writes: outside the repository (landlock), into `.git` (a read-only bind mount), into the
//! command's private `TMPDIR`, and into the repository itself.

use super::machine::machine;
use super::{Scratch, lines, missing};

#[test]
fn writes_outside_the_repository_are_refused_and_inside_allowed() {
    let scratch = Scratch::new("");
    let target = scratch.outside.join("planted");
    let script = format!(
        "echo x > '{}' 2>/dev/null; echo outside=$?; \
         echo x > inside; echo inside=$?; \
         echo x > \"$TMPDIR/t\"; echo tmpdir=$?; \
         case \"$TMPDIR\" in */tmp.*) echo private;; *) echo shared;; esac; \
         env | grep -c '^EFIX'",
        target.display()
    );
    let outcome = scratch.exec(&["sh", "-c", &script]);
    let machine = machine();
    let expected_outside = if machine.landlock {
        "outside=2"
    } else {
        "outside=0"
    };
    assert_eq!(
        (
            lines(&outcome),
            target.exists(),
            outcome["sandbox"]["landlock_abi"].is_u64(),
        ),
        (
            vec![
                expected_outside.to_owned(),
                "inside=0".to_owned(),
                "tmpdir=0".to_owned(),
                "private".to_owned(),
                // Issue 18: nothing in the environment names efix.
                "0".to_owned()
            ],
            !machine.landlock,
            machine.landlock,
        ),
        "{outcome:#}"
    );
    if !machine.landlock {
        assert!(missing(&outcome).contains("landlock:"), "{outcome:#}");
        assert_eq!(outcome["sandbox"]["writable"], serde_json::json!([]));
    }
}

#[test]
fn git_hooks_and_config_cannot_be_planted() {
    let scratch = Scratch::new("");
    let script = "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit 2>/dev/null; \
                  echo hook=$?; \
                  printf '[core]\\n\\tfsmonitor = /tmp/x\\n' >> .git/config 2>/dev/null; \
                  echo config=$?";
    let outcome = scratch.exec(&["sh", "-c", script]);
    let planted = scratch.root().join(".git/hooks/pre-commit").exists();
    let machine = machine();
    let git = scratch.root().join(".git").display().to_string();
    if machine.namespaces {
        assert_eq!(
            (
                lines(&outcome),
                planted,
                outcome["sandbox"]["read_only"].clone()
            ),
            (
                vec!["hook=2".to_owned(), "config=2".to_owned()],
                false,
                serde_json::json!([git])
            ),
            "{outcome:#}"
        );
    } else {
        assert_eq!(
            (
                lines(&outcome),
                planted,
                outcome["sandbox"]["read_only"].clone()
            ),
            (
                vec!["hook=0".to_owned(), "config=0".to_owned()],
                true,
                serde_json::json!([])
            ),
            "{outcome:#}"
        );
        assert!(missing(&outcome).contains("namespaces:"), "{outcome:#}");
    }
}
