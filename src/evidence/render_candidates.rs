//! The PR body's table of a round's candidates (`--candidates K`): one row per candidate with
//! its size, its verdict and the rules that refused it, under the winner's proof.

use std::fmt::Write as _;

use super::model::Round;
use super::text::cell;
use super::{CandidateRecord, CandidateVerdict};

/// The table of `round`'s candidates; nothing for a round of one answer.
pub(super) fn table(out: &mut String, round: &Round) {
    if round.candidates.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Candidates\n\n{} answers were proven side by side in scratch copies; the smallest \
         fully proven one was applied and proven again here.\n\n\
         | candidate | lines | verdict | refused by |\n|---|---|---|---|",
        round.candidates.len()
    );
    for candidate in &round.candidates {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            candidate.number,
            candidate.lines,
            candidate.verdict.label(),
            refusing(candidate)
        );
    }
    out.push('\n');
}

/// The rule ids that refused a candidate, or why it lost otherwise.
fn refusing(candidate: &CandidateRecord) -> String {
    match candidate.verdict {
        CandidateVerdict::Won => String::new(),
        CandidateVerdict::Refused => {
            let mut ids: Vec<&str> = Vec::new();
            for issue in &candidate.round.issues {
                if !ids.contains(&issue.rule.as_str()) {
                    ids.push(&issue.rule);
                }
            }
            ids.iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
        _ => cell(&candidate.lost),
    }
}
