//! Opening a repository and listing its files: tracked, dirty, untracked-not-ignored.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, Repository, Status, StatusOptions};

use super::error::{GitError, git_err};

/// Open the repository whose working tree is exactly `root`, for every git access of efix.
///
/// efix's git is libgit2, which never runs hooks (`core.hooksPath` included), has no
/// `core.fsmonitor` and runs no `filter.<driver>` command, so what a repository's config sets
/// there cannot execute anything in efix. What the config can still do is move the working
/// tree (`core.worktree`): a command that rewrote `.git/config` mid-run would have efix
/// snapshot, restore and delete in another directory. So the working tree is checked on every
/// open, and a moved one stops efix.
pub(crate) fn open_at(root: &Path) -> Result<Repository, GitError> {
    let repo = Repository::open_ext(
        root,
        git2::RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&OsStr>(),
    )
    .map_err(git_err(format!(
        "open the repository at {}",
        root.display()
    )))?;
    let workdir = repo.workdir().map(|w| w.components().collect::<PathBuf>());
    if workdir.as_deref() != Some(root) {
        return Err(GitError::WorkTreeMoved {
            root: root.to_path_buf(),
            workdir,
        });
    }
    Ok(repo)
}

/// Index mode of a gitlink (a submodule commit); it names no file in this working tree.
const GITLINK_MODE: u32 = 0o160000;

/// A repository opened at its work-tree root.
///
/// Only the root is kept: every method reopens the repository, so a `Repo` is cheap to clone
/// and to send across threads, and always sees the current index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub root: PathBuf,
}

impl Repo {
    /// Open the repository containing `path`; the root is its working tree.
    pub fn open(path: &Path) -> Result<Repo, GitError> {
        let repo = Repository::discover(path).map_err(|source| match source.code() {
            ErrorCode::NotFound => GitError::NotARepository {
                path: path.to_path_buf(),
            },
            _ => GitError::Git {
                what: format!("open the repository containing {}", path.display()),
                source,
            },
        })?;
        let Some(workdir) = repo.workdir() else {
            return Err(GitError::BareRepository {
                path: repo.path().to_path_buf(),
            });
        };
        // Normalise away the trailing slash libgit2 leaves on the work directory.
        let root = workdir.components().collect::<PathBuf>();
        Ok(Repo { root })
    }

    /// The libgit2 handle, opened exactly at the root (no discovery above it).
    pub(crate) fn git(&self) -> Result<Repository, GitError> {
        open_at(&self.root)
    }

    /// The commit HEAD points to, as hex; `None` when HEAD is unborn (no commit yet).
    pub fn head_commit(&self) -> Result<Option<String>, GitError> {
        let repo = self.git()?;
        head_oid(&repo).map(|oid| oid.map(|oid| oid.to_string()))
    }

    /// Paths that make the tree "not clean": modified, staged, deleted or conflicted tracked
    /// files and untracked files that are not ignored; sorted.
    pub fn dirty_paths(&self) -> Result<Vec<String>, GitError> {
        let repo = self.git()?;
        let mut paths: Vec<String> = statuses(&repo)?
            .into_iter()
            .filter(|(_, status)| !status.is_ignored() && *status != Status::CURRENT)
            .map(|(path, _)| lossy(&path))
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Paths in the index (the tracked files), sorted; gitlinks are left out.
    pub fn tracked_files(&self) -> Result<Vec<String>, GitError> {
        let repo = self.git()?;
        Ok(tracked_raw(&repo)?.iter().map(|path| lossy(path)).collect())
    }

    /// Tracked files plus untracked files that are not ignored, sorted. Tracked files deleted
    /// from the working tree are still listed.
    pub fn files_not_ignored(&self) -> Result<Vec<String>, GitError> {
        let repo = self.git()?;
        let mut paths: Vec<String> = not_ignored_raw(&repo)?
            .iter()
            .map(|path| lossy(path))
            .collect();
        // Lossy conversion can merge or reorder non-UTF-8 names.
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// The directories git ignores, each as its top-most ignored path (`node_modules`,
    /// `pkg/web/node_modules`, `.venv`), sorted; ignored files are left out.
    pub fn ignored_dirs(&self) -> Result<Vec<String>, GitError> {
        let repo = self.git()?;
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(true)
            .recurse_ignored_dirs(false)
            .include_unmodified(false)
            .exclude_submodules(true);
        let statuses = repo
            .statuses(Some(&mut opts))
            .map_err(git_err("read the ignored paths"))?;
        let mut dirs: Vec<String> = statuses
            .iter()
            .filter(|entry| entry.status().is_ignored())
            .filter_map(|entry| {
                let path = lossy(entry.path_bytes());
                path.strip_suffix('/').map(str::to_owned)
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        Ok(dirs)
    }
}

/// HEAD's commit id, `None` when HEAD is unborn.
pub(crate) fn head_oid(repo: &Repository) -> Result<Option<git2::Oid>, GitError> {
    match repo.head() {
        Ok(head) => {
            let commit = head
                .peel_to_commit()
                .map_err(git_err("resolve HEAD to a commit"))?;
            Ok(Some(commit.id()))
        }
        Err(err) if matches!(err.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
        Err(source) => Err(GitError::Git {
            what: "read HEAD".to_owned(),
            source,
        }),
    }
}

/// Status of every non-current path: raw path bytes and flags. Untracked directories are
/// listed file by file; submodules are excluded.
pub(crate) fn statuses(repo: &Repository) -> Result<Vec<(Vec<u8>, Status)>, GitError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_unmodified(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(git_err("read the working-tree status"))?;
    Ok(statuses
        .iter()
        .map(|entry| (entry.path_bytes().to_vec(), entry.status()))
        .collect())
}

/// Index paths as raw bytes, sorted and deduplicated (conflict stages share a path).
pub(crate) fn tracked_raw(repo: &Repository) -> Result<Vec<Vec<u8>>, GitError> {
    let index = repo.index().map_err(git_err("read the index"))?;
    let mut paths: Vec<Vec<u8>> = index
        .iter()
        .filter(|entry| entry.mode != GITLINK_MODE)
        .map(|entry| entry.path)
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// Tracked plus untracked-not-ignored paths as raw bytes, sorted.
pub(crate) fn not_ignored_raw(repo: &Repository) -> Result<Vec<Vec<u8>>, GitError> {
    let mut paths = tracked_raw(repo)?;
    paths.extend(
        statuses(repo)?
            .into_iter()
            .filter(|(_, status)| status.is_wt_new())
            .map(|(path, _)| path),
    );
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// A repository-relative raw path as a filesystem path.
pub(crate) fn raw_path(raw: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(raw))
}

/// A raw path for display and for the `String` interfaces.
pub(crate) fn lossy(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

/// The metadata of `path` without following a final symlink; `None` when it does not exist.
pub(crate) fn metadata_if_present(path: &Path) -> Result<Option<std::fs::Metadata>, GitError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GitError::Io {
            what: format!("inspect {}", path.display()),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_moved_by_the_config_stops_efix() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let elsewhere = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let repo = super::super::init_with_files(&dir.path().join("r"), &[("a", b"1")], "one")
            .unwrap_or_else(|e| panic!("{e}"));
        let opened_before = repo.git().is_ok();
        let config = repo.root.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap_or_default();
        text.push_str(&format!(
            "[core]\n\tworktree = {}\n",
            elsewhere.path().display()
        ));
        std::fs::write(&config, text).unwrap_or_else(|e| panic!("{e}"));
        let refused = matches!(repo.git(), Err(GitError::WorkTreeMoved { .. }));
        assert_eq!((opened_before, refused), (true, true));
    }
}
