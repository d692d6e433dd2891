//! Exact snapshot and restore of the working tree, the index and HEAD, at a cost that grows
//! with what changes rather than with the size of the tree.
//!
//! A snapshot keeps the index file's bytes and, for each tracked file, how to prove it
//! untouched later: the stat data the index recorded (trusted as git trusts it, racily clean
//! entries and files changed too recently excepted), the snapshot's own stat data after hashing
//! a file the index's stat data did not cover, or a content check at every restore. Only what
//! the index does not describe is kept whole: untracked files that are not ignored, tracked
//! files whose bytes are not their blob (modified, deleted, a type change, or turned into
//! other bytes by a checkout filter such as LFS or `eol=crlf`). Permission bits of every file
//! are kept too, not just the executable bit git tracks.
//!
//! Restoring puts back the ignore rules first (`.gitignore` files and `.git/info/exclude`, so
//! "created since and not ignored" is decided by the snapshot's rules), then the index file and
//! HEAD, removes what was created and is not ignored (and the directories that left empty),
//! and rewrites every file whose stat data no longer proves it untouched and whose bytes or
//! permissions differ. Directories are read again only when their own stat data changed. Files
//! efix wrote itself ([`Snapshot::note_written`]) are always checked by content.
//!
//! Ignored files (`target/`, `node_modules/`, `__pycache__/`) and everything under `.git/`
//! other than the index, HEAD, the branch HEAD names and `info/exclude` are never touched.
//! Not restored: empty directories the command created or deleted (git does not track them,
//! and a directory that existed empty before the command only holds new files is pruned), the
//! contents of submodules, and nested repositories a command created.

mod filters;
mod restore;
mod scan;
mod stat;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use git2::Oid;
use serde::Serialize;

pub(crate) use stat::{IndexStat, STAT_TRUST_MARGIN_SECS, Stamp, StatKey};

/// Permission bits kept and restored (rwx for all, setuid, setgid, sticky).
pub(crate) const PERMISSION_BITS: u32 = 0o7777;

/// The bytes of a file kept whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    Bytes(Vec<u8>),
    /// The bytes are exactly this blob in the object database.
    Blob(Oid),
}

/// A path whose state at the snapshot is not "its index blob, as the index says".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    File {
        content: Content,
        permissions: u32,
    },
    Symlink {
        target: Vec<u8>,
    },
    /// A tracked path with no file (deleted, a directory in its place, or outside a sparse
    /// checkout).
    Absent,
}

/// How a restore proves a tracked file untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Its stat data still equals the index's.
    Index,
    /// Its stat data still equals the snapshot's, kept at this place in [`Snapshot::own`] (the
    /// index's was stale; the file was hashed).
    Own(u32),
    /// Only by its content: its stat data cannot prove it (changed too close to the snapshot).
    Content,
    /// Not at all: an [`Entry`] describes it.
    Explicit,
}

/// A stage-0 index entry and how to prove its file untouched.
#[derive(Debug, Clone)]
pub(crate) struct Tracked {
    pub path: Vec<u8>,
    pub oid: Oid,
    pub stat: IndexStat,
    pub check: Check,
    /// Permission bits of the file at the snapshot (0 for a link).
    pub permissions: u32,
}

/// Where HEAD pointed when the snapshot was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadState {
    /// Bytes of the `HEAD` file (a symbolic ref or a detached commit id).
    pub file: Option<Vec<u8>>,
    /// The branch HEAD names and its commit then; `None` commit for an unborn branch.
    pub branch: Option<(String, Option<Oid>)>,
}

/// The working tree, index and HEAD at one moment, restorable byte for byte.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub(crate) root: PathBuf,
    pub(crate) git_dir: PathBuf,
    /// Where `info/exclude` lives (the common directory of linked worktrees).
    pub(crate) common_dir: PathBuf,
    /// When the snapshot started, unix seconds (the reference for the stat margin).
    pub(crate) started: i64,
    pub(crate) index: Option<Vec<u8>>,
    /// Modification time of the index file: entries at or after it are racily clean.
    pub(crate) index_mtime: Stamp,
    /// The index file's stat data, when old enough to prove it untouched (a restore then need
    /// not read it).
    pub(crate) index_key: Option<StatKey>,
    /// Stage-0 entries other than gitlinks, sorted by path.
    pub(crate) tracked: Vec<Tracked>,
    /// The snapshot's own stat data of the files [`Check::Own`] names.
    pub(crate) own: Vec<StatKey>,
    /// Submodule paths: never listed, walked or restored.
    pub(crate) gitlinks: Vec<Vec<u8>>,
    pub(crate) entries: BTreeMap<Vec<u8>, Entry>,
    /// Directories walked for untracked files and their stat data (`None`: changed too
    /// recently to prove anything, read again at every restore). Empty after a reload from
    /// the journal: every directory is read then.
    pub(crate) dirs: BTreeMap<Vec<u8>, Option<StatKey>>,
    pub(crate) head: HeadState,
    pub(crate) exclude: Option<Vec<u8>>,
    /// Files efix itself wrote since the snapshot: always checked by content.
    pub(crate) written: BTreeSet<Vec<u8>>,
    /// Paths git itself would report as changed (see [`Snapshot::dirty_paths`]).
    pub(crate) dirty: Vec<String>,
}

/// What a restore changed; all empty when the tree was already as snapshotted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RestoreReport {
    /// Files whose content (or kind) was put back.
    pub rewritten: Vec<String>,
    /// Files that had been deleted and were written again.
    pub recreated: Vec<String>,
    /// Files created since the snapshot (not ignored) that were removed.
    pub removed: Vec<String>,
    /// Directories left empty by those removals, removed too.
    pub removed_dirs: Vec<String>,
    /// Files whose content was intact but whose permission bits were put back.
    pub modes_restored: Vec<String>,
    /// `.git/info/exclude` was put back (the command edited the local ignore rules).
    pub exclude_restored: bool,
    /// The index file was put back (the command staged or unstaged something).
    pub index_restored: bool,
    /// HEAD or the branch it names was moved back (the command committed or checked out).
    pub head_restored: bool,
}

impl RestoreReport {
    /// True when the restore found nothing to change.
    pub fn is_noop(&self) -> bool {
        *self == RestoreReport::default()
    }

    /// Number of paths put back, removed or re-moded.
    pub fn files(&self) -> usize {
        self.rewritten.len() + self.recreated.len() + self.removed.len() + self.modes_restored.len()
    }
}

impl Snapshot {
    /// Number of files (and symlinks) present at the snapshot.
    pub fn len(&self) -> usize {
        let tracked = self
            .tracked
            .iter()
            .filter(|t| t.check != Check::Explicit)
            .count();
        let explicit = self
            .entries
            .values()
            .filter(|e| !matches!(e, Entry::Absent))
            .count();
        tracked + explicit
    }

    /// True when the snapshot holds no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tracked files (submodules left out), sorted, as the index listed them when the
    /// snapshot was taken: what [`super::Repo::tracked_files`] gives for a clean tree, without
    /// reading the index again.
    pub fn tracked_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .tracked
            .iter()
            .map(|t| super::repo::lossy(&t.path))
            .collect();
        // Lossy conversion can merge or reorder non-UTF-8 names.
        paths.sort();
        paths.dedup();
        paths
    }

    /// Paths that made the tree "not clean" at the snapshot, as git sees it: modified,
    /// staged, deleted or conflicted tracked files and untracked files that are not ignored;
    /// sorted. (Files under `--assume-unchanged` or `--skip-worktree` are git's to ignore, and
    /// the snapshot keeps their bytes all the same.)
    pub fn dirty_paths(&self) -> &[String] {
        &self.dirty
    }

    /// Record that efix is about to write these repository-relative paths, so every restore
    /// checks them by content whatever their stat data says.
    pub fn note_written<'p>(&mut self, paths: impl IntoIterator<Item = &'p str>) {
        self.written
            .extend(paths.into_iter().map(|p| p.as_bytes().to_vec()));
    }

    /// The tracked entry for `path`, if any.
    pub(crate) fn tracked_entry(&self, path: &[u8]) -> Option<&Tracked> {
        self.tracked
            .binary_search_by(|t| t.path.as_slice().cmp(path))
            .ok()
            .map(|at| &self.tracked[at])
    }

    /// Whether some tracked path lies under the directory `dir` (no trailing slash).
    pub(crate) fn has_tracked_under(&self, dir: &[u8]) -> bool {
        let mut prefix = dir.to_vec();
        prefix.push(b'/');
        let at = self
            .tracked
            .partition_point(|t| t.path.as_slice() < prefix.as_slice());
        self.tracked
            .get(at)
            .is_some_and(|t| t.path.starts_with(&prefix))
    }

    /// Whether `path` is a submodule.
    pub(crate) fn is_gitlink(&self, path: &[u8]) -> bool {
        self.gitlinks
            .binary_search_by(|g| g.as_slice().cmp(path))
            .is_ok()
    }
}
