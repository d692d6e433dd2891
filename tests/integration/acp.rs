//! `efix run --engine acp` with a fake agent built on the crate's agent side (a real fix in
//! answer mode and in edit mode, a file written without asking, which the sandbox refuses in
//! answer mode, a hang, a crash with stderr, malformed frames, a child that must not survive,
//! permissions that must be refused), and with a small agent written on the official Python
//! SDK, in both modes.

use std::path::Path;

use serde_json::{Value, json};

use crate::engines::{
    artifacts_text, beside, clamp_repo, fix_answer, fix_edits, outcomes, plan_answer, run,
};
use crate::harness::{Repo, Run, acp_python};

const AGENT: &str = env!("CARGO_BIN_EXE_efix-test-acp-agent");

/// The fake agent's script: the plan and fix texts and the edits it makes itself.
fn script(repo: &Repo, fix: Value, extra: Value) -> String {
    let mut script = json!({
        "plan": plan_answer().to_string(),
        "fix": fix.to_string(),
        "edits": [
            {"path": "calc.py", "old": "min(value, low)", "new": "min(value, high)"},
            {"path": "tests/test_calc.py", "old": "def test_below_the_range():\n",
             "new": "def test_at_the_upper_bound():\n    assert clamp(10, 0, 10) == 10\n\n\ndef test_below_the_range():\n"}
        ]
    });
    if let (Value::Object(script), Value::Object(extra)) = (&mut script, extra) {
        script.extend(extra);
    }
    let path = beside(repo).join("script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    path.display().to_string()
}

/// Run the fake agent in `scenario` and `mode`.
fn run_fake(repo: &Repo, scenario: &str, mode: &str, script: &str, extra: &str) -> (Run, Value) {
    let config = format!(
        "acp:\n  command: \"{AGENT} {scenario} {script}\"\n  mode: {mode}\n{extra}commands:\n  \
         allow: [pytest, efix-test-acp-agent]\n"
    );
    run(repo, "acp", &config, &[])
}

fn permissions(evidence: &Value, call: usize) -> Vec<(String, String)> {
    evidence["engine"]["calls"][call]["permissions"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|p| {
                    (
                        p["kind"].as_str().unwrap().to_owned(),
                        p["answer"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fixed(repo: &Repo) -> bool {
    repo.read("calc.py").contains("min(value, high)")
}

#[test]
fn answer_mode_applies_the_agents_answer_and_refuses_its_command() {
    let repo = clamp_repo(&[]);
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, evidence) = run_fake(&repo, "answer", "answer", &script, "");
    run.expect_code(0);
    assert!(fixed(&repo));
    assert_eq!(evidence["engine"]["info"]["kind"], "acp");
    assert_eq!(outcomes(&evidence), ["answered", "answered"]);
    assert_eq!(
        permissions(&evidence, 1),
        [("execute".to_owned(), "rejected".to_owned())]
    );
    let permission = &evidence["engine"]["calls"][1]["permissions"][0];
    assert_eq!(permission["title"], "run the tests");
}

#[test]
fn edit_mode_takes_the_agents_own_edits_through_the_same_checks() {
    let repo = clamp_repo(&[]);
    let outside = beside(&repo).join("outside.txt");
    let explanation = json!({"output": "", "edits": [], "root_cause": "low twice",
        "fix_summary": "edited calc.py", "tests_summary": "added a test", "risk_rollback": "low"});
    let script = script(&repo, explanation, json!({"outside": outside}));
    let (run, evidence) = run_fake(&repo, "edit", "edit", &script, "");
    run.expect_code(0);
    assert!(fixed(&repo));
    assert!(
        !outside.exists(),
        "an edit outside the repository was allowed"
    );
    assert_eq!(
        permissions(&evidence, 1),
        [
            ("execute".to_owned(), "rejected".to_owned()),
            ("edit".to_owned(), "rejected".to_owned()),
            ("edit".to_owned(), "allowed".to_owned()),
            ("edit".to_owned(), "allowed".to_owned()),
        ]
    );
    let call = &evidence["engine"]["calls"][1];
    assert_eq!(call["edited-tree"], true);
    landlock_confined(&evidence, 1);
    assert_eq!(call["permissions"][2]["paths"], json!(["calc.py"]));
    assert!(
        call["permissions"][1]["reason"]
            .as_str()
            .unwrap()
            .ends_with("is outside the repository (or inside .git)")
    );
    // The change went through the patch engine like any answer.
    let attempt = &evidence["rounds"][0]["attempts"][0];
    assert_eq!(attempt["patch"]["outcome"], "applied");
    assert_eq!(attempt["explanation"]["fix-summary"], "edited calc.py");
    assert_eq!(
        evidence["fix"]["files"],
        json!(["calc.py", "tests/test_calc.py"])
    );
}

/// Whether landlock confined the agent of `call`, read from its sandbox record (which every
/// call that started an agent has, with the network kept for the model); where it did not,
/// the record must say why.
fn landlock_confined(evidence: &Value, call: usize) -> bool {
    let sandbox = &evidence["engine"]["calls"][call]["sandbox"];
    assert!(sandbox.is_object(), "call {call} has no sandbox record");
    assert_eq!(sandbox["network"], "allowed", "{sandbox}");
    assert_eq!(sandbox["leaked_processes"], 0, "{sandbox}");
    let confined = !sandbox["landlock_abi"].is_null();
    if !confined {
        let missing = sandbox["missing"].as_array().unwrap();
        assert!(
            missing
                .iter()
                .any(|m| m.as_str().unwrap().starts_with("landlock:")),
            "landlock was not enforced and the record does not say why: {sandbox}"
        );
    }
    confined
}

fn pr_body(repo: &Repo) -> String {
    std::fs::read_to_string(beside(repo).join("artifacts/pr-body.md")).unwrap()
}

#[test]
fn an_answering_agent_cannot_write_into_the_repository() {
    let repo = clamp_repo(&[]);
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, evidence) = run_fake(&repo, "rogue", "answer", &script, "");
    run.expect_code(0);
    assert!(fixed(&repo));
    assert!(!repo.path("ROGUE.txt").exists());
    for call in 0..2 {
        let writes = &evidence["engine"]["calls"][call]["unrequested-writes"];
        if landlock_confined(&evidence, call) {
            // The sandbox refused the write: there was nothing to restore.
            assert!(writes.is_null(), "call {call} wrote {writes}");
        } else {
            assert_eq!(writes, &json!(["ROGUE.txt"]), "call {call}");
        }
    }
    let body = pr_body(&repo);
    assert!(
        body.contains("- call 2: the agent ran in sandbox tier `"),
        "{body}"
    );
}

#[test]
fn files_an_editing_agent_writes_without_asking_are_restored_and_recorded() {
    let repo = clamp_repo(&[]);
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, evidence) = run_fake(&repo, "rogue", "edit", &script, "");
    run.expect_code(0);
    assert!(fixed(&repo));
    assert!(!repo.path("ROGUE.txt").exists());
    // The plan call is read-only whatever the mode; the fix call may write the repository.
    let plan_writes = &evidence["engine"]["calls"][0]["unrequested-writes"];
    if landlock_confined(&evidence, 0) {
        assert!(plan_writes.is_null(), "the plan call wrote {plan_writes}");
    } else {
        assert_eq!(plan_writes, &json!(["ROGUE.txt"]));
    }
    landlock_confined(&evidence, 1);
    let call = &evidence["engine"]["calls"][1];
    assert_eq!(call["edited-tree"], true);
    assert_eq!(call["unrequested-writes"], json!(["ROGUE.txt"]));
    let body = pr_body(&repo);
    assert!(
        body.contains(
            "the agent wrote files outside the protocol (restored, not used): `ROGUE.txt`"
        ),
        "{body}"
    );
}

#[test]
fn an_agent_that_hangs_is_killed_at_the_timeout() {
    let repo = clamp_repo(&[]);
    let before = repo.fingerprint();
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, evidence) = run_fake(&repo, "hang", "answer", &script, "  timeout-ms: 1500\n");
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(outcomes(&evidence), ["failed", "failed"]);
    let error = evidence["engine"]["calls"][1]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "talk to the ACP agent: the agent did not finish within 1500 ms (acp.timeout-ms, or the \
         run's time budget); its process group was killed"
    );
    assert_eq!(
        running_with(&script),
        Vec::<String>::new(),
        "a hanging agent survived"
    );
}

/// Pids of live processes whose command line holds `needle`.
fn running_with(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let cmdline = std::fs::read(path.join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let name = path.file_name()?.to_string_lossy().into_owned();
            (text.contains(needle) && alive(&path)).then_some(name)
        })
        .collect()
}

#[test]
fn an_agent_that_crashes_is_reported_with_its_stderr() {
    let repo = clamp_repo(&[]);
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, evidence) = run_fake(&repo, "crash", "answer", &script, "");
    run.expect_code(1);
    let error = evidence["engine"]["calls"][1]["error"].as_str().unwrap();
    assert!(
        error.contains("(the agent exited: exit status: 3)"),
        "{error}"
    );
    assert!(
        error.ends_with(
            "the agent's stderr ends with:\nfake agent: fatal: the model quota is exhausted"
        ),
        "{error}"
    );
}

#[test]
fn malformed_frames_are_skipped() {
    let repo = clamp_repo(&[]);
    let script = script(&repo, fix_answer(fix_edits()), json!({}));
    let (run, _) = run_fake(&repo, "garbage", "answer", &script, "");
    run.expect_code(0);
    assert!(fixed(&repo));
}

#[test]
fn a_child_the_agent_starts_does_not_survive_it() {
    let repo = clamp_repo(&[]);
    // The agent may write only to places the sandbox allows: `acp.writable` adds one for the
    // pid file, for the agent alone.
    let out = beside(&repo).join("agent-out");
    std::fs::create_dir(&out).unwrap();
    let pid_file = out.join("child.pid");
    let script = script(
        &repo,
        fix_answer(fix_edits()),
        json!({"pid_file": pid_file}),
    );
    let writable = format!("  writable: [\"{}\"]\n", out.display());
    let (run, _) = run_fake(&repo, "spawn", "answer", &script, &writable);
    run.expect_code(0);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc_dir = Path::new("/proc").join(pid.trim());
    // The group was killed when the conversation ended; give init a moment to reap it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(&proc_dir) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !alive(&proc_dir),
        "the agent's child {} survived",
        pid.trim()
    );
}

/// Whether the process exists and is not a zombie.
fn alive(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .map(|stat| {
            let state = stat
                .rsplit(") ")
                .next()
                .and_then(|rest| rest.chars().next());
            state != Some('Z')
        })
        .unwrap_or(false)
}

/// Run the agent written on the official Python SDK in `mode`.
fn run_python(repo: &Repo, mode: &str, fix: Value, edit: Value) -> (Run, Value) {
    let python = acp_python();
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/python_agent.py");
    let script = json!({"plan": plan_answer().to_string(), "fix": fix.to_string(), "edit": edit});
    let script_path = beside(repo).join("python-script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let config = format!(
        "acp:\n  command: \"{} {} {}\"\n  mode: {mode}\ncommands:\n  allow: [pytest, python]\n",
        python.display(),
        agent.display(),
        script_path.display()
    );
    run(repo, "acp", &config, &[])
}

#[test]
fn the_python_sdk_agent_fixes_the_bug_in_answer_mode() {
    let repo = clamp_repo(&[]);
    let (run, evidence) = run_python(&repo, "answer", fix_answer(fix_edits()), Value::Null);
    run.expect_code(0);
    assert!(fixed(&repo));
    assert_eq!(
        permissions(&evidence, 1),
        [("execute".to_owned(), "rejected".to_owned())]
    );
    assert!(!artifacts_text(&repo).is_empty());
}

#[test]
fn the_python_sdk_agent_fixes_the_bug_in_edit_mode() {
    let repo = clamp_repo(&[]);
    let explanation = json!({"output": "", "edits": [], "root_cause": "low twice",
        "fix_summary": "edited calc.py", "tests_summary": "added a test", "risk_rollback": "low"});
    let edit = json!({
        "path": "calc.py", "old": "min(value, low)", "new": "min(value, high)",
        "also": [{"path": "tests/test_calc.py", "old": "def test_below_the_range():\n",
                  "new": "def test_at_the_upper_bound():\n    assert clamp(10, 0, 10) == 10\n\n\ndef test_below_the_range():\n"}]
    });
    let (run, evidence) = run_python(&repo, "edit", explanation, edit);
    run.expect_code(0);
    assert!(fixed(&repo));
    assert_eq!(
        permissions(&evidence, 1),
        [
            ("execute".to_owned(), "rejected".to_owned()),
            ("edit".to_owned(), "allowed".to_owned()),
            ("edit".to_owned(), "allowed".to_owned()),
        ]
    );
    assert_eq!(evidence["engine"]["calls"][1]["edited-tree"], true);
}

#[test]
fn config_check_with_engine_acp_describes_the_agent_as_a_run_starts_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let file = dir.path().join("efix.yml");
    std::fs::write(
        &file,
        format!(
            "version: 1\nacp:\n  command: \"{AGENT} answer\"\n  env-pass: [ANTHROPIC_API_KEY]\n  \
             writable: [\"~/.claude\", \"~/.claude.json\", \"~/.gemini\"]\ncommands:\n  allow: \
             [efix-test-acp-agent]\n"
        ),
    )
    .unwrap();
    let run = crate::harness::Efix::new()
        .env("HOME", &home.display().to_string())
        .env("ANTHROPIC_API_KEY", "sk-ant-api03-config-check-0000")
        .current_dir(dir.path())
        .args(["config", "check", "--engine", "acp"])
        .args([&file])
        .run()
        .expect_code(0);
    let agent_dir = Path::new(AGENT).parent().unwrap();
    let text = crate::harness::stable(&run.stdout(), &[dir.path(), agent_dir]);
    let engine_line = text
        .lines()
        .find(|line| line.contains("acp ("))
        .unwrap_or_default()
        .to_owned();
    insta::assert_snapshot!(engine_line);
    // Checking creates nothing: a run does, when it starts.
    assert!(!home.join(".gemini").exists());
}

#[test]
fn an_agent_that_is_not_installed_is_a_configuration_error_before_anything_runs() {
    let repo = clamp_repo(&[]);
    let before = repo.fingerprint();
    let config = "acp:\n  command: \"no-such-agent-efix --acp\"\ncommands:\n  allow: [pytest, \
                  no-such-agent-efix]\n";
    let (run, evidence) = run(&repo, "acp", config, &[]);
    let stderr = run.stderr();
    run.expect_code(2);
    assert_eq!(repo.fingerprint(), before);
    assert!(evidence.is_null(), "the run went ahead: {evidence}");
    assert!(
        stderr.contains(
            "efix: error: acp.command: the agent's program `no-such-agent-efix` is not on the \
             PATH efix gives the agent; install it, or give its full path in acp.command"
        ),
        "{stderr}"
    );
}

#[test]
fn candidates_are_k_agent_sessions_whose_edits_are_proven_in_scratch_copies() {
    let repo = clamp_repo(&[]);
    let explanation = json!({"output": "", "edits": [], "root_cause": "low twice",
        "fix_summary": "edited calc.py", "tests_summary": "added a test", "risk_rollback": "low"});
    let script = script(&repo, explanation, json!({}));
    let (run, evidence) = run_fake(&repo, "edit", "edit", &script, "fix:\n  candidates: 2\n");
    run.expect_code(0);
    assert!(fixed(&repo));
    // The plan, then one agent and session per candidate, each edit taken and the tree
    // restored before the next.
    assert_eq!(outcomes(&evidence), ["answered", "answered", "answered"]);
    for call in [1, 2] {
        assert_eq!(evidence["engine"]["calls"][call]["edited-tree"], true);
    }
    let round = &evidence["rounds"][0];
    assert_eq!(round["candidates"][0]["verdict"], "won");
    // As small and answered second: proven too when its proof ended first, else stopped once
    // candidate 1 was proven (it could no longer win).
    let second = &round["candidates"][1];
    match second["verdict"].as_str().unwrap() {
        "proven" => assert_eq!(
            second["lost"],
            "as small as candidate 1 (6 lines in 2 files), which was answered first"
        ),
        verdict => {
            assert_eq!(verdict, "not-judged", "{second:#}");
            assert!(
                second["lost"]
                    .as_str()
                    .unwrap()
                    .starts_with("stopped once candidate 1 was fully proven"),
                "{second:#}"
            );
        }
    }
}
