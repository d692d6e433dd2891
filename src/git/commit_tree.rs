//! Read-only access to the files of one commit, straight from the object database: what
//! `efix publish` rebuilds the recorded change on, without checking anything out.

use std::path::Path;

use git2::{ObjectType, Oid, Repository};

use super::error::{GitError, git_err};
use super::repo::Repo;

/// Mode of a symbolic link in a tree.
const SYMLINK_MODE: i32 = 0o120000;

/// A file as a commit holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitFile {
    pub bytes: Vec<u8>,
    /// The tree entry's mode: `0o100644`, `0o100755` or `0o120000`.
    pub mode: i32,
}

/// The tree of one commit.
pub struct CommitTree {
    repo: Repository,
    tree: Oid,
    /// The commit's id, as hex.
    pub commit: String,
    /// The tree's id, as hex.
    pub tree_id: String,
}

impl Repo {
    /// The tree of the commit `rev` (any revision git understands).
    pub fn commit_tree(&self, rev: &str) -> Result<CommitTree, GitError> {
        let repo = self.git()?;
        let commit = repo
            .revparse_single(rev)
            .and_then(|object| object.peel_to_commit())
            .map_err(|_| GitError::NoCommit {
                what: format!("named {rev} in {}", self.root.display()),
            })?;
        let (id, tree) = (commit.id(), commit.tree_id());
        drop(commit);
        Ok(CommitTree {
            repo,
            tree,
            commit: id.to_string(),
            tree_id: tree.to_string(),
        })
    }
}

impl CommitTree {
    /// The file at `path` (slash-separated, relative to the root); `None` when the commit has
    /// no file there (absent, a directory or a submodule).
    pub fn file(&self, path: &str) -> Result<Option<CommitFile>, GitError> {
        let tree = self
            .repo
            .find_tree(self.tree)
            .map_err(git_err("read the commit's tree"))?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(entry) => entry,
            Err(err) if err.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(source) => {
                return Err(GitError::Git {
                    what: format!("look up {path} in the commit's tree"),
                    source,
                });
            }
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(git_err(format!("read {path} from the commit")))?;
        Ok(Some(CommitFile {
            bytes: blob.content().to_vec(),
            mode: entry.filemode(),
        }))
    }

    /// Whether `path`, or a directory above it, is a symbolic link in the commit (so a write
    /// through it would land elsewhere).
    pub fn through_symlink(&self, path: &str) -> bool {
        let Ok(tree) = self.repo.find_tree(self.tree) else {
            return true;
        };
        let mut prefix = String::new();
        for part in path.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match tree.get_path(Path::new(&prefix)) {
                Ok(entry) if entry.filemode() == SYMLINK_MODE => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }
}
