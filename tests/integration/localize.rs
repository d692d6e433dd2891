//! Localization on real failures: for every captured case (`localize_cases`), the file the
//! real fix changes is among efix's first three candidates, and every candidate says why.

use std::fmt::Write as _;

use crate::localize_cases::{cases, rank_of};

#[test]
fn every_captured_failure_ranks_the_fixed_file_in_the_top_three() {
    let mut report = String::new();
    let mut misses = Vec::new();
    let all = cases();
    assert!(all.len() >= 15, "the benchmark has {} cases", all.len());
    for case in &all {
        let loaded = case.load();
        let placed = &loaded.placed;
        let candidates = efix::localize::localize(
            &loaded.root,
            &placed.tracked,
            &placed.output,
            &placed.failing,
        );
        let rank = rank_of(&candidates, &case.fixed);
        writeln!(report, "{} (`{}`): rank {rank:?}", case.name, case.command).unwrap();
        for candidate in candidates.iter().take(3) {
            writeln!(report, "  {} {}", candidate.path, candidate.score).unwrap();
            for reason in &candidate.reasons {
                writeln!(report, "    - {reason}").unwrap();
            }
        }
        if rank.is_none_or(|rank| rank > 3) {
            misses.push(case.name.clone());
        }
    }
    assert!(
        misses.is_empty(),
        "fixed file not in the top three for {misses:?}:\n{report}"
    );
}
