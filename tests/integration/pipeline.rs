//! `efix run` end to end on the demo crate (a real CRLF bug) with replayed answers: only the
//! real fix may exit 0; every other run exits 1 (or 2, 3, 4 before any fix is tried) with the
//! reason recorded, and leaves the working tree exactly as it was.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, engine_calls, replay_file, stable};

const REPRO: &str = "cargo test crlf";

/// The fix answer of the demo's replay file that carries the real fix and its test.
fn real_fix() -> Value {
    let text = include_str!("../../examples/demo-replay.yml");
    let replay: efix::engine::replay::ReplayFile = yaml_serde::from_str(text).unwrap();
    serde_json::to_value(&replay.fix[1]).unwrap()
}

fn answer(output: &str) -> Value {
    json!({"output": output, "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x"})
}

fn replay(fixes: Vec<Value>) -> String {
    json!({"version": 1, "plan": {"hypothesis": "CR is kept", "focus_files": ["src/lib.rs"]}, "fix": fixes}).to_string()
}

/// Run efix on `repo` with the given answers; returns the run and the evidence.
fn run(repo: &Repo, fixes: Vec<Value>, extra: &[&str]) -> (crate::harness::Run, Value) {
    let (_guard, path) = replay_file(&replay(fixes));
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let run = Efix::replay_run(repo, REPRO, &path).args(extra).run();
    let evidence = std::fs::read_to_string(artifacts.join("evidence.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (run, evidence)
}

/// The real fix plus a change to `get` that makes `last_value_wins` fail.
fn fix_breaking_last_value_wins() -> Value {
    let mut fix = real_fix();
    let get_hunk = "@@ -30,3 +30,3 @@\n pub fn get<'a>(entries: &'a [Entry], key: &str) -> Option<&'a str> {\n-    entries.iter().rev().find(|e| e.key == key).map(|e| e.value.as_str())\n+    entries.iter().find(|e| e.key == key).map(|e| e.value.as_str())\n }\n";
    let output = fix["output"].as_str().unwrap();
    let at = output.find("@@ -55").unwrap();
    fix["output"] = Value::String(format!("{}{get_hunk}{}", &output[..at], &output[at..]));
    fix
}

fn evidence_md(repo: &Repo) -> String {
    std::fs::read_to_string(repo.root.parent().unwrap().join("artifacts/evidence.md")).unwrap()
}

const WRONG_FIX: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -19,5 +19,5 @@\n         if let Some((key, value)) = line.split_once('=') {\n             entries.push(Entry {\n                 key: key.trim_end().to_string(),\n-                value: value.trim_start().to_string(),\n+                value: value.trim_start().trim_end_matches('\\n').to_string(),\n             });\n";

#[test]
fn the_real_fix_exits_0_and_stays_applied_with_its_test() {
    let repo = Repo::demo();
    let (run, evidence) = run(&repo, vec![real_fix()], &[]);
    let run = run.expect_code(0);
    assert_eq!(run.json()["status"], "fixed");
    assert!(repo.read("src/lib.rs").contains("for line in text.lines()"));
    assert!(
        repo.read("src/lib.rs")
            .contains("fn crlf_value_has_no_carriage_return")
    );
    assert_eq!(evidence["fix"]["guard"], "changed-tests");
    assert_eq!(
        evidence["rounds"][0]["prove"]["table"]["fixed"],
        json!(["tests::crlf_files_parse_like_unix_files"])
    );
    assert_eq!(
        evidence["request"]["derived-suite"],
        "cargo test --no-fail-fast"
    );
}

#[test]
fn a_dry_run_proves_the_fix_but_leaves_the_tree_as_it_was() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let (run, evidence) = run(&repo, vec![real_fix()], &["--dry-run"]);
    run.expect_code(0);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["fix"]["left-applied"], false);
}

#[test]
fn a_plausible_wrong_fix_exits_1_and_restores_the_tree() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let (run, evidence) = run(&repo, vec![answer(WRONG_FIX)], &["--max-rounds", "1"]);
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["rounds"][0]["verdict"], "proof-failed");
    assert!(evidence_md(&repo).contains("prove.reproduction"));
    // Without a proven fix the PR body is the issue comment that explains why.
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    insta::assert_snapshot!("wrong_fix_pr_body", stable(&body, &[&repo.root]));
    let title = std::fs::read_to_string(artifacts.join("pr-title.txt")).unwrap();
    assert_eq!(title, "efix: no proven fix for `cargo test crlf`\n");
}

#[test]
fn a_fix_that_breaks_another_test_exits_1() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let (run, evidence) = run(
        &repo,
        vec![fix_breaking_last_value_wins()],
        &["--max-rounds", "1"],
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    let table = &evidence["rounds"][0]["prove"]["table"];
    assert_eq!(table["newly-failing"], json!(["tests::last_value_wins"]));
    assert!(evidence_md(&repo).contains("tests::last_value_wins"));
}

#[test]
fn a_configured_suite_must_pass_and_replaces_the_derived_one() {
    let repo = Repo::demo();
    let extra = ["--max-rounds", "1", "--suite", "cargo test --lib"];
    let (run, evidence) = run(&repo, vec![fix_breaking_last_value_wins()], &extra);
    run.expect_code(1);
    assert_eq!(evidence["request"]["suites"], json!(["cargo test --lib"]));
    assert_eq!(evidence["request"]["derived-suite"], Value::Null);
    let checks = evidence["rounds"][0]["checks"].as_array().unwrap();
    let suite = checks.iter().find(|c| c["id"] == "prove.suite").unwrap();
    assert_eq!(suite["passed"], false, "{suite}");
}

#[test]
fn a_fix_that_skips_the_failing_test_is_rejected() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let skip = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -50,6 +50,7 @@\n     }\n \n     #[test]\n+    #[ignore]\n     fn crlf_files_parse_like_unix_files() {\n         let unix = parse(\"name = efix\\nmode = strict\\n\");\n         let windows = parse(\"name = efix\\r\\nmode = strict\\r\\n\");\n";
    let (run, evidence) = run(&repo, vec![answer(skip)], &["--max-rounds", "1"]);
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["rounds"][0]["verdict"], "rejected");
    let md = evidence_md(&repo);
    assert!(
        md.contains("skipped-test") || md.contains("tests.not-weakened"),
        "{md}"
    );
}

#[test]
fn malformed_output_then_the_real_fix_recovers_within_the_round() {
    let repo = Repo::demo();
    let garbage = answer("<tool_call>{\"name\": \"apply_patch\"}</tool_call>");
    let (run, evidence) = run(&repo, vec![garbage, real_fix()], &["--max-rounds", "1"]);
    run.expect_code(0);
    assert_eq!(evidence["rounds"][0]["attempts"][1]["contract-retry"], true);
}

#[test]
fn feedback_from_a_failed_round_reaches_the_next_round() {
    let repo = Repo::demo();
    let (run, evidence) = run(&repo, vec![answer(WRONG_FIX), real_fix()], &[]);
    run.expect_code(0);
    assert_eq!(evidence["rounds"][0]["verdict"], "proof-failed");
    assert_eq!(evidence["rounds"][1]["verdict"], "proven");
}

#[test]
fn no_change_is_an_honest_stop() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let (run, evidence) = run(&repo, vec![answer("NO_CHANGE")], &[]);
    run.expect_code(1);
    assert_eq!(evidence["result"]["status"], "no-change");
    assert_eq!(repo.fingerprint(), before);
}

#[test]
fn an_exhausted_replay_ends_the_run_with_exit_1() {
    let repo = Repo::demo();
    let (run, evidence) = run(&repo, vec![], &[]);
    run.expect_code(1);
    assert_eq!(evidence["rounds"][0]["verdict"], "engine-failed");
}

#[test]
fn a_dirty_tree_exits_2_and_says_how_to_proceed() {
    let repo = Repo::demo();
    repo.write("notes.txt", "work in progress\n");
    let (run, _) = run(&repo, vec![real_fix()], &[]);
    let run = run.expect_code(2);
    assert!(run.stderr().contains("git stash -u"), "{}", run.stderr());
    assert_eq!(repo.read("notes.txt"), "work in progress\n");
}

#[test]
fn a_command_outside_the_allowlist_exits_4_and_runs_nothing() {
    let repo = Repo::demo();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let marker = repo.root.parent().unwrap().join("ran");
    let run = Efix::replay_run(
        &repo,
        &format!("bash -c 'touch {}'", marker.display()),
        &path,
    )
    .run()
    .expect_code(4);
    assert!(!marker.exists());
    assert_eq!(run.json()["status"], "policy-refused");
}

#[test]
fn a_passing_command_exits_3() {
    let repo = Repo::demo();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "cargo test last_value", &path)
        .run()
        .expect_code(3);
    assert_eq!(run.json()["status"], "not-reproduced");
}

#[test]
fn a_mistyped_test_filter_that_runs_no_test_exits_3() {
    let repo = Repo::demo();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "cargo test crfl", &path)
        .run()
        .expect_code(3);
    assert!(
        run.json()["reason"]
            .as_str()
            .unwrap()
            .contains("no test ran")
    );
}

/// A shared `CARGO_TARGET_DIR` outside the repository is passed to cargo; by default the
/// sandbox lets cargo build there. With `sandbox.writable` replaced by a list that leaves it
/// out, a landlock-enforcing machine refuses the write: exit 3 naming `sandbox.writable`, not
/// a fix of the sandbox; where the kernel enforces no landlock the run says so and is fixed.
#[test]
fn a_shared_cargo_target_dir_is_writable_by_default_and_a_refused_write_names_the_key() {
    let target = tempfile::tempdir().unwrap();
    // A shared target directory exists once anything was built there (landlock can only
    // allow a path that exists).
    let target_dir = target.path().join("shared-target");
    std::fs::create_dir(&target_dir).unwrap();
    let repo = Repo::demo();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "cargo test crlf", &path)
        .env("CARGO_TARGET_DIR", target_dir.to_str().unwrap())
        .args(["--dry-run"])
        .run()
        .expect_code(0);
    assert_eq!(run.json()["status"], "fixed");
    assert!(target_dir.join("debug").is_dir());

    let elsewhere = target.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let config = repo.root.parent().unwrap().join("efix.yml");
    std::fs::write(
        &config,
        format!(
            "version: 1\nsandbox:\n  writable: [\"{}\"]\n",
            elsewhere.display()
        ),
    )
    .unwrap();
    let before = repo.fingerprint();
    let run = Efix::replay_run(&repo, "cargo test crlf", &path)
        .env("CARGO_TARGET_DIR", target_dir.to_str().unwrap())
        .args(["--config", config.to_str().unwrap()])
        .run();
    let artifacts = repo.root.parent().unwrap().join("artifacts/evidence.json");
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts).unwrap()).unwrap();
    let landlock = &evidence["commands"][0]["outcome"]["sandbox"]["landlock_abi"];
    if landlock.is_null() {
        // No landlock here: nothing refused the write, and the evidence says why.
        let missing = evidence["commands"][0]["outcome"]["sandbox"]["missing"].to_string();
        assert!(missing.contains("landlock"), "{missing}");
        run.expect_code(0);
    } else {
        let run = run.expect_code(3);
        let reason = run.json()["reason"].as_str().unwrap().to_owned();
        assert!(reason.contains("sandbox refused a write"), "{reason}");
        assert!(reason.contains("sandbox.writable"), "{reason}");
        assert_eq!(repo.fingerprint(), before);
    }
}

/// A dependency that is in no local cache: with the network off (the default) cargo is told
/// it is offline and fails before any test runs. That is the sandbox, not the bug: exit 3
/// naming the way out, and the same run with the network allowed is not refused for it.
#[test]
fn a_reproduction_that_needs_the_network_it_does_not_have_exits_3_with_the_way_out() {
    let repo = Repo::demo();
    let manifest = repo.read("Cargo.toml").replace(
        "[workspace]",
        "[workspace]\n\n[dependencies]\nefix-test-crate-in-no-cache = \"1\"",
    );
    repo.write("Cargo.toml", &manifest);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo.root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["add", "-A"]);
    git(&["commit", "-qm", "a dependency"]);
    let before = repo.fingerprint();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "cargo test crlf", &path)
        .run()
        .expect_code(3);
    let reason = run.json()["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("needed the network"), "{reason}");
    assert!(reason.contains("commands.setup"), "{reason}");
    assert!(reason.contains("offline mode"), "{reason}");
    assert_eq!(repo.fingerprint(), before);
}

#[test]
fn an_exhausted_time_budget_stops_cleanly_with_partial_evidence() {
    let repo = Repo::with_files(&[
        (".efix.yml", "version: 1\ncommands:\n  allow: [python3]\n"),
        ("slow.py", "import time\ntime.sleep(30)\n"),
    ]);
    let before = repo.fingerprint();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "python3 slow.py", &path)
        .args(["--timeout-seconds", "1"])
        .run()
        .expect_code(1);
    assert_eq!(run.json()["status"], "budget-exhausted");
    assert_eq!(repo.fingerprint(), before);
}

#[test]
fn sigterm_mid_run_restores_the_tree_and_resume_finishes_without_asking_again() {
    let repo = Repo::demo();
    let before = repo.fingerprint();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let child = Efix::replay_run(&repo, REPRO, &path).spawn();
    // Wait until the run is inside the fix rounds, then interrupt it.
    wait_for_stage(&artifacts.join("checkpoint.json"), "fixing");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        repo.fingerprint(),
        before,
        "the interrupted run left changes behind"
    );

    let resumed = Efix::new()
        .args(["run", "--resume"])
        .args([&artifacts])
        .run()
        .expect_code(0);
    assert_eq!(resumed.json()["status"], "fixed");
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    // The interrupted run paid for the plan and one fix; the resumed run reused that fix
    // answer from the checkpoint and asked the engine for nothing.
    assert_eq!(
        engine_calls(&evidence),
        [("plan", false), ("fix", false), ("fix", true)]
    );
    assert!(repo.read("src/lib.rs").contains("text.lines()"));
}

fn wait_for_stage(checkpoint: &Path, stage: &str) {
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(checkpoint)
            && let Ok(value) = serde_json::from_str::<Value>(&text)
            && value["stage"] == stage
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the run never reached stage {stage}");
}

#[test]
fn differing_outcomes_over_repeats_are_flaky_and_no_fix_is_claimed() {
    // The script passes and fails in turn; its state lives in an ignored directory, which the
    // restore between runs leaves alone.
    let repo = Repo::with_files(&[
        (".gitignore", "state/\n"),
        (".efix.yml", "version: 1\ncommands:\n  allow: [python3]\n"),
        (
            "flip.py",
            "import os, sys\nos.makedirs('state', exist_ok=True)\np = 'state/n'\nn = int(open(p).read()) if os.path.exists(p) else 0\nopen(p, 'w').write(str(n + 1))\nsys.exit(n % 2)\n",
        ),
    ]);
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "python3 flip.py", &path)
        .args(["--repeat", "2"])
        .run()
        .expect_code(1);
    assert_eq!(run.json()["status"], "flaky");
}

#[test]
fn a_change_over_the_line_limit_is_rejected_whatever_the_model_says() {
    let repo = Repo::with_files(&[]);
    let demo = Repo::demo();
    for file in [
        ".gitignore",
        "Cargo.lock",
        "Cargo.toml",
        "README.md",
        "src/lib.rs",
    ] {
        repo.write(file, &demo.read(file));
    }
    repo.write(".efix.yml", "version: 1\ndiff:\n  max-loc: 3\n");
    commit_all(&repo);
    let before = repo.fingerprint();
    let (run, evidence) = run(&repo, vec![real_fix()], &["--max-rounds", "1"]);
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    let issues = &evidence["rounds"][0]["issues"];
    assert!(
        issues
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["rule"].as_str().unwrap().ends_with("max-loc")),
        "{issues}"
    );
}

#[test]
fn a_changed_file_outside_the_focus_needs_a_justification() {
    let repo = Repo::demo();
    let mut fix = real_fix();
    let output = fix["output"].as_str().unwrap().to_owned()
        + "--- a/Cargo.toml\n+++ b/Cargo.toml\n@@ -1,4 +1,4 @@\n [package]\n name = \"kvconf\"\n-version = \"0.1.0\"\n+version = \"0.1.1\"\n edition = \"2021\"\n";
    fix["output"] = Value::String(output.clone());
    let (first, evidence) = run(&repo, vec![fix.clone()], &["--max-rounds", "1"]);
    first.expect_code(1);
    let issues = &evidence["rounds"][0]["issues"];
    assert_eq!(issues[0]["rule"], "policy.justification");
    assert_eq!(issues[0]["path"], "Cargo.toml");

    fix["file_justifications"] =
        json!([{"file": "Cargo.toml", "reason": "a bug-fix release bumps the patch version"}]);
    let repo = Repo::demo();
    let (second, _) = run(&repo, vec![fix], &["--max-rounds", "1"]);
    second.expect_code(0);
}

#[test]
fn verify_reports_a_claim_that_no_longer_holds() {
    let repo = Repo::demo();
    let (run, _) = run(&repo, vec![real_fix()], &[]);
    run.expect_code(0);
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let path = artifacts.join("evidence.json");
    let mut evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Pretend the reproduction had passed before the fix: re-running it shows otherwise.
    evidence["commands"][0]["outcome"]["exit_code"] = json!(0);
    std::fs::write(&path, evidence.to_string()).unwrap();
    let verify = Efix::new()
        .args(["verify"])
        .args([&artifacts])
        .run()
        .expect_code(1);
    let json = verify.json();
    assert_eq!(json["holds"], false);
    assert_eq!(json["claims"][0]["holds"], false);
    assert!(
        json["claims"].as_array().unwrap()[1..]
            .iter()
            .all(|c| c["holds"] == true)
    );
}

#[test]
fn progress_uses_github_groups_under_actions() {
    let repo = Repo::demo();
    let (_g, path) = replay_file(&replay(vec![real_fix()]));
    let run = Efix::replay_run(&repo, "cargo test last_value", &path)
        .env("GITHUB_ACTIONS", "true")
        .run()
        .expect_code(3);
    let stderr = run.stderr();
    assert!(stderr.contains("::group::efix: reproduce\n"), "{stderr}");
    assert!(stderr.contains("::endgroup::"), "{stderr}");
}

fn commit_all(repo: &Repo) {
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&repo.root)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["add", "-A"]);
    git(&["commit", "-qm", "files"]);
}
