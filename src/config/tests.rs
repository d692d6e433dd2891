//! Fixture-driven tests of loading and resolving: every file under
//! `tests/fixtures/config/invalid/` must fail with a snapshot-pinned message, every file under
//! `valid/` must resolve to a snapshot-pinned `Config`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

const FIXTURES: &str = "tests/fixtures/config";

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(FIXTURES).join(kind))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {kind}");
    files
}

fn env(vars: &[(&str, &str)]) -> Env {
    vars.iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

fn load_and_resolve(path: &Path, env: &Env) -> Result<Config, ConfigError> {
    let file = load(Path::new("."), Some(path))?;
    Config::resolve(
        file,
        &Overrides {
            repo: PathBuf::from("/repo"),
            ..Overrides::default()
        },
        env,
    )
}

#[test]
fn every_invalid_fixture_fails_with_a_message_naming_where_and_what_was_expected() {
    for path in fixtures("invalid") {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let err = match load_and_resolve(&path, &Env::default()) {
            Ok(config) => panic!("{name} resolved: {config:?}"),
            Err(err) => err,
        };
        insta::assert_snapshot!(format!("invalid_{name}"), err.to_string());
    }
}

#[test]
fn every_valid_fixture_resolves_to_the_pinned_config() {
    let env = env(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("RUST_BACKTRACE", "1"),
        ("NPM_TOKEN", "npm-secret"),
        ("GITHUB_TOKEN", "ghp_example"),
        ("MY_OPENAI_KEY", "sk-example"),
        ("DEPLOY_PASSWORD", ""),
    ]);
    for path in fixtures("valid") {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let config = load_and_resolve(&path, &env).unwrap();
        insta::assert_debug_snapshot!(format!("valid_{name}"), config);
    }
}

#[test]
fn missing_explicit_config_is_an_error_naming_the_path_and_the_fix() {
    let err = load(Path::new("."), Some(Path::new("no/such/efix.yml"))).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @"read config file no/such/efix.yml: no such file; pass an existing file to --config, or drop --config to use .efix.yml at the repository root (or the defaults when there is none)");
}

#[test]
fn missing_repo_config_means_defaults() {
    let repo = tempfile::tempdir().unwrap();
    assert_eq!(load(repo.path(), None).unwrap(), None);
}

#[test]
fn repo_config_is_found_at_the_root() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join(".efix.yml"),
        "version: 1\nengine: replay\n",
    )
    .unwrap();
    let expected = FileConfig {
        engine: Some(EngineKind::Replay),
        ..FileConfig::default()
    };
    assert_eq!(
        load(repo.path(), None).unwrap(),
        Some((repo.path().join(".efix.yml"), expected))
    );
}

#[test]
fn defaults_without_a_file_match_the_documented_values() {
    let config = Config::resolve(None, &Overrides::default(), &Env::default()).unwrap();
    insta::assert_debug_snapshot!(config);
}

#[test]
fn cli_beats_env_beats_file() {
    let file = parse(
        Path::new(".efix.yml"),
        "version: 1\nengine: acp\nacp:\n  command: agent\nbudget:\n  max-rounds: 4\ncommands:\n  timeout-ms: 1000\n\
         openai:\n  model: file-model\ntest:\n  required-suites: [make test]\n",
    )
    .unwrap();
    let env = env(&[
        ("EFIX_ENGINE", "replay"),
        ("EFIX_MAX_ROUNDS", "6"),
        ("EFIX_COMMAND_TIMEOUT_MS", "2000"),
        ("EFIX_OPENAI_MODEL", "env-model"),
    ]);
    let overrides = Overrides {
        engine: Some(EngineKind::Openai),
        max_rounds: Some(7),
        suites: vec!["cargo test".into()],
        ..Overrides::default()
    };
    let cli = Config::resolve(Some((".efix.yml".into(), file.clone())), &overrides, &env).unwrap();
    let from_env = Config::resolve(
        Some((".efix.yml".into(), file.clone())),
        &Overrides::default(),
        &env,
    )
    .unwrap();
    let from_file = Config::resolve(
        Some((".efix.yml".into(), file)),
        &Overrides::default(),
        &Env::default(),
    )
    .unwrap();
    let pick = |c: &Config| {
        (
            c.engine,
            c.max_rounds,
            c.command_timeout,
            c.openai.model.clone(),
            c.test.required_suites.clone(),
        )
    };
    assert_eq!(
        [pick(&cli), pick(&from_env), pick(&from_file)],
        [
            (
                EngineKind::Openai,
                7,
                Duration::from_millis(2000),
                "env-model".to_owned(),
                vec!["cargo test".to_owned()]
            ),
            (
                EngineKind::Replay,
                6,
                Duration::from_millis(2000),
                "env-model".to_owned(),
                vec!["make test".to_owned()]
            ),
            (
                EngineKind::Acp,
                4,
                Duration::from_millis(1000),
                "file-model".to_owned(),
                vec!["make test".to_owned()]
            ),
        ]
    );
}

#[test]
fn empty_env_override_counts_as_unset() {
    let config =
        Config::resolve(None, &Overrides::default(), &env(&[("EFIX_ENGINE", "")])).unwrap();
    assert_eq!(config.engine, EngineKind::Openai);
}

#[test]
fn bad_env_overrides_name_the_variable_and_what_was_expected() {
    let messages: Vec<String> = [
        ("EFIX_ENGINE", "gpt"),
        ("EFIX_MAX_ROUNDS", "many"),
        ("EFIX_MAX_ROUNDS", "0"),
        ("EFIX_COMMAND_TIMEOUT_MS", "10s"),
        ("EFIX_OPENAI_BASE_URL", "localhost:8080"),
        ("EFIX_SANDBOX_DISABLE", "landlock,apparmor"),
    ]
    .iter()
    .map(|pair| {
        Config::resolve(None, &Overrides::default(), &env(&[*pair]))
            .unwrap_err()
            .to_string()
    })
    .collect();
    insta::assert_snapshot!(messages.join("\n"));
}

#[test]
fn bad_cli_overrides_name_the_flag() {
    let overrides = Overrides {
        run_timeout: Some(Duration::ZERO),
        ..Overrides::default()
    };
    let err = Config::resolve(None, &overrides, &Env::default()).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @"validate `budget.run-timeout-ms` from command-line flag --timeout-seconds: 0 ms is out of range; expected 1 to 86400000 milliseconds");
}

#[test]
fn secrets_are_the_set_values_of_the_redact_names() {
    let env = env(&[("GITHUB_TOKEN", "ghp_abc"), ("OPENAI_API_KEY", "")]);
    let config = Config::resolve(None, &Overrides::default(), &env).unwrap();
    let secrets: Vec<(String, String)> = config
        .runner
        .secrets
        .iter()
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect();
    assert_eq!(
        secrets,
        vec![("GITHUB_TOKEN".to_owned(), "ghp_abc".to_owned())]
    );
}

#[test]
fn schema_snapshot_is_pinned() {
    insta::assert_snapshot!(schema_json());
}

#[test]
fn committed_schema_is_up_to_date() {
    let committed_path = Path::new("schemas/config.schema.json");
    let current = schema_json();
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all("schemas").unwrap();
        std::fs::write(committed_path, &current).unwrap();
    }
    let committed = std::fs::read_to_string(committed_path).unwrap_or_default();
    assert!(
        committed == current,
        "schemas/config.schema.json is stale; run `efix schema config > schemas/config.schema.json` \
         or `UPDATE_SCHEMAS=1 cargo test --lib config` and commit the result"
    );
}

#[test]
fn acp_engine_without_a_command_is_refused() {
    let overrides = Overrides {
        engine: Some(EngineKind::Acp),
        ..Overrides::default()
    };
    let err = Config::resolve(None, &overrides, &Env::default()).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @"validate `engine` from command-line flag --engine: `acp` needs the agent's command line; set `acp.command` in the config file");
}

#[test]
fn check_summary_of_the_defaults() {
    let env = env(&[("PATH", "/usr/bin"), ("GITHUB_TOKEN", "ghp_x")]);
    let config = Config::resolve(None, &Overrides::default(), &env).unwrap();
    insta::assert_snapshot!(check_summary(&config));
}

#[test]
fn check_summary_of_a_full_file_shows_no_secret_values() {
    let env = env(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("NPM_TOKEN", "npm-secret"),
        ("MY_OPENAI_KEY", "sk-example"),
    ]);
    let config = load_and_resolve(Path::new("tests/fixtures/config/valid/full.yml"), &env).unwrap();
    let summary = check_summary(&config);
    assert!(!summary.contains("sk-example") && !summary.contains("npm-secret"));
    insta::assert_snapshot!(summary);
}

#[test]
fn the_api_key_variable_is_redacted_even_when_the_redact_list_omits_it() {
    let file = parse(
        Path::new(".efix.yml"),
        "version: 1\nopenai:\n  api-key-env: LLM_KEY\nsecurity:\n  redact: [DEPLOY_TOKEN]\n",
    )
    .unwrap();
    let env = env(&[("LLM_KEY", "sk-live"), ("DEPLOY_TOKEN", "dt")]);
    let config = Config::resolve(
        Some((".efix.yml".into(), file)),
        &Overrides::default(),
        &env,
    )
    .unwrap();
    let secrets: Vec<(String, String)> = config
        .runner
        .secrets
        .iter()
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect();
    assert_eq!(
        (config.redact, secrets),
        (
            vec!["DEPLOY_TOKEN".to_owned(), "LLM_KEY".to_owned()],
            vec![
                ("DEPLOY_TOKEN".to_owned(), "dt".to_owned()),
                ("LLM_KEY".to_owned(), "sk-live".to_owned())
            ]
        )
    );
}

#[test]
fn a_multi_document_file_is_a_syntax_error() {
    let err = parse(Path::new(".efix.yml"), "version: 1\n---\nversion: 1\n").unwrap_err();
    insta::assert_snapshot!(err.to_string(), @"parse .efix.yml: the file holds more than one YAML document; keep only one (remove the extra `---`)");
}
