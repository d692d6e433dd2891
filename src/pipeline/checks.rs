//! Checks on an applied change before anything runs: diff limits measured on the change
//! itself, deleted or weakened tests, and the justification gate for files outside the
//! localized focus set. Each check is recorded with what it measured.

use std::collections::BTreeMap;

use crate::engine::FixResponse;
use crate::evidence::{CheckRecord, CommandRecord};
use crate::integrity::test_policy::{is_test_path, weakened_tests};
use crate::patch::{self, FileChange, PatchReport};
use crate::policy::Issue;

use super::ctx::Ctx;
use super::localize;

pub(crate) fn check(id: &str, passed: bool, detail: &str) -> CheckRecord {
    CheckRecord {
        id: id.to_owned(),
        passed,
        detail: detail.to_owned(),
        weakens: None,
    }
}

/// One flagged check per family of reads of process state the change adds to non-test code
/// (`check.reads.argv`, ...), each listing where and what: a read has legitimate uses, so it
/// never blocks the round, but a proven round holding one ends `fixed-flagged`.
pub(crate) fn read_flags(changes: &[FileChange]) -> Vec<CheckRecord> {
    let flags = crate::integrity::reads::process_reads(changes);
    crate::integrity::reads::rules()
        .filter_map(|rule| {
            let details: Vec<String> = flags
                .iter()
                .filter(|f| f.rule == rule)
                .map(|f| format!("{}:{} reads `{}` ({})", f.path, f.line, f.read, f.what))
                .collect();
            (!details.is_empty()).then(|| CheckRecord::flagged(rule, details.join("; ")))
        })
        .collect()
}

pub(crate) fn summary(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| format!("{}: {}", i.rule, i.message.lines().next().unwrap_or("")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "applied 3 hunks (2 exact, 1 offset)" from the patch report's per-hunk levels.
pub(crate) fn apply_detail(report: &PatchReport) -> String {
    let value = serde_json::to_value(&report.files).unwrap_or_default();
    let mut levels: BTreeMap<String, usize> = BTreeMap::new();
    collect_levels(&value, &mut levels);
    let hunks: usize = levels.values().sum();
    if hunks == 0 {
        return format!("applied to {} file(s)", report.changes.len());
    }
    let parts: Vec<String> = levels
        .iter()
        .map(|(level, n)| format!("{n} {level}"))
        .collect();
    format!(
        "applied {hunks} hunk{} to {} file(s): {}",
        if hunks == 1 { "" } else { "s" },
        report.changes.len(),
        parts.join(", ")
    )
}

fn collect_levels(value: &serde_json::Value, levels: &mut BTreeMap<String, usize>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                if key == "level"
                    && let Some(level) = inner.as_str()
                {
                    *levels.entry(level.to_owned()).or_default() += 1;
                } else {
                    collect_levels(inner, levels);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_levels(i, levels)),
        _ => {}
    }
}

/// Diff limits, test weakening and the justification gate, measured on the applied change.
pub(crate) fn policy_checks(
    ctx: &Ctx<'_>,
    changes: &[FileChange],
    response: &FixResponse,
    checks: &mut Vec<CheckRecord>,
) -> Vec<Issue> {
    let mut issues = Vec::new();
    let (files, added, removed) = patch::diff_stats(changes);
    let limits = &ctx.config.patch;
    let files_ok = files <= limits.max_files;
    checks.push(check(
        "diff.max-files",
        files_ok,
        &format!("{files} file(s) changed (limit {})", limits.max_files),
    ));
    if !files_ok {
        issues.push(Issue::new(
            "diff.max-files",
            format!("the change touches {files} files; the limit is {}: keep the fix to the files that cause the failure", limits.max_files),
        ));
    }
    let loc = added + removed;
    let loc_ok = loc <= limits.max_loc;
    checks.push(check(
        "diff.max-loc",
        loc_ok,
        &format!(
            "{loc} changed lines, +{added} −{removed} (limit {})",
            limits.max_loc
        ),
    ));
    if !loc_ok {
        issues.push(Issue::new(
            "diff.max-loc",
            format!(
                "the change has {loc} changed lines; the limit is {}: make a smaller fix",
                limits.max_loc
            ),
        ));
    }
    let mut weakened = Vec::new();
    for change in changes {
        match (&change.before, &change.after) {
            (Some(before), Some(after)) => weakened.extend(weakened_tests(
                &change.path,
                &String::from_utf8_lossy(before),
                &String::from_utf8_lossy(after),
            )),
            (Some(_), None) if is_test_path(&change.path) => weakened.push(
                Issue::new("check.deleted-test", "the change deletes a test file; keep existing tests and add a regression test instead")
                    .at_path(change.path.clone()),
            ),
            _ => {}
        }
    }
    checks.push(check(
        "tests.not-weakened",
        weakened.is_empty(),
        &if weakened.is_empty() {
            "no test deleted, skipped or weakened".to_owned()
        } else {
            summary(&weakened)
        },
    ));
    issues.extend(weakened);
    let focus = ctx
        .evidence
        .localization
        .as_ref()
        .map(localize::focus_set)
        .unwrap_or_default();
    let unjustified: Vec<&str> = changes
        .iter()
        .map(|c| c.path.as_str())
        .filter(|path| {
            !is_test_path(path) && !is_documentation(path) && !focus.iter().any(|f| f == path)
        })
        .filter(|path| {
            !response
                .file_justifications
                .iter()
                .any(|j| j.file.trim_start_matches("./") == *path && !j.reason.trim().is_empty())
        })
        .collect();
    checks.push(check(
        "policy.justification",
        unjustified.is_empty(),
        &if unjustified.is_empty() {
            "every changed non-test file is in the localized focus set or justified".to_owned()
        } else {
            format!(
                "unjustified files outside the focus set: {}",
                unjustified.join(", ")
            )
        },
    ));
    for path in unjustified {
        issues.push(
            Issue::new(
                "policy.justification",
                "this file is outside the files localized for the failure; explain why it must change in file_justifications, or leave it unchanged",
            )
            .at_path(path),
        );
    }
    issues
}

/// Documentation and changelogs cannot change behaviour, so the justification gate leaves
/// them alone (upstream fixes often add a changelog entry).
fn is_documentation(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = name.split('.').next().unwrap_or("");
    let doc_dir = path.starts_with("docs/") || path.starts_with("doc/") || path.contains("/docs/");
    let doc_ext = [".md", ".rst", ".txt", ".adoc"]
        .iter()
        .any(|e| name.ends_with(e));
    let changelog = ["changelog", "changes", "news", "history", "release-notes"].contains(&stem)
        && (!name.contains('.') || doc_ext);
    doc_dir || doc_ext || changelog || path.starts_with("changelog.d/")
}

/// `exit 0, 3 passed, 0 failed`: a command's result for a check's detail.
pub(crate) fn pass_text(record: &CommandRecord) -> String {
    let exit = record
        .outcome
        .as_ref()
        .map(|o| {
            if o.timed_out {
                "timed out".to_owned()
            } else {
                o.exit_code
                    .map(|c| format!("exit {c}"))
                    .unwrap_or_else(|| "killed".to_owned())
            }
        })
        .unwrap_or_else(|| "not run".to_owned());
    match &record.tests {
        Some(t) => format!("{exit}, {}", t.counts_text()),
        None => exit,
    }
}

#[cfg(test)]
mod tests {
    use super::is_documentation;

    #[test]
    fn documentation_and_changelogs_are_recognised() {
        for path in [
            "README.md",
            "docs/api.html",
            "CHANGES.rst",
            "changelog.d/123.bugfix",
            "NEWS",
        ] {
            assert!(is_documentation(path), "{path}");
        }
        for path in ["src/lib.rs", "setup.py", "pkg/news.py", "Cargo.toml"] {
            assert!(!is_documentation(path), "{path}");
        }
    }
}
