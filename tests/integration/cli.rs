//! The command line: help, exit codes, schemas, config errors and `efix exec`.

use crate::harness::{Efix, Repo};

#[test]
fn help_lists_the_commands_and_the_exit_codes() {
    let run = Efix::new().args(["--help"]).run().expect_code(0);
    insta::assert_snapshot!(run.stdout());
}

#[test]
fn run_help_documents_every_flag() {
    let run = Efix::new().args(["run", "--help"]).run().expect_code(0);
    insta::assert_snapshot!(run.stdout());
}

#[test]
fn publish_help_documents_every_flag_and_its_exit_codes() {
    let run = Efix::new().args(["publish", "--help"]).run().expect_code(0);
    insta::assert_snapshot!(run.stdout());
}

#[test]
fn unknown_flags_are_usage_errors() {
    let run = Efix::new().args(["run", "--bogus"]).run().expect_code(2);
    assert!(run.stderr().contains("--bogus"), "{}", run.stderr());
}

#[test]
fn committed_schemas_match_the_binary() {
    for (which, file) in [
        ("config", "schemas/config.schema.json"),
        ("evidence", "schemas/evidence.schema.json"),
        ("replay", "schemas/replay.schema.json"),
    ] {
        let run = Efix::new().args(["schema", which]).run().expect_code(0);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        if std::env::var_os("UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, run.stdout()).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == run.stdout(),
            "{file} is stale: run `efix schema {which} > {file}` (or UPDATE_SCHEMAS=1 cargo test)"
        );
    }
}

#[test]
fn evidence_and_replay_schemas_are_pinned() {
    let evidence = Efix::new()
        .args(["schema", "evidence"])
        .run()
        .expect_code(0);
    insta::assert_snapshot!("evidence_schema", evidence.stdout());
    let replay = Efix::new().args(["schema", "replay"]).run().expect_code(0);
    insta::assert_snapshot!("replay_schema", replay.stdout());
}

#[test]
fn config_with_an_unknown_key_exits_2_naming_the_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yml");
    std::fs::write(
        &file,
        "version: 1\ndiff:\n  max-files: 3\n  max-lines: 10\n",
    )
    .unwrap();
    let run = Efix::new()
        .args(["config", "check"])
        .arg_path(&file)
        .run()
        .expect_code(2);
    let stderr = run
        .stderr()
        .replace(&dir.path().display().to_string(), "[DIR]");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_missing_config_file_given_explicitly_exits_2() {
    let repo = Repo::with_files(&[("README.md", "x\n")]);
    let run = Efix::new()
        .args(["exec", "--config", "/nonexistent/efix.yml", "--repo"])
        .arg_path(&repo.root)
        .args(["--", "cargo", "--version"])
        .run()
        .expect_code(2);
    assert!(
        run.stderr().contains("/nonexistent/efix.yml"),
        "{}",
        run.stderr()
    );
}

/// The README starts with `cargo run --release -- demo`: with a second binary in the
/// package (the test ACP agent), cargo must be told which one `cargo run` means.
#[test]
fn cargo_run_means_the_efix_binary() {
    let manifest = include_str!("../../Cargo.toml");
    let readme = include_str!("../../README.md");
    assert!(readme.contains("cargo run --release -- demo"));
    let binaries = manifest.matches("[[bin]]").count();
    assert!(
        binaries <= 1 || manifest.contains("default-run = \"efix\""),
        "Cargo.toml has {binaries} binaries and no `default-run = \"efix\"`"
    );
}

#[test]
fn exec_prints_exactly_the_documented_keys() {
    let repo = Repo::with_files(&[("README.md", "x\n")]);
    let run = Efix::new()
        .args(["exec", "--repo"])
        .arg_path(&repo.root)
        .args(["--", "python3", "-c", "print('hello')"])
        .run()
        .expect_code(0);
    let json = run.json();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "argv",
            "duration_ms",
            "exit_code",
            "redactions",
            "sandbox",
            "signal",
            "stderr",
            "stderr_bytes",
            "stdout",
            "stdout_bytes",
            "timed_out",
            "truncated"
        ]
    );
    assert_eq!(json["stdout"], "hello\n");
    assert_eq!(json["exit_code"], 0);
}

/// Python trusts a cached `.pyc` whose source has the same size and mtime (in whole
/// seconds): a one-character change efix makes within a second of a run must not run as the
/// old code. Each command gets its own empty bytecode cache, outside the working tree.
#[test]
fn exec_never_runs_python_bytecode_cached_by_an_earlier_command() {
    let repo = Repo::with_files(&[("value.py", "X = 1\n")]);
    let import = |repo: &Repo| {
        let run = Efix::new()
            .args(["exec", "--repo"])
            .arg_path(&repo.root)
            .args(["--", "python3", "-c", "import value; print(value.X)"])
            .run()
            .expect_code(0);
        run.json()["stdout"].as_str().unwrap().to_owned()
    };
    assert_eq!(import(&repo), "1\n");
    // The same size and the same mtime: only the content tells them apart.
    let path = repo.path("value.py");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "X = 2\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(import(&repo), "2\n");
    assert!(!repo.path("__pycache__").exists());
}

#[test]
fn exec_refuses_a_shell_under_the_default_config_and_runs_nothing() {
    let repo = Repo::with_files(&[("README.md", "x\n")]);
    let marker = repo.path("ran");
    let run = Efix::new()
        .args(["exec", "--repo"])
        .arg_path(&repo.root)
        .args(["--", "bash", "-c"])
        .arg_path(format!("touch {}", marker.display()))
        .run()
        .expect_code(4);
    assert!(!marker.exists());
    assert!(run.stderr().contains("command.shell"), "{}", run.stderr());
    assert_eq!(run.stdout(), "");
}

#[test]
fn exec_kills_the_whole_group_on_timeout() {
    let repo = Repo::with_files(&[(".efix.yml", "version: 1\ncommands:\n  allow: [sh]\n")]);
    let run = Efix::new()
        .args(["exec", "--timeout-seconds", "1", "--repo"])
        .arg_path(&repo.root)
        .args(["--", "sh", "-c", "sleep 61.4242 & sleep 61.4242"])
        .run()
        .expect_code(0);
    let json = run.json();
    assert_eq!(json["timed_out"], true);
    assert_eq!(json["exit_code"], serde_json::Value::Null);
    let survivors = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains("61.4242"))
        .count();
    assert_eq!(survivors, 0, "a sleep outlived the timeout");
}

#[test]
fn exec_never_hands_tokens_to_the_child_and_redacts_configured_secrets() {
    let repo = Repo::with_files(&[(
        ".efix.yml",
        "version: 1\ncommands:\n  allow: [python3]\nsecurity:\n  redact: [MY_API_SECRET]\n",
    )]);
    let secret = "s3cr3t-value-0123456789";
    let run = Efix::new()
        .env("GITHUB_TOKEN", "ghs_abcdefghijklmnopqrstuvwxyz0123456789")
        .env("OPENAI_API_KEY", "sk-test-0000000000000000000000")
        .env("DEPLOY_TOKEN", "deploy-0000")
        .env("MY_API_SECRET", secret)
        .args(["exec", "--repo"])
        .arg_path(&repo.root)
        .args([
            "--",
            "python3",
            "-c",
            &format!(
                "import os,base64,urllib.parse;print(sorted(os.environ));s='{secret}';print(s);print(base64.b64encode(s.encode()).decode());print(urllib.parse.quote('x='+s+'/&'))"
            ),
        ])
        .run()
        .expect_code(0);
    let out = run.stdout();
    let child_env = run.json()["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    for name in [
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "DEPLOY_TOKEN",
        "MY_API_SECRET",
    ] {
        assert!(
            !child_env.contains(name),
            "{name} reached the child: {child_env}"
        );
    }
    assert!(!out.contains(secret), "the secret leaked:\n{out}");
    let b64 = base64_encode(secret.as_bytes());
    assert!(
        !out.contains(&b64[4..b64.len() - 4]),
        "base64 form leaked:\n{out}"
    );
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

trait ArgPath {
    fn arg_path(self, path: impl AsRef<std::ffi::OsStr>) -> Self;
}

impl ArgPath for Efix {
    fn arg_path(self, path: impl AsRef<std::ffi::OsStr>) -> Self {
        self.args([path.as_ref()])
    }
}

/// A directory outside any repository is a usage error that reads as a sentence and says
/// what to do, for every command that takes `--repo` (it read "failed to /tmp is not inside a
/// git repository").
#[test]
fn a_directory_outside_a_repository_is_named_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for args in [
        vec![
            "run",
            "--repro",
            "cargo test",
            "--engine",
            "replay",
            "--repo",
        ],
        vec!["restore", "--repo"],
    ] {
        let run = Efix::new()
            .args(&args)
            .arg_path(dir.path())
            .run()
            .expect_code(2);
        seen.push(format!(
            "$ efix {} [DIR]\n{}",
            args.join(" "),
            run.stderr()
                .replace(&dir.path().display().to_string(), "[DIR]")
        ));
    }
    insta::assert_snapshot!(seen.join("\n"));
}
