//! Processes: escapes from the sweep (`setsid`, a double fork, a cleared environment), a
//! thousand forks, a child that ignores SIGTERM, ten gigabytes of output, and `ptrace` of a
//! sibling and of efix itself.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::machine::machine;
use super::{Scratch, survivors};
use crate::harness::Efix;

/// Waits until the pid in `$1` (a file or `$!`) runs `sleep`, so the recorded command lines
/// are predictable.
const UNTIL_SLEEP: &str =
    "until [ \"$(head -c 5 /proc/$P/cmdline 2>/dev/null)\" = sleep ]; do :; done";

#[test]
fn setsid_double_fork_and_cleared_environment_escapees_are_killed_and_recorded() {
    let scratch = Scratch::new("");
    let wait = |var: &str| UNTIL_SLEEP.replace("$P", var);
    let script = format!(
        "setsid sleep 311.5 & P1=$!; \
         (sleep 312.5 & echo $! > p2); \
         env -i /bin/sh -c 'sleep 313.5 & echo $! > p3'; \
         P2=$(cat p2); P3=$(cat p3); {}; {}; {}; echo started",
        wait("$P1"),
        wait("$P2"),
        wait("$P3")
    );
    let outcome = scratch.exec(&["sh", "-c", &script]);
    let mut leaked: Vec<String> = outcome["sandbox"]["leaked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    leaked.sort();
    assert_eq!(
        (
            outcome["stdout"].clone(),
            outcome["sandbox"]["leaked_processes"].clone(),
            leaked,
            survivors("sleep 31"),
        ),
        (
            json!("started\n"),
            json!(3),
            vec![
                "sleep 311.5".to_owned(),
                "sleep 312.5".to_owned(),
                "sleep 313.5".to_owned()
            ],
            Vec::new()
        ),
        "{outcome:#}"
    );
}

#[test]
fn a_thousand_forked_processes_are_all_killed_and_counted() {
    let scratch = Scratch::new("");
    let script = "i=0; while [ $i -lt 1000 ]; do sleep 321.5 & i=$((i+1)); done; echo forked";
    let outcome = scratch.exec(&["sh", "-c", script]);
    assert_eq!(
        (
            outcome["stdout"].clone(),
            outcome["sandbox"]["leaked_processes"].clone(),
            outcome["sandbox"]["leaked"].as_array().map(Vec::len),
            survivors("sleep 321.5").len(),
        ),
        (json!("forked\n"), json!(1000), Some(20), 0),
        "{}",
        outcome["sandbox"]
    );
}

#[test]
fn a_child_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let scratch = Scratch::new("");
    let run = Efix::new()
        .args(["exec", "--timeout-seconds", "1", "--repo"])
        .args([scratch.root()])
        .args(["--", "sh", "-c", "trap '' TERM; echo ready; sleep 330.5"])
        .run();
    let outcome = run.expect_code(0).json();
    assert_eq!(
        (
            &outcome["timed_out"],
            &outcome["exit_code"],
            &outcome["signal"],
            &outcome["stdout"],
            survivors("sleep 330.5").len()
        ),
        (
            &json!(true),
            &Value::Null,
            &json!("SIGKILL"),
            &json!("ready\n"),
            0
        )
    );
}

/// Peak resident memory efix may use whatever the child writes (64 MiB): the capture keeps
/// 320 KiB by default and redaction scans a bounded window.
const PEAK_RSS_BOUND_KIB: i64 = 64 * 1024;

#[test]
fn ten_gigabytes_of_output_keep_exact_counts_in_bounded_memory() {
    let scratch = Scratch::new("");
    let mut child = Efix::new()
        .args(["exec", "--repo"])
        .args([scratch.root()])
        .args(["--", "head", "-c", "10000000000", "/dev/zero"])
        .spawn();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    // efix's own high-water mark, read from /proc while it runs (the rusage of a spawned
    // child also counts the memory of the test process it was started from).
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0i64;
    let exit = loop {
        if let Some(hwm) = std::fs::read_to_string(&status).ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<i64>().ok()
        }) {
            peak_kib = peak_kib.max(hwm);
        }
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let outcome: Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(
        (
            exit.success(),
            &outcome["stdout_bytes"],
            &outcome["truncated"],
            outcome["stdout"].as_str().map(str::len).unwrap_or(0) < 400 * 1024,
            peak_kib > 0 && peak_kib < PEAK_RSS_BOUND_KIB,
        ),
        (true, &json!(10_000_000_000u64), &json!(true), true, true),
        "peak RSS {peak_kib} KiB"
    );
}

/// Attaches with `ptrace` to a sibling and to efix (the parent) and prints the errno names;
/// detaches at once when an attach succeeds, so a failing test does not leave efix stopped.
const PTRACE: &str = r#"
import ctypes, errno, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def attach(pid):
    if libc.ptrace(16, pid, None, None) == 0:
        os.waitpid(pid, 0) if pid != os.getppid() else None
        libc.ptrace(17, pid, None, None)
        os.kill(pid, 18)
        return "attached"
    return errno.errorcode[ctypes.get_errno()]
sibling = subprocess.Popen(["sleep", "340.5"])
print("sibling", attach(sibling.pid))
sibling.kill()
print("efix", attach(os.getppid()))
"#;

#[test]
fn ptrace_of_a_sibling_and_of_efix_is_refused_and_efix_finishes() {
    let scratch = Scratch::new("");
    let mut child = Efix::new()
        .args(["exec", "--repo"])
        .args([scratch.root()])
        .args(["--", "python3", "-c", PTRACE])
        .spawn();
    // A stopped efix never finishes: wait with a bound, and wake it to fail loudly.
    let started = Instant::now();
    let finished = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if started.elapsed() > Duration::from_secs(120) {
            // SAFETY: kill takes a pid and a signal number only.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGCONT) };
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    assert!(finished, "efix was stopped by its child");
    let outcome: Value = serde_json::from_slice(&output.stdout).unwrap();
    let machine = machine();
    let lines = super::lines(&outcome);
    if machine.seccomp {
        assert_eq!(
            (lines, &outcome["sandbox"]["seccomp"]),
            (
                vec!["sibling EPERM".to_owned(), "efix EPERM".to_owned()],
                &json!(true)
            ),
            "{outcome:#}"
        );
    } else {
        // Without the filter a sibling of the same user can be traced; efix stays out of
        // reach (non-dumpable, and a root child lost CAP_SYS_PTRACE).
        assert_eq!(
            (lines[1].as_str(), &outcome["sandbox"]["seccomp"]),
            ("efix EPERM", &json!(false)),
            "{outcome:#}"
        );
        assert!(super::missing(&outcome).contains("seccomp:"), "{outcome:#}");
    }
    assert_eq!(survivors("sleep 340.5").len(), 0);
}
