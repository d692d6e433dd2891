//! Runner benchmarks (`cargo bench --bench runner`): spawn overhead against a bare
//! `Command`, capture plus redaction throughput on a child writing 1 GiB, and the peak RSS
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
    self, CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, DEFAULT_OUTPUT_TAIL_BYTES, DEFAULT_TERM_GRACE,
    RunnerSettings, Secret,
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
    }
}

fn spec(argv: &[&str]) -> CommandSpec {
    CommandSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(600),
    }
}

fn lines_of(bytes: u64) -> String {
    format!("yes '{LINE}' | head -c {bytes}")
}

fn random_base64(bytes: u64) -> String {
    // Base64 turns 3 bytes into 4 characters (plus a newline every 76).
    format!("head -c {} /dev/urandom | base64 -w 76", bytes / 4 * 3)
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
    println!(
        "## capture + redaction throughput: child writes {} MiB to stdout",
        bytes / MIB
    );
    println!("| generator | plain read (no capture) | `runner::run` | stdout_bytes exact |");
    println!("|---|---|---|---|");
    for (name, script) in [
        ("`yes LINE | head -c N`", lines_of(bytes)),
        ("`head -c 3N/4 /dev/urandom | base64`", random_base64(bytes)),
    ] {
        let (plain_bytes, plain_time) = plain_read(&script)?;
        let start = Instant::now();
        let outcome = runner::run(&spec(&["sh", "-c", &script]), &settings)?;
        let elapsed = start.elapsed();
        let rate = |count: u64, time: Duration| count as f64 / 1e6 / time.as_secs_f64();
        println!(
            "| {name} | {:.0} MB/s | {:.0} MB/s | {} ({} bytes) |",
            rate(plain_bytes, plain_time),
            rate(outcome.stdout_bytes, elapsed),
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

/// In a fresh copy of this binary: capture `bytes` of output, print `stdout_bytes maxrss_kib`.
fn rss_child(bytes: u64) -> Result<()> {
    let outcome = runner::run(&spec(&["sh", "-c", &lines_of(bytes)]), &settings())?;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)?;
    // On Linux ru_maxrss is in KiB.
    println!("{} {}", outcome.stdout_bytes, usage.max_rss());
    Ok(())
}

fn rss(sizes: &[u64]) -> Result<()> {
    let exe = std::env::current_exe()?;
    println!("## peak RSS of a process capturing N bytes (fresh process per size)");
    println!("| N | stdout_bytes | peak RSS |");
    println!("|---|---|---|");
    for &size in sizes {
        let output = Command::new(&exe)
            .args(["--rss-child", &size.to_string()])
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut fields = text.split_whitespace();
        let seen = fields.next().unwrap_or("?");
        let kib: u64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
        let label = if size >= GIB {
            format!("{} GiB", size / GIB)
        } else {
            format!("{} MiB", size / MIB)
        };
        println!("| {label} | {seen} | {:.1} MiB |", kib as f64 / 1024.0);
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
    let quick = args.iter().any(|a| a == "quick");
    if quick {
        overhead(20)?;
        throughput(64 * MIB)?;
        rss(&[MIB, 16 * MIB])?;
    } else {
        overhead(200)?;
        throughput(GIB)?;
        rss(&[MIB, 100 * MIB, GIB])?;
    }
    Ok(())
}
