//! The files a failing test reaches through imports beyond its own: a package entry that
//! re-exports a module (`__init__.py`, `index.js`, `lib.rs`), a module that imports the helper
//! where the bug is. The fix of a failure that names only the test and the package entry
//! often lands one or two imports further; each such file is a weak candidate, weaker the
//! further it is, so the files the output names still rank first.

use std::collections::VecDeque;

use super::hit::Hit;
use super::imports::{Import, imports};
use super::resolve::is_test_path;
use super::tree::Tree;

/// Import chains are followed this deep (a package entry re-exporting a module is 1).
pub(crate) const CLOSURE_DEPTH: usize = 3;
/// At most this many files are visited following one test file's imports.
pub(crate) const MAX_CLOSURE_FILES: usize = 40;
/// Each import step beyond the test's own keeps this share of the weight.
const STEP_FACTOR: f64 = 0.5;

/// A file the test's imports reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reached<'a> {
    pub file: &'a str,
    /// 0 for a file the test imports itself.
    pub depth: usize,
    /// The file whose import reached it (the test itself at depth 0).
    pub via: &'a str,
}

/// Files the imports of test file `test` reach, nearest first, within
/// [`CLOSURE_DEPTH`] steps and [`MAX_CLOSURE_FILES`] files.
pub(crate) fn closure<'a>(tree: &Tree<'a>, test: &'a str, own: &[Import<'a>]) -> Vec<Reached<'a>> {
    let mut queue: VecDeque<Reached<'a>> = own
        .iter()
        .flat_map(|import| import.files.iter())
        .map(|file| Reached {
            file,
            depth: 0,
            via: test,
        })
        .collect();
    let mut visited: Vec<Reached<'a>> = Vec::new();
    while let Some(reached) = queue.pop_front() {
        if reached.file == test || visited.iter().any(|v| v.file == reached.file) {
            continue;
        }
        if visited.len() >= MAX_CLOSURE_FILES {
            break;
        }
        visited.push(reached);
        if reached.depth + 1 >= CLOSURE_DEPTH {
            continue;
        }
        if let Some(text) = tree.read(reached.file) {
            for next in imports(tree, reached.file, &text) {
                queue.extend(next.files.into_iter().map(|file| Reached {
                    file,
                    depth: reached.depth + 1,
                    via: reached.file,
                }));
            }
        }
    }
    visited
}

/// Weak hits for the source files the test reaches beyond its own imports (those are hits
/// of their own): `weight` is what a directly imported file gets, halved at every step.
pub(crate) fn hits(reached: &[Reached<'_>], test: &str, weight: f64) -> Vec<Hit> {
    let further: Vec<&Reached<'_>> = reached
        .iter()
        .filter(|r| r.depth > 0 && !is_test_path(r.file))
        .collect();
    further
        .iter()
        .map(|r| {
            // The files of one step share its weight, so a big package does not crowd the list.
            let peers = further.iter().filter(|o| o.depth == r.depth).count();
            let depth = i32::try_from(r.depth).unwrap_or(i32::MAX);
            Hit {
                path: r.file.to_owned(),
                line: None,
                weight: weight * STEP_FACTOR.powi(depth) / (peers as f64).sqrt(),
                reason: format!(
                    "imported by {}, which failing test file {test} reaches through its imports",
                    r.via
                ),
                names_failing_test: false,
            }
        })
        .collect()
}
