//! The git area's error type.

use std::path::PathBuf;

/// Errors from git operations.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `path` is not inside a git repository; the user must run efix in one (or `git init`).
    #[error(
        "find a git repository at {}: it is not inside one; run efix in the checkout of the \
         project to fix, or pass its path with --repo DIR (a new project needs `git init` and \
         a first commit)",
        path.display()
    )]
    NotARepository { path: PathBuf },
    /// The repository has no working tree; the user must point efix at a non-bare checkout.
    #[error(
        "use {}: it is a bare repository, without a working tree to fix; pass the path of a \
         checkout with --repo DIR",
        path.display()
    )]
    BareRepository { path: PathBuf },
    /// A commit was needed (a scratch copy of HEAD, or of a named revision) but none exists;
    /// the caller should commit first or name an existing revision.
    #[error("find a commit {what}: there is none; commit first, or name an existing revision")]
    NoCommit { what: String },
    /// Another efix process holds the working tree's lock; the user must wait for it or stop
    /// it. `pid` and `started` are what the holder wrote (absent if it had not yet).
    #[error(
        "another efix run (pid {}, started {}) is in progress in {root}; wait for it or stop it",
        pid.map_or("unknown".to_owned(), |p| p.to_string()),
        started.as_deref().unwrap_or("at an unknown time")
    )]
    Busy {
        root: PathBuf,
        pid: Option<u32>,
        started: Option<String>,
    },
    /// The journal of an interrupted run cannot be read (damaged, or written by another
    /// version of efix); the user must restore the tree by hand and remove it.
    #[error(
        "read the journal of an interrupted run at {path}: {message}; check the working tree \
         with git status, put it back by hand, then remove that file"
    )]
    Journal { path: PathBuf, message: String },
    /// The repository's config now names another working tree than the one efix started in
    /// (`core.worktree` rewritten during the run); efix stops rather than touch another
    /// directory, and the user should inspect `.git/config`.
    #[error(
        "use the repository at {}: its config now names {} as the working tree \
         (core.worktree); efix stops rather than work on another directory; check .git/config",
        root.display(),
        workdir.as_ref().map_or("no working tree".to_owned(), |w| w.display().to_string())
    )]
    WorkTreeMoved {
        root: PathBuf,
        workdir: Option<PathBuf>,
    },
    /// libgit2 failed.
    #[error("{what}")]
    Git {
        what: String,
        #[source]
        source: git2::Error,
    },
    /// Reading or writing the working tree failed.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// Attach a description to a libgit2 error.
pub(crate) fn git_err(what: impl Into<String>) -> impl FnOnce(git2::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Git { what, source }
}

/// Attach a description to an I/O error.
pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Io { what, source }
}
