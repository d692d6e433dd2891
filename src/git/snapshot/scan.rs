//! Taking a snapshot: one stat of every tracked file against the index's stat data, hashing
//! only the files it does not prove clean, and one walk for untracked files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Index, ObjectType, Odb, Oid, Repository, Status};

use super::super::error::{GitError, git_err, io_err};
use super::super::repo::{Repo, lossy, metadata_if_present, raw_path};
use super::filters::Filters;
use super::stat::{
    FileStat, GITLINK_MODE, IndexStat, LINK_MODE, Stamp, StatKey, old_enough, stamp_of, stat_each,
};
use super::walk::Walk;
use super::{Check, Content, Entry, HeadState, Snapshot, Tracked};

/// Files at least this large that must be kept whole go to the object database at once
/// instead of memory (a large LFS object, a big untracked file).
const LARGE_FILE_BYTES: u64 = 1 << 20;

impl Repo {
    /// Capture the working tree, the index and HEAD.
    pub fn snapshot(&self) -> Result<Snapshot, GitError> {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
            });
        self.snapshot_started_at(started)
    }

    /// [`Repo::snapshot`] as if it started at `started` (unix seconds); tests move it to
    /// exercise the stat shortcuts.
    pub(crate) fn snapshot_started_at(&self, started: i64) -> Result<Snapshot, GitError> {
        let repo = self.git()?;
        let git_dir = repo.path().to_path_buf();
        let common_dir = repo.commondir().to_path_buf();
        let index_path = git_dir.join("index");
        // Stat data before bytes: should the index change in between, its entries look
        // racier than they are, never the other way round.
        let index_meta = metadata_if_present(&index_path)?;
        let index_bytes = read_optional(&index_path)?;
        let index_mtime = match &index_meta {
            Some(meta) => stamp_of(meta),
            None => Stamp { secs: 0, nanos: 0 },
        };
        let index_key = index_meta
            .map(|meta| FileStat::of(&meta))
            .filter(|stat| old_enough(stat, started))
            .map(|stat| StatKey::of(&stat));
        let mut index = repo.index().map_err(git_err("read the index"))?;
        let mut snapshot = Snapshot {
            root: self.root.clone(),
            git_dir: git_dir.clone(),
            common_dir: common_dir.clone(),
            started,
            index: index_bytes,
            index_mtime,
            index_key,
            tracked: Vec::with_capacity(index.len()),
            own: Vec::new(),
            gitlinks: Vec::new(),
            entries: BTreeMap::new(),
            dirs: BTreeMap::new(),
            head: head_state(&repo, &git_dir)?,
            exclude: read_optional(&common_dir.join("info").join("exclude"))?,
            written: BTreeSet::new(),
            dirty: Vec::new(),
        };
        let mut dirty = BTreeSet::new();
        let mut conflicted = BTreeSet::new();
        for entry in index.iter() {
            let stat = IndexStat::of(&entry);
            if entry.mode == GITLINK_MODE {
                snapshot.gitlinks.push(entry.path);
            } else if stat.stage() != 0 {
                conflicted.insert(entry.path);
            } else {
                snapshot.tracked.push(Tracked {
                    path: entry.path,
                    oid: entry.id,
                    stat,
                    check: Check::Content,
                    permissions: 0,
                });
            }
        }
        snapshot.gitlinks.sort();
        snapshot.tracked.sort_by(|a, b| a.path.cmp(&b.path));
        let odb = repo.odb().map_err(git_err("open the object database"))?;
        let filters = Filters::of(
            &repo,
            &self.root,
            snapshot
                .tracked
                .iter()
                .map(|t| t.path.as_slice())
                .filter(|p| raw_path(p).file_name() == Some(".gitattributes".as_ref())),
        );
        // One stat of every tracked file, in bulk; the few the index does not prove clean
        // are looked at one by one.
        let index_mtime = snapshot.index_mtime;
        let first = stat_each(
            &self.root,
            &snapshot.tracked,
            |t| t.path.as_slice(),
            |t, stat| match stat {
                Some(stat)
                    if t.stat.matches(&stat)
                        && !t.stat.racy(index_mtime)
                        && !t.stat.git_ignores_worktree() =>
                {
                    First::Clean {
                        old: old_enough(&stat, started),
                        permissions: if t.stat.mode() == LINK_MODE {
                            0
                        } else {
                            stat.permissions()
                        },
                    }
                }
                other => First::Look(other.map(Box::new)),
            },
        )
        .map_err(io_err(format!(
            "inspect the files of {}",
            self.root.display()
        )))?;
        for (at, first) in first.into_iter().enumerate() {
            let tracked = &snapshot.tracked[at];
            let filtered = !filters.none()
                && tracked.stat.mode() != LINK_MODE
                && filters.may_apply(&repo, &tracked.path);
            let found = match first {
                First::Clean { old, permissions } if !filtered => Inspected {
                    check: if old { Check::Index } else { Check::Content },
                    own: None,
                    permissions,
                    entry: None,
                    dirty: false,
                },
                First::Clean { .. } => {
                    let stat = FileStat::at(&self.root.join(raw_path(&tracked.path)))
                        .map_err(io_err("inspect a tracked file"))?;
                    inspect(&repo, &odb, &snapshot, tracked, stat)?
                }
                First::Look(stat) => inspect(&repo, &odb, &snapshot, tracked, stat.map(|s| *s))?,
            };
            let check = match (found.check, found.own) {
                (Check::Own(_), Some(key)) => {
                    snapshot.own.push(key);
                    Check::Own(u32::try_from(snapshot.own.len() - 1).unwrap_or(u32::MAX))
                }
                (check, _) => check,
            };
            let tracked = &mut snapshot.tracked[at];
            tracked.check = check;
            tracked.permissions = found.permissions;
            if found.dirty {
                dirty.insert(lossy(&tracked.path));
            }
            if let Some(entry) = found.entry {
                snapshot.entries.insert(tracked.path.clone(), entry);
            }
        }
        for path in conflicted {
            dirty.insert(lossy(&path));
            let entry =
                kept_whole(&odb, &self.root.join(raw_path(&path)))?.unwrap_or(Entry::Absent);
            snapshot.entries.insert(path, entry);
        }
        let mut walk = Walk::new(&snapshot, &repo);
        walk.everything()?;
        let (found, dirs) = (walk.found, walk.dirs);
        for path in found {
            dirty.insert(lossy(&path));
            if let Some(entry) = kept_whole(&odb, &self.root.join(raw_path(&path)))? {
                snapshot.entries.insert(path, entry);
            }
        }
        snapshot.dirs = dirs;
        dirty.extend(staged(&repo, &mut index)?);
        snapshot.dirty = dirty.into_iter().collect();
        let count =
            |check: fn(&Check) -> bool| snapshot.tracked.iter().filter(|t| check(&t.check)).count();
        tracing::debug!(
            tracked = snapshot.tracked.len(),
            by_index = count(|c| *c == Check::Index),
            by_own_stat = count(|c| matches!(c, Check::Own(_))),
            by_content = count(|c| *c == Check::Content),
            kept_whole = snapshot.entries.len(),
            dirs = snapshot.dirs.len(),
            root = %self.root.display(),
            "snapshot taken"
        );
        Ok(snapshot)
    }
}

/// What one stat says about a tracked file: clean by the index's stat data, or to be looked
/// at (its stat data, if it exists).
enum First {
    Clean { old: bool, permissions: u32 },
    Look(Option<Box<FileStat>>),
}

/// What the snapshot learned about one tracked file.
struct Inspected {
    check: Check,
    /// The file's own stat data, for [`Check::Own`].
    own: Option<StatKey>,
    permissions: u32,
    /// Set when the index does not describe the file.
    entry: Option<Entry>,
    /// Whether git counts the file as changed.
    dirty: bool,
}

/// Look at a tracked file the index's stat data does not prove clean: hash it, and keep it
/// whole if its bytes are not its blob's.
fn inspect(
    repo: &Repository,
    odb: &Odb<'_>,
    snapshot: &Snapshot,
    tracked: &Tracked,
    stat: Option<FileStat>,
) -> Result<Inspected, GitError> {
    let abs = snapshot.root.join(raw_path(&tracked.path));
    let index = &tracked.stat;
    let Some(stat) = stat else {
        return Ok(explicit(Entry::Absent, 0, !index.skip_worktree()));
    };
    if stat.is_dir() {
        // A directory where a tracked file was: the file is absent, the walk finds what is
        // inside.
        return Ok(explicit(Entry::Absent, 0, true));
    }
    let is_link = index.mode() == LINK_MODE;
    let kind_differs = if is_link {
        !stat.is_symlink()
    } else {
        !stat.is_file()
    };
    let permissions = if is_link { 0 } else { stat.permissions() };
    let same = !kind_differs && same_as_blob(&abs, &stat, tracked.oid, odb)?;
    if same {
        let check = if old_enough(&stat, snapshot.started) {
            // Numbered by the caller, which keeps the stat data in `Snapshot::own`.
            Check::Own(u32::MAX)
        } else {
            Check::Content
        };
        // The bytes are the blob's; git still reports a lost or gained executable bit.
        let mode_changed = !is_link
            && stat.executable() != (index.mode() & 0o100 != 0)
            && !index.git_ignores_worktree()
            && git_reports_change(repo, &tracked.path);
        return Ok(Inspected {
            check,
            own: Some(StatKey::of(&stat)),
            permissions,
            entry: None,
            dirty: mode_changed,
        });
    }
    let Some(entry) = kept_whole(odb, &abs)? else {
        return Ok(explicit(Entry::Absent, 0, !index.skip_worktree()));
    };
    // Bytes that are not the blob: a real change, or a checkout filter's work (git's status
    // applies the filters and says which).
    let dirty = !index.git_ignores_worktree() && git_reports_change(repo, &tracked.path);
    Ok(explicit(entry, permissions, dirty))
}

fn explicit(entry: Entry, permissions: u32, dirty: bool) -> Inspected {
    Inspected {
        check: Check::Explicit,
        own: None,
        permissions,
        entry: Some(entry),
        dirty,
    }
}

/// Whether git's own status (with filters and `core.fileMode`) calls the file changed.
fn git_reports_change(repo: &Repository, path: &[u8]) -> bool {
    // An error reading the status counts as a change: efix then refuses to start.
    !repo
        .status_file(raw_path(path))
        .is_ok_and(|status| status == Status::CURRENT)
}

/// Whether the file at `abs` holds exactly the blob's bytes (a link: its target).
pub(crate) fn same_as_blob(
    abs: &Path,
    stat: &FileStat,
    oid: Oid,
    odb: &Odb<'_>,
) -> Result<bool, GitError> {
    if stat.is_symlink() {
        let target = fs::read_link(abs).map_err(io_err(format!("read link {}", abs.display())))?;
        let blob = odb.read(oid).map_err(git_err(format!("read blob {oid}")))?;
        return Ok(blob.data() == target.as_os_str().as_bytes());
    }
    if let Ok((size, _)) = odb.read_header(oid)
        && size as u64 != stat.len()
    {
        return Ok(false);
    }
    Ok(Oid::hash_file(ObjectType::Blob, abs).ok() == Some(oid))
}

/// The file at `abs` kept whole: its bytes (large ones in the object database) and
/// permission bits, or its link target; `None` when it vanished meanwhile.
fn kept_whole(odb: &Odb<'_>, abs: &Path) -> Result<Option<Entry>, GitError> {
    let Some(stat) = FileStat::at(abs).map_err(io_err(format!("inspect {}", abs.display())))?
    else {
        return Ok(None);
    };
    if stat.is_symlink() {
        let target = fs::read_link(abs).map_err(io_err(format!("read link {}", abs.display())))?;
        return Ok(Some(Entry::Symlink {
            target: target.as_os_str().as_bytes().to_vec(),
        }));
    }
    if !stat.is_file() {
        return Ok(None);
    }
    let bytes = match fs::read(abs) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(GitError::Io {
                what: format!("read {}", abs.display()),
                source,
            });
        }
    };
    let content = if stat.len() >= LARGE_FILE_BYTES {
        Content::Blob(
            odb.write(ObjectType::Blob, &bytes)
                .map_err(git_err(format!(
                    "keep {} in the object database",
                    abs.display()
                )))?,
        )
    } else {
        Content::Bytes(bytes)
    };
    Ok(Some(Entry::File {
        content,
        permissions: stat.permissions(),
    }))
}

/// Paths whose index entry differs from HEAD's tree (staged changes). The index's tree is
/// the cached one when the index has it, so a clean index costs one comparison.
fn staged(repo: &Repository, index: &mut Index) -> Result<Vec<String>, GitError> {
    let head_tree = match super::super::repo::head_oid(repo)? {
        Some(oid) => Some(
            repo.find_commit(oid)
                .and_then(|commit| commit.tree())
                .map_err(git_err("read the HEAD tree"))?,
        ),
        None => None,
    };
    if !index.has_conflicts()
        && let Ok(tree) = index.write_tree()
        && head_tree.as_ref().map(git2::Tree::id) == Some(tree)
    {
        return Ok(Vec::new());
    }
    if head_tree.is_none() && index.is_empty() {
        return Ok(Vec::new());
    }
    let diff = repo
        .diff_tree_to_index(head_tree.as_ref(), Some(index), None)
        .map_err(git_err("compare the index with HEAD"))?;
    Ok(diff
        .deltas()
        .filter_map(|delta| {
            delta
                .new_file()
                .path_bytes()
                .or_else(|| delta.old_file().path_bytes())
                .map(lossy)
        })
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

pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, GitError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GitError::Io {
            what: format!("read {}", path.display()),
            source,
        }),
    }
}
