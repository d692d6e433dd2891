//! Long-lived children an engine speaks to over stdio (an ACP agent): started through the
//! helper like every command, with an agent's access (the network, to call its model; the
//! repository read-only when it only answers, writable when it edits), registered for the
//! sweep like a command, and stopped with the same sweep.
//!
//! The engine owns the protocol; this module only starts, confines and stops the process.

use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::launch::{Input, Launch, launch};
use super::model::{CommandSpec, RunnerError, RunnerSettings, SandboxReport};
use super::sandbox::{Access, Tier};
use super::sweep::{self, Sweep};

/// How long an agent may take to exit after SIGTERM before it is killed (2 s).
const AGENT_TERM_GRACE: Duration = Duration::from_secs(2);

/// A running agent. Dropping it without [`Agent::stop`] still kills its process group.
#[derive(Debug)]
pub struct Agent {
    child: Child,
    sweep: Option<Sweep>,
    /// What confined the agent, as its helper reported it.
    pub sandbox: SandboxReport,
    _temp_dir: tempfile::TempDir,
}

impl Agent {
    /// Start `argv` in `repo` under the sandbox with `access` ([`Access::agent`] or
    /// [`Access::editing_agent`]). A program that cannot be executed is an error here (an
    /// [`RunnerError::Io`] whose source is `NotFound` or `PermissionDenied`): an engine cannot
    /// work without its agent.
    pub fn spawn(
        argv: &[String],
        repo: &Path,
        access: Access,
        settings: &RunnerSettings,
    ) -> Result<Agent, RunnerError> {
        let spec = CommandSpec {
            argv: argv.to_vec(),
            cwd: repo.to_path_buf(),
            // The agent lives as long as the engine; the engine bounds each request.
            timeout: Duration::MAX,
            access,
        };
        let launched = match launch(&spec, settings, Input::Piped)? {
            Launch::Started(launched) => *launched,
            Launch::NotStarted { exit_code, message } => {
                let kind = if exit_code == super::model::EXIT_NOT_FOUND {
                    std::io::ErrorKind::NotFound
                } else {
                    std::io::ErrorKind::PermissionDenied
                };
                return Err(RunnerError::io(
                    message.trim_end().trim_start_matches("efix: "),
                    std::io::Error::from(kind),
                ));
            }
        };
        let pid = launched.child.id();
        let process_group = super::linux::process_group_of(pid) == Some(pid);
        let confinement = launched.confinement;
        let sandbox = SandboxReport {
            tier: if process_group {
                launched.tier
            } else {
                Tier::None
            },
            process_group,
            parent_death_signal: super::linux::HAS_PARENT_DEATH_SIGNAL,
            env_cleared: true,
            env_passed: launched.env_passed,
            non_dumpable_parent: super::linux::is_non_dumpable(),
            stdin_null: false,
            drain_cut_short: false,
            no_new_privs: confinement.no_new_privs,
            landlock_abi: confinement.landlock_abi,
            writable: if confinement.landlock_abi.is_some() {
                launched.writable
            } else {
                Vec::new()
            },
            seccomp: confinement.seccomp,
            network: confinement.network,
            loopback: confinement.loopback,
            read_only: confinement.read_only,
            capabilities_dropped: confinement.capabilities_dropped,
            missing: confinement.missing,
            leaked_processes: 0,
            leaked: Vec::new(),
        };
        Ok(Agent {
            sweep: Some(Sweep::new(
                launched.marker,
                launched.namespaces,
                pid,
                launched.since,
            )),
            child: launched.child,
            sandbox,
            _temp_dir: launched.temp_dir,
        })
    }

    /// The agent's stdin, stdout and stderr, for the engine's protocol and its error messages
    /// (taken once). Only the agent writes to stderr: the helper reports on its own descriptor.
    pub fn pipes(&mut self) -> (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>) {
        (
            self.child.stdin.take(),
            self.child.stdout.take(),
            self.child.stderr.take(),
        )
    }

    /// How the agent exited, when it has (without waiting).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stop the agent: SIGTERM to its group, a grace period, SIGKILL; then sweep what it
    /// left. Returns the final sandbox record, with the processes it leaked.
    pub fn stop(mut self) -> SandboxReport {
        self.terminate();
        let mut report = self.sandbox.clone();
        if let Some(mut sweep) = self.sweep.take() {
            // efix stopped the group; only what left it escaped.
            sweep.stopped();
            sweep.kill_escaped();
            let (count, argv) = sweep.finish();
            report.leaked_processes = count;
            report.leaked = argv;
        }
        sweep::untrack(self.child.id());
        report
    }

    /// Stop the agent at once (the run was interrupted): SIGKILL to its group, no grace
    /// period; then sweep what it left, as [`Agent::stop`] does.
    pub fn kill(mut self) -> SandboxReport {
        if let Ok(raw) = i32::try_from(self.child.id()) {
            drop(self.child.stdin.take());
            let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
            let _ = self.child.wait();
        }
        self.stop()
    }

    fn terminate(&mut self) {
        let Ok(raw) = i32::try_from(self.child.id()) else {
            return;
        };
        let group = Pid::from_raw(raw);
        drop(self.child.stdin.take());
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + AGENT_TERM_GRACE;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                let _ = killpg(group, Signal::SIGKILL);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if self.sweep.is_some() {
            self.terminate();
            if let Some(mut sweep) = self.sweep.take() {
                sweep.stopped();
                sweep.kill_escaped();
                let _ = sweep.finish();
            }
            sweep::untrack(self.child.id());
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{BufRead, BufReader, Write};

    use super::*;
    use crate::runner::Network;

    #[test]
    fn an_agent_speaks_over_stdio_has_the_network_and_cannot_write_the_repository() {
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let argv: Vec<String> = [
            "sh",
            "-c",
            "read line; echo \"got $line\"; touch written 2>/dev/null; echo touch=$?; cat",
        ]
        .map(str::to_owned)
        .to_vec();
        let mut agent = Agent::spawn(
            &argv,
            repo.path(),
            Access::agent(),
            &super::super::tests::settings(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (stdin, stdout, _) = agent.pipes();
        let (Some(mut stdin), Some(stdout)) = (stdin, stdout) else {
            panic!("the agent's pipes are missing");
        };
        writeln!(stdin, "hello").unwrap_or_else(|e| panic!("{e}"));
        let mut lines = BufReader::new(stdout).lines();
        let mut next = || lines.next().and_then(Result::ok).unwrap_or_default();
        let said = [next(), next()];
        let landlock = agent.sandbox.landlock_abi.is_some();
        let report = agent.stop();
        let expected_touch = if landlock { "touch=1" } else { "touch=0" };
        assert_eq!(
            (
                said,
                report.network,
                report.leaked_processes,
                repo.path().join("written").exists()
            ),
            (
                ["got hello".to_owned(), expected_touch.to_owned()],
                Network::Allowed,
                0,
                !landlock
            ),
            "{report:?}"
        );
        if !landlock {
            assert!(report.missing.iter().any(|m| m.starts_with("landlock:")));
        }
    }
    #[test]
    fn an_editing_agent_writes_the_repository_but_not_its_git_directory() {
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(repo.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
        let argv: Vec<String> = [
            "sh",
            "-c",
            "touch edited; touch .git/hook 2>/dev/null; echo git=$?",
        ]
        .map(str::to_owned)
        .to_vec();
        let mut agent = Agent::spawn(
            &argv,
            repo.path(),
            Access::editing_agent(),
            &super::super::tests::settings(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (_, stdout, _) = agent.pipes();
        let Some(stdout) = stdout else {
            panic!("the agent's stdout is missing");
        };
        let said = BufReader::new(stdout)
            .lines()
            .next()
            .and_then(Result::ok)
            .unwrap_or_default();
        let report = agent.stop();
        // `.git` is read-only only where a mount namespace made it so, which the report says.
        let git_protected = !report.read_only.is_empty();
        assert_eq!(
            (
                report.network,
                repo.path().join("edited").exists(),
                said,
                repo.path().join(".git/hook").exists()
            ),
            (
                Network::Allowed,
                true,
                if git_protected { "git=1" } else { "git=0" }.to_owned(),
                !git_protected
            ),
            "{report:?}"
        );
        if !git_protected {
            assert!(report.missing.iter().any(|m| m.starts_with("namespaces")));
        }
    }
}
