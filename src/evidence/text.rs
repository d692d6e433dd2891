//! Small text helpers the renderers share: durations, one-line cells, code lists, the
//! names of command purposes.

use super::model::Purpose;

/// `1234` ms as `1.23 s`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
}

/// `` `a`, `b` `` on one line.
pub(super) fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{}`", cell(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text safe inside a table cell or inline code on one line.
pub(super) fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|").replace('`', "'")
}

/// The non-blank lines joined with spaces, cut at 300 characters.
pub(super) fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if line.chars().count() > 300 {
        let cut: String = line.chars().take(300).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// How a command's purpose reads in tables.
pub(super) fn purpose_name(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Setup => "setup, with network",
        Purpose::Reproduction => "reproduction",
        Purpose::SuiteBaseline => "suite baseline",
        Purpose::SuiteListing => "suite listing",
        Purpose::TestsOnlyReproduction => "reproduction, test changes only",
        Purpose::TestsOnlySuite => "suite, test changes only",
        Purpose::FixedReproduction => "reproduction, with fix",
        Purpose::FixedSuite => "suite, with fix",
        Purpose::Canary => "canaries, with fix",
    }
}
