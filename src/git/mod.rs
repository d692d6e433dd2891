//! git2 helpers: repository discovery, clean-tree check, tracked files, exact snapshot and
//! restore of the working tree, HEAD, diff stats.
//!
//! Nothing here commits or pushes; `publish` (a later step) owns that.

use std::path::{Path, PathBuf};

/// Errors from git operations.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `path` is not inside a git repository; the user must run efix in one (or `git init`).
    #[error("{path} is not inside a git repository")]
    NotARepository { path: PathBuf },
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

/// A repository opened at its work-tree root.
pub struct Repo {
    pub root: PathBuf,
}

impl Repo {
    /// Open the repository containing `path`.
    pub fn open(path: &Path) -> Result<Repo, GitError> {
        let _ = path;
        todo!("git helper implements this")
    }
}
