//! When a file's stat data proves it untouched: against the stat data the index recorded (git's
//! own rule, racy entries excepted) or against the snapshot's own stat, and only for files
//! whose last status change is old enough that any later write must move their ctime.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use git2::IndexEntry;

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
    pub(crate) fn of(meta: &Metadata) -> StatKey {
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

/// Whether `meta`'s last status change is old enough, at a snapshot that started at
/// `started` (unix seconds), for its stat data to prove the file untouched later.
pub(crate) fn old_enough(meta: &Metadata, started: i64) -> bool {
    meta.ctime() < started - STAT_TRUST_MARGIN_SECS
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
    pub(crate) fn matches(&self, meta: &Metadata) -> bool {
        let same_kind = if self.mode == LINK_MODE {
            meta.file_type().is_symlink()
        } else {
            meta.is_file() && (meta.mode() & 0o100 != 0) == (self.mode & 0o100 != 0)
        };
        same_kind
            && self.size == meta.size() as u32
            && stamp_matches(self.mtime, meta.mtime(), meta.mtime_nsec())
            && stamp_matches(self.ctime, meta.ctime(), meta.ctime_nsec())
            && self.ino == meta.ino() as u32
            && self.uid == meta.uid()
            && self.gid == meta.gid()
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
