//! git2 helpers: repository discovery, clean-tree check, tracked files, exact snapshot and
//! restore of the working tree (made durable by a journal under `<git dir>/efix/`), the lock
//! that allows one efix per working tree, content fingerprints, diff against HEAD with
//! statistics, scratch copies and fresh repositories.
//!
//! Nothing here pushes or talks to a remote; `publish` owns that. Submodules are left alone:
//! their gitlink entries are not files, and nothing inside them is listed, snapshotted or
//! restored.

mod commit_tree;
mod copy;
mod diff;
mod error;
mod fingerprint;
mod journal;
mod lock;
mod repo;
mod snapshot;

#[cfg(test)]
mod tests;

pub use commit_tree::{CommitFile, CommitTree};
pub use copy::init_with_files;
pub use diff::{FileStat, WorkingDiff};
pub use error::GitError;
pub use fingerprint::tree_fingerprint;
pub use journal::{Journal, RunRecord, Unfinished};
pub use lock::RunLock;
pub use repo::Repo;
pub use snapshot::{RestoreReport, Snapshot};
