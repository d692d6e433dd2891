//! One efix at a time per working tree: an exclusive `flock` on `<git dir>/efix/lock`, held for
//! a whole `run`, `verify` or `restore` and released by the kernel when the holder exits,
//! however it exits (`kill -9` included). The holder writes its pid and start time into the
//! file so that a refused caller can say who holds it.
//!
//! The git dir is the working tree's own (`.git/worktrees/<name>` for a linked worktree), so
//! two worktrees of one repository can each have a run.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::error::{GitError, io_err};
use super::repo::Repo;

/// Directory under the git dir that holds efix's state.
pub(crate) const STATE_DIR: &str = "efix";
/// The lock file's name in it.
const LOCK_FILE: &str = "lock";
/// How long a refused caller waits for the holder to write its pid (it does so right after
/// taking the lock).
const HOLDER_WAIT: Duration = Duration::from_millis(200);

/// The exclusive lock of one working tree; released when dropped or when the process exits.
#[derive(Debug)]
pub struct RunLock {
    file: Flock<File>,
}

impl Repo {
    /// efix's state directory for this working tree (`<git dir>/efix`), created if needed.
    pub(crate) fn state_dir(&self) -> Result<PathBuf, GitError> {
        let dir = self.git()?.path().join(STATE_DIR);
        std::fs::create_dir_all(&dir).map_err(io_err(format!("create {}", dir.display())))?;
        Ok(dir)
    }

    /// Take the working tree's lock at once, or say who holds it ([`GitError::Busy`]).
    /// `started` is the holder's start time as it should be shown to others.
    pub fn lock(&self, started: &str) -> Result<RunLock, GitError> {
        let path = self.state_dir()?.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err(format!("open {}", path.display())))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut locked) => {
                let holder = format!("pid {}\nstarted {started}\n", std::process::id());
                locked
                    .set_len(0)
                    .and_then(|()| locked.seek(SeekFrom::Start(0)).map(drop))
                    .and_then(|()| locked.write_all(holder.as_bytes()))
                    .map_err(io_err(format!("write {}", path.display())))?;
                Ok(RunLock { file: locked })
            }
            Err((mut file, Errno::EWOULDBLOCK)) => {
                let (pid, started) = read_holder(&mut file);
                Err(GitError::Busy {
                    root: self.root.clone(),
                    pid,
                    started,
                })
            }
            Err((_, errno)) => Err(GitError::Io {
                what: format!("lock {}", path.display()),
                source: std::io::Error::from(errno),
            }),
        }
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // The file outlives the lock; an empty one names no holder.
        let _ = self.file.set_len(0);
    }
}

/// The holder's pid and start time, waiting briefly for a holder that has just taken the lock
/// to write them.
fn read_holder(file: &mut File) -> (Option<u32>, Option<String>) {
    let deadline = std::time::Instant::now() + HOLDER_WAIT;
    loop {
        let mut text = String::new();
        let read = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_string(&mut text));
        let pid = text
            .lines()
            .find_map(|l| l.strip_prefix("pid "))
            .and_then(|p| p.trim().parse().ok());
        let started = text
            .lines()
            .find_map(|l| l.strip_prefix("started "))
            .map(|s| s.trim().to_owned());
        if (pid.is_some() && started.is_some())
            || read.is_err()
            || std::time::Instant::now() >= deadline
        {
            return (pid, started);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
