//! Scratch copies of a repository and fresh single-commit repositories.
//!
//! A scratch copy is a new repository holding one commit whose tree is the requested commit's
//! tree object for object (same tree id), checked out. History is not copied: `efix verify`
//! and `efix demo` only need the tree, and copying objects of one tree works for any commit
//! in the source's object database, reachable from a ref or not.

use std::fs;
use std::path::{Component, Path};

use git2::{ObjectType, Odb, Oid, Repository, Signature};

use super::error::{GitError, git_err, io_err};
use super::repo::{Repo, head_oid};

/// Author and committer of every commit efix makes here; fixed so no git user config is
/// needed.
const EFIX_NAME: &str = "efix";
const EFIX_EMAIL: &str = "efix@localhost";

impl Repo {
    /// Make `dest` a new repository whose HEAD commit has the tree of `at_commit` (any
    /// revision git understands) or of HEAD, and check it out.
    pub fn copy_to(&self, dest: &Path, at_commit: Option<&str>) -> Result<Repo, GitError> {
        let src = self.git()?;
        let commit = match at_commit {
            Some(rev) => src
                .revparse_single(rev)
                .and_then(|object| object.peel_to_commit())
                .map_err(|_| GitError::NoCommit {
                    what: format!("named {rev}"),
                })?,
            None => {
                let oid = head_oid(&src)?.ok_or_else(|| GitError::NoCommit {
                    what: "at HEAD".to_owned(),
                })?;
                src.find_commit(oid)
                    .map_err(git_err("read the HEAD commit"))?
            }
        };
        let tree_id = commit.tree_id();
        fs::create_dir_all(dest).map_err(io_err(format!("create {}", dest.display())))?;
        let dst = Repository::init(dest).map_err(git_err(format!(
            "create a repository at {}",
            dest.display()
        )))?;
        let src_odb = src
            .odb()
            .map_err(git_err("open the source object database"))?;
        let dst_odb = dst
            .odb()
            .map_err(git_err("open the copy's object database"))?;
        copy_tree(&src, &src_odb, &dst_odb, tree_id)?;
        let message = format!("efix scratch copy of {}", commit.id());
        commit_tree(&dst, tree_id, &message)?;
        Repo::open(dest)
    }
}

/// Create a repository at `dest` holding `files` (repository-relative path, bytes) in one
/// commit by `efix <efix@localhost>`, checked out.
pub fn init_with_files(
    dest: &Path,
    files: &[(&str, &[u8])],
    message: &str,
) -> Result<Repo, GitError> {
    fs::create_dir_all(dest).map_err(io_err(format!("create {}", dest.display())))?;
    let repo = Repository::init(dest).map_err(git_err(format!(
        "create a repository at {}",
        dest.display()
    )))?;
    let mut index = repo.index().map_err(git_err("open the index"))?;
    for (path, bytes) in files {
        let rel = Path::new(path);
        if !rel
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
        {
            return Err(GitError::Io {
                what: format!("write {path}"),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the path must be relative and stay inside the repository",
                ),
            });
        }
        let abs = dest.join(rel);
        if let Some(parent) = abs.parent() {
            fs::create_dir_all(parent)
                .map_err(io_err(format!("create directory {}", parent.display())))?;
        }
        fs::write(&abs, bytes).map_err(io_err(format!("write {}", abs.display())))?;
        index
            .add_path(rel)
            .map_err(git_err(format!("add {path} to the index")))?;
    }
    index.write().map_err(git_err("write the index"))?;
    let tree_id = index.write_tree().map_err(git_err("write the tree"))?;
    commit_tree(&repo, tree_id, message)?;
    Repo::open(dest)
}

/// Commit `tree_id` as a root commit on HEAD and check it out, overwriting the work tree.
fn commit_tree(repo: &Repository, tree_id: Oid, message: &str) -> Result<(), GitError> {
    let tree = repo
        .find_tree(tree_id)
        .map_err(git_err("read the tree to commit"))?;
    let signature =
        Signature::now(EFIX_NAME, EFIX_EMAIL).map_err(git_err("make the efix signature"))?;
    repo.commit(Some("HEAD"), &signature, &signature, message, &tree, &[])
        .map_err(git_err("commit"))?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force();
    repo.checkout_head(Some(&mut checkout))
        .map_err(git_err("check out the new commit"))
}

/// Copy a tree and everything under it (blobs and subtrees, not submodule commits) object
/// for object, so the copy's tree id is the source's.
fn copy_tree(src: &Repository, src_odb: &Odb, dst_odb: &Odb, tree_id: Oid) -> Result<(), GitError> {
    if dst_odb.exists(tree_id) {
        return Ok(());
    }
    let tree = src
        .find_tree(tree_id)
        .map_err(git_err(format!("read tree {tree_id}")))?;
    for entry in tree.iter() {
        match entry.kind() {
            Some(ObjectType::Tree) => copy_tree(src, src_odb, dst_odb, entry.id())?,
            Some(ObjectType::Blob) => copy_object(src_odb, dst_odb, entry.id())?,
            // Gitlinks name commits of other repositories; there is nothing here to copy.
            _ => {}
        }
    }
    copy_object(src_odb, dst_odb, tree_id)
}

fn copy_object(src_odb: &Odb, dst_odb: &Odb, oid: Oid) -> Result<(), GitError> {
    if dst_odb.exists(oid) {
        return Ok(());
    }
    let object = src_odb
        .read(oid)
        .map_err(git_err(format!("read object {oid}")))?;
    dst_odb
        .write(object.kind(), object.data())
        .map_err(git_err(format!("write object {oid}")))?;
    Ok(())
}
