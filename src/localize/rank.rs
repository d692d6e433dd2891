//! Ranking: every piece of evidence becomes a weighted, explained hit on a tracked file; hits
//! are summed per file with diminishing returns and sorted.
//!
//! Stack frames are grouped into stacks and weighed from the deepest application frame up:
//! that frame (where the failure happened in code the repository owns) counts most, and a
//! non-test file named below a test file's frame (code a test called) gets a bonus.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{Found, extract};
use super::resolve::{PathIndex, is_test_path};
use super::search::{Hit, Reader, failing_test_hits, identifier_hits, quoted_identifiers};

/// Frames of one stack are at most this many output lines apart (Python prints a source
/// line between frames, Rust backtraces a symbol line).
const STACK_LINE_GAP: usize = 4;
/// pytest prints a frame's source and locals between its `path:line:` frames.
const PYTEST_FRAME_GAP: usize = 60;
/// Each frame further from the deepest application frame weighs this fraction of the one
/// below it.
const FRAME_DECAY: f64 = 0.6;
/// Only this many application frames of a stack, deepest first, become hits.
const MAX_FRAMES_PER_STACK: usize = 64;
/// No frame weighs less than this.
const MIN_FRAME_WEIGHT: f64 = 5.0;
/// Bonus for a non-test file whose frame lies below a test file's frame in the same stack.
const BELOW_TEST_BONUS: f64 = 25.0;
/// Evidence beyond the strongest adds this fraction of its weight, at most doubling a score.
const EXTRA_EVIDENCE_FACTOR: f64 = 0.2;
/// At most this many candidates are returned.
const MAX_CANDIDATES: usize = 30;
/// At most this many reasons are listed per candidate.
const MAX_REASONS: usize = 10;

/// A ranked candidate file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Repository-relative path of a tracked file.
    pub path: String,
    /// The strongest evidence's weight plus a fifth of the others' (at most doubling it);
    /// several hits that only say "holds a failing test" count once. Only the order is
    /// meaningful.
    pub score: f64,
    /// Lines named in the failure output, or found by the searches (test and identifier
    /// definitions), 1-based, ascending.
    pub lines: Vec<u64>,
    /// Why the file is a candidate, strongest first, each with its weight, e.g.
    /// `rust-panic at src/lib.rs:12:5 (+100)`.
    pub reasons: Vec<String>,
}

/// Weight of the deepest application frame of a stack, by kind.
fn stack_weight(kind: &str) -> Option<f64> {
    match kind {
        "python-traceback" => Some(90.0),
        "js-stack" => Some(85.0),
        "go-panic" => Some(85.0),
        "rust-backtrace" => Some(70.0),
        // pytest's long report lists a failure's frames, test first, as `path:line: Error`.
        "pytest-failure" => Some(75.0),
        _ => None,
    }
}

/// Weight of a single (non-stack) location, by kind.
fn location_weight(kind: &str) -> f64 {
    match kind {
        // A compile error is as definite as a panic: the code does not build right there.
        "rust-panic" | "rustc-error" | "tsc-error" => 100.0,
        "compiler-error" => 95.0,
        "go-test" | "node-throw" | "rust-doctest" => 80.0,
        "node-assertion" => 70.0,
        // Warnings rarely cause a failure; they only break ties.
        "rustc-warning" | "compiler-warning" => 10.0,
        _ => 45.0,
    }
}

/// Rank tracked files from a failure's output and the names of its failing tests.
///
/// Deterministic: equal scores are ordered by path.
pub fn localize(
    repo_root: &Path,
    tracked_files: &[String],
    output: &str,
    failing_tests: &[String],
) -> Vec<Candidate> {
    let index = PathIndex::new(repo_root, tracked_files);
    let mut hits = location_hits(&index, &extract(output));
    let mut reader = Reader::new(repo_root);
    hits.extend(failing_test_hits(
        &index,
        tracked_files,
        &mut reader,
        failing_tests,
    ));
    hits.extend(identifier_hits(
        tracked_files,
        &mut reader,
        &quoted_identifiers(output),
    ));
    aggregate(hits)
}

/// Hits from extracted locations: stacks weighed frame by frame, the rest by kind.
fn location_hits(index: &PathIndex<'_>, found: &[Found]) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let kind = found[i].location.kind.as_str();
        let Some(base) = stack_weight(kind) else {
            hits.extend(single_hits(index, &found[i]));
            i += 1;
            continue;
        };
        let gap = if kind == "pytest-failure" {
            PYTEST_FRAME_GAP
        } else {
            STACK_LINE_GAP
        };
        let mut end = i + 1;
        while end < found.len()
            && found[end].location.kind == kind
            && found[end].output_line - found[end - 1].output_line <= gap
        {
            end += 1;
        }
        hits.extend(stack_hits(index, &found[i..end], base));
        i = end;
    }
    hits
}

fn single_hits(index: &PathIndex<'_>, found: &Found) -> Vec<Hit> {
    let location = &found.location;
    let paths = index.resolve(&location.path);
    let weight = location_weight(&location.kind) / paths.len().max(1) as f64;
    paths
        .iter()
        .map(|path| Hit {
            path: (*path).to_owned(),
            line: location.line,
            weight,
            names_failing_test: matches!(location.kind.as_str(), "jest-fail" | "pytest-node"),
            reason: format!(
                "{} at {}{}",
                location.kind,
                place(path, location.line, location.column),
                ambiguity(paths.len(), &location.path)
            ),
        })
        .collect()
}

/// One stack: deepest application frame first, decaying upwards.
fn stack_hits(index: &PathIndex<'_>, frames: &[Found], base: f64) -> Vec<Hit> {
    let mut ordered: Vec<&Found> = frames.iter().collect();
    // Python prints the most recent call last; the others print it first.
    if matches!(
        frames[0].location.kind.as_str(),
        "python-traceback" | "pytest-failure"
    ) {
        ordered.reverse();
    }
    let app: Vec<(&Found, Vec<&str>)> = ordered
        .into_iter()
        .map(|frame| (frame, index.resolve(&frame.location.path)))
        .filter(|(_, paths)| !paths.is_empty())
        .collect();
    // The nearest test file above each frame, in one pass from the top (recursion errors
    // print stacks of a thousand frames).
    let mut caller_tests: Vec<Option<&str>> = vec![None; app.len()];
    let mut nearest = None;
    for depth in (0..app.len()).rev() {
        caller_tests[depth] = nearest;
        if let Some(test) = app[depth].1.iter().find(|path| is_test_path(path)) {
            nearest = Some(*test);
        }
    }
    let mut hits = Vec::new();
    for (depth, (frame, paths)) in app.iter().enumerate().take(MAX_FRAMES_PER_STACK) {
        let location = &frame.location;
        let weight = (base * FRAME_DECAY.powi(depth as i32)).max(MIN_FRAME_WEIGHT);
        let caller_test = caller_tests[depth];
        for path in paths {
            let position = if depth == 0 {
                "deepest application frame".to_owned()
            } else {
                format!("frame {depth} above the deepest application frame")
            };
            let mut reason = format!(
                "{position} of a {} stack at {}{}",
                location.kind,
                place(path, location.line, location.column),
                ambiguity(paths.len(), &location.path)
            );
            let mut weight = weight / paths.len() as f64;
            if let Some(test) = caller_test.filter(|_| !is_test_path(path)) {
                weight += BELOW_TEST_BONUS;
                reason.push_str(&format!(", called from test file {test}"));
            }
            hits.push(Hit {
                path: (*path).to_owned(),
                line: location.line,
                weight,
                reason,
                names_failing_test: false,
            });
        }
    }
    hits
}

fn place(path: &str, line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!("{path}:{line}:{column}"),
        (Some(line), None) => format!("{path}:{line}"),
        _ => path.to_owned(),
    }
}

fn ambiguity(count: usize, raw: &str) -> String {
    if count > 1 {
        format!(" (one of {count} files matching {raw})")
    } else {
        String::new()
    }
}

/// Sum hits per file: the strongest in full, the rest at a fraction, capped.
fn aggregate(hits: Vec<Hit>) -> Vec<Candidate> {
    let mut by_path: BTreeMap<String, Vec<Hit>> = BTreeMap::new();
    for hit in hits {
        by_path.entry(hit.path.clone()).or_default().push(hit);
    }
    let mut candidates: Vec<Candidate> = by_path
        .into_iter()
        .map(|(path, mut hits)| {
            // Stable: equal weights keep the order the output named them in.
            hits.sort_by(|a, b| b.weight.total_cmp(&a.weight));
            let best = hits.first().map_or(0.0, |hit| hit.weight);
            let mut test_named = false;
            let mut rest = 0.0;
            let mut reasons: Vec<String> = Vec::new();
            for (i, hit) in hits.iter().enumerate() {
                let repeat = hit.names_failing_test && test_named;
                test_named |= hit.names_failing_test;
                if i > 0 && !repeat {
                    rest += hit.weight;
                }
                let note = if repeat { ", already counted" } else { "" };
                let reason = format!("{} (+{}{note})", hit.reason, round1(hit.weight));
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            }
            let score = round1(best + (rest * EXTRA_EVIDENCE_FACTOR).min(best));
            let mut lines: Vec<u64> = hits.iter().filter_map(|hit| hit.line).collect();
            lines.sort_unstable();
            lines.dedup();
            if reasons.len() > MAX_REASONS {
                let more = reasons.len() - MAX_REASONS;
                reasons.truncate(MAX_REASONS);
                reasons.push(format!("and {more} more"));
            }
            Candidate {
                path,
                score,
                lines,
                reasons,
            }
        })
        .collect();
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    candidates.truncate(MAX_CANDIDATES);
    candidates
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
