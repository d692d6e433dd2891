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

/// The agent's program as the sandbox will execute it: `argv[0]` itself when it names a path,
/// else the first executable file of that name on the `PATH` of `env` (the agent's own
/// environment). Checked before anything runs, so a wrong `acp.command` is a configuration
/// error (exit 2) instead of a failure after the reproduction and the baseline suite.
pub fn resolve_program(
    argv: &[String],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    root: &Path,
) -> Result<std::path::PathBuf, String> {
    let program = argv.first().map(String::as_str).unwrap_or_default();
    if program.is_empty() {
        return Err("acp.command is empty; set it to the agent's command line".to_owned());
    }
    let executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = root.join(program);
        return if executable(&path) {
            Ok(path)
        } else {
            Err(format!(
                "acp.command: the agent's program {program} is not an executable file; install \
                 the agent or correct the path"
            ))
        };
    }
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone())
        .unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_absolute() && executable(candidate))
        .ok_or_else(|| {
            format!(
                "acp.command: the agent's program `{program}` is not on the PATH efix gives the \
                 agent; install it, or give its full path in acp.command"
            )
        })
}

/// Create the `acp.writable` paths that do not exist yet, since the sandbox can only grant a
/// write to a path that exists: a name ending in `.json` becomes a file holding `{}` (an
/// empty JSON object, which agents read as empty settings), anything else a directory (only
/// the owner may enter). Returns the paths it created; `Err` names the path that could not
/// be created and what to do.
pub fn create_writable(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, String> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let mut created = Vec::new();
    for path in paths {
        if path.symlink_metadata().is_ok() {
            continue;
        }
        let failed = |err: std::io::Error| {
            format!(
                "acp.writable: {} does not exist and could not be created ({err}); create it, \
                 or remove it from acp.writable",
                path.display()
            )
        };
        let is_json = path.extension().is_some_and(|ext| ext == "json");
        if is_json {
            if let Some(parent) = path.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(failed)?;
            }
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(failed)?;
            std::io::Write::write_all(&mut file, b"{}\n").map_err(failed)?;
        } else {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)
                .map_err(failed)?;
        }
        tracing::info!(path = %path.display(), "created an acp.writable path that did not exist");
        created.push(path.clone());
    }
    Ok(created)
}

/// What a path of `acp.writable` is now, for `efix config check`.
pub fn writable_state(path: &Path) -> &'static str {
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => "directory",
        Ok(_) => "file",
        Err(_) if path.extension().is_some_and(|ext| ext == "json") => {
            "missing: created holding {} when a run starts"
        }
        Err(_) => "missing: created as a directory when a run starts",
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
    fn the_agents_program_is_found_on_its_path_or_named() {
        let env = vec![("PATH".into(), "/nonexistent:/bin:/usr/bin".into())];
        let argv = |program: &str| vec![program.to_owned(), "--acp".to_owned()];
        let root = Path::new("/");
        assert!(resolve_program(&argv("sh"), &env, root).is_ok());
        assert_eq!(
            resolve_program(&argv("no-such-agent-efix"), &env, root),
            Err(
                "acp.command: the agent's program `no-such-agent-efix` is not on the PATH efix \
                 gives the agent; install it, or give its full path in acp.command"
                    .to_owned()
            )
        );
        assert!(resolve_program(&argv("/no/such/agent"), &env, root).is_err());
    }

    #[test]
    fn missing_writable_paths_are_created_as_directories_or_json_files() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".gemini");
        let file = home.path().join(".claude.json");
        std::fs::create_dir(home.path().join("kept")).unwrap();
        let paths = [dir.clone(), file.clone(), home.path().join("kept")];
        assert_eq!(
            create_writable(&paths).unwrap(),
            vec![dir.clone(), file.clone()]
        );
        assert!(dir.is_dir());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n");
        assert_eq!(
            create_writable(&paths).unwrap(),
            Vec::<std::path::PathBuf>::new()
        );
    }

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
