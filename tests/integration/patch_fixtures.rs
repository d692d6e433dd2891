//! The patch fixture scenarios: every folder under `tests/fixtures/patches/NNN_name/` holds
//! `input/` (the repository before), `output.txt` (the model's raw answer) and either
//! `expected/` (the repository after) or `issues.json` (the expected `[{"rule","path"}]`).
//! Optional: `levels.txt` (one ladder level per hunk, in report order), `policy.json`
//! (`allow`, `protected`, `allow_delete`, `max_files`, `max_loc`, `allow_harness`,
//! `commands`), `outcome.txt`.
//!
//! Each scenario runs in a fresh git repository (initialised, nothing committed), so the
//! input's `.gitignore` applies as it would in a real checkout; `.git` itself is not part of
//! the compared trees.
//!
//! One test walks them all; a second mutates every answer with a seeded PRNG and asserts the
//! engine never panics.

#![expect(
    clippy::expect_used,
    reason = "fixture helpers stop on a broken fixture tree"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use efix::patch::{MemoryFiles, Mode, PatchOutcome, PatchPolicy, evaluate, process};
use serde_json::Value;

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/patches")
}

fn scenarios() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_root())
        .expect("fixtures folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.expect("entry").path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).expect("metadata");
            if meta.is_dir() {
                walk(root, &p, out);
            } else if meta.is_file() {
                let rel = p
                    .strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(files: &BTreeMap<String, Vec<u8>>, to: &Path) {
    for (rel, bytes) in files {
        let full = to.join(rel);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, bytes).expect("write");
    }
}

fn policy_of(dir: &Path) -> PatchPolicy {
    let mut policy = PatchPolicy::default();
    let Ok(text) = std::fs::read_to_string(dir.join("policy.json")) else {
        return policy;
    };
    let v: Value = serde_json::from_str(&text).expect("policy.json");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    if let Some(a) = v.get("allow") {
        policy.allow = strings(a);
    }
    if let Some(p) = v.get("protected") {
        policy.protected = strings(p);
    }
    if let Some(d) = v.get("allow_delete").and_then(Value::as_bool) {
        policy.allow_delete = d;
    }
    if let Some(n) = v.get("max_files").and_then(Value::as_u64) {
        policy.max_files = n as usize;
    }
    if let Some(n) = v.get("max_loc").and_then(Value::as_u64) {
        policy.max_loc = n as usize;
    }
    if let Some(a) = v.get("allow_harness") {
        policy.allow_harness = strings(a);
    }
    if let Some(c) = v.get("commands") {
        policy.commands = strings(c);
    }
    policy
}

fn check_scenario(dir: &Path) -> Result<(), String> {
    let input = tree(&dir.join("input"));
    let raw =
        std::fs::read_to_string(dir.join("output.txt")).map_err(|e| format!("output.txt: {e}"))?;
    let policy = policy_of(dir);
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    git2::Repository::init(tmp.path()).map_err(|e| e.to_string())?;
    copy_tree(&input, tmp.path());
    let report = process(tmp.path(), &raw, &policy, Mode::Write).map_err(|e| e.to_string())?;
    let after = tree(tmp.path());
    let summary = serde_json::to_string(&report).unwrap_or_default();
    if let Ok(want) = std::fs::read_to_string(dir.join("outcome.txt")) {
        let got = serde_json::to_value(report.outcome).unwrap_or_default();
        if got.as_str() != Some(want.trim()) {
            return Err(format!("outcome {got} != {}: {summary}", want.trim()));
        }
    }
    if dir.join("expected").is_dir() {
        let expected = tree(&dir.join("expected"));
        if report.outcome == PatchOutcome::Rejected {
            return Err(format!("rejected: {summary}"));
        }
        if after != expected {
            let show = |m: &BTreeMap<String, Vec<u8>>| {
                m.iter()
                    .map(|(k, v)| format!("{k}: {:?}", String::from_utf8_lossy(v)))
                    .collect::<Vec<_>>()
            };
            return Err(format!(
                "tree differs:\n got {:?}\nwant {:?}\n{summary}",
                show(&after),
                show(&expected)
            ));
        }
    } else {
        let text = std::fs::read_to_string(dir.join("issues.json"))
            .map_err(|e| format!("issues.json: {e}"))?;
        let want: Vec<Value> =
            serde_json::from_str(&text).map_err(|e| format!("issues.json: {e}"))?;
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|w| {
                (
                    w["rule"].as_str().unwrap_or("").to_owned(),
                    w["path"].as_str().map(str::to_owned),
                )
            })
            .collect();
        let got: Vec<(String, Option<String>)> = report
            .issues
            .iter()
            .map(|i| (i.rule.clone(), i.path.clone()))
            .collect();
        // A path in issues.json must match; an absent path there accepts any.
        let matches = want.len() == got.len()
            && want
                .iter()
                .zip(&got)
                .all(|(w, g)| w.0 == g.0 && (w.1.is_none() || w.1 == g.1));
        if !matches {
            return Err(format!("issues {got:?} != {want:?}: {summary}"));
        }
        if report.outcome == PatchOutcome::Applied {
            return Err(format!("applied despite issues: {summary}"));
        }
        if after != input {
            return Err("the tree changed although the answer was not applied".to_owned());
        }
        if report.issues.iter().any(|i| i.message.contains('\n')) {
            return Err("an issue message spans several lines".to_owned());
        }
    }
    if let Ok(levels) = std::fs::read_to_string(dir.join("levels.txt")) {
        let want: Vec<&str> = levels.split_whitespace().collect();
        let got: Vec<&str> = report
            .files
            .iter()
            .flat_map(|f| &f.hunks)
            .map(|h| h.level.name())
            .collect();
        if want != got {
            return Err(format!("levels {got:?} != {want:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_patch_fixture_scenario_gives_its_expected_tree_or_issues() {
    let dirs = scenarios();
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            check_scenario(d).err().map(|e| {
                format!(
                    "{}: {e}",
                    d.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(dirs.len() >= 60, "only {} scenarios", dirs.len());
    assert!(
        failures.is_empty(),
        "{} failing scenarios:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: &[&str] = &[
    "\n",
    "@@",
    "@@ -",
    "@@ -1,2 +1,3 @@\n",
    "\n+",
    "\n-",
    "\n ",
    "\\ No newline at end of file\n",
    "--- a/",
    "+++ b/",
    "diff --git a/x b/x\n",
    "```",
    "<patch>",
    "</patch>",
    "\r\n",
    "\t",
    "é",
    "{",
    "\"edits\"",
    "/dev/null",
    "../",
    "-- ",
    "[end of patch]",
];

fn mutate(rng: &mut Rng, input: &str) -> String {
    let mut chars: Vec<char> = input.chars().collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(4) {
            0 if !chars.is_empty() => {
                let end = (at + rng.below(8)).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            1 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())];
                chars.splice(at..at, s.chars());
            }
            2 if !chars.is_empty() => {
                let i = at.min(chars.len() - 1);
                chars[i] = char::from_u32(rng.below(0x80) as u32).unwrap_or('x');
            }
            _ => {
                let from = rng.below(chars.len());
                let len = rng.below(40).min(chars.len() - from);
                let piece: Vec<char> = chars[from..from + len].to_vec();
                chars.splice(at..at, piece);
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn mutated_fixture_answers_never_panic_the_engine() {
    let mut rng = Rng(0x5eed_1234_abcd_0042);
    let mut cases = 0;
    for dir in scenarios() {
        let files = MemoryFiles(tree(&dir.join("input")));
        let raw = std::fs::read_to_string(dir.join("output.txt")).unwrap_or_default();
        for _ in 0..80 {
            let mutated = mutate(&mut rng, &raw);
            let result =
                std::panic::catch_unwind(|| evaluate(&files, &mutated, &PatchPolicy::default()));
            assert!(
                result.is_ok(),
                "panic on a mutation of {}:\n{mutated}",
                dir.display()
            );
            cases += 1;
        }
    }
    assert!(cases >= 4000, "only {cases} cases");
}
