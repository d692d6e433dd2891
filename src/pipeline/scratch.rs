//! The scratch directory of a round of candidates: one temporary directory holding a scratch
//! copy of the base commit per candidate, never inside the user's working tree. Its path is
//! written to `<git dir>/efix/scratch` while it exists, so that when efix dies before removing
//! it (`kill -9`), `efix restore` and the next run remove it.

use std::path::{Path, PathBuf};

use crate::git::Repo;

use super::PipelineError;

/// File under efix's state directory naming the scratch directory in use.
const MARKER_FILE: &str = "scratch";
/// Prefix of every scratch directory's name; a marker naming anything else is not followed.
const PREFIX: &str = "efix-candidates-";

/// A scratch directory, removed (with its marker) when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: Option<tempfile::TempDir>,
    marker: PathBuf,
}

impl Scratch {
    /// Create the scratch directory of the working tree at `root` and record it.
    pub(crate) fn create(root: &Path) -> Result<Scratch, PipelineError> {
        let repo = Repo::open(root)?;
        let marker = repo.state_dir()?.join(MARKER_FILE);
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| PipelineError::Artifacts { what, source }
        };
        let dir = tempfile::Builder::new()
            .prefix(PREFIX)
            .tempdir()
            .map_err(io("create a scratch directory for the candidates"))?;
        std::fs::write(&marker, dir.path().display().to_string())
            .map_err(io("record the candidates' scratch directory"))?;
        Ok(Scratch {
            dir: Some(dir),
            marker,
        })
    }

    /// The directory itself.
    pub(crate) fn path(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |dir| dir.path())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let shown = dir.path().display().to_string();
            if let Err(err) = dir.close() {
                tracing::warn!(dir = %shown, error = %err, "could not remove a scratch directory");
                return;
            }
        }
        // Only once the directory is gone: the marker is how a later restore finds it.
        let _ = std::fs::remove_file(&self.marker);
    }
}

/// Remove the scratch directory a run that died left behind, if any; its path when one was
/// removed. Called with the working tree's lock held.
pub(crate) fn remove_left(repo: &Repo) -> Result<Option<String>, PipelineError> {
    let marker = repo.state_dir()?.join(MARKER_FILE);
    let Ok(text) = std::fs::read_to_string(&marker) else {
        return Ok(None);
    };
    let dir = PathBuf::from(text.trim());
    let ours = dir
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with(PREFIX));
    let removed = if ours && dir.is_dir() {
        std::fs::remove_dir_all(&dir).map_err(|source| PipelineError::Artifacts {
            what: format!("remove the scratch directory {}", dir.display()),
            source,
        })?;
        Some(dir.display().to_string())
    } else {
        None
    };
    let _ = std::fs::remove_file(&marker);
    Ok(removed)
}

/// Link into a candidate's scratch copy (`copy`) the dependency installs of the working tree
/// (`root`) that git ignores: every ignored `node_modules` directory, and every ignored
/// directory that is a Python virtual environment (it holds `pyvenv.cfg`, whatever its name).
/// A copy holds only the tracked files; without these a candidate's `npx jest` or
/// `.venv/bin/pytest` would not run as the reproduction did. Returns the linked paths.
pub(crate) fn link_installs(source: &Repo, copy: &Path) -> Result<Vec<String>, PipelineError> {
    let root = &source.root;
    let mut linked = Vec::new();
    for dir in source.ignored_dirs()? {
        let from = root.join(&dir);
        let is_install = Path::new(&dir)
            .file_name()
            .is_some_and(|name| name == "node_modules")
            || from.join("pyvenv.cfg").is_file();
        let to = copy.join(&dir);
        if !is_install || !from.is_dir() || std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let io = |source| PipelineError::Artifacts {
            what: format!("link {dir} into a candidate's scratch copy"),
            source,
        };
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::os::unix::fs::symlink(&from, &to).map_err(io)?;
        linked.push(dir);
    }
    // The copy ignores them too, whatever ignored them in the working tree (a global or
    // `.git/info/exclude` rule the copy does not have): they are not the candidate's files.
    if !linked.is_empty() {
        let exclude = copy.join(".git").join("info").join("exclude");
        let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
        for dir in &linked {
            text.push_str(&format!("/{dir}\n"));
        }
        let io = |source| PipelineError::Artifacts {
            what: "write a scratch copy's .git/info/exclude".to_owned(),
            source,
        };
        if let Some(parent) = exclude.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&exclude, text).map_err(io)?;
    }
    Ok(linked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_node_modules_and_virtual_environments_are_linked_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let repo = crate::git::init_with_files(
            &work,
            &[
                (
                    ".gitignore",
                    b"node_modules/\n.venv/\nenv-*/\nbuild/\n".as_slice(),
                ),
                ("web/index.js", b"module.exports = 1;\n".as_slice()),
            ],
            "init",
        )
        .unwrap();
        for (path, file) in [
            ("node_modules/jest", "package.json"),
            ("web/node_modules/vite", "package.json"),
            (".venv", "pyvenv.cfg"),
            ("env-tools", "pyvenv.cfg"),
            ("build", "out.o"),
        ] {
            std::fs::create_dir_all(work.join(path)).unwrap();
            std::fs::write(work.join(path).join(file), "x").unwrap();
        }
        let copy_dir = dir.path().join("copy");
        repo.copy_to(&copy_dir, None).unwrap();
        let linked = link_installs(&repo, &copy_dir).unwrap();
        assert_eq!(
            linked,
            vec![".venv", "env-tools", "node_modules", "web/node_modules"]
        );
        for path in &linked {
            let meta = std::fs::symlink_metadata(copy_dir.join(path)).unwrap();
            assert!(meta.file_type().is_symlink(), "{path}");
        }
        assert!(!copy_dir.join("build").exists());
        assert!(copy_dir.join("node_modules/jest/package.json").is_file());
        // The links are ignored in the copy as well: its status is clean.
        let copy = Repo::open(&copy_dir).unwrap();
        assert_eq!(
            copy.files_not_ignored().unwrap(),
            vec![".gitignore", "web/index.js"]
        );
    }
}
