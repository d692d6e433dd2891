//! The runner through its public interface, as the pipeline and `efix exec` use it: the
//! acceptance scenarios of the foundation issue that do not need the CLI.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::Duration;

use efix::runner::{self, CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, RunnerSettings, Secret};

fn settings(env: Vec<(OsString, OsString)>, secrets: Vec<Secret>) -> RunnerSettings {
    RunnerSettings {
        env,
        output_head_bytes: DEFAULT_OUTPUT_HEAD_BYTES,
        output_tail_bytes: runner::DEFAULT_OUTPUT_TAIL_BYTES,
        term_grace: Duration::from_millis(500),
        secrets,
    }
}

fn spec(argv: &[&str], timeout: Duration) -> CommandSpec {
    CommandSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        timeout,
    }
}

#[test]
fn shell_with_background_sleep_times_out_as_an_outcome() {
    let (env, _) = runner::child_env(std::env::vars_os(), &[]);
    let argv = ["sh", "-c", "sleep 60.4242 & sleep 60.4242"];
    let outcome = runner::run(&spec(&argv, Duration::from_secs(2)), &settings(env, vec![]));
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => panic!("run: {error}"),
    };
    let value = serde_json::to_value(&outcome).unwrap_or_default();
    assert_eq!(
        (&value["timed_out"], &value["exit_code"], &value["signal"]),
        (
            &serde_json::json!(true),
            &serde_json::Value::Null,
            &serde_json::json!("SIGTERM")
        )
    );
}

#[test]
fn secret_and_tokens_from_the_parent_neither_reach_the_child_nor_the_output() {
    let secret = "tok-1234567890-abcdef";
    let parent = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("GITHUB_TOKEN", secret.to_owned()),
        ("OPENAI_API_KEY", secret.to_owned()),
        ("CI_TOKEN", secret.to_owned()),
        ("PRINTED", secret.to_owned()),
    ]
    .map(|(k, v)| (OsString::from(k), OsString::from(v)));
    let (env, dropped) = runner::child_env(parent, &["PRINTED".to_owned()]);
    let secrets = vec![Secret {
        name: "GITHUB_TOKEN".to_owned(),
        value: secret.to_owned(),
    }];
    let path = std::env::var("PATH").unwrap_or_default();
    let outcome = runner::run(
        &spec(&["env"], Duration::from_secs(60)),
        &settings(env, secrets),
    );
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => panic!("run: {error}"),
    };
    assert_eq!(
        (dropped, outcome.stdout, outcome.redactions),
        (
            Vec::<String>::new(),
            format!("PATH={path}\nPRINTED=[REDACTED:env:GITHUB_TOKEN]\n"),
            BTreeMap::from([("env:GITHUB_TOKEN".to_owned(), 1)])
        )
    );
}
