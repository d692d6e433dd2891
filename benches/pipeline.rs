//! Pipeline and front-end overhead, in wall-clock terms.
//!
//! 1. `efix run` on the demo (replay engine, `--dry-run` so the tree is restored and the run
//!    can repeat): total time minus the time of the commands efix ran. Goal: ≤ 200 ms.
//! 2. `efix exec -- true` against spawning `true` directly (the whole binary: start-up,
//!    config resolution, runner). Goal: ≤ 5 ms more, median.
//! 3. Scale: the same run on the demo crate with 0, 20,000 and 100,000 more committed files
//!    (generated here, nested directories, 0.5–15 KB each, index fresh, files older than the
//!    snapshot's stat margin as in any real checkout). Each run is a fresh process, so its peak
//!    RSS (`VmHWM` of that process, commands excluded) is its own. Goal: at 20,000 files the
//!    overhead stays within 2× the tiny case plus 100 ms.
//!
//! Run with `cargo bench --bench pipeline` (all), or name parts: `-- demo`, `-- exec`,
//! `-- scale`. `EFIX_BENCH_SCALE_FILES=0,20000` sets the scale sizes (default `0,20000,100000`),
//! `EFIX_BENCH_SCALE_RUNS=N` the timed runs per size (default 5).

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop loudly"
)]
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its figures on stdout"
)]

#[path = "pipeline/scale.rs"]
mod scale;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use efix::config::{Config, EngineKind, Env, Overrides};
use efix::engine::replay::ReplayEngine;
use efix::pipeline::{self, EngineSpec, RunOptions};
use efix::report::Reporter;

const PIPELINE_RUNS: usize = 7;
const EXEC_RUNS: usize = 200;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(scale::CHILD_FLAG) {
        scale::child(&args[1..]);
        return;
    }
    let parts: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| ["demo", "exec", "scale"].contains(a))
        .collect();
    let wanted = |part: &str| parts.is_empty() || parts.contains(&part);
    if wanted("demo") {
        pipeline_overhead();
    }
    if wanted("exec") {
        exec_overhead();
    }
    if wanted("scale") {
        scale::overhead();
    }
}

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The configuration of a demo run at `root`: the defaults, the replay engine. Commands
/// start through the efix binary's sandbox helper mode, as in `efix run` (this bench binary
/// has no helper mode of its own).
pub(crate) fn demo_config(root: &Path) -> Config {
    let overrides = Overrides {
        repo: root.to_path_buf(),
        engine: Some(EngineKind::Replay),
        ..Overrides::default()
    };
    let mut config = Config::resolve(None, &overrides, &Env::capture()).unwrap();
    config.runner.sandbox.helper = env!("CARGO_BIN_EXE_efix").into();
    config
}

/// One dry run of the demo's pipeline at `root`, in this process: its wall time, the time its
/// commands took by their own account (ms), and how many commands it ran.
pub(crate) fn demo_run(root: &Path, artifacts: &Path, config: &Config) -> (Duration, f64, usize) {
    let mut engine = ReplayEngine::from_str("demo", pipeline::demo::REPLAY).unwrap();
    let options = RunOptions {
        repo: root.to_path_buf(),
        command: pipeline::demo::COMMAND.to_owned(),
        suites: Vec::new(),
        artifacts: Some(artifacts.to_path_buf()),
        dry_run: true,
        repeat: 1,
        engine: EngineSpec {
            kind: "replay".to_owned(),
            replay: None,
        },
    };
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let (summary, _) = pipeline::run(
        &options,
        config,
        &mut engine,
        Reporter::quiet(),
        &cancel,
        None,
    )
    .unwrap();
    let total = started.elapsed();
    assert_eq!(summary.status_text, "fixed and proven");
    let evidence = pipeline::verify::read_evidence(artifacts).unwrap();
    let in_commands: u64 = evidence
        .commands
        .iter()
        .filter_map(|c| c.outcome.as_ref())
        .map(|o| o.duration_ms)
        .sum();
    (total, in_commands as f64, evidence.commands.len())
}

fn pipeline_overhead() {
    let scratch = tempfile::tempdir().unwrap();
    let root = pipeline::demo::prepare(scratch.path()).unwrap();
    let artifacts = scratch.path().join("artifacts");
    let config = demo_config(&root);
    let mut overheads = Vec::new();
    let mut totals = Vec::new();
    let mut commands = 0;
    for _ in 0..PIPELINE_RUNS {
        let (total, in_commands, ran) = demo_run(&root, &artifacts, &config);
        commands = ran;
        totals.push(total.as_secs_f64() * 1000.0);
        overheads.push(total.as_secs_f64() * 1000.0 - in_commands);
    }
    println!("pipeline: demo run (dry run), {PIPELINE_RUNS} runs, {commands} commands each");
    println!("  total            median {:8.1} ms", median(totals));
    println!(
        "  overhead         median {:8.1} ms  (total minus the commands' own durations; goal <= 200 ms)",
        median(overheads.clone())
    );
    println!(
        "  overhead         max    {:8.1} ms",
        overheads.iter().cloned().fold(0.0, f64::max)
    );
}

fn time_spawn(mut command: Command) -> Duration {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let status = command.status().unwrap();
    let elapsed = started.elapsed();
    assert!(status.success());
    elapsed
}

fn exec_overhead() {
    let dir = tempfile::tempdir().unwrap();
    let efix = env!("CARGO_BIN_EXE_efix");
    let allow = dir.path().join(".efix.yml");
    std::fs::write(&allow, "version: 1\ncommands:\n  allow: [true]\n").unwrap();
    let mut direct = Vec::new();
    let mut through = Vec::new();
    for _ in 0..EXEC_RUNS {
        direct.push(time_spawn(Command::new("true")).as_secs_f64() * 1000.0);
        let mut command = Command::new(efix);
        command
            .args(["exec", "--repo"])
            .arg(dir.path())
            .args(["--", "true"]);
        through.push(time_spawn(command).as_secs_f64() * 1000.0);
    }
    let (d, t) = (median(direct), median(through));
    println!("exec: `efix exec -- true` vs `true`, {EXEC_RUNS} runs each");
    println!("  true             median {d:8.2} ms");
    println!("  efix exec        median {t:8.2} ms");
    println!("  difference       median {:8.2} ms  (goal <= 5 ms)", t - d);
}
