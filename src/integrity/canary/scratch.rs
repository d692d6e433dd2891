//! The scratch copy canaries run in: every file of the working tree that git does not ignore
//! (the whole change included), copied into a private temporary directory, with the ignored
//! dependency directories (`node_modules`, `.venv`, ...) linked rather than copied. The
//! user's tree is only read; the copy is removed when the value is dropped.
//!
//! Ignored build output (`target`, `__pycache__`, caches) is neither copied nor linked: a
//! build in the copy writes its own, so nothing the canary run does can reach the user's.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::CanaryError;

/// Ignored directories that are build output or caches, never linked into the copy.
const NOT_LINKED: &[&str] = &[
    "target",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".git",
    "efix-artifacts",
];

/// A scratch copy of the repository.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// Copy the working tree at `root`, leaving out `skip` (efix's artifacts directory when
    /// it is inside the repository).
    pub(crate) fn copy(root: &Path, skip: &Path) -> Result<Scratch, CanaryError> {
        let repo = git2::Repository::open(root).map_err(|e| CanaryError::Scratch {
            path: root.to_path_buf(),
            source: io::Error::other(e.message().to_owned()),
        })?;
        let dir = tempfile::Builder::new()
            .prefix("efix-canary-")
            .tempdir()
            .map_err(|source| CanaryError::Scratch {
                path: std::env::temp_dir(),
                source,
            })?;
        let scratch = Scratch { dir };
        copy_dir(&repo, root, Path::new(""), scratch.root(), skip)?;
        Ok(scratch)
    }

    /// The root of the copy.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Write `text` at `rel` in the copy, creating directories.
    pub(crate) fn write(&self, rel: &str, text: &str) -> Result<(), CanaryError> {
        let path = self.root().join(rel);
        let wrap = |source| CanaryError::Scratch {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(wrap)?;
        }
        // A file linked from the user's tree is replaced, never written through.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            fs::remove_file(&path).map_err(wrap)?;
        }
        fs::write(&path, text).map_err(wrap)
    }
}

fn copy_dir(
    repo: &git2::Repository,
    root: &Path,
    rel: &Path,
    into: &Path,
    skip: &Path,
) -> Result<(), CanaryError> {
    let from = root.join(rel);
    let wrap = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CanaryError::Scratch { path, source }
    };
    let entries = fs::read_dir(&from).map_err(wrap(&from))?;
    for entry in entries {
        let entry = entry.map_err(wrap(&from))?;
        let name = entry.file_name();
        let rel_path: PathBuf = rel.join(&name);
        let source = root.join(&rel_path);
        let target = into.join(&rel_path);
        if name == ".git" || source == skip {
            continue;
        }
        let kind = entry.file_type().map_err(wrap(&source))?;
        let ignored = repo.is_path_ignored(&rel_path).unwrap_or(false);
        if ignored {
            let name = name.to_string_lossy();
            if kind.is_dir() && !NOT_LINKED.contains(&name.as_ref()) {
                std::os::unix::fs::symlink(&source, &target).map_err(wrap(&target))?;
            }
            continue;
        }
        if kind.is_symlink() {
            let link = fs::read_link(&source).map_err(wrap(&source))?;
            std::os::unix::fs::symlink(link, &target).map_err(wrap(&target))?;
        } else if kind.is_dir() {
            fs::create_dir_all(&target).map_err(wrap(&target))?;
            copy_dir(repo, root, &rel_path, into, skip)?;
        } else if kind.is_file() {
            fs::copy(&source, &target).map_err(wrap(&target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_holds_what_git_sees_and_links_ignored_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git2::Repository::init(root).unwrap();
        fs::write(root.join(".gitignore"), "node_modules/\ntarget/\n*.log\n").unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.js"), "a").unwrap();
        fs::create_dir_all(root.join("node_modules/x")).unwrap();
        fs::write(root.join("node_modules/x/i.js"), "x").unwrap();
        fs::create_dir_all(root.join("target/debug")).unwrap();
        fs::write(root.join("run.log"), "l").unwrap();
        let scratch = Scratch::copy(root, &root.join("efix-artifacts")).unwrap();
        let copy = scratch.root();
        assert_eq!(fs::read_to_string(copy.join("src/a.js")).unwrap(), "a");
        assert!(
            fs::symlink_metadata(copy.join("node_modules"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(!copy.join("target").exists());
        assert!(!copy.join("run.log").exists());
        assert!(!copy.join(".git").exists());
        scratch.write("src/a.js", "b").unwrap();
        assert_eq!(fs::read_to_string(root.join("src/a.js")).unwrap(), "a");
    }
}
