//! Nothing lost even after SIGKILL, and one run per working tree: a real `kill -9` of efix in
//! the middle of Prevent, then `efix run` refuses, `efix restore` (or `efix run --resume`)
//! puts the tree back byte for byte; two real concurrent runs in one repository.
//!
//! The commands wait for files the test creates, so each kill or overlap lands where the test
//! says, whatever the machine's speed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, engine_calls, replay_file, stable};

const REPRO: &str = "pytest tests/test_words.py::test_repeated_spaces";
const WORDS_PY: &str = "def word_count(text):\n    return len([w for w in text.split(\" \")])\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
/// Test code that signals it runs (`signals/NAME`) and then waits for `signals/go`.
const WAIT_FOR_GO: &str = "import os\nimport time\n\nos.makedirs(\"signals\", exist_ok=True)\nopen(\"signals/NAME\", \"w\").close()\nwhile not os.path.exists(\"signals/go\"):\n    time.sleep(0.02)\n";
/// How long a test waits for efix to reach a point before it fails.
const REACH: Duration = Duration::from_secs(180);

fn python_repo(test_file: &str) -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\nsignals/\n"),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", test_file),
    ])
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"path": path, "old_text": old, "new_text": new})
}

/// A fix answer carrying these edits (the patch contract's JSON form).
fn answer(edits: Vec<Value>) -> Value {
    json!({
        "output": json!({"edits": edits}).to_string(),
        "root_cause": "split(\" \") counts empty strings between repeated spaces",
        "fix_summary": "split on any whitespace",
    })
}

/// The real fix: the source change and a regression test.
fn real_fix_edits() -> Vec<Value> {
    vec![
        edit(
            "words.py",
            "return len([w for w in text.split(\" \")])",
            "return len(text.split())",
        ),
        edit(
            "tests/test_words.py",
            "    assert word_count(\"a  b\") == 2\n",
            "    assert word_count(\"a  b\") == 2\n\n\ndef test_tabs_and_newlines():\n    assert word_count(\"a\\tb\\nc \") == 3\n",
        ),
    ]
}

fn replay(fix: Value) -> (tempfile::TempDir, PathBuf) {
    replay_file(
        &json!({"version": 1, "plan": {"hypothesis": "h", "focus_files": ["words.py"]}, "fix": [fix]})
            .to_string(),
    )
}

fn artifacts(repo: &Repo, name: &str) -> PathBuf {
    repo.root.parent().unwrap().join(name)
}

fn run_efix(repo: &Repo, replay: &Path, artifacts: &Path) -> Efix {
    Efix::new()
        .with_pytest()
        .args(["run", "--repro", REPRO, "--engine", "replay", "--replay"])
        .args([replay])
        .args(["--repo"])
        .args([&repo.root])
        .args(["--artifacts"])
        .args([artifacts])
}

fn wait_for(path: &Path, child: &mut std::process::Child) {
    let deadline = Instant::now() + REACH;
    while !path.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("efix ended ({status}) before {} appeared", path.display());
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `efix restore --repo ROOT`, finished.
fn restore(repo: &Repo) -> crate::harness::Run {
    Efix::new()
        .args(["restore", "--repo"])
        .args([&repo.root])
        .run()
}

fn go(repo: &Repo) {
    std::fs::create_dir_all(repo.path("signals")).unwrap();
    std::fs::write(repo.path("signals/go"), "").unwrap();
}

/// Start a run whose regression test waits in Prevent's tests-only run, and kill it there
/// with SIGKILL. Returns the fingerprint before the run and the killed run's pid.
fn killed_in_prevent(repo: &Repo, replay: &Path, artifacts: &Path) -> (Value, u32) {
    let before = serde_json::to_value(repo.fingerprint()).unwrap();
    let mut child = run_efix(repo, replay, artifacts).spawn();
    wait_for(&repo.path("signals/in-prevent"), &mut child);
    // Half applied: the test side of the change is in the tree, the source side is not.
    assert_eq!(repo.read("words.py"), WORDS_PY);
    assert!(repo.read("tests/test_words.py").contains("in-prevent"));
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(serde_json::to_value(repo.fingerprint()).unwrap(), before);
    (before, pid)
}

/// The real fix, with a regression test whose module waits when it is first imported with
/// the change applied (Prevent's tests-only run).
fn fix_that_waits_in_prevent() -> Value {
    let mut edits = real_fix_edits();
    edits.push(edit(
        "tests/test_words.py",
        "from words import word_count\n",
        &format!(
            "{}\nfrom words import word_count\n",
            WAIT_FOR_GO.replace("NAME", "in-prevent")
        ),
    ));
    answer(edits)
}

#[test]
fn sigkill_in_prevent_then_run_refuses_and_restore_puts_the_tree_back() {
    let repo = python_repo(TEST_WORDS_PY);
    let (_g, replay) = replay(fix_that_waits_in_prevent());
    let dir = artifacts(&repo, "artifacts");
    let (before, pid) = killed_in_prevent(&repo, &replay, &dir);

    let refused = run_efix(&repo, &replay, &artifacts(&repo, "second"))
        .run()
        .expect_code(2);
    let paths = [repo.root.parent().unwrap()];
    let stderr = stable(&refused.stderr(), &paths).replace(&pid.to_string(), "[PID]");
    insta::assert_snapshot!("run_refused_after_sigkill", stderr);
    assert!(!artifacts(&repo, "second").exists());

    let restored = restore(&repo).expect_code(0);
    go(&repo);
    assert_eq!(serde_json::to_value(repo.fingerprint()).unwrap(), before);
    let stdout = stable(&restored.stdout(), &paths).replace(&pid.to_string(), "[PID]");
    insta::assert_snapshot!("restore_after_sigkill_stdout", stdout);
    let stderr = stable(&restored.stderr(), &paths).replace(&pid.to_string(), "[PID]");
    insta::assert_snapshot!("restore_after_sigkill_stderr", stderr);

    // Restored once: nothing left to do, and runs may start again.
    let again = restore(&repo).expect_code(0);
    assert_eq!(again.json()["restored"], false);
    let stderr = stable(&again.stderr(), &paths);
    insta::assert_snapshot!("restore_with_nothing_to_restore_stderr", stderr);
    run_efix(&repo, &replay, &artifacts(&repo, "third"))
        .run()
        .expect_code(0);
}

#[test]
fn sigkill_in_prevent_then_resume_puts_the_tree_back_first_and_finishes() {
    let repo = python_repo(TEST_WORDS_PY);
    let (_g, replay) = replay(fix_that_waits_in_prevent());
    let dir = artifacts(&repo, "artifacts");
    let (before, _) = killed_in_prevent(&repo, &replay, &dir);
    go(&repo);

    let resumed = Efix::new()
        .with_pytest()
        .args(["run", "--resume"])
        .args([&dir])
        .run()
        .expect_code(0);
    assert!(
        resumed
            .stderr()
            .contains("restored the working tree left by the interrupted efix run"),
        "{}",
        resumed.stderr()
    );
    assert_eq!(resumed.json()["status"], "fixed");
    assert_eq!(
        repo.read("words.py"),
        WORDS_PY.replace("len([w for w in text.split(\" \")])", "len(text.split())")
    );
    // The proven fix stays applied; everything else is as before the killed run.
    let after = repo.fingerprint();
    let changed: Vec<&String> = after
        .iter()
        .filter(|(path, hash)| before.get(path.as_str()) != Some(&Value::String((*hash).clone())))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(changed, ["tests/test_words.py", "words.py"]);
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("evidence.json")).unwrap()).unwrap();
    // The killed run paid for the plan and one fix; the resumed run reused that fix answer
    // from the checkpoint and asked the engine for nothing.
    assert_eq!(
        engine_calls(&evidence),
        [("plan", false), ("fix", false), ("fix", true)]
    );
}

#[test]
fn a_second_concurrent_run_exits_2_naming_the_first_which_finishes_normally() {
    // The failing test waits (in every run of the first efix) until the test says go.
    let repo = python_repo(&format!(
        "{}\n{TEST_WORDS_PY}",
        WAIT_FOR_GO.replace("NAME", "started")
    ));
    let (_g1, real) = replay(answer(real_fix_edits()));
    let wrong = answer(vec![edit(
        "words.py",
        "return len([w for w in text.split(\" \")])",
        "return len([w for w in text.split(\" \") if w])",
    )]);
    let (_g2, wrong) = replay(wrong);
    let first_artifacts = artifacts(&repo, "first");
    let mut first = run_efix(&repo, &real, &first_artifacts).spawn();
    wait_for(&repo.path("signals/started"), &mut first);

    let second = run_efix(&repo, &wrong, &artifacts(&repo, "second"))
        .run()
        .expect_code(2);
    let expected = format!("another efix run (pid {}, started ", first.id());
    assert!(second.stderr().contains(&expected), "{}", second.stderr());
    assert!(second.stderr().contains("wait for it or stop it"));
    assert!(!artifacts(&repo, "second").exists());
    // Neither may a restore run under a live run.
    restore(&repo).expect_code(2);

    go(&repo);
    let output = first.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(repo.read("words.py").contains("len(text.split())"));
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["status"], "fixed");
}

#[test]
fn verify_and_restore_refuse_while_another_process_holds_the_tree() {
    let repo = python_repo(TEST_WORDS_PY);
    let (_g, replay) = replay(answer(real_fix_edits()));
    let dir = artifacts(&repo, "artifacts");
    run_efix(&repo, &replay, &dir).run().expect_code(0);

    // This test process takes the lock, as a run in progress would.
    let held = efix::git::Repo::open(&repo.root)
        .unwrap()
        .lock("2026-11-26T10:00:00Z")
        .unwrap();
    let pid = std::process::id().to_string();
    let restore = restore(&repo).expect_code(2);
    let stderr = stable(&restore.stderr(), &[&repo.root]).replace(&pid, "[PID]");
    insta::assert_snapshot!("restore_refused_while_locked", stderr);
    let verify = Efix::new()
        .with_pytest()
        .args(["verify"])
        .args([&dir])
        .run()
        .expect_code(2);
    assert!(
        verify.stderr().contains(&format!(
            "another efix run (pid {pid}, started 2026-11-26T10:00:00Z)"
        )),
        "{}",
        verify.stderr()
    );
    drop(held);
    Efix::new()
        .with_pytest()
        .args(["verify"])
        .args([&dir])
        .run()
        .expect_code(0);
}

#[test]
fn restore_help_documents_its_exit_codes() {
    let run = Efix::new().args(["restore", "--help"]).run().expect_code(0);
    insta::assert_snapshot!(run.stdout());
}

/// A kill -9 while candidates are proven in their scratch copies leaves the user's tree as it
/// was (the candidates never touch it); `efix restore` removes the scratch directory.
#[test]
fn sigkill_while_candidates_are_proven_leaves_the_tree_alone_and_restore_removes_the_scratch() {
    let repo = python_repo(TEST_WORDS_PY);
    // The other candidate is the larger change, so the waiting one's proof is never stopped
    // as outranked (the smallest fully proven candidate wins; a larger one cannot stop it).
    let mut larger = real_fix_edits();
    larger.push(edit(
        "words.py",
        "def word_count(text):\n",
        &format!(
            "def word_count(text):\n{}",
            "    # Split on any run of whitespace.\n".repeat(12)
        ),
    ));
    let fixes = json!([fix_that_waits_in_prevent(), answer(larger)]);
    let (_g, replay) = replay_file(
        &json!({"version": 1, "plan": {"hypothesis": "h", "focus_files": ["words.py"]}, "fix": fixes})
            .to_string(),
    );
    let before = serde_json::to_value(repo.fingerprint()).unwrap();
    let mut child = run_efix(&repo, &replay, &artifacts(&repo, "artifacts"))
        .args(["--candidates", "2", "--jobs", "2"])
        .spawn();
    let marker = repo.path(".git/efix/scratch");
    wait_for(&marker, &mut child);
    let scratch = PathBuf::from(std::fs::read_to_string(&marker).unwrap().trim());
    wait_for(
        &scratch.join("candidate-1/repo/signals/in-prevent"),
        &mut child,
    );
    assert_eq!(serde_json::to_value(repo.fingerprint()).unwrap(), before);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(scratch.is_dir());

    let restored = restore(&repo).expect_code(0);
    assert_eq!(
        restored.json()["scratch-removed"],
        scratch.display().to_string()
    );
    assert!(!scratch.exists() && !marker.exists());
    assert_eq!(serde_json::to_value(repo.fingerprint()).unwrap(), before);
}
