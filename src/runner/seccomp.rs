//! The seccomp filter of the helper (and so of the command it becomes): a deny list of the
//! system calls a test suite never needs and an attacker wants (`ptrace` and
//! `process_vm_readv/writev` to read efix's memory, `io_uring` to bypass the filter, `bpf`,
//! `perf_event_open`, `kexec_*`, the kernel keyring), answered with `EPERM`; and, as the network
//! fallback where no network namespace is available, IPv4, IPv6 and packet sockets.
//!
//! Everything else is allowed: a deny list keeps every build tool working, and landlock and the
//! namespaces do the confining.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// System calls refused to every command.
const DENIED: &[(&str, libc::c_long)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
];

/// Socket families refused by the network fallback; `AF_UNIX` (and netlink) stay.
const DENIED_FAMILIES: &[libc::c_int] = &[libc::AF_INET, libc::AF_INET6, libc::AF_PACKET];

#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
const ARCH: Option<TargetArch> = Some(TargetArch::riscv64);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const ARCH: Option<TargetArch> = None;

/// Build the filter; `deny_inet` adds the network fallback.
pub(crate) fn program(deny_inet: bool) -> Result<BpfProgram, String> {
    let arch = ARCH.ok_or("seccomp: efix has no filter for this CPU architecture")?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .map(|(_, number)| (*number, Vec::new()))
        .collect();
    if deny_inet {
        let by_family = DENIED_FAMILIES
            .iter()
            .map(|family| {
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *family as u64)
                    .and_then(|condition| SeccompRule::new(vec![condition]))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("seccomp: could not build the socket rule: {error}"))?;
        rules.insert(libc::SYS_socket, by_family);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|error| format!("seccomp: could not build the filter: {error}"))?;
    let mut program: BpfProgram = filter
        .try_into()
        .map_err(|error| format!("seccomp: could not compile the filter: {error}"))?;
    guard_x32(&mut program, arch);
    Ok(program)
}

/// Install the filter on this thread (and the program it executes). Needs `no_new_privs`.
pub(crate) fn install(deny_inet: bool) -> Result<(), String> {
    let program = program(deny_inet)?;
    seccompiler::apply_filter(&program)
        .map_err(|error| format!("seccomp: the kernel refused the filter: {error}"))
}

/// Bit that marks x32 system calls on x86_64: they pass the architecture check, so without
/// this guard `0x40000000 | ptrace-number` would slip past a deny list keyed on numbers.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Refuse every x32 system call, right after the architecture check that the compiled program
/// starts with (three instructions). Jumps are relative, so the rest is unaffected.
fn guard_x32(program: &mut BpfProgram, arch: TargetArch) {
    if !matches!(arch, TargetArch::x86_64) || program.len() < 3 {
        return;
    }
    // Opcodes from linux/bpf_common.h: BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JGE|BPF_K,
    // BPF_RET|BPF_K.
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    let guard = [
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0, // seccomp_data.nr
        },
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ];
    program.splice(3..3, guard);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_fallback_only_adds_rules() {
        let (plain, fallback) = match (program(false), program(true)) {
            (Ok(plain), Ok(fallback)) => (plain, fallback),
            (plain, fallback) => panic!("filters compile: {plain:?} {fallback:?}"),
        };
        assert!(fallback.len() > plain.len());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_calls_are_refused_right_after_the_architecture_check() {
        let program = program(false).unwrap_or_default();
        let refuse = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        assert_eq!(
            program[3..6]
                .iter()
                .map(|i| (i.code, i.k))
                .collect::<Vec<_>>(),
            [(0x20, 0), (0x35, X32_SYSCALL_BIT), (0x06, refuse)]
        );
    }
}
