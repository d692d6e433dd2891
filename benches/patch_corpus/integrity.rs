//! What the integrity rules flag in the corpus's reference fixes (`gold_patch`) and their test
//! changes (`gold_test_patch`), and with `EFIX_BENCH_INTEGRITY=all` on the model outputs too:
//! every flag on a gold fix is a candidate false refusal, to be
//! read and either explained or fixed in the rule. `EFIX_BENCH_INTEGRITY=1` runs only this;
//! `EFIX_BENCH_VERBOSE=1` prints each flagged record with its issues.

use std::collections::BTreeMap;

use efix::integrity::special_case::{Expectation, expectations};
use efix::patch::{MemoryFiles, PatchPolicy, evaluate};
use serde_json::Value;

/// The rules of the integrity checks (harness, test integrity, the static families, special
/// cases).
const RULES: &[&str] = &[
    "check.test-harness",
    "check.skipped-test",
    "check.deleted-test",
    "check.test-detection",
    "check.framework-patch",
    "check.stack-introspection",
    "check.process-exit",
    "check.test-file-read",
    "check.constant-equality",
    "check.result-spoofing",
    "check.special-case",
    "check.shadowing",
];

/// Per source and rule, how many records the rule flags (a record counts once per rule).
pub fn run(records: &[Value], inputs: &[(String, String, MemoryFiles)], policy: &PatchPolicy) {
    let verbose = std::env::var_os("EFIX_BENCH_VERBOSE").is_some();
    // `EFIX_BENCH_INTEGRITY=all` reads the model outputs too.
    let all = std::env::var("EFIX_BENCH_INTEGRITY").is_ok_and(|v| v == "all");
    // The failing tests of an instance are those its gold test patch adds or changes: their
    // assertions are what `check.special-case` holds each fix of the instance against.
    let mut expected: BTreeMap<String, Vec<Expectation>> = BTreeMap::new();
    for (record, (source, raw, _)) in records.iter().zip(inputs) {
        if source == "gold_test_patch" {
            let added: String = raw
                .lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .map(|l| format!("{}\n", &l[1..]))
                .collect();
            let instance = record["instance_id"].as_str().unwrap_or("").to_owned();
            expected
                .entry(instance.clone())
                .or_default()
                .extend(expectations(&instance, &added));
        }
    }
    let with_literals = expected
        .values()
        .filter(|e| e.iter().any(|x| !x.literals.is_empty()))
        .count();
    let with_tests = expected
        .values()
        .filter(|e| e.iter().any(|x| !x.inputs.is_empty()))
        .count();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut totals: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (record, (source, raw, files)) in records.iter().zip(inputs) {
        if !all && !source.starts_with("gold") {
            continue;
        }
        let policy = PatchPolicy {
            expectations: expected
                .get(record["instance_id"].as_str().unwrap_or(""))
                .cloned()
                .unwrap_or_default(),
            ..policy.clone()
        };
        let report = evaluate(files, raw, &policy).expect("memory files never fail");
        let mut rules: Vec<&str> = report
            .issues
            .iter()
            .filter_map(|i| RULES.iter().find(|r| **r == i.rule).copied())
            .collect();
        // Reads of process state are flags for review, not refusals: counted beside them.
        let reads = efix::integrity::reads::process_reads(&report.changes);
        rules.extend(reads.iter().map(|r| r.rule));
        if verbose {
            for r in &reads {
                println!(
                    "{} {source} {}: {}:{} reads `{}` ({})",
                    record["instance_id"], r.rule, r.path, r.line, r.read, r.what
                );
            }
        }
        rules.sort_unstable();
        rules.dedup();
        let total = totals.entry(source.clone()).or_default();
        total.0 += 1;
        if !rules.is_empty() {
            total.1 += 1;
        }
        for rule in &rules {
            *counts
                .entry((source.clone(), (*rule).to_owned()))
                .or_default() += 1;
        }
        if verbose && !rules.is_empty() {
            println!("{} {} {source}", record["id"], record["instance_id"]);
            for i in report
                .issues
                .iter()
                .filter(|i| RULES.contains(&i.rule.as_str()))
            {
                println!("    {}: {}", i.rule, i.message);
            }
        }
    }
    println!("\n## integrity rules on the corpus");
    println!(
        "(check.special-case: {with_literals} instances whose gold test patch holds literals the \
         syntax pass ties added code to, {with_tests} with an assertion with literal inputs and \
         expected values for the line pass)"
    );
    for (source, (n, flagged)) in &totals {
        println!("{source}: {flagged} of {n} records flagged");
        for ((s, rule), count) in &counts {
            if s == source {
                println!("  {rule}: {count}");
            }
        }
    }
}
