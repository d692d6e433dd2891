//! Exact snapshot and restore of the working tree, the index and HEAD.
//!
//! A snapshot holds every tracked and untracked-not-ignored file: its permission bits and
//! its bytes, or its symlink target. A tracked file whose bytes are exactly its index blob
//! (checked by hashing the raw file, no filters) is kept as the blob id only, so memory grows
//! with the change in the tree, not with the tree; the index is a reachability root for
//! `git gc`, so those blobs outlive anything a command may do short of deleting objects by
//! hand. Restoring rewrites what changed, recreates what was deleted, removes
//! what was created (when not ignored) and the directories that left empty, and puts back the
//! index file and HEAD. Ignored files (`target/`, `node_modules/`, `__pycache__/`) and
//! everything under `.git/` other than the index, HEAD and the branch HEAD names are never
//! touched.
//!
//! Not restored: empty directories the command created or deleted (git does not track them,
//! and a directory that existed empty before the command only holds new files is pruned), and
//! the contents of submodules.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Odb, Oid, Repository};
use serde::Serialize;

use super::error::{GitError, git_err, io_err};
use super::repo::{Repo, lossy, metadata_if_present, not_ignored_raw, raw_path};

/// Permission bits kept and restored (rwx for all, setuid, setgid, sticky).
const PERMISSION_BITS: u32 = 0o7777;

/// The content of a snapshotted regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    Bytes(Vec<u8>),
    /// The bytes are exactly this blob in the object database.
    Blob(Oid),
}

/// Files whose status last changed at least this long before the snapshot started get a
/// stat fingerprint: any later write or chmod sets their ctime to a later time, even on
/// filesystems that keep whole seconds.
const STAT_TRUST_MARGIN_SECS: i64 = 2;

/// A file's identity and change time; equal values mean the file was not touched since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatKey {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    ctime: i64,
    ctime_nsec: i64,
}

impl StatKey {
    fn of(meta: &fs::Metadata) -> StatKey {
        StatKey {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }
}

/// One snapshotted path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File {
        content: Content,
        permissions: u32,
        /// Set when the file was old enough at the snapshot for its ctime to prove it
        /// untouched; restore then skips reading it.
        stat: Option<StatKey>,
    },
    Symlink {
        target: PathBuf,
    },
}

/// Where HEAD pointed when the snapshot was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeadState {
    /// Bytes of the `HEAD` file (a symbolic ref or a detached commit id).
    file: Option<Vec<u8>>,
    /// The branch HEAD names and its commit then; `None` commit for an unborn branch.
    branch: Option<(String, Option<Oid>)>,
}

/// The working tree, index and HEAD at one moment, restorable byte for byte.
#[derive(Debug, Clone)]
pub struct Snapshot {
    root: PathBuf,
    git_dir: PathBuf,
    entries: BTreeMap<Vec<u8>, Entry>,
    index: Option<Vec<u8>>,
    head: HeadState,
}

/// What a restore changed; all empty when the tree was already as snapshotted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
}

impl Repo {
    /// Capture every tracked and untracked-not-ignored file, the index and HEAD.
    pub fn snapshot(&self) -> Result<Snapshot, GitError> {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
            });
        self.snapshot_started_at(started)
    }

    /// [`Repo::snapshot`] as if it started at `started` (unix seconds); tests move it to
    /// exercise the stat shortcut.
    pub(crate) fn snapshot_started_at(&self, started: i64) -> Result<Snapshot, GitError> {
        let repo = self.git()?;
        let git_dir = repo.path().to_path_buf();
        let index = read_optional(&git_dir.join("index"))?;
        let head = head_state(&repo, &git_dir)?;
        let index_oids = index_blob_ids(&repo)?;
        let mut entries = BTreeMap::new();
        for path in not_ignored_raw(&repo)? {
            let abs = self.root.join(raw_path(&path));
            let Some(meta) = metadata_if_present(&abs)? else {
                continue;
            };
            let entry = if meta.file_type().is_symlink() {
                let target =
                    fs::read_link(&abs).map_err(io_err(format!("read link {}", abs.display())))?;
                Entry::Symlink { target }
            } else if meta.is_file() {
                let blob = index_oids
                    .get(&path)
                    .copied()
                    .filter(|oid| Oid::hash_file(ObjectType::Blob, &abs).ok() == Some(*oid));
                let content = match blob {
                    Some(oid) => Content::Blob(oid),
                    None => Content::Bytes(
                        fs::read(&abs).map_err(io_err(format!("read {}", abs.display())))?,
                    ),
                };
                let old_enough = meta.ctime() < started - STAT_TRUST_MARGIN_SECS;
                Entry::File {
                    content,
                    permissions: meta.permissions().mode() & PERMISSION_BITS,
                    stat: old_enough.then(|| StatKey::of(&meta)),
                }
            } else {
                // A directory where a tracked file was: the file is absent, nothing to keep.
                continue;
            };
            entries.insert(path, entry);
        }
        tracing::debug!(files = entries.len(), root = %self.root.display(), "snapshot taken");
        Ok(Snapshot {
            root: self.root.clone(),
            git_dir,
            entries,
            index,
            head,
        })
    }
}

impl Snapshot {
    /// Number of files (and symlinks) captured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the snapshot holds no file.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Make the working tree, index and HEAD exactly as they were at the snapshot.
    pub fn restore(&self) -> Result<RestoreReport, GitError> {
        let mut report = RestoreReport::default();
        let objects = super::repo::open_at(&self.root)?;
        let odb = objects.odb().map_err(git_err("open the object database"))?;
        // Ignore rules first, so deciding what is "created since and not ignored" uses the
        // rules of the snapshot, not ones the command may have edited.
        for (path, entry) in &self.entries {
            if raw_path(path).file_name() == Some(".gitignore".as_ref()) {
                self.restore_entry(&odb, path, entry, &mut report)?;
            }
        }
        let index_path = self.git_dir.join("index");
        if read_optional(&index_path)? != self.index {
            match &self.index {
                Some(bytes) => fs::write(&index_path, bytes),
                None => fs::remove_file(&index_path),
            }
            .map_err(io_err("restore the index file"))?;
            report.index_restored = true;
        }
        // A fresh handle, so the listing below reads the restored index.
        let repo = super::repo::open_at(&self.root)?;
        report.head_restored = self.restore_head(&repo)?;
        let mut emptied = BTreeSet::new();
        let is_extra = |path: &Vec<u8>| !self.entries.contains_key(path);
        let is_ignore_file =
            |path: &Vec<u8>| raw_path(path).file_name() == Some(".gitignore".as_ref());
        let mut extras: Vec<Vec<u8>> = not_ignored_raw(&repo)?
            .into_iter()
            .filter(is_extra)
            .collect();
        // Ignore files the command added come out first: listing with them in place hides
        // what they ignore, and those files would survive the restore.
        if extras.iter().any(is_ignore_file) {
            for path in extras.iter().filter(|path| is_ignore_file(path)) {
                self.remove_extra(path, &mut report, &mut emptied)?;
            }
            extras = not_ignored_raw(&repo)?
                .into_iter()
                .filter(is_extra)
                .collect();
        }
        for path in &extras {
            self.remove_extra(path, &mut report, &mut emptied)?;
        }
        report.removed.sort();
        // Deepest first, so a parent is tried after its children.
        for dir in emptied.iter().rev() {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let abs = self.root.join(dir);
            let is_empty = fs::read_dir(&abs).is_ok_and(|mut items| items.next().is_none());
            if is_empty && fs::remove_dir(&abs).is_ok() {
                report.removed_dirs.push(dir.to_string_lossy().into_owned());
            }
        }
        report.removed_dirs.sort();
        for (path, entry) in &self.entries {
            self.restore_entry(&odb, path, entry, &mut report)?;
        }
        tracing::debug!(?report, "working tree restored");
        Ok(report)
    }

    /// Remove a file created since the snapshot, remembering its directories for pruning.
    fn remove_extra(
        &self,
        path: &[u8],
        report: &mut RestoreReport,
        emptied: &mut BTreeSet<PathBuf>,
    ) -> Result<(), GitError> {
        let rel = raw_path(path);
        let abs = self.root.join(rel);
        match fs::symlink_metadata(&abs) {
            Ok(meta) if !meta.is_dir() => {
                fs::remove_file(&abs).map_err(io_err(format!("remove {}", abs.display())))?;
                report.removed.push(lossy(path));
                emptied.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Put one path back if it differs, recording what was done.
    fn restore_entry(
        &self,
        odb: &Odb<'_>,
        path: &[u8],
        entry: &Entry,
        report: &mut RestoreReport,
    ) -> Result<(), GitError> {
        let abs = self.root.join(raw_path(path));
        let current = match fs::symlink_metadata(&abs) {
            Ok(meta) => Some(meta),
            Err(err) if err.kind() == ErrorKind::NotFound => None,
            Err(source) => {
                return Err(GitError::Io {
                    what: format!("inspect {}", abs.display()),
                    source,
                });
            }
        };
        let existed = current.is_some();
        match entry {
            Entry::Symlink { target } => {
                if let Some(meta) = &current {
                    if meta.file_type().is_symlink()
                        && fs::read_link(&abs).ok().as_ref() == Some(target)
                    {
                        return Ok(());
                    }
                    clear_path(&abs, meta)?;
                } else {
                    create_parent(&abs)?;
                }
                symlink(target, &abs).map_err(io_err(format!("create link {}", abs.display())))?;
            }
            Entry::File {
                content,
                permissions,
                stat,
            } => {
                if let Some(meta) = &current {
                    if stat.is_some_and(|stat| stat == StatKey::of(meta)) {
                        return Ok(());
                    }
                    if meta.is_file() && self.same_content(&abs, content)? {
                        if meta.permissions().mode() & PERMISSION_BITS != *permissions {
                            set_permissions(&abs, *permissions)?;
                            report.modes_restored.push(lossy(path));
                        }
                        return Ok(());
                    }
                    if !meta.is_file() {
                        clear_path(&abs, meta)?;
                    }
                } else {
                    create_parent(&abs)?;
                }
                let bytes = blob_bytes(odb, content)?;
                write_file(&abs, &bytes)?;
                set_permissions(&abs, *permissions)?;
            }
        }
        if existed {
            report.rewritten.push(lossy(path));
        } else {
            report.recreated.push(lossy(path));
        }
        Ok(())
    }

    fn same_content(&self, abs: &Path, content: &Content) -> Result<bool, GitError> {
        match content {
            Content::Bytes(bytes) => {
                let current = fs::read(abs).map_err(io_err(format!("read {}", abs.display())))?;
                Ok(current == *bytes)
            }
            Content::Blob(oid) => Ok(Oid::hash_file(ObjectType::Blob, abs).ok() == Some(*oid)),
        }
    }

    /// Move HEAD, and the branch it names, back to where they were.
    fn restore_head(&self, repo: &Repository) -> Result<bool, GitError> {
        let mut moved = false;
        let head_path = self.git_dir.join("HEAD");
        if let Some(bytes) = &self.head.file
            && read_optional(&head_path)?.as_ref() != Some(bytes)
        {
            fs::write(&head_path, bytes).map_err(io_err("restore HEAD"))?;
            moved = true;
        }
        if let Some((name, then)) = &self.head.branch {
            let now = repo
                .find_reference(name)
                .ok()
                .and_then(|reference| reference.target());
            if now != *then {
                match then {
                    Some(oid) => {
                        repo.reference(name, *oid, true, "efix: restore after a failed run")
                            .map_err(git_err(format!("move {name} back")))?;
                    }
                    None => {
                        // The branch was unborn; the command's commit stays in the object
                        // database, and its id is logged so it can be recovered.
                        tracing::warn!(branch = %name, commit = ?now, "removing branch created since the snapshot");
                        if let Ok(mut reference) = repo.find_reference(name) {
                            reference
                                .delete()
                                .map_err(git_err(format!("delete {name}")))?;
                        }
                    }
                }
                moved = true;
            }
        }
        Ok(moved)
    }
}

/// The bytes a file must hold.
fn blob_bytes<'c>(odb: &Odb<'_>, content: &'c Content) -> Result<Cow<'c, [u8]>, GitError> {
    match content {
        Content::Bytes(bytes) => Ok(Cow::Borrowed(bytes)),
        Content::Blob(oid) => {
            let object = odb
                .read(*oid)
                .map_err(git_err(format!("read blob {oid} to restore a file")))?;
            Ok(Cow::Owned(object.data().to_vec()))
        }
    }
}

/// Stage-0 index entries: path -> blob id.
fn index_blob_ids(repo: &Repository) -> Result<BTreeMap<Vec<u8>, Oid>, GitError> {
    let index = repo.index().map_err(git_err("read the index"))?;
    Ok(index
        .iter()
        .filter(|entry| (entry.flags >> 12) & 0x3 == 0)
        .map(|entry| (entry.path, entry.id))
        .collect())
}

fn head_state(repo: &Repository, git_dir: &Path) -> Result<HeadState, GitError> {
    let file = read_optional(&git_dir.join("HEAD"))?;
    let branch = match repo.find_reference("HEAD") {
        Ok(head) => head.symbolic_target().ok().flatten().map(|name| {
            let commit = repo
                .find_reference(name)
                .ok()
                .and_then(|reference| reference.target());
            (name.to_owned(), commit)
        }),
        Err(_) => None,
    };
    Ok(HeadState { file, branch })
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, GitError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GitError::Io {
            what: format!("read {}", path.display()),
            source,
        }),
    }
}

fn create_parent(abs: &Path) -> Result<(), GitError> {
    match abs.parent() {
        Some(parent) => fs::create_dir_all(parent)
            .map_err(io_err(format!("create directory {}", parent.display()))),
        None => Ok(()),
    }
}

/// Remove what stands where a file must go: a file, a link, or an empty directory.
fn clear_path(abs: &Path, meta: &fs::Metadata) -> Result<(), GitError> {
    if meta.is_dir() {
        fs::remove_dir(abs).map_err(io_err(format!(
            "remove directory {} in the way of a snapshotted file",
            abs.display()
        )))
    } else {
        fs::remove_file(abs).map_err(io_err(format!("remove {}", abs.display())))
    }
}

/// Write a file, first making it writable when the command left it read-only.
fn write_file(abs: &Path, bytes: &[u8]) -> Result<(), GitError> {
    match fs::write(abs, bytes) {
        Err(err) if err.kind() == ErrorKind::PermissionDenied => {
            set_permissions(abs, 0o600)?;
            fs::write(abs, bytes).map_err(io_err(format!("write {}", abs.display())))
        }
        other => other.map_err(io_err(format!("write {}", abs.display()))),
    }
}

fn set_permissions(abs: &Path, mode: u32) -> Result<(), GitError> {
    fs::set_permissions(abs, fs::Permissions::from_mode(mode))
        .map_err(io_err(format!("set permissions of {}", abs.display())))
}
