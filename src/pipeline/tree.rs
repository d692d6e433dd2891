//! After a call to an engine that runs something able to write to the working tree (an ACP
//! agent): what changed, which part of it is the agent's proposal (files it was allowed to
//! edit, in edit mode), which part it wrote outside the protocol, and the tree restored byte
//! for byte before anything else happens.
//!
//! Every engine call starts from the snapshot's tree (the phases restore after every round),
//! so the change against HEAD is exactly what the call did.

use crate::git::Repo;

use super::PipelineError;
use super::ctx::Ctx;

/// What a call did to the working tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TreeChange {
    /// The unified diff of the files the agent was allowed to edit; empty when none changed.
    pub proposal: String,
    /// Files changed without a permission efix granted, restored.
    pub unrequested: Vec<String>,
}

/// Look at the tree after a call, split its change into proposal and unrequested writes by
/// `allowed` (repository-relative paths), and restore the tree.
pub(crate) fn after_call(
    ctx: &mut Ctx<'_>,
    allowed: &[String],
) -> Result<TreeChange, PipelineError> {
    // The agent is a process like a command: whatever it did, the next restore looks at the
    // whole tree, not only at what efix wrote.
    ctx.commands_since_restore = true;
    let diff = Repo::open(&ctx.root)?.working_diff()?;
    if diff.files.is_empty() {
        return Ok(TreeChange::default());
    }
    let sections = split_by_file(&diff.patch);
    let mut change = TreeChange::default();
    for (index, file) in diff.files.iter().enumerate() {
        if allowed.contains(&file.path) {
            // Sections come in the same (path) order as the file list.
            if let Some(section) = sections.get(index) {
                change.proposal.push_str(section);
            }
        } else {
            change.unrequested.push(file.path.clone());
        }
    }
    if sections.len() != diff.files.len() {
        // The diff could not be split per file; nothing of it can be trusted as a proposal.
        change.proposal.clear();
        change.unrequested = diff.files.iter().map(|f| f.path.clone()).collect();
    }
    let restored = ctx.restore();
    tracing::info!(
        files = diff.files.len(),
        unrequested = change.unrequested.len(),
        proposal_bytes = change.proposal.len(),
        "the engine changed the working tree; restored it"
    );
    restored?;
    Ok(change)
}

/// The sections of a git diff, one per file, each starting at its `diff --git` line.
fn split_by_file(patch: &str) -> Vec<String> {
    let mut sections: Vec<String> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") || sections.is_empty() {
            sections.push(String::new());
        }
        if let Some(last) = sections.last_mut() {
            last.push_str(line);
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_diff_splits_at_each_file_header() {
        let patch = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n\
                     diff --git a/b b/b\nnew file mode 100644\n--- /dev/null\n+++ b/b\n@@ -0,0 +1 @@\n+z\n";
        let sections = split_by_file(patch);
        assert_eq!(sections.len(), 2);
        assert!(sections[0].starts_with("diff --git a/a b/a\n") && sections[0].ends_with("+y\n"));
        assert!(sections[1].starts_with("diff --git a/b b/b\n") && sections[1].ends_with("+z\n"));
    }
}
