//! The working tree's change against HEAD, as a unified diff with per-file statistics.
//!
//! Untracked files that are not ignored count as added, so a change that creates a file is
//! measured like one that edits it (`diff.max-files` and `diff.max-loc` are hard limits on
//! the applied change).

use git2::{Delta, DiffOptions, Patch};
use serde::Serialize;

use super::error::{GitError, git_err};
use super::repo::{Repo, head_oid, lossy};

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStat {
    /// Repository-relative path (the new path for a rename).
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed`, `typechange` or `other`.
    pub status: String,
    pub insertions: usize,
    pub deletions: usize,
    /// Binary content: no line counts, no text hunks.
    pub binary: bool,
}

/// The working tree against HEAD (against an empty tree before the first commit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WorkingDiff {
    /// Unified diff with `a/` and `b/` prefixes, files in path order.
    pub patch: String,
    /// Changed files in path order.
    pub files: Vec<FileStat>,
    pub insertions: usize,
    pub deletions: usize,
}

impl Repo {
    /// The change in the working tree (staged or not, untracked-not-ignored files as added)
    /// relative to HEAD.
    pub fn working_diff(&self) -> Result<WorkingDiff, GitError> {
        let repo = self.git()?;
        let head_tree = match head_oid(&repo)? {
            Some(oid) => Some(
                repo.find_commit(oid)
                    .and_then(|commit| commit.tree())
                    .map_err(git_err("read the HEAD tree"))?,
            ),
            None => None,
        };
        let mut opts = DiffOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true)
            .ignore_submodules(true)
            .include_typechange(true);
        let diff = repo
            .diff_tree_to_workdir_with_index(head_tree.as_ref(), Some(&mut opts))
            .map_err(git_err("diff the working tree against HEAD"))?;
        let mut result = WorkingDiff::default();
        for (idx, delta) in diff.deltas().enumerate() {
            let path = delta
                .new_file()
                .path_bytes()
                .or_else(|| delta.old_file().path_bytes())
                .map(lossy)
                .unwrap_or_default();
            let status = match delta.status() {
                Delta::Added | Delta::Untracked => "added",
                Delta::Modified => "modified",
                Delta::Deleted => "deleted",
                Delta::Renamed => "renamed",
                Delta::Typechange => "typechange",
                _ => "other",
            };
            let mut patch =
                Patch::from_diff(&diff, idx).map_err(git_err(format!("diff {path}")))?;
            let binary = delta.flags().is_binary() || patch.is_none();
            let (insertions, deletions) = match patch.as_mut() {
                Some(patch) => {
                    let (_, insertions, deletions) = patch
                        .line_stats()
                        .map_err(git_err(format!("count changed lines of {path}")))?;
                    let text = patch
                        .to_buf()
                        .map_err(git_err(format!("format the diff of {path}")))?;
                    result.patch.push_str(&String::from_utf8_lossy(&text));
                    (insertions, deletions)
                }
                None => {
                    // libgit2 makes no text patch for binary content; say so like git does.
                    result.patch.push_str(&format!(
                        "diff --git a/{path} b/{path}\nBinary files a/{path} and b/{path} differ\n"
                    ));
                    (0, 0)
                }
            };
            result.insertions += insertions;
            result.deletions += deletions;
            result.files.push(FileStat {
                path,
                status: status.to_owned(),
                insertions,
                deletions,
                binary,
            });
        }
        Ok(result)
    }
}
