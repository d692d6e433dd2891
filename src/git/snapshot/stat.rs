//! When a file's stat data proves it untouched: against the stat data the index recorded (git's
//! own rule, racy entries excepted) or against the snapshot's own stat, and only for files
//! whose last status change is old enough that any later write must move their ctime.
//!
//! Stat data of every tracked file is read in bulk ([`stat_each`]): through a descriptor of
//! each file's directory, so the kernel resolves one name per file instead of the whole path,
//! and on a few threads.

use std::ffi::OsStr;
use std::fs::Metadata;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::IndexEntry;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, fstatat};

/// Files whose status last changed at least this long before the snapshot started can be
/// proven untouched by their stat data: any later write or chmod sets their ctime to a later
/// time, even on filesystems that keep whole seconds and with the kernel's coarse clock.
pub(crate) const STAT_TRUST_MARGIN_SECS: i64 = 2;

/// Index mode of a symbolic link.
pub(crate) const LINK_MODE: u32 = 0o120000;
/// Index mode of a gitlink (a submodule commit).
pub(crate) const GITLINK_MODE: u32 = 0o160000;
/// Index entry flag: `git update-index --assume-unchanged`.
const ASSUME_VALID: u16 = 0x8000;
/// Extended index entry flag: `git update-index --skip-worktree` (sparse checkout).
const SKIP_WORKTREE: u16 = 1 << 14;

/// Tracked files at least this many per thread are worth a thread of their own.
const FILES_PER_THREAD: usize = 4096;
/// Threads that stat files at most.
const MAX_STAT_THREADS: usize = 4;

/// The stat data efix looks at, from `lstat` or `fstatat` (a symbolic link's own, never its
/// target's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    dev: u64,
    ino: u64,
    mode: u32,
    nlink: u64,
    uid: u32,
    gid: u32,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
}

impl FileStat {
    pub(crate) fn of(meta: &Metadata) -> FileStat {
        FileStat {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            nlink: meta.nlink(),
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }

    fn of_libc(stat: &libc::stat) -> FileStat {
        FileStat {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode,
            nlink: stat.st_nlink,
            uid: stat.st_uid,
            gid: stat.st_gid,
            size: u64::try_from(stat.st_size).unwrap_or(0),
            mtime: stat.st_mtime,
            mtime_nsec: stat.st_mtime_nsec,
            ctime: stat.st_ctime,
            ctime_nsec: stat.st_ctime_nsec,
        }
    }

    /// The stat data of `path` (not following a final link); `None` when nothing is there.
    pub(crate) fn at(path: &Path) -> io::Result<Option<FileStat>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(Some(FileStat::of(&meta))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    fn kind(&self) -> u32 {
        self.mode & libc::S_IFMT
    }

    pub(crate) fn is_file(&self) -> bool {
        self.kind() == libc::S_IFREG
    }

    pub(crate) fn is_dir(&self) -> bool {
        self.kind() == libc::S_IFDIR
    }

    pub(crate) fn is_symlink(&self) -> bool {
        self.kind() == libc::S_IFLNK
    }

    pub(crate) fn permissions(&self) -> u32 {
        self.mode & super::PERMISSION_BITS
    }

    pub(crate) fn executable(&self) -> bool {
        self.mode & 0o100 != 0
    }

    pub(crate) fn len(&self) -> u64 {
        self.size
    }

    pub(crate) fn nlink(&self) -> u64 {
        self.nlink
    }
}

/// A file's identity and change time; equal values mean the file was not touched since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatKey {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    ctime: i64,
    ctime_nsec: i64,
}

impl StatKey {
    pub(crate) fn of(stat: &FileStat) -> StatKey {
        StatKey {
            dev: stat.dev,
            ino: stat.ino,
            size: stat.size,
            mode: stat.mode,
            ctime: stat.ctime,
            ctime_nsec: stat.ctime_nsec,
        }
    }
}

/// Whether a file's last status change is old enough, at a snapshot that started at
/// `started` (unix seconds), for its stat data to prove the file untouched later.
pub(crate) fn old_enough(stat: &FileStat, started: i64) -> bool {
    stat.ctime < started - STAT_TRUST_MARGIN_SECS
}

/// Call `each` with every item and the stat data of its repository-relative path (`None`
/// when nothing is there, or only through a link in its directory path), in order, on up to
/// [`MAX_STAT_THREADS`] threads; returns the results in the items' order.
pub(crate) fn stat_each<I, T, F>(
    root: &Path,
    items: &[I],
    path_of: impl Fn(&I) -> &[u8] + Sync,
    each: F,
) -> io::Result<Vec<T>>
where
    I: Sync,
    T: Send,
    F: Fn(&I, Option<FileStat>) -> T + Sync,
{
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_STAT_THREADS)
        .min(items.len() / FILES_PER_THREAD)
        .max(1);
    let run = |chunk: &[I]| -> io::Result<Vec<T>> {
        let mut stater = Stater::new(root)?;
        chunk
            .iter()
            .map(|item| Ok(each(item, stater.lstat(path_of(item))?)))
            .collect()
    };
    if threads == 1 {
        return run(items);
    }
    let size = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|chunk| scope.spawn(move || run(chunk)))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            match handle.join() {
                Ok(part) => out.extend(part?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(out)
    })
}

/// `lstat` of repository paths through a descriptor of their directory. Paths come in index
/// order, so the directories are kept as a stack from the root and each is opened about once.
struct Stater {
    root: OwnedFd,
    /// Open directories from the root down: path and descriptor.
    stack: Vec<(Vec<u8>, OwnedFd)>,
}

impl Stater {
    fn new(root: &Path) -> io::Result<Stater> {
        let root = nix::fcntl::open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        Ok(Stater {
            root,
            stack: Vec::new(),
        })
    }

    fn lstat(&mut self, path: &[u8]) -> io::Result<Option<FileStat>> {
        if path.is_empty() {
            // The root itself.
            let stat = fstatat(&self.root, "", AtFlags::AT_EMPTY_PATH)?;
            return Ok(Some(FileStat::of_libc(&stat)));
        }
        let (parent, name) = match path.iter().rposition(|b| *b == b'/') {
            Some(at) => (&path[..at], &path[at + 1..]),
            None => (&path[..0], path),
        };
        if !self.enter(parent)? {
            return Ok(None);
        }
        let dir = self.stack.last().map_or(&self.root, |(_, fd)| fd);
        match fstatat(dir, OsStr::from_bytes(name), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(FileStat::of_libc(&stat))),
            Err(Errno::ENOENT | Errno::ENOTDIR) => Ok(None),
            Err(errno) => Err(io::Error::from(errno)),
        }
    }

    /// Make `dir` the top of the stack, opening it one name at a time without following
    /// links; false when some part of it is missing or is not a directory.
    fn enter(&mut self, dir: &[u8]) -> io::Result<bool> {
        while let Some((open, _)) = self.stack.last() {
            let inside = dir.starts_with(open) && dir.get(open.len()).is_none_or(|b| *b == b'/');
            if inside {
                break;
            }
            self.stack.pop();
        }
        let mut done = self.stack.last().map_or(0, |(open, _)| open.len());
        while done < dir.len() {
            let start = if done == 0 { 0 } else { done + 1 };
            let end = dir[start..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(dir.len(), |at| start + at);
            let base = self.stack.last().map_or(&self.root, |(_, fd)| fd);
            match openat(
                base,
                OsStr::from_bytes(&dir[start..end]),
                OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => self.stack.push((dir[..end].to_vec(), fd)),
                Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => return Ok(false),
                Err(errno) => return Err(io::Error::from(errno)),
            }
            done = end;
        }
        Ok(true)
    }
}

/// A seconds + nanoseconds timestamp as the index keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Stamp {
    pub secs: u32,
    pub nanos: u32,
}

/// The stat data an index entry recorded, as git compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexStat {
    ctime: Stamp,
    mtime: Stamp,
    ino: u32,
    uid: u32,
    gid: u32,
    size: u32,
    /// The entry's mode: file type and, for regular files, the executable bit.
    mode: u32,
    flags: u16,
    flags_extended: u16,
}

impl IndexStat {
    pub(crate) fn of(entry: &IndexEntry) -> IndexStat {
        IndexStat {
            ctime: Stamp {
                secs: entry.ctime.seconds() as u32,
                nanos: entry.ctime.nanoseconds(),
            },
            mtime: Stamp {
                secs: entry.mtime.seconds() as u32,
                nanos: entry.mtime.nanoseconds(),
            },
            ino: entry.ino,
            uid: entry.uid,
            gid: entry.gid,
            size: entry.file_size,
            mode: entry.mode,
            flags: entry.flags,
            flags_extended: entry.flags_extended,
        }
    }

    /// The entry's mode: `0o100644`, `0o100755`, `0o120000` (a link) or `0o160000`.
    pub(crate) fn mode(&self) -> u32 {
        self.mode
    }

    /// The merge stage (0 for a normal entry, 1–3 for a conflict).
    pub(crate) fn stage(&self) -> u16 {
        (self.flags >> 12) & 0x3
    }

    /// `--assume-unchanged` or `--skip-worktree`: git stops looking at the file, so neither
    /// its stat data nor git's status says anything about it.
    pub(crate) fn git_ignores_worktree(&self) -> bool {
        self.flags & ASSUME_VALID != 0 || self.flags_extended & SKIP_WORKTREE != 0
    }

    /// `--skip-worktree`: the file is meant to be absent (sparse checkout).
    pub(crate) fn skip_worktree(&self) -> bool {
        self.flags_extended & SKIP_WORKTREE != 0
    }

    /// Whether the entry was recorded so close to the index's own write that a change in the
    /// same tick would not show in its stat data (git's "racily clean" entries).
    pub(crate) fn racy(&self, index_mtime: Stamp) -> bool {
        if self.mtime.secs != index_mtime.secs {
            return self.mtime.secs > index_mtime.secs;
        }
        // Same second: without nanoseconds on either side, the entry is racy.
        self.mtime.nanos == 0 || index_mtime.nanos == 0 || self.mtime.nanos >= index_mtime.nanos
    }

    /// Whether the file's stat data is what the index recorded (git's `match_stat_data`, with
    /// ctime always trusted and nanoseconds compared where the index has them).
    pub(crate) fn matches(&self, stat: &FileStat) -> bool {
        let same_kind = if self.mode == LINK_MODE {
            stat.is_symlink()
        } else {
            stat.is_file() && stat.executable() == (self.mode & 0o100 != 0)
        };
        same_kind
            && self.size == stat.size as u32
            && stamp_matches(self.mtime, stat.mtime, stat.mtime_nsec)
            && stamp_matches(self.ctime, stat.ctime, stat.ctime_nsec)
            && self.ino == stat.ino as u32
            && self.uid == stat.uid
            && self.gid == stat.gid
    }
}

fn stamp_matches(recorded: Stamp, secs: i64, nanos: i64) -> bool {
    recorded.secs == secs as u32 && (recorded.nanos == 0 || i64::from(recorded.nanos) == nanos)
}

/// The index file's modification time, the cut-off for racily clean entries.
pub(crate) fn stamp_of(meta: &Metadata) -> Stamp {
    Stamp {
        secs: meta.mtime() as u32,
        nanos: meta.mtime_nsec() as u32,
    }
}
