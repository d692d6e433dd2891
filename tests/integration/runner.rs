//! The runner through its public interface, as the pipeline and `efix exec` use it: the
//! acceptance scenarios of the foundation issue that do not need the CLI.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::Duration;

use efix::runner::{
    self, Access, CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, RunnerSettings, SandboxSettings, Secret,
};

fn settings(env: Vec<(OsString, OsString)>, secrets: Vec<Secret>) -> RunnerSettings {
    RunnerSettings {
        env,
        output_head_bytes: DEFAULT_OUTPUT_HEAD_BYTES,
        output_tail_bytes: runner::DEFAULT_OUTPUT_TAIL_BYTES,
        term_grace: Duration::from_millis(500),
        secrets,
        sandbox: SandboxSettings {
            helper: env!("CARGO_BIN_EXE_efix").into(),
            ..SandboxSettings::new(std::env::temp_dir())
        },
    }
}

fn spec(argv: &[&str], timeout: Duration) -> CommandSpec {
    CommandSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        timeout,
        access: Access::command(false),
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
    // The runner adds the command's private TMPDIR (also its sweep mark) and Python's cache in it.
    let own: String = outcome
        .stdout
        .lines()
        .filter(|line| {
            !["TMPDIR=", "PYTHONPYCACHEPREFIX="]
                .iter()
                .any(|own| line.starts_with(own))
        })
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        (dropped, own, outcome.redactions),
        (
            Vec::<String>::new(),
            // Without the network, package managers are told they are offline.
            format!(
                "CARGO_NET_OFFLINE=true\nGOPROXY=off\nPATH={path}\n\
                 PRINTED=[REDACTED:env:GITHUB_TOKEN]\nUV_OFFLINE=1\nnpm_config_offline=true\n"
            ),
            BTreeMap::from([("env:GITHUB_TOKEN".to_owned(), 1)])
        )
    );
}
