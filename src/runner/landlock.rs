//! Landlock write confinement of the helper (and so of the command it becomes): every write
//! right the newest ABI knows is handled, and granted only beneath the writable paths; the
//! signal and abstract-socket scopes keep the command from signalling efix or reaching its
//! sockets. Reads and execution stay unrestricted.
//!
//! It decides nothing about which paths are writable (the helper's plan says) and reports the
//! ABI the kernel actually enforced, never the one asked for.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

/// The newest ABI whose rights efix has vetted; the kernel may enforce a subset of it.
const REQUESTED_ABI: ABI = ABI::V6;

/// Every right that changes the file system, except creating device nodes, which no command
/// needs and which would open raw disks to a root child.
fn write_rights() -> BitFlags<AccessFs> {
    AccessFs::from_write(ABI::V3) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// Restrict writes of this thread (and the program it executes) to beneath `writable`;
/// returns the ABI the kernel enforced, or why landlock enforced nothing.
pub(crate) fn restrict(writable: &[PathBuf]) -> Result<u32, String> {
    // Device-node creation is handled (so denied everywhere) but never granted.
    let handled = AccessFs::from_write(ABI::V3);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)
        .and_then(|r| r.scope(Scope::from_all(REQUESTED_ABI)))
        .and_then(Ruleset::create)
        .map_err(|error| format!("landlock: could not build the ruleset: {error}"))?;
    for path in writable {
        let Ok(fd) = PathFd::new(path) else {
            tracing::debug!(path = %path.display(), "writable path missing; not granted");
            continue;
        };
        let is_dir = std::fs::metadata(path).is_ok_and(|meta| meta.is_dir());
        let access = if is_dir {
            write_rights()
        } else {
            write_rights() & AccessFs::from_file(ABI::V3)
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|error| {
                format!(
                    "landlock: could not allow writes to {}: {error}",
                    path.display()
                )
            })?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(|error| format!("landlock: could not restrict the command: {error}"))?;
    match (status.ruleset, status.landlock) {
        (
            RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced,
            LandlockStatus::Available { effective_abi, .. },
        ) => Ok(effective_abi as u32),
        (_, LandlockStatus::NotImplemented) => Err(NOT_IMPLEMENTED.to_owned()),
        (_, LandlockStatus::NotEnabled) => Err(NOT_ENABLED.to_owned()),
        (_, _) => Err("landlock: the kernel enforced none of the rules".to_owned()),
    }
}

/// Why landlock is missing on a kernel built without it.
pub(crate) const NOT_IMPLEMENTED: &str =
    "landlock: the kernel has no landlock (built without CONFIG_SECURITY_LANDLOCK)";

/// Why landlock is missing on a kernel that has it switched off.
pub(crate) const NOT_ENABLED: &str = "landlock: the kernel has landlock but did not enable it \
     at boot (add `landlock` to the `lsm=` kernel parameter)";

/// The kernel's landlock ABI, or why there is none, without restricting anything.
pub(crate) fn kernel_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, the call only returns
    // the ABI version (or an error); it creates nothing and reads no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi > 0 {
        return Ok(u32::try_from(abi).unwrap_or(u32::MAX));
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => Err(NOT_ENABLED.to_owned()),
        _ => Err(NOT_IMPLEMENTED.to_owned()),
    }
}
