//! Ranking: every piece of evidence becomes a weighted, explained hit on a tracked file,
//! and the hits become ranked candidates (`candidate`).
//!
//! Evidence comes in two stages. First what the output names directly: locations and stack
//! frames (`frames`), failing test names mapped to their files (`search`). Then what those
//! point at (`follow`): the failing tests' imports and the functions they call, and the
//! names the output talks about, resolved to the files that define them.

use std::path::Path;

use super::candidate::{Candidate, aggregate};
use super::extract::extract;
use super::frames::location_hits;
use super::names::{Named, Role, named};
use super::tree::Tree;
use super::{follow, phrases, search};

/// Rank tracked files from a failure's output and the names of its failing tests.
///
/// Deterministic: equal scores are ordered by path. Reads a few files whole (the failing
/// tests and what they import) and, only when a search must cover the whole repository,
/// every tracked source file once (the source index).
pub fn localize(
    repo_root: &Path,
    tracked_files: &[String],
    output: &str,
    failing_tests: &[String],
) -> Vec<Candidate> {
    let named = named(output);
    let watched: Vec<String> = named
        .iter()
        .filter(|n| n.role == Role::Error)
        .map(|n| n.name.clone())
        .collect();
    let tree = Tree::new(repo_root, tracked_files, &watched);
    candidates(&tree, output, failing_tests, &named)
}

/// [`localize`] in a tree already set up.
pub(crate) fn candidates(
    tree: &Tree<'_>,
    output: &str,
    failing_tests: &[String],
    named: &[Named],
) -> Vec<Candidate> {
    let mut hits = location_hits(&tree.paths, &extract(output));
    let mut named_files: Vec<&str> = hits
        .iter()
        .filter_map(|hit| tree.tracked(&hit.path))
        .collect();
    named_files.sort_unstable();
    named_files.dedup();
    hits.extend(search::failing_test_hits(tree, failing_tests, &named_files));
    let named_directly = aggregate(hits.clone());
    hits.extend(follow::hits(
        tree,
        &named_directly,
        &hits,
        named,
        &phrases::quoted(output),
    ));
    aggregate(hits)
}
