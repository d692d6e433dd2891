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
