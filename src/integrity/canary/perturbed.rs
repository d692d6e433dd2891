//! `prove.perturbed`: the dynamic special-case check. Each target's copies with its input
//! literals moved to neighbours (`source::perturb`) run on the base tree and on the change;
//! what each run observed (the runner's output: every copy's verdict and the actual values
//! its failures print) is compared once the parts that change from run to run are normalised
//! (durations, clock times, addresses, line and column numbers). The original tests went
//! from failing to passing; if a target's copies ran the same on both trees, the change did
//! nothing off that test's exact inputs: a special case, whatever its spelling (a hash of the
//! input, a literal assembled at runtime, a table built in a loop), which the static
//! `check.special-case` cannot read.
//!
//! Each target is judged on its own copies: its own run where the runner selects single
//! tests, its own sections of the TAP output where the runner runs whole files (tape,
//! `node --test`), so an honest fix of one failing test does not vouch for a special case of
//! another. Verdict: a target whose two or more copies all ran the same refuses the change;
//! with one copy it is flagged for review (`fixed-flagged`: one neighbour may miss an honest
//! fix's path, as `"\t"` → `"\n"` can). Runs that give no verdict (no record of a copy, a
//! timeout) leave the check not judged. A target with no input literal has nothing to perturb
//! (`.not-applicable`, passed); one whose copies could not be built leaves the check not
//! judged (`.not-built`): closed by default.

use std::sync::LazyLock;

use regex::Regex;

use super::plan::{Perturbed, PerturbedCopy};
use super::runner::Runner;
use crate::evidence::{CheckRecord, CommandRecord};
use crate::policy::Issue;
use crate::testreport::TestStatus;

/// The rule id of the check.
pub(crate) const RULE: &str = "prove.perturbed";

/// Parts of a runner's output that change from run to run of the same tests, and what they
/// become.
static VOLATILE: LazyLock<Vec<(Regex, String)>> = LazyLock::new(|| {
    // Temporary files (efix's own report files among them) get fresh names every run.
    let temp = std::env::temp_dir();
    let temp = regex::escape(temp.to_string_lossy().trim_end_matches('/'));
    let temp = format!(r#"({temp}|/tmp)/[^\s:'"]+"#);
    [
        // Colours first: they split a number from its unit (`7\x1b[2mms`).
        ("\x1b\\[[0-9;]*[A-Za-z]", ""),
        // Line numbers before temporary paths, which would take the file's name with them.
        (r"(\.[A-Za-z]{1,5})([:(])\d+(:\d+)?", "$1$2<line>"),
        (temp.as_str(), "<temp>"),
        // efix's report files, also named relative to the working directory.
        (r"\befix-[a-z]+-[A-Za-z0-9]+", "efix-<temp>"),
        // A test's duration, which runners print only above a threshold: `(1 ms)`.
        (r"[ \t]*\(\d+(\.\d+)?\s?(ms|s|µs|us|ns)\)", ""),
        (r"0x[0-9a-fA-F]+", "<addr>"),
        (r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b", "<clock>"),
        (
            r"\b\d+(\.\d+)?\s?(ms|s|sec|secs|seconds|µs|us|ns|m)\b",
            "<time>",
        ),
        (r"\bline \d+", "line <n>"),
        (r"pytest-\d+", "pytest-<n>"),
        // `node --test`'s per-test and total durations, with no unit after the number.
        (r"duration_ms:? \d+(\.\d+)?", "duration_ms <time>"),
    ]
    .into_iter()
    .filter_map(|(pattern, to)| Some((Regex::new(pattern).ok()?, to.to_owned())))
    .collect()
});

/// What a run observed for `copies`, with its volatile parts normalised: the test harness's
/// output (cargo and go build chatter on stderr left out: the change's own warnings are not
/// an effect on the copies). Where the runner runs whole files, only the copies' own sections
/// of its TAP output, so the other tests of the file are not read.
fn observed(runner: Runner, record: &CommandRecord, copies: &[&PerturbedCopy]) -> Option<String> {
    let outcome = record.outcome.as_ref()?;
    let text = match runner {
        Runner::Cargo | Runner::Go => outcome.stdout.clone(),
        Runner::Tape | Runner::NodeTest => copies
            .iter()
            .enumerate()
            .map(|(at, c)| {
                let next = copies.get(at + 1).map(|n| n.name.as_str());
                let section = tap_sections(&outcome.stdout, &c.name, next);
                format!(
                    "{}:\n{}",
                    c.name,
                    section.as_deref().unwrap_or("<no record>")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => format!("{}\n{}", outcome.stdout, outcome.stderr),
    };
    Some(VOLATILE.iter().fold(text, |text, (pattern, to)| {
        pattern.replace_all(&text, to.as_str()).into_owned()
    }))
}

/// The lines of a TAP stream that belong to the test `name`, every section with that header
/// in order; `None` when no line heads one. A section starts at the test's header (`# name`
/// in tape's output, `# Subtest: name` in `node --test`'s, at any depth) and ends after the
/// test's own verdict line `ok N - name` and its indented diagnostics (`node --test`), or,
/// as tape prints nothing when a test ends, at the stream's plan or the next header at its
/// depth: the header of `next` (the copy written right after it, which tape runs next) when
/// there is one, since a `t.comment()` line looks like a header. Verdicts and assertions lose
/// their numbers, which count the tests before them; blank lines are left out.
pub(crate) fn tap_sections(output: &str, name: &str, next: Option<&str>) -> Option<String> {
    static NUMBER: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^(\s*)(not )?ok \d+").ok());
    let indent = |line: &str| line.len() - line.trim_start().len();
    fn header(line: &str) -> Option<&str> {
        let body = line.trim_start();
        body.strip_prefix("# Subtest: ")
            .or_else(|| body.strip_prefix("# "))
            .map(str::trim_end)
    }
    let verdict = |line: &str| {
        let body = line.trim_start();
        let rest = body.strip_prefix("not ").unwrap_or(body);
        rest.strip_prefix("ok ").is_some_and(|rest| {
            let after = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            after.len() < rest.len()
                && after.strip_prefix(" - ").is_some_and(|title| {
                    title == name
                        || title
                            .strip_prefix(name)
                            .is_some_and(|d| d.starts_with(" #"))
                })
        })
    };
    let lines: Vec<&str> = output.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if header(lines[at]) != Some(name) {
            at += 1;
            continue;
        }
        let depth = indent(lines[at]);
        out.push(lines[at].trim().to_owned());
        at += 1;
        let mut closed = false;
        while let Some(line) = lines.get(at) {
            if line.trim().is_empty() {
                at += 1;
                continue;
            }
            let level = indent(line);
            let body = line.trim_start();
            let another = header(line).is_some_and(|h| next.is_none_or(|n| h == n));
            let ends = level < depth
                || (closed && level <= depth)
                || (level == depth && (another || body.starts_with("1..")));
            if ends {
                break;
            }
            if level == depth && verdict(line) {
                closed = true;
            }
            let line = match &*NUMBER {
                Some(number) => number.replace(line, "$1${2}ok").into_owned(),
                None => (*line).to_owned(),
            };
            out.push(line);
            at += 1;
        }
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// How one target's copies ran on the base and on the change.
enum Verdict {
    /// The runs differ: the change acts off the target's exact inputs.
    Acts,
    /// No verdict could be read, and why.
    NotJudged(&'static str),
    /// The runs are the same, for this many copies.
    Same(usize),
}

/// The verdict of one target's copies from the runs that hold them.
fn verdict(
    runner: Runner,
    copies: &[&PerturbedCopy],
    base: &CommandRecord,
    change: &CommandRecord,
) -> Verdict {
    let timed_out = |r: &CommandRecord| r.outcome.as_ref().is_none_or(|o| o.timed_out);
    let (Some(before), Some(after)) = (
        observed(runner, base, copies),
        observed(runner, change, copies),
    ) else {
        return Verdict::NotJudged("a run of the copies left no output");
    };
    if timed_out(base) || timed_out(change) {
        return Verdict::NotJudged("a run of the copies timed out");
    }
    if before != after {
        return Verdict::Acts;
    }
    if copies
        .iter()
        .any(|c| status(change, &c.name) == "no record")
    {
        return Verdict::NotJudged(
            "the copies ran the same on the base and on the change, but not every copy has a \
             record of its own",
        );
    }
    Verdict::Same(copies.len())
}

/// A copy's verdict in a run, in words.
fn status(record: &CommandRecord, name: &str) -> &'static str {
    let statuses: Vec<TestStatus> = record
        .tests
        .iter()
        .flat_map(|r| r.tests.iter())
        .filter(|t| t.name.contains(name))
        .map(|t| t.status)
        .collect();
    if statuses.contains(&TestStatus::Failed) {
        "failed"
    } else if statuses.contains(&TestStatus::Passed) {
        "passed"
    } else if statuses.is_empty() {
        "no record"
    } else {
        "skipped"
    }
}

/// The check (and the refusal, if any) from the copies' runs on the base and on the change,
/// `runs[i]` for [`Perturbed::runs`]`[i]`. Each target is judged on its own copies: a target
/// whose copies (two or more) all ran the same refuses the change, whatever the others show.
pub(crate) fn judge_perturbed(
    plan: &Perturbed,
    runner: Runner,
    runs: &[(&CommandRecord, &CommandRecord)],
) -> (CheckRecord, Option<Issue>) {
    let mut targets: Vec<&str> = Vec::new();
    for copy in &plan.copies {
        if !targets.contains(&copy.target.as_str()) {
            targets.push(&copy.target);
        }
    }
    let mut acts = Vec::new();
    let mut not_judged = Vec::new();
    let mut one_copy = Vec::new();
    let mut refused = Vec::new();
    for target in targets {
        let copies: Vec<&PerturbedCopy> =
            plan.copies.iter().filter(|c| c.target == target).collect();
        let Some((base, change)) = copies.first().and_then(|c| runs.get(c.run)) else {
            not_judged.push(format!("`{target}`: a run of the copies left no record"));
            continue;
        };
        let line = copies
            .iter()
            .map(|c| {
                format!(
                    "`{}` ({} in `{}`): {} on the base, {} on the change",
                    c.name,
                    c.what,
                    c.target,
                    status(base, &c.name),
                    status(change, &c.name)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        match verdict(runner, &copies, base, change) {
            Verdict::Acts => acts.push(line),
            Verdict::NotJudged(why) => not_judged.push(format!("{why}: {line}")),
            Verdict::Same(1) => one_copy.push(line),
            Verdict::Same(_) => refused.push(line),
        }
    }
    let acting = |lines: &[String]| {
        (!lines.is_empty()).then(|| {
            format!(
                "the change acts off the tests' exact inputs (the copies' run differs on the \
                 base and on the change): {}",
                lines.join("; ")
            )
        })
    };
    let with = |first: String, rest: &[Option<String>]| {
        std::iter::once(Some(first))
            .chain(rest.iter().cloned())
            .flatten()
            .collect::<Vec<_>>()
            .join(". ")
    };
    let same = |lines: &[String]| {
        format!(
            "every copy of the failing tests with an input literal moved to a neighbour ran \
             the same on the base and on the change (verdicts and printed values): {}",
            lines.join("; ")
        )
    };
    if !refused.is_empty() {
        let unaffected = same(&refused);
        let message = format!(
            "the change only acts on the failing tests' exact inputs: {unaffected}. A fix \
             changes what the code does for inputs like the test's, not for that one input; \
             do not recognise the test's input (compared, hashed, looked up or assembled at \
             runtime)"
        );
        let detail = with(unaffected, &[acting(&acts)]);
        return (
            CheckRecord {
                id: RULE.to_owned(),
                passed: false,
                detail,
                weakens: None,
            },
            Some(Issue::new(RULE, message)),
        );
    }
    // One identical copy is the weakest sign: a fix of an edge case (an empty input, a
    // boundary) leaves its one neighbour as it was too. It flags the change only when no other
    // failing test's copies show the change acting off their exact inputs.
    let flagged = (!one_copy.is_empty() && acts.is_empty()).then(|| same(&one_copy));
    if !one_copy.is_empty() && !acts.is_empty() {
        acts.push(format!(
            "one copy ran the same, as a fix of an edge case can: {}",
            one_copy.join("; ")
        ));
    }
    if !not_judged.is_empty() {
        let detail = with(not_judged.join("; "), &[flagged, acting(&acts)]);
        return (CheckRecord::not_judged(RULE, detail), None);
    }
    if let Some(flagged) = flagged {
        let detail = with(flagged, &[acting(&acts)]);
        return (CheckRecord::flagged(RULE, detail), None);
    }
    let detail = acting(&acts).unwrap_or_else(|| "no perturbed copy ran".to_owned());
    (CheckRecord::passed(RULE, detail), None)
}

/// The checks for targets with no perturbed copy: with no input literal to move, nothing
/// is left to judge (`.not-applicable`, passed); copies that could not be built leave the
/// check not judged for their target (`.not-built`).
pub(crate) fn perturbed_not_run(plan: &Perturbed) -> Vec<CheckRecord> {
    let listed = |reasons: &[(String, String)]| {
        (!reasons.is_empty()).then(|| {
            reasons
                .iter()
                .map(|(test, reason)| format!("`{test}`: {reason}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    };
    let mut out = Vec::new();
    if let Some(detail) = listed(&plan.inapplicable) {
        out.push(CheckRecord::passed(
            &format!("{RULE}.not-applicable"),
            format!("nothing to perturb, so the dynamic special-case check has nothing to judge for: {detail}"),
        ));
    }
    if let Some(detail) = listed(&plan.not_built) {
        out.push(CheckRecord::not_judged(
            &format!("{RULE}.not-built"),
            format!("no perturbed copy could be built, so the dynamic special-case check is not judged for: {detail}"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Phase, PolicyDecision, Purpose};
    use crate::runner::Outcome;
    use crate::testreport::{TestCase, TestReport};

    use super::super::plan::PerturbedCopy;

    fn plan(copies: usize) -> Perturbed {
        targets(&[("t::test_two", "test_two_p", 0, copies)])
    }

    /// Copies `{prefix}{i}` of each target, in its run.
    fn targets(list: &[(&str, &str, usize, usize)]) -> Perturbed {
        Perturbed {
            copies: list
                .iter()
                .flat_map(|(target, prefix, run, copies)| {
                    (0..*copies).map(move |i| PerturbedCopy {
                        target: (*target).into(),
                        run: *run,
                        name: format!("{prefix}{i}"),
                        what: "`\"a  b\"` → `\"a  c\"`".into(),
                    })
                })
                .collect(),
            ..Perturbed::default()
        }
    }

    fn record(stdout: &str, tests: &[(&str, TestStatus)]) -> CommandRecord {
        CommandRecord {
            id: 1,
            phase: Phase::Prove,
            purpose: Purpose::Canary,
            round: Some(1),
            command: "pytest".into(),
            policy: PolicyDecision::allowed(),
            outcome: Some(Outcome {
                argv: vec!["pytest".into()],
                exit_code: Some(1),
                signal: None,
                timed_out: false,
                duration_ms: 5,
                stdout: stdout.into(),
                stderr: String::new(),
                stdout_bytes: 0,
                stderr_bytes: 0,
                truncated: false,
                redactions: Default::default(),
                sandbox: Default::default(),
            }),
            tests: Some(TestReport {
                format: "pytest".into(),
                tests: tests
                    .iter()
                    .map(|(name, status)| TestCase {
                        name: (*name).into(),
                        status: *status,
                        file: None,
                    })
                    .collect(),
                passed: 0,
                failed: 0,
                skipped: 0,
                errors: 0,
                lists_passed: true,
            }),
            channel: None,
            confirms: None,
        }
    }

    const FAILED: &[(&str, TestStatus)] = &[
        ("t::test_two_p0", TestStatus::Failed),
        ("t::test_two_p1", TestStatus::Failed),
    ];

    #[test]
    fn copies_that_run_the_same_on_both_trees_refuse_the_change() {
        let base = record(
            "  ✕ t equal (3 ms)\n \x1b[31m×\x1b[39m t\x1b[32m 7\x1b[2mms\x1b[22m\n  ✓ t expect (1 ms)\nE assert 3 == 2\nt.py:12: AssertionError\nxml: /tmp/efix-report-a1/report\nwritten to: ../efix-report-u4ndPK/report\n    at f (/tmp/r/lib/a.js:5:22)\n1 failed in 0.12s at 10:01:02",
            FAILED,
        );
        let change = record(
            "  ✕ t equal (23 ms)\n \x1b[31m×\x1b[39m t\x1b[32m 9\x1b[2mms\x1b[22m\n  ✓ t expect\nE assert 3 == 2\nt.py:14: AssertionError\nxml: /tmp/efix-report-b2/report\nwritten to: ../efix-report-JuDWzA/report\n    at f (/tmp/r/lib/a.js:6:22)\n1 failed in 0.31s at 10:01:09",
            FAILED,
        );
        let (check, issue) = judge_perturbed(&plan(2), Runner::Pytest, &[(&base, &change)]);
        assert!(!check.passed);
        assert_eq!(issue.map(|i| i.rule), Some(RULE.to_owned()));
        // One copy: flagged, not refused.
        let (check, issue) = judge_perturbed(&plan(1), Runner::Pytest, &[(&base, &change)]);
        assert!(check.passed && issue.is_none());
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::Flagged));
    }

    #[test]
    fn a_copy_whose_actual_value_moves_clears_the_change() {
        let base = record("E assert 3 == 2\n1 failed in 0.12s", FAILED);
        let change = record("E assert 4 == 2\n1 failed in 0.12s", FAILED);
        let (check, issue) = judge_perturbed(&plan(2), Runner::Pytest, &[(&base, &change)]);
        assert!(check.passed && check.weakens.is_none() && issue.is_none());
        assert!(
            check
                .detail
                .contains("failed on the base, failed on the change")
        );
    }

    #[test]
    fn copies_without_records_leave_the_check_not_judged() {
        let base = record("error: could not compile", &[]);
        let change = record("error: could not compile", &[]);
        let (check, issue) = judge_perturbed(&plan(2), Runner::Cargo, &[(&base, &change)]);
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::NotJudged));
        assert!(issue.is_none());
    }

    /// tape's TAP for a file whose `reads seconds` fails, with a copy's actual value.
    fn tape(target: &str, copy: &str, other: &str) -> String {
        format!(
            "TAP version 13\n# reads seconds\n{target}\n# reads minutes\nok 2 should be strictly equal\n# reads seconds kiwi0\n# a comment\n{copy}\n  ---\n    operator: equal\n    at: Test.<anonymous> (/tmp/x/test/d.test.js:7:5)\n  ...\n# reads seconds kiwi1\nok 4 should be strictly equal\n# reads hours\n{other}\n\n1..5\n# tests 5\n"
        )
    }

    #[test]
    fn tape_sections_hold_a_tests_assertions_without_their_numbers() {
        let output = tape(
            "not ok 1 should be strictly equal",
            "not ok 3 should be strictly equal",
            "ok 5 should be strictly equal",
        );
        assert_eq!(
            tap_sections(&output, "reads seconds kiwi0", Some("reads seconds kiwi1")).as_deref(),
            Some(
                "# reads seconds kiwi0\n# a comment\nnot ok should be strictly equal\n  ---\n    operator: equal\n    at: Test.<anonymous> (/tmp/x/test/d.test.js:7:5)\n  ..."
            )
        );
        assert_eq!(
            tap_sections(&output, "reads seconds kiwi1", None).as_deref(),
            Some("# reads seconds kiwi1\nok should be strictly equal")
        );
        assert_eq!(tap_sections(&output, "reads seconds kiwi2", None), None);
    }

    #[test]
    fn node_test_sections_end_after_the_verdict_and_its_diagnostics() {
        let output = "TAP version 13\n# out\n# Subtest: reads seconds\nok 1 - reads seconds\n  ---\n  duration_ms: 2.04\n  ...\n# Subtest: parse\n    # Subtest: reads seconds kiwi0\n    not ok 1 - reads seconds kiwi0\n      ---\n      duration_ms: 0.67\n      error: |-\n        Expected values to be strictly equal:\n        \n        2000 !== 10000\n        \n      actual: 2000\n      ...\n    # Subtest: reads hours\n    ok 2 - reads hours\n    1..2\nnot ok 2 - parse\n1..2\n# duration_ms 136.29\n";
        assert_eq!(
            tap_sections(output, "reads seconds kiwi0", None).as_deref(),
            Some(
                "# Subtest: reads seconds kiwi0\n    not ok - reads seconds kiwi0\n      ---\n      duration_ms: 0.67\n      error: |-\n        Expected values to be strictly equal:\n        2000 !== 10000\n      actual: 2000\n      ..."
            )
        );
        // A title that only starts with the copy's is another test.
        assert_eq!(tap_sections(output, "reads", None), None);
    }

    /// One TAP run of a whole file whose two copies have records.
    fn tap_record(stdout: &str) -> CommandRecord {
        record(
            stdout,
            &[
                ("reads seconds kiwi0", TestStatus::Failed),
                ("reads seconds kiwi1", TestStatus::Passed),
            ],
        )
    }

    #[test]
    fn a_whole_file_run_is_judged_on_the_copies_sections_alone() {
        let plan = targets(&[("reads seconds", "reads seconds kiwi", 0, 2)]);
        // The target and another test change; the copies do not: a special case.
        let base = tap_record(&tape(
            "not ok 1 should be strictly equal",
            "not ok 3 should be strictly equal",
            "not ok 5 should be strictly equal",
        ));
        let change = tap_record(&tape(
            "ok 1 should be strictly equal",
            "not ok 3 should be strictly equal",
            "ok 5 should be strictly equal",
        ));
        let (check, issue) = judge_perturbed(&plan, Runner::Tape, &[(&base, &change)]);
        assert!(!check.passed, "{}", check.detail);
        assert_eq!(issue.map(|i| i.rule), Some(RULE.to_owned()));
        // A copy's assertion changes: the change acts off the exact input.
        let change = tap_record(&tape(
            "ok 1 should be strictly equal",
            "ok 3 should be strictly equal",
            "ok 5 should be strictly equal",
        ));
        let (check, issue) = judge_perturbed(&plan, Runner::Tape, &[(&base, &change)]);
        assert!(check.passed && check.weakens.is_none() && issue.is_none());
    }

    #[test]
    fn each_target_is_judged_on_its_own_copies() {
        // Two targets of one file in one run: the first's copies move, the second's do not.
        let plan = targets(&[
            ("reads seconds", "reads seconds kiwi", 0, 2),
            ("reads hours", "reads hours plum", 0, 2),
        ]);
        let output = |first: &str| {
            format!(
                "# reads seconds kiwi0\n{first}\n# reads seconds kiwi1\n{first}\n# reads hours plum0\nnot ok 3 should be strictly equal\n# reads hours plum1\nnot ok 4 should be strictly equal\n"
            )
        };
        let tests = [
            ("reads seconds kiwi0", TestStatus::Failed),
            ("reads seconds kiwi1", TestStatus::Failed),
            ("reads hours plum0", TestStatus::Failed),
            ("reads hours plum1", TestStatus::Failed),
        ];
        let base = record(&output("not ok 1 should be strictly equal"), &tests);
        let change = record(&output("ok 1 should be strictly equal"), &tests);
        let (check, issue) = judge_perturbed(&plan, Runner::NodeTest, &[(&base, &change)]);
        assert!(!check.passed);
        assert!(
            check.detail.contains("reads hours plum0"),
            "{}",
            check.detail
        );
        assert_eq!(issue.map(|i| i.rule), Some(RULE.to_owned()));
        // Targets in runs of their own: a missing run leaves its target not judged.
        let plan = targets(&[("a", "a_p", 0, 2), ("b", "b_p", 1, 2)]);
        let base = record("E assert 3 == 2", &[]);
        let change = record("E assert 4 == 2", &[]);
        let (check, issue) = judge_perturbed(&plan, Runner::Pytest, &[(&base, &change)]);
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::NotJudged));
        assert!(issue.is_none());
    }

    #[test]
    fn one_unmoved_copy_flags_only_when_no_other_target_shows_the_change_acting() {
        // `reads seconds` has two copies that move; `reads nothing` (an edge case such as an
        // empty input) one copy that runs the same, as an honest fix of that edge leaves it.
        let plan = targets(&[
            ("reads seconds", "reads seconds kiwi", 0, 2),
            ("reads nothing", "reads nothing plum", 0, 1),
        ]);
        let output = |first: &str| {
            format!(
                "# reads seconds kiwi0\n{first}\n# reads seconds kiwi1\n{first}\n# reads nothing plum0\nnot ok 3 should be strictly equal\n"
            )
        };
        let tests = [
            ("reads seconds kiwi0", TestStatus::Failed),
            ("reads seconds kiwi1", TestStatus::Failed),
            ("reads nothing plum0", TestStatus::Failed),
        ];
        let base = record(&output("not ok 1 should be strictly equal"), &tests);
        let change = record(&output("ok 1 should be strictly equal"), &tests);
        let (check, issue) = judge_perturbed(&plan, Runner::NodeTest, &[(&base, &change)]);
        assert!(
            check.passed && check.weakens.is_none() && issue.is_none(),
            "{check:?}"
        );
        assert!(
            check.detail.contains("reads nothing plum0"),
            "{}",
            check.detail
        );
        // Alone, the same unmoved copy flags the change.
        let plan = targets(&[("reads nothing", "reads nothing plum", 0, 1)]);
        let lone = "# reads nothing plum0\nnot ok 1 should be strictly equal\n";
        let base = record(lone, &[("reads nothing plum0", TestStatus::Failed)]);
        let (check, issue) = judge_perturbed(&plan, Runner::NodeTest, &[(&base, &base)]);
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::Flagged));
        assert!(issue.is_none());
    }

    #[test]
    fn only_a_test_with_no_input_literal_passes_without_copies() {
        let plan = Perturbed {
            inapplicable: vec![("t::a".into(), "no input literal".into())],
            not_built: vec![("t::b".into(), "the test has no body".into())],
            ..Perturbed::default()
        };
        let checks = perturbed_not_run(&plan);
        let summary: Vec<(&str, bool, Option<crate::evidence::Weakness>)> = checks
            .iter()
            .map(|c| (c.id.as_str(), c.passed, c.weakens))
            .collect();
        assert_eq!(
            summary,
            [
                ("prove.perturbed.not-applicable", true, None),
                (
                    "prove.perturbed.not-built",
                    true,
                    Some(crate::evidence::Weakness::NotJudged)
                ),
            ]
        );
    }
}
