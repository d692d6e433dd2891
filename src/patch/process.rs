//! One model answer end to end: contract, parse or edits, path rules, application, checks,
//! report. All or nothing: any blocking issue rejects the whole answer.
//!
//! Reading goes through a [`FileSource`]; writing is [`write_changes`], called only in
//! [`Mode::Write`] after everything passed.

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use crate::integrity::checks::integrity_checks;
use crate::patch::apply::apply_hunks;
use crate::patch::checks::{Touched, patch_checks, post_apply_checks};
use crate::patch::contract::{Answer, Edit, Ending, classify};
use crate::patch::diff::{FileDiff, Texts, unified_of};
use crate::patch::edits::apply_edit;
use crate::patch::model::{
    FileAction, FileChange, FileReport, HunkReport, Mode, PatchError, PatchOutcome, PatchPolicy,
    PatchReport,
};
use crate::patch::parse::{FilePatch, parse};
use crate::patch::paths::{FileSource, PathRules, RepoDir};
use crate::patch::shortcuts::{elided_edit, shortcut};
use crate::policy::Issue;

/// Process one raw model answer against the repository at `repo`.
pub fn process(
    repo: &Path,
    raw: &str,
    policy: &PatchPolicy,
    mode: Mode,
) -> Result<PatchReport, PatchError> {
    let report = evaluate(&RepoDir::new(repo), raw, policy)?;
    if mode == Mode::Write && report.outcome == PatchOutcome::Applied {
        write_changes(repo, &report.changes)?;
    }
    Ok(report)
}

/// One file's state while the answer is worked through.
#[derive(Debug, Clone)]
struct State {
    before: Option<Vec<u8>>,
    after: Option<String>,
    old_path: Option<String>,
    action: FileAction,
    hunks: Vec<HunkReport>,
}

struct Work<'a> {
    source: &'a dyn FileSource,
    rules: Rc<PathRules>,
    files: BTreeMap<String, State>,
    order: Vec<String>,
    issues: Vec<Issue>,
    already: Vec<Issue>,
    /// Files every hunk of which is already in the file: left as they are and reported,
    /// so an answer that also resends a change already made (a test committed before the
    /// run) still applies its other files.
    skipped: Vec<Issue>,
}

impl Work<'_> {
    /// The current text of `path` (after earlier parts of the answer), loading it on first use.
    fn current(&mut self, path: &str) -> Result<Option<String>, PatchError> {
        if let Some(s) = self.files.get(path) {
            return Ok(s.after.clone());
        }
        let before = self.source.read(path)?;
        let after = match &before {
            Some(b) => match String::from_utf8(b.clone()) {
                Ok(s) => Some(s),
                Err(_) => {
                    self.issues.push(
                        Issue::new(
                            "apply.not-text",
                            format!("{path} is not UTF-8 text; efix does not patch binary files"),
                        )
                        .at_path(path),
                    );
                    return Ok(None);
                }
            },
            None => None,
        };
        self.order.push(path.to_owned());
        self.files.insert(
            path.to_owned(),
            State {
                before,
                after: after.clone(),
                old_path: None,
                action: FileAction::Modify,
                hunks: Vec::new(),
            },
        );
        Ok(after)
    }

    fn set(
        &mut self,
        path: &str,
        after: Option<String>,
        action: FileAction,
        hunks: Vec<HunkReport>,
    ) {
        if let Some(s) = self.files.get_mut(path) {
            s.after = after;
            if s.action == FileAction::Modify {
                s.action = action;
            }
            s.hunks.extend(hunks);
        }
    }

    fn checked(&mut self, raw: &str) -> Option<String> {
        match self.rules.check(raw, self.source) {
            Ok(p) => Some(p),
            Err(issue) => {
                self.issues.push(issue);
                None
            }
        }
    }

    fn file_patch(&mut self, fp: &FilePatch) -> Result<(), PatchError> {
        if fp.binary {
            self.issues.push(
                Issue::new(
                    "parse.binary",
                    format!("{} is a binary patch; send text changes only", fp.path()),
                )
                .at_path(fp.path().to_owned()),
            );
            return Ok(());
        }
        let old = match &fp.old_path {
            Some(p) => match self.checked(p) {
                Some(p) => Some(p),
                None => return Ok(()),
            },
            None => None,
        };
        let new = match &fp.new_path {
            Some(p) => match self.checked(p) {
                Some(p) => Some(p),
                None => return Ok(()),
            },
            None => None,
        };
        match (old, new) {
            (None, None) => Ok(()),
            (None, Some(new)) => self.create(&new, fp),
            (Some(old), None) => self.delete(&old),
            (Some(old), Some(new)) if fp.rename && old != new => self.rename(&old, &new, fp),
            (Some(_), Some(new)) => self.modify(&new, fp),
        }
    }

    fn create(&mut self, path: &str, fp: &FilePatch) -> Result<(), PatchError> {
        if self.current(path)?.is_some() {
            self.issues.push(
                Issue::new(
                    "apply.file-exists",
                    format!("{path} already exists; send a diff against its current content"),
                )
                .at_path(path),
            );
            return Ok(());
        }
        match apply_hunks(path, "", &fp.hunks) {
            Ok(a) => self.set(path, Some(a.text), FileAction::Create, a.hunks),
            Err(f) => self.issues.push(f.issue),
        }
        Ok(())
    }

    fn delete(&mut self, path: &str) -> Result<(), PatchError> {
        if self.current(path)?.is_none() {
            self.issues.push(missing(path));
            return Ok(());
        }
        self.set(path, None, FileAction::Delete, Vec::new());
        Ok(())
    }

    fn modify(&mut self, path: &str, fp: &FilePatch) -> Result<(), PatchError> {
        let Some(text) = self.current(path)? else {
            if !self.issues.iter().any(|i| i.path.as_deref() == Some(path)) {
                self.issues.push(missing(path));
            }
            return Ok(());
        };
        match apply_hunks(path, &text, &fp.hunks) {
            Ok(a) => self.set(path, Some(a.text), FileAction::Modify, a.hunks),
            Err(f) if f.already_applied && all_already_applied(path, &text, &fp.hunks) => {
                self.skipped.push(
                    Issue::new(
                        "apply.already-applied",
                        format!(
                            "every hunk of {path} is already in the file, so it was left as it is; \
                         do not resend changes that are already made"
                        ),
                    )
                    .at_path(path),
                );
            }
            Err(f) if f.already_applied => self.already.push(f.issue),
            Err(f) => self.issues.push(f.issue),
        }
        Ok(())
    }

    fn rename(&mut self, old: &str, new: &str, fp: &FilePatch) -> Result<(), PatchError> {
        let Some(text) = self.current(old)? else {
            self.issues.push(missing(old));
            return Ok(());
        };
        if self.current(new)?.is_some() {
            self.issues.push(
                Issue::new(
                    "apply.file-exists",
                    format!("cannot rename {old} to {new}: {new} already exists"),
                )
                .at_path(new),
            );
            return Ok(());
        }
        match apply_hunks(new, &text, &fp.hunks) {
            Ok(a) => {
                self.set(old, None, FileAction::Delete, Vec::new());
                self.set(new, Some(a.text), FileAction::Rename, a.hunks);
                if let Some(s) = self.files.get_mut(new) {
                    s.old_path = Some(old.to_owned());
                }
                // The old path disappears as part of the rename, not as a deletion.
                if let Some(s) = self.files.get_mut(old) {
                    s.action = FileAction::Rename;
                }
            }
            Err(f) => self.issues.push(f.issue),
        }
        Ok(())
    }

    fn edit(&mut self, n: usize, e: &Edit) -> Result<(), PatchError> {
        let Some(path) = self.checked(&e.path) else {
            return Ok(());
        };
        if let Some(issue) = elided_edit(&path, n, &e.old_text, &e.new_text) {
            self.issues.push(issue);
            return Ok(());
        }
        let current = self.current(&path)?;
        match (current, e.old_text.is_empty()) {
            (None, true) => {
                self.set(
                    &path,
                    Some(e.new_text.clone()),
                    FileAction::Create,
                    Vec::new(),
                );
            }
            (Some(_), true) => self.issues.push(
                Issue::new(
                    "edit.file-exists",
                    format!(
                        "edit {n}: old_text is empty but {path} already exists; give the exact \
                         text to replace"
                    ),
                )
                .at_path(&path),
            ),
            (None, false) => {
                if !self.issues.iter().any(|i| i.path.as_deref() == Some(&path)) {
                    self.issues.push(missing(&path));
                }
            }
            (Some(text), false) => match apply_edit(&path, n, &text, &e.old_text, &e.new_text) {
                Ok((t, r)) => self.set(&path, Some(t), FileAction::Modify, vec![r]),
                Err(i) if i.rule == "edit.already-applied" => self.already.push(i),
                Err(i) => self.issues.push(i),
            },
        }
        Ok(())
    }
}

/// Whether each hunk on its own is already in `text`.
fn all_already_applied(path: &str, text: &str, hunks: &[crate::patch::parse::Hunk]) -> bool {
    hunks.iter().all(|hunk| {
        apply_hunks(path, text, std::slice::from_ref(hunk)).is_err_and(|f| f.already_applied)
    })
}

/// In an answer known to be cut off, a last hunk shorter than its header says lost its end,
/// which may have held a change: applying the rest would make only part of the change.
fn cut_inside_last_hunk(files: &[FilePatch]) -> Option<Issue> {
    let file = files.last()?;
    let hunk = file.hunks.last()?;
    hunk.shorter_than_declared().then(|| {
        Issue::new(
            "contract.truncated",
            format!(
                "the answer was cut off inside hunk {} of {} (it has fewer lines than its \
                 header declares, and the patch is never closed); send a smaller patch and \
                 close it",
                file.hunks.len(),
                file.path()
            ),
        )
        .at_path(file.path().to_owned())
    })
}

fn missing(path: &str) -> Issue {
    Issue::new(
        "apply.missing-file",
        format!("{path} does not exist; patch only files that exist, or create it from /dev/null"),
    )
    .at_path(path)
}

/// Evaluate one answer against any file source, writing nothing.
pub fn evaluate(
    source: &dyn FileSource,
    raw: &str,
    policy: &PatchPolicy,
) -> Result<PatchReport, PatchError> {
    evaluate_with(source, raw, policy, true)
}

/// Like [`evaluate`] but without the post-apply checks (size, tests, syntax): how the answer
/// applies, for benches comparing with git, and for callers that run those checks themselves.
pub fn evaluate_without_post_checks(
    source: &dyn FileSource,
    raw: &str,
    policy: &PatchPolicy,
) -> Result<PatchReport, PatchError> {
    evaluate_with(source, raw, policy, false)
}

fn evaluate_with(
    source: &dyn FileSource,
    raw: &str,
    policy: &PatchPolicy,
    post_checks: bool,
) -> Result<PatchReport, PatchError> {
    let answer = match classify(raw) {
        Ok(a) => a,
        Err(issue) => return Ok(PatchReport::rejected(vec![issue])),
    };
    let mut work = Work {
        source,
        rules: PathRules::for_policy(policy)?,
        files: BTreeMap::new(),
        order: Vec::new(),
        issues: Vec::new(),
        already: Vec::new(),
        skipped: Vec::new(),
    };
    match answer {
        Answer::NoChange => {
            return Ok(PatchReport {
                outcome: PatchOutcome::NoChange,
                ..PatchReport::rejected(Vec::new())
            });
        }
        Answer::Diff { text, ending } => {
            let mut files = match parse(&text) {
                Ok(f) => f,
                Err(issue) => return Ok(PatchReport::rejected(vec![issue])),
            };
            if ending == Ending::CutOff
                && let Some(issue) = cut_inside_last_hunk(&files)
            {
                return Ok(PatchReport::rejected(vec![issue]));
            }
            if let Some(issue) = shortcut(&files) {
                return Ok(PatchReport::rejected(vec![issue]));
            }
            if ending == Ending::Bare
                && let Some(h) = files.iter_mut().rev().find_map(|f| f.hunks.last_mut())
            {
                h.may_be_cut = true;
            }
            let has_content = files.iter().any(|f| {
                !f.hunks.is_empty()
                    || f.binary
                    || f.rename
                    || f.new_path.is_none()
                    || f.old_path.is_none()
            });
            if !has_content {
                return Ok(PatchReport::rejected(vec![Issue::new(
                    "contract.no-hunks",
                    "the diff has no hunks; add `@@ -OLD,COUNT +NEW,COUNT @@` hunks with the \
                     changed lines",
                )]));
            }
            let touched: Vec<Touched> = files
                .iter()
                .map(|f| Touched {
                    path: f.path().to_owned(),
                    action: match (&f.old_path, &f.new_path) {
                        (None, _) => FileAction::Create,
                        (_, None) => FileAction::Delete,
                        _ if f.rename => FileAction::Rename,
                        _ => FileAction::Modify,
                    },
                })
                .collect();
            for check in patch_checks() {
                work.issues.extend(check.check(&touched, policy));
            }
            if !work.issues.is_empty() {
                return Ok(PatchReport::rejected(work.issues));
            }
            for fp in &files {
                work.file_patch(fp)?;
            }
        }
        Answer::Edits(edits) => {
            for (i, e) in edits.iter().enumerate() {
                work.edit(i + 1, e)?;
            }
        }
    }
    finish(work, policy, post_checks)
}

fn finish(
    work: Work<'_>,
    policy: &PatchPolicy,
    post_checks: bool,
) -> Result<PatchReport, PatchError> {
    let Work {
        source,
        mut files,
        order,
        mut issues,
        mut already,
        skipped,
        ..
    } = work;
    if !issues.is_empty() {
        issues.extend(already);
        return Ok(PatchReport::rejected(issues));
    }
    // The contents move into the changes (copying whole files showed in the profile); the
    // states keep everything else the reports need.
    let mut changes: Vec<FileChange> = Vec::new();
    for p in &order {
        if let Some(s) = files.get_mut(p) {
            let c = FileChange {
                path: p.clone(),
                before: s.before.take(),
                after: s.after.take().map(String::into_bytes),
            };
            if c.before != c.after {
                changes.push(c);
            }
        }
    }
    if changes.is_empty() {
        already.extend(skipped);
        let mut notes = already;
        if notes.is_empty() {
            notes.push(Issue::new(
                "check.no-effect",
                "the patch leaves every file as it was; change the code, or answer NO_CHANGE",
            ));
        }
        return Ok(PatchReport {
            outcome: PatchOutcome::NoChange,
            ..PatchReport::rejected(notes)
        });
    }
    if !already.is_empty() {
        return Ok(PatchReport::rejected(already));
    }
    let checks = if post_checks {
        let mut checks = post_apply_checks();
        checks.extend(integrity_checks());
        checks
    } else {
        Vec::new()
    };
    // One line diff per file serves the size check, the report's counts and its diff.
    let texts: Vec<Texts<'_>> = changes.iter().map(Texts::of).collect();
    let diffs: Vec<FileDiff<'_>> = texts.iter().map(FileDiff::new).collect();
    let counts: Vec<(usize, usize)> = diffs.iter().map(FileDiff::counts).collect();
    for check in checks {
        issues.extend(check.check(&changes, &counts, policy));
    }
    if post_checks {
        // What a runner discovers on its own needs the repository, not only the change; the
        // paths the user allows as harness stay allowed.
        let allowed = (!policy.allow_harness.is_empty())
            .then(|| crate::integrity::checks::allowed_harness(policy))
            .flatten();
        issues.extend(
            crate::integrity::discovery::discovery_issues(&changes, source)
                .into_iter()
                .filter(|i| {
                    !(allowed.as_ref())
                        .zip(i.path.as_deref())
                        .is_some_and(|(a, p)| a.is_match(p))
                }),
        );
    }
    if !issues.is_empty() {
        return Ok(PatchReport::rejected(issues));
    }
    let reports = changes
        .iter()
        .zip(&counts)
        .filter_map(|(c, &(added, removed))| {
            let s = files.get(&c.path)?;
            if s.action == FileAction::Rename && c.after.is_none() {
                return None;
            }
            Some(FileReport {
                path: c.path.clone(),
                old_path: s.old_path.clone(),
                action: if c.before.is_none() && s.action != FileAction::Rename {
                    FileAction::Create
                } else {
                    s.action
                },
                added,
                removed,
                hunks: s.hunks.clone(),
            })
        })
        .collect();
    let diff = unified_of(&changes, &diffs);
    Ok(PatchReport {
        outcome: PatchOutcome::Applied,
        files: reports,
        // Notes only: the files left as they were.
        issues: skipped,
        diff,
        changes,
    })
}

/// Write file contents (`after`) for every change, all or nothing as far as the OS allows:
/// everything is staged in temporary files first, then renamed into place, and earlier
/// renames are undone if a later one fails.
pub fn write_changes(repo: &Path, changes: &[FileChange]) -> Result<(), PatchError> {
    let io = |what: String| move |source| PatchError::Io { what, source };
    let mut staged = Vec::new();
    for c in changes {
        let full = repo.join(&c.path);
        if let Some(after) = &c.after {
            let parent = full.parent().unwrap_or(repo);
            std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
            let mut tmp = tempfile::NamedTempFile::new_in(parent)
                .map_err(io(format!("stage {}", full.display())))?;
            std::io::Write::write_all(&mut tmp, after)
                .map_err(io(format!("stage {}", full.display())))?;
            staged.push((c, full, Some(tmp)));
        } else {
            staged.push((c, full, None));
        }
    }
    let mut done: Vec<&FileChange> = Vec::new();
    for (c, full, tmp) in staged {
        let result = match tmp {
            Some(tmp) => tmp.persist(&full).map(|_| ()).map_err(|e| e.error),
            None => match std::fs::remove_file(&full) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if let Err(source) = result {
            for prev in done {
                undo(repo, prev);
            }
            return Err(PatchError::Io {
                what: format!("write {}", full.display()),
                source,
            });
        }
        done.push(c);
    }
    Ok(())
}

fn undo(repo: &Path, c: &FileChange) {
    let full = repo.join(&c.path);
    let result = match &c.before {
        Some(b) => std::fs::write(&full, b),
        None => std::fs::remove_file(&full),
    };
    if let Err(e) = result {
        tracing::warn!(path = %full.display(), error = %e, "could not undo a partial write");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::paths::MemoryFiles;

    fn files(list: &[(&str, &str)]) -> MemoryFiles {
        MemoryFiles(
            list.iter()
                .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
                .collect(),
        )
    }

    #[test]
    fn a_fuzzy_acceptance_reports_level_and_landing_line() {
        let src = files(&[("a.py", "x = 1\n\ny = 2\nz = 3\n")]);
        let raw = "--- a/a.py\n+++ b/a.py\n@@ -7,3 +7,4 @@\n y = 2   \n+w = 4\n z = 3\n";
        let report = evaluate(&src, raw, &PatchPolicy::default()).map_err(|e| e.to_string());
        let report = report.unwrap_or_else(|e| panic!("{e}"));
        insta::assert_json_snapshot!(report, @r#"
        {
          "outcome": "applied",
          "files": [
            {
              "path": "a.py",
              "action": "modify",
              "added": 1,
              "removed": 0,
              "hunks": [
                {
                  "index": 1,
                  "level": "trailing-whitespace",
                  "header_line": 7,
                  "line": 3
                }
              ]
            }
          ],
          "issues": [],
          "diff": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,5 @@\n x = 1\n \n y = 2\n+w = 4\n z = 3\n"
        }
        "#);
    }

    #[test]
    fn issue_messages_tell_the_model_what_to_do() {
        let src = files(&[(
            "a.py",
            "def f():\n    return 1\n\n\ndef g():\n    return 1\n",
        )]);
        let answers = [
            "Sure! Here it is:\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n",
            "--- a/a.py\n+++ b/a.py\n@@ at the end of the file @@\n+z = 1\n",
            "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 2\n+    return 3\n",
            "--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,2 @@\n     return 1\n+    # done\n",
            "{\"edits\":[{\"path\":\"a.py\",\"old_text\":\"return 1\",\"new_text\":\"return 2\"}]}",
            "--- a/../b.py\n+++ b/../b.py\n@@ -1 +1 @@\n-x\n+y\n",
        ];
        let messages: Vec<String> = answers
            .iter()
            .flat_map(|raw| match evaluate(&src, raw, &PatchPolicy::default()) {
                Ok(r) => r.issues,
                Err(e) => panic!("{e}"),
            })
            .map(|i| format!("{}: {}", i.rule, i.message))
            .collect();
        insta::assert_snapshot!(messages.join("\n"), @r#"
        contract.prose: text before the diff (line 1); start the answer with the diff header and write no explanation
        parse.bad-hunk-header: hunk header on line 3 is not `@@ -OLD,COUNT +NEW,COUNT @@`: "@@ at the end of the file @@"; give numeric line numbers from the numbered file
        apply.no-match: hunk 1 of a.py (header line 1): context not found: the nearest start is line 1 but line 2 is "    return 1" where the hunk has "    return 2"; copy the context and `-` lines exactly from the numbered file
        apply.ambiguous: hunk 1 of a.py matches at lines 2, 6 (level offset); add context lines that occur only at the intended place
        edit.ambiguous: edit 1 of a.py: old_text occurs 2 times (lines 2, 6); include more surrounding lines so it occurs exactly once
        path.parent: path "../b.py" contains `..`; stay inside the repository
        "#);
    }

    #[test]
    fn write_mode_writes_and_check_mode_does_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap_or_else(|e| panic!("{e}"));
        let raw = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
        let policy = PatchPolicy::default();
        let checked = process(dir.path(), raw, &policy, Mode::Check).map(|r| r.outcome);
        let read = || std::fs::read_to_string(dir.path().join("a.txt")).unwrap_or_default();
        let after_check = read();
        let written = process(dir.path(), raw, &policy, Mode::Write).map(|r| r.outcome);
        assert_eq!(
            (checked.ok(), after_check, written.ok(), read()),
            (
                Some(PatchOutcome::Applied),
                "a\n".into(),
                Some(PatchOutcome::Applied),
                "b\n".into()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_outside_the_repo_is_refused() {
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(outside.path().join("secret.txt"), "a\n").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), repo.path().join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let raw = "--- a/link/secret.txt\n+++ b/link/secret.txt\n@@ -1 +1 @@\n-a\n+b\n";
        let report = process(repo.path(), raw, &PatchPolicy::default(), Mode::Write);
        let rules: Vec<String> = report
            .map(|r| r.issues.into_iter().map(|i| i.rule).collect())
            .unwrap_or_default();
        assert_eq!(rules, ["path.symlink-escape"]);
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret.txt")).ok(),
            Some("a\n".into())
        );
    }
}
