//! Printing what a test runner prints: a string literal added to production code that holds a
//! line shaped like a runner's result (TAP's `ok 3 - name` and `# pass 3`, libtest's
//! `test x ... ok` and `test result: ok.`, pytest's `PASSED` and `3 passed`, unittest's
//! `Ran 3 tests`, mocha's `3 passing`, go's `--- PASS:`). A parser that reads the console can
//! take such a line for a result no runner produced.
//!
//! Format placeholders (`%d`, `{n}`, `${n}`) count as the numbers they print. A file that
//! already held such a line before the change is a reporter of its own (a test runner's
//! source, a CLI that prints a summary) and may add more.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use crate::integrity::pattern::Pattern;

static LITERAL: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#""([^"\\]*(?:\\.[^"\\]*)*)"|'([^'\\]*(?:\\.[^'\\]*)*)'|`([^`]*)`"#)
});
static PLACEHOLDER: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"%[-+ #0]*\d*(?:\.\d+)?[sdifgr]|\$\{[^}]*\}|\{[^{}]*\}"));
static RESULT_LINE: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"^\s*(?:not )?ok \d+(?:\s|$)|^\s*# (?:pass|fail|tests|ok)\s+\d+|^\s*1\.\.\d+\s*$|^\s*test \S.* \.\.\. (?:ok|FAILED|ignored)|\btest result: (?:ok|FAILED)\.|\bPASSED\b|\b\d+ passed\b|^\s*Ran \d+ tests?\b|\b\d+ passing\b|^\s*--- (?:PASS|FAIL):|^\s*PASS\s*$|\bTests:\s+\d+ passed",
    )
});

pub(crate) fn screen(middle: &str) -> bool {
    ["ok", "PASS", "pass", "Ran ", "test result", "1.."]
        .iter()
        .any(|w| middle.contains(w))
}

/// The first runner-shaped line in the string literals of `code`.
fn result_line(code: &str) -> Option<String> {
    LITERAL.captures_iter(code).find_map(|c| {
        let text = (1..=3).find_map(|i| c.get(i))?.as_str();
        let text = text.replace("\\n", "\n").replace("\\t", "\t");
        let text = PLACEHOLDER.replace_all(&text, "1");
        text.lines()
            .find(|line| RESULT_LINE.is_match(line))
            .map(|line| line.trim().to_owned())
    })
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    let candidates: Vec<(usize, String)> = added
        .code_lines()
        .filter_map(|(index, code)| Some((index, result_line(code)?)))
        .collect();
    if candidates.is_empty() || added.before.lines().any(|l| result_line(l).is_some()) {
        return Vec::new();
    }
    candidates
        .into_iter()
        .map(|(index, line)| {
            of(
                Family::ResultSpoofing,
                index,
                format!(
                    "prints `{line}`, a line shaped like a test runner's result, which a parser \
                     of the console could take for a passing test"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use super::PLACEHOLDER;
    use super::result_line;
    use crate::integrity::test_detection::Family;

    #[test]
    fn runner_shaped_lines_are_recognised() {
        let yes = [
            "print(f'ok {n} - {name}')",
            "console.log(`ok ${i} - adds`)",
            "println!(\"test tests::adds ... ok\")",
            "print('PASSED tests/test_a.py::test_a')",
            "sys.stdout.write('\\n1 passed in 0.01s\\n')",
            "console.log('# pass  3')",
            "fmt.Println(\"--- PASS: TestA (0.00s)\")",
            "print('Ran %d tests' % n)",
        ];
        let no = [
            "print('ok')",
            "log('request ok, 200')",
            "print('passed the argument')",
            "raise ValueError('value %d is not ok' % x)",
        ];
        assert!(PLACEHOLDER.is_match("{n}"));
        let missed: Vec<_> = yes.iter().filter(|c| result_line(c).is_none()).collect();
        let wrong: Vec<_> = no.iter().filter(|c| result_line(c).is_some()).collect();
        assert_eq!(
            (missed, wrong),
            (vec![] as Vec<&&str>, vec![] as Vec<&&str>)
        );
    }

    #[test]
    fn result_lines_are_refused_unless_the_file_already_reported() {
        let lib = "def f(x):\n    return x\n";
        let spoof = "def f(x):\n    print('ok 1 - f')\n    return x\n";
        let reporter = "def report(n):\n    print(f'{n} passed')\n";
        let reporter_after = "def report(n):\n    print(f'{n} passed')\n    print('PASSED')\n";
        assert_eq!(
            (
                families("pkg/core.py", lib, spoof),
                families("pkg/report.py", reporter, reporter_after)
            ),
            (vec![Family::ResultSpoofing], vec![])
        );
    }
}
