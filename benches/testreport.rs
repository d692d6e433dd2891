//! Test-report parsing benchmark (`cargo bench --bench testreport`): how long
//! `efix::testreport::parse` takes on a generated output of 100,000 lines in the shape of each
//! runner it reads (every parser runs on every output, as in a real run), and that the cost
//! grows linearly: the same shapes at 10,000 lines for comparison. Times are the process's
//! CPU time (median of 5), with the wall-clock median beside it.
//!
//! `cargo bench --bench testreport -- quick` runs 10,000 and 20,000 lines once for a smoke test.
//! `-- lines=N` measures one size only and `-- only=WORD` the shapes whose name contains WORD,
//! so an outside counter can take one shape at one size
//! (`perf stat -e instructions:u target/release/deps/testreport-* only=tape lines=100000`).

#![expect(clippy::print_stdout, reason = "a bench binary reports on stdout")]

use std::time::{Duration, Instant};

/// Every `FAIL_EVERY`-th test fails, with a few lines of detail as runners print them.
const FAIL_EVERY: usize = 500;

/// One runner's output shape: the lines of test `i` and the summary after `n` tests.
struct Shape {
    name: &'static str,
    test: fn(usize, bool) -> String,
    summary: fn(usize) -> String,
}

fn passed(n: usize) -> usize {
    n - n / FAIL_EVERY
}

fn failed(n: usize) -> usize {
    n / FAIL_EVERY
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "cargo (libtest)",
        test: |i, fail| {
            let outcome = if fail { "FAILED" } else { "ok" };
            format!("test parser::tests::case_{i:06} ... {outcome}\n")
        },
        summary: |n| {
            format!(
                "\ntest result: FAILED. {} passed; {} failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.20s\n",
                passed(n),
                failed(n)
            )
        },
    },
    Shape {
        name: "nextest",
        test: |i, fail| {
            let kind = if fail { "FAIL" } else { "PASS" };
            format!("        {kind} [   0.004s] parser::tests parser::tests::case_{i:06}\n")
        },
        summary: |n| {
            format!(
                "     Summary [   1.200s] {n} tests run: {} passed, {} failed, 0 skipped\n",
                passed(n),
                failed(n)
            )
        },
    },
    Shape {
        name: "pytest -v",
        test: |i, fail| {
            let word = if fail { "FAILED" } else { "PASSED" };
            format!("tests/test_parse.py::test_case_{i:06} {word}                [ 50%]\n")
        },
        summary: |n| {
            format!(
                "========= {} failed, {} passed in 12.00s =========\n",
                failed(n),
                passed(n)
            )
        },
    },
    Shape {
        name: "jest --verbose",
        test: |i, fail| {
            let mark = if fail { "✕" } else { "✓" };
            let mut out = String::new();
            if i % 100 == 0 {
                out.push_str(&format!("PASS src/file_{i:06}.test.js\n  parse\n"));
            }
            out.push_str(&format!("    {mark} handles case {i:06} (2 ms)\n"));
            out
        },
        summary: |n| {
            format!(
                "Tests:       {} failed, {} passed, {n} total\n",
                failed(n),
                passed(n)
            )
        },
    },
    Shape {
        name: "vitest --reporter=verbose",
        test: |i, fail| {
            let mark = if fail { "×" } else { "✓" };
            format!(
                " {mark} src/file_{:04}.test.ts > parse > case {i:06} 1ms\n",
                i / 100
            )
        },
        summary: |n| {
            format!(
                " Test Files  {} passed ({})\n      Tests  {} failed | {} passed ({n})\n",
                n / 100,
                n / 100,
                failed(n),
                passed(n)
            )
        },
    },
    Shape {
        name: "mocha (spec)",
        test: |i, fail| {
            let mut out = String::new();
            if i % 100 == 0 {
                out.push_str(&format!("\n  suite {i:06}\n"));
            }
            if fail {
                out.push_str(&format!("    1) case {i:06}\n"));
            } else {
                out.push_str(&format!("    ✔ case {i:06}\n"));
            }
            out
        },
        summary: |n| format!("\n  {} passing (3s)\n  {} failing\n", passed(n), failed(n)),
    },
    Shape {
        name: "go test -v",
        test: |i, fail| {
            let word = if fail { "FAIL" } else { "PASS" };
            format!("=== RUN   TestCase{i:06}\n--- {word}: TestCase{i:06} (0.00s)\n")
        },
        summary: |_| "FAIL\nFAIL\texample.com/parse\t1.204s\n".to_owned(),
    },
    Shape {
        name: "go test -json",
        test: |i, fail| {
            let action = if fail { "fail" } else { "pass" };
            format!(
                "{{\"Action\":\"run\",\"Package\":\"example.com/parse\",\"Test\":\"TestCase{i:06}\"}}\n\
                 {{\"Action\":\"{action}\",\"Package\":\"example.com/parse\",\"Test\":\"TestCase{i:06}\",\"Elapsed\":0}}\n"
            )
        },
        summary: |_| {
            "{\"Action\":\"fail\",\"Package\":\"example.com/parse\",\"Elapsed\":1.2}\n".to_owned()
        },
    },
    Shape {
        name: "node --test (TAP)",
        test: |i, fail| {
            let ok = if fail { "not ok" } else { "ok" };
            format!(
                "# Subtest: case {i:06}\n{ok} {} - case {i:06}\n  ---\n  duration_ms: 0.5\n  ...\n",
                i + 1
            )
        },
        summary: |n| {
            format!(
                "1..{n}\n# tests {n}\n# pass {}\n# fail {}\n",
                passed(n),
                failed(n)
            )
        },
    },
    Shape {
        name: "tape (flat TAP)",
        test: |i, fail| {
            let ok = if fail { "not ok" } else { "ok" };
            let mut out = String::new();
            if i % 4 == 0 {
                out.push_str(&format!("# case {:06}\n", i / 4));
            }
            out.push_str(&format!("{ok} {} should be deeply equivalent\n", i + 1));
            if fail {
                out.push_str(
                    "  ---\n    operator: deepEqual\n    expected: 1\n    actual:   2\n  ...\n",
                );
            }
            out
        },
        summary: |n| {
            format!(
                "\n1..{n}\n# tests {n}\n# pass  {}\n# fail  {}\n",
                passed(n),
                failed(n)
            )
        },
    },
    Shape {
        name: "unittest -v",
        test: |i, fail| {
            let outcome = if fail { "FAIL" } else { "ok" };
            format!(
                "test_case_{i:06} (tests.test_parse.ParseTest.test_case_{i:06}) ... {outcome}\n"
            )
        },
        summary: |n| {
            format!(
                "\n----------------------------------------------------------------------\nRan {n} tests in 1.200s\n\nFAILED (failures={})\n",
                failed(n)
            )
        },
    },
];

/// The output of `n` tests in `shape`, with a few lines of detail per failure.
fn output(shape: &Shape, n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let fail = i % FAIL_EVERY == FAIL_EVERY - 1;
        out.push_str(&(shape.test)(i, fail));
    }
    out.push_str(&(shape.summary)(n));
    out
}

/// CPU time (user and system) of this process, so the figure holds on a machine shared with
/// other builds, where wall-clock time mostly measures the wait for a core.
fn cpu_time() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(Duration::ZERO, |usage| {
        let time = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec().max(0) as u64)
                + Duration::from_micros(t.tv_usec().max(0) as u64)
        };
        time(usage.user_time()) + time(usage.system_time())
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "quick");
    let value = |key: &str| {
        args.iter()
            .find_map(|a| a.strip_prefix(key).map(str::to_owned))
    };
    let only = value("only=").unwrap_or_default();
    let (small, large, runs) = if quick {
        (10_000, 20_000, 1)
    } else {
        (10_000, 100_000, 5)
    };
    let sizes: Vec<usize> = match value("lines=").and_then(|n| n.parse().ok()) {
        Some(lines) => vec![lines],
        None => vec![small, large],
    };
    println!(
        "| shape | tests | lines | MiB | median parse, CPU (ms) | wall (ms) | CPU per 1k lines (ms) | per line vs the first size |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for shape in SHAPES
        .iter()
        .filter(|shape| shape.name.contains(only.as_str()))
    {
        let mut per_line = Vec::new();
        for &target in &sizes {
            // Tests per target line count: shapes print one to five lines per test.
            let per_test = output(shape, 1000).lines().count().max(1) as f64 / 1000.0;
            let tests = ((target as f64) / per_test) as usize;
            let text = output(shape, tests);
            let lines = text.lines().count();
            let mut samples = Vec::with_capacity(runs);
            let mut found = 0;
            let mut walls = Vec::with_capacity(runs);
            for _ in 0..runs {
                let (start, cpu) = (Instant::now(), cpu_time());
                let report = efix::testreport::parse(&text, "");
                samples.push(cpu_time().saturating_sub(cpu));
                walls.push(start.elapsed());
                found = report.map_or(0, |r| r.tests.len());
            }
            let time = median(samples);
            let wall = median(walls).as_secs_f64() * 1000.0;
            let ms = time.as_secs_f64() * 1000.0;
            let per_k = ms / (lines as f64 / 1000.0);
            per_line.push(per_k);
            let ratio = per_line.first().map_or(1.0, |first| per_k / first);
            println!(
                "| {} | {found} | {lines} | {:.1} | {ms:.1} | {wall:.1} | {per_k:.3} | {ratio:.2} |",
                shape.name,
                text.len() as f64 / (1 << 20) as f64,
            );
        }
    }
}
