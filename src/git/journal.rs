//! The journal of a run in progress: the snapshot made durable before efix or any command
//! writes to the working tree, so that even `kill -9` loses nothing.
//!
//! Under `<git dir>/efix/`: `index` (a copy of the index file), `journal.json` (who runs, where
//! its artifacts are, HEAD, `info/exclude`, permission bits that differ from the usual ones,
//! the paths the snapshot kept whole with their blob ids, and the files efix wrote), both
//! written through a temporary file, `fsync` and a rename, the journal last. A ref
//! (`refs/efix/snapshot`, or `refs/efix/worktrees/<name>` for a linked worktree) keeps the base
//! commit and those blobs out of reach of `git gc` while the run lasts. A journal that exists
//! means a run that has not restored its tree; it is removed when the run ends either way (a
//! proven fix left applied, or the tree restored).
//!
//! Reloaded, the journal gives back a [`Snapshot`] that restores byte for byte. It proves
//! files untouched by the index copy's stat data alone (the snapshot's own stat data for
//! files the index did not cover is not kept) and reads every directory, so the first
//! restore after a crash may hash more than a restore inside a run does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use git2::{Index, ObjectType, Oid, Repository, Signature};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::{GitError, git_err, io_err};
use super::lock::STATE_DIR;
use super::repo::Repo;
use super::snapshot::{
    Check, Content, Entry, HeadState, IndexStat, RestoreReport, STAT_TRUST_MARGIN_SECS, Snapshot,
    Stamp, Tracked,
};

/// The journal file's name in the state directory.
const JOURNAL_FILE: &str = "journal.json";
/// The index copy's name in the state directory.
const INDEX_COPY: &str = "index";
/// The journal format this build reads and writes.
const JOURNAL_VERSION: u32 = 1;
/// Prefix of a path or byte string stored as base64 (not UTF-8, or starting with it).
const BASE64_PREFIX: &str = "base64:";
/// Index mode of an executable file.
const EXECUTABLE_MODE: u32 = 0o100755;
/// Index mode of a gitlink.
const GITLINK_MODE: u32 = 0o160000;

/// Who started a run, and where its artifacts are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunRecord {
    pub pid: u32,
    pub started_at: String,
    /// The working tree's root.
    pub root: String,
    /// The run's artifacts directory (what `efix run --resume` takes).
    pub artifacts: Option<String>,
}

/// A run's durable snapshot, open for updates until the run ends.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    git_dir: PathBuf,
    file: JournalFile,
}

/// A run that ended without restoring its tree (killed, or its restore failed).
#[derive(Debug)]
pub struct Unfinished {
    pub run: RunRecord,
    pub snapshot: Snapshot,
    journal: Journal,
}

impl Unfinished {
    /// Put the tree back as the run found it, then remove the journal.
    pub fn restore(self) -> Result<(RunRecord, RestoreReport), GitError> {
        let report = self.snapshot.restore()?;
        self.journal.finish()?;
        Ok((self.run, report))
    }
}

impl Journal {
    /// Make `snapshot` durable for the run described by `run`. Call before anything writes
    /// to the working tree.
    pub fn begin(repo: &Repo, snapshot: &Snapshot, run: RunRecord) -> Result<Journal, GitError> {
        let git = repo.git()?;
        let dir = repo.state_dir()?;
        let odb = git.odb().map_err(git_err("open the object database"))?;
        let mut entries = Vec::new();
        let mut blobs = Vec::new();
        for (path, entry) in &snapshot.entries {
            let saved = match entry {
                Entry::Absent => SavedEntry::Absent { path: raw(path) },
                Entry::Symlink { target } => SavedEntry::Symlink {
                    path: raw(path),
                    target: raw(target),
                },
                Entry::File {
                    content,
                    permissions,
                } => {
                    let oid = match content {
                        Content::Blob(oid) => *oid,
                        Content::Bytes(bytes) => odb
                            .write(ObjectType::Blob, bytes)
                            .map_err(git_err("keep a file of the snapshot"))?,
                    };
                    blobs.push(oid);
                    SavedEntry::File {
                        path: raw(path),
                        blob: oid.to_string(),
                        permissions: *permissions,
                    }
                }
            };
            entries.push(saved);
        }
        let reference = protect(&git, &blobs)?;
        let file = JournalFile {
            version: JOURNAL_VERSION,
            run,
            snapshot: SavedSnapshot {
                started: snapshot.started,
                index: snapshot.index.is_some(),
                index_mtime: [snapshot.index_mtime.secs, snapshot.index_mtime.nanos],
                head_file: snapshot.head.file.as_deref().map(raw),
                branch: snapshot
                    .head
                    .branch
                    .as_ref()
                    .map(|(name, commit)| SavedBranch {
                        name: name.clone(),
                        commit: commit.map(|c| c.to_string()),
                    }),
                exclude: snapshot.exclude.as_deref().map(raw),
                permissions: SavedPermissions::of(&snapshot.tracked),
                entries,
                written: snapshot.written.iter().map(|p| raw(p)).collect(),
                reference,
            },
        };
        if let Some(index) = &snapshot.index {
            // The journal's own write below syncs the directory for both renames.
            write_synced(&dir.join(INDEX_COPY), index)?;
        }
        let journal = Journal {
            dir,
            git_dir: git.path().to_path_buf(),
            file,
        };
        journal.save()?;
        Ok(journal)
    }

    /// Record files efix is about to write (durably, before it writes them).
    pub fn note_written<'p>(
        &mut self,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> Result<(), GitError> {
        let before = self.file.snapshot.written.len();
        for path in paths {
            let path = raw(path.as_bytes());
            if !self.file.snapshot.written.contains(&path) {
                self.file.snapshot.written.push(path);
            }
        }
        if self.file.snapshot.written.len() == before {
            return Ok(());
        }
        self.save()
    }

    /// The run this journal belongs to.
    pub fn run(&self) -> &RunRecord {
        &self.file.run
    }

    /// End the run's journal: the tree is restored, or changed on purpose.
    pub fn finish(self) -> Result<(), GitError> {
        let journal = self.dir.join(JOURNAL_FILE);
        match fs::remove_file(&journal) {
            Err(err) if err.kind() != ErrorKind::NotFound => {
                return Err(GitError::Io {
                    what: format!("remove {}", journal.display()),
                    source: err,
                });
            }
            _ => {}
        }
        sync_dir(&self.dir)?;
        let _ = fs::remove_file(self.dir.join(INDEX_COPY));
        if let Some(name) = &self.file.snapshot.reference
            && let Ok(repo) = Repository::open(&self.git_dir)
            && let Ok(mut reference) = repo.find_reference(name)
        {
            reference
                .delete()
                .map_err(git_err(format!("delete {name}")))?;
        }
        Ok(())
    }

    /// The unfinished run of this working tree, if its journal is there. Call with the
    /// working tree's lock held, so a journal found is a dead run's.
    pub fn unfinished(repo: &Repo) -> Result<Option<Unfinished>, GitError> {
        let git = repo.git()?;
        let dir = git.path().join(STATE_DIR);
        let path = dir.join(JOURNAL_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(GitError::Io {
                    what: format!("read {}", path.display()),
                    source,
                });
            }
        };
        let damaged = |message: String| GitError::Journal {
            path: path.clone(),
            message,
        };
        let file: JournalFile = serde_json::from_str(&text).map_err(|e| damaged(e.to_string()))?;
        if file.version != JOURNAL_VERSION {
            return Err(damaged(format!(
                "version {} is not supported (this efix writes {JOURNAL_VERSION})",
                file.version
            )));
        }
        let snapshot = reload(repo, &git, &dir, &file.snapshot).map_err(damaged)?;
        Ok(Some(Unfinished {
            run: file.run.clone(),
            snapshot,
            journal: Journal {
                dir,
                git_dir: git.path().to_path_buf(),
                file,
            },
        }))
    }

    fn save(&self) -> Result<(), GitError> {
        let text = serde_json::to_string_pretty(&self.file).map_err(|err| GitError::Io {
            what: "serialize the journal".to_owned(),
            source: std::io::Error::other(err),
        })?;
        write_durable(&self.dir.join(JOURNAL_FILE), text.as_bytes())
    }
}

/// Keep the base commit and the kept blobs reachable under a ref of this working tree's own;
/// returns the ref's name (none for an unborn branch with nothing kept).
fn protect(repo: &Repository, blobs: &[Oid]) -> Result<Option<String>, GitError> {
    let name = match repo.path().parent().and_then(Path::file_name) {
        Some(worktrees) if repo.is_worktree() && worktrees == "worktrees" => format!(
            "refs/efix/worktrees/{}",
            repo.path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        _ => "refs/efix/snapshot".to_owned(),
    };
    let head = super::repo::head_oid(repo)?;
    let target = if blobs.is_empty() {
        head
    } else {
        let mut tree = repo
            .treebuilder(None)
            .map_err(git_err("build the snapshot tree"))?;
        for (n, oid) in blobs.iter().enumerate() {
            tree.insert(n.to_string(), *oid, 0o100644)
                .map_err(git_err("build the snapshot tree"))?;
        }
        let tree = tree.write().map_err(git_err("write the snapshot tree"))?;
        let tree = repo
            .find_tree(tree)
            .map_err(git_err("read the snapshot tree"))?;
        let signature =
            Signature::now("efix", "efix@localhost").map_err(git_err("make the efix signature"))?;
        let parent = head.and_then(|oid| repo.find_commit(oid).ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        Some(
            repo.commit(
                None,
                &signature,
                &signature,
                "efix: files kept by the snapshot of a run in progress",
                &tree,
                &parents,
            )
            .map_err(git_err("write the snapshot commit"))?,
        )
    };
    let Some(target) = target else {
        return Ok(None);
    };
    repo.reference(&name, target, true, "efix: run in progress")
        .map_err(git_err(format!("write {name}")))?;
    Ok(Some(name))
}

/// Rebuild the snapshot the journal describes.
fn reload(
    repo: &Repo,
    git: &Repository,
    dir: &Path,
    saved: &SavedSnapshot,
) -> Result<Snapshot, String> {
    let index_bytes = if saved.index {
        Some(fs::read(dir.join(INDEX_COPY)).map_err(|e| format!("the index copy: {e}"))?)
    } else {
        None
    };
    let index_mtime = Stamp {
        secs: saved.index_mtime[0],
        nanos: saved.index_mtime[1],
    };
    let mut entries = BTreeMap::new();
    for entry in &saved.entries {
        let (path, entry) = match entry {
            SavedEntry::Absent { path } => (path.0.clone(), Entry::Absent),
            SavedEntry::Symlink { path, target } => (
                path.0.clone(),
                Entry::Symlink {
                    target: target.0.clone(),
                },
            ),
            SavedEntry::File {
                path,
                blob,
                permissions,
            } => (
                path.0.clone(),
                Entry::File {
                    content: Content::Blob(Oid::from_str(blob).map_err(|e| e.to_string())?),
                    permissions: *permissions,
                },
            ),
        };
        entries.insert(path, entry);
    }
    let exceptions: BTreeMap<&[u8], u32> = saved
        .permissions
        .exceptions
        .iter()
        .map(|e| (e.path.0.as_slice(), e.mode))
        .collect();
    let mut tracked = Vec::new();
    let mut gitlinks = Vec::new();
    if saved.index {
        let index =
            Index::open(&dir.join(INDEX_COPY)).map_err(|e| format!("the index copy: {e}"))?;
        for entry in index.iter() {
            let stat = IndexStat::of(&entry);
            if entry.mode == GITLINK_MODE {
                gitlinks.push(entry.path);
                continue;
            }
            if stat.stage() != 0 {
                continue;
            }
            let old = i64::from(entry.ctime.seconds()) < saved.started - STAT_TRUST_MARGIN_SECS;
            let check = if entries.contains_key(&entry.path) {
                Check::Explicit
            } else if old && !stat.racy(index_mtime) && !stat.git_ignores_worktree() {
                Check::Index
            } else {
                Check::Content
            };
            let permissions = match exceptions.get(entry.path.as_slice()) {
                Some(mode) => *mode,
                None => saved.permissions.usual(entry.mode),
            };
            tracked.push(Tracked {
                path: entry.path,
                oid: entry.id,
                stat,
                check,
                permissions,
            });
        }
    }
    tracked.sort_by(|a, b| a.path.cmp(&b.path));
    gitlinks.sort();
    let branch = match &saved.branch {
        Some(branch) => Some((
            branch.name.clone(),
            match &branch.commit {
                Some(commit) => Some(Oid::from_str(commit).map_err(|e| e.to_string())?),
                None => None,
            },
        )),
        None => None,
    };
    Ok(Snapshot {
        root: repo.root.clone(),
        git_dir: git.path().to_path_buf(),
        common_dir: git.commondir().to_path_buf(),
        started: saved.started,
        index: index_bytes,
        index_mtime,
        index_key: None,
        tracked,
        own: Vec::new(),
        gitlinks,
        entries,
        dirs: BTreeMap::new(),
        head: HeadState {
            file: saved.head_file.as_ref().map(|f| f.0.clone()),
            branch,
        },
        exclude: saved.exclude.as_ref().map(|e| e.0.clone()),
        written: saved
            .written
            .iter()
            .map(|p| p.0.clone())
            .collect::<BTreeSet<_>>(),
        dirty: Vec::new(),
    })
}

/// Write through a temporary file, `fsync` it, rename it into place and `fsync` the
/// directory, so the file is either the old one or the new one whole, even after a crash.
fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), GitError> {
    write_synced(path, bytes)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

/// [`write_durable`] without the directory's `fsync` (the caller does it once for several).
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), GitError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let what = || format!("write {}", path.display());
    let mut file = File::create(&tmp).map_err(|e| GitError::Io {
        what: what(),
        source: e,
    })?;
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(|e| GitError::Io {
            what: what(),
            source: e,
        })?;
    fs::rename(&tmp, path).map_err(|e| GitError::Io {
        what: what(),
        source: e,
    })
}

fn sync_dir(dir: &Path) -> Result<(), GitError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(format!("sync {}", dir.display())))
}

/// The journal file (`journal.json`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct JournalFile {
    version: u32,
    run: RunRecord,
    snapshot: SavedSnapshot,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct SavedSnapshot {
    /// When the snapshot started, unix seconds.
    started: i64,
    /// Whether there was an index file (its copy is `index` beside the journal).
    index: bool,
    /// The index file's modification time then, seconds and nanoseconds.
    index_mtime: [u32; 2],
    head_file: Option<Raw>,
    branch: Option<SavedBranch>,
    exclude: Option<Raw>,
    permissions: SavedPermissions,
    entries: Vec<SavedEntry>,
    written: Vec<Raw>,
    /// The ref that keeps the base commit and the kept blobs reachable.
    reference: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct SavedBranch {
    name: String,
    commit: Option<String>,
}

/// Permission bits of tracked files: the usual ones for plain and executable files, and the
/// files that have others.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct SavedPermissions {
    file: u32,
    executable: u32,
    exceptions: Vec<SavedMode>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct SavedMode {
    path: Raw,
    mode: u32,
}

impl SavedPermissions {
    fn of(tracked: &[Tracked]) -> SavedPermissions {
        let mut counts: [BTreeMap<u32, usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
        let present = || {
            tracked
                .iter()
                .filter(|t| t.check != Check::Explicit && t.stat.mode() != 0o120000)
        };
        for t in present() {
            let class = usize::from(t.stat.mode() == EXECUTABLE_MODE);
            *counts[class].entry(t.permissions).or_default() += 1;
        }
        let usual = |class: usize, fallback: u32| {
            counts[class]
                .iter()
                .max_by_key(|(_, n)| **n)
                .map_or(fallback, |(mode, _)| *mode)
        };
        let (file, executable) = (usual(0, 0o644), usual(1, 0o755));
        let exceptions = present()
            .filter(|t| {
                let expected = if t.stat.mode() == EXECUTABLE_MODE {
                    executable
                } else {
                    file
                };
                t.permissions != expected
            })
            .map(|t| SavedMode {
                path: raw(&t.path),
                mode: t.permissions,
            })
            .collect();
        SavedPermissions {
            file,
            executable,
            exceptions,
        }
    }

    fn usual(&self, index_mode: u32) -> u32 {
        match index_mode {
            EXECUTABLE_MODE => self.executable,
            0o120000 => 0,
            _ => self.file,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
enum SavedEntry {
    File {
        path: Raw,
        blob: String,
        permissions: u32,
    },
    Symlink {
        path: Raw,
        target: Raw,
    },
    Absent {
        path: Raw,
    },
}

/// Bytes (a path, a link target, a small file) stored as text when they are UTF-8, else as
/// `base64:` and their base64 form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Raw(Vec<u8>);

fn raw(bytes: &[u8]) -> Raw {
    Raw(bytes.to_vec())
}

impl Serialize for Raw {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) if !text.starts_with(BASE64_PREFIX) => serializer.serialize_str(text),
            _ => serializer.serialize_str(&format!(
                "{BASE64_PREFIX}{}",
                base64::engine::general_purpose::STANDARD.encode(&self.0)
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Raw, D::Error> {
        let text = String::deserialize(deserializer)?;
        match text.strip_prefix(BASE64_PREFIX) {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Raw)
                .map_err(serde::de::Error::custom),
            None => Ok(Raw(text.into_bytes())),
        }
    }
}
