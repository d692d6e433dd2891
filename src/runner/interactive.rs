//! Long-lived children that efix talks to over their pipes (an ACP agent): the same spawn
//! hygiene as a command (argv only, its own process group, a parent-death signal, the
//! environment cleared and set to exactly what the caller passes), but with stdin, stdout and
//! stderr left to the caller, who must end the child with [`kill_process_group`].
//!
//! Supervision (timeouts, reading the pipes, bounded buffers) is the caller's, since the
//! conversation is: this module only builds the process and kills its group.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::linux;
use super::model::RunnerError;

/// A command for `argv` in `cwd` with exactly `env`, its own process group and a parent-death
/// signal, and all three pipes piped. Spawn it (directly or through an async runtime's
/// `Command::from`) and end it with [`kill_process_group`].
pub fn interactive_command(
    argv: &[String],
    cwd: &Path,
    env: &[(OsString, OsString)],
) -> Result<Command, RunnerError> {
    let Some(program) = argv.first() else {
        return Err(RunnerError::EmptyCommand);
    };
    if !cwd.is_dir() {
        return Err(RunnerError::WorkingDirectory {
            path: cwd.to_owned(),
            source: std::io::Error::from(std::io::ErrorKind::NotADirectory),
        });
    }
    let mut command = Command::new(program);
    command
        .args(&argv[1..])
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let parent = nix::unistd::getpid().as_raw();
    // SAFETY: the closure runs in the forked child before exec. It only calls
    // `set_parent_death_signal`, which makes raw syscalls and neither allocates nor takes
    // locks, so it is async-signal-safe as `pre_exec` requires.
    unsafe {
        command.pre_exec(move || linux::set_parent_death_signal(parent));
    }
    Ok(command)
}

/// SIGKILL the process group led by `pid` (the child of [`interactive_command`] and whatever
/// it started that stayed in its group). A group that is already gone is not an error.
pub fn kill_process_group(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else {
        return;
    };
    match killpg(Pid::from_raw(raw), Signal::SIGKILL) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(errno) => tracing::warn!(%errno, "could not kill the agent's process group"),
    }
}
