//! The test files related to a change: those whose imports reach a file the change modifies,
//! through the import resolution localization uses (`imports`), with the chain of imports
//! that leads there. The proof runs them when its suite is narrower than the runner's whole
//! suite, so a test elsewhere that uses the changed code still sees the change.
//!
//! The search goes forward from each test file (a file's imports are read and resolved once,
//! whichever test reaches it) and stops at the first changed file a test reaches; it is bounded
//! in depth, in files visited per test, in test files and in files read, and says when a
//! bound cut it short.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use super::imports::imports;
use super::resolve::is_test_path;
use super::tree::Tree;

/// Import chains are followed this deep (a test importing the changed file is 1).
pub(crate) const MAX_DEPTH: usize = 8;
/// At most this many files are visited from one test file.
const MAX_FILES_PER_TEST: usize = 400;
/// At most this many test files are searched.
pub(crate) const MAX_TESTS: usize = 5_000;
/// At most this many files are read whole in one search.
const MAX_READS: usize = 20_000;

/// A test file whose imports reach a changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    pub test: String,
    /// The changed file it reaches first.
    pub reaches: String,
    /// The files from the test to the changed file, both included.
    pub chain: Vec<String>,
}

/// What a search found, and whether a bound cut it short.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The changed files that are not tests: what the tests are searched for.
    pub changed: Vec<String>,
    pub tests: Vec<Related>,
    /// How many test files were searched.
    pub searched: usize,
    /// A bound (test files, depth, files per test, reads) stopped part of the search: a
    /// test that reaches a changed file further than it may be missing.
    pub bounded: bool,
}

/// The test files among `tracked` (those `is_test` accepts) whose imports reach one of the
/// files of `changed` that are not tests, in tracked order.
pub fn related_tests(
    root: &Path,
    tracked: &[String],
    changed: &[String],
    is_test: &dyn Fn(&str) -> bool,
) -> Selection {
    let tree = Tree::new(root, tracked, &[]).with_max_reads(MAX_READS);
    let changed: HashSet<&str> = changed
        .iter()
        .filter(|path| !is_test_path(path))
        .filter_map(|path| tree.tracked(path))
        .collect();
    let mut out = Selection {
        changed: tracked
            .iter()
            .filter(|path| changed.contains(path.as_str()))
            .cloned()
            .collect(),
        ..Selection::default()
    };
    if changed.is_empty() {
        return out;
    }
    let mut graph = Graph {
        tree: &tree,
        edges: HashMap::new(),
    };
    let tests: Vec<&str> = tracked
        .iter()
        .map(String::as_str)
        .filter(|path| !changed.contains(path) && is_test(path))
        .collect();
    out.bounded = tests.len() > MAX_TESTS;
    for test in tests.into_iter().take(MAX_TESTS) {
        out.searched += 1;
        let (found, bounded) = graph.reach(test, &changed);
        out.bounded |= bounded;
        out.tests.extend(found);
    }
    out
}

/// Each file's resolved imports, read once.
struct Graph<'t, 'a> {
    tree: &'t Tree<'a>,
    edges: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> Graph<'_, 'a> {
    fn next(&mut self, file: &'a str) -> Vec<&'a str> {
        if let Some(next) = self.edges.get(file) {
            return next.clone();
        }
        let next: Vec<&'a str> = self
            .tree
            .read(file)
            .map(|text| {
                imports(self.tree, file, &text)
                    .into_iter()
                    .flat_map(|import| import.files)
                    .collect()
            })
            .unwrap_or_default();
        self.edges.insert(file, next.clone());
        next
    }

    /// The first changed file `test` reaches, breadth first, with its chain; and whether a
    /// bound stopped the search.
    fn reach(&mut self, test: &'a str, changed: &HashSet<&str>) -> (Option<Related>, bool) {
        let mut parent: HashMap<&'a str, &'a str> = HashMap::new();
        let mut queue = VecDeque::from([(test, 0usize)]);
        let mut seen = HashSet::from([test]);
        while let Some((file, depth)) = queue.pop_front() {
            if depth >= MAX_DEPTH {
                return (None, true);
            }
            for next in self.next(file) {
                if !seen.insert(next) {
                    continue;
                }
                parent.insert(next, file);
                if changed.contains(next) {
                    let mut chain = vec![next.to_owned()];
                    let mut at = next;
                    while let Some(up) = parent.get(at) {
                        chain.push((*up).to_owned());
                        at = up;
                    }
                    chain.reverse();
                    return (
                        Some(Related {
                            test: test.to_owned(),
                            reaches: next.to_owned(),
                            chain,
                        }),
                        false,
                    );
                }
                if seen.len() >= MAX_FILES_PER_TEST {
                    return (None, true);
                }
                queue.push_back((next, depth + 1));
            }
        }
        (None, false)
    }
}
