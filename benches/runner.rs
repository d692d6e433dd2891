//! Runner benchmarks (`cargo bench --bench runner`): `efix exec -- true` against `true` with
//! each sandbox mechanism's share, spawn overhead against a bare `Command`, capture plus redaction throughput on a child writing 1 GiB, and the peak RSS
//! of a process capturing 1 MiB, 100 MiB and 1 GiB (measured in a re-executed copy of this
//! binary so each size gets a fresh process).
//!
//! `cargo bench --bench runner -- quick` runs smaller sizes for a smoke test.

#![expect(clippy::print_stdout, reason = "a bench binary reports on stdout")]

use std::error::Error;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use efix::runner::{
    self, Access, CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, DEFAULT_OUTPUT_TAIL_BYTES,
    DEFAULT_TERM_GRACE, RunnerSettings, SandboxSettings, Secret,
};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// A line like a test runner's, free of anything the rules redact, so the bench measures
/// the common case: scanning and keeping, not replacing.
const LINE: &str = "test parser::tests::crlf_line_endings_are_preserved_in_hunks ... ok \
                    (0.003s) at /home/runner/work/efix/src/patch/apply.rs:412";

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

fn settings() -> RunnerSettings {
    let (env, _) = runner::child_env(std::env::vars_os(), &[]);
    RunnerSettings {
        env,
        output_head_bytes: DEFAULT_OUTPUT_HEAD_BYTES,
        output_tail_bytes: DEFAULT_OUTPUT_TAIL_BYTES,
        term_grace: DEFAULT_TERM_GRACE,
        // One configured secret, so its literal forms are part of every scan.
        secrets: vec![Secret {
            name: "BENCH_TOKEN".to_owned(),
            value: "bench-secret-value-0123456789abcdef".to_owned(),
        }],
        sandbox: SandboxSettings {
            helper: env!("CARGO_BIN_EXE_efix").into(),
            ..SandboxSettings::new(std::env::temp_dir())
        },
    }
}

fn spec(argv: &[&str]) -> CommandSpec {
    CommandSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(600),
        access: Access::command(false),
    }
}

fn lines_of(bytes: u64) -> String {
    format!("yes '{LINE}' | head -c {bytes}")
}

/// Size of each generated input file (64 MiB); the child `cat`s it repeatedly, so the
/// generator costs next to nothing next to the runner.
const INPUT_FILE_BYTES: usize = 64 << 20;

/// Write a 64 MiB file of repeated `LINE`s and one of random base64 (76-column lines, from a
/// fixed-seed xorshift so runs are comparable).
fn input_files(dir: &std::path::Path) -> Result<[std::path::PathBuf; 2]> {
    use base64::Engine as _;
    let lines = dir.join("lines.txt");
    let text = format!("{LINE}\n").repeat(INPUT_FILE_BYTES / (LINE.len() + 1) + 1);
    std::fs::write(&lines, &text.as_bytes()[..INPUT_FILE_BYTES])?;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let raw: Vec<u8> = (0..INPUT_FILE_BYTES / 4 * 3 / 8 + 1)
        .flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()
        })
        .collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&raw);
    let mut wrapped = Vec::with_capacity(INPUT_FILE_BYTES + INPUT_FILE_BYTES / 76 + 1);
    for line in encoded.as_bytes().chunks(76) {
        wrapped.extend_from_slice(line);
        wrapped.push(b'\n');
    }
    wrapped.truncate(INPUT_FILE_BYTES);
    let random = dir.join("base64.txt");
    std::fs::write(&random, &wrapped)?;
    Ok([lines, random])
}

/// A script that writes `file` to stdout `times` times.
fn cat_times(file: &std::path::Path, times: u64) -> String {
    format!(
        "i=0; while [ $i -lt {times} ]; do cat '{}'; i=$((i+1)); done",
        file.display()
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn overhead(runs: usize) -> Result<()> {
    let settings = settings();
    let spec = spec(&["true"]);
    let compile = Instant::now();
    runner::bench::compile_rules(&settings.secrets)?;
    let compile = compile.elapsed();
    let cold = Instant::now();
    runner::run(&spec, &settings)?;
    let cold = cold.elapsed();
    let mut direct = Vec::with_capacity(runs);
    let mut via_runner = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        Command::new("true").status()?;
        direct.push(start.elapsed());
        let start = Instant::now();
        runner::run(&spec, &settings)?;
        via_runner.push(start.elapsed());
    }
    let (direct, via_runner) = (median(direct), median(via_runner));
    println!("## spawn overhead: `true`, median of {runs} runs");
    println!("| what | time |");
    println!("|---|---|");
    println!(
        "| `Command::new(\"true\").status()` | {:.2} ms |",
        ms(direct)
    );
    println!("| `runner::run([\"true\"])` | {:.2} ms |", ms(via_runner));
    println!(
        "| overhead (median difference) | {:.2} ms |",
        ms(via_runner.saturating_sub(direct))
    );
    println!(
        "| first `runner::run` in a process (compiles the rules) | {:.2} ms |",
        ms(cold)
    );
    println!(
        "| compiling the redaction rules alone | {:.2} ms |",
        ms(compile)
    );
    // The whole-process view, as `efix exec -- true` would see it: a fresh copy of this
    // binary that runs `true` once through the runner, against running `true` itself.
    let exe = std::env::current_exe()?;
    let process_runs = (runs / 4).max(10);
    let mut bare = Vec::with_capacity(process_runs);
    let mut wrapped = Vec::with_capacity(process_runs);
    for _ in 0..process_runs {
        let start = Instant::now();
        Command::new("true").status()?;
        bare.push(start.elapsed());
        let start = Instant::now();
        Command::new(&exe).arg("--exec-once").status()?;
        wrapped.push(start.elapsed());
    }
    let (bare, wrapped) = (median(bare), median(wrapped));
    println!(
        "| fresh process running `runner::run([\"true\"])` once vs `true`, median of \
         {process_runs} | {:.2} ms vs {:.2} ms (+{:.2} ms) |",
        ms(wrapped),
        ms(bare),
        ms(wrapped.saturating_sub(bare))
    );
    println!();
    Ok(())
}

/// `efix exec -- true` as a user runs it (the real binary, in a scratch git repository so
/// `.git` is made read-only too), against `true`, with each sandbox mechanism turned off in
/// turn to show what it costs: the helper re-exec alone, plus landlock and seccomp, plus the
/// namespaces. Runs alternate, so the machine's drift hits every variant alike.
fn exec_overhead(runs: usize) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = dir.path().join("repo");
    efix::git::init_with_files(
        &repo,
        &[(".efix.yml", b"version: 1\ncommands:\n  allow: [true]\n")],
        "scratch",
    )?;
    let efix = env!("CARGO_BIN_EXE_efix");
    let variants: [(&str, &str); 3] = [
        (
            "helper only (`EFIX_SANDBOX_DISABLE=landlock,seccomp,namespaces`)",
            "landlock,seccomp,namespaces",
        ),
        (
            "helper + landlock + seccomp (`EFIX_SANDBOX_DISABLE=namespaces`)",
            "namespaces",
        ),
        ("full sandbox (mount and network namespaces too)", ""),
    ];
    let time = |command: &mut Command| -> Result<Duration> {
        let start = Instant::now();
        let status = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        let elapsed = start.elapsed();
        if !status.success() {
            return Err(format!("{command:?} failed: {status}").into());
        }
        Ok(elapsed)
    };
    let mut bare = Vec::with_capacity(runs);
    let mut through: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); variants.len()];
    for _ in 0..runs {
        bare.push(time(&mut Command::new("true"))?);
        for (samples, (_, disable)) in through.iter_mut().zip(variants) {
            let mut command = Command::new(efix);
            command
                .args(["exec", "--repo"])
                .arg(&repo)
                .args(["--", "true"])
                .env("EFIX_SANDBOX_DISABLE", disable);
            samples.push(time(&mut command)?);
        }
    }
    let bare = median(bare);
    println!(
        "## `efix exec -- true` (the real binary) vs `true`, median of {runs} alternating runs"
    );
    println!("| what | time | over `true` |");
    println!("|---|---|---|");
    println!("| `true` | {:.2} ms | |", ms(bare));
    for ((label, _), samples) in variants.iter().zip(through) {
        let median = median(samples);
        println!(
            "| `efix exec -- true`, {label} | {:.2} ms | +{:.2} ms |",
            ms(median),
            ms(median.saturating_sub(bare))
        );
    }
    println!();
    Ok(())
}

/// Read a child's stdout and throw it away: the cost of the pipe and the generator alone.
fn plain_read(script: &str) -> Result<(u64, Duration)> {
    let start = Instant::now();
    let mut child = Command::new("sh")
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut total = 0u64;
    if let Some(mut out) = child.stdout.take() {
        let mut buffer = vec![0u8; 256 * 1024];
        loop {
            let count = out.read(&mut buffer)?;
            if count == 0 {
                break;
            }
            total += count as u64;
        }
    }
    child.wait()?;
    Ok((total, start.elapsed()))
}

fn throughput(bytes: u64) -> Result<()> {
    let settings = settings();
    let dir = tempfile::tempdir()?;
    let [lines, random] = input_files(dir.path())?;
    let times = bytes / INPUT_FILE_BYTES as u64;
    println!(
        "## capture + redaction throughput: child writes {} MiB to stdout",
        times * INPUT_FILE_BYTES as u64 / MIB
    );
    println!(
        "| child output | plain read, no capture (wall) | `runner::run` (wall) | \
         efix CPU per byte (as MB/s) | stdout_bytes exact |"
    );
    println!("|---|---|---|---|---|");
    let rate = |count: u64, time: Duration| count as f64 / 1e6 / time.as_secs_f64();
    for (name, file) in [("test-log lines", &lines), ("random base64", &random)] {
        let data = std::fs::read(file)?;
        let (start, cpu) = (Instant::now(), own_cpu()?);
        for _ in 0..times {
            runner::bench::redact_and_capture(&data, 256 * 1024, &settings)?;
        }
        let (wall, cpu) = (start.elapsed(), own_cpu()?.saturating_sub(cpu));
        let total = times * data.len() as u64;
        println!(
            "| {name}, in memory (no child, no pipe) | - | {:.0} MB/s | {:.0} MB/s | - |",
            rate(total, wall),
            rate(total, cpu)
        );
    }
    for (name, script) in [
        (
            "test-log lines (`cat` of a 64 MiB file)",
            cat_times(&lines, times),
        ),
        (
            "random base64 (`cat` of a 64 MiB file)",
            cat_times(&random, times),
        ),
        ("test-log lines (`yes LINE \\| head -c N`)", lines_of(bytes)),
    ] {
        let (plain_bytes, plain_time) = plain_read(&script)?;
        let (start, cpu) = (Instant::now(), own_cpu()?);
        let outcome = runner::run(&spec(&["sh", "-c", &script]), &settings)?;
        let (wall, cpu) = (start.elapsed(), own_cpu()?.saturating_sub(cpu));
        println!(
            "| {name} | {:.0} MB/s | {:.0} MB/s | {:.0} MB/s | {} ({} bytes) |",
            rate(plain_bytes, plain_time),
            rate(outcome.stdout_bytes, wall),
            rate(outcome.stdout_bytes, cpu),
            if outcome.stdout_bytes == plain_bytes {
                "yes"
            } else {
                "NO"
            },
            outcome.stdout_bytes
        );
    }
    println!();
    Ok(())
}

/// CPU time (user + system) this process has used, children excluded: on a shared machine
/// it shows what efix itself costs per byte, whatever else competes for the cores.
fn own_cpu() -> Result<Duration> {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)?;
    let to_duration = |time: nix::sys::time::TimeVal| {
        Duration::from_secs(time.tv_sec().max(0) as u64)
            + Duration::from_micros(time.tv_usec().max(0) as u64)
    };
    Ok(to_duration(usage.user_time()) + to_duration(usage.system_time()))
}

/// In a fresh copy of this binary: capture `bytes` of output, print
/// `stdout_bytes ru_maxrss_kib vm_hwm_kib`.
///
/// `ru_maxrss` survives `execve` on Linux, so a child started by a big parent reports the
/// parent's peak; `VmHWM` from `/proc/self/status` belongs to the new address space only.
/// Both are printed; the parent is kept small when it starts the child.
fn rss_child(bytes: u64) -> Result<()> {
    let outcome = runner::run(&spec(&["sh", "-c", &lines_of(bytes)]), &settings())?;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)?;
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("0");
    // On Linux ru_maxrss is in KiB.
    println!("{} {} {hwm}", outcome.stdout_bytes, usage.max_rss());
    Ok(())
}

fn rss(sizes: &[u64]) -> Result<()> {
    let exe = std::env::current_exe()?;
    println!("## peak RSS of a process capturing N bytes (fresh process per size)");
    println!("| N | stdout_bytes | peak RSS (`ru_maxrss`) | peak RSS (`VmHWM`) |");
    println!("|---|---|---|---|");
    for &size in sizes {
        let output = Command::new(&exe)
            .args(["--rss-child", &size.to_string()])
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut fields = text.split_whitespace();
        let seen = fields.next().unwrap_or("?");
        let mut next_kib = || -> u64 { fields.next().and_then(|f| f.parse().ok()).unwrap_or(0) };
        let (maxrss, hwm) = (next_kib(), next_kib());
        let label = if size >= GIB {
            format!("{} GiB", size / GIB)
        } else {
            format!("{} MiB", size / MIB)
        };
        println!(
            "| {label} | {seen} | {:.1} MiB | {:.1} MiB |",
            maxrss as f64 / 1024.0,
            hwm as f64 / 1024.0
        );
    }
    println!();
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--rss-child") {
        let bytes = args
            .get(position + 1)
            .and_then(|b| b.parse().ok())
            .ok_or("--rss-child needs a byte count")?;
        return rss_child(bytes);
    }
    if args.iter().any(|a| a == "--exec-once") {
        runner::run(&spec(&["true"]), &settings())?;
        return Ok(());
    }
    let quick = args.iter().any(|a| a == "quick");
    if quick {
        exec_overhead(20)?;
        overhead(20)?;
        rss(&[MIB, 16 * MIB])?;
        throughput(64 * MIB)?;
    } else {
        exec_overhead(200)?;
        overhead(200)?;
        rss(&[MIB, 100 * MIB, GIB])?;
        throughput(GIB)?;
    }
    Ok(())
}
