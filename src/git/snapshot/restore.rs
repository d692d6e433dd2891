//! Putting the working tree, the index and HEAD back exactly as a snapshot found them.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use git2::{Odb, Oid, Repository};

use super::super::error::{GitError, git_err, io_err};
use super::super::repo::{lossy, raw_path};
use super::scan::{read_optional, same_as_blob};
use super::stat::{FileStat, LINK_MODE, StatKey, stat_each};
use super::walk::Walk;
use super::{Check, Content, Entry, RestoreReport, Snapshot, Tracked};

/// The file name whose edits change what counts as ignored.
const IGNORE_FILE: &str = ".gitignore";

impl Snapshot {
    /// Make the working tree, index and HEAD exactly as they were at the snapshot.
    pub fn restore(&self) -> Result<RestoreReport, GitError> {
        let mut report = RestoreReport::default();
        let repo = self.open()?;
        let odb = repo.odb().map_err(git_err("open the object database"))?;
        // Ignore rules first, so deciding what is "created since and not ignored" uses the
        // rules of the snapshot, not ones the command may have edited.
        report.exclude_restored = self.restore_exclude()?;
        for tracked in self.tracked.iter().filter(|t| is_ignore_file(&t.path)) {
            if self.parent_is_dir(&tracked.path) {
                let abs = self.root.join(raw_path(&tracked.path));
                let stat =
                    FileStat::at(&abs).map_err(io_err(format!("inspect {}", abs.display())))?;
                if !self.untouched(tracked, stat.as_ref()) {
                    self.restore_tracked(&odb, tracked, stat, &mut report)?;
                }
            }
        }
        for (path, entry) in self.entries.iter().filter(|(p, _)| is_ignore_file(p)) {
            if self.parent_is_dir(path) {
                self.restore_entry(&odb, path, entry, &mut report)?;
            }
        }
        report.index_restored = self.restore_index()?;
        // A fresh handle, so the ignore rules and the index are read again.
        let repo = self.open()?;
        report.head_restored = self.restore_head(&repo)?;
        let mut emptied = BTreeSet::new();
        let mut extras = self.extras(&repo)?;
        // Ignore files the command added come out first: walking with them in place hides
        // what they ignore, and those files would survive the restore.
        if extras.iter().any(|p| is_ignore_file(p)) {
            for path in extras.iter().filter(|p| is_ignore_file(p)) {
                self.remove_extra(path, &mut report, &mut emptied)?;
            }
            extras = self.extras(&self.open()?)?;
        }
        for path in &extras {
            self.remove_extra(path, &mut report, &mut emptied)?;
        }
        report.removed.sort();
        self.prune(&emptied, &mut report);
        // One stat of every tracked file, in bulk; only the files it does not prove untouched
        // are looked at.
        let looks = stat_each(
            &self.root,
            &self.tracked,
            |t| t.path.as_slice(),
            |t, stat| (!self.untouched(t, stat.as_ref())).then(|| stat.map(Box::new)),
        )
        .map_err(io_err(format!(
            "inspect the files of {}",
            self.root.display()
        )))?;
        for (tracked, look) in self.tracked.iter().zip(looks) {
            if let Some(stat) = look {
                self.restore_tracked(&odb, tracked, stat.map(|s| *s), &mut report)?;
            }
        }
        for (path, entry) in &self.entries {
            self.restore_entry(&odb, path, entry, &mut report)?;
        }
        for list in [
            &mut report.rewritten,
            &mut report.recreated,
            &mut report.removed,
            &mut report.modes_restored,
        ] {
            list.sort();
            list.dedup();
        }
        tracing::debug!(?report, "working tree restored");
        Ok(report)
    }

    /// Put back only the files efix wrote ([`Snapshot::note_written`]): enough, and in
    /// proportion to the change, when nothing else ran since the last [`Snapshot::restore`].
    pub fn restore_written(&self) -> Result<RestoreReport, GitError> {
        let mut report = RestoreReport::default();
        if self.written.is_empty() {
            return Ok(report);
        }
        let odb_owner = self.open()?;
        let odb = odb_owner
            .odb()
            .map_err(git_err("open the object database"))?;
        let mut emptied = BTreeSet::new();
        for path in &self.written {
            let abs = self.root.join(raw_path(path));
            if let Some(tracked) = self.tracked_entry(path)
                && tracked.check != Check::Explicit
            {
                let stat =
                    FileStat::at(&abs).map_err(io_err(format!("inspect {}", abs.display())))?;
                self.restore_tracked(&odb, tracked, stat, &mut report)?;
            } else if let Some(entry) = self.entries.get(path) {
                self.restore_entry(&odb, path, entry, &mut report)?;
            } else {
                self.remove_extra(path, &mut report, &mut emptied)?;
            }
        }
        self.prune(&emptied, &mut report);
        tracing::debug!(?report, "files efix wrote restored");
        Ok(report)
    }

    /// Remove the directories in `emptied` that are empty now, deepest first.
    fn prune(&self, emptied: &BTreeSet<PathBuf>, report: &mut RestoreReport) {
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
    }

    /// Open the repository, refusing one whose config now names another working tree.
    fn open(&self) -> Result<Repository, GitError> {
        crate::git::repo::open_at(&self.root)
    }

    /// Files that are neither tracked nor kept by the snapshot, and not ignored.
    fn extras(&self, repo: &Repository) -> Result<Vec<Vec<u8>>, GitError> {
        let mut walk = Walk::new(self, repo);
        walk.changed_since()?;
        let mut found = walk.found;
        found.sort();
        found.dedup();
        Ok(found)
    }

    fn parent_is_dir(&self, path: &[u8]) -> bool {
        match raw_path(path).parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                fs::symlink_metadata(self.root.join(parent)).is_ok_and(|meta| meta.is_dir())
            }
            _ => true,
        }
    }

    /// Put `.git/info/exclude` back; returns whether it changed.
    fn restore_exclude(&self) -> Result<bool, GitError> {
        let path = self.common_dir.join("info").join("exclude");
        if read_optional(&path)? == self.exclude {
            return Ok(false);
        }
        match &self.exclude {
            Some(bytes) => {
                create_dirs(&self.common_dir.join("info"))?;
                write_atomic(&path, bytes)?;
            }
            None => fs::remove_file(&path).map_err(io_err(format!("remove {}", path.display())))?,
        }
        Ok(true)
    }

    /// Put the index file back; returns whether it changed.
    fn restore_index(&self) -> Result<bool, GitError> {
        let path = self.git_dir.join("index");
        if let Some(key) = self.index_key
            && FileStat::at(&path)
                .ok()
                .flatten()
                .is_some_and(|stat| StatKey::of(&stat) == key)
        {
            return Ok(false);
        }
        if read_optional(&path)? == self.index {
            return Ok(false);
        }
        match &self.index {
            Some(bytes) => write_atomic(&path, bytes)?,
            None => fs::remove_file(&path).map_err(io_err("remove the index file"))?,
        }
        Ok(true)
    }

    /// Move HEAD, and the branch it names, back to where they were.
    fn restore_head(&self, repo: &Repository) -> Result<bool, GitError> {
        let mut moved = false;
        let head_path = self.git_dir.join("HEAD");
        if let Some(bytes) = &self.head.file
            && read_optional(&head_path)?.as_ref() != Some(bytes)
        {
            write_atomic(&head_path, bytes)?;
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

    /// Whether a tracked file's stat data (`None`: absent) proves it untouched since the
    /// snapshot. Files described by an entry are left to [`Snapshot::restore_entry`].
    fn untouched(&self, tracked: &Tracked, stat: Option<&FileStat>) -> bool {
        match (tracked.check, stat) {
            (Check::Explicit, _) => true,
            (_, None) => false,
            (check, Some(stat)) => {
                !self.written.contains(&tracked.path)
                    && match check {
                        Check::Index => tracked.stat.matches(stat),
                        Check::Own(at) => self.own.get(at as usize) == Some(&StatKey::of(stat)),
                        Check::Content | Check::Explicit => false,
                    }
            }
        }
    }

    /// Put one tracked file back to its blob if its bytes or permissions differ; `current`
    /// is its stat data now (`None`: absent).
    fn restore_tracked(
        &self,
        odb: &Odb<'_>,
        tracked: &Tracked,
        current: Option<FileStat>,
        report: &mut RestoreReport,
    ) -> Result<(), GitError> {
        let abs = self.root.join(raw_path(&tracked.path));
        if let Some(stat) = &current {
            if tracked.stat.mode() == LINK_MODE {
                if stat.is_symlink() && same_as_blob(&abs, stat, tracked.oid, odb)? {
                    return Ok(());
                }
                clear_path(&abs, stat, false)?;
            } else {
                if stat.is_file() && same_as_blob(&abs, stat, tracked.oid, odb)? {
                    if stat.permissions() != tracked.permissions {
                        set_permissions(&abs, tracked.permissions)?;
                        report.modes_restored.push(lossy(&tracked.path));
                    }
                    return Ok(());
                }
                clear_path(&abs, stat, true)?;
            }
        } else {
            self.make_parent(&tracked.path, report)?;
        }
        let bytes = blob(odb, tracked.oid)?;
        if tracked.stat.mode() == LINK_MODE {
            symlink(std::ffi::OsStr::from_bytes(&bytes), &abs)
                .map_err(io_err(format!("create link {}", abs.display())))?;
        } else {
            write_file(&abs, &bytes)?;
            set_permissions(&abs, tracked.permissions)?;
        }
        if current.is_some() {
            report.rewritten.push(lossy(&tracked.path));
        } else {
            report.recreated.push(lossy(&tracked.path));
        }
        Ok(())
    }

    /// Put one path the snapshot kept whole back if it differs, recording what was done.
    fn restore_entry(
        &self,
        odb: &Odb<'_>,
        path: &[u8],
        entry: &Entry,
        report: &mut RestoreReport,
    ) -> Result<(), GitError> {
        let abs = self.root.join(raw_path(path));
        let current = FileStat::at(&abs).map_err(io_err(format!("inspect {}", abs.display())))?;
        match entry {
            Entry::Absent => {
                if let Some(meta) = &current
                    && !meta.is_dir()
                {
                    fs::remove_file(&abs).map_err(io_err(format!("remove {}", abs.display())))?;
                    report.removed.push(lossy(path));
                }
                return Ok(());
            }
            Entry::Symlink { target } => {
                if let Some(meta) = &current {
                    if meta.is_symlink()
                        && fs::read_link(&abs)
                            .is_ok_and(|now| now.as_os_str().as_bytes() == target.as_slice())
                    {
                        return Ok(());
                    }
                    clear_path(&abs, meta, false)?;
                } else {
                    self.make_parent(path, report)?;
                }
                symlink(std::ffi::OsStr::from_bytes(target), &abs)
                    .map_err(io_err(format!("create link {}", abs.display())))?;
            }
            Entry::File {
                content,
                permissions,
            } => {
                if let Some(meta) = &current {
                    if meta.is_file() && same_content(&abs, meta, content, odb)? {
                        if meta.permissions() != *permissions {
                            set_permissions(&abs, *permissions)?;
                            report.modes_restored.push(lossy(path));
                        }
                        return Ok(());
                    }
                    clear_path(&abs, meta, true)?;
                } else {
                    self.make_parent(path, report)?;
                }
                match content {
                    Content::Bytes(bytes) => write_file(&abs, bytes)?,
                    Content::Blob(oid) => write_file(&abs, &blob(odb, *oid)?)?,
                }
                set_permissions(&abs, *permissions)?;
            }
        }
        if current.is_some() {
            report.rewritten.push(lossy(path));
        } else {
            report.recreated.push(lossy(path));
        }
        Ok(())
    }

    /// Create the directories above `path`, removing a file or link a command put where one
    /// of them must be.
    fn make_parent(&self, path: &[u8], report: &mut RestoreReport) -> Result<(), GitError> {
        let Some(parent) = raw_path(path).parent() else {
            return Ok(());
        };
        let mut at = PathBuf::new();
        for component in parent.components() {
            at.push(component);
            let abs = self.root.join(&at);
            match fs::symlink_metadata(&abs) {
                Ok(meta) if meta.is_dir() => continue,
                Ok(_) => {
                    fs::remove_file(&abs).map_err(io_err(format!("remove {}", abs.display())))?;
                    report.removed.push(at.to_string_lossy().into_owned());
                }
                Err(err) if err.kind() == ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(GitError::Io {
                        what: format!("inspect {}", abs.display()),
                        source,
                    });
                }
            }
            create_dirs(&abs)?;
        }
        Ok(())
    }
}

fn is_ignore_file(path: &[u8]) -> bool {
    raw_path(path).file_name() == Some(IGNORE_FILE.as_ref())
}

fn same_content(
    abs: &Path,
    meta: &FileStat,
    content: &Content,
    odb: &Odb<'_>,
) -> Result<bool, GitError> {
    match content {
        Content::Bytes(bytes) => {
            if meta.len() != bytes.len() as u64 {
                return Ok(false);
            }
            let current = fs::read(abs).map_err(io_err(format!("read {}", abs.display())))?;
            Ok(current == *bytes)
        }
        Content::Blob(oid) => same_as_blob(abs, meta, *oid, odb),
    }
}

/// The bytes of a blob.
fn blob(odb: &Odb<'_>, oid: Oid) -> Result<Vec<u8>, GitError> {
    let object = odb
        .read(oid)
        .map_err(git_err(format!("read blob {oid} to restore a file")))?;
    Ok(object.data().to_vec())
}

fn create_dirs(abs: &Path) -> Result<(), GitError> {
    fs::create_dir_all(abs).map_err(io_err(format!("create directory {}", abs.display())))
}

/// Remove what stands where a file must go: a file, a link, or an empty directory. With
/// `rewrite_in_place`, a regular file with no other name is left to be overwritten (a hard
/// link is replaced instead, so the file's other names keep what the command wrote).
fn clear_path(abs: &Path, meta: &FileStat, rewrite_in_place: bool) -> Result<(), GitError> {
    if meta.is_dir() {
        fs::remove_dir(abs).map_err(io_err(format!(
            "remove directory {} in the way of a snapshotted file",
            abs.display()
        )))
    } else if rewrite_in_place && meta.is_file() && meta.nlink() == 1 {
        Ok(())
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

/// Write through a temporary sibling and a rename, so a reader (git, or a restore after a
/// crash) never sees half a file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), GitError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".efix-tmp");
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, bytes)
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(io_err(format!("write {}", path.display())))
}
