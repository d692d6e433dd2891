//! Measures the patch engine on the real-output corpus (`../shared/data/patch-corpus/`, or
//! the path given as the first argument or in `EFIX_PATCH_CORPUS`).
//!
//! Prints, per source: accepted, no_change, rejected by rule, the level used by each accepted
//! hunk, and four mistakes checked mechanically on every acceptance (a lost `+` line, a no-op,
//! an added block duplicating its neighbours, a change with no matching context on either
//! side). Gold patches are compared byte for byte with `git apply` run on a temporary copy
//! (the bench may run git; the product never does), and `vectors.jsonl` with `git_strict`.
//!
//! Last, every gold patch is damaged the way models damage patches (`damage.rs`) and
//! replayed: how many damaged patches efix accepts, and how many of those acceptances are
//! harmful (`EFIX_BENCH_NO_DAMAGE=1` skips this; `EFIX_BENCH_DAMAGE_DUMP=DIR` writes every
//! harmful acceptance and every refusal there).

#![expect(clippy::print_stdout, reason = "a bench binary reports on stdout")]
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench binary may stop on bad data"
)]

#[path = "patch_corpus/damage.rs"]
mod damage;
#[path = "patch_corpus/integrity.rs"]
mod integrity;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use efix::patch::{
    FileChange, Level, MemoryFiles, PatchOutcome, PatchPolicy, PatchReport, evaluate,
    evaluate_without_post_checks,
};
use serde_json::Value;
use similar::TextDiff;

/// CPU time of this process, so the figure holds on a machine shared with other builds.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant libc knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn corpus_dir() -> PathBuf {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    arg.map(PathBuf::from)
        .or_else(|| std::env::var_os("EFIX_PATCH_CORPUS").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared/data/patch-corpus"))
}

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read corpus file");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn policy() -> PatchPolicy {
    // The corpus measures application, not size limits: gold patches can be large.
    PatchPolicy {
        max_files: 1000,
        max_loc: 100_000,
        allow_delete: true,
        ..PatchPolicy::default()
    }
}

#[derive(Default)]
struct Tally {
    records: usize,
    applied: usize,
    no_change: usize,
    rejected: BTreeMap<String, usize>,
    levels: BTreeMap<Level, usize>,
    max_levels: BTreeMap<Level, usize>,
    mistakes: BTreeMap<&'static str, Vec<i64>>,
    git_same: usize,
    git_checked: usize,
    git_diff: Vec<i64>,
    correct: usize,
    gnu_applied: usize,
    gnu_correct: usize,
    gnu_broken_syntax: Vec<i64>,
    gnu_mistakes: BTreeMap<&'static str, Vec<i64>>,
}

fn added_lines(raw: &str) -> Vec<String> {
    raw.lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| l[1..].trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

fn context_lines(raw: &str) -> HashSet<String> {
    raw.lines()
        .filter(|l| l.starts_with(' '))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

fn s(b: &Option<Vec<u8>>) -> String {
    b.as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// The four mistakes, checked from the raw text and the before/after content only.
fn mistakes(raw: &str, changes: &[FileChange]) -> Vec<&'static str> {
    let mut found = Vec::new();
    let after_all: HashSet<String> = changes
        .iter()
        .flat_map(|c| {
            s(&c.after)
                .lines()
                .map(|l| l.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    if added_lines(raw).iter().any(|l| !after_all.contains(l)) {
        found.push("lost-plus-line");
    }
    if changes.iter().all(|c| c.before == c.after) {
        found.push("no-op");
    }
    let ctx = context_lines(raw);
    for c in changes
        .iter()
        .filter(|c| c.before.is_some() && c.after.is_some())
    {
        let (b, a) = (s(&c.before), s(&c.after));
        let after: Vec<&str> = a.lines().collect();
        let before: Vec<&str> = b.lines().collect();
        let diff = TextDiff::from_lines(&b, &a);
        for op in diff.ops() {
            let (tag, old, new) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                continue;
            }
            if tag == similar::DiffTag::Insert {
                let block: Vec<&str> = after[new.clone()].iter().map(|l| l.trim_end()).collect();
                let k = block.len();
                let nonblank = block.iter().any(|l| l.trim().len() >= 4);
                let next = after
                    .get(new.end..new.end + k)
                    .map(|x| x.iter().map(|l| l.trim_end()).collect::<Vec<_>>());
                let prev = (new.start >= k).then(|| {
                    after[new.start - k..new.start]
                        .iter()
                        .map(|l| l.trim_end())
                        .collect::<Vec<_>>()
                });
                if nonblank
                    && (next.as_deref() == Some(&block[..]) || prev.as_deref() == Some(&block[..]))
                {
                    found.push("duplicated-block");
                }
            }
            // Unanchored: neither the nearest non-blank line above nor below the change is a
            // context line of the patch.
            let above = before[..old.start]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty());
            let below = before[old.end.min(before.len())..]
                .iter()
                .find(|l| !l.trim().is_empty());
            let anchored = above.is_none_or(|l| ctx.contains(l.trim()))
                || below.is_none_or(|l| ctx.contains(l.trim()));
            if !anchored && !ctx.is_empty() {
                found.push("unanchored");
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// A scratch directory holding `files` and, as `.efix-bench.diff`, the patch to apply.
fn scratch(files: &BTreeMap<String, Vec<u8>>, patch: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().ok()?;
    for (p, c) in files {
        let full = dir.path().join(p);
        std::fs::create_dir_all(full.parent()?).ok()?;
        std::fs::write(full, c).ok()?;
    }
    std::fs::write(dir.path().join(".efix-bench.diff"), patch).ok()?;
    Some(dir)
}

fn git_apply(files: &BTreeMap<String, Vec<u8>>, patch: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    let dir = scratch(files, patch)?;
    let ok = Command::new("git")
        .args(["apply", "--whitespace=nowarn", ".efix-bench.diff"])
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent()?)
        .output()
        .ok()?
        .status
        .success();
    if !ok {
        return None;
    }
    let mut out = BTreeMap::new();
    for p in files.keys() {
        if let Ok(b) = std::fs::read(dir.path().join(p)) {
            out.insert(p.clone(), b);
        }
    }
    Some(out)
}

/// What GNU `patch --fuzz=5 -l` makes of `patch` (the corpus's `gnu_patch_fuzz5_l` setting),
/// as file changes the mistake checks can score: `None` when it refuses the patch.
fn gnu_apply(files: &BTreeMap<String, Vec<u8>>, patch: &str) -> Option<Vec<FileChange>> {
    let dir = scratch(files, patch)?;
    let diff = dir.path().join(".efix-bench.diff");
    let ok = Command::new("patch")
        .args([
            "-p1",
            "--fuzz=5",
            "-l",
            "--batch",
            "--no-backup-if-mismatch",
            "-s",
            "-i",
        ])
        .arg(&diff)
        .current_dir(dir.path())
        .output()
        .ok()?
        .status
        .success();
    if !ok {
        return None;
    }
    std::fs::remove_file(&diff).ok()?;
    let mut after = BTreeMap::new();
    collect_files(dir.path(), dir.path(), &mut after);
    let mut paths: Vec<&String> = files.keys().chain(after.keys()).collect();
    paths.sort_unstable();
    paths.dedup();
    Some(
        paths
            .into_iter()
            .filter(|p| files.get(*p) != after.get(*p))
            .map(|p| FileChange {
                path: p.clone(),
                before: files.get(p).cloned(),
                after: after.get(p).cloned(),
            })
            .collect(),
    )
}

fn collect_files(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else if let (Ok(rel), Ok(bytes)) = (path.strip_prefix(root), std::fs::read(&path)) {
            out.insert(rel.to_string_lossy().into_owned(), bytes);
        }
    }
}

fn main() {
    let dir = corpus_dir();
    let records = jsonl(&dir.join("patches.jsonl"));
    let mut pre: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for p in jsonl(&dir.join("preimages.jsonl")) {
        pre.entry(p["instance_id"].as_str().unwrap().to_owned())
            .or_default()
            .insert(
                p["path"].as_str().unwrap().to_owned(),
                p["content"].as_str().unwrap().as_bytes().to_vec(),
            );
    }
    let policy = policy();
    let inputs: Vec<(String, String, MemoryFiles)> = records
        .iter()
        .map(|r| {
            let raw = r["raw_output"]
                .as_str()
                .or(r["patch"].as_str())
                .unwrap_or("")
                .to_owned();
            let files = pre
                .get(r["instance_id"].as_str().unwrap_or(""))
                .cloned()
                .unwrap_or_default();
            (
                r["source"].as_str().unwrap_or("?").to_owned(),
                raw,
                MemoryFiles(files),
            )
        })
        .collect();
    if std::env::var_os("EFIX_BENCH_INTEGRITY").is_some() {
        integrity::run(&records, &inputs, &policy);
        return;
    }
    if let Some(only) = std::env::var_os("EFIX_BENCH_ONLY") {
        // Profiling aid: evaluate one record many times.
        let only: i64 = only.to_string_lossy().parse().unwrap();
        let i = records
            .iter()
            .position(|r| r["id"].as_i64() == Some(only))
            .unwrap();
        for _ in 0..50 {
            let _ = evaluate(&inputs[i].2, &inputs[i].1, &policy);
        }
        return;
    }
    // The machine is shared with other builds, so the pass with the least CPU time is the
    // figure (EFIX_BENCH_PASSES, default 3); every pass does the same work.
    let passes: usize = std::env::var("EFIX_BENCH_PASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    type Pass = (
        f64,
        std::time::Duration,
        Vec<(f64, usize)>,
        Vec<PatchReport>,
    );
    let mut best: Option<Pass> = None;
    let mut cpus = Vec::new();
    for _ in 0..passes {
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        let mut slowest: Vec<(f64, usize)> = Vec::new();
        let reports: Vec<PatchReport> = inputs
            .iter()
            .enumerate()
            .map(|(i, (_, raw, files))| {
                let t = Instant::now();
                let r = evaluate(files, raw, &policy).expect("memory files never fail");
                slowest.push((t.elapsed().as_secs_f64() * 1e3, i));
                r
            })
            .collect();
        let elapsed = start.elapsed();
        let cpu = cpu_seconds() - cpu_start;
        cpus.push(format!("{:.0}", cpu * 1e3));
        if best.as_ref().is_none_or(|b| cpu < b.0) {
            best = Some((cpu, elapsed, slowest, reports));
        }
    }
    let (cpu, elapsed, mut slowest, reports) = best.expect("at least one pass");
    if let Some(path) = std::env::var_os("EFIX_BENCH_DUMP") {
        // Every report in full (issues, hunks, diff, and the after bytes), one line per
        // record, so two builds can be diffed record for record.
        let mut out = String::new();
        for (r, report) in records.iter().zip(&reports) {
            let afters: Vec<(&str, Option<String>)> = report
                .changes
                .iter()
                .map(|c| {
                    (
                        c.path.as_str(),
                        c.after.as_ref().map(|a| s(&Some(a.clone()))),
                    )
                })
                .collect();
            let line = serde_json::json!({ "id": r["id"], "report": report, "after": afters });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        std::fs::write(path, out).expect("write the dump");
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    let slow: Vec<String> = slowest
        .iter()
        .take(5)
        .map(|(ms, i)| format!("{} {:.1} ms", records[*i]["id"], ms))
        .collect();

    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for ((r, (source, raw, files)), report) in records.iter().zip(&inputs).zip(&reports) {
        let id = r["id"].as_i64().unwrap_or(-1);
        let t = tallies.entry(source.clone()).or_default();
        t.records += 1;
        match report.outcome {
            PatchOutcome::NoChange => t.no_change += 1,
            PatchOutcome::Rejected => {
                let rule = report
                    .issues
                    .first()
                    .map_or("?".to_owned(), |i| i.rule.clone());
                *t.rejected.entry(rule).or_default() += 1;
                if std::env::var_os("EFIX_BENCH_VERBOSE").is_some() {
                    println!(
                        "  rejected {id} {source}: {:?}",
                        report.issues.first().map(|i| &i.message)
                    );
                }
            }
            PatchOutcome::Applied => {
                t.applied += 1;
                let mut max = Level::Exact;
                for h in report.files.iter().flat_map(|f| &f.hunks) {
                    *t.levels.entry(h.level).or_default() += 1;
                    max = max.max(h.level);
                }
                *t.max_levels.entry(max).or_default() += 1;
                let m = mistakes(raw, &report.changes);
                for k in &m {
                    t.mistakes.entry(k).or_default().push(id);
                }
                if m.is_empty() {
                    t.correct += 1;
                }
                if std::env::var_os("EFIX_BENCH_VERBOSE").is_some() {
                    println!("  applied {id} {source}: max level {} {m:?}", max.name());
                }
            }
        }
        if source.starts_with("gigachat") && std::env::var_os("EFIX_BENCH_NO_GIT").is_none() {
            // GNU scored by the same four checks, on the diff the corpus gave it.
            let patch = r["patch"].as_str().unwrap_or("");
            if let Some(changes) = gnu_apply(&files.0, patch) {
                t.gnu_applied += 1;
                let m = mistakes(patch, &changes);
                for k in &m {
                    t.gnu_mistakes.entry(k).or_default().push(id);
                }
                if m.is_empty() {
                    t.gnu_correct += 1;
                    // efix refuses a change that breaks a file's syntax; GNU does not check.
                    let broken = changes.iter().any(|c| {
                        let (b, a) = (s(&c.before), s(&c.after));
                        c.before.is_some()
                            && efix::patch::introduced_syntax_error(&c.path, &b, &a).is_some()
                    });
                    if broken {
                        t.gnu_broken_syntax.push(id);
                    }
                }
            }
        }
        if source.starts_with("gold") && std::env::var_os("EFIX_BENCH_NO_GIT").is_none() {
            t.git_checked += 1;
            let patch = r["patch"].as_str().unwrap_or("");
            let git = git_apply(&files.0, patch);
            // Application only: the test policy rightly refuses some gold test patches.
            let report = &evaluate_without_post_checks(files, raw, &policy).unwrap();
            let ours: Option<BTreeMap<String, Vec<u8>>> = (report.outcome == PatchOutcome::Applied)
                .then(|| {
                    let mut m = files.0.clone();
                    for c in &report.changes {
                        match &c.after {
                            Some(a) => m.insert(c.path.clone(), a.clone()),
                            None => m.remove(&c.path),
                        };
                    }
                    m.retain(|k, _| files.0.contains_key(k));
                    m
                });
            if git.is_some() && git == ours {
                t.git_same += 1;
            } else {
                t.git_diff.push(id);
            }
        }
    }

    println!(
        "patch corpus: {} records from {}",
        records.len(),
        dir.display()
    );
    println!(
        "evaluate (contract, parse, apply, checks) on all records: {:.1} ms wall, {:.1} ms CPU \
         (best of {passes} passes; CPU ms per pass: {})",
        elapsed.as_secs_f64() * 1e3,
        cpu * 1e3,
        cpus.join(", ")
    );
    println!("slowest records: {}", slow.join(", "));
    // Records are independent, so a batch (a bench, a re-scoring job) can use every core;
    // the pipeline itself evaluates one answer at a time.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut walls = Vec::new();
    for _ in 0..passes {
        let start = Instant::now();
        std::thread::scope(|scope| {
            for worker in 0..threads {
                let (inputs, policy) = (&inputs, &policy);
                scope.spawn(move || {
                    for (_, raw, files) in inputs.iter().skip(worker).step_by(threads) {
                        let _ = evaluate(files, raw, policy);
                    }
                });
            }
        });
        walls.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let best_wall = walls.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "evaluate on all records with {threads} worker threads: {best_wall:.1} ms wall (best of \
         {passes} passes: {})",
        walls
            .iter()
            .map(|w| format!("{w:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (source, t) in &tallies {
        println!("\n## {source} ({} records)", t.records);
        println!(
            "  applied {}  no_change {}  rejected {}",
            t.applied,
            t.no_change,
            t.records - t.applied - t.no_change
        );
        println!("  applied with none of the four mistakes: {}", t.correct);
        println!("  rejected by rule: {:?}", t.rejected);
        let lv = |m: &BTreeMap<Level, usize>| {
            m.iter()
                .map(|(l, n)| format!("{}={n}", l.name()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!("  hunk levels: {}", lv(&t.levels));
        println!("  patch max levels: {}", lv(&t.max_levels));
        println!("  mistakes: {:?}", t.mistakes);
        if t.gnu_applied > 0 {
            println!(
                "  GNU patch --fuzz=5 -l, same checks: applied {}, with none of the four \
                 mistakes {} ({} of them leave a file that no longer parses: {:?}); mistakes: \
                 {:?}",
                t.gnu_applied,
                t.gnu_correct,
                t.gnu_broken_syntax.len(),
                t.gnu_broken_syntax,
                t.gnu_mistakes
            );
        }
        if t.git_checked > 0 {
            println!(
                "  byte-identical to git apply: {}/{} (differs: {:?})",
                t.git_same, t.git_checked, t.git_diff
            );
        }
    }
    vectors(&dir.join("vectors.jsonl"), &policy);
    if std::env::var_os("EFIX_BENCH_NO_DAMAGE").is_none() {
        damaged(&records, &inputs, &policy);
    }
}

/// Gold patches damaged the way models damage them (see `damage.rs`): how many efix accepts,
/// and how many of those acceptances are harmful (a result other than the gold one).
fn damaged(records: &[Value], inputs: &[(String, String, MemoryFiles)], policy: &PatchPolicy) {
    let gold: Vec<damage::Gold> = records
        .iter()
        .zip(inputs)
        .filter(|(_, (source, _, _))| source.starts_with("gold"))
        .filter_map(|(r, (_, _, files))| {
            let patch = r["patch"].as_str()?.to_owned();
            // The intended result: the gold patch as efix applies it, byte-identical to git
            // (checked above).
            let report = evaluate_without_post_checks(files, &patch, policy).ok()?;
            if report.outcome != PatchOutcome::Applied {
                return None;
            }
            let mut after = files.0.clone();
            for c in &report.changes {
                match &c.after {
                    Some(a) => after.insert(c.path.clone(), a.clone()),
                    None => after.remove(&c.path),
                };
            }
            Some((r["id"].as_i64().unwrap_or(-1), patch, files.clone(), after))
        })
        .collect();
    let dump = std::env::var_os("EFIX_BENCH_DAMAGE_DUMP").map(PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).expect("create the damage dump folder");
    }
    let tallies = damage::run(&gold, policy, dump.as_deref());
    println!(
        "\n## gold patches damaged as models damage them ({} gold records)",
        gold.len()
    );
    println!(
        "  | damage | variants | applied as intended (of which AST-equal) | applied otherwise \
         (harmful) | rejected (first rule) |"
    );
    println!("  |---|---|---|---|---|");
    let (mut variants, mut harmful, mut intended) = (0, 0, 0);
    for (kind, t) in &tallies {
        variants += t.variants;
        intended += t.intended;
        harmful += t.harmful.len();
        let shown: Vec<String> = t.harmful.iter().take(12).map(i64::to_string).collect();
        let more = if t.harmful.len() > 12 { ", ..." } else { "" };
        let rules: Vec<String> = t.rejected.iter().map(|(r, n)| format!("{r} {n}")).collect();
        println!(
            "  | {} | {} | {} ({}) | {}{} | {} |",
            kind.name(),
            t.variants,
            t.intended,
            t.equivalent,
            t.harmful.len(),
            if shown.is_empty() {
                String::new()
            } else {
                format!(" ({}{more})", shown.join(", "))
            },
            rules.join(", ")
        );
    }
    println!(
        "  | all | {variants} | {intended} | {harmful} | {} |",
        variants - intended - harmful
    );
}

fn vectors(path: &Path, policy: &PatchPolicy) {
    let mut agree = 0;
    let mut total = 0;
    let mut disagree = Vec::new();
    let mut ours_only = Vec::new();
    for v in jsonl(path) {
        let name = v["name"].as_str().unwrap_or("?").to_owned();
        let mut files: BTreeMap<String, Vec<u8>> = v["files_pre"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, c)| (k.clone(), c.as_str().unwrap_or("").as_bytes().to_vec()))
                    .collect()
            })
            .unwrap_or_default();
        let mut ok = true;
        for p in v["patches"].as_array().into_iter().flatten() {
            let report = evaluate(
                &MemoryFiles(files.clone()),
                p.as_str().unwrap_or(""),
                policy,
            )
            .unwrap();
            if report.outcome != PatchOutcome::Applied {
                ok = false;
                break;
            }
            for c in report.changes {
                match c.after {
                    Some(a) => files.insert(c.path, a),
                    None => files.remove(&c.path),
                };
            }
        }
        let git = &v["results"]["git_strict"];
        let git_ok = git["ok"].as_bool().unwrap_or(false);
        if git_ok {
            total += 1;
            let want: BTreeMap<String, Vec<u8>> = git["files_post"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, c)| (k.clone(), c.as_str().unwrap_or("").as_bytes().to_vec()))
                        .collect()
                })
                .unwrap_or_default();
            if ok && want == files {
                agree += 1;
            } else {
                disagree.push(name);
            }
        } else if ok {
            ours_only.push(name);
        }
    }
    println!("\n## vectors.jsonl");
    println!("  agree with git_strict where git applies: {agree}/{total}; differ: {disagree:?}");
    println!("  applied where git_strict refuses: {ours_only:?}");
}
