//! Hits from the locations the failure output names: stack frames grouped into stacks and
//! weighed from the deepest application frame up (where the failure happened in code the
//! repository owns counts most; a non-test file named below a test file's frame, code a test
//! called, gets a bonus), and single locations (compiler errors, test file headers) by kind.

use super::extract::Found;
use super::hit::{Hit, place};
use super::resolve::{PathIndex, is_test_path};

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

/// Hits from extracted locations: stacks weighed frame by frame, the rest by kind.
pub(crate) fn location_hits(index: &PathIndex<'_>, found: &[Found]) -> Vec<Hit> {
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

fn ambiguity(count: usize, raw: &str) -> String {
    if count > 1 {
        format!(" (one of {count} files matching {raw})")
    } else {
        String::new()
    }
}
