//! Test ids whose parameters change from run to run. A parametrized test's id holds its
//! parameter values (`test_x[04:33:17 2026-11-28]`, `test_repr[<Obj at 0x7f3a2c>]`,
//! `test_seed[839201]`), and values made from the clock, an address or a random source differ
//! in every run: after any change the test looks gone and a new one looks added. Such a test
//! is one test: ids that differ only in their volatile parameter parts (times, dates, hex
//! addresses, uuids, long numbers such as ports, seeds and timestamps, long hex runs) are
//! matched by their stable part, and the pairs are listed as unstable.
//!
//! Only the parameter part is read (the bracketed end of the id: pytest's `[...]`); a test's
//! own name is never normalised. A stable id shared by two tests of one run (`test_x[1000]`
//! and `test_x[2000]`) matches nothing: which is which cannot be told, so each keeps its exact
//! id and a test that disappeared still counts as missing. It does not decide what a missing
//! test means; `compare` and `integrity::completeness` do.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use super::model::TestReport;
use super::text::{Pattern, re};

/// What a volatile part becomes in a stable id.
const VOLATILE: &str = "<volatile>";

/// Volatile values, most specific first: uuids, hex addresses, dates with an optional time,
/// times of day, slashed dates, long numbers, long hex runs, and numbers inside words.
static VOLATILE_PART: LazyLock<Pattern> = LazyLock::new(|| {
    re(concat!(
        r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
        r"|0[xX][0-9A-Fa-f]{4,}",
        r"|\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        r"|\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?[AaPp][Mm])?\b",
        r"|\b\d{1,4}/\d{1,2}/\d{1,4}\b",
        r"|\b\d{4,}(?:\.\d+)?\b|\b\d+\.\d{4,}\b",
        r"|\b[0-9A-Fa-f]{8,}\b",
        r"|\d{4,}(?:\.\d+)?|\d+\.\d{4,}",
    ))
});

/// The id `name` with the volatile values of its parameter part replaced, or `None` when it
/// has no parameter part or nothing in it is volatile.
pub(crate) fn stable(name: &str) -> Option<String> {
    let body = name.strip_suffix(']')?;
    let open = param_open(body)?;
    let (head, params) = body.split_at(open);
    let normalised = VOLATILE_PART.replace_all(params, |caps: &regex::Captures<'_>| {
        let text = caps.get(0).map_or("", |m| m.as_str());
        // A hex run is volatile only with both digits and letters (a word like `deadbeef`
        // or a plain number is handled by the other alternatives or kept).
        let hex_run = text.len() >= 8
            && text.bytes().all(|b| b.is_ascii_hexdigit())
            && !text.bytes().all(|b| b.is_ascii_digit());
        let letters_only = text.bytes().all(|b| b.is_ascii_alphabetic());
        if hex_run && letters_only {
            text.to_owned()
        } else {
            VOLATILE.to_owned()
        }
    });
    (normalised != params).then(|| format!("{head}{normalised}]"))
}

/// Where the parameter part of `body` (an id without its final `]`) opens: the `[` that
/// balances the final `]`.
fn param_open(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in body.char_indices().rev() {
        match c {
            ']' => depth += 1,
            '[' if depth == 0 => return Some(at),
            '[' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The ids of `after` renamed to the ids of `before` they match by their stable part, each
/// match one-to-one, and the (before, after) names of each match. Tests whose exact id is in
/// both runs are not touched.
pub fn align(before: &TestReport, after: &TestReport) -> (TestReport, Vec<(String, String)>) {
    let before_ids: BTreeSet<String> = before.tests.iter().map(|case| case.id()).collect();
    let after_ids: BTreeSet<String> = after.tests.iter().map(|case| case.id()).collect();
    // Stable key -> the unmatched tests with it, per side.
    let keyed = |report: &TestReport, other: &BTreeSet<String>| {
        let mut map: BTreeMap<(Option<String>, String), Vec<String>> = BTreeMap::new();
        for case in &report.tests {
            if other.contains(&case.id()) {
                continue;
            }
            if let Some(key) = stable(&case.name) {
                map.entry((case.file.clone(), key))
                    .or_default()
                    .push(case.name.clone());
            }
        }
        map
    };
    let before_keys = keyed(before, &after_ids);
    let after_keys = keyed(after, &before_ids);
    // A stable id two tests of one run share (counted over the whole run, matched or not)
    // cannot tell them apart.
    let shared = |report: &TestReport| {
        let mut count: BTreeMap<(Option<String>, String), usize> = BTreeMap::new();
        for case in &report.tests {
            let key = stable(&case.name).unwrap_or_else(|| case.name.clone());
            *count.entry((case.file.clone(), key)).or_default() += 1;
        }
        count
    };
    let (before_count, after_count) = (shared(before), shared(after));
    let mut renames: BTreeMap<(Option<String>, String), String> = BTreeMap::new();
    let mut pairs = Vec::new();
    for (key, names) in &after_keys {
        let (Some(was), [now]) = (before_keys.get(key), names.as_slice()) else {
            continue;
        };
        let unique = before_count.get(key) == Some(&1) && after_count.get(key) == Some(&1);
        if let ([was], true) = (was.as_slice(), unique) {
            renames.insert((key.0.clone(), now.clone()), was.clone());
            pairs.push((was.clone(), now.clone()));
        }
    }
    let mut aligned = after.clone();
    for case in &mut aligned.tests {
        if let Some(was) = renames.get(&(case.file.clone(), case.name.clone())) {
            case.name = was.clone();
        }
    }
    (aligned, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testreport::TestStatus;

    fn report(names: &[&str]) -> TestReport {
        let mut report = crate::testreport::model::report_of(
            true,
            &names
                .iter()
                .map(|name| (*name, TestStatus::Passed))
                .collect::<Vec<_>>(),
        );
        for case in &mut report.tests {
            case.file = Some("tests/test_x.py".to_owned());
        }
        report
    }

    /// Volatile values of every kind, two draws each (as two runs would give).
    fn draws() -> Vec<(&'static str, String, String)> {
        vec![
            ("time", "04:33:17".into(), "04:33:18".into()),
            (
                "time-ms",
                "04:33:17.123456".into(),
                "11:02:59.000001".into(),
            ),
            ("time-12h", "4:33 PM".into(), "11:02 am".into()),
            ("date", "2026-11-28".into(), "2026-11-29".into()),
            (
                "datetime",
                "2026-11-28T04:33:17Z".into(),
                "2026-11-28T04:33:19.5+01:00".into(),
            ),
            (
                "time and date",
                "04:33:17 2026-11-28".into(),
                "04:34:02 2026-11-28".into(),
            ),
            ("slashed date", "11/28/2026".into(), "11/29/2026".into()),
            (
                "address",
                "<Obj at 0x7f3a2c1d9e80>".into(),
                "<Obj at 0x7f3a2c1da010>".into(),
            ),
            (
                "uuid",
                "5f0c6a1e-9b7d-4c3e-8a2f-1d4e6b8c0a9f".into(),
                "a3e1b2c4-0d9f-4e8a-b7c6-5d4e3f2a1b0c".into(),
            ),
            (
                "port",
                "http://127.0.0.1:54321/x".into(),
                "http://127.0.0.1:40213/x".into(),
            ),
            ("seed", "seed=839201".into(), "seed=120993".into()),
            (
                "timestamp",
                "1795840397.123".into(),
                "1795840412.998".into(),
            ),
            ("random float", "0.8394021".into(), "0.1209933".into()),
            (
                "hex token",
                "tok-9f3a1c7b2e".into(),
                "tok-0b4d8e2a61".into(),
            ),
        ]
    }

    #[test]
    fn ids_that_differ_only_in_volatile_parameters_are_one_test() {
        for (kind, first, second) in draws() {
            let before = report(&[&format!("test_x[{first}]"), "test_y"]);
            let after = report(&[&format!("test_x[{second}]"), "test_y"]);
            let (aligned, pairs) = align(&before, &after);
            assert_eq!(
                (aligned.tests, pairs),
                (
                    before.tests.clone(),
                    vec![(format!("test_x[{first}]"), format!("test_x[{second}]"))]
                ),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_test_that_disappeared_or_was_renamed_is_not_matched() {
        for (kind, first, second) in draws() {
            let before = report(&[&format!("test_x[{first}]")]);
            for after in [
                report(&[]),
                report(&[&format!("test_renamed[{second}]")]),
                report(&[&format!("test_x[other-{second}]")]),
            ] {
                let (_, pairs) = align(&before, &after);
                assert_eq!(pairs, Vec::new(), "{kind}: {:?}", after.tests);
            }
        }
        // Two tests of one run share the stable id: neither is told to be the one before.
        let shared = [
            ("test_x[04:33:17]", ["test_x[04:33:18]", "test_x[05:00:00]"]),
            (
                "test_x[0x7f3a2c1d]",
                ["test_x[0x7f3a2c1e]", "test_x[0x55aa00ff]"],
            ),
            (
                "test_x[port=54321]",
                ["test_x[port=40213]", "test_x[port=40214]"],
            ),
        ];
        for (was, now) in shared {
            let (_, pairs) = align(&report(&[was]), &report(&now));
            assert_eq!(pairs, Vec::new(), "{was}");
        }
    }

    #[test]
    fn stable_parameters_and_test_names_are_kept() {
        let kept = [
            "test_x[1-2]",
            "test_x[abc]",
            "test_x[deadbeefcafe]",
            "test_x[http://user:pass@host/path]",
            "test_20250101_regression",
            "test_crlf",
            "test_x[3.14]",
        ];
        let got: Vec<Option<String>> = kept.iter().map(|name| stable(name)).collect();
        assert_eq!(got, vec![None; kept.len()]);
        assert_eq!(
            stable("test_x[a[0x7f3a2c1d]-04:33:17]").as_deref(),
            Some("test_x[a[<volatile>]-<volatile>]")
        );
    }
}
