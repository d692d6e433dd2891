//! Starting one child: the parent side of helper mode. It makes the command's private
//! temporary directory and marker, writes the helper's plan from the settings and what the
//! machine gives, starts efix as the helper (argv only, stdin `/dev/null`, its own process
//! group, a parent-death signal, the scrubbed environment), registers it for the sweep, and
//! reads back what the helper achieved before the command runs.
//!
//! It does not supervise the running command (that is `spawn`).

use std::ffi::OsString;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::helper::{HELPER_ARG, Message, Plan, REPORT_FD};
use super::linux;
use super::model::{CommandSpec, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, RunnerError, RunnerSettings};
use super::probe::{Machine, machine};
use super::sandbox::{Confinement, Mechanism, Tier};
use super::sweep::{self, MARKER_VAR, Running};

/// Where Python keeps its bytecode cache.
const PYCACHE_VAR: &str = "PYTHONPYCACHEPREFIX";

/// What a command without the network is told, unless its environment already says: cargo,
/// npm, uv and go then resolve from their caches (a `commands.setup` fetch fills them).
const OFFLINE_ENV: [(&str, &str); 4] = [
    ("CARGO_NET_OFFLINE", "true"),
    ("npm_config_offline", "true"),
    ("UV_OFFLINE", "1"),
    ("GOPROXY", "off"),
];

/// How long the helper may take to report (10 s); it needs milliseconds, so hitting this
/// means it hangs and the command must not run.
const REPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Devices every command may write: the bit buckets, the terminal, and `/dev/shm` (POSIX
/// semaphores and shared memory, which Python's multiprocessing needs).
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/shm",
];

/// A started command.
#[derive(Debug)]
pub(crate) struct Launched {
    pub child: Child,
    pub marker: String,
    /// The namespaces the helper created (empty when it ran in efix's).
    pub namespaces: Vec<String>,
    pub confinement: Confinement,
    pub tier: Tier,
    /// Names of the variables the command received, sorted.
    pub env_passed: Vec<String>,
    /// Where landlock lets the command write, when it is enforced.
    pub writable: Vec<String>,
    /// Clock ticks after boot when it was started, for the sweep.
    pub since: u64,
    /// Removed when dropped, after the command and its sweep.
    pub temp_dir: tempfile::TempDir,
}

/// The result of trying to start a command.
#[derive(Debug)]
pub(crate) enum Launch {
    Started(Box<Launched>),
    /// The program could not be executed: exit code and the stderr line, by the shell's
    /// conventions.
    NotStarted {
        exit_code: i32,
        message: String,
    },
}

/// What the child's stdin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// `/dev/null`: a command.
    Null,
    /// A pipe efix writes to: an agent spoken to over stdio.
    Piped,
}

/// Start `spec` under the sandbox.
pub(crate) fn launch(
    spec: &CommandSpec,
    settings: &RunnerSettings,
    input: Input,
) -> Result<Launch, RunnerError> {
    sweep::ensure_subreaper();
    let repo = std::path::absolute(&spec.cwd).unwrap_or_else(|_| spec.cwd.clone());
    let temp_dir = tempfile::Builder::new()
        // A name like any `mktemp` directory: the code under test must not learn from its
        // environment that efix runs it.
        .prefix("tmp.")
        .tempdir_in(&settings.sandbox.temp_base)
        .map_err(|error| {
            RunnerError::io(
                format!(
                    "create a private temporary directory in {}",
                    settings.sandbox.temp_base.display()
                ),
                error,
            )
        })?;
    let plan = plan(spec, settings, &repo, temp_dir.path(), machine());
    // Landlock can only grant a write beneath a path that exists, and a tool creates its
    // cache on first use (go's `~/.cache/go-build` on a fresh machine): create the missing
    // cache directories first, as the tool would without the sandbox.
    for path in &plan.writable {
        if std::fs::symlink_metadata(path).is_err()
            && let Err(error) = create_cache_dir(path)
        {
            tracing::debug!(path = %path.display(), %error, "a writable path could not be created");
        }
    }
    let writable: Vec<String> = plan
        .write_repo
        .then_some(&plan.repo)
        .into_iter()
        .chain(&plan.writable)
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .map(|path| path.display().to_string())
        .collect();
    let mut env: Vec<(OsString, OsString)> = settings
        .env
        .iter()
        .filter(|(name, _)| name != MARKER_VAR)
        .cloned()
        .collect();
    // The command's private temporary directory is also the mark the sweep finds its
    // processes by: every program has a TMPDIR, so the mark tells the code under test nothing.
    let marker = temp_dir.path().display().to_string();
    env.push((MARKER_VAR.into(), marker.clone().into()));
    // Python trusts a cached `.pyc` whose source has the same size and the same mtime in
    // whole seconds, so a test file efix rewrites within a second of a run (a one-character
    // change, a restore) could run as its old self. Each command gets an empty cache of its
    // own, which also keeps `__pycache__` directories out of the working tree.
    env.retain(|(name, _)| name != PYCACHE_VAR);
    env.push((PYCACHE_VAR.into(), temp_dir.path().join("pycache").into()));
    if !spec.access.network {
        // Package managers that are told they are offline use their caches and fail at once
        // with a clear message, instead of retrying a network they cannot reach.
        for (name, value) in OFFLINE_ENV {
            if !env.iter().any(|(set, _)| set == name) {
                env.push((name.into(), value.into()));
            }
        }
    }
    env.sort();
    let mut env_passed: Vec<String> = env
        .iter()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    env_passed.dedup();

    let plan_text = serde_json::to_string(&plan)
        .map_err(|error| RunnerError::io("write the sandbox plan", io::Error::other(error)))?;
    let (report_read, report_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|errno| RunnerError::io("create the report pipe", io::Error::from(errno)))?;
    let mut command = Command::new(&settings.sandbox.helper);
    command
        .arg(HELPER_ARG)
        .arg(plan_text)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(env)
        .stdin(match input {
            Input::Null => Stdio::null(),
            Input::Piped => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let parent = nix::unistd::getpid().as_raw();
    let report_fd = report_write.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only makes raw system
    // calls (prctl, getppid, dup2, fcntl) that neither allocate nor lock, so it is
    // async-signal-safe as `pre_exec` requires.
    unsafe {
        command.pre_exec(move || {
            linux::set_parent_death_signal(parent)?;
            linux::move_fd(report_fd, REPORT_FD)
        });
    }
    let since = sweep::now_ticks();
    let child = {
        let mut running = sweep::spawn_lock();
        let child = command.spawn().map_err(|error| {
            RunnerError::io(
                format!(
                    "start the sandbox helper {}",
                    settings.sandbox.helper.display()
                ),
                error,
            )
        })?;
        running.push(Running {
            pid: child.id(),
            marker: marker.clone(),
        });
        child
    };
    drop(report_write);
    let messages = read_report(report_read);
    let program = spec.argv.first().map(String::as_str).unwrap_or_default();
    let stop = match interpret(messages, program) {
        Ok(Some((confinement, tier, mut namespaces))) => {
            // Only namespaces the helper created identify the command's processes; one it
            // shares with efix (the network when it is allowed, the mounts when nothing is
            // made read-only) holds every other process too.
            let own = sweep::namespace_ids("self");
            namespaces.retain(|id| !own.contains(id));
            return Ok(Launch::Started(Box::new(Launched {
                child,
                marker,
                namespaces,
                confinement,
                tier,
                env_passed,
                writable,
                since,
                temp_dir,
            })));
        }
        Ok(None) => Stop::Error(RunnerError::Helper {
            reason: format!(
                "the sandbox helper {} exited without reporting; it must be this efix",
                settings.sandbox.helper.display()
            ),
        }),
        Err(stop) => stop,
    };
    // The helper stops by itself after reporting why; this only makes sure.
    let mut child = child;
    let _ = child.kill();
    let _ = child.wait();
    sweep::untrack(child.id());
    match stop {
        Stop::NotStarted(exit_code, message) => Ok(Launch::NotStarted { exit_code, message }),
        Stop::Error(error) => Err(error),
    }
}

/// Why a command did not start.
enum Stop {
    NotStarted(i32, String),
    Error(RunnerError),
}

/// What the helper's messages mean: confined and running (with the namespace ids it sent),
/// nothing at all (`None`), or a reason it stopped.
fn interpret(
    messages: Vec<Message>,
    program: &str,
) -> Result<Option<(Confinement, Tier, Vec<String>)>, Stop> {
    let mut started = None;
    for message in messages {
        match message {
            Message::Confined {
                confinement,
                tier,
                namespaces,
            } => started = Some((confinement, tier, namespaces)),
            Message::Refused { confinement, tier } => {
                return Err(Stop::Error(RunnerError::TierNotAchieved {
                    achieved: tier,
                    missing: confinement.missing,
                }));
            }
            Message::Failed { reason } => {
                return Err(Stop::Error(RunnerError::Helper { reason }));
            }
            Message::ExecFailed { errno } => {
                return Err(exec_failure(errno, program));
            }
        }
    }
    Ok(started)
}

/// The exit code and stderr line for a program that could not be executed, following the
/// shell's convention (127 not found, 126 not executable); other failures are errors.
fn exec_failure(errno: i32, program: &str) -> Stop {
    let reason = match errno {
        libc::ENOENT => {
            return Stop::NotStarted(
                EXIT_NOT_FOUND,
                format!("efix: program not found: {program}\n"),
            );
        }
        libc::EACCES => "permission denied",
        libc::ENOEXEC => "exec format error",
        libc::EISDIR => "is a directory",
        _ => {
            return Stop::Error(RunnerError::io(
                format!("start {program}"),
                io::Error::from_raw_os_error(errno),
            ));
        }
    };
    Stop::NotStarted(
        EXIT_NOT_EXECUTABLE,
        format!("efix: program not executable: {program} ({reason})\n"),
    )
}

/// Read the helper's report lines until it executes the command (the descriptor closes) or
/// exits; a helper that hangs past [`REPORT_TIMEOUT`] yields what it sent so far.
fn read_report(read: OwnedFd) -> Vec<Message> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let deadline = Instant::now() + REPORT_TIMEOUT;
    let mut file = std::fs::File::from(read);
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            tracing::warn!("the sandbox helper did not finish its report in time");
            break;
        }
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(count) => bytes.extend_from_slice(&buffer[..count]),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

/// The helper's plan for `spec`: what the machine gives minus what the user disabled.
pub(crate) fn plan(
    spec: &CommandSpec,
    settings: &RunnerSettings,
    repo: &Path,
    temp_dir: &Path,
    machine: &Machine,
) -> Plan {
    let sandbox = &settings.sandbox;
    let usable = |mechanism| machine.missing(mechanism, &sandbox.disabled).is_none();
    let missing = Mechanism::ALL
        .into_iter()
        .filter_map(|mechanism| machine.missing(mechanism, &sandbox.disabled))
        .collect();
    let mut writable = vec![temp_dir.to_path_buf()];
    writable.extend(sandbox.writable.iter().cloned());
    writable.extend(WRITABLE_DEVICES.iter().map(PathBuf::from));
    let git = repo.join(".git");
    let needs_read_only = std::fs::symlink_metadata(&git).is_ok();
    let mut read_only = Vec::new();
    if needs_read_only {
        read_only.push(git);
    }
    read_only.extend(
        sandbox
            .read_only
            .iter()
            .filter_map(|path| std::path::absolute(path).ok())
            .filter(|path| path.starts_with(repo) && std::fs::metadata(path).is_ok()),
    );
    Plan {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        argv: spec.argv.clone(),
        parent: nix::unistd::getpid().as_raw(),
        repo: repo.to_path_buf(),
        network: spec.access.network,
        write_repo: spec.access.write_repo,
        writable,
        read_only,
        namespaces: if usable(Mechanism::Namespaces) {
            machine.namespaces.as_ref().ok().copied()
        } else {
            None
        },
        landlock: usable(Mechanism::Landlock),
        seccomp: usable(Mechanism::Seccomp),
        missing,
        require: sandbox.require,
        needs_read_only,
    }
}

/// Create a missing writable directory (and its parents) that only its owner may enter.
fn create_cache_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}
