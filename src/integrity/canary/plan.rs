//! The canary plan of one proof: which failing tests of the reproduction get canaries, where
//! their sources are, the files written into the working tree for the session and the
//! commands that run them. Tests for which no canary can be built are listed with the reason.

use std::collections::BTreeMap;
use std::path::Path;

use super::names;
use super::runner::{Invocation, Runner, Selection};
use super::source::{self, Built, Names, NoCopy, Target};
use crate::testreport::{TestCase, TestReport, TestStatus};

/// At most this many failing tests of the reproduction get canaries; all of them share the
/// same commands, so more would cost files, not runs.
pub(crate) const MAX_TARGETS: usize = 5;

/// Which canary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    AlwaysFailing,
    Moved,
    Repeated,
    MutatedExpected,
}

impl Kind {
    /// The rule id of a refusal.
    pub(crate) fn rule(self) -> &'static str {
        match self {
            Kind::AlwaysFailing => "prove.canary.always-failing",
            Kind::Moved => "prove.canary.moved",
            Kind::Repeated => "prove.canary.repeated",
            Kind::MutatedExpected => "prove.canary.mutated-expected",
        }
    }

    /// The verdict an honest fix gives this canary.
    pub(crate) fn expected(self) -> TestStatus {
        match self {
            Kind::AlwaysFailing | Kind::MutatedExpected => TestStatus::Failed,
            Kind::Moved | Kind::Repeated => TestStatus::Passed,
        }
    }

    /// What the canary is, in words.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Kind::AlwaysFailing => "a test that always fails, beside the target",
            Kind::Moved => "the target copied under a new name into a new file, lines moved",
            Kind::Repeated => "the target itself called twice from one test, in the same process",
            Kind::MutatedExpected => "the target with its expected literal changed",
        }
    }
}

/// One canary to look for in a session's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Canary {
    pub kind: Kind,
    /// The target test's name in the reproduction's report.
    pub target: String,
    /// The canary's own test name (unique in the session's report).
    pub name: String,
    /// The file that holds it, relative to the repository root.
    pub file: String,
}

/// Everything one proof's canaries need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub invocation: Invocation,
    /// Files written into the working tree for the session: path and text.
    pub writes: Vec<(String, String)>,
    /// The session's commands: one, or two for a tape file run as a script (the moved file
    /// cannot share its invocation).
    pub session: Vec<Selection>,
    /// One command per target that runs it alone, with the original test files.
    pub alone: Vec<(String, Selection)>,
    /// The target tests, by their report name.
    pub targets: Vec<String>,
    pub canaries: Vec<Canary>,
    /// Tests with no canary and why: `(test, reason)`.
    pub not_built: Vec<(String, String)>,
    /// Canaries with nothing to act on and why: `(test, reason)` (a mutated-expected canary
    /// for a test that compares no value with a literal). Unlike `not_built`, nothing the
    /// canary guards is left unjudged: a value equal to everything is what
    /// `check.constant-equality` refuses statically.
    pub inapplicable: Vec<(String, String)>,
    pub perturbed: Perturbed,
}

/// The perturbed copies of the targets (`source::perturb`), run alone on the base and on the
/// change, apart from the canaries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Perturbed {
    /// Per target, its source and its copies inserted right after it (nothing else added):
    /// `(file, anchor, inserted)`, several for a file with several targets. Inserted into
    /// the tree a run sees, so the base keeps its own code when the target's file is also
    /// code the change edits.
    pub writes: Vec<(String, String, String)>,
    /// The commands that run the copies and nothing else: one per target where the runner
    /// selects single tests, one per file where it runs whole files (tape, `node --test`:
    /// each copy's record is read from its own section of the output). Every target is
    /// judged on its own copies.
    pub runs: Vec<Selection>,
    pub copies: Vec<PerturbedCopy>,
    /// Targets with no input literal, so nothing to perturb: `(test, reason)`.
    pub inapplicable: Vec<(String, String)>,
    /// Targets whose copies could not be built, and why: the check is not judged for them.
    pub not_built: Vec<(String, String)>,
}

impl Perturbed {
    /// The files to write into the tree at `root` as it is now (the base or the change):
    /// each target's file with its copies right after it (every target's, for a file with
    /// several). `Err` when a target's source is not in this tree exactly once (the change
    /// edits the failing test itself).
    pub(crate) fn texts(&self, root: &Path) -> Result<Vec<(String, String)>, String> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (file, anchor, inserted) in &self.writes {
            let at = match out.iter().position(|(f, _)| f == file) {
                Some(at) => at,
                None => {
                    let text = std::fs::read_to_string(root.join(file))
                        .map_err(|e| format!("`{file}` could not be read: {e}"))?;
                    out.push((file.clone(), text));
                    out.len() - 1
                }
            };
            let text = &mut out[at].1;
            match text
                .match_indices(anchor.as_str())
                .map(|(at, _)| at)
                .collect::<Vec<_>>()
                .as_slice()
            {
                [start] => text.insert_str(start + anchor.len(), inserted),
                _ => {
                    return Err(format!(
                        "the failing test's source is not in `{file}` once on both trees \
                         (the change edits the test itself)"
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// One perturbed copy to look for in a run's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PerturbedCopy {
    pub target: String,
    /// The run that holds it (an index into [`Perturbed::runs`]).
    pub run: usize,
    /// Its test name (unique in the run's report).
    pub name: String,
    /// What it changed: `` `"a  b"` → `"a  c"` ``.
    pub what: String,
}

/// Build the plan for the reproduction `argv` whose run before the fix gave `before`, with
/// sources read from the working tree at `root` (the change applied; `skip` is efix's
/// artifacts directory). `seed` (a digest of the change) chooses among the names the
/// canaries may take. `Err` says why no canary can be built for the whole run.
pub(crate) fn plan(
    argv: &[String],
    before: Option<&TestReport>,
    root: &Path,
    skip: &Path,
    seed: &str,
) -> Result<Plan, String> {
    let tree = Tree::open(root, skip);
    let scratch = &tree;
    let format = before.map(|r| r.format.as_str());
    let invocation = super::runner::invocation(argv, format, root).ok_or_else(|| {
        "the reproduction names no test runner efix can point at canary files".to_owned()
    })?;
    let runner = invocation.runner;
    let failing: Vec<&TestCase> = before
        .map(|r| {
            r.tests
                .iter()
                .filter(|t| t.status == TestStatus::Failed)
                .collect()
        })
        .unwrap_or_default();
    if failing.is_empty() {
        return Err("the reproduction's report names no failing test".to_owned());
    }
    let mut out = Plan {
        invocation: invocation.clone(),
        writes: Vec::new(),
        session: Vec::new(),
        alone: Vec::new(),
        targets: Vec::new(),
        canaries: Vec::new(),
        not_built: Vec::new(),
        inapplicable: Vec::new(),
        perturbed: Perturbed::default(),
    };
    let mut session = Selection::default();
    let mut second = Selection::default();
    let mut seen = std::collections::BTreeSet::new();
    let mut pending: BTreeMap<String, String> = BTreeMap::new();
    // The perturbed copies already written into each file, whose names the next target's
    // copies must not take; and what each run of the copies is for (a target or a file).
    let mut copies_in: BTreeMap<String, String> = BTreeMap::new();
    let mut run_keys: Vec<String> = Vec::new();
    for case in failing {
        let name = target_name(runner, &case.name);
        if !seen.insert(name.clone()) {
            continue;
        }
        if out.targets.len() >= MAX_TARGETS {
            out.not_built.push((
                name,
                format!("only the first {MAX_TARGETS} failing tests get canaries"),
            ));
            continue;
        }
        match locate(
            &invocation,
            case,
            &name,
            scratch,
            seed,
            &pending,
            &copies_in,
        ) {
            Err(reason) => out.not_built.push((name, reason)),
            Ok((target, built, names)) => {
                let moved = source::moved_path(runner, &target.file, &names);
                let ids = Ids::of(&invocation, &target, &name, &names, &moved);
                if let Some(reason) = &built.no_mutation {
                    out.inapplicable.push((
                        name.clone(),
                        format!("no mutated-expected canary: {reason}"),
                    ));
                }
                let mut canary = |kind: Kind, id: &str, file: &str| {
                    out.canaries.push(Canary {
                        kind,
                        target: name.clone(),
                        name: id.to_owned(),
                        file: file.to_owned(),
                    });
                };
                canary(Kind::AlwaysFailing, &ids.fail, &target.file);
                canary(Kind::Repeated, &ids.repeat, &target.file);
                if built.no_mutation.is_none() {
                    canary(Kind::MutatedExpected, &ids.mutated, &target.file);
                }
                canary(Kind::Moved, &ids.moved, &moved);
                session.ids.push(ids.target.clone());
                session.ids.extend([ids.repeat.clone()]);
                if built.no_mutation.is_none() {
                    session.ids.push(ids.mutated.clone());
                }
                session.ids.push(ids.fail.clone());
                let package = |file: &str| match runner {
                    Runner::Go => file
                        .rsplit_once('/')
                        .map_or(String::new(), |(d, _)| d.to_owned()),
                    _ => file.to_owned(),
                };
                push_new(&mut session.files, package(&target.file));
                if invocation.runs_several_files() {
                    session.ids.push(ids.moved.clone());
                    push_new(&mut session.files, package(&moved));
                } else {
                    second.files.push(moved.clone());
                }
                let alone = Selection {
                    ids: vec![ids.target.clone()],
                    files: vec![package(&target.file)],
                    names: filters_by_name(runner)
                        .then(|| spaced(&name))
                        .into_iter()
                        .collect(),
                    name_endings: false,
                };
                out.alone.push((name.clone(), alone));
                match &built.perturbed {
                    Err(NoCopy::NoInput) => out
                        .perturbed
                        .inapplicable
                        .push((name.clone(), NoCopy::NoInput.to_string())),
                    Err(reason) => out
                        .perturbed
                        .not_built
                        .push((name.clone(), reason.to_string())),
                    Ok(p) => {
                        // Its own run where the runner selects single tests; its file's where
                        // it runs whole files (its copies' records are read per test).
                        let key = if invocation.selects_tests() {
                            name.clone()
                        } else {
                            target.file.clone()
                        };
                        let run = match run_keys.iter().position(|k| *k == key) {
                            Some(run) => run,
                            None => {
                                run_keys.push(key);
                                out.perturbed.runs.push(Selection::default());
                                out.perturbed.runs.len() - 1
                            }
                        };
                        let selection = &mut out.perturbed.runs[run];
                        for ((copy, what), id) in p.copies.iter().zip(&ids.perturbed) {
                            out.perturbed.copies.push(PerturbedCopy {
                                target: name.clone(),
                                run,
                                name: id.clone(),
                                what: what.clone(),
                            });
                            selection.ids.push(id.clone());
                            if filters_by_name(runner) {
                                // The copy's title, after whatever suites hold it (a
                                // title is a fresh name: no other test's ends with it).
                                selection.names.push(copy.clone());
                                selection.name_endings = true;
                            }
                        }
                        push_new(&mut selection.files, package(&target.file));
                        out.perturbed.writes.push((
                            target.file.clone(),
                            p.anchor.clone(),
                            p.inserted.clone(),
                        ));
                        copies_in
                            .entry(target.file.clone())
                            .or_default()
                            .push_str(&p.inserted);
                    }
                }
                pending.insert(target.file.clone(), built.with_canaries);
                out.writes.push((moved, built.moved));
                out.targets.push(name);
            }
        }
    }
    // Each file once, with the canaries of every failing test it holds.
    out.writes.extend(pending);
    if out.targets.is_empty() {
        return Ok(out);
    }
    out.session.push(session);
    if !second.files.is_empty() {
        out.session.push(second);
    }
    Ok(out)
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The runners whose selection is a regex over the whole test name.
fn filters_by_name(runner: Runner) -> bool {
    matches!(runner, Runner::Jest | Runner::Vitest | Runner::Mocha)
}

/// The name a target goes by: a tape test by its title (its report names assertions
/// `title #2`), a go subtest by its top-level test.
fn target_name(runner: Runner, name: &str) -> String {
    match runner {
        Runner::Go => name.split('/').next().unwrap_or(name).to_owned(),
        Runner::Tape | Runner::NodeTest => match name.rsplit_once(" #") {
            Some((whole, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                whole.to_owned()
            }
            _ => name.to_owned(),
        },
        _ => name.to_owned(),
    }
}

/// A JavaScript test's titles joined by spaces, as jest's `-t` and mocha's `--grep` read it.
fn spaced(name: &str) -> String {
    name.replace(" › ", " ").replace(" > ", " ")
}

/// The session ids of a target and its canaries.
struct Ids {
    target: String,
    fail: String,
    repeat: String,
    mutated: String,
    moved: String,
    perturbed: Vec<String>,
}

impl Ids {
    fn of(invocation: &Invocation, target: &Target, name: &str, names: &Names, moved: &str) -> Ids {
        let containers = &target.path[..target.path.len().saturating_sub(1)];
        match invocation.runner {
            Runner::Pytest => {
                let prefix: Vec<&str> = std::iter::once(target.file.as_str())
                    .chain(containers.iter().map(String::as_str))
                    .collect();
                let at = |leaf: &str| format!("{}::{leaf}", prefix.join("::"));
                let moved_id = if containers.is_empty() {
                    format!("{moved}::{}", names.moved)
                } else {
                    format!("{moved}::{}::{}", source::moved_class(names), names.moved)
                };
                Ids {
                    target: name.to_owned(),
                    fail: at(&names.fail),
                    repeat: at(&names.repeat),
                    mutated: at(&names.mutated),
                    moved: moved_id,
                    perturbed: names.perturbed.iter().map(|n| at(n)).collect(),
                }
            }
            Runner::Unittest | Runner::Django => {
                // A module's dotted name is its path under the label directory.
                let module = |file: &str| {
                    let file = match invocation.base.as_str() {
                        "" => file,
                        base => file
                            .strip_prefix(base)
                            .and_then(|rest| rest.strip_prefix('/'))
                            .unwrap_or(file),
                    };
                    file.trim_end_matches(".py").replace('/', ".")
                };
                let prefix: Vec<String> = std::iter::once(module(&target.file))
                    .chain(containers.iter().cloned())
                    .collect();
                let at = |leaf: &str| format!("{}.{leaf}", prefix.join("."));
                let moved_id = if containers.is_empty() {
                    format!("{}.{}", module(moved), names.moved)
                } else {
                    format!(
                        "{}.{}.{}",
                        module(moved),
                        source::moved_class(names),
                        names.moved
                    )
                };
                Ids {
                    target: name.to_owned(),
                    fail: at(&names.fail),
                    repeat: at(&names.repeat),
                    mutated: at(&names.mutated),
                    moved: moved_id,
                    perturbed: names.perturbed.iter().map(|n| at(n)).collect(),
                }
            }
            Runner::Cargo => {
                let at = |leaf: &str| {
                    containers
                        .iter()
                        .map(String::as_str)
                        .chain([leaf])
                        .collect::<Vec<_>>()
                        .join("::")
                };
                Ids {
                    target: name.to_owned(),
                    fail: at(&names.fail),
                    repeat: at(&names.repeat),
                    mutated: at(&names.mutated),
                    moved: at(&format!("{}::{}", names.file, names.moved)),
                    perturbed: names.perturbed.iter().map(|n| at(n)).collect(),
                }
            }
            _ => Ids {
                target: name.to_owned(),
                fail: names.fail.clone(),
                repeat: names.repeat.clone(),
                mutated: names.mutated.clone(),
                moved: names.moved.clone(),
                perturbed: names.perturbed.clone(),
            },
        }
    }
}

/// The target's own name, as its file spells it: the last part of its path (a JavaScript
/// title after its suites).
fn leaf_of(runner: Runner, path: &[String], name: &str) -> String {
    let last = path.last().map_or(name, String::as_str);
    match runner {
        Runner::Jest | Runner::Vitest | Runner::Mocha | Runner::Tape | Runner::NodeTest => last
            .rsplit(['›', '>'])
            .next()
            .unwrap_or(last)
            .trim()
            .to_owned(),
        _ => last.to_owned(),
    }
}

/// Find the target's source file and build its canaries there: the file the report names
/// when it names one, else the one file of the runner's language that holds the test.
fn locate(
    invocation: &Invocation,
    case: &TestCase,
    name: &str,
    scratch: &Tree,
    seed: &str,
    pending: &BTreeMap<String, String>,
    copies_in: &BTreeMap<String, String>,
) -> Result<(Target, Built, Names), String> {
    let runner = invocation.runner;
    let candidates: Vec<(String, Vec<String>)> = match runner {
        Runner::Pytest => {
            let mut parts = name.split("::").map(str::to_owned);
            let file = parts.next().unwrap_or_default();
            vec![(file, parts.collect())]
        }
        Runner::Unittest | Runner::Django => {
            let parts: Vec<&str> = name.split('.').collect();
            let base = match invocation.base.as_str() {
                "" => String::new(),
                base => format!("{base}/"),
            };
            (1..parts.len())
                .rev()
                .map(|k| {
                    (
                        format!("{base}{}.py", parts[..k].join("/")),
                        parts[k..].iter().map(|s| (*s).to_owned()).collect(),
                    )
                })
                .filter(|(file, _)| scratch.join(file).is_file())
                .take(1)
                .collect()
        }
        Runner::Cargo => {
            let path: Vec<String> = name.split("::").map(str::to_owned).collect();
            let leaf = path.last().cloned().unwrap_or_default();
            files_with(scratch, &["rs"], &format!("fn {leaf}"))
                .into_iter()
                .map(|f| (f, path.clone()))
                .collect()
        }
        Runner::Go => files_with(scratch, &["go"], &format!("func {name}("))
            .into_iter()
            .filter(|f| f.ends_with("_test.go"))
            .map(|f| (f, vec![name.to_owned()]))
            .collect(),
        _ => {
            let named = case
                .file
                .as_ref()
                .filter(|f| scratch.join(f).is_file())
                .map(|f| vec![f.clone()]);
            let leaf = spaced(name);
            let leaf = leaf.rsplit(' ').next().unwrap_or(&leaf).to_owned();
            named
                .unwrap_or_else(|| {
                    files_with(
                        scratch,
                        &["js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx"],
                        &leaf,
                    )
                })
                .into_iter()
                .map(|f| (f, vec![name.to_owned()]))
                .collect()
        }
    };
    let mut built = Vec::new();
    let mut reasons = Vec::new();
    for (file, path) in candidates {
        // Another failing test of the same file already has its canaries in it.
        let Some(text) = pending
            .get(&file)
            .cloned()
            .or_else(|| std::fs::read_to_string(scratch.join(&file)).ok())
        else {
            continue;
        };
        let leaf = leaf_of(runner, &path, name);
        let target = Target { file, path };
        let dir = match target.file.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => String::new(),
        };
        let exists = |stem: &str| {
            std::fs::read_dir(scratch.join(&dir)).is_ok_and(|mut entries| {
                entries.any(|e| {
                    e.is_ok_and(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        name == stem
                            || name.starts_with(&format!("{stem}."))
                            || name.starts_with(&format!("{stem}_test."))
                    })
                })
            })
        };
        // Names the file holds once every target's copies are in it are taken too.
        let taken = format!(
            "{text}{}",
            copies_in.get(&target.file).map_or("", String::as_str)
        );
        let names = names::names(runner, seed, &leaf, &taken, &exists);
        let moved = scratch.join(source::moved_path(runner, &target.file, &names));
        match source::build(runner, &target, &text, &names, &moved.to_string_lossy()) {
            Ok(b) => built.push((target, b, names)),
            Err(reason) => reasons.push(reason),
        }
    }
    match built.len() {
        1 => built
            .pop()
            .ok_or_else(|| "its source file was not found".to_owned()),
        0 => Err(reasons
            .into_iter()
            .next()
            .unwrap_or_else(|| "its source file was not found".to_owned())),
        _ => Err("it is defined in several files".to_owned()),
    }
}

/// The working tree the plan reads: its root, and what git ignores there (dependencies,
/// build output, efix's artifacts), which holds no test of the repository's own.
pub(crate) struct Tree {
    root: std::path::PathBuf,
    skip: std::path::PathBuf,
    repo: Option<git2::Repository>,
}

impl Tree {
    fn open(root: &Path, skip: &Path) -> Tree {
        Tree {
            root: root.to_path_buf(),
            skip: skip.to_path_buf(),
            repo: git2::Repository::open(root).ok(),
        }
    }

    fn join(&self, rel: impl AsRef<Path>) -> std::path::PathBuf {
        self.root.join(rel)
    }

    /// Whether a walk for test sources leaves `path` out: `.git`, efix's artifacts, and
    /// whatever git ignores.
    fn left_out(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        path == self.skip
            || rel.file_name().is_some_and(|n| n == ".git")
            || self
                .repo
                .as_ref()
                .is_some_and(|r| r.is_path_ignored(rel).unwrap_or(false))
    }
}

/// Files of the tree (not following links, not what git ignores) with one of `extensions`
/// whose text contains `needle`, relative to the root, sorted.
fn files_with(tree: &Tree, extensions: &[&str], needle: &str) -> Vec<String> {
    let root = tree.root.as_path();
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if tree.left_out(&path) {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && path
                    .extension()
                    .is_some_and(|e| extensions.iter().any(|x| e == *x))
                && std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle))
                && let Ok(rel) = path.strip_prefix(root)
            {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan for `argv` over a repository holding `files`, whose tests `failing` failed.
    fn plan_of(
        files: &[(&str, &str)],
        argv: &str,
        format: &str,
        failing: &[(&str, Option<&str>)],
    ) -> (tempfile::TempDir, Plan) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let before = TestReport {
            format: format.into(),
            tests: failing
                .iter()
                .map(|(name, file)| TestCase {
                    name: (*name).into(),
                    status: TestStatus::Failed,
                    file: file.map(str::to_owned),
                })
                .collect(),
            passed: 0,
            failed: failing.len() as u64,
            skipped: 0,
            errors: 0,
            lists_passed: true,
        };
        let argv: Vec<String> = argv.split(' ').map(str::to_owned).collect();
        let plan = plan(
            &argv,
            Some(&before),
            dir.path(),
            &dir.path().join("efix-artifacts"),
            "s",
        )
        .unwrap();
        (dir, plan)
    }

    const TAPE_FILE: &str = "const test = require('tape');\nconst { parse } = require('../lib');\n\ntest('reads seconds', (t) => {\n  t.equal(parse('10s'), 10000);\n  t.end();\n});\n\ntest('reads minutes', (t) => {\n  t.equal(parse('2m'), 120000);\n  t.end();\n});\n\ntest('reads nothing', (t) => {\n  t.equal(parse(), 0);\n  t.end();\n});\n";

    #[test]
    fn every_failing_test_of_a_whole_file_gets_its_copies_in_one_run_of_the_file() {
        let (dir, plan) = plan_of(
            &[("test/d.test.js", TAPE_FILE)],
            "node node_modules/tape/bin/tape test/d.test.js",
            "tap",
            &[
                ("reads seconds", Some("test/d.test.js")),
                ("reads minutes #2", Some("test/d.test.js")),
                ("reads nothing", Some("test/d.test.js")),
            ],
        );
        let copies = &plan.perturbed;
        let targets: Vec<(&str, usize)> = copies
            .copies
            .iter()
            .map(|c| (c.target.as_str(), c.run))
            .collect();
        assert_eq!(
            targets,
            [
                ("reads seconds", 0),
                ("reads seconds", 0),
                ("reads seconds", 0),
                ("reads minutes", 0),
                ("reads minutes", 0)
            ]
        );
        assert_eq!(copies.runs.len(), 1);
        assert_eq!(copies.runs[0].files, ["test/d.test.js"]);
        // No input literal: nothing to perturb, the only target that passes without copies.
        assert_eq!(
            copies.inapplicable,
            [(
                "reads nothing".to_owned(),
                "no input literal of the call under test to perturb".to_owned()
            )]
        );
        assert!(copies.not_built.is_empty());
        // Both targets' copies go into the one file, each right after its target, and no
        // two copies share a name.
        let texts = copies.texts(dir.path()).unwrap();
        assert_eq!(texts.len(), 1);
        let text = &texts[0].1;
        for copy in &copies.copies {
            assert_eq!(
                text.matches(&format!("'{}'", copy.name)).count(),
                1,
                "{text}"
            );
        }
        let at = |needle: &str| text.find(needle).unwrap();
        assert!(at("parse('10t')") < at("test('reads minutes'"));
        assert!(at("parse('2n')") > at("test('reads minutes'"));
    }

    #[test]
    fn a_runner_that_selects_tests_runs_each_targets_copies_apart() {
        let file = "from words import count\n\n\ndef test_two():\n    assert count(\"a  b\") == 2\n\n\ndef test_three():\n    assert count(\"a  b c\") == 3\n";
        let (_dir, plan) = plan_of(
            &[("tests/test_words.py", file)],
            "pytest tests/test_words.py",
            "pytest",
            &[
                ("tests/test_words.py::test_two", None),
                ("tests/test_words.py::test_three", None),
            ],
        );
        let copies = &plan.perturbed;
        assert_eq!(copies.runs.len(), 2);
        for copy in &copies.copies {
            let run = &copies.runs[copy.run];
            assert!(run.ids.contains(&copy.name), "{run:?}");
            assert!(copy.name.starts_with(&copy.target), "{copy:?}");
        }
        assert!(
            copies
                .runs
                .iter()
                .all(|run| run.ids.iter().all(|id| id.contains("test_two"))
                    || run.ids.iter().all(|id| id.contains("test_three")))
        );
    }
}
