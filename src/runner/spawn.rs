//! Spawning and supervising one child: argv only, stdin `/dev/null`, its own process group,
//! a parent-death signal, a scrubbed environment; then one `poll` loop that reads both pipes,
//! watches for exit, and on timeout or cancel sends SIGTERM to the group, waits the grace
//! period and sends SIGKILL. When the leader exits (on its own or not), whatever is left of
//! its group is killed and the pipes are drained for at most [`DRAIN_TIMEOUT`], so a process
//! that escaped the group and holds a pipe cannot hang efix.
//!
//! It does not check whether the command is allowed (that is `policy::command`); the
//! environment it applies is the one the caller built with `child_env`.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::capture::{Capture, Captured};
use super::launch::{Input, Launch, Launched, launch};
use super::linux;
use super::model::{
    CommandSpec, DRAIN_TIMEOUT, Outcome, RunnerError, RunnerSettings, SandboxReport,
};
use super::redact::{Counts, RedactStream, Redactor};
use super::sandbox::Tier;
use super::sweep::{self, Sweep};

/// Size of each read from a pipe (256 KiB).
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// How often the cancel flag is checked while nothing else happens (50 ms).
const CANCEL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// How often the leader's exit is checked when the kernel has no pidfd (10 ms).
const EXIT_CHECK_INTERVAL: Duration = Duration::from_millis(10);

/// Stand-in for "never" when a configured duration overflows the clock (one year).
const FAR_FUTURE: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Run one command to completion (or timeout) under the sandbox.
///
/// A failing, killed or missing program is an [`Outcome`], not an error; see [`Outcome`] for
/// the conventions.
pub fn run(spec: &CommandSpec, settings: &RunnerSettings) -> Result<Outcome, RunnerError> {
    run_cancellable(spec, settings, &AtomicBool::new(false))
}

/// Like [`run`], but the child is stopped (SIGTERM to the group, grace period, SIGKILL) as
/// soon as `cancel` becomes true, e.g. because efix itself got SIGINT or SIGTERM.
///
/// A cancelled run is recorded like a timeout (`timed_out: true`): efix stopped the child.
/// The caller knows it cancelled, since it set the flag. The flag is checked every 50 ms.
pub fn run_cancellable(
    spec: &CommandSpec,
    settings: &RunnerSettings,
    cancel: &AtomicBool,
) -> Result<Outcome, RunnerError> {
    if spec.argv.is_empty() {
        return Err(RunnerError::EmptyCommand);
    }
    check_directory(spec)?;
    // The first time in a process the rules compile (a few ms) while the helper starts the
    // child: nothing is redacted before the child's first output. Later commands reuse them.
    let ready = Redactor::compiled(&settings.secrets);
    let compiling = ready.is_none().then(|| {
        let secrets = settings.secrets.clone();
        std::thread::spawn(move || Redactor::cached(&secrets))
    });
    let non_dumpable_parent = linux::is_non_dumpable();

    let start = Instant::now();
    let launched = launch(spec, settings, Input::Null);
    let compiled = match (ready, compiling) {
        (Some(redactor), _) => Ok(redactor),
        (None, Some(compiling)) => compiling
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        (None, None) => Redactor::cached(&settings.secrets),
    };
    let redactor = match compiled {
        Ok(redactor) => redactor,
        Err(error) => {
            // Nothing may run unredacted: a started child is stopped with its group.
            if let Ok(Launch::Started(started)) = launched {
                let mut child = started.child;
                if let Ok(raw) = i32::try_from(child.id()) {
                    signal_group(Pid::from_raw(raw), Signal::SIGKILL);
                }
                let _ = child.wait();
                sweep::untrack(child.id());
            }
            return Err(error);
        }
    };
    let mut redactions = Counts::new();
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|arg| redactor.redact_text(arg, &mut redactions))
        .collect();
    let launched = match launched? {
        Launch::Started(launched) => launched,
        Launch::NotStarted { exit_code, message } => {
            let stderr = redactor.redact_text(&message, &mut redactions);
            return Ok(Outcome {
                argv,
                exit_code: Some(exit_code),
                signal: None,
                timed_out: false,
                duration_ms: millis(start.elapsed()),
                stdout: String::new(),
                stderr,
                stdout_bytes: 0,
                stderr_bytes: message.len() as u64,
                truncated: false,
                redactions,
                sandbox: SandboxReport {
                    tier: Tier::None,
                    non_dumpable_parent,
                    ..SandboxReport::default()
                },
            });
        }
    };
    let Launched {
        child,
        marker,
        namespaces,
        confinement,
        tier,
        env_passed,
        writable,
        since,
        temp_dir,
    } = *launched;
    let pid = child.id();
    tracing::debug!(pid, program = %argv[0], %tier, "started command");
    let process_group = linux::process_group_of(pid) == Some(pid);
    let mut sweep = Sweep::new(marker, namespaces, pid, since);

    let supervised = supervise(child, spec, settings, &redactor, cancel, start, &mut sweep);
    sweep.kill_escaped();
    let (leaked_processes, leaked) = sweep.finish();
    sweep::untrack(pid);
    drop(temp_dir);
    let watched = supervised?;
    watched.stdout.add_counts(&mut redactions);
    watched.stderr.add_counts(&mut redactions);
    let stdout_bytes = watched.stdout.raw_bytes;
    let stderr_bytes = watched.stderr.raw_bytes;
    let stdout = watched.stdout.into_captured();
    let stderr = watched.stderr.into_captured();
    if leaked_processes > 0 {
        tracing::warn!(
            leaked_processes,
            "killed processes the command left running"
        );
    }
    let leaked = leaked
        .iter()
        .map(|line| redactor.redact_text(line, &mut redactions))
        .collect();
    let writable = if confinement.landlock_abi.is_some() {
        writable
    } else {
        Vec::new()
    };
    Ok(Outcome {
        argv,
        exit_code: watched.status.and_then(|status| status.code()),
        signal: watched
            .status
            .and_then(|status| status.signal())
            .map(signal_name),
        timed_out: watched.stopped,
        duration_ms: millis(watched.duration),
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_bytes,
        stderr_bytes,
        truncated: stdout.truncated || stderr.truncated,
        redactions,
        sandbox: SandboxReport {
            tier: if process_group { tier } else { Tier::None },
            process_group,
            parent_death_signal: linux::HAS_PARENT_DEATH_SIGNAL,
            env_cleared: true,
            env_passed,
            non_dumpable_parent,
            stdin_null: true,
            drain_cut_short: watched.drain_cut_short,
            no_new_privs: confinement.no_new_privs,
            landlock_abi: confinement.landlock_abi,
            writable,
            seccomp: confinement.seccomp,
            network: confinement.network,
            loopback: confinement.loopback,
            read_only: confinement.read_only,
            capabilities_dropped: confinement.capabilities_dropped,
            missing: confinement.missing,
            leaked_processes,
            leaked,
        },
    })
}

/// A missing working directory would otherwise surface as "program not found" (both are
/// ENOENT from the spawn), so it is checked first.
fn check_directory(spec: &CommandSpec) -> Result<(), RunnerError> {
    let error = match std::fs::metadata(&spec.cwd) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => io::Error::from(ErrorKind::NotADirectory),
        Err(error) => error,
    };
    Err(RunnerError::WorkingDirectory {
        path: spec.cwd.clone(),
        source: error,
    })
}

fn signal_name(number: i32) -> String {
    Signal::try_from(number)
        .map(|signal| signal.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {number}"))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `now + duration`, saturating at [`FAR_FUTURE`] instead of panicking on overflow.
fn after(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// One output stream: its pipe while open, the redactor it flows through and the capture.
struct Stream<'r> {
    pipe: Option<File>,
    redact: RedactStream<'r>,
    capture: Capture,
    /// Bytes read from the child, before redaction.
    raw_bytes: u64,
}

impl<'r> Stream<'r> {
    fn new(pipe: Option<OwnedFd>, redactor: &'r Redactor, settings: &RunnerSettings) -> Self {
        if let Some(fd) = &pipe {
            linux::enlarge_pipe(fd.as_fd());
        }
        Self {
            pipe: pipe.map(File::from),
            redact: redactor.stream(),
            capture: Capture::new(settings.output_head_bytes, settings.output_tail_bytes),
            raw_bytes: 0,
        }
    }

    /// Read once from a pipe that `poll` reported ready.
    fn read_once(&mut self, buffer: &mut [u8]) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        match pipe.read(buffer) {
            Ok(0) => self.close(),
            Ok(count) => {
                self.raw_bytes += count as u64;
                let Self {
                    redact, capture, ..
                } = self;
                redact.push(&buffer[..count], &mut |bytes: &[u8]| capture.write(bytes));
            }
            Err(error)
                if matches!(error.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
            Err(error) => {
                tracing::warn!(%error, "reading command output failed; keeping what was read");
                self.close();
            }
        }
    }

    /// Close the pipe (if open) and flush what the redactor still holds.
    fn close(&mut self) {
        if self.pipe.take().is_some() {
            let Self {
                redact, capture, ..
            } = self;
            redact.finish(&mut |bytes: &[u8]| capture.write(bytes));
        }
    }

    fn add_counts(&self, counts: &mut Counts) {
        self.redact.add_counts(counts);
    }

    fn into_captured(self) -> Captured {
        self.capture.finish()
    }
}

/// Where the supervision is.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for exit or the deadline.
    Running,
    /// SIGTERM sent to the group; SIGKILL at `kill_at`.
    Terminating { kill_at: Instant },
    /// SIGKILL sent; stop waiting for the leader at `give_up_at`.
    Killed { give_up_at: Instant },
    /// The leader was reaped and the rest of its group killed; stop draining at `drain_until`.
    Exited { drain_until: Instant },
}

/// What supervision observed.
struct Watched<'r> {
    /// `None` only if the leader survived SIGKILL past the drain bound (uninterruptible).
    status: Option<ExitStatus>,
    stopped: bool,
    duration: Duration,
    stdout: Stream<'r>,
    stderr: Stream<'r>,
    drain_cut_short: bool,
}

fn supervise<'r>(
    mut child: Child,
    spec: &CommandSpec,
    settings: &RunnerSettings,
    redactor: &'r Redactor,
    cancel: &AtomicBool,
    start: Instant,
    sweep: &mut Sweep,
) -> Result<Watched<'r>, RunnerError> {
    let pid = child.id();
    let pgid = Pid::from_raw(i32::try_from(pid).map_err(|_| {
        RunnerError::io("track the command", io::Error::from(ErrorKind::InvalidData))
    })?);
    let mut guard = KillGroupOnDrop { pgid, armed: true };
    let pidfd = linux::pidfd_open(pid);
    let mut stdout = Stream::new(child.stdout.take().map(OwnedFd::from), redactor, settings);
    let mut stderr = Stream::new(child.stderr.take().map(OwnedFd::from), redactor, settings);
    let deadline = start.checked_add(spec.timeout);
    let mut buffer = vec![0u8; READ_BUFFER_BYTES];
    let mut phase = Phase::Running;
    let mut stopped = false;
    let mut status = None;
    let mut exited_at = None;
    let mut drain_cut_short = false;

    loop {
        let now = Instant::now();
        match phase {
            Phase::Running
                if cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d) =>
            {
                tracing::debug!(pid, "stopping command: SIGTERM to its process group");
                signal_group(pgid, Signal::SIGTERM);
                stopped = true;
                sweep.stopped();
                phase = Phase::Terminating {
                    kill_at: after(now, settings.term_grace),
                };
                continue;
            }
            Phase::Terminating { kill_at } if now >= kill_at => {
                tracing::debug!(pid, "grace period over: SIGKILL to the process group");
                signal_group(pgid, Signal::SIGKILL);
                phase = Phase::Killed {
                    give_up_at: after(now, DRAIN_TIMEOUT),
                };
                continue;
            }
            Phase::Killed { give_up_at } if now >= give_up_at => {
                tracing::warn!(pid, "command did not exit after SIGKILL; leaving it");
                break;
            }
            Phase::Exited { drain_until } => {
                if stdout.pipe.is_none() && stderr.pipe.is_none() {
                    break;
                }
                if now >= drain_until {
                    tracing::warn!(
                        pid,
                        "output pipes still open after the command's group was killed; a \
                         process that left the group holds them"
                    );
                    drain_cut_short = true;
                    break;
                }
            }
            _ => {}
        }

        let leader_alive = !matches!(phase, Phase::Exited { .. });
        let wake_at = match phase {
            Phase::Running => deadline,
            Phase::Terminating { kill_at } => Some(kill_at),
            Phase::Killed { give_up_at } => Some(give_up_at),
            Phase::Exited { drain_until } => Some(drain_until),
        };
        let mut wait = wake_at.map_or(FAR_FUTURE, |at| at.saturating_duration_since(now));
        if matches!(phase, Phase::Running) {
            wait = wait.min(CANCEL_CHECK_INTERVAL);
        }
        if leader_alive && pidfd.is_none() {
            wait = wait.min(EXIT_CHECK_INTERVAL);
        }

        let watch_exit = if leader_alive { pidfd.as_ref() } else { None };
        let [out_ready, err_ready, exit_ready] = wait_ready(
            [stdout.pipe.as_ref(), stderr.pipe.as_ref()],
            watch_exit,
            wait,
        )?;
        if out_ready {
            stdout.read_once(&mut buffer);
        }
        if err_ready {
            stderr.read_once(&mut buffer);
        }
        if leader_alive && (exit_ready || pidfd.is_none()) && has_exited(pgid)? {
            // Record and kill what the command left running (in its group or escaped from
            // it), then the rest of the group, before reaping the leader: while the leader
            // is an unreaped zombie its pid cannot be reused, so the group id still means
            // this group.
            sweep.kill_escaped();
            signal_group(pgid, Signal::SIGKILL);
            let reaped = child
                .wait()
                .map_err(|error| RunnerError::io("wait for the command", error))?;
            guard.armed = false;
            let now = Instant::now();
            tracing::debug!(pid, status = %reaped, "command exited");
            status = Some(reaped);
            exited_at = Some(now);
            phase = Phase::Exited {
                drain_until: after(now, DRAIN_TIMEOUT),
            };
        }
    }

    stdout.close();
    stderr.close();
    if status.is_none() {
        status = child.try_wait().ok().flatten();
        guard.armed = status.is_none();
    }
    Ok(Watched {
        status,
        stopped,
        duration: exited_at.unwrap_or_else(Instant::now).duration_since(start),
        stdout,
        stderr,
        drain_cut_short,
    })
}

/// Kills the command's process group when supervision ends before the leader was reaped
/// (an error return), so a failure inside efix never leaves the command running. Disarmed
/// once the leader is reaped, after which the group id may be reused.
struct KillGroupOnDrop {
    pgid: Pid,
    armed: bool,
}

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

/// Wait up to `wait` for the pipes to have data (or hang up) or the pidfd to signal exit;
/// returns readiness of `[stdout, stderr, exit]`.
fn wait_ready(
    pipes: [Option<&File>; 2],
    pidfd: Option<&OwnedFd>,
    wait: Duration,
) -> Result<[bool; 3], RunnerError> {
    let sources = [
        pipes[0].map(AsFd::as_fd),
        pipes[1].map(AsFd::as_fd),
        pidfd.map(AsFd::as_fd),
    ];
    let mut fds = Vec::with_capacity(3);
    let mut slots = [None; 3];
    for (slot, source) in slots.iter_mut().zip(sources) {
        if let Some(fd) = source {
            *slot = Some(fds.len());
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
        }
    }
    // Round up so a wait of less than a millisecond does not turn into a busy loop.
    let millis = wait.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128);
    let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(_) => {}
        Err(Errno::EINTR) => return Ok([false; 3]),
        Err(errno) => {
            return Err(RunnerError::io(
                "wait for command output",
                io::Error::from(errno),
            ));
        }
    }
    Ok(slots.map(|slot| {
        slot.and_then(|index| fds.get(index))
            .and_then(PollFd::revents)
            .is_some_and(|events| !events.is_empty())
    }))
}

/// Whether the leader has exited, without reaping it.
fn has_exited(pid: Pid) -> Result<bool, RunnerError> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::Pid(pid), flags) {
        Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => Ok(false),
        Ok(_) => Ok(true),
        Err(errno) => Err(RunnerError::io(
            "check whether the command exited",
            io::Error::from(errno),
        )),
    }
}

/// Send `signal` to the whole group; a group that is already gone is not an error.
fn signal_group(pgid: Pid, signal: Signal) {
    match killpg(pgid, signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(errno) => tracing::warn!(%errno, ?signal, "could not signal the command's group"),
    }
}
