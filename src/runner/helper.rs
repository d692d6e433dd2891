//! The hidden helper mode: efix re-executes itself as `efix __efix-sandbox-helper PLAN` for
//! every child. The helper confines itself in a fixed order (`no_new_privs`; namespaces; a root
//! child's capabilities; landlock; seccomp), reads back what the kernel enforced, reports it to
//! the parent over the descriptor [`REPORT_FD`], and then executes the command, which inherits
//! all of it. Below the required tier it refuses instead of executing.
//!
//! The parent side (building the plan, reading the report) is `launch`; this module is what
//! runs in the child.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::namespaces::{self, NsKind, Prepared};
use super::sandbox::{Access, Confinement, Network, Tier};
use super::{landlock, seccomp};

/// The hidden first argument that selects helper mode.
pub const HELPER_ARG: &str = "__efix-sandbox-helper";

/// The descriptor the report is written to (the parent puts its pipe there before exec).
pub(crate) const REPORT_FD: RawFd = 3;

/// Exit status of a helper that could not read its plan or refused to execute; the parent
/// reads the reason from the report, never from this number.
const HELPER_FAILED: u8 = 125;

/// Exit status when the program does not exist (the shell's convention).
const EXIT_NOT_FOUND: u8 = 127;

/// Exit status when the program cannot be executed (the shell's convention).
const EXIT_NOT_EXECUTABLE: u8 = 126;

/// What the parent asks the helper to do. Paths are absolute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// The efix version that wrote the plan; a helper of another version refuses it.
    pub version: String,
    /// The command.
    pub argv: Vec<String>,
    /// efix's pid: the helper dies when its parent is gone.
    pub parent: i32,
    /// The repository (the command's working directory).
    pub repo: PathBuf,
    pub network: bool,
    pub write_repo: bool,
    /// Writable besides the repository: the private temporary directory, caches, devices.
    pub writable: Vec<PathBuf>,
    /// To bind read-only in a mount namespace: `.git` and an artifacts directory inside the
    /// repository, when they exist.
    pub read_only: Vec<PathBuf>,
    /// How to enter namespaces; `None` when the machine gives none (the reason is in
    /// `missing`).
    pub namespaces: Option<NsKind>,
    pub landlock: bool,
    pub seccomp: bool,
    /// Why mechanisms the parent already knows to be missing are missing.
    pub missing: Vec<String>,
    /// Refuse to execute below this tier.
    pub require: Tier,
    /// Whether the repository has a `.git` that the `full` tier must make read-only.
    pub needs_read_only: bool,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Message {
    /// Confined as described; executing the command next. `namespaces` names the namespaces
    /// the helper created, by which the sweep recognises the command's processes.
    Confined {
        confinement: Confinement,
        tier: Tier,
        namespaces: Vec<String>,
    },
    /// The tier achieved is below the required one; nothing was executed.
    Refused {
        confinement: Confinement,
        tier: Tier,
    },
    /// Executing the command failed with this errno.
    ExecFailed { errno: i32 },
    /// The helper could not act on its plan.
    Failed { reason: String },
}

/// If `args` select helper mode, act as the helper: on success this never returns (the
/// command replaces the process); otherwise it returns the exit status. `None` means efix
/// runs normally.
pub fn entry(args: &[OsString]) -> Option<u8> {
    if args.get(1).is_none_or(|arg| arg != HELPER_ARG) {
        return None;
    }
    // SAFETY: the parent opened this descriptor for us; nothing else in the helper owns it.
    let mut report = unsafe { std::fs::File::from_raw_fd(REPORT_FD) };
    let plan = args
        .get(2)
        .and_then(|text| text.to_str())
        .ok_or_else(|| "the sandbox helper needs its plan as the second argument".to_owned())
        .and_then(|text| {
            serde_json::from_str::<Plan>(text)
                .map_err(|error| format!("the sandbox helper could not read its plan: {error}"))
        })
        .and_then(|plan| {
            if plan.version == env!("CARGO_PKG_VERSION") {
                Ok(plan)
            } else {
                Err(format!(
                    "the sandbox helper is efix {} but the plan is from efix {}; use one build",
                    env!("CARGO_PKG_VERSION"),
                    plan.version
                ))
            }
        });
    let plan = match plan {
        Ok(plan) => plan,
        Err(reason) => {
            send(&mut report, &Message::Failed { reason });
            return Some(HELPER_FAILED);
        }
    };
    Some(confine_and_exec(&plan, &mut report))
}

fn send(report: &mut std::fs::File, message: &Message) {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    // The parent treats a missing report as a failure, so a write error needs no handling.
    let _ = report.write_all(&line);
}

fn confine_and_exec(plan: &Plan, report: &mut std::fs::File) -> u8 {
    if let Err(reason) = keep_parent_death_signal(plan.parent) {
        send(report, &Message::Failed { reason });
        return HELPER_FAILED;
    }
    let confinement = confine(plan);
    // SAFETY: getpgrp and getpid have no arguments and cannot fail.
    let group = unsafe { libc::getpgrp() == libc::getpid() };
    let access = Access {
        network: plan.network,
        write_repo: plan.write_repo,
    };
    let tier = confinement.tier(group, access, plan.needs_read_only);
    if tier < plan.require {
        send(report, &Message::Refused { confinement, tier });
        return HELPER_FAILED;
    }
    let namespaces = if plan.namespaces.is_some() && !confinement.read_only.is_empty()
        || confinement.network == Network::Namespace
    {
        super::sweep::namespace_ids("self")
    } else {
        Vec::new()
    };
    send(
        report,
        &Message::Confined {
            confinement,
            tier,
            namespaces,
        },
    );
    set_cloexec(REPORT_FD);
    let errno = exec(&plan.argv);
    send(report, &Message::ExecFailed { errno });
    match errno {
        libc::ENOENT => EXIT_NOT_FOUND,
        _ => EXIT_NOT_EXECUTABLE,
    }
}

/// Apply every mechanism the plan asks for, in the only order that works: namespaces need
/// the capabilities that are dropped next; landlock and seccomp need `no_new_privs`.
fn confine(plan: &Plan) -> Confinement {
    let mut confinement = Confinement {
        missing: plan.missing.clone(),
        network: if plan.network {
            Network::Allowed
        } else {
            Network::NotIsolated
        },
        loopback: true,
        ..Confinement::default()
    };
    confinement.no_new_privs = set_no_new_privs();
    let mut network_isolated = false;
    if let Some(kind) = plan.namespaces {
        let read_only: Vec<&Path> = plan.read_only.iter().map(PathBuf::as_path).collect();
        let prepared = Prepared::new(kind, !plan.network, &read_only);
        match namespaces::enter(&prepared) {
            Ok(entered) => {
                network_isolated = entered.network;
                confinement.read_only = plan.read_only[..entered.read_only]
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect();
                if let Some(errno) = entered.bind_error {
                    let failed = &plan.read_only[entered.read_only];
                    confinement.missing.push(format!(
                        "namespaces: could not make {} read-only: {}",
                        failed.display(),
                        std::io::Error::from_raw_os_error(errno)
                    ));
                }
            }
            Err(error) => confinement.missing.push(format!(
                "namespaces: {} failed: {}",
                error.step.describe(),
                std::io::Error::from_raw_os_error(error.errno)
            )),
        }
    }
    if network_isolated {
        confinement.network = Network::Namespace;
    }
    if kind_is_root(plan.namespaces) {
        confinement.capabilities_dropped = super::linux::drop_root_capabilities();
    }
    if plan.landlock {
        let mut writable = plan.writable.clone();
        if plan.write_repo {
            writable.push(plan.repo.clone());
        }
        match landlock::restrict(&writable) {
            Ok(abi) => confinement.landlock_abi = Some(abi),
            Err(reason) => confinement.missing.push(reason),
        }
    }
    if plan.seccomp {
        let deny_inet = !plan.network && !network_isolated;
        match seccomp::install(deny_inet) {
            Ok(()) => {
                confinement.seccomp = true;
                if deny_inet {
                    confinement.network = Network::Seccomp;
                    confinement.loopback = false;
                }
            }
            Err(reason) => confinement.missing.push(reason),
        }
    }
    confinement
}

/// A root child loses its dangerous capabilities unless it runs in a user namespace, where
/// it has none outside anyway.
fn kind_is_root(kind: Option<NsKind>) -> bool {
    kind != Some(NsKind::User)
}

fn set_no_new_privs() -> bool {
    // SAFETY: prctl with integer arguments only.
    let set = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    // SAFETY: as above; returns 1 when set.
    set == 0 && unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } == 1
}

/// The parent-death signal set before the helper was executed survives exec, but the check
/// that the parent is still there is repeated: efix may have died in between.
fn keep_parent_death_signal(parent: i32) -> Result<(), String> {
    super::linux::set_parent_death_signal(parent)
        .map_err(|error| format!("the sandbox helper lost its parent: {error}"))
}

fn set_cloexec(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own, integer arguments only.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

/// Execute `argv` searching `PATH`; returns only on failure, with the errno.
///
/// The command starts with default signal handling, as `std::process::Command` gives a child:
/// Rust's runtime ignores SIGPIPE in the helper, and an ignored signal stays ignored across
/// exec (a `yes | head` pipeline would then print "Broken pipe" instead of ending quietly).
fn exec(argv: &[String]) -> i32 {
    // SAFETY: resetting one signal's disposition and the (empty) mask of this single thread;
    // plain system calls with valid arguments.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
    let args: Vec<std::ffi::CString> = argv
        .iter()
        .filter_map(|arg| std::ffi::CString::new(arg.as_bytes()).ok())
        .collect();
    if args.len() != argv.len() || args.is_empty() {
        return libc::EINVAL;
    }
    match nix::unistd::execvp(&args[0], &args) {
        Err(errno) => errno as i32,
        Ok(never) => match never {},
    }
}
