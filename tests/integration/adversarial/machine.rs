//! What this machine's kernel gives, found out without efix: the landlock ABI from the
//! syscall, seccomp from `/proc`, namespaces by asking util-linux's `unshare` to create them.
//! The tests compare efix's behaviour and evidence against this.

use std::process::{Command, Stdio};

#[derive(Debug, Clone, Copy)]
pub struct Machine {
    pub landlock: bool,
    pub seccomp: bool,
    pub namespaces: bool,
    pub root: bool,
}

pub fn machine() -> Machine {
    // SAFETY: with a null attribute, size 0 and the VERSION flag (1) the call only returns
    // the ABI version; it creates nothing.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    // As root directly (efix does that with CAP_SYS_ADMIN), or through a user namespace as
    // efix does otherwise.
    let unshare = |args: &[&str]| {
        Command::new("unshare")
            .args(args)
            .args(["--net", "--mount", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    let namespaces = (root && unshare(&[])) || unshare(&["--user", "--map-root-user"]);
    Machine {
        landlock: abi > 0,
        seccomp: std::path::Path::new("/proc/sys/kernel/seccomp/actions_avail").exists(),
        namespaces,
        root,
    }
}
