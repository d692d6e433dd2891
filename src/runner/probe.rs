//! What this machine gives: the landlock ABI, whether a seccomp filter can be installed, and
//! how (whether) namespaces can be entered. Asked once per efix process; seccomp and the
//! namespaces are tried for real in a throw-away child, because a user namespace that turns
//! out half usable (AppArmor on Ubuntu 24.04 lets `unshare` succeed and then refuses what
//! follows) cannot be left again.
//!
//! It records the machine's truth; mechanisms a user disabled are taken out when a command's
//! plan is made, so the messages can say which is which.

use std::sync::OnceLock;

use super::namespaces::NsKind;
use super::sandbox::{Mechanism, SandboxSettings, Tier};

/// The mechanisms and, for each one missing, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Machine {
    pub landlock: Result<u32, String>,
    pub seccomp: Result<(), String>,
    pub namespaces: Result<NsKind, String>,
}

impl Machine {
    /// Why `mechanism` cannot be used, if it cannot (`disabled` first).
    pub(crate) fn missing(&self, mechanism: Mechanism, disabled: &[Mechanism]) -> Option<String> {
        if disabled.contains(&mechanism) {
            return Some(format!(
                "{}: disabled by EFIX_SANDBOX_DISABLE",
                mechanism.as_str()
            ));
        }
        match mechanism {
            Mechanism::Landlock => self.landlock.as_ref().err().cloned(),
            Mechanism::Seccomp => self.seccomp.as_ref().err().cloned(),
            Mechanism::Namespaces => self.namespaces.as_ref().err().cloned(),
        }
    }
}

/// A required tier the machine cannot give: which mechanisms are missing and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "sandbox.require is `{required}` but this machine gives at most `{available}`: {}",
    reasons.join("; ")
)]
pub struct TierUnavailable {
    pub required: Tier,
    pub available: Tier,
    /// One reason per missing mechanism, each starting with the mechanism's name.
    pub reasons: Vec<String>,
}

/// The strongest tier the machine gives with `settings`, or why `settings.require` cannot be
/// met. Call it before running anything, so a run that cannot be confined as required refuses
/// at once (exit 4).
pub fn check_required(settings: &SandboxSettings) -> Result<Tier, TierUnavailable> {
    if settings.require >= Tier::Full {
        return check(verified_machine(), settings);
    }
    check(machine(), settings)
}

fn check(machine: &Machine, settings: &SandboxSettings) -> Result<Tier, TierUnavailable> {
    let mut available = Tier::Full;
    let mut reasons = Vec::new();
    for mechanism in Mechanism::ALL {
        if let Some(reason) = machine.missing(mechanism, &settings.disabled) {
            let below = match mechanism.tier() {
                Tier::Process => Tier::ProcessGroup,
                Tier::Filesystem => Tier::Process,
                _ => Tier::Filesystem,
            };
            available = available.min(below);
            if mechanism.tier() <= settings.require {
                reasons.push(reason);
            }
        }
    }
    if available < settings.require {
        return Err(TierUnavailable {
            required: settings.require,
            available,
            reasons,
        });
    }
    Ok(available)
}

/// The machine, probed on first use, cheaply: with `CAP_SYS_ADMIN` the namespaces are
/// assumed to work, since the helper undoes a failed attempt and reports it; only the
/// irreversible user-namespace route is tried first in a throw-away child.
pub(crate) fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(|| probe(false))
}

/// The machine with every mechanism tried for real, for a required tier that must be known
/// before anything runs.
fn verified_machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(|| probe(true))
}

#[cfg(not(target_os = "linux"))]
fn probe(_verify: bool) -> Machine {
    let absent = || Err("not available on this operating system (Linux only)".to_owned());
    Machine {
        landlock: absent().map(|()| 0),
        seccomp: absent(),
        namespaces: absent().map(|()| NsKind::User),
    }
}

#[cfg(target_os = "linux")]
fn probe(verify: bool) -> Machine {
    let landlock = super::landlock::kernel_abi();
    let machine = if !verify && super::linux::has_sys_admin() {
        Machine {
            landlock,
            seccomp: linux::seccomp_available(),
            namespaces: Ok(NsKind::Root),
        }
    } else {
        let tried = linux::try_in_child();
        Machine {
            landlock,
            seccomp: tried.seccomp,
            namespaces: tried.namespaces,
        }
    };
    tracing::debug!(?machine, verify, "probed the sandbox mechanisms");
    machine
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::super::namespaces::{self, NsKind, Prepared, Step};
    use super::super::{linux as sys, seccomp};

    pub(super) struct Tried {
        pub seccomp: Result<(), String>,
        pub namespaces: Result<NsKind, String>,
    }

    /// Slots of the result the probe child writes: which namespace kind worked (0 none,
    /// 1 root, 2 user), the root attempt's failed step and errno, the user attempt's, and the
    /// seccomp errno (0 when installed).
    const SLOTS: usize = 6;

    /// Whether seccomp filters can be installed, from what the kernel publishes: the filter
    /// actions exist only with `CONFIG_SECCOMP_FILTER`, and a filter must exist for this CPU.
    pub(super) fn seccomp_available() -> Result<(), String> {
        seccomp::program(false)?;
        if std::path::Path::new("/proc/sys/kernel/seccomp/actions_avail").exists() {
            Ok(())
        } else {
            Err(seccomp_reason(libc::ENOSYS))
        }
    }

    pub(super) fn try_in_child() -> Tried {
        let admin = sys::has_sys_admin();
        let root = Prepared::probe(NsKind::Root);
        let user = Prepared::probe(NsKind::User);
        let filter = seccomp::program(false);
        let result = fork_and_read(|| {
            let mut slots = [0i32; SLOTS];
            // efix is non-dumpable, which makes the kernel hand this child's /proc/self files
            // to root, so the uid and gid maps could not be written; the helper, a fresh
            // exec, is dumpable anyway.
            // SAFETY: prctl with integer arguments only.
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
            if admin {
                match namespaces::enter(&root) {
                    Ok(_) => slots[0] = 1,
                    Err(error) => (slots[1], slots[2]) = (error.step as i32, error.errno),
                }
            }
            if slots[0] == 0 {
                match namespaces::enter(&user) {
                    Ok(_) => slots[0] = 2,
                    Err(error) => (slots[3], slots[4]) = (error.step as i32, error.errno),
                }
            }
            slots[5] = match &filter {
                Ok(program) => install_raw(program),
                Err(_) => libc::ENOSYS,
            };
            slots
        });
        let Some(slots) = result else {
            let reason = "the probe process could not be started".to_owned();
            return Tried {
                seccomp: Err(format!("seccomp: {reason}")),
                namespaces: Err(format!("namespaces: {reason}")),
            };
        };
        let seccomp = match (&filter, slots[5]) {
            (Err(reason), _) => Err(reason.clone()),
            (Ok(_), 0) => Ok(()),
            (Ok(_), errno) => Err(seccomp_reason(errno)),
        };
        let namespaces = match slots[0] {
            1 => Ok(NsKind::Root),
            2 => Ok(NsKind::User),
            _ => Err(namespaces_reason(admin, &slots)),
        };
        Tried {
            seccomp,
            namespaces,
        }
    }

    /// `no_new_privs`, then the filter, with raw calls (this runs in the forked child).
    fn install_raw(program: &seccompiler::BpfProgram) -> i32 {
        let prog = libc::sock_fprog {
            len: program.len() as libc::c_ushort,
            filter: program.as_ptr().cast_mut().cast(),
        };
        // SAFETY: prctl with integer arguments; then seccomp reads `prog`, which points at the
        // program for the duration of the call.
        let failed = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0,
                    &prog as *const libc::sock_fprog,
                ) != 0
        };
        if failed {
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO)
        } else {
            0
        }
    }

    /// Run `work` in a forked child and read back what it returns. The child only makes raw
    /// system calls on memory prepared before the fork and ends with `_exit`.
    fn fork_and_read(work: impl FnOnce() -> [i32; SLOTS]) -> Option<[i32; SLOTS]> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
        let _spawning = super::super::sweep::spawn_lock();
        // SAFETY: the child runs `work`, which makes raw system calls on buffers built before
        // the fork (no allocation, no locks), writes the result with one `write` and leaves
        // with `_exit`, all async-signal-safe as a child of a multi-threaded process requires.
        match unsafe { nix::unistd::fork() }.ok()? {
            nix::unistd::ForkResult::Child => {
                let slots = work();
                // SAFETY: `slots` is valid for its size; `write` is ours.
                unsafe {
                    libc::write(
                        write.as_raw_fd(),
                        slots.as_ptr().cast(),
                        std::mem::size_of_val(&slots),
                    );
                    libc::_exit(0)
                }
            }
            nix::unistd::ForkResult::Parent { child } => {
                drop(write);
                let mut bytes = [0u8; SLOTS * 4];
                // SAFETY: `read` is a descriptor we own; the File takes it over.
                let mut file = std::fs::File::from(unsafe {
                    OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(read))
                });
                let complete = file.read_exact(&mut bytes).is_ok();
                let _ = nix::sys::wait::waitpid(child, None);
                complete.then(|| {
                    let mut slots = [0i32; SLOTS];
                    for (slot, chunk) in slots.iter_mut().zip(bytes.chunks_exact(4)) {
                        *slot = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                    }
                    slots
                })
            }
        }
    }

    fn seccomp_reason(errno: i32) -> String {
        match errno {
            libc::EINVAL | libc::ENOSYS => "seccomp: the kernel has no seccomp filters (built \
                without CONFIG_SECCOMP_FILTER)"
                .to_owned(),
            _ => format!(
                "seccomp: the kernel refused a filter: {}",
                std::io::Error::from_raw_os_error(errno)
            ),
        }
    }

    fn sysctl(path: &str) -> Option<String> {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
    }

    /// Why neither kind of namespace could be entered, naming the setting that forbids it
    /// where one does.
    fn namespaces_reason(admin: bool, slots: &[i32; SLOTS]) -> String {
        let attempt = |step: i32, errno: i32| {
            let step = u8::try_from(step)
                .ok()
                .and_then(Step::from_code)
                .map_or("the attempt", Step::describe);
            format!(
                "{step} failed: {}",
                std::io::Error::from_raw_os_error(errno)
            )
        };
        let mut parts = Vec::new();
        if admin {
            parts.push(format!(
                "as root, {} (a container's seccomp profile or an LSM blocks it)",
                attempt(slots[1], slots[2])
            ));
        }
        let user = attempt(slots[3], slots[4]);
        let why = if sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref()
            == Some("1")
        {
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns=1, the Ubuntu 24.04 default)"
        } else if sysctl("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
            "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0)"
        } else if sysctl("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
            "user namespaces are off (user.max_user_namespaces=0)"
        } else {
            "the kernel refused an unprivileged user namespace"
        };
        parts.push(format!("in a user namespace, {user}: {why}"));
        format!("namespaces: {}", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(require: Tier, disabled: Vec<Mechanism>) -> SandboxSettings {
        SandboxSettings {
            require,
            disabled,
            ..SandboxSettings::new(std::env::temp_dir())
        }
    }

    fn everything() -> Machine {
        Machine {
            landlock: Ok(7),
            seccomp: Ok(()),
            namespaces: Ok(NsKind::User),
        }
    }

    #[test]
    fn a_machine_with_every_mechanism_gives_full() {
        assert_eq!(
            check(&everything(), &settings(Tier::Full, Vec::new())),
            Ok(Tier::Full)
        );
    }

    #[test]
    fn a_missing_mechanism_refuses_the_tier_that_needs_it_and_names_why() {
        let machine = Machine {
            namespaces: Err("namespaces: AppArmor restricts them".to_owned()),
            ..everything()
        };
        let required = [Tier::Filesystem, Tier::Full]
            .map(|require| check(&machine, &settings(require, vec![Mechanism::Seccomp])));
        assert_eq!(
            required,
            [
                Err(TierUnavailable {
                    required: Tier::Filesystem,
                    available: Tier::ProcessGroup,
                    reasons: vec!["seccomp: disabled by EFIX_SANDBOX_DISABLE".to_owned()],
                }),
                Err(TierUnavailable {
                    required: Tier::Full,
                    available: Tier::ProcessGroup,
                    reasons: vec![
                        "seccomp: disabled by EFIX_SANDBOX_DISABLE".to_owned(),
                        "namespaces: AppArmor restricts them".to_owned()
                    ],
                }),
            ]
        );
    }

    #[test]
    fn requiring_nothing_never_refuses() {
        let nothing = Machine {
            landlock: Err("l".to_owned()),
            seccomp: Err("s".to_owned()),
            namespaces: Err("n".to_owned()),
        };
        assert_eq!(
            check(&nothing, &settings(Tier::None, Vec::new())),
            Ok(Tier::ProcessGroup)
        );
    }
}
