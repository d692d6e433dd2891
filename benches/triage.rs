//! Triage benchmark (`cargo bench --bench triage`): the release `efix triage --junit DIR` on
//! generated JUnit reports of a red run (`FAILURES_PER_FILE` failing and as many passing tests
//! per file, half in pytest's shape with its long tracebacks (every other one an assertion on a
//! wrong constant in the test file), half in jest-junit's with JS stacks; 40 causes), at 50, 200 and 800 files.
//! The goal: 5,000 failures in 200 files in under a second, with flat memory.
//!
//! Each size runs as its own `efix` process, 5 times; the figures are the child's CPU time
//! (user + system, median), wall clock (median) and peak RSS (`getrusage(RUSAGE_CHILDREN)`,
//! taken after each size; sizes go up, so a flat column means memory does not grow with the
//! run). `-- quick` runs 20 and 200 files once.
//!
//! Each size runs twice: with `--root` naming no checkout (frames and messages only), and
//! with localization on: `--root` is a generated checkout holding the pytest test files (the
//! assertions on a wrong constant are in them, so their cause is the function they call,
//! found through the test's imports) and `FILLER_FILES` other source files, listed once.

#![expect(clippy::print_stdout, reason = "a bench binary reports on stdout")]
#![expect(clippy::unwrap_used, reason = "a bench whose setup fails should stop")]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FAILURES_PER_FILE: usize = 25;
/// Distinct causes spread over the failures.
const CAUSES: usize = 40;
/// Source files of the generated checkout besides the test files and what they call.
const FILLER_FILES: usize = 2_000;
/// The first line of a test in a generated test file (test `i` asserts on line
/// `FIRST_TEST_LINE + i`).
const FIRST_TEST_LINE: usize = 10;

/// A pytest JUnit file: test `i` of file `f` fails through helper `cause`.
fn pytest_file(f: usize) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites name=\"pytest tests\"><testsuite name=\"pytest\" errors=\"0\" failures=\"25\" skipped=\"0\" tests=\"50\" time=\"1.0\">\n",
    );
    for i in 0..FAILURES_PER_FILE * 2 {
        let class = format!("tests.pkg{}.test_mod{f:04}", f % 7);
        if i.is_multiple_of(2) {
            out.push_str(&format!(
                "<testcase classname=\"{class}\" name=\"test_ok_{i}\" time=\"0.001\" />\n"
            ));
            continue;
        }
        let cause = (f * 31 + i) % CAUSES;
        // Every other failing test asserts on a wrong constant (odd `i`: 1, 5, 9, ...).
        let body = if i % 4 == 1 {
            format!(
                "def test_case_{i}():\n&gt;       assert total() == {cause}\nE       AssertionError: assert 'EUR' == 'USD{cause}'\nE         - USD{cause}\nE         + EUR\n\ntests/pkg{}/test_mod{f:04}.py:{}: AssertionError",
                f % 7,
                10 + i
            )
        } else {
            format!(
                "def test_case_{i}():\n&gt;       assert helper_{cause}({i}) == {i}\n\ntests/pkg{}/test_mod{f:04}.py:{}: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n\nvalue = {i}\n\n    def helper_{cause}(value):\n        parts = str(value).split('.')\n&gt;       return int(parts[1]) * 100\nE       IndexError: list index out of range\n\nsrc/shop/helpers_{}.py:{}: IndexError",
                f % 7,
                10 + i,
                cause % 9,
                cause * 3 + 5
            )
        };
        out.push_str(&format!(
            "<testcase classname=\"{class}\" name=\"test_case_{i}\" time=\"0.002\"><failure message=\"failed\">{body}</failure></testcase>\n"
        ));
    }
    out.push_str("</testsuite></testsuites>\n");
    out
}

/// The pytest test file `f` as the checkout holds it: test `i` (odd) asserts on line
/// `FIRST_TEST_LINE + i`, under its `def` on the line before.
fn pytest_test_file(f: usize) -> String {
    let mut out = String::from(
        "from shop.money import total
",
    );
    for _ in 2..FIRST_TEST_LINE {
        out.push('\n');
    }
    // Lines FIRST_TEST_LINE.. : `def test_case_{i}` on even offsets before odd `i`.
    for offset in 0..FAILURES_PER_FILE * 2 {
        if offset % 2 == 0 {
            out.push_str(&format!("def test_case_{}():\n", offset + 1));
        } else {
            out.push_str(&format!(
                "    assert total() == {}\n",
                (f * 31 + offset) % CAUSES
            ));
        }
    }
    out
}

/// A checkout for `files` report files: the pytest test files, the code they call, filler.
fn checkout(dir: &Path, files: usize) {
    let write = |rel: String, text: String| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("shop/__init__.py".into(), String::new());
    write(
        "shop/money.py".into(),
        "def total():\n    return 'EUR'\n".into(),
    );
    for f in (0..files).filter(|f| f.is_multiple_of(2)) {
        write(
            format!("tests/pkg{}/test_mod{f:04}.py", f % 7),
            pytest_test_file(f),
        );
    }
    for n in 0..FILLER_FILES {
        write(
            format!("src/filler/area{}/module_{n}.py", n % 20),
            format!("def filler_{n}(value):\n    return value + {n}\n"),
        );
    }
}

/// A jest-junit file with stacks through node_modules.
fn jest_file(f: usize) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"jest tests\" tests=\"50\" failures=\"25\" errors=\"0\" time=\"1.4\">\n  <testsuite name=\"suite\" errors=\"0\" failures=\"25\" skipped=\"0\" tests=\"50\">\n",
    );
    for i in 0..FAILURES_PER_FILE * 2 {
        let name = format!("suite case {i}");
        let file = format!("test/area{}/spec{f:04}.test.js", f % 5);
        if i.is_multiple_of(2) {
            out.push_str(&format!(
                "    <testcase classname=\"{name}\" name=\"{name}\" time=\"0.001\" file=\"{file}\">\n    </testcase>\n"
            ));
            continue;
        }
        let cause = (f * 17 + i) % CAUSES;
        let mut body = format!(
            "TypeError: Cannot read properties of undefined (reading 'v{cause}')\n    at helper{cause} (/home/runner/work/app/app/src/lib/h{}.js:{}:9)\n    at Object.&lt;anonymous&gt; (/home/runner/work/app/app/{file}:{}:5)\n",
            cause % 11,
            cause + 3,
            i + 4
        );
        for frame in 0..10 {
            body.push_str(&format!(
                "    at run{frame} (/home/runner/work/app/app/node_modules/jest-circus/build/x.js:{}:{})\n",
                100 + frame,
                frame + 1
            ));
        }
        out.push_str(&format!(
            "    <testcase classname=\"{name}\" name=\"{name}\" time=\"0.002\" file=\"{file}\">\n      <failure>{body}</failure>\n    </testcase>\n"
        ));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn generate(dir: &Path, files: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for f in 0..files {
        let (name, text) = if f.is_multiple_of(2) {
            (format!("pytest-{f:04}.xml"), pytest_file(f))
        } else {
            (format!("jest-{f:04}.xml"), jest_file(f))
        };
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// (CPU time, peak RSS in KiB) of all waited-for children so far.
fn children() -> (Duration, i64) {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or((Duration::ZERO, 0), |usage| {
        let time = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec().max(0) as u64)
                + Duration::from_micros(t.tv_usec().max(0) as u64)
        };
        (
            time(usage.user_time()) + time(usage.system_time()),
            usage.max_rss(),
        )
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let (sizes, runs): (&[usize], usize) = if quick {
        (&[20, 200], 1)
    } else {
        (&[50, 200, 800], 5)
    };
    let scratch = tempfile::tempdir().unwrap();
    println!(
        "| files | localization | failing tests | MiB of XML | matrix jobs | left out | CPU median (ms) | wall median (ms) | peak RSS so far (MiB) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &files in sizes {
        let dir = scratch.path().join(format!("run-{files}"));
        generate(&dir, files);
        let repo = scratch.path().join(format!("checkout-{files}"));
        checkout(&repo, files);
        let bytes: u64 = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        for (mode, root) in [
            ("off", Path::new("/home/runner/work/app/app")),
            ("on", repo.as_path()),
        ] {
            let mut cpu = Vec::new();
            let mut wall = Vec::new();
            let mut summary = String::new();
            let mut stdout = String::new();
            for _ in 0..runs {
                let summary_file = scratch.path().join("summary.md");
                let _ = std::fs::remove_file(&summary_file);
                let (before, _) = children();
                let start = Instant::now();
                let output = Command::new(env!("CARGO_BIN_EXE_efix"))
                    .args(["triage", "--max-jobs", "8", "--root"])
                    .arg(root)
                    .arg("--junit")
                    .arg(&dir)
                    .arg("--summary")
                    .arg(&summary_file)
                    .env_clear()
                    .current_dir(scratch.path())
                    .output()
                    .unwrap();
                wall.push(start.elapsed());
                let (after, _) = children();
                cpu.push(after.saturating_sub(before));
                assert!(output.status.success(), "{output:?}");
                stdout = String::from_utf8(output.stdout).unwrap();
                summary = std::fs::read_to_string(&summary_file).unwrap();
            }
            let (_, rss) = children();
            let matrix: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            let jobs = matrix["include"].as_array().map_or(0, Vec::len);
            let left_out = summary
                .lines()
                .filter(|l| l.contains("over --max-jobs"))
                .count();
            let targets = summary.lines().filter(|l| l.contains("| target |")).count()
                + summary
                    .lines()
                    .filter(|l| l.starts_with("- ") && l.contains(" target "))
                    .count();
            println!(
                "| {files} | {mode} ({targets} target causes) | {} | {:.1} | {jobs} | {left_out} | {:.1} | {:.1} | {:.1} |",
                files * FAILURES_PER_FILE,
                bytes as f64 / (1 << 20) as f64,
                median(cpu).as_secs_f64() * 1000.0,
                median(wall).as_secs_f64() * 1000.0,
                rss as f64 / 1024.0,
            );
        }
    }
}
