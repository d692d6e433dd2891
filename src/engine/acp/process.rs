//! The agent process: started through the runner as a sandboxed [`Agent`] (the one way efix
//! starts an agent), its pipes made asynchronous for the protocol, its stderr kept in a bounded
//! tail, and its stdout read in lines no longer than [`MAX_LINE_BYTES`]. Stopping it (its
//! process group, then what escaped the group) is the runner's.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use crate::engine::EngineError;
use crate::runner::{Access, Agent, RunnerError, RunnerSettings};

/// Bytes of the agent's stderr kept (the end of it, 16 KiB).
pub(crate) const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// Longest line the agent may send (16 MiB): a JSON-RPC frame is one line, and an unbounded
/// one would grow efix's memory without limit.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Start the agent in `root` with `access`, confined by the runner's sandbox helper like every
/// command, with `settings.env` as its whole environment.
pub(crate) fn spawn_agent(
    argv: &[String],
    root: &Path,
    access: Access,
    settings: &RunnerSettings,
) -> Result<Agent, EngineError> {
    Agent::spawn(argv, root, access, settings).map_err(|err| EngineError::Agent {
        message: match &err {
            RunnerError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                format!(
                    "start `{}`: program not found; check acp.command and PATH",
                    argv.first().map(String::as_str).unwrap_or_default()
                )
            }
            _ => format!("start `{}`: {err}", argv.join(" ")),
        },
    })
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

/// The agent's pipes, registered with the async runtime.
pub(crate) struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl Pipes {
    /// Take the agent's pipes; must run inside the runtime that will read them.
    pub(crate) fn take(agent: &mut Agent) -> Result<Pipes, String> {
        let (Some(stdin), Some(stdout), Some(stderr)) = agent.pipes() else {
            return Err("the agent's pipes could not be opened".to_owned());
        };
        let failed = |err: std::io::Error| format!("the agent's pipes could not be opened: {err}");
        Ok(Pipes {
            stdin: ChildStdin::from_std(stdin).map_err(failed)?,
            stdout: ChildStdout::from_std(stdout).map_err(failed)?,
            stderr: ChildStderr::from_std(stderr).map_err(failed)?,
        })
    }
}

/// The end of the agent's stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    bytes: VecDeque<u8>,
}

impl StderrTail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        self.bytes.drain(..over);
    }

    /// The kept text, lossily decoded.
    pub(crate) fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut all = a.to_vec();
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).into_owned()
    }
}

/// Read the agent's stderr into `tail` until it closes.
pub(crate) async fn drain_stderr(mut stderr: ChildStderr, tail: Rc<RefCell<StderrTail>>) {
    let mut buffer = vec![0u8; 8192];
    loop {
        match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(count) => tail.borrow_mut().push(&buffer[..count]),
        }
    }
}

/// A reader that fails once a line grows past [`MAX_LINE_BYTES`].
pub(crate) struct BoundedLines<R> {
    inner: R,
    line: usize,
}

impl<R> BoundedLines<R> {
    pub(crate) fn new(inner: R) -> Self {
        BoundedLines { inner, line: 0 }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // The error comes on the read after the one that crossed the bound: a read that
        // fails must not have filled the buffer.
        if self.line > MAX_LINE_BYTES {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the agent sent a line longer than {MAX_LINE_BYTES} bytes"),
            )));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            for &byte in &buf.filled()[before..] {
                if byte == b'\n' {
                    this.line = 0;
                } else {
                    this.line += 1;
                }
            }
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_program_is_found_on_its_path_or_named() {
        let env = vec![("PATH".into(), "/nonexistent:/bin:/usr/bin".into())];
        let argv = |program: &str| vec![program.to_owned(), "--acp".to_owned()];
        let root = Path::new("/");
        assert!(resolve_program(&argv("sh"), &env, root).is_ok());
        assert_eq!(
            resolve_program(&argv("no-such-agent-efix"), &env, root),
            Err("acp.command: the agent's program `no-such-agent-efix` is not on the PATH efix \
                 gives the agent; install it, or give its full path in acp.command"
                .to_owned())
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
        assert_eq!(create_writable(&paths).unwrap(), vec![dir.clone(), file.clone()]);
        assert!(dir.is_dir());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n");
        assert_eq!(create_writable(&paths).unwrap(), Vec::<std::path::PathBuf>::new());
    }

    #[test]
    fn the_stderr_tail_keeps_the_end() {
        let mut tail = StderrTail::default();
        tail.push(&vec![b'a'; STDERR_TAIL_BYTES]);
        tail.push(b"the end");
        let text = tail.text();
        assert_eq!(text.len(), STDERR_TAIL_BYTES);
        assert!(text.ends_with("aathe end"));
    }

    #[test]
    fn a_line_longer_than_the_bound_is_an_error() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut ok = BoundedLines::new(&b"{}\n{}\n"[..]);
            let mut out = Vec::new();
            ok.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, b"{}\n{}\n");
            let long = vec![b'x'; MAX_LINE_BYTES + 10];
            let mut bad = BoundedLines::new(&long[..]);
            let err = bad.read_to_end(&mut Vec::new()).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        });
    }
}
