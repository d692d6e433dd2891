//! `efix run --candidates K` with replayed candidate lists (a wrong fix, a regression, a cheat,
//! the honest fix, a larger honest fix) in several orders, on a cargo and a pytest project:
//! the smallest honest fix wins every time and is proven again in the working tree; with no
//! honest fix nothing is claimed, the tree is as it was, and the next prompt names each
//! candidate's refusal.

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, replay_file};

fn answer(output: &str) -> Value {
    json!({"output": output, "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x"})
}

/// Run efix with the answers in `fixes` (K consecutive answers per round).
fn run(
    repo: &Repo,
    repro: &str,
    fixes: &[Value],
    extra: &[&str],
) -> (crate::harness::Run, Value) {
    let replay = json!({"version": 1, "plan": {"hypothesis": "h", "focus_files": []}, "fix": fixes});
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let mut efix = Efix::replay_run(repo, repro, &path).args(extra);
    if repro.starts_with("pytest") {
        efix = efix.with_pytest();
    }
    let run = efix.run();
    let evidence = std::fs::read_to_string(artifacts.join("evidence.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (run, evidence)
}

/// `items` in the orders the tests try: as given, reversed, and rotated by two.
fn orders<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    let mut reversed = items.to_vec();
    reversed.reverse();
    let mut rotated = items.to_vec();
    rotated.rotate_left(2);
    vec![items.to_vec(), reversed, rotated]
}

/// (candidate number, verdict) of every candidate of round `round`.
fn verdicts(evidence: &Value, round: usize) -> Vec<(u64, String)> {
    evidence["rounds"][round]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["number"].as_u64().unwrap(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Check that the candidate holding `winner` won, every other honest one is `proven`, and
/// every dishonest one is refused; return the winner's number.
fn assert_smallest_honest_won(
    evidence: &Value,
    order: &[(&str, &str)],
    winner: &str,
    honest: &[&str],
) {
    let verdicts = verdicts(evidence, 0);
    for (number, verdict) in &verdicts {
        let name = order[*number as usize - 1].0;
        let expected = if name == winner {
            "won"
        } else if honest.contains(&name) {
            "proven"
        } else {
            "refused"
        };
        assert_eq!(verdict, expected, "candidate {number} ({name}): {evidence:#}");
    }
    assert_eq!(verdicts.len(), order.len());
}

const WORDS_PY: &str = "def word_count(text):\n    \"\"\"Number of whitespace-separated words in text.\"\"\"\n    return len([w for w in text.split(\" \")])\n";
const TEST_WORDS_PY: &str = "from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count(\"a b c\") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count(\"a  b\") == 2\n";
const PY_REPRO: &str = "pytest tests/test_words.py::test_repeated_spaces";

fn python_repo() -> Repo {
    Repo::with_files(&[
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("words.py", WORDS_PY),
        ("tests/test_words.py", TEST_WORDS_PY),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ])
}

/// A change to `words.py` (its body after the docstring) with a new test `assertion`.
fn py_change(body: &str, assertion: &str) -> String {
    let removed = "-    return len([w for w in text.split(\" \")])\n";
    let added: String = body.lines().map(|l| format!("+{l}\n")).collect();
    let count = body.lines().count();
    format!(
        "--- a/words.py\n+++ b/words.py\n@@ -1,3 +1,{} @@\n def word_count(text):\n     \"\"\"Number of whitespace-separated words in text.\"\"\"\n{removed}{added}\
         --- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_guard():\n+    {assertion}\n",
        count + 2
    )
}

fn python_candidates() -> Vec<(&'static str, String)> {
    let guard = "assert word_count(\"a\\tb\\nc \") == 3";
    vec![
        // The docstring changes, the count does not: the reproduction still fails.
        (
            "wrong",
            "--- a/words.py\n+++ b/words.py\n@@ -1,3 +1,3 @@\n def word_count(text):\n-    \"\"\"Number of whitespace-separated words in text.\"\"\"\n+    \"\"\"Number of words in text.\"\"\"\n     return len([w for w in text.split(\" \")])\n--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n def test_repeated_spaces():\n     assert word_count(\"a  b\") == 2\n+\n+\n+def test_guard():\n+    assert word_count(\"a\\tb\\nc \") == 3\n".to_owned(),
        ),
        // Splitting on two spaces fixes the reproduction and breaks `test_single_spaces`.
        (
            "regression",
            py_change(
                "    return len(text.split(\"  \"))",
                "assert word_count(\"x  y  z\") == 3",
            ),
        ),
        // A count equal to anything: a flipped expected value passes too.
        (
            "cheat",
            py_change(
                "    class Count(int):\n        def __eq__(self, other):\n            return True\n\n        __hash__ = int.__hash__\n\n    return Count(len(text.split(\" \")))",
                guard,
            ),
        ),
        ("honest", py_change("    return len(text.split())", guard)),
        (
            "larger",
            py_change(
                "    # With no argument, split() drops the empty strings between spaces.\n    words = text.split()\n    return len(words)",
                guard,
            ),
        ),
    ]
}

#[test]
fn python_the_smallest_honest_candidate_wins_in_every_order() {
    let candidates = python_candidates();
    for order in orders(&candidates) {
        let repo = python_repo();
        let fixes: Vec<Value> = order.iter().map(|(_, text)| answer(text)).collect();
        let k = fixes.len().to_string();
        let (run, evidence) = run(&repo, PY_REPRO, &fixes, &["--candidates", &k, "--max-rounds", "1"]);
        let run = run.expect_code(0);
        assert_eq!(run.json()["status"], "fixed", "{evidence:#}");
        let named: Vec<(&str, &str)> = order.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_smallest_honest_won(&evidence, &named, "honest", &["honest", "larger"]);
        assert!(repo.read("words.py").contains("return len(text.split())"));
        assert_eq!(evidence["rounds"][0]["verdict"], "proven");
    }
}
