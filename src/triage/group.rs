//! Failures grouped by cause: each group's tests and reproduction command, the groups in
//! order (most tests first), and what is left out of the matrix and why (over the job limit,
//! refused by `commands.allow`, already fixed by an open efix pull request).
//!
//! A [`Grouper`] takes failures one at a time and keeps only each test's name and the key of
//! its cause, so the failure texts of a large run are never held together.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::cause::{Cause, Context, Rule, cause_of};
use super::failure::{Failure, Runner};
use super::selector::{self, Programs, TestRef};
use crate::localize::Targets;
use crate::policy::command::{CommandRefusal, check};

/// What shapes the groups.
#[derive(Debug, Clone)]
pub struct Options {
    /// Paths under this directory are shown relative to it (the checkout the run used, e.g.
    /// `$GITHUB_WORKSPACE`).
    pub root: String,
    /// Replaces the runner's default program in commands (`python -m pytest`).
    pub program: Option<String>,
    /// The Go module path (from `go.mod` at the root), so packages become `./pkg`.
    pub go_module: Option<String>,
    /// At most this many groups go into the matrix.
    pub max_jobs: usize,
    /// `commands.allow`.
    pub allow: Vec<String>,
    /// `--group-by`: only this rule, then the test's file.
    pub group_by: Option<Rule>,
}

/// One cause and the failing tests it explains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// A stable id: the first hex digits of the cause key's SHA-256.
    pub id: String,
    pub runner: Runner,
    /// The command that runs exactly these tests.
    pub command: String,
    /// The tests, as their runner names them (node ids, full names, `TestA/sub`).
    pub tests: Vec<String>,
    /// The rule that grouped them.
    pub rule: Rule,
    /// What the tests share, in words, the rule first: `frame shop/money.py:9: ValueError:
    /// ...`, ``target `slug` (shop/text.py:3), called by the failing assertion``.
    pub cause: String,
}

/// A group that is not in the matrix, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub group: Group,
    pub reason: String,
}

/// The outcome of a triage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Triage {
    /// Failing tests read (after removing duplicates and go parents of failing subtests).
    pub failures: usize,
    /// The groups of the matrix, most tests first.
    pub groups: Vec<Group>,
    /// Groups over `--max-jobs`.
    pub left_out: Vec<Skipped>,
    /// Groups whose command `commands.allow` refuses.
    pub refused: Vec<Skipped>,
    /// Groups that already have an open efix pull request.
    pub open: Vec<Skipped>,
}

/// Digits of the cause hash in a group id.
const ID_HEX: usize = 8;

/// A cause key's group while failures are read: (rule, label, first seen, tests).
type Collected = (Rule, String, usize, BTreeSet<TestRef>);

/// Collects failures one at a time.
#[derive(Default)]
pub struct Grouper<'t, 'a> {
    /// cause key → its group.
    causes: HashMap<(Runner, String), Collected>,
    seen: BTreeSet<(Runner, TestRef)>,
    next: usize,
    /// The repository, when it is at hand: the `target` rule.
    targets: Option<&'t Targets<'a>>,
    forced: Option<Rule>,
}

impl<'t, 'a> Grouper<'t, 'a> {
    /// A grouper that localizes in `targets` when given and uses only `forced` when set.
    pub fn new(targets: Option<&'t Targets<'a>>, forced: Option<Rule>) -> Grouper<'t, 'a> {
        Grouper {
            targets,
            forced,
            ..Grouper::default()
        }
    }

    /// Add one failure; a test already seen (a retry, a second report) is ignored.
    pub fn add(&mut self, failure: Failure, root: &str) {
        let test = TestRef {
            name: failure.name.clone(),
            scope: failure.scope.clone(),
        };
        if !self.seen.insert((failure.runner, test.clone())) {
            return;
        }
        let context = Context {
            root,
            targets: self.targets,
            forced: self.forced,
        };
        let Cause { rule, key, label } = cause_of(&failure, &context);
        let order = self.next;
        let entry = self
            .causes
            .entry((failure.runner, key))
            .or_insert_with(|| (rule, label, order, BTreeSet::new()));
        entry.3.insert(test);
        self.next += 1;
    }

    /// The groups, most tests first (then first seen), with their commands, checked against
    /// the allowlist and cut at the job limit.
    pub fn finish(self, options: &Options) -> Triage {
        let parents = go_parents(&self.seen);
        let mut groups: Vec<(usize, Runner, String, Rule, String, Vec<TestRef>)> = self
            .causes
            .into_iter()
            .map(|((runner, key), (rule, label, order, tests))| {
                let tests: Vec<TestRef> = tests
                    .into_iter()
                    .filter(|test| runner != Runner::Go || !parents.contains(test))
                    .collect();
                (order, runner, key, rule, label, tests)
            })
            .filter(|group| !group.5.is_empty())
            .collect();
        groups.sort_by(|a, b| b.5.len().cmp(&a.5.len()).then(a.0.cmp(&b.0)));
        let programs = Programs {
            program: options.program.clone(),
            go_module: options.go_module.clone(),
        };
        let mut triage = Triage {
            failures: groups.iter().map(|group| group.5.len()).sum(),
            groups: Vec::new(),
            left_out: Vec::new(),
            refused: Vec::new(),
            open: Vec::new(),
        };
        for (_, runner, key, rule, label, tests) in groups {
            let digest = Sha256::digest(format!("{}\n{key}", runner.name()).as_bytes());
            let id: String = digest
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect::<String>()
                .chars()
                .take(ID_HEX)
                .collect();
            let group = Group {
                id,
                runner,
                command: selector::command(runner, &tests, &programs),
                tests: tests.into_iter().map(|test| test.name).collect(),
                rule,
                cause: label,
            };
            if let Err(CommandRefusal { message, rule, .. }) = check(&group.command, &options.allow)
            {
                triage.refused.push(Skipped {
                    group,
                    reason: format!("{message} [{rule}]"),
                });
            } else if triage.groups.len() < options.max_jobs {
                triage.groups.push(group);
            } else {
                triage.left_out.push(Skipped {
                    group,
                    reason: format!("over --max-jobs {}", options.max_jobs),
                });
            }
        }
        triage
    }
}

/// Go tests that failed only because a subtest failed (`TestA` when `TestA/x` failed): the
/// subtest is the test to run, the parent's failure says nothing of its own.
fn go_parents(seen: &BTreeSet<(Runner, TestRef)>) -> BTreeSet<TestRef> {
    let mut parents = BTreeSet::new();
    for (runner, test) in seen {
        if *runner != Runner::Go {
            continue;
        }
        let mut name = test.name.as_str();
        while let Some((parent, _)) = name.rsplit_once('/') {
            parents.insert(TestRef {
                name: parent.to_owned(),
                scope: test.scope.clone(),
            });
            name = parent;
        }
    }
    parents
}

/// Group failures read by `read` (which calls its argument once per failure), localizing
/// in `targets` when the repository is at hand.
pub fn triage(
    options: &Options,
    targets: Option<&Targets<'_>>,
    read: impl FnOnce(&mut dyn FnMut(Failure)) -> Result<(), super::TriageError>,
) -> Result<Triage, super::TriageError> {
    let mut grouper = Grouper::new(targets, options.group_by);
    read(&mut |failure| grouper.add(failure, &options.root))?;
    Ok(grouper.finish(options))
}

impl Triage {
    /// Move the matrix groups whose command already has an open efix pull request (`open`
    /// says which, by command) out of the matrix, then refill it up to the job limit from
    /// the groups left out.
    pub fn skip_open(&mut self, open: &dyn Fn(&str) -> Option<String>, max_jobs: usize) {
        let mut candidates: Vec<Group> = self.groups.drain(..).collect();
        candidates.extend(self.left_out.drain(..).map(|skipped| skipped.group));
        for group in candidates {
            if let Some(branch) = open(&group.command) {
                self.open.push(Skipped {
                    group,
                    reason: format!("open efix pull request from {branch}"),
                });
            } else if self.groups.len() < max_jobs {
                self.groups.push(group);
            } else {
                self.left_out.push(Skipped {
                    group,
                    reason: format!("over --max-jobs {max_jobs}"),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(name: &str, scope: &str, text: &str) -> Failure {
        Failure {
            runner: Runner::Pytest,
            name: name.to_owned(),
            scope: Some(scope.to_owned()),
            text: text.to_owned(),
            message: None,
        }
    }

    fn options(max_jobs: usize) -> Options {
        Options {
            root: String::new(),
            program: None,
            go_module: None,
            max_jobs,
            allow: vec!["pytest".to_owned()],
            group_by: None,
        }
    }

    #[test]
    fn groups_are_ordered_by_size_and_cut_at_the_job_limit() {
        let helper = "tests/test_a.py:3: \n\nshop/h.py:9: ValueError\nE   ValueError: x";
        let mut grouper = Grouper::default();
        grouper.add(
            failure(
                "tests/test_a.py::test_1",
                "tests/test_a.py",
                "E   assert 1 == 2",
            ),
            "",
        );
        for n in 0..3 {
            grouper.add(
                failure(
                    &format!("tests/test_b.py::test_{n}"),
                    "tests/test_b.py",
                    helper,
                ),
                "",
            );
        }
        // The same test reported twice counts once.
        grouper.add(
            failure("tests/test_b.py::test_0", "tests/test_b.py", helper),
            "",
        );
        let triage = grouper.finish(&options(1));
        assert_eq!(triage.failures, 4);
        assert_eq!(triage.groups.len(), 1);
        assert_eq!(
            triage.groups[0].tests,
            vec![
                "tests/test_b.py::test_0".to_owned(),
                "tests/test_b.py::test_1".to_owned(),
                "tests/test_b.py::test_2".to_owned()
            ]
        );
        assert_eq!(triage.groups[0].cause, "frame shop/h.py:9: ValueError: x");
        assert_eq!(triage.left_out.len(), 1);
        assert_eq!(
            triage.left_out[0].group.cause,
            "message assert <num> == <num>"
        );
    }

    #[test]
    fn refused_commands_leave_the_matrix() {
        let mut grouper = Grouper::default();
        grouper.add(failure("tests/a.py::t", "tests/a.py", "E  x"), "");
        let mut opts = options(5);
        opts.allow = vec!["cargo".to_owned()];
        let triage = grouper.finish(&opts);
        assert!(triage.groups.is_empty());
        assert_eq!(triage.refused.len(), 1);
        assert!(triage.refused[0].reason.contains("command.not-allowed"));
    }

    #[test]
    fn open_pull_requests_free_their_slot_for_a_left_out_group() {
        let mut grouper = Grouper::default();
        grouper.add(failure("tests/a.py::t1", "tests/a.py", "E  one"), "");
        grouper.add(failure("tests/a.py::t2", "tests/a.py", "E  two"), "");
        let mut triage = grouper.finish(&options(1));
        let first = triage.groups[0].command.clone();
        triage.skip_open(
            &|command| (command == first).then(|| "efix/7-abcd1234".to_owned()),
            1,
        );
        assert_eq!(triage.open.len(), 1);
        assert_eq!(triage.groups.len(), 1);
        assert_ne!(triage.groups[0].command, first);
        assert!(triage.left_out.is_empty());
    }

    #[test]
    fn the_localized_target_merges_different_messages_and_splits_equal_ones() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("shop/a.py", "def one(x):\n    return x\n"),
            ("shop/b.py", "def two(x):\n    return x\n"),
            (
                "tests/test_ab.py",
                "from shop.a import one\nfrom shop.b import two\n\n\ndef test_1():\n    assert one(1) == 2\n\n\ndef test_2():\n    assert one(5) == 3\n\n\ndef test_3():\n    assert two(1) == 2\n",
            ),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let repository = crate::localize::Repository::new(dir.path().to_owned(), |root| {
            crate::localize::list_files(root, 100)
        });
        let targets = Targets::new(&repository);
        let mut grouper = Grouper::new(Some(&targets), None);
        // test_1 and test_3 fail with the same message, test_2 with another.
        for (name, line, message) in [
            ("test_1", 6, "assert 1 == 2"),
            ("test_2", 10, "assert 5 == 3"),
            ("test_3", 14, "assert 1 == 2"),
        ] {
            let text = format!("E       {message}\n\ntests/test_ab.py:{line}: AssertionError");
            grouper.add(
                failure(
                    &format!("tests/test_ab.py::{name}"),
                    "tests/test_ab.py",
                    &text,
                ),
                "",
            );
        }
        let triage = grouper.finish(&options(5));
        let groups: Vec<(Rule, &str, Vec<String>)> = triage
            .groups
            .iter()
            .map(|g| (g.rule, g.cause.as_str(), g.tests.clone()))
            .collect();
        assert_eq!(
            groups,
            vec![
                (
                    Rule::Target,
                    "target `one` (shop/a.py:1), called by the failing assertion",
                    vec![
                        "tests/test_ab.py::test_1".to_owned(),
                        "tests/test_ab.py::test_2".to_owned()
                    ]
                ),
                (
                    Rule::Target,
                    "target `two` (shop/b.py:1), called by the failing assertion",
                    vec!["tests/test_ab.py::test_3".to_owned()]
                ),
            ]
        );
    }
}
