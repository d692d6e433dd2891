//! Parser behaviour on captured output of real runners (`fixtures/`), pinned as snapshots of
//! the whole report, plus the cross-format properties every parser must keep.

use std::fmt::Write as _;

use super::model::{TestCase, TestReport, TestStatus};
use super::{parse, parse_junit_xml};

/// Every field of a report, one test per line, so a snapshot pins the whole object.
fn render(report: Option<&TestReport>) -> String {
    let Some(report) = report else {
        return "none\n".to_owned();
    };
    let mut out = String::new();
    let _ = writeln!(out, "format: {}", report.format);
    let _ = writeln!(
        out,
        "counts: passed {}, failed {}, skipped {}, errors {}",
        report.passed, report.failed, report.skipped, report.errors
    );
    let _ = writeln!(out, "in words: {}", report.counts_text());
    let _ = writeln!(out, "lists_passed: {}", report.lists_passed);
    let _ = writeln!(out, "ran_no_tests: {}", report.ran_no_tests());
    let _ = writeln!(out, "failing: {:?}", report.failing());
    for case in &report.tests {
        let status = match case.status {
            TestStatus::Passed => "passed ",
            TestStatus::Failed => "failed ",
            TestStatus::Skipped => "skipped",
        };
        let _ = writeln!(
            out,
            "{status} {:?} name={:?}",
            case.file.as_deref().unwrap_or("-"),
            case.name
        );
    }
    out
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/src/testreport/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("read {path}: {err}"))
}

/// Fixtures read as stdout (jest and node write to stderr, which `parse` reads the same way).
const TEXT_FIXTURES: &[&str] = &[
    "cargo_multi_target.txt",
    "cargo_filter_typo.txt",
    "cargo_quiet.txt",
    "cargo_stack_overflow.txt",
    "cargo_real_streams.txt",
    "cargo_real_quiet.txt",
    "cargo_real_none.txt",
    "nextest.txt",
    "nextest_real.txt",
    "nextest_real_none.txt",
    "nextest_none.txt",
    "pytest_verbose.txt",
    "pytest_quiet.txt",
    "pytest_quiet_pass.txt",
    "pytest_collection_error.txt",
    "pytest_deselected.txt",
    "pytest_no_tests.txt",
    "pytest_xdist.txt",
    "pytest_real_v.txt",
    "pytest_real_q.txt",
    "pytest_real_collect.txt",
    "pytest_real_desel.txt",
    "pytest_real_q_pass.txt",
    "pytest_real_empty.txt",
    "pytest_real_ra.txt",
    "pytest_real_subtests_q.txt",
    "pytest_real_subtests_v.txt",
    "jest_verbose.txt",
    "jest_default.txt",
    "jest_suite_failed.txt",
    "jest_no_tests.txt",
    "jest_name_filter_miss.txt",
    "jest_real_verbose.txt",
    "jest_real_default.txt",
    "jest_real_filter.txt",
    "jest_real_none.txt",
    "jest_real30_default.txt",
    "jest_real30_pass.txt",
    "jest_real30_verbose.txt",
    "vitest.txt",
    "vitest_verbose.txt",
    "vitest_no_files.txt",
    "vitest_real.txt",
    "vitest_real_verbose.txt",
    "vitest_real_filter.txt",
    "vitest_real_none.txt",
    "vitest_real3_default.txt",
    "vitest_real3_default_pass.txt",
    "vitest_real3_verbose.txt",
    "vitest_real3_verbose_pass.txt",
    "vitest_real3_projects.txt",
    "vitest_real3_projects_verbose.txt",
    "mocha.txt",
    "mocha_none.txt",
    "mocha_real.txt",
    "mocha_real_none.txt",
    "mocha_real_spec.txt",
    "mocha_real_dot.txt",
    "mocha_real_dot_pass.txt",
    "mocha_real_progress.txt",
    "go_verbose.txt",
    "go_plain.txt",
    "go_no_tests.txt",
    "go_build_failed.txt",
    "go_json.txt",
    "go_real_v.txt",
    "go_real_plain.txt",
    "go_real_json.txt",
    "go_real_json_build_failed.txt",
    "go_real_none.txt",
    "go_real_none_v.txt",
    "go_real_build.txt",
    "go_real119_plain.txt",
    "go_real119_v.txt",
    "go_real119_json.txt",
    "node_tap.txt",
    "tap_plain.txt",
    "node_spec.txt",
    "node_tap_real.txt",
    "node_spec_real.txt",
    "node_spec_none.txt",
    "node_real20_spec.txt",
    "tape_real.txt",
    "tape_real_pass.txt",
    "tape_real_crash.txt",
    "tape_real_crash_fixed.txt",
    "tape_real_directives.txt",
    "unittest_real_py310.txt",
    "unittest_real_py310_v.txt",
    "unittest_real_py311.txt",
    "unittest_real_py311_v.txt",
    "unittest_real_py312.txt",
    "unittest_real_py312_v.txt",
    "unittest_real_py313_v.txt",
    "unittest_real_pass.txt",
    "unittest_real_pass_v.txt",
    "unittest_real_errors.txt",
    "unittest_real_errors_v.txt",
    "unittest_real_py310_errors_v.txt",
    "unittest_real_none.txt",
    "unittest_real_py312_none.txt",
];

#[test]
fn every_text_fixture_parses_to_its_pinned_report() {
    for name in TEXT_FIXTURES {
        let report = parse(&fixture(name), "");
        let stem = name.trim_end_matches(".txt");
        insta::assert_snapshot!(format!("fixture_{stem}"), render(report.as_ref()));
    }
}

#[test]
fn every_junit_fixture_parses_to_its_pinned_report() {
    for name in [
        "junit_pytest.xml",
        "junit_jest.xml",
        "pytest_real8_junit.xml",
        "node_real20_junit.xml",
    ] {
        let report = parse_junit_xml(&fixture(name));
        let stem = name.trim_end_matches(".xml");
        insta::assert_snapshot!(format!("fixture_{stem}"), render(report.as_ref()));
    }
}

#[test]
fn every_json_report_fixture_parses_to_its_pinned_report() {
    for (name, format) in [
        ("jest_real29_report.json", "jest"),
        ("vitest_real3_report.json", "vitest"),
    ] {
        let report = super::parse_jest_json(&fixture(name), format, std::path::Path::new("/r"));
        let stem = name.trim_end_matches(".json");
        insta::assert_snapshot!(format!("fixture_{stem}"), render(report.as_ref()));
    }
}

#[test]
fn vitest_projects_name_their_tests_as_a_run_without_projects_does() {
    let default = reports(&["vitest_real3_projects.txt"]).remove(0);
    let verbose = reports(&["vitest_real3_projects_verbose.txt"]).remove(0);
    let ids = |report: &TestReport| -> Vec<(String, TestStatus)> {
        report
            .tests
            .iter()
            .map(|case| (case.id(), case.status))
            .collect()
    };
    assert_eq!(
        (ids(&default), ids(&verbose)),
        (
            vec![
                (
                    "packages/alpha/pad.test.mjs::pad > pads left".to_owned(),
                    TestStatus::Passed
                ),
                (
                    "packages/alpha/pad.test.mjs::pad > pads crlf".to_owned(),
                    TestStatus::Failed
                ),
            ],
            vec![
                (
                    "packages/alpha/pad.test.mjs::pad > pads left".to_owned(),
                    TestStatus::Passed
                ),
                (
                    "packages/alpha/pad.test.mjs::pad > pads crlf".to_owned(),
                    TestStatus::Failed
                ),
                (
                    "packages/beta/join.test.mjs::joins".to_owned(),
                    TestStatus::Passed
                ),
                (
                    "packages/beta/join.test.mjs::later".to_owned(),
                    TestStatus::Skipped
                ),
            ]
        )
    );
}

#[test]
fn every_fixture_is_recognised_as_its_own_runner() {
    fn expected(name: &str) -> &str {
        match name.split(['_', '.']).next().unwrap_or("") {
            "node" if name.contains("tap") => "tap",
            "tape" => "tap",
            other => other,
        }
    }
    let found: Vec<(String, String)> = TEXT_FIXTURES
        .iter()
        .map(|name| {
            (
                name.to_string(),
                parse(&fixture(name), "")
                    .map(|report| report.format)
                    .unwrap_or_default(),
            )
        })
        .collect();
    let wanted: Vec<(String, String)> = TEXT_FIXTURES
        .iter()
        .map(|name| (name.to_string(), expected(name).to_owned()))
        .collect();
    assert_eq!(found, wanted);
}

/// Reports of the named fixtures, in order.
fn reports(names: &[&str]) -> Vec<TestReport> {
    names
        .iter()
        .map(|name| parse(&fixture(name), "").unwrap_or_else(|| panic!("{name} not recognised")))
        .collect()
}

#[test]
fn one_run_read_through_different_reporters_names_the_same_failing_tests() {
    let groups: &[&[&str]] = &[
        &[
            "mocha_real_spec.txt",
            "mocha_real_dot.txt",
            "mocha_real_progress.txt",
        ],
        &["vitest_real3_default.txt", "vitest_real3_verbose.txt"],
        &["jest_real30_default.txt", "jest_real30_verbose.txt"],
        &[
            "pytest_real_subtests_q.txt",
            "pytest_real_subtests_v.txt",
            "pytest_real_ra.txt",
        ],
        // Python 3.10 prints `test_x (pkg.mod.Class)`, 3.11 and later the full id.
        &[
            "unittest_real_py310.txt",
            "unittest_real_py310_v.txt",
            "unittest_real_py311.txt",
            "unittest_real_py311_v.txt",
            "unittest_real_py312.txt",
            "unittest_real_py312_v.txt",
            "unittest_real_py313_v.txt",
        ],
        &[
            "go_real119_plain.txt",
            "go_real119_v.txt",
            "go_real119_json.txt",
        ],
        &[
            "unittest_real_errors.txt",
            "unittest_real_errors_v.txt",
            "unittest_real_py310_errors_v.txt",
        ],
    ];
    for group in groups {
        let failing: Vec<Vec<String>> = reports(group)
            .iter()
            .map(|report| {
                let mut ids: Vec<String> = report
                    .tests
                    .iter()
                    .filter(|case| case.status == TestStatus::Failed)
                    .map(TestCase::id)
                    .collect();
                ids.sort();
                ids
            })
            .collect();
        assert!(
            failing
                .iter()
                .all(|ids| *ids == failing[0] && !ids.is_empty()),
            "{group:?}: {failing:?}"
        );
    }
}

#[test]
fn reporters_that_name_only_failures_say_so_and_the_others_list_passes() {
    let lists: Vec<(&str, bool)> = [
        "tape_real.txt",
        "mocha_real_spec.txt",
        "mocha_real_dot.txt",
        "mocha_real_dot_pass.txt",
        "vitest_real3_default.txt",
        "vitest_real3_default_pass.txt",
        "vitest_real3_verbose.txt",
        "jest_real30_default.txt",
        "jest_real30_pass.txt",
        "jest_real30_verbose.txt",
        "pytest_real_subtests_q.txt",
        "pytest_real_ra.txt",
        "unittest_real_py311.txt",
        "unittest_real_pass.txt",
        "unittest_real_py311_v.txt",
        "go_real_plain.txt",
        "go_real_v.txt",
    ]
    .iter()
    .map(|name| (*name, reports(&[name])[0].lists_passed))
    .collect();
    let expected = vec![
        ("tape_real.txt", true),
        ("mocha_real_spec.txt", true),
        ("mocha_real_dot.txt", false),
        ("mocha_real_dot_pass.txt", false),
        // A failing file lists its tests, a passing one is a `✓ file (1 test)` line.
        ("vitest_real3_default.txt", false),
        ("vitest_real3_default_pass.txt", false),
        ("vitest_real3_verbose.txt", true),
        ("jest_real30_default.txt", false),
        ("jest_real30_pass.txt", false),
        ("jest_real30_verbose.txt", true),
        ("pytest_real_subtests_q.txt", false),
        ("pytest_real_ra.txt", true),
        ("unittest_real_py311.txt", false),
        ("unittest_real_pass.txt", false),
        ("unittest_real_py311_v.txt", true),
        ("go_real_plain.txt", false),
        ("go_real_v.txt", true),
    ];
    assert_eq!(lists, expected);
}

#[test]
fn every_fixture_that_names_tests_is_told_with_nonzero_counts() {
    for name in TEXT_FIXTURES {
        let Some(report) = parse(&fixture(name), "") else {
            continue;
        };
        let words = report.counts_text();
        let nonzero = words
            .split(|c: char| !c.is_ascii_digit())
            .any(|number| number.parse::<u64>().is_ok_and(|n| n > 0));
        assert!(
            report.tests.is_empty() || nonzero,
            "{name}: names tests but reads `{words}`"
        );
    }
}

#[test]
fn tape_assertions_keep_their_names_when_other_tests_gain_assertions() {
    let before = parse(&fixture("tape_real.txt"), "");
    // One more assertion in the first test shifts every later TAP number.
    let mut grown = String::new();
    let mut number = 0;
    for line in fixture("tape_real.txt").lines() {
        let mut line = line.to_owned();
        for prefix in ["ok ", "not ok "] {
            if let Some(rest) = line.strip_prefix(prefix)
                && let Some((n, text)) = rest.split_once(' ')
                && n.parse::<u64>().is_ok()
            {
                number += 1;
                line = format!("{prefix}{number} {text}");
            }
        }
        grown.push_str(&line);
        grown.push('\n');
        if line.starts_with("ok 3 ") {
            number += 1;
            grown.push_str(&format!("ok {number} should be truthy\n"));
        }
    }
    let after = parse(&grown, "");
    let failing = |report: &Option<TestReport>| {
        report
            .as_ref()
            .map(|report| report.failing().join(", "))
            .unwrap_or_default()
    };
    assert_eq!(
        (failing(&before), failing(&after)),
        (
            "parse handles crlf #2".to_owned(),
            "parse handles crlf #2".to_owned()
        )
    );
    assert_eq!(
        after.map(|report| report.tests.len()),
        before.map(|report| report.tests.len() + 1)
    );
}

#[test]
fn a_tape_test_that_crashed_is_fixed_when_its_assertions_then_pass() {
    let [before, after] = [
        reports(&["tape_real_crash.txt"]).remove(0),
        reports(&["tape_real_crash_fixed.txt"]).remove(0),
    ];
    let comparison = super::compare(&before, &after);
    assert_eq!(
        (
            before.failing(),
            comparison.fixed,
            after.status_of("b throws")
        ),
        (
            vec!["b throws"],
            vec!["b throws".to_owned()],
            Some(TestStatus::Passed)
        )
    );
}

#[test]
fn cargo_headers_on_stderr_pair_with_results_on_stdout_by_order() {
    let merged = fixture("cargo_multi_target.txt");
    let (mut stdout, mut stderr) = (String::new(), String::new());
    for line in merged.lines() {
        let to_stderr = ["Compiling", "Finished", "Running", "Doc-tests", "error:"]
            .iter()
            .any(|word| line.trim_start().starts_with(word));
        let stream = if to_stderr { &mut stderr } else { &mut stdout };
        stream.push_str(line);
        stream.push('\n');
    }
    assert_eq!(parse(&stdout, &stderr), parse(&merged, ""));
}

#[test]
fn pytest_quiet_summary_gives_counts_and_failing_names_but_no_passes() {
    let report = parse(&fixture("pytest_quiet.txt"), "");
    let expected = TestReport {
        format: "pytest".into(),
        tests: vec![TestCase {
            name: "tests/test_parse.py::test_crlf".into(),
            status: TestStatus::Failed,
            file: Some("tests/test_parse.py".into()),
        }],
        passed: 3,
        failed: 1,
        skipped: 2,
        errors: 0,
        lists_passed: false,
    };
    assert_eq!(report, Some(expected));
}

#[test]
fn colour_codes_and_carriage_returns_do_not_change_names() {
    let plain = fixture("jest_verbose.txt");
    let coloured = plain
        .replace(
            "FAIL src",
            "\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc",
        )
        .replace("✓", "\x1b[32m✓\x1b[39m")
        .replace("(2 ms)", "\x1b[2m(2 ms)\x1b[22m")
        .replace('\n', "\r\n");
    let coloured = coloured.replace(
        "FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc",
        "FAIL src",
    );
    assert_eq!(parse("", &coloured), parse("", &plain));
}

#[test]
fn durations_do_not_change_names_between_runs() {
    let before = fixture("go_verbose.txt");
    let after = before
        .replace("(0.00s)", "(1.37s)")
        .replace("0.004s", "0.112s");
    assert_eq!(parse(&after, ""), parse(&before, ""));
}

#[test]
fn output_of_no_known_runner_gives_none() {
    let texts = [
        "",
        "hello world\n",
        "error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\n",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nNameError: name 'x' is not defined\n",
        "make: *** [Makefile:3: all] Error 1\n",
    ];
    let parsed: Vec<Option<TestReport>> = texts.iter().map(|text| parse(text, text)).collect();
    assert_eq!(parsed, vec![None; texts.len()]);
}

#[test]
fn summary_lines_outweigh_stray_lines_of_other_formats() {
    let text = format!(
        "ok 1 - printed by a test\n{}",
        fixture("pytest_verbose.txt")
    );
    assert_eq!(
        parse(&text, "").map(|report| report.format),
        Some("pytest".to_owned())
    );
}

/// A tiny deterministic generator, so the garbage is the same on every run.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bytes_and_mangled_fixtures_never_panic() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let alphabet: Vec<char> = "ok not - # . [ ] ( ) ✓ ✕ × ● › > \n\r\t\x1b 0123 PASS FAIL test result: passed failed running <testcase /> <![CDATA[ &amp; &#x; ℹ ▶ ﹣ ---- { } \" = Ran ERROR: ... =:"
        .chars()
        .collect();
    let mut samples: Vec<String> = Vec::new();
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..(rng.next() % 400))
            .map(|_| (rng.next() & 0xff) as u8)
            .collect();
        samples.push(String::from_utf8_lossy(&bytes).into_owned());
        let len = (rng.next() % 300) as usize;
        let text: String = (0..len)
            .filter_map(|_| alphabet.get((rng.next() % alphabet.len() as u64) as usize))
            .collect();
        samples.push(text);
    }
    for name in TEXT_FIXTURES
        .iter()
        .chain(&["junit_pytest.xml", "junit_jest.xml"])
    {
        let text = fixture(name);
        // Every prefix cut at a char boundary: truncated captures are common.
        let mut cut = 0;
        while cut < text.len() {
            let at = (0..=3)
                .map(|step| cut + step)
                .find(|at| text.is_char_boundary(*at))
                .unwrap_or(text.len());
            samples.push(text[..at].to_owned());
            cut = at + 1 + (rng.next() % 97) as usize;
        }
        // Line-level mutations keep each format's shape while breaking its order: lines
        // dropped, repeated, swapped and cut short.
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..8 {
            let mut mutated: Vec<String> = Vec::with_capacity(lines.len() + 4);
            for line in &lines {
                match rng.next() % 10 {
                    0 => {}
                    1 => {
                        mutated.push((*line).to_owned());
                        mutated.push((*line).to_owned());
                    }
                    2 => {
                        let end = (0..=line.len())
                            .rev()
                            .find(|at| line.is_char_boundary(*at) && *at <= line.len() / 2)
                            .unwrap_or(0);
                        mutated.push(line[..end].to_owned());
                    }
                    _ => mutated.push((*line).to_owned()),
                }
            }
            if mutated.len() > 1 {
                let a = (rng.next() % mutated.len() as u64) as usize;
                let b = (rng.next() % mutated.len() as u64) as usize;
                mutated.swap(a, b);
            }
            samples.push(mutated.join("\n"));
        }
    }
    for sample in &samples {
        let _ = parse(sample, sample);
        let _ = parse_junit_xml(sample);
    }
    assert!(samples.len() > 400);
}

#[test]
fn junit_xml_printed_on_stdout_is_recognised() {
    let report = parse(&fixture("junit_pytest.xml"), "");
    assert_eq!(report, parse_junit_xml(&fixture("junit_pytest.xml")));
}

#[test]
fn report_and_comparison_json_shape_is_pinned() {
    let before = parse(&fixture("cargo_multi_target.txt"), "");
    let after_text = fixture("cargo_multi_target.txt")
        .replace("keeps_crlf ... FAILED", "keeps_crlf ... ok")
        .replace("parses_file ... ok", "parses_file ... FAILED");
    let after = parse(&after_text, "");
    let (Some(before), Some(after)) = (before, after) else {
        panic!("fixture not recognised")
    };
    insta::assert_json_snapshot!(
        "cargo_before_after",
        (&before, super::compare(&before, &after))
    );
}
