//! Linux namespaces for a child: a private mount namespace in which `.git` (and an artifacts
//! directory inside the repository) are bind-mounted read-only, and a network namespace with
//! loopback up. As root (with `CAP_SYS_ADMIN`) the namespaces are entered directly; otherwise
//! through an unprivileged user namespace that maps only the caller's own uid and gid.
//!
//! Everything here is raw system calls on buffers prepared beforehand ([`Prepared`]), with no
//! allocation and no locks, so the same code runs in the single-threaded helper and in a child
//! forked from the multi-threaded efix to probe what the machine allows.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How namespaces are entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum NsKind {
    /// efix has `CAP_SYS_ADMIN`: mount and network namespaces directly; a failure is rolled
    /// back by re-entering the original namespaces.
    Root,
    /// An unprivileged user namespace mapping only the caller's uid and gid (irreversible,
    /// so the machine is probed first).
    User,
}

/// The step of [`enter`] that failed, for the messages in `probe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    Unshare = 1,
    Setgroups = 2,
    UidMap = 3,
    GidMap = 4,
    PrivateMounts = 5,
    Loopback = 6,
}

impl Step {
    pub(crate) fn from_code(code: u8) -> Option<Step> {
        [
            Step::Unshare,
            Step::Setgroups,
            Step::UidMap,
            Step::GidMap,
            Step::PrivateMounts,
            Step::Loopback,
        ]
        .into_iter()
        .find(|step| *step as u8 == code)
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::Unshare => "unshare",
            Step::Setgroups => "writing /proc/self/setgroups",
            Step::UidMap => "writing /proc/self/uid_map",
            Step::GidMap => "writing /proc/self/gid_map",
            Step::PrivateMounts => "making the mounts private",
            Step::Loopback => "bringing loopback up",
        }
    }
}

/// A failed step and its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NsError {
    pub step: Step,
    pub errno: i32,
}

/// Everything [`enter`] needs, built before the call so that it never allocates.
pub(crate) struct Prepared {
    kind: NsKind,
    network: bool,
    mounts: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    read_only: Vec<CString>,
}

impl Prepared {
    /// Prepare entering `kind` namespaces: a network namespace when `network` (the command
    /// runs without network), and a mount namespace with `read_only` bind-mounted read-only
    /// when that list is not empty.
    pub(crate) fn new(kind: NsKind, network: bool, read_only: &[&Path]) -> Prepared {
        // SAFETY: getuid and getgid have no arguments and cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Prepared {
            kind,
            network,
            mounts: !read_only.is_empty(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            read_only: read_only
                .iter()
                .filter_map(|path| CString::new(path.as_os_str().as_bytes()).ok())
                .collect(),
        }
    }

    /// For the probe: both namespaces, nothing to bind.
    pub(crate) fn probe(kind: NsKind) -> Prepared {
        Prepared {
            mounts: true,
            ..Prepared::new(kind, true, &[])
        }
    }
}

/// What [`enter`] achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Entered {
    /// The network namespace was entered and loopback is up.
    pub network: bool,
    /// How many of the read-only paths were bind-mounted read-only (the first ones, in order).
    pub read_only: usize,
    /// The first bind that failed, if any.
    pub bind_error: Option<i32>,
}

/// The step that just failed, with the current errno.
fn failed(step: Step) -> NsError {
    NsError {
        step,
        errno: errno(),
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Enter the namespaces. Async-signal-safe: raw system calls on prepared buffers only.
///
/// As root, a failure after `unshare` returns to the original namespaces before reporting it,
/// so the command runs exactly as without them. In a user namespace nothing can be undone,
/// which is why `probe` tries the same steps in a throw-away child first.
pub(crate) fn enter(prepared: &Prepared) -> Result<Entered, NsError> {
    let mut flags = 0;
    if prepared.network {
        flags |= libc::CLONE_NEWNET;
    }
    if prepared.mounts {
        flags |= libc::CLONE_NEWNS;
    }
    if flags == 0 {
        return Ok(Entered::default());
    }
    let originals = match prepared.kind {
        NsKind::Root => Some((open_ns(c"/proc/self/ns/net"), open_ns(c"/proc/self/ns/mnt"))),
        NsKind::User => {
            flags |= libc::CLONE_NEWUSER;
            None
        }
    };
    let result = enter_steps(prepared, flags);
    if let Some((net, mnt)) = originals {
        if result.is_err() {
            // Back to where efix is, so that the failure costs only the namespaces.
            restore_ns(net, libc::CLONE_NEWNET);
            restore_ns(mnt, libc::CLONE_NEWNS);
        }
        close(net);
        close(mnt);
    }
    result
}

fn enter_steps(prepared: &Prepared, flags: libc::c_int) -> Result<Entered, NsError> {
    // SAFETY: unshare takes flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(failed(Step::Unshare));
    }
    if prepared.kind == NsKind::User {
        write_file(c"/proc/self/setgroups", b"deny").map_err(|e| NsError {
            step: Step::Setgroups,
            errno: e,
        })?;
        write_file(c"/proc/self/uid_map", &prepared.uid_map).map_err(|e| NsError {
            step: Step::UidMap,
            errno: e,
        })?;
        write_file(c"/proc/self/gid_map", &prepared.gid_map).map_err(|e| NsError {
            step: Step::GidMap,
            errno: e,
        })?;
    }
    let mut entered = Entered::default();
    if prepared.mounts {
        // Private first, so that nothing mounted below ever propagates back to the host.
        // SAFETY: every pointer is either null or a NUL-terminated static string.
        let private = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if private != 0 {
            return Err(failed(Step::PrivateMounts));
        }
        for path in &prepared.read_only {
            match bind_read_only(path) {
                Ok(()) => entered.read_only += 1,
                Err(errno) => {
                    entered.bind_error = Some(errno);
                    break;
                }
            }
        }
    }
    if prepared.network {
        loopback_up().map_err(|errno| NsError {
            step: Step::Loopback,
            errno,
        })?;
        entered.network = true;
    }
    Ok(entered)
}

/// Bind `path` onto itself and remount the bind read-only, keeping the flags the kernel locks
/// in a user namespace (`nosuid`, `nodev`, `noexec`, the atime flags).
fn bind_read_only(path: &CString) -> Result<(), i32> {
    // SAFETY: `path` is NUL-terminated; the other pointers are null.
    let bound = unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    if bound != 0 {
        return Err(errno());
    }
    // SAFETY: statvfs is plain old data; zeroes are a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `stat` is a valid out-pointer.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return Err(errno());
    }
    let kept = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st, _)| stat.f_flag & *st != 0)
    .fold(0, |flags, (_, ms)| flags | ms);
    // SAFETY: as above.
    let remounted = unsafe {
        libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
            std::ptr::null(),
        )
    };
    if remounted != 0 {
        return Err(errno());
    }
    Ok(())
}

/// `ip link set lo up` through the interface ioctls.
fn loopback_up() -> Result<(), i32> {
    // SAFETY: socket takes integers and returns a new descriptor or -1.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: ifreq is plain old data; zeroes are a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: `request` is a valid ifreq naming an interface; SIOCGIFFLAGS fills its flags.
    let result = if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut request) } != 0 {
        Err(errno())
    } else {
        // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
        let flags = unsafe { request.ifr_ifru.ifru_flags };
        request.ifr_ifru.ifru_flags = flags | (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        // SAFETY: as above; SIOCSIFFLAGS reads the request.
        if unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &request) } != 0 {
            Err(errno())
        } else {
            Ok(())
        }
    };
    close(fd);
    result
}

fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> Result<(), i32> {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `bytes` is valid for its length.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let result = if written == bytes.len() as isize {
        Ok(())
    } else {
        Err(errno())
    };
    close(fd);
    result
}

fn open_ns(path: &std::ffi::CStr) -> libc::c_int {
    // SAFETY: `path` is NUL-terminated.
    unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) }
}

fn restore_ns(fd: libc::c_int, kind: libc::c_int) {
    if fd >= 0 {
        // SAFETY: setns takes a descriptor and a flag; a failure leaves things as they are.
        unsafe { libc::setns(fd, kind) };
    }
}

fn close(fd: libc::c_int) {
    if fd >= 0 {
        // SAFETY: the descriptor was opened here and is closed once.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_round_trip_through_their_codes() {
        for code in 0..8u8 {
            if let Some(step) = Step::from_code(code) {
                assert_eq!(step as u8, code);
            }
        }
        assert_eq!(Step::from_code(6), Some(Step::Loopback));
        assert_eq!(Step::from_code(0), None);
    }

    #[test]
    fn maps_name_only_the_callers_own_ids() {
        let prepared = Prepared::new(NsKind::User, true, &[Path::new("/r/.git")]);
        // SAFETY: getuid has no arguments and cannot fail.
        let uid = unsafe { libc::getuid() };
        assert_eq!(
            (
                String::from_utf8_lossy(&prepared.uid_map).into_owned(),
                prepared.mounts,
                prepared.read_only.len()
            ),
            (format!("{uid} {uid} 1\n"), true, 1)
        );
    }
}
