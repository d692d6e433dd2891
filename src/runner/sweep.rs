//! Escaped processes: after every command, find what it left running (a `setsid` daemon, a
//! double fork, a fork bomb, a server a test forgot), record each one's argv, kill it and reap
//! it.
//!
//! efix is a child subreaper, so an orphan is re-parented to efix rather than to init and
//! stays among efix's descendants. A process belongs to a command when it carries the
//! command's marker in its environment ([`MARKER_VAR`]), or when it lives in a namespace the
//! command's helper created; in a process that starts children only through the runner (the
//! efix binary, see [`super::harden_self`]) any other orphan that appeared during the command
//! is an escapee too, since nothing else could have left it. Commands running at the same time
//! (tests do) are told apart by the registry of running commands: their processes are never
//! touched.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::Pid;

/// The environment variable that marks every process of a command's tree: `TMPDIR`, whose
/// value is the command's private temporary directory, unique to the command. A variable of
/// its own (it was `EFIX_SANDBOX_MARKER`) told the code under test that efix was running it;
/// every program has a `TMPDIR`, and its value looks like any `mktemp` directory.
pub const MARKER_VAR: &str = "TMPDIR";

/// Most argv lines kept per command; the count is always exact.
pub(crate) const LEAKED_LISTED_MAX: usize = 20;

/// Scans per sweep at most: each kills what the previous one found, so a fork bomb needs a few
/// until nothing new appears.
const MAX_PASSES: usize = 50;

/// How long killed processes are waited for so they can be reaped (1 s).
const REAP_TIMEOUT: Duration = Duration::from_secs(1);

/// Bytes of a process's environment read when looking for the marker (256 KiB).
const ENVIRON_MAX_BYTES: usize = 256 * 1024;

/// A command that is running now.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pub pid: u32,
    pub marker: String,
}

static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());

/// Set by `harden_self`: every child of this process comes from the runner.
static ONLY_RUNNER_CHILDREN: AtomicBool = AtomicBool::new(false);

/// Declare that this process starts children only through the runner.
pub(crate) fn only_runner_children() {
    ONLY_RUNNER_CHILDREN.store(true, Ordering::Relaxed);
}

/// Make this process a subreaper, once.
pub(crate) fn ensure_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if !super::linux::become_subreaper() {
            tracing::warn!("could not become a child subreaper; escaped processes may be missed");
        }
    });
}

/// Held while a child is started and registered, so that a sweep never sees a new child
/// before it is registered.
pub(crate) fn spawn_lock() -> MutexGuard<'static, Vec<Running>> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forget a command once it and its sweep are over.
pub(crate) fn untrack(pid: u32) {
    spawn_lock().retain(|running| running.pid != pid);
}

/// One process as read from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy)]
struct Stat {
    ppid: u32,
    group: u32,
    zombie: bool,
    /// Clock ticks after boot when it started; with the pid it names one process.
    start: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) may hold spaces and ')', so fields are counted after the last ')'.
    let mut fields = text.get(text.rfind(')')? + 2..)?.split(' ');
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let start = fields.nth(16)?.parse().ok()?;
    Some(Stat {
        ppid,
        group,
        zombie: state == "Z" || state == "X",
        start,
    })
}

/// This moment in clock ticks after boot, comparable with [`Stat::start`].
pub(crate) fn now_ticks() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    let seconds: f64 = uptime
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    // SAFETY: sysconf takes an integer and returns a value or -1.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // One tick of slack: a process started in the same tick as the command counts.
    ((seconds * hz) as u64).saturating_sub(1)
}

/// The children of `pid`, from `/proc/<pid>/task/*/children`; `None` when the kernel lacks
/// that file (built without `CONFIG_PROC_CHILDREN`).
fn children_of(pid: u32) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    for task in tasks.flatten() {
        let path = task.path().join("children");
        match std::fs::read_to_string(&path) {
            Ok(text) => children.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            ),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::metadata(task.path()).is_ok() {
                    return None;
                }
            }
            Err(_) => {}
        }
    }
    Some(children)
}

/// Every descendant of `root` with the direct child it descends from, by walking the
/// children lists (or, without them, every process's parent).
fn descendants(root: u32) -> Vec<(u32, u32)> {
    let mut found = Vec::new();
    let Some(top) = children_of(root) else {
        return descendants_by_scan(root);
    };
    let mut queue: Vec<(u32, u32)> = top.into_iter().map(|child| (child, child)).collect();
    let mut seen = BTreeSet::new();
    while let Some((pid, top)) = queue.pop() {
        if !seen.insert(pid) {
            continue;
        }
        found.push((pid, top));
        for child in children_of(pid).unwrap_or_default() {
            queue.push((child, top));
        }
    }
    found
}

fn descendants_by_scan(root: u32) -> Vec<(u32, u32)> {
    let mut parents = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = stat(pid) {
            parents.insert(pid, stat.ppid);
        }
    }
    let mut found = Vec::new();
    for &pid in parents.keys() {
        let mut chain = vec![pid];
        let mut at = pid;
        while let Some(&parent) = parents.get(&at) {
            if parent == root {
                found.push((pid, *chain.last().unwrap_or(&pid)));
                break;
            }
            if parent <= 1 || chain.len() > parents.len() {
                break;
            }
            chain.push(parent);
            at = parent;
        }
    }
    found
}

/// The marker in a process's environment, if it can be read.
fn marker_of(pid: u32) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(format!("/proc/{pid}/environ")).ok()?;
    let mut bytes = Vec::new();
    file.take(ENVIRON_MAX_BYTES as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    let prefix = format!("{MARKER_VAR}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// The namespaces of a process, as `net:[4026532...]`-style names.
pub(crate) fn namespace_ids(pid: &str) -> Vec<String> {
    ["net", "mnt"]
        .iter()
        .filter_map(|kind| std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).ok())
        .map(|link| link.display().to_string())
        .collect()
}

fn argv_of(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if words.is_empty() {
        format!("(pid {pid}, no command line)")
    } else {
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
    }
}

/// A process the sweep killed: when it started, what it ran, and a pidfd that names exactly
/// it (its pid may be reused once it is reaped).
#[derive(Debug)]
struct Killed {
    start: u64,
    argv: String,
    pidfd: std::os::fd::OwnedFd,
}

/// The sweep of one command.
#[derive(Debug)]
pub(crate) struct Sweep {
    marker: String,
    /// The command's own namespaces (empty when it ran in efix's).
    namespaces: Vec<String>,
    leader: u32,
    since: u64,
    /// Set once efix stopped the command (timeout, cancel): what is left of its group is
    /// being killed by efix, so it did not escape; only processes outside the group count.
    stopped: bool,
    /// Killed processes by pid (raw argv; the caller redacts).
    killed: BTreeMap<u32, Killed>,
}

impl Sweep {
    pub(crate) fn new(marker: String, namespaces: Vec<String>, leader: u32, since: u64) -> Sweep {
        Sweep {
            marker,
            namespaces,
            leader,
            since,
            stopped: false,
            killed: BTreeMap::new(),
        }
    }

    /// efix stopped the command: its group is efix's to kill, not a leak.
    pub(crate) fn stopped(&mut self) {
        self.stopped = true;
    }

    /// Find and kill what the command left running, until a scan finds nothing new.
    pub(crate) fn kill_escaped(&mut self) {
        for _ in 0..MAX_PASSES {
            let running = spawn_lock();
            let found = self.scan(&running);
            if found.is_empty() {
                return;
            }
            for (pid, start) in found {
                let argv = argv_of(pid);
                if let Some(pidfd) = kill(pid, start) {
                    self.killed.insert(pid, Killed { start, argv, pidfd });
                }
            }
        }
    }

    /// Processes of this command, alive, not yet killed.
    fn scan(&self, running: &[Running]) -> Vec<(u32, u64)> {
        let own = std::process::id();
        let others: BTreeMap<u32, &str> = running
            .iter()
            .filter(|r| r.marker != self.marker)
            .map(|r| (r.pid, r.marker.as_str()))
            .collect();
        let only_runner = ONLY_RUNNER_CHILDREN.load(Ordering::Relaxed);
        let mut found = Vec::new();
        for (pid, top) in descendants(own) {
            if pid == self.leader || others.contains_key(&top) {
                continue;
            }
            let Some(stat) = stat(pid) else { continue };
            if stat.zombie || (self.stopped && stat.group == self.leader) {
                continue;
            }
            if self
                .killed
                .get(&pid)
                .is_some_and(|killed| killed.start == stat.start)
            {
                continue;
            }
            let ours = match marker_of(pid) {
                Some(marker) if marker == self.marker => true,
                Some(marker) if others.values().any(|m| *m == marker) => false,
                _ if !self.namespaces.is_empty()
                    && namespace_ids(&pid.to_string())
                        .iter()
                        .any(|id| self.namespaces.contains(id)) =>
                {
                    true
                }
                _ => only_runner && stat.ppid == own && stat.start >= self.since,
            };
            if ours {
                found.push((pid, stat.start));
            }
        }
        found
    }

    /// Reap the killed processes that are (or become) efix's children, and any other orphan
    /// zombie when every child of this process is the runner's; returns the argv of each
    /// process killed, sorted by pid.
    pub(crate) fn finish(self) -> (u64, Vec<String>) {
        let deadline = Instant::now() + REAP_TIMEOUT;
        let mut waiting: Vec<&Killed> = self.killed.values().collect();
        while !waiting.is_empty() && Instant::now() < deadline {
            waiting.retain(|killed| !reaped(killed));
            if !waiting.is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        if ONLY_RUNNER_CHILDREN.load(Ordering::Relaxed) {
            reap_orphan_zombies();
        }
        let count = self.killed.len() as u64;
        let argv = self
            .killed
            .into_values()
            .take(LEAKED_LISTED_MAX)
            .map(|killed| killed.argv)
            .collect();
        (count, argv)
    }
}

/// Whether a killed process is gone: reaped now by efix, or exited as the child of another
/// (killed) process, whose end hands it to efix later. Waiting goes through its pidfd, so a
/// pid reused by another child of this process is never reaped by mistake.
fn reaped(killed: &Killed) -> bool {
    use std::os::fd::AsFd;
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG;
    match waitid(Id::PIDFd(killed.pidfd.as_fd()), flags) {
        Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => false,
        Ok(_) => true,
        // Not efix's child (yet): done once it has exited, which makes its pidfd readable.
        Err(Errno::ECHILD) => super::linux::pidfd_exited(&killed.pidfd),
        Err(_) => true,
    }
}

/// Reap zombies re-parented to efix that no running command owns.
fn reap_orphan_zombies() {
    let running = spawn_lock();
    let own = std::process::id();
    for child in children_of(own).unwrap_or_default() {
        if running.iter().any(|r| r.pid == child) {
            continue;
        }
        if stat(child).is_some_and(|s| s.zombie && s.ppid == own)
            && let Ok(raw) = i32::try_from(child)
        {
            let _ = waitpid(Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// SIGKILL the process `pid` started at `start`, through a pidfd so that a pid reused in
/// between is never hit; returns the pidfd when the signal was sent.
fn kill(pid: u32, start: u64) -> Option<std::os::fd::OwnedFd> {
    let pidfd = super::linux::pidfd_open(pid)?;
    // The pidfd pins the process: if it is still the one scanned, the signal reaches it.
    if stat(pid).is_none_or(|s| s.start != start) {
        return None;
    }
    super::linux::pidfd_kill(&pidfd).then_some(pidfd)
}
