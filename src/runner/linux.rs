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

/// In the forked child, before exec: make `from` available as descriptor `to` and keep it
/// open across exec. Async-signal-safe: raw `dup2` and `fcntl` only.
pub(crate) fn move_fd(from: libc::c_int, to: libc::c_int) -> io::Result<()> {
    if from == to {
        // dup2 would do nothing and leave close-on-exec set.
        // SAFETY: fcntl on a descriptor of this process, integer arguments only.
        if unsafe { libc::fcntl(to, libc::F_SETFD, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok(());
    }
    // SAFETY: dup2 on descriptors of this process; the copy has close-on-exec clear.
    if unsafe { libc::dup2(from, to) } < 0 {
        return Err(io::Error::last_os_error());
    }
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

/// Send SIGKILL through a pidfd (`pidfd_send_signal`), which reaches exactly the process the
/// pidfd was opened for even if its pid has been reused since; returns whether it was sent.
#[cfg(target_os = "linux")]
pub(crate) fn pidfd_kill(pidfd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: pidfd_send_signal takes a descriptor, a signal number, a null siginfo and
    // flags 0; it reads no memory of ours.
    let sent = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    sent == 0
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_kill(_pidfd: &OwnedFd) -> bool {
    false
}

/// Whether the process behind a pidfd has exited (the pidfd polls readable then).
#[cfg(target_os = "linux")]
pub(crate) fn pidfd_exited(pidfd: &OwnedFd) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut fds = [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_exited(_pidfd: &OwnedFd) -> bool {
    true
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

/// Capabilities a root child must not keep: they would let it leave its namespaces
/// (`CAP_SYS_ADMIN`: `setns`, remounting `.git` writable), read efix's memory or stop it
/// (`CAP_SYS_PTRACE`), reach files by handle past the mount namespace (`CAP_DAC_READ_SEARCH`),
/// or change the machine (modules, raw I/O, reboot, clock, network configuration, MAC policy,
/// BPF, perf, the kernel log).
const DROPPED_CAPABILITIES: &[(libc::c_int, &str)] = &[
    (2, "CAP_DAC_READ_SEARCH"),
    (12, "CAP_NET_ADMIN"),
    (16, "CAP_SYS_MODULE"),
    (17, "CAP_SYS_RAWIO"),
    (19, "CAP_SYS_PTRACE"),
    (21, "CAP_SYS_ADMIN"),
    (22, "CAP_SYS_BOOT"),
    (25, "CAP_SYS_TIME"),
    (32, "CAP_MAC_OVERRIDE"),
    (33, "CAP_MAC_ADMIN"),
    (34, "CAP_SYSLOG"),
    (38, "CAP_PERFMON"),
    (39, "CAP_BPF"),
];

/// In the helper of a root child: remove [`DROPPED_CAPABILITIES`] from the bounding set, so
/// the program it executes starts without them and can never regain them; returns the names
/// removed (read back), empty for a child that is not root.
#[cfg(target_os = "linux")]
pub(crate) fn drop_root_capabilities() -> Vec<String> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Vec::new();
    }
    let mut dropped = Vec::new();
    for &(capability, name) in DROPPED_CAPABILITIES {
        let read = |cap: libc::c_int| {
            // SAFETY: prctl with integer arguments only; 1 means in the bounding set.
            unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap as libc::c_ulong, 0, 0, 0) }
        };
        if read(capability) != 1 {
            continue;
        }
        // SAFETY: as above; needs CAP_SETPCAP, which root has.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability as libc::c_ulong, 0, 0, 0) };
        if read(capability) == 0 {
            dropped.push(name.to_owned());
        }
    }
    // SAFETY: as above; ambient capabilities would survive exec, so none are kept.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    dropped
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn drop_root_capabilities() -> Vec<String> {
    Vec::new()
}

/// Whether efix has `CAP_SYS_ADMIN` in its effective set (read from `/proc/self/status`), so
/// it can enter mount and network namespaces without a user namespace.
#[cfg(target_os = "linux")]
pub(crate) fn has_sys_admin() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
            u64::from_str_radix(line.trim_start_matches("CapEff:").trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
}

/// Make efix a child subreaper: a process its children orphan (a double fork, a `setsid`
/// daemon) is re-parented to efix instead of init, so the sweep after each command finds it.
/// Returns whether the kernel accepted.
#[cfg(target_os = "linux")]
pub(crate) fn become_subreaper() -> bool {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn become_subreaper() -> bool {
    false
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
