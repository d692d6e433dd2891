//! Small text helpers the renderers share: durations, one-line cells, code lists, the
//! names of command purposes.

use std::fmt::Write as _;

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
        Purpose::RelatedBaseline => "related tests, test changes only",
        Purpose::RelatedFixed => "related tests, with fix",
    }
}

/// A Markdown table whose identical rows are written once; when a row repeats, a last column
/// (`times`) says how often it occurred.
pub(super) fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut counted: Vec<(&Vec<String>, usize)> = Vec::new();
    for row in rows {
        match counted.iter_mut().find(|(seen, _)| *seen == row) {
            Some((_, count)) => *count += 1,
            None => counted.push((row, 1)),
        }
    }
    let repeated = counted.iter().any(|(_, count)| *count > 1);
    let mut head = header.to_vec();
    if repeated {
        head.push("times");
    }
    let _ = writeln!(
        out,
        "| {} |\n|{}",
        head.join(" | "),
        "---|".repeat(head.len())
    );
    for (row, count) in counted {
        let mut cells = row.clone();
        if repeated {
            cells.push(count.to_string());
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// A block folded under a one-line summary (plain text: HTML is escaped, backquotes dropped),
/// with Markdown inside.
pub(super) fn collapsed(out: &mut String, summary: &str, body: &str) {
    let summary = one_line(summary)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "");
    let _ = write!(
        out,
        "<details><summary>{summary}</summary>\n\n{}\n\n</details>\n\n",
        body.trim_end()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_rows_are_written_once_with_their_count() {
        let row = |a: &str, b: &str| vec![a.to_owned(), b.to_owned()];
        let mut out = String::new();
        table(
            &mut out,
            &["a", "b"],
            &[row("x", "1"), row("y", "2"), row("x", "1")],
        );
        assert_eq!(
            out,
            "| a | b | times |\n|---|---|---|\n| x | 1 | 2 |\n| y | 2 | 1 |\n"
        );
        let mut plain = String::new();
        table(&mut plain, &["a", "b"], &[row("x", "1"), row("y", "2")]);
        assert_eq!(plain, "| a | b |\n|---|---|\n| x | 1 |\n| y | 2 |\n");
    }

    #[test]
    fn a_summary_is_plain_text() {
        let mut out = String::new();
        collapsed(&mut out, "run `a <b>` & c", "body\n\n");
        assert_eq!(
            out,
            "<details><summary>run a &lt;b&gt; &amp; c</summary>\n\nbody\n\n</details>\n\n"
        );
    }
}
