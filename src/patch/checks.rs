//! Checks as plug-ins: [`PatchCheck`]s look at which files a patch touches and how,
//! [`PostApplyCheck`]s at every file's content before and after. Each has a stable id; every
//! failure is a blocking [`Issue`].
//!
//! Path rules live in `paths` (they run while parsing, before anything is read); this module
//! only holds the checks that need the whole patch or its result.

use crate::integrity::test_policy::{is_test_path, weakened_tests};
use crate::patch::model::{FileAction, FileChange, PatchPolicy};
use crate::patch::syntax::{self, Broken, Unreachable};
use crate::patch::text::lossless_str;
use crate::policy::Issue;

/// One file a patch touches, as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touched {
    pub path: String,
    pub action: FileAction,
}

/// A check on the parsed patch.
pub(crate) trait PatchCheck {
    fn id(&self) -> &'static str;
    fn check(&self, files: &[Touched], policy: &PatchPolicy) -> Vec<Issue>;
}

/// A check on the content before and after the patch. `counts` holds each change's added and
/// removed lines, computed once for the checks and the report.
pub(crate) trait PostApplyCheck {
    fn id(&self) -> &'static str;
    fn check(
        &self,
        changes: &[FileChange],
        counts: &[(usize, usize)],
        policy: &PatchPolicy,
    ) -> Vec<Issue>;
}

fn text(b: Option<&Vec<u8>>) -> Option<std::borrow::Cow<'_, str>> {
    b.map(|b| lossless_str(b))
}

/// `diff.max-files`: at most `max_files` files.
struct MaxFiles;

impl PatchCheck for MaxFiles {
    fn id(&self) -> &'static str {
        "check.max-files"
    }

    fn check(&self, files: &[Touched], policy: &PatchPolicy) -> Vec<Issue> {
        if files.len() <= policy.max_files {
            return Vec::new();
        }
        vec![Issue::new(
            self.id(),
            format!(
                "the patch touches {} files, more than the limit of {}; change fewer files",
                files.len(),
                policy.max_files
            ),
        )]
    }
}

/// Deleting files needs `allow_delete`.
struct Deletes;

impl PatchCheck for Deletes {
    fn id(&self) -> &'static str {
        "delete.not-allowed"
    }

    fn check(&self, files: &[Touched], policy: &PatchPolicy) -> Vec<Issue> {
        if policy.allow_delete {
            return Vec::new();
        }
        files
            .iter()
            .filter(|f| f.action == FileAction::Delete)
            .map(|f| {
                Issue::new(
                    self.id(),
                    format!("deleting {} is not allowed; edit the file instead", f.path),
                )
                .at_path(f.path.clone())
            })
            .collect()
    }
}

/// `diff.max-loc`: at most `max_loc` changed lines.
struct MaxLoc;

impl PostApplyCheck for MaxLoc {
    fn id(&self) -> &'static str {
        "check.max-loc"
    }

    fn check(
        &self,
        _changes: &[FileChange],
        counts: &[(usize, usize)],
        policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let (added, removed) = counts
            .iter()
            .fold((0, 0), |(a, r), &(ca, cr)| (a + ca, r + cr));
        if added + removed <= policy.max_loc {
            return Vec::new();
        }
        vec![Issue::new(
            self.id(),
            format!(
                "the patch changes {} lines (+{added} -{removed}), more than the limit of {}; \
                 make a smaller change",
                added + removed,
                policy.max_loc
            ),
        )]
    }
}

/// No deleted test files, removed test functions or added skips.
struct Tests;

impl PostApplyCheck for Tests {
    fn id(&self) -> &'static str {
        "check.deleted-test"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        _policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        for c in changes {
            match (text(c.before.as_ref()), text(c.after.as_ref())) {
                (Some(_), None) if is_test_path(&c.path) => issues.push(
                    Issue::new(
                        self.id(),
                        format!(
                            "test file {} was deleted; keep tests and fix the code",
                            c.path
                        ),
                    )
                    .at_path(c.path.clone()),
                ),
                // Only test files and Rust sources (inline `#[test]`s) can hold tests.
                (Some(b), Some(a)) if is_test_path(&c.path) || c.path.ends_with(".rs") => {
                    issues.extend(weakened_tests(&c.path, &b, &a));
                }
                _ => {}
            }
        }
        issues
    }
}

/// A file that parsed before must parse after; a new file must parse. In Python, a statement
/// the patch left unreachable is `check.unreachable` (found by the same scan).
struct Syntax;

impl PostApplyCheck for Syntax {
    fn id(&self) -> &'static str {
        "check.syntax"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        _policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        for c in changes {
            let (Some(after), before) = (text(c.after.as_ref()), text(c.before.as_ref())) else {
                continue;
            };
            let review = syntax::review(&c.path, before.as_deref(), &after);
            let Some(broken) = review.broken else {
                if let Some(u) = review.unreachable {
                    issues.push(unreachable_issue(&c.path, &after, u));
                }
                continue;
            };
            let message = match &broken {
                Broken::Parse { line } => format!(
                    "{} does not parse after the patch (first error at line {line}); check \
                     brackets, indentation and quotes there",
                    c.path
                ),
                Broken::Indent(e) => format!(
                    "{} line {}: Python refuses the file after the patch: {}",
                    c.path,
                    e.line,
                    e.problem.explain()
                ),
            };
            issues.push(
                Issue::new(self.id(), message)
                    .at_path(c.path.clone())
                    .at_line(broken.line()),
            );
        }
        issues
    }
}

/// A Python file indented with spaces only must not gain tab-indented lines: a model that
/// writes tabs there meant spaces, and what it wrote runs only by luck (a block indented with
/// tabs throughout is valid next to blocks indented with spaces, a tab among spaces is not).
/// Other files are left alone: an agent that re-indents an INI file with tabs meant it.
struct TabIndent;

/// A file needs this many space-indented lines (and none with a tab) to count as indented
/// with spaces.
const MIN_SPACE_INDENTED: usize = 3;

impl PostApplyCheck for TabIndent {
    fn id(&self) -> &'static str {
        "check.tab-indent"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        _policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        for c in changes {
            let (Some(after), Some(before)) = (text(c.after.as_ref()), text(c.before.as_ref()))
            else {
                continue;
            };
            if !syntax::indentation_matters(&c.path) {
                continue;
            }
            // Whole-file scans for a line start, so substring searches rather than line loops.
            // Tabs are rare in such files, so finding each is cheap.
            let first_line_with = |t: &str, lead: u8| {
                let b = t.as_bytes();
                t.match_indices(lead as char)
                    .map(|(at, _)| at)
                    .find(|&at| at == 0 || b[at - 1] == b'\n')
                    .map(|at| b[..at].iter().filter(|&&c| c == b'\n').count())
            };
            let space_indented = usize::from(before.starts_with(' '))
                + before.matches("\n ").take(MIN_SPACE_INDENTED).count();
            if first_line_with(&before, b'\t').is_some() || space_indented < MIN_SPACE_INDENTED {
                continue;
            }
            if let Some(line) = first_line_with(&after, b'\t') {
                issues.push(
                    Issue::new(
                        self.id(),
                        format!(
                            "{} line {}: an added line is indented with a tab, but the file \
                             indents with spaces; indent it with spaces like the lines around it",
                            c.path,
                            line + 1
                        ),
                    )
                    .at_path(c.path.clone())
                    .at_line((line + 1) as u64),
                );
            }
        }
        issues
    }
}

/// A change must not add a credential: a configured secret's value (in any encoding) or a
/// string shaped like a provider's token, as GitHub's push protection blocks such a push. The
/// issue names the rule, the file and the line, never the value. A token that was already in
/// the file before the change (a fixture) is not counted again.
struct SecretInChange;

impl PostApplyCheck for SecretInChange {
    fn id(&self) -> &'static str {
        "check.secret-in-change"
    }

    fn check(
        &self,
        changes: &[FileChange],
        _counts: &[(usize, usize)],
        policy: &PatchPolicy,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        for c in changes {
            let Some(after) = text(c.after.as_ref()) else {
                continue;
            };
            let before = text(c.before.as_ref()).unwrap_or_default();
            let (found_after, found_before) = match (
                crate::runner::secrets_in_code(&after, &policy.secrets),
                crate::runner::secrets_in_code(&before, &policy.secrets),
            ) {
                (Ok(after), Ok(before)) => (after, before),
                (Err(error), _) | (_, Err(error)) => {
                    issues.push(
                        Issue::new(
                            self.id(),
                            format!("could not look for credentials in {}: {error}", c.path),
                        )
                        .at_path(c.path.clone()),
                    );
                    continue;
                }
            };
            // Each distinct value counts as added only as often as it appears more after.
            let mut already: std::collections::BTreeMap<&str, usize> =
                std::collections::BTreeMap::new();
            for m in &found_before {
                *already.entry(&before[m.range.clone()]).or_default() += 1;
            }
            for m in &found_after {
                let value = &after[m.range.clone()];
                if let Some(left) = already.get_mut(value).filter(|left| **left > 0) {
                    *left -= 1;
                    continue;
                }
                let line = after[..m.range.start].matches('\n').count() as u64 + 1;
                let what = match m.rule.strip_prefix("env:") {
                    Some(name) => format!("the value of the configured secret {name}"),
                    None => format!("a string shaped like a credential ({})", m.rule),
                };
                issues.push(
                    Issue::new(
                        self.id(),
                        format!(
                            "{} line {line} adds {what}; a credential must never be committed: \
                             read it from the environment at run time instead",
                            c.path
                        ),
                    )
                    .at_path(c.path.clone())
                    .at_line(line),
                );
            }
        }
        issues
    }
}

fn unreachable_issue(path: &str, after: &str, u: Unreachable) -> Issue {
    let ender = after
        .lines()
        .nth((u.ender - 1) as usize)
        .unwrap_or("")
        .trim();
    Issue::new(
        "check.unreachable",
        format!(
            "{path} line {}: this statement can never run: line {} ({ender:?}) ends the block \
             at the same indentation; indent the line under the block it belongs to, or drop \
             it if it repeats what that block already does",
            u.line, u.ender
        ),
    )
    .at_path(path.to_owned())
    .at_line(u.line)
}

pub(crate) fn patch_checks() -> Vec<Box<dyn PatchCheck>> {
    vec![Box::new(Deletes), Box::new(MaxFiles)]
}

pub(crate) fn post_apply_checks() -> Vec<Box<dyn PostApplyCheck>> {
    vec![
        Box::new(MaxLoc),
        Box::new(Tests),
        Box::new(Syntax),
        Box::new(SecretInChange),
        Box::new(TabIndent),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::diff::line_counts;

    fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: path.into(),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    fn run(changes: &[FileChange], policy: &PatchPolicy) -> Vec<String> {
        let counts: Vec<(usize, usize)> = changes.iter().map(line_counts).collect();
        post_apply_checks()
            .iter()
            .flat_map(|c| c.check(changes, &counts, policy))
            .map(|i| i.rule)
            .collect()
    }

    #[test]
    fn post_apply_checks_report_size_tests_and_syntax() {
        let policy = PatchPolicy {
            max_loc: 1,
            ..PatchPolicy::default()
        };
        let changes = [
            change("tests/test_a.py", Some("def test_a():\n    pass\n"), None),
            change("src/a.py", Some("x = 1\n"), Some("x = (\n")),
        ];
        assert_eq!(
            run(&changes, &policy),
            ["check.max-loc", "check.deleted-test", "check.syntax"]
        );
    }

    #[test]
    fn tabs_are_refused_only_in_files_indented_with_spaces() {
        let spaces = "def f():\n    a = 1\n    b = 2\n    return a\n";
        let tabbed_fn = format!("{spaces}\ndef g():\n\treturn 1\n");
        let policy = PatchPolicy::default();
        assert_eq!(
            run(&[change("a.py", Some(spaces), Some(&tabbed_fn))], &policy),
            ["check.tab-indent"]
        );
        let tabs = "def f():\n\ta = 1\n";
        let more_tabs = format!("{tabs}\tb = 2\n");
        let recipe = "x:\n    y = 1\n    z = 2\n    w = 3\n";
        let with_recipe = format!("{recipe}all:\n\tcc x.c\n");
        let ini = "[a]\nb =\n    x\n    y\n    z\n";
        let tabbed_ini = ini.replace("    ", "\t");
        assert_eq!(
            run(
                &[
                    change("b.py", Some(tabs), Some(&more_tabs)),
                    change("Makefile", Some(recipe), Some(&with_recipe)),
                    change("tox.ini", Some(ini), Some(&tabbed_ini)),
                    change("c.py", None, Some(&tabbed_fn)),
                ],
                &policy
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn patch_checks_count_files_and_refuse_deletes() {
        let policy = PatchPolicy {
            max_files: 1,
            ..PatchPolicy::default()
        };
        let files = [
            Touched {
                path: "a".into(),
                action: FileAction::Modify,
            },
            Touched {
                path: "b".into(),
                action: FileAction::Delete,
            },
        ];
        let rules: Vec<String> = patch_checks()
            .iter()
            .flat_map(|c| c.check(&files, &policy))
            .map(|i| i.rule)
            .collect();
        assert_eq!(rules, ["delete.not-allowed", "check.max-files"]);
    }

    #[test]
    fn a_change_that_adds_a_credential_is_refused_by_rule_file_and_line_never_value() {
        let token = format!("ghp_{}", "x1Y2".repeat(9));
        let secret = "correct-horse-battery-staple";
        let encoded = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            secret.as_bytes(),
        );
        let policy = PatchPolicy {
            secrets: vec![crate::runner::Secret {
                name: "DEPLOY_TOKEN".into(),
                value: secret.into(),
            }],
            ..PatchPolicy::default()
        };
        let before = format!("FIXTURE = \"{token}\"\n");
        let after = format!(
            "FIXTURE = \"{token}\"\nDB = \"postgres://test:test@localhost/t\"\nTOKEN = \"{token}\"\nKEY = \"{encoded}\"\n"
        );
        let changes = [change("app/settings.py", Some(&before), Some(&after))];
        let counts: Vec<(usize, usize)> = changes.iter().map(line_counts).collect();
        let issues = SecretInChange.check(&changes, &counts, &policy);
        let shown: Vec<(String, Option<String>, Option<u64>)> = issues
            .iter()
            .map(|i| (i.message.clone(), i.path.clone(), i.line))
            .collect();
        assert!(
            issues
                .iter()
                .all(|i| !i.message.contains(&token) && !i.message.contains(secret)),
            "{issues:?}"
        );
        assert_eq!(
            shown,
            vec![
                (
                    "app/settings.py line 3 adds a string shaped like a credential \
                     (github-token); a credential must never be committed: read it from the \
                     environment at run time instead"
                        .to_owned(),
                    Some("app/settings.py".to_owned()),
                    Some(3)
                ),
                (
                    "app/settings.py line 4 adds the value of the configured secret \
                     DEPLOY_TOKEN; a credential must never be committed: read it from the \
                     environment at run time instead"
                        .to_owned(),
                    Some("app/settings.py".to_owned()),
                    Some(4)
                ),
            ]
        );
    }
}
