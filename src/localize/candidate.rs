//! Candidates: the hits on each file summed with diminishing returns, explained and ranked.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::hit::Hit;

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

/// Sum hits per file: the strongest in full, the rest at a fraction, capped.
pub(crate) fn aggregate(hits: Vec<Hit>) -> Vec<Candidate> {
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
