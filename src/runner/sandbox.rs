//! The sandbox's vocabulary: the tiers a command can run under, the mechanisms behind them,
//! what the caller asks of each command ([`Access`], [`SandboxSettings`]) and what a helper
//! reports it achieved ([`Confinement`]), with the one function that turns an achievement into
//! a tier.
//!
//! It applies nothing: `helper` confines a child, `probe` asks the machine what it offers.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How strongly a command was confined, weakest first; each tier includes the ones before it.
///
/// - `none`: nothing ran (the program was not found) or no confinement could be verified.
/// - `process-group`: own process group, parent-death signal, cleared environment, stdin
///   `/dev/null`, efix non-dumpable.
/// - `process`: plus `no_new_privs` and the seccomp filter (no `ptrace`, `bpf`, `io_uring`,
///   `keyctl`, ...).
/// - `filesystem`: plus landlock: writes only to the repository, a private temporary directory
///   and the configured caches.
/// - `full`: plus namespaces: `.git` (and an artifacts directory inside the repository)
///   read-only, and, when the command runs without network, a network namespace of its own
///   with loopback up.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    #[default]
    None,
    ProcessGroup,
    Process,
    Filesystem,
    Full,
}

impl Tier {
    /// The name used in the evidence and the config (`process-group`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::ProcessGroup => "process-group",
            Tier::Process => "process",
            Tier::Filesystem => "filesystem",
            Tier::Full => "full",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A confinement mechanism that a machine may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// Landlock write restriction (tier `filesystem`).
    Landlock,
    /// The seccomp syscall filter (tier `process`).
    Seccomp,
    /// Mount and network namespaces (tier `full`).
    Namespaces,
}

impl Mechanism {
    /// Every mechanism, in tier order.
    pub const ALL: [Mechanism; 3] = [
        Mechanism::Seccomp,
        Mechanism::Landlock,
        Mechanism::Namespaces,
    ];

    /// The name used in `EFIX_SANDBOX_DISABLE` and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Landlock => "landlock",
            Mechanism::Seccomp => "seccomp",
            Mechanism::Namespaces => "namespaces",
        }
    }

    /// The tier that needs this mechanism.
    pub fn tier(self) -> Tier {
        match self {
            Mechanism::Seccomp => Tier::Process,
            Mechanism::Landlock => Tier::Filesystem,
            Mechanism::Namespaces => Tier::Full,
        }
    }
}

impl std::str::FromStr for Mechanism {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.as_str() == text)
            .ok_or_else(|| "one of landlock, seccomp, namespaces".to_owned())
    }
}

/// How the network was left for a command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// The command was meant to have the network (setup commands, `security.network: true`).
    Allowed,
    /// Off: the command ran in a network namespace of its own (loopback only).
    Namespace,
    /// Off by the fallback: seccomp refused IPv4, IPv6 and packet sockets (Unix sockets stay;
    /// loopback TCP is unusable too).
    Seccomp,
    /// Off was asked for but nothing enforced it: the command could reach the network.
    #[default]
    NotIsolated,
}

impl Network {
    /// The name used in the evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Allowed => "allowed",
            Network::Namespace => "namespace",
            Network::Seccomp => "seccomp",
            Network::NotIsolated => "not-isolated",
        }
    }
}

/// What one command may do besides what every command may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Whether the command may use the network.
    pub network: bool,
    /// Whether the command may write to the repository (its working directory).
    pub write_repo: bool,
}

impl Access {
    /// A reproduction, fix or proof command: the repository writable, the network as
    /// configured (`security.network`).
    pub fn command(network: bool) -> Access {
        Access {
            network,
            write_repo: true,
        }
    }

    /// A setup command (`commands.setup`): dependency fetches need the network.
    pub fn setup() -> Access {
        Access {
            network: true,
            write_repo: true,
        }
    }

    /// An engine's agent answering questions: it calls its model over the network and reads
    /// the repository, but never writes to it.
    pub fn agent() -> Access {
        Access {
            network: true,
            write_repo: false,
        }
    }

    /// An engine's agent that edits files itself (ACP edit mode): the network for its model
    /// and the repository writable; `.git` stays read-only as for every command.
    pub fn editing_agent() -> Access {
        Access {
            network: true,
            write_repo: true,
        }
    }
}

/// How every child is confined; resolved once from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The program started in helper mode for each child: efix itself (`/proc/self/exe`) in
    /// production, the built binary in tests and benches.
    pub helper: PathBuf,
    /// Where the private temporary directory of each command is created.
    pub temp_base: PathBuf,
    /// Directories (or files) commands may write besides the repository and their private
    /// temporary directory: the package and build caches (`sandbox.writable`).
    pub writable: Vec<PathBuf>,
    /// Paths inside the repository that commands must not change besides `.git`: the
    /// artifacts directory when it is inside.
    pub read_only: Vec<PathBuf>,
    /// The weakest tier a command may run under (`sandbox.require`); below it, nothing runs.
    pub require: Tier,
    /// Mechanisms not to use even where the machine has them (`EFIX_SANDBOX_DISABLE`), to see
    /// how a run behaves on a machine without them; the evidence says they were disabled.
    pub disabled: Vec<Mechanism>,
}

impl SandboxSettings {
    /// Settings for the efix binary itself: helper `/proc/self/exe`, no extra writable path,
    /// nothing required.
    pub fn new(temp_base: PathBuf) -> SandboxSettings {
        SandboxSettings {
            helper: PathBuf::from(SELF_EXE),
            temp_base,
            writable: Vec::new(),
            read_only: Vec::new(),
            require: Tier::None,
            disabled: Vec::new(),
        }
    }
}

/// The running executable, for re-executing efix in helper mode.
pub const SELF_EXE: &str = "/proc/self/exe";

/// What a helper achieved for one child, read back from the kernel where it can be.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Confinement {
    /// `no_new_privs` was set: setuid programs (`sudo`) and file capabilities gain nothing.
    pub no_new_privs: bool,
    /// The landlock ABI enforced on the child's writes; null when landlock enforced nothing.
    pub landlock_abi: Option<u32>,
    /// The seccomp filter was installed.
    pub seccomp: bool,
    /// How the network was left.
    pub network: Network,
    /// Loopback (127.0.0.1, ::1) was usable.
    pub loopback: bool,
    /// Paths made read-only by a mount namespace (`.git`, the artifacts directory).
    pub read_only: Vec<String>,
    /// Capabilities removed from a root child's bounding set (it cannot regain them).
    pub capabilities_dropped: Vec<String>,
    /// Why each mechanism that was not applied is missing.
    pub missing: Vec<String>,
}

impl Confinement {
    /// The tier these achievements add up to, for a child that led its own process group
    /// (`group`) and was asked for `access`, in a repository that has a `.git` or not.
    pub fn tier(&self, group: bool, access: Access, needs_read_only: bool) -> Tier {
        if !group {
            return Tier::None;
        }
        if !(self.no_new_privs && self.seccomp) {
            return Tier::ProcessGroup;
        }
        if self.landlock_abi.is_none() {
            return Tier::Process;
        }
        let network_held = access.network || self.network == Network::Namespace;
        let read_only_held = !needs_read_only || !self.read_only.is_empty();
        if network_held && read_only_held {
            Tier::Full
        } else {
            Tier::Filesystem
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn achieved() -> Confinement {
        Confinement {
            no_new_privs: true,
            landlock_abi: Some(7),
            seccomp: true,
            network: Network::Namespace,
            loopback: true,
            read_only: vec!["/r/.git".to_owned()],
            capabilities_dropped: Vec::new(),
            missing: Vec::new(),
        }
    }

    #[test]
    fn each_missing_mechanism_lowers_the_tier_to_the_one_below_it() {
        let off = Access::command(false);
        let full = achieved();
        let no_netns = Confinement {
            network: Network::Seccomp,
            loopback: false,
            ..achieved()
        };
        let no_mounts = Confinement {
            read_only: Vec::new(),
            ..achieved()
        };
        let no_landlock = Confinement {
            landlock_abi: None,
            ..achieved()
        };
        let no_seccomp = Confinement {
            seccomp: false,
            ..achieved()
        };
        let tiers = [
            full.tier(true, off, true),
            full.tier(false, off, true),
            no_netns.tier(true, off, true),
            no_netns.tier(true, Access::setup(), true),
            no_mounts.tier(true, off, true),
            no_mounts.tier(true, off, false),
            no_landlock.tier(true, off, true),
            no_seccomp.tier(true, off, true),
        ];
        assert_eq!(
            tiers,
            [
                Tier::Full,
                Tier::None,
                Tier::Filesystem,
                Tier::Full,
                Tier::Filesystem,
                Tier::Full,
                Tier::Process,
                Tier::ProcessGroup,
            ]
        );
    }

    #[test]
    fn tiers_are_ordered_weakest_first() {
        let mut tiers = [Tier::Full, Tier::None, Tier::Process, Tier::Filesystem];
        tiers.sort();
        assert_eq!(
            tiers.map(Tier::as_str),
            ["none", "process", "filesystem", "full"]
        );
    }
}
