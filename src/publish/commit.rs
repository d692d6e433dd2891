//! The commit of a proven fix, made with the Git Data API only: the recorded patch is applied
//! again to the recorded base (read from the local object database), each changed file
//! becomes a blob, the blobs a tree on the base commit's tree, the tree a commit whose only
//! parent is the base, and the commit the tip of the branch, created or moved.
//!
//! No author, committer or signature is sent, so GitHub makes the commit as the token's
//! identity and signs it (Verified); no git process runs and no credential touches the disk.

use base64::Engine as _;
use serde_json::{Value, json};

use super::PublishError;
use super::api::Op;
use super::github::{Github, text_at};
use crate::git::{CommitTree, Repo};
use crate::patch::{self, FileSource, PatchError, PatchOutcome, PatchPolicy};

/// Mode of a new regular file.
const REGULAR_MODE: i32 = 0o100644;

/// One file of the change: its new bytes (`None` = deleted) and its tree mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) path: String,
    pub(crate) content: Option<Vec<u8>>,
    pub(crate) mode: i32,
}

/// The base commit's files, for the patch engine.
struct BaseFiles<'a>(&'a CommitTree);

impl FileSource for BaseFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, PatchError> {
        self.0
            .file(path)
            .map(|file| file.map(|f| f.bytes))
            .map_err(|err| PatchError::Io {
                what: format!("read {path} from the base commit"),
                source: std::io::Error::other(err.to_string()),
            })
    }

    fn escapes(&self, path: &str) -> bool {
        self.0.through_symlink(path)
    }
}

/// Apply `diff` again to the files of `base` in `repo` and return the changed files.
pub(crate) fn rebuild(
    repo: &Repo,
    base: &str,
    diff: &str,
    policy: &PatchPolicy,
) -> Result<(CommitTree, Vec<Change>), PublishError> {
    let tree = repo.commit_tree(base)?;
    // The size, test and syntax checks were run and recorded during the run; publishing only
    // needs the same bytes again, with the path rules still in force.
    let report = patch::evaluate_without_post_checks(&BaseFiles(&tree), diff, policy)?;
    if report.outcome != PatchOutcome::Applied {
        let issues: Vec<String> = report
            .issues
            .iter()
            .map(|issue| format!("{} [{}]", issue.message, issue.rule))
            .collect();
        return Err(PublishError::Unpublishable {
            what: "the recorded change".to_owned(),
            message: format!(
                "patch.diff does not apply to the recorded base {base} any more ({}); run efix \
                 again",
                if issues.is_empty() {
                    "it changes nothing".to_owned()
                } else {
                    issues.join("; ")
                }
            ),
        });
    }
    let mut changes = Vec::with_capacity(report.changes.len());
    for change in report.changes {
        let mode = tree
            .file(&change.path)?
            .map(|f| f.mode)
            .unwrap_or(REGULAR_MODE);
        changes.push(Change {
            path: change.path,
            content: change.after,
            mode,
        });
    }
    Ok((tree, changes))
}

/// Create the commit of `changes` on `base` (whose tree is `base_tree`) with `message`;
/// returns the new commit's id.
pub(crate) fn create_commit(
    github: &mut Github<'_>,
    base: &str,
    changes: &[Change],
    message: &str,
) -> Result<String, PublishError> {
    // The base must be on GitHub; asking for it first gives a clear error when it is not.
    let request = github.request(Op::GetCommit, &[base]);
    let answer = github.call(request.clone())?;
    let base_tree = text_at(&answer, "/tree/sha", &request)?;
    let mut entries = Vec::with_capacity(changes.len());
    for change in changes {
        let mode = format!("{:06o}", change.mode);
        let sha = match &change.content {
            Some(bytes) => {
                let request = github.request(Op::CreateBlob, &[]).body(json!({
                    "content": base64::engine::general_purpose::STANDARD.encode(bytes),
                    "encoding": "base64",
                }));
                Value::String(text_at(&github.call(request.clone())?, "/sha", &request)?)
            }
            None => Value::Null,
        };
        entries.push(json!({"path": change.path, "mode": mode, "type": "blob", "sha": sha}));
    }
    let request = github
        .request(Op::CreateTree, &[])
        .body(json!({"base_tree": base_tree, "tree": entries}));
    let tree = text_at(&github.call(request.clone())?, "/sha", &request)?;
    let request = github.request(Op::CreateCommit, &[]).body(json!({
        "message": message,
        "tree": tree,
        "parents": [base],
    }));
    text_at(&github.call(request.clone())?, "/sha", &request)
}

/// How the branch was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BranchUpdate {
    Created,
    Moved,
}

/// Point `refs/heads/<branch>` at `commit`, creating the branch or moving it (forced: the
/// branch belongs to efix, and a new run for the same trigger replaces the old fix).
pub(crate) fn set_branch(
    github: &mut Github<'_>,
    branch: &str,
    commit: &str,
) -> Result<BranchUpdate, PublishError> {
    let heads = format!("heads/{branch}");
    let request = github.request(Op::GetRef, &[&heads]);
    if github.call_optional(request, true)?.is_none() {
        let request = github.request(Op::CreateRef, &[]).body(json!({
            "ref": format!("refs/{heads}"),
            "sha": commit,
        }));
        github.call(request)?;
        return Ok(BranchUpdate::Created);
    }
    let request = github
        .request(Op::UpdateRef, &[&heads])
        .body(json!({"sha": commit, "force": true}));
    github.call(request)?;
    Ok(BranchUpdate::Moved)
}
