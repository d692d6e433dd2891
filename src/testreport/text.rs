//! Text helpers shared by the parsers: colour-code removal, line splitting, durations.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Match, Regex, Replacer};

/// A pattern written in this module tree. The patterns are literals exercised by the unit
/// tests; one that does not compile (a programming error those tests expose) matches nothing
/// rather than stopping efix in the middle of a run.
pub(crate) struct Pattern(Option<Regex>);

/// Compile a pattern written in this module tree.
pub(crate) fn re(pattern: &str) -> Pattern {
    let compiled = Regex::new(pattern);
    if let Err(error) = &compiled {
        tracing::error!(%error, pattern, "a test-report pattern does not compile");
        debug_assert!(false, "test-report pattern {pattern:?}: {error}");
    }
    Pattern(compiled.ok())
}

impl Pattern {
    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        self.0
            .as_ref()
            .is_some_and(|regex| regex.is_match(haystack))
    }

    pub(crate) fn captures<'h>(&self, haystack: &'h str) -> Option<Captures<'h>> {
        self.0.as_ref()?.captures(haystack)
    }

    pub(crate) fn captures_iter<'r, 'h>(
        &'r self,
        haystack: &'h str,
    ) -> impl Iterator<Item = Captures<'h>> + use<'r, 'h> {
        self.0
            .iter()
            .flat_map(move |regex| regex.captures_iter(haystack))
    }

    pub(crate) fn find<'h>(&self, haystack: &'h str) -> Option<Match<'h>> {
        self.0.as_ref()?.find(haystack)
    }

    pub(crate) fn replace<'h>(&self, haystack: &'h str, with: impl Replacer) -> Cow<'h, str> {
        match &self.0 {
            Some(regex) => regex.replace(haystack, with),
            None => Cow::Borrowed(haystack),
        }
    }

    pub(crate) fn replace_all<'h>(&self, haystack: &'h str, with: impl Replacer) -> Cow<'h, str> {
        match &self.0 {
            Some(regex) => regex.replace_all(haystack, with),
            None => Cow::Borrowed(haystack),
        }
    }
}

static ANSI: LazyLock<Pattern> = LazyLock::new(|| {
    // CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks, titles).
    re(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
});

/// Remove ANSI escape sequences.
pub(crate) fn strip_ansi(text: &str) -> String {
    if text.contains('\x1b') {
        ANSI.replace_all(text, "").into_owned()
    } else {
        text.to_owned()
    }
}

/// Clean captured output into lines: colours removed, and for lines rewritten in place with
/// carriage returns (progress bars), only the final text kept.
pub(crate) fn clean_lines(text: &str) -> Vec<String> {
    strip_ansi(text)
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            match line.rfind('\r') {
                Some(at) => line.get(at + 1..).unwrap_or("").to_owned(),
                None => line.to_owned(),
            }
        })
        .collect()
}

/// Number of leading spaces (tabs count as one), used for nesting in tree-shaped reporters.
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

static TRAILING_DURATION: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"\s*(?:\(\s*\d+(?:\.\d+)?\s*(?:ms|s|µs|us|ns|m)\s*\)|\d+(?:\.\d+)?\s*(?:ms|s)|\[\s*\d+(?:\.\d+)?\s*(?:ms|s)\s*\])\s*$",
    )
});

/// Remove a trailing duration such as `(5 ms)`, `(0.00s)`, `12ms` or `[1.2s]`.
pub(crate) fn strip_duration(name: &str) -> &str {
    match TRAILING_DURATION.find(name) {
        Some(found) => name.get(..found.start()).unwrap_or(name).trim_end(),
        None => name.trim_end(),
    }
}

/// Read `N word` pairs from a summary fragment, e.g. `1 failed, 2 passed` or
/// `1 failed | 2 passed`; returns (first word lowercased, N) for each pair found.
pub(crate) fn count_pairs(fragment: &str) -> Vec<(String, u64)> {
    static PAIR: LazyLock<Pattern> = LazyLock::new(|| re(r"(\d+)\s+([A-Za-z]+)"));
    PAIR.captures_iter(fragment)
        .filter_map(|caps| {
            let n = caps.get(1)?.as_str().parse::<u64>().ok()?;
            let word = caps.get(2)?.as_str().trim().to_ascii_lowercase();
            Some((word, n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_colour_and_hyperlink_codes_are_removed() {
        let text =
            "\x1b[32m✓\x1b[39m adds \x1b]8;;file:///x\x07link\x1b]8;;\x07 \x1b[2m(3 ms)\x1b[22m";
        assert_eq!(strip_ansi(text), "✓ adds link (3 ms)");
    }

    #[test]
    fn carriage_return_rewrites_keep_the_last_text() {
        assert_eq!(
            clean_lines("a\r\nRUNS x\rPASS x\nb"),
            vec!["a", "PASS x", "b"]
        );
    }

    #[test]
    fn durations_in_every_runner_style_are_stripped() {
        let names = [
            "adds (3 ms)",
            "adds (0.00s)",
            "adds 12ms",
            "adds [1.5s]",
            "adds (1.2ms)",
            "adds",
        ];
        let stripped: Vec<&str> = names.iter().map(|name| strip_duration(name)).collect();
        assert_eq!(stripped, vec!["adds"; 6]);
    }

    #[test]
    fn count_pairs_reads_comma_and_bar_separated_summaries() {
        assert_eq!(
            count_pairs("1 failed | 2 passed | 1 skipped (4)"),
            vec![
                ("failed".into(), 1),
                ("passed".into(), 2),
                ("skipped".into(), 1)
            ]
        );
        assert_eq!(
            count_pairs("1 failed, 2 passed, 1 warning"),
            vec![
                ("failed".into(), 1),
                ("passed".into(), 2),
                ("warning".into(), 1)
            ]
        );
    }
}
