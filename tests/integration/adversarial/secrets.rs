//! Credentials: what users actually hold, printed by a command, must never reach the
//! outcome; and a change that adds one is refused without printing it back.

use serde_json::{Value, json};

use super::Scratch;
use crate::harness::Efix;

/// `prefix` followed by `len` characters cycled from `alphabet`, built at run time so that no
/// token-shaped literal sits in the repository.
fn token(prefix: &str, alphabet: &str, len: usize) -> String {
    let body: String = alphabet
        .chars()
        .cycle()
        .skip(7)
        .step_by(3)
        .take(len)
        .collect();
    format!("{prefix}{body}")
}

const ALNUM: &str = "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0";
const HEX: &str = "0123456789abcdef";

#[test]
fn credentials_users_hold_are_redacted_from_efix_exec() {
    let scratch = Scratch::new("");
    let credentials = [
        (token("glpat-", ALNUM, 20), "gitlab-token"),
        (token("npm_", ALNUM, 36), "npm-token"),
        (token("pypi-AgEIcHlwaS5vcmc", ALNUM, 120), "pypi-token"),
        (token("AIza", ALNUM, 35), "google-api-key"),
        (token("sk_live_", ALNUM, 40), "stripe-key"),
        (token("rk_live_", ALNUM, 40), "stripe-key"),
        (token("hf_", ALNUM, 34), "huggingface-token"),
        (token("dckr_pat_", ALNUM, 27), "docker-hub-token"),
        (token("ghp_", ALNUM, 36), "github-token"),
        (token("sk-proj-", ALNUM, 48), "openai-key"),
        (token("dop_v1_", HEX, 64), "digitalocean-token"),
    ];
    let url = "postgres://app:hunter2-Pa55@db.internal:5432/app".to_owned();
    let mut argv = vec!["printf".to_owned(), "%s\\n".to_owned()];
    argv.extend(credentials.iter().map(|(value, _)| value.clone()));
    argv.push(url.clone());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let outcome = scratch.exec(&argv);
    let printed = serde_json::to_string(&outcome).unwrap();
    let mut expected: Vec<String> = credentials
        .iter()
        .map(|(_, rule)| format!("[REDACTED:{rule}]"))
        .collect();
    expected.push("postgres://[REDACTED:url-credentials]@db.internal:5432/app".to_owned());
    assert_eq!(super::lines(&outcome), expected);
    for (value, _) in &credentials {
        assert!(
            !printed.contains(value.as_str()),
            "{value} leaked: {printed}"
        );
    }
    assert!(!printed.contains("hunter2"), "{printed}");
}

#[test]
fn efix_patch_refuses_a_change_that_adds_a_token_and_never_prints_it() {
    let scratch = Scratch::new("");
    std::fs::write(scratch.root().join("settings.py"), "DEBUG = False\n").unwrap();
    let secret = token("ghp_", ALNUM, 36);
    let diff = format!(
        "--- a/settings.py\n+++ b/settings.py\n@@ -1 +1,2 @@\n DEBUG = False\n+TOKEN = \"{secret}\"\n"
    );
    let run = Efix::new()
        .args(["patch", "--repo"])
        .args([scratch.root()])
        .stdin(diff)
        .run()
        .expect_code(1);
    let result: Value = run.json();
    assert_eq!(
        (
            &result["outcome"],
            &result["issues"],
            run.stdout().contains(&secret) || run.stderr().contains(&secret),
            std::fs::read_to_string(scratch.root().join("settings.py")).unwrap(),
        ),
        (
            &json!("rejected"),
            &json!([{
                "rule": "check.secret-in-change",
                "message": "settings.py line 2 adds a string shaped like a credential \
                            (github-token); a credential must never be committed: read it \
                            from the environment at run time instead",
                "path": "settings.py",
                "line": 2
            }]),
            false,
            "DEBUG = False\n".to_owned()
        )
    );
}
