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
fn run(repo: &Repo, repro: &str, fixes: &[Value], extra: &[&str]) -> (crate::harness::Run, Value) {
    let replay =
        json!({"version": 1, "plan": {"hypothesis": "h", "focus_files": []}, "fix": fixes});
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
/// every dishonest one is refused — or, for either, that its proof was stopped because it was
/// larger than the winner once the winner was fully proven (it could no longer win).
fn assert_smallest_honest_won(
    evidence: &Value,
    order: &[(&str, &str)],
    winner: &str,
    honest: &[&str],
) {
    let candidates = evidence["rounds"][0]["candidates"].as_array().unwrap();
    let size = |c: &Value| (c["lines"].as_u64().unwrap(), c["files"].as_u64().unwrap());
    let won = candidates
        .iter()
        .find(|c| c["verdict"] == "won")
        .unwrap_or_else(|| panic!("no candidate won: {evidence:#}"));
    for candidate in candidates {
        let number = candidate["number"].as_u64().unwrap();
        let verdict = candidate["verdict"].as_str().unwrap();
        let name = order[number as usize - 1].0;
        let expected = if name == winner {
            "won"
        } else if honest.contains(&name) {
            "proven"
        } else {
            "refused"
        };
        if verdict == "not-judged" && name != winner {
            let lost = candidate["lost"].as_str().unwrap();
            assert!(
                lost.contains(&format!(
                    "stopped once candidate {} was fully proven",
                    won["number"]
                )) && size(candidate) >= size(won),
                "candidate {number} ({name}) not judged but not outranked: {evidence:#}"
            );
            continue;
        }
        assert_eq!(
            verdict, expected,
            "candidate {number} ({name}): {evidence:#}"
        );
    }
    assert_eq!(candidates.len(), order.len());
    assert_eq!(
        order[won["number"].as_u64().unwrap() as usize - 1].0,
        winner
    );
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
        let (run, evidence) = run(
            &repo,
            PY_REPRO,
            &fixes,
            &["--candidates", &k, "--max-rounds", "1"],
        );
        let run = run.expect_code(0);
        assert_eq!(run.json()["status"], "fixed", "{evidence:#}");
        let named: Vec<(&str, &str)> = order.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_smallest_honest_won(&evidence, &named, "honest", &["honest", "larger"]);
        assert!(repo.read("words.py").contains("return len(text.split())"));
        assert_eq!(evidence["rounds"][0]["verdict"], "proven");
    }
}

#[test]
fn python_with_no_honest_candidate_nothing_is_claimed_and_each_refusal_is_named() {
    let repo = python_repo();
    let before = repo.fingerprint();
    let candidates: Vec<(&str, String)> = python_candidates()
        .into_iter()
        .filter(|(name, _)| !["honest", "larger"].contains(name))
        .collect();
    let fixes: Vec<Value> = candidates.iter().map(|(_, text)| answer(text)).collect();
    let (run, evidence) = run(
        &repo,
        PY_REPRO,
        &fixes,
        &["--candidates", "3", "--max-rounds", "1"],
    );
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(evidence["fix"], Value::Null);
    let round = &evidence["rounds"][0];
    assert_eq!(round["verdict"], "proof-failed");
    assert_eq!(
        verdicts(&evidence, 0),
        vec![
            (1, "refused".to_owned()),
            (2, "refused".to_owned()),
            (3, "refused".to_owned())
        ]
    );
    // One issue per candidate, naming it and the rules that refused it: the next prompt's
    // feedback is made of these.
    let issues = round["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 3, "{round:#}");
    for (i, issue) in issues.iter().enumerate() {
        let message = issue["message"].as_str().unwrap();
        let candidate = &round["candidates"][i];
        let first_rule = candidate["round"]["issues"][0]["rule"].as_str().unwrap();
        assert_eq!(issue["rule"], first_rule);
        assert!(
            message.starts_with(&format!("candidate {} (", i + 1)) && message.contains(first_rule),
            "{message}"
        );
    }
    // The scratch copies are gone and nothing is left for `efix restore`.
    assert!(!repo.root.join(".git/efix/scratch").exists());
}

/// The demo crate's guard test, added after `crlf_files_parse_like_unix_files`.
const CARGO_GUARD: &str = r#"@@ -55,3 +55,8 @@
         let windows = parse("name = efix\r\nmode = strict\r\n");
         assert_eq!(windows, unix);
     }
+
+    #[test]
+    fn crlf_value_has_no_carriage_return() {
+        let entries = parse("key = value\r\n");
+        assert_eq!(get(&entries, "key"), Some("value"));
+    }
 }
"#;

const CARGO_HEADER: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n";

/// The line-splitting fix, with `comment` lines above the loop.
fn cargo_split_fix(comment: &str) -> String {
    let added: String = comment.lines().map(|l| format!("+    // {l}\n")).collect();
    format!(
        "@@ -12,5 +12,{} @@\n pub fn parse(text: &str) -> Vec<Entry> {{\n     let mut entries = Vec::new();\n-    for line in text.split('\\n') {{\n{added}+    for line in text.lines() {{\n         let line = line.trim_start();\n         if line.is_empty() || line.starts_with('#') {{\n",
        5 + comment.lines().count()
    )
}

/// Replace line 22 (the value) with `value`.
fn cargo_value_fix(value: &str) -> String {
    format!(
        "@@ -21,3 +21,3 @@\n                 key: key.trim_end().to_string(),\n-                value: value.trim_start().to_string(),\n+                value: {value},\n             }});\n"
    )
}

fn cargo_candidates() -> Vec<(&'static str, String)> {
    let get_hunk = "@@ -30,3 +30,3 @@\n pub fn get<'a>(entries: &'a [Entry], key: &str) -> Option<&'a str> {\n-    entries.iter().rev().find(|e| e.key == key).map(|e| e.value.as_str())\n+    entries.iter().find(|e| e.key == key).map(|e| e.value.as_str())\n }\n";
    vec![
        // Strips a `\n` that is never there: the reproduction still fails.
        (
            "wrong",
            format!(
                "{CARGO_HEADER}{}{CARGO_GUARD}",
                cargo_value_fix("value.trim_start().trim_end_matches('\\n').to_string()")
            ),
        ),
        // The fix, and the first value now wins: `last_value_wins` breaks.
        (
            "regression",
            format!(
                "{CARGO_HEADER}{}{get_hunk}{CARGO_GUARD}",
                cargo_split_fix("")
            ),
        ),
        // The failing test edited into passing (its CRLF input made LF): smaller than the
        // honest fix. (An always-true `PartialEq` would be proven today: the test compares two
        // parses, so no expected literal can be flipped by a canary.)
        (
            "cheat",
            format!(
                "{CARGO_HEADER}@@ -54,3 +54,3 @@\n         let unix = parse(\"name = efix\\nmode = strict\\n\");\n-        let windows = parse(\"name = efix\\r\\nmode = strict\\r\\n\");\n+        let windows = parse(\"name = efix\\nmode = strict\\n\");\n         assert_eq!(windows, unix);\n"
            ),
        ),
        (
            "honest",
            format!("{CARGO_HEADER}{}{CARGO_GUARD}", cargo_split_fix("")),
        ),
        (
            "larger",
            format!(
                "{CARGO_HEADER}{}{CARGO_GUARD}",
                cargo_split_fix("`lines` also strips the `\\r` of CRLF line endings.")
            ),
        ),
    ]
}

#[test]
fn cargo_the_smallest_honest_candidate_wins_in_every_order() {
    let candidates = cargo_candidates();
    for order in orders(&candidates).into_iter().take(2) {
        let repo = Repo::demo();
        let fixes: Vec<Value> = order.iter().map(|(_, text)| answer(text)).collect();
        let k = fixes.len().to_string();
        let (run, evidence) = run(
            &repo,
            "cargo test crlf",
            &fixes,
            &["--candidates", &k, "--jobs", "2", "--max-rounds", "1"],
        );
        let run = run.expect_code(0);
        assert_eq!(run.json()["status"], "fixed", "{evidence:#}");
        let named: Vec<(&str, &str)> = order.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_smallest_honest_won(&evidence, &named, "honest", &["honest", "larger"]);
        assert!(repo.read("src/lib.rs").contains("for line in text.lines()"));
        assert!(!repo.read("src/lib.rs").contains("CRLF line endings"));
        if order == candidates {
            // The PR body's table, under the winner's proof.
            let artifacts = repo.root.parent().unwrap().join("artifacts");
            let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
            let start = body.find("### Candidates").unwrap();
            let rest = &body[start + 1..];
            let end = [rest.find("\n### "), rest.find("\n<details>")]
                .into_iter()
                .flatten()
                .min()
                .map_or(body.len(), |at| start + 1 + at + 1);
            let table = &body[start..end];
            insta::assert_snapshot!("cargo_candidates_table", table);
            // `efix verify` re-checks the winner, the one change the run claims.
            let verify = Efix::new().args(["verify"]).args([&artifacts]).run();
            assert_eq!(verify.json()["holds"], true, "{}", verify.stdout());
        }
    }
}

#[test]
fn python_first_proven_wins_at_once_and_the_others_are_not_judged() {
    let by_name: std::collections::BTreeMap<&str, String> =
        python_candidates().into_iter().collect();
    let repo = python_repo();
    let fixes = vec![answer(&by_name["larger"]), answer(&by_name["honest"])];
    let (run, evidence) = run(
        &repo,
        PY_REPRO,
        &fixes,
        &[
            "--candidates",
            "2",
            "--jobs",
            "1",
            "--first-proven",
            "--max-rounds",
            "1",
        ],
    );
    run.expect_code(0);
    // Proofs start smallest first: one at a time, the honest fix (answered second) is proven
    // before the larger one starts, which is then never proven.
    assert_eq!(
        verdicts(&evidence, 0),
        vec![(1, "not-judged".to_owned()), (2, "won".to_owned())]
    );
    assert!(
        evidence["rounds"][0]["candidates"][0]["commands"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(repo.read("words.py").contains("return len(text.split())"));
}

/// The jest project's change: `lib/duration.js` with `factor` for seconds, and a guard test.
fn jest_change(factor: &str) -> String {
    format!(
        r#"--- a/lib/duration.js
+++ b/lib/duration.js
@@ -4,3 +4,3 @@
   const match = /^(\d+)(ms|s)$/.exec(text);
-  return Number(match[1]) * (match[2] === 's' ? 100 : 1);
+  return Number(match[1]) * (match[2] === 's' ? {factor} : 1);
 }}
--- a/test/duration.test.js
+++ b/test/duration.test.js
@@ -6,4 +6,8 @@
   test('reads seconds', () => {{
     expect(parseDuration('10s')).toEqual(10000);
   }});
+
+  test('reads one second', () => {{
+    expect(parseDuration('1s')).toEqual(1000);
+  }});
 }});
"#
    )
}

#[test]
fn jest_candidates_run_with_the_working_trees_node_modules() {
    // `node_modules` is ignored, so a scratch copy of the base commit has none: the copies
    // link the working tree's, or no candidate's jest could start.
    let repo = crate::canary::jest_repo();
    let before = repo.fingerprint();
    let fixes = vec![answer(&jest_change("10")), answer(&jest_change("1000"))];
    let (run, evidence) = run(
        &repo,
        crate::canary::JEST_REPRO,
        &fixes,
        &["--candidates", "2", "--max-rounds", "1"],
    );
    run.expect_code(0);
    assert_eq!(
        verdicts(&evidence, 0),
        vec![(1, "refused".to_owned()), (2, "won".to_owned())],
        "{evidence:#}"
    );
    // The wrong candidate was refused by its proof, not by a jest that could not start.
    let refused = &evidence["rounds"][0]["candidates"][0];
    assert_eq!(
        refused["round"]["issues"][0]["rule"], "prove.reproduction",
        "{refused:#}"
    );
    assert!(repo.read("lib/duration.js").contains("? 1000 : 1"));
    assert_ne!(repo.fingerprint(), before);
    assert!(repo.root.join("node_modules").is_dir());
}
