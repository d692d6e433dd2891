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
