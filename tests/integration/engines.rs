//! What the real-engine tests share: a small Python project with a real bug (`clamp` compares
//! with `low` twice), its fix in each answer form, and running `efix run` with a config file
//! written beside the repository.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Efix, Repo, Run};

/// The reproduction: one failing pytest test.
pub const REPRO: &str = "pytest tests/test_calc.py::test_inside_the_range";

/// The module with the bug.
pub const CALC: &str = "def clamp(value, low, high):\n    \"\"\"Limit value to the range [low, high].\"\"\"\n    return max(low, min(value, low))\n";

/// Its tests; the last one fails if the engine's API key ever reaches a test process.
pub const TESTS: &str = "import os\n\nfrom calc import clamp\n\n\ndef test_inside_the_range():\n    assert clamp(5, 0, 10) == 5\n\n\ndef test_below_the_range():\n    assert clamp(-3, 0, 10) == 0\n\n\ndef test_the_engine_key_never_reaches_a_test():\n    assert not [name for name, value in os.environ.items() if \"efixtest\" in value]\n";

/// The API key the tests use: shaped like an OpenAI key, so the redaction rules know it.
pub const KEY: &str = "sk-efixtest-0123456789abcdefghijklmnopqrstuv";

/// The Python project, committed.
pub fn clamp_repo(extra: &[(&str, &str)]) -> Repo {
    let mut files = vec![
        (".gitignore", "__pycache__/\n.pytest_cache/\n"),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("calc.py", CALC),
        ("tests/test_calc.py", TESTS),
    ];
    files.extend_from_slice(extra);
    Repo::with_files(&files)
}

/// The fix as exact-text edits: the bug and a regression test that fails without it.
pub fn fix_edits() -> Value {
    json!([
        {"path": "calc.py", "old_text": "    return max(low, min(value, low))\n",
         "new_text": "    return max(low, min(value, high))\n"},
        {"path": "tests/test_calc.py", "old_text": "def test_below_the_range():\n",
         "new_text": "def test_at_the_upper_bound():\n    assert clamp(10, 0, 10) == 10\n\n\ndef test_below_the_range():\n"}
    ])
}

/// The same fix as one unified diff.
pub const FIX_DIFF: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n def clamp(value, low, high):\n     \"\"\"Limit value to the range [low, high].\"\"\"\n-    return max(low, min(value, low))\n+    return max(low, min(value, high))\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -8,3 +8,7 @@\n \n \n+def test_at_the_upper_bound():\n+    assert clamp(10, 0, 10) == 10\n+\n+\n def test_below_the_range():\n";

/// A whole fix answer with the change in `edits`.
pub fn fix_answer(edits: Value) -> Value {
    json!({
        "output": "", "edits": edits,
        "root_cause": "clamp compares the value with low twice, never with high.",
        "fix_summary": "Compare with high.", "tests_summary": "test_at_the_upper_bound.",
        "risk_rollback": "Low; revert the commit.", "file_justifications": []
    })
}

/// A plan answer naming the module.
pub fn plan_answer() -> Value {
    json!({"hypothesis": "clamp uses low as the upper bound.", "focus_files": ["calc.py"]})
}

/// The directory beside the repository (config, artifacts, scripts).
pub fn beside(repo: &Repo) -> PathBuf {
    repo.root.parent().unwrap().to_owned()
}

/// `efix run --repro REPRO --engine ENGINE` with `config` (after `version: 1`) in a file
/// beside the repository, pytest on PATH and `env` set; returns the run and the evidence.
pub fn run(repo: &Repo, engine: &str, config: &str, env: &[(&str, &str)]) -> (Run, Value) {
    let dir = beside(repo);
    let config_path = dir.join("efix.yml");
    std::fs::write(&config_path, format!("version: 1\n{config}")).unwrap();
    let artifacts = dir.join("artifacts");
    let mut efix = Efix::new()
        .with_pytest()
        .args(["run", "--repro", REPRO, "--engine", engine, "--repo"])
        .args([&repo.root])
        .args(["--artifacts"])
        .args([&artifacts])
        .args(["--config"])
        .args([&config_path]);
    for (name, value) in env {
        efix = efix.env(name, value);
    }
    let run = efix.run();
    let evidence = std::fs::read_to_string(artifacts.join("evidence.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (run, evidence)
}

/// Every artifact's text, for searching.
pub fn artifacts_text(repo: &Repo) -> String {
    let mut out = String::new();
    collect(&beside(repo).join("artifacts"), &mut out);
    out
}

fn collect(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
}

/// The outcomes of the engine calls, in order.
pub fn outcomes(evidence: &Value) -> Vec<String> {
    evidence["engine"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap().to_owned())
        .collect()
}
