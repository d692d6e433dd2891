//! The scale case: the demo run on a repository with many more committed files.
//!
//! The parent generates each repository once (the demo crate plus N files in nested
//! directories, committed with git, the index refreshed after the files have aged past the
//! snapshot's stat margin), warms it up with one run, then starts one child process per timed
//! run. The child runs the pipeline in process and reports its wall time, the commands' own
//! durations, the time spent in the traced parts (`snapshot`, `journal`, `restore` after
//! commands ran, `restore_written` when only efix wrote, `localize`), its own CPU time
//! (`getrusage(RUSAGE_SELF)`: the commands are other processes) and its peak RSS (`VmHWM` from
//! `/proc/self/status`: this process's address space only, the commands it ran excluded).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use efix::pipeline;
use tracing::span::{Attributes, Id};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use super::{demo_config, demo_run, median};

/// First argument that makes the bench binary a timed child run.
pub(crate) const CHILD_FLAG: &str = "--scale-child";
/// Extra committed files per size, by default.
const DEFAULT_SIZES: &[usize] = &[0, 20_000, 100_000];
/// Timed runs per size, by default.
const DEFAULT_RUNS: usize = 5;
/// Files per leaf directory of the generated tree.
const FILES_PER_DIR: usize = 20;
/// How old the generated files must be before the runs: older than the snapshot's stat
/// margin (2 s), as the files of any real checkout are.
const AGE: Duration = Duration::from_secs(3);
/// Spans of the product whose time is reported.
const TRACED: &[&str] = &[
    "snapshot",
    "journal",
    "restore",
    "restore_written",
    "localize",
];

/// One child run's figures.
#[derive(Debug, Default, Clone)]
struct Figures {
    total_ms: f64,
    commands_ms: f64,
    vmhwm_kib: f64,
    /// CPU time (user + system) of the efix process itself, commands excluded.
    cpu_ms: f64,
    spans_ms: BTreeMap<String, f64>,
    restores: f64,
}

pub(crate) fn overhead() {
    let sizes: Vec<usize> = std::env::var("EFIX_BENCH_SCALE_FILES")
        .ok()
        .map(|v| v.split(',').map(|n| n.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec());
    let runs: usize = std::env::var("EFIX_BENCH_SCALE_RUNS")
        .ok()
        .map(|v| v.parse().unwrap())
        .unwrap_or(DEFAULT_RUNS);
    println!("scale: demo run (dry run) with N extra committed files, {runs} runs per size");
    let mut header = format!(
        "  {:>7} {:>8} {:>10} {:>10}",
        "files", "MB", "overhead", "max"
    );
    for name in TRACED {
        header.push_str(&format!(" {name:>10}"));
    }
    header.push_str(&format!(
        " {:>9} {:>9} {:>9}",
        "restores", "efix CPU", "VmHWM"
    ));
    println!("{header}");
    let mut tiny = None;
    for size in sizes {
        let scratch = tempfile::tempdir().unwrap();
        let (root, bytes) = generate(scratch.path(), size);
        let artifacts = scratch.path().join("artifacts");
        // What the machine takes to tell the same tree's status, for scale.
        let git_status = median(
            (0..5)
                .map(|_| {
                    let started = Instant::now();
                    git(&root, &["status", "--porcelain"]);
                    started.elapsed().as_secs_f64() * 1000.0
                })
                .collect(),
        );
        // The first run builds the crate; its figures are not kept.
        run_child(&root, &artifacts);
        let figures: Vec<Figures> = (0..runs).map(|_| run_child(&root, &artifacts)).collect();
        let overheads: Vec<f64> = figures.iter().map(|f| f.total_ms - f.commands_ms).collect();
        let overhead = median(overheads.clone());
        let mut line = format!(
            "  {size:>7} {:>8.1} {overhead:>8.1}ms {:>8.1}ms",
            bytes as f64 / 1e6,
            overheads.iter().copied().fold(0.0, f64::max),
        );
        for name in TRACED {
            let ms = median(figures.iter().map(|f| f.spans_ms[*name]).collect());
            line.push_str(&format!(" {ms:>8.1}ms"));
        }
        line.push_str(&format!(
            " {:>9.0} {:>7.1}ms {:>6.1}MiB {git_status:>8.1}ms",
            median(figures.iter().map(|f| f.restores).collect()),
            median(figures.iter().map(|f| f.cpu_ms).collect()),
            median(figures.iter().map(|f| f.vmhwm_kib).collect()) / 1024.0,
        ));
        println!("{line}");
        if size == 0 {
            tiny = Some(overhead);
        } else if let Some(tiny) = tiny {
            println!(
                "          goal at this size: <= {:.1} ms (2 x {tiny:.1} + 100)",
                2.0 * tiny + 100.0
            );
        }
    }
    println!(
        "  (overhead = wall time minus the commands' own durations, median; the traced parts are \
         the medians of the time a run spent in them, all restores of a run together; efix CPU = \
         user + system time of the efix process; git status = median wall time of `git status \
         --porcelain` on the same tree)"
    );
}

/// The demo crate plus `count` committed files; returns its root and the generated bytes.
fn generate(dir: &Path, count: usize) -> (PathBuf, u64) {
    let root = pipeline::demo::prepare(dir).unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let extensions = ["rs", "py", "js", "ts", "json", "md", "txt", "go"];
    let mut bytes = 0u64;
    for n in 0..count {
        let leaf = n / FILES_PER_DIR;
        let rel = format!(
            "vendor/pkg{}/src/m{}/d{}/f{n}.{}",
            leaf / 200,
            (leaf / 10) % 20,
            leaf % 10,
            extensions[n % extensions.len()]
        );
        let size = 512 + (next() % 14_848) as usize;
        let mut text = String::with_capacity(size + 80);
        let mut line = 0;
        while text.len() < size {
            text.push_str(&format!(
                "// generated file {n}, line {line}: value_{} = {}\n",
                next() % 1000,
                next() % 100_000
            ));
            line += 1;
        }
        let path = root.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        bytes += text.len() as u64;
    }
    if count > 0 {
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "generated files"]);
    }
    // Age every file past the stat margin, then refresh the index so its stat data is fresh
    // and no entry is racily clean, as after any checkout followed by `git status`.
    let written = SystemTime::now();
    while written.elapsed().unwrap_or_default() < AGE {
        std::thread::sleep(Duration::from_millis(100));
    }
    git(&root, &["update-index", "-q", "--really-refresh"]);
    git(&root, &["status", "--porcelain"]);
    (root, bytes)
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "-C",
        ])
        .arg(root)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} failed");
}

fn run_child(root: &Path, artifacts: &Path) -> Figures {
    let output = Command::new(std::env::current_exe().unwrap())
        .arg(CHILD_FLAG)
        .arg(root)
        .arg(artifacts)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "a scale run failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let mut figures = Figures::default();
    for field in text.split_whitespace() {
        let (key, value) = field.split_once('=').unwrap();
        let value: f64 = value.parse().unwrap();
        match key {
            "total_ms" => figures.total_ms = value,
            "commands_ms" => figures.commands_ms = value,
            "vmhwm_kib" => figures.vmhwm_kib = value,
            "cpu_ms" => figures.cpu_ms = value,
            "restores" => figures.restores = value,
            span => {
                figures.spans_ms.insert(span.to_owned(), value);
            }
        }
    }
    figures
}

/// One timed run in this process; prints `key=value` figures on stdout.
pub(crate) fn child(args: &[String]) {
    let root = PathBuf::from(&args[0]);
    let artifacts = PathBuf::from(&args[1]);
    let times = SpanTimes::default();
    let subscriber = tracing_subscriber::registry().with(times.clone());
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let config = demo_config(&root);
    let (total, in_commands, _) = demo_run(&root, &artifacts, &config);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vmhwm: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).unwrap();
    let cpu = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1000.0 + t.tv_usec() as f64 / 1000.0;
    let spans = times.0.lock().unwrap();
    let mut line = format!(
        "total_ms={:.3} commands_ms={in_commands} vmhwm_kib={vmhwm} cpu_ms={:.1} restores={}",
        total.as_secs_f64() * 1000.0,
        cpu(usage.user_time()) + cpu(usage.system_time()),
        spans.get("restore").map_or(0, |(_, n)| *n)
    );
    for name in TRACED {
        let ms = spans
            .get(*name)
            .map_or(0.0, |(d, _)| d.as_secs_f64() * 1000.0);
        line.push_str(&format!(" {name}={ms:.3}"));
    }
    println!("{line}");
}

/// Time spent inside spans, by name: total and number of times entered.
#[derive(Clone, Default)]
struct SpanTimes(Arc<Mutex<BTreeMap<&'static str, (Duration, u32)>>>);

/// When the current entry into a span started.
struct Entered(Instant);

impl<S> Layer<S> for SpanTimes
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, _: &Attributes<'_>, _: &Id, _: Context<'_, S>) {}

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Entered(Instant::now()));
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let Some(Entered(at)) = span.extensions_mut().remove::<Entered>() else {
            return;
        };
        let mut totals = self.0.lock().unwrap();
        let entry = totals.entry(span.name()).or_default();
        entry.0 += at.elapsed();
        entry.1 += 1;
    }
}
