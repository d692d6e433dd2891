//! Behaviour of the runner against real processes: process groups, timeouts, drains,
//! capture, redaction end to end, environment scrubbing and the "not found" convention.
//!
//! Markers like `61.1001` make each test's `sleep` recognisable in `/proc`, so a test can
//! prove that nothing it started is left behind.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::*;

/// The efix binary, which runs the helper mode: this test binary is
/// `target/<profile>/deps/efix-<hash>` and cargo builds the binary beside `deps/` (a plain
/// `cargo test` builds it; `cargo test --lib` after a change needs `cargo build` first).
pub(crate) fn efix_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let binary = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("efix"))
        .unwrap_or_default();
    assert!(
        binary.is_file(),
        "the runner tests start children through the efix binary's helper mode; build it \
         first (cargo build): {} is missing",
        binary.display()
    );
    binary
}

pub(crate) fn settings() -> RunnerSettings {
    let (env, _) = child_env(std::env::vars_os(), &[]);
    RunnerSettings {
        env,
        output_head_bytes: DEFAULT_OUTPUT_HEAD_BYTES,
        output_tail_bytes: DEFAULT_OUTPUT_TAIL_BYTES,
        term_grace: Duration::from_millis(300),
        secrets: Vec::new(),
        sandbox: SandboxSettings {
            helper: efix_binary(),
            ..SandboxSettings::new(std::env::temp_dir())
        },
    }
}

pub(crate) fn spec(argv: &[&str], timeout: Duration) -> CommandSpec {
    CommandSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        timeout,
        access: Access::command(false),
    }
}

const LONG: Duration = Duration::from_secs(60);

fn run_ok(spec: &CommandSpec, settings: &RunnerSettings) -> Outcome {
    match run(spec, settings) {
        Ok(outcome) => outcome,
        Err(error) => panic!("run {:?}: {error}", spec.argv),
    }
}

/// Fields that vary between machines and runs are zeroed so whole outcomes can be compared:
/// these tests are about supervision; what confinement the machine gave is tested in
/// `sandbox_tests`.
fn normalized(mut outcome: Outcome) -> Outcome {
    outcome.duration_ms = 0;
    let sandbox = outcome.sandbox;
    outcome.sandbox = SandboxReport {
        tier: sandbox.tier.min(Tier::ProcessGroup),
        process_group: sandbox.process_group,
        parent_death_signal: sandbox.parent_death_signal,
        env_cleared: sandbox.env_cleared,
        stdin_null: sandbox.stdin_null,
        drain_cut_short: sandbox.drain_cut_short,
        leaked_processes: sandbox.leaked_processes,
        leaked: sandbox.leaked,
        ..SandboxReport::default()
    };
    outcome
}

/// The outcome of a clean, silent, successful run of `argv` under the full sandbox.
fn clean(argv: &[&str]) -> Outcome {
    Outcome {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        duration_ms: 0,
        stdout: String::new(),
        stderr: String::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        truncated: false,
        redactions: BTreeMap::new(),
        sandbox: SandboxReport {
            tier: Tier::ProcessGroup,
            process_group: true,
            parent_death_signal: true,
            env_cleared: true,
            stdin_null: true,
            ..SandboxReport::default()
        },
    }
}

/// Live processes whose command line contains `marker` (zombies have an empty one).
fn live_processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
        })
        .collect()
}

/// Signal delivery is asynchronous, so give killed processes a moment to disappear.
fn survivors(marker: &str) -> Vec<u32> {
    for _ in 0..100 {
        if live_processes_with(marker).is_empty() {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    live_processes_with(marker)
}

#[test]
fn timeout_stops_the_whole_group_and_leaves_no_process_behind() {
    let argv = ["sh", "-c", "sleep 61.1001 & sleep 61.1001"];
    let outcome = run_ok(&spec(&argv, Duration::from_millis(300)), &settings());
    assert_eq!(
        normalized(outcome),
        Outcome {
            exit_code: None,
            signal: Some("SIGTERM".to_owned()),
            timed_out: true,
            ..clean(&argv)
        }
    );
    assert_eq!(survivors("61.1001"), Vec::<u32>::new());
}

#[test]
fn child_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let argv = [
        "sh",
        "-c",
        "trap '' TERM; echo ready; sleep 61.1002; echo survived",
    ];
    // A whole second, so even a starved shell has set its trap before SIGTERM arrives.
    let outcome = run_ok(&spec(&argv, Duration::from_secs(1)), &settings());
    assert_eq!(
        normalized(outcome),
        Outcome {
            exit_code: None,
            signal: Some("SIGKILL".to_owned()),
            timed_out: true,
            stdout: "ready\n".to_owned(),
            stdout_bytes: 6,
            ..clean(&argv)
        }
    );
    assert_eq!(survivors("61.1002"), Vec::<u32>::new());
}

#[test]
fn background_grandchild_that_outlives_a_normal_exit_is_killed_and_recorded() {
    // The loop waits until the background child is `sleep` rather than the forked shell, so
    // the recorded command line is predictable.
    let argv = [
        "sh",
        "-c",
        "sleep 61.1003 & until [ \"$(head -c 5 /proc/$!/cmdline)\" = sleep ]; do :; done; echo done",
    ];
    let outcome = run_ok(&spec(&argv, LONG), &settings());
    let mut expected = Outcome {
        stdout: "done\n".to_owned(),
        stdout_bytes: 5,
        ..clean(&argv)
    };
    expected.sandbox.leaked_processes = 1;
    expected.sandbox.leaked = vec!["sleep 61.1003".to_owned()];
    assert_eq!(normalized(outcome), expected);
    assert_eq!(survivors("61.1003"), Vec::<u32>::new());
}

#[test]
fn grandchild_that_escaped_the_group_is_swept_and_cannot_hang_the_drain() {
    // `setsid` puts the sleep in a new session, out of reach of the group kill, still
    // holding stdout; the sweep finds it by its marker, kills it, and the pipes close. A
    // background job of `sh -c` does not lead a group, so `setsid` needs no fork and `$!` is
    // the sleep's pid; the loop waits until it is the sleep (and out of the group).
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("tempdir: {error}"),
    };
    let script = "setsid sh -c 'exec sleep 61.1004' & \
                  until [ \"$(head -c 5 /proc/$!/cmdline)\" = sleep ]; do :; done; echo started";
    let argv = ["sh", "-c", script];
    let mut spec = spec(&argv, LONG);
    spec.cwd = dir.path().to_path_buf();
    let outcome = run_ok(&spec, &settings());
    let mut expected = Outcome {
        stdout: "started\n".to_owned(),
        stdout_bytes: 8,
        ..clean(&argv)
    };
    expected.sandbox.leaked_processes = 1;
    expected.sandbox.leaked = vec!["sleep 61.1004".to_owned()];
    assert_eq!(
        (normalized(outcome), survivors("61.1004")),
        (expected, Vec::new())
    );
}

#[test]
fn cancel_flag_stops_the_child_like_a_timeout() {
    let argv = ["sleep", "61.1005"];
    let cancel = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            cancel.store(true, Ordering::Relaxed);
        });
        run_cancellable(&spec(&argv, LONG), &settings(), &cancel)
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => panic!("run: {error}"),
    };
    assert_eq!(
        normalized(outcome),
        Outcome {
            exit_code: None,
            signal: Some("SIGTERM".to_owned()),
            timed_out: true,
            ..clean(&argv)
        }
    );
    assert_eq!(survivors("61.1005"), Vec::<u32>::new());
}

#[test]
fn large_output_keeps_exact_counts_head_tail_and_a_marker() {
    // Two megabytes of "0123456789\n" on stdout and one on stderr.
    let script = "yes 0123456789 | head -c 2000000; yes 0123456789 | head -c 1000000 >&2";
    let argv = ["sh", "-c", script];
    let mut settings = settings();
    settings.output_head_bytes = 22;
    settings.output_tail_bytes = 33;
    let outcome = run_ok(&spec(&argv, LONG), &settings);
    // 2_000_000 = 181_818 lines of 11 bytes + "01"; the tail is the last 33 bytes.
    let stdout = "0123456789\n0123456789\n\n[... efix: 1999945 bytes omitted ...]\n\
                  23456789\n0123456789\n0123456789\n01";
    let stderr = "0123456789\n0123456789\n\n[... efix: 999945 bytes omitted ...]\n\
                  123456789\n0123456789\n0123456789\n0";
    assert_eq!(
        normalized(outcome),
        Outcome {
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            stdout_bytes: 2_000_000,
            stderr_bytes: 1_000_000,
            truncated: true,
            ..clean(&argv)
        }
    );
}

#[test]
fn configured_secret_never_appears_in_any_encoding_or_split() {
    let secret = "hunter2-Very$ecret/Value+42 \"q\"";
    let json = serde_json::to_string(secret).unwrap_or_default();
    let url = "hunter2-Very%24ecret%2FValue%2B42%20%22q%22";
    let script = r#"
        printf 'raw %s\n' "$S"
        printf 'b64-0 %s\n' "$(printf %s "$S" | base64 -w0)"
        printf 'b64-1 %s\n' "$(printf %s "x$S" | base64 -w0)"
        printf 'b64-2 %s\n' "$(printf %s "xy$S!" | base64 -w0)"
        printf 'url %s\n' "$U"
        printf 'json {"k":%s}\n' "$J"
        printf 'split %s' "$H1"; sleep 0.3; printf '%s end\n' "$H2"
    "#;
    let (first, second) = secret.split_at(12);
    let mut settings = settings();
    for (name, value) in [
        ("S", secret),
        ("U", url),
        ("J", json.as_str()),
        ("H1", first),
        ("H2", second),
    ] {
        settings
            .env
            .push((OsString::from(name), OsString::from(value)));
    }
    settings.secrets = vec![Secret {
        name: "DEPLOY_TOKEN".to_owned(),
        value: secret.to_owned(),
    }];
    let argv = ["sh", "-c", script];
    let outcome = run_ok(&spec(&argv, LONG), &settings);
    let printed = serde_json::to_string(&outcome).unwrap_or_default();
    for form in super::rules::secret_forms(secret.as_bytes()) {
        let form = String::from_utf8_lossy(&form).into_owned();
        assert!(!printed.contains(&form), "{form} leaked in {printed}");
    }
    insta::assert_snapshot!(outcome.stdout, @r#"
    raw [REDACTED:env:DEPLOY_TOKEN]
    b64-0 [REDACTED:env:DEPLOY_TOKEN]g==
    b64-1 eG[REDACTED:env:DEPLOY_TOKEN]I=
    b64-2 eHl[REDACTED:env:DEPLOY_TOKEN]IQ==
    url [REDACTED:env:DEPLOY_TOKEN]
    json {"k":"[REDACTED:env:DEPLOY_TOKEN]"}
    split [REDACTED:env:DEPLOY_TOKEN] end
    "#);
    assert_eq!(
        outcome.redactions,
        BTreeMap::from([("env:DEPLOY_TOKEN".to_owned(), 7)])
    );
}

#[test]
fn credentials_in_efix_environment_never_reach_the_child() {
    let parent = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("GITHUB_TOKEN", "ghp_parent".to_owned()),
        ("OPENAI_API_KEY", "sk-parent".to_owned()),
        ("FOO_TOKEN", "foo".to_owned()),
        ("MY_SECRET", "listed".to_owned()),
        ("MY_SETTING", "kept".to_owned()),
    ]
    .map(|(k, v)| (OsString::from(k), OsString::from(v)));
    let (env, dropped) = child_env(parent, &["MY_SECRET".to_owned(), "MY_SETTING".to_owned()]);
    let mut settings = settings();
    settings.env = env;
    let outcome = run_ok(&spec(&["env"], LONG), &settings);
    let mut names: Vec<&str> = outcome
        .stdout
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    names.sort_unstable();
    assert_eq!(
        (names, dropped, outcome.sandbox.env_passed),
        (
            // Without the network, package managers are also told they are offline; Python
            // keeps its bytecode in the command's own directory.
            vec![
                "CARGO_NET_OFFLINE",
                "GOPROXY",
                "MY_SETTING",
                "PATH",
                "PYTHONPYCACHEPREFIX",
                "TMPDIR",
                "UV_OFFLINE",
                "npm_config_offline"
            ],
            vec!["MY_SECRET".to_owned()],
            [
                "CARGO_NET_OFFLINE",
                "GOPROXY",
                "MY_SETTING",
                "PATH",
                "PYTHONPYCACHEPREFIX",
                "TMPDIR",
                "UV_OFFLINE",
                "npm_config_offline"
            ]
            .map(str::to_owned)
            .to_vec()
        )
    );
}

#[test]
fn missing_program_is_an_outcome_with_127_and_a_message() {
    let argv = ["efix-no-such-program-xyz", "--flag"];
    let outcome = run_ok(&spec(&argv, LONG), &settings());
    let message = "efix: program not found: efix-no-such-program-xyz\n";
    assert_eq!(
        normalized(outcome),
        Outcome {
            exit_code: Some(127),
            stderr: message.to_owned(),
            stderr_bytes: message.len() as u64,
            sandbox: SandboxReport::default(),
            ..clean(&argv)
        }
    );
}

#[test]
fn program_without_execute_permission_is_an_outcome_with_126() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("tempdir: {error}"),
    };
    let script = dir.path().join("not-executable.sh");
    if let Err(error) = std::fs::write(&script, "#!/bin/sh\necho hi\n") {
        panic!("write: {error}");
    }
    let program = script.to_string_lossy().into_owned();
    let outcome = run_ok(&spec(&[&program], LONG), &settings());
    assert_eq!(
        (outcome.exit_code, outcome.stderr),
        (
            Some(126),
            format!("efix: program not executable: {program} (permission denied)\n")
        )
    );
}

#[test]
fn empty_command_and_missing_directory_are_errors() {
    let empty = run(&spec(&[], LONG), &settings());
    let mut missing = spec(&["true"], LONG);
    missing.cwd = PathBuf::from("/nonexistent/efix-test-dir");
    let missing = run(&missing, &settings());
    assert_eq!(
        (
            format!("{:?}", empty.map(|_| ())),
            missing.map(|_| ()).map_err(|error| error.to_string()),
        ),
        (
            "Err(EmptyCommand)".to_owned(),
            Err("use /nonexistent/efix-test-dir as the working directory".to_owned())
        )
    );
}

#[test]
fn non_utf8_output_is_converted_lossily() {
    let argv = ["printf", r"\377\376ok\n"];
    let outcome = run_ok(&spec(&argv, LONG), &settings());
    assert_eq!(
        normalized(outcome),
        Outcome {
            stdout: "\u{fffd}\u{fffd}ok\n".to_owned(),
            stdout_bytes: 5,
            ..clean(&argv)
        }
    );
}

#[test]
fn stdin_is_null_so_a_reader_gets_eof_at_once() {
    let cat = run_ok(&spec(&["cat"], LONG), &settings());
    let link = run_ok(&spec(&["readlink", "/proc/self/fd/0"], LONG), &settings());
    assert_eq!(
        (normalized(cat), link.stdout),
        (clean(&["cat"]), "/dev/null\n".to_owned())
    );
}

#[test]
fn child_leads_its_own_process_group() {
    // Field 5 of /proc/<pid>/stat is the process group; `$$` is the shell's pid.
    let argv = ["sh", "-c", "echo $$; cut -d' ' -f5 /proc/$$/stat"];
    let outcome = run_ok(&spec(&argv, LONG), &settings());
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(
        (lines.len(), lines.first(), outcome.sandbox.process_group),
        (2, lines.get(1), true)
    );
}

#[test]
fn child_has_sigkill_as_its_parent_death_signal() {
    // PR_GET_PDEATHSIG (2) is only readable by the process itself; python3 is the most
    // portable way to call prctl from a child.
    let probe = "import ctypes; s = ctypes.c_int(); \
                 ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)";
    // CPython is on every machine efix is built on (CI relies on it too); a missing python3
    // fails here instead of passing without probing.
    let outcome = run_ok(&spec(&["python3", "-c", probe], LONG), &settings());
    assert_eq!(
        outcome.stdout,
        format!("{}\n", libc::SIGKILL),
        "{}",
        outcome.stderr
    );
}

/// Whether this process may read other processes' memory regardless of dumpability
/// (CAP_SYS_PTRACE, bit 19 of the effective set), as root in most containers can.
fn can_ptrace_anything() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 19) != 0)
}

#[test]
fn hardened_efix_hides_its_environment_from_children() {
    assert!(harden_self());
    let environ = format!("/proc/{}/environ", std::process::id());
    let outcome = run_ok(&spec(&["cat", &environ], LONG), &settings());
    // With CAP_SYS_PTRACE the kernel lets the child read it anyway; only the flag is checked.
    let expected_exit = if can_ptrace_anything() {
        outcome.exit_code
    } else {
        Some(1)
    };
    assert_eq!(
        (outcome.exit_code, outcome.sandbox.non_dumpable_parent),
        (expected_exit, true)
    );
}

#[test]
fn secrets_in_argv_are_redacted_in_the_outcome() {
    let mut settings = settings();
    settings.secrets = vec![Secret {
        name: "API".to_owned(),
        value: "abcd-1234-secret".to_owned(),
    }];
    let outcome = run_ok(&spec(&["echo", "abcd-1234-secret"], LONG), &settings);
    assert_eq!(
        (outcome.argv, outcome.stdout, outcome.redactions),
        (
            vec!["echo".to_owned(), "[REDACTED:env:API]".to_owned()],
            "[REDACTED:env:API]\n".to_owned(),
            BTreeMap::from([("env:API".to_owned(), 2)])
        )
    );
}

#[test]
fn outcome_json_has_exactly_the_documented_keys() {
    let outcome = run_ok(&spec(&["true"], LONG), &settings());
    let value = serde_json::to_value(&outcome).unwrap_or_default();
    let keys: Vec<&str> = value
        .as_object()
        .map(|object| object.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let mut expected = vec![
        "argv",
        "exit_code",
        "signal",
        "timed_out",
        "duration_ms",
        "stdout",
        "stderr",
        "stdout_bytes",
        "stderr_bytes",
        "truncated",
        "redactions",
        "sandbox",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
}
