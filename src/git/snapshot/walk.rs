//! Finding untracked files that are not ignored, by walking the working tree's directories.
//!
//! The snapshot walks every directory that is not ignored and keeps each one's stat data. A
//! restore reads again only the directories whose stat data changed (creating, removing or
//! renaming an entry changes its directory's), plus every directory that is new; names git
//! tracks are skipped by a lookup in the snapshot's index, and only the others are put to the
//! ignore rules. Nested repositories (a directory with a `.git`) and submodules are left alone,
//! as git leaves them.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::Repository;

use super::super::error::{GitError, git_err};
use super::super::repo::raw_path;
use super::stat::{FileStat, StatKey, old_enough, stat_each};
use super::{Entry, Snapshot};

/// What the snapshot knows about a path.
enum Known {
    /// A tracked file, or a path the snapshot kept whole (or knew absent).
    File,
    /// A directory with tracked files under it.
    TrackedDir,
    /// A submodule.
    Gitlink,
    Unknown,
}

/// One walk: untracked-not-ignored files found, and the directories read with their stat data.
pub(crate) struct Walk<'a> {
    snapshot: &'a Snapshot,
    repo: &'a Repository,
    /// Files (and links) that are neither tracked nor kept by the snapshot, not ignored.
    pub found: Vec<Vec<u8>>,
    /// Directories read, with their stat data when old enough to prove them unchanged.
    pub dirs: BTreeMap<Vec<u8>, Option<StatKey>>,
    /// The tracked paths, hashed, for a walk that looks up every name of the tree.
    tracked: Option<HashSet<&'a [u8]>>,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(snapshot: &'a Snapshot, repo: &'a Repository) -> Walk<'a> {
        Walk {
            snapshot,
            repo,
            found: Vec::new(),
            dirs: BTreeMap::new(),
            tracked: None,
        }
    }

    /// Walk the whole tree from the root.
    pub(crate) fn everything(&mut self) -> Result<(), GitError> {
        let snapshot: &'a Snapshot = self.snapshot;
        self.tracked = Some(snapshot.tracked.iter().map(|t| t.path.as_slice()).collect());
        self.visit(Vec::new(), None)
    }

    /// Read again only the snapshot's directories whose stat data changed, and everything new
    /// under them. With no directories recorded (a snapshot reloaded from the journal), walk
    /// the whole tree.
    pub(crate) fn changed_since(&mut self) -> Result<(), GitError> {
        let recorded = &self.snapshot.dirs;
        if recorded.is_empty() {
            return self.everything();
        }
        let listed: Vec<(&Vec<u8>, &Option<StatKey>)> = recorded.iter().collect();
        let changed = stat_each(
            &self.snapshot.root,
            &listed,
            |(dir, _)| dir.as_slice(),
            |(_, key), stat| match stat {
                // Gone: the tracked files under it are recreated, nothing there to remove.
                None => false,
                // Replaced by a file or link: its parent changed too and is read.
                Some(stat) if !stat.is_dir() => false,
                Some(stat) => key.is_none_or(|key| key != StatKey::of(&stat)),
            },
        )
        .map_err(|source| GitError::Io {
            what: format!(
                "inspect the directories of {}",
                self.snapshot.root.display()
            ),
            source,
        })?;
        for ((dir, _), changed) in listed.into_iter().zip(changed) {
            if changed {
                self.read_dir(dir, Some(recorded))?;
            }
        }
        Ok(())
    }

    /// Record `dir` and read it, descending into every subdirectory (except those `skip`
    /// lists, which the caller visits itself).
    fn visit(
        &mut self,
        dir: Vec<u8>,
        skip: Option<&BTreeMap<Vec<u8>, Option<StatKey>>>,
    ) -> Result<(), GitError> {
        let abs = self.snapshot.root.join(raw_path(&dir));
        let Some(meta) = FileStat::at(&abs).map_err(|source| GitError::Io {
            what: format!("inspect directory {}", abs.display()),
            source,
        })?
        else {
            return Ok(());
        };
        let key = old_enough(&meta, self.snapshot.started).then(|| StatKey::of(&meta));
        self.dirs.insert(dir.clone(), key);
        self.read_dir(&dir, skip)
    }

    fn read_dir(
        &mut self,
        dir: &[u8],
        skip: Option<&BTreeMap<Vec<u8>, Option<StatKey>>>,
    ) -> Result<(), GitError> {
        let abs = self.snapshot.root.join(raw_path(dir));
        let items = match fs::read_dir(&abs) {
            Ok(items) => items,
            // Removed while we looked, or never there: nothing to find.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(GitError::Io {
                    what: format!("read directory {}", abs.display()),
                    source,
                });
            }
        };
        let mut subdirs = Vec::new();
        let read_error = |source| GitError::Io {
            what: format!("read directory {}", abs.display()),
            source,
        };
        // One buffer for every name's path: most names are only looked up.
        let mut path = dir.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        let prefix = path.len();
        for item in items {
            let item = item.map_err(read_error)?;
            let name = item.file_name();
            let name = name.as_bytes();
            if name == b".git" {
                continue;
            }
            path.truncate(prefix);
            path.extend_from_slice(name);
            let is_dir = item.file_type().map_err(read_error)?.is_dir();
            match (self.known(&path), is_dir) {
                (Known::Gitlink, _) => {}
                (Known::File, false) => {}
                (Known::TrackedDir, true) => subdirs.push(path.clone()),
                // A file where the snapshot had a directory of tracked files, or a directory
                // where it had a file: what is in the way is new.
                (Known::TrackedDir, false) | (Known::Unknown, false) => {
                    if !self.ignored(&path, false)? {
                        self.found.push(path.clone());
                    }
                }
                (Known::File, true) | (Known::Unknown, true) => {
                    let nested_repo = abs.join(item.file_name()).join(".git").exists();
                    if !nested_repo && !self.ignored(&path, true)? {
                        subdirs.push(path.clone());
                    }
                }
            }
        }
        for sub in subdirs {
            if skip.is_some_and(|recorded| recorded.contains_key(&sub)) {
                continue;
            }
            self.visit(sub, skip)?;
        }
        Ok(())
    }

    fn known(&self, path: &[u8]) -> Known {
        let snapshot = self.snapshot;
        if snapshot.is_gitlink(path) {
            Known::Gitlink
        } else if self.tracked.as_ref().map_or_else(
            || snapshot.tracked_entry(path).is_some(),
            |set| set.contains(path),
        ) || snapshot
            .entries
            .get(path)
            .is_some_and(|e| !matches!(e, Entry::Absent))
        {
            Known::File
        } else if snapshot.has_tracked_under(path) {
            Known::TrackedDir
        } else if snapshot.entries.contains_key(path) {
            // Known absent and not a directory of tracked files.
            Known::File
        } else {
            Known::Unknown
        }
    }

    fn ignored(&self, path: &[u8], dir: bool) -> Result<bool, GitError> {
        let mut query = path.to_vec();
        if dir {
            query.push(b'/');
        }
        self.repo
            .is_path_ignored(Path::new(std::ffi::OsStr::from_bytes(&query)))
            .map_err(git_err(format!(
                "check the ignore rules for {}",
                String::from_utf8_lossy(path)
            )))
    }
}
