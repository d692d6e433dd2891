//! Linux-specific calls: non-dumpable efix, the child's parent-death signal, process-exit
//! notification through a pidfd, reading a process's group from `/proc`, larger pipes.
//!
//! Elsewhere each function degrades to "not applied" (`false`, `None`, no-op), which the
//! sandbox report then records; nothing here decides policy.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

/// Make efix non-dumpable so children (same uid) cannot read `/proc/<efix>/environ` or
/// attach a debugger; returns whether efix is non-dumpable afterwards, read back from the
/// kernel.
#[cfg(target_os = "linux")]
pub fn harden_self() -> bool {
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!(%error, "could not make efix non-dumpable");
    }
    is_non_dumpable()
}

/// Make efix non-dumpable; not available on this platform, so always `false`.
#[cfg(not(target_os = "linux"))]
pub fn harden_self() -> bool {
    false
}

/// Whether efix is currently non-dumpable.
pub(crate) fn is_non_dumpable() -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(nix::sys::prctl::get_dumpable(), Ok(false))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether the child gets a parent-death signal on this platform.
pub(crate) const HAS_PARENT_DEATH_SIGNAL: bool = cfg!(target_os = "linux");

/// In the forked child, before exec: ask for SIGKILL when the parent dies, and die now if the
/// parent already died between fork and this call (the signal would never come).
///
/// Must stay async-signal-safe: no allocation, no locks, only raw syscalls. Errors are plain
/// OS codes, which `io::Error` stores without allocating.
#[cfg(target_os = "linux")]
pub(crate) fn set_parent_death_signal(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes integer arguments only and touches no memory of
    // ours; it is a plain syscall, safe between fork and exec.
    let set = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getppid has no arguments and cannot fail.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn set_parent_death_signal(_parent: libc::pid_t) -> io::Result<()> {
    Ok(())
}

/// A file descriptor that becomes readable when process `pid` exits, so exit can be waited
/// for in the same `poll` as the pipes; `None` on kernels before 5.3 or other platforms.
#[cfg(target_os = "linux")]
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; it reads
    // no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: `fd` was just returned by the kernel as a new descriptor that nothing else owns.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_open(_pid: u32) -> Option<OwnedFd> {
    None
}

/// The process group of `pid`, read from `/proc/<pid>/stat` (works for a zombie too).
#[cfg(target_os = "linux")]
pub(crate) fn process_group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces or ')', so fields
    // are counted after the last ')': state, ppid, pgrp.
    let after_name = stat.get(stat.rfind(')')? + 1..)?;
    after_name.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn process_group_of(_pid: u32) -> Option<u32> {
    None
}

/// Pipe capacity asked for (1 MiB): fewer wake-ups and larger reads for chatty children.
const PIPE_CAPACITY_BYTES: libc::c_int = 1024 * 1024;

/// Enlarge a pipe; a failure (e.g. above `/proc/sys/fs/pipe-max-size`) only costs speed.
#[cfg(target_os = "linux")]
pub(crate) fn enlarge_pipe(fd: BorrowedFd<'_>) {
    use nix::fcntl::{FcntlArg, fcntl};
    if let Err(error) = fcntl(fd, FcntlArg::F_SETPIPE_SZ(PIPE_CAPACITY_BYTES)) {
        tracing::debug!(%error, "could not enlarge a pipe");
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn enlarge_pipe(_fd: BorrowedFd<'_>) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn process_group_is_read_back_for_the_current_process() {
        let own = std::process::id();
        // SAFETY: getpgrp has no arguments and cannot fail.
        let expected = unsafe { libc::getpgrp() };
        assert_eq!(process_group_of(own), u32::try_from(expected).ok());
    }

    #[test]
    fn process_group_of_a_missing_process_is_none() {
        assert_eq!(process_group_of(u32::MAX), None);
    }
}
