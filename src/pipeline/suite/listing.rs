//! The runner's own listing of a suite form's tests, run before the form so its cost can be
//! estimated: `pytest --collect-only -q`, `cargo test -- --list`, `go test -list .`,
//! `vitest list`, `jest --listTests` (which lists test files, not tests).
//!
//! Runners without a listing (unittest and Django's runners, mocha, tape, node:test) are counted
//! statically instead (`count.rs`); package scripts get neither. This module only computes argv
//! and reads the listing's output; it runs nothing.

use crate::evidence::ListedUnit;
use crate::policy::command::basename;

/// How to list one form's tests and read the count from the listing's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listing {
    pub argv: Vec<String>,
    pub unit: ListedUnit,
    runner: Lister,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lister {
    Pytest,
    Cargo,
    Go,
    Vitest,
    Jest,
}

/// The listing command of a form's argv; `None` when its runner has no listing efix reads.
pub(crate) fn listing(argv: &[String]) -> Option<Listing> {
    let (launcher, tool) = super::known::split_launcher(argv)?;
    let program = basename(tool.first()?);
    let sub = |at: usize| tool.get(at).map(String::as_str);
    let with = |at: usize, words: &[&str]| {
        let mut out = launcher.to_vec();
        out.extend(tool[..at].iter().cloned());
        out.extend(words.iter().map(|w| (*w).to_owned()));
        out.extend(tool[at..].iter().cloned());
        out
    };
    let (argv, unit, runner) = match program {
        "pytest" | "py.test" => (
            with(1, &["--collect-only", "-q"]),
            ListedUnit::Tests,
            Lister::Pytest,
        ),
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("pytest") => (
            with(3, &["--collect-only", "-q"]),
            ListedUnit::Tests,
            Lister::Pytest,
        ),
        "cargo" if sub(1) == Some("test") => {
            let mut out = argv.to_vec();
            match out.iter().position(|a| a == "--") {
                Some(at) => out.insert(at + 1, "--list".to_owned()),
                None => out.extend(["--".to_owned(), "--list".to_owned()]),
            }
            (out, ListedUnit::Tests, Lister::Cargo)
        }
        "go" if sub(1) == Some("test") => (with(2, &["-list", "."]), ListedUnit::Tests, Lister::Go),
        "vitest" => {
            let mut out = launcher.to_vec();
            out.push(tool[0].clone());
            out.push("list".to_owned());
            let rest = if sub(1) == Some("run") {
                &tool[2..]
            } else {
                &tool[1..]
            };
            out.extend(rest.iter().cloned());
            (out, ListedUnit::Tests, Lister::Vitest)
        }
        "jest" => (
            [argv, &["--listTests".to_owned()]].concat(),
            ListedUnit::TestFiles,
            Lister::Jest,
        ),
        _ => return None,
    };
    Some(Listing { argv, unit, runner })
}

impl Listing {
    /// The number of tests (or files) the listing's output names; `None` when it names none
    /// the way its runner does (a collection error, an unknown option).
    pub(crate) fn count(&self, stdout: &str) -> Option<u64> {
        let lines = stdout.lines().map(str::trim);
        let count = match self.runner {
            Lister::Pytest => pytest_count(stdout),
            Lister::Cargo => lines.filter(|l| l.ends_with(": test")).count() as u64,
            Lister::Go => lines
                .filter(|l| {
                    ["Test", "Example", "Fuzz"].iter().any(|p| {
                        l.strip_prefix(p).is_some_and(|rest| {
                            rest.chars().all(|c| c.is_alphanumeric() || c == '_')
                        })
                    })
                })
                .count() as u64,
            Lister::Vitest => lines.filter(|l| l.contains(" > ")).count() as u64,
            Lister::Jest => lines.filter(|l| l.starts_with('/')).count() as u64,
        };
        (count > 0).then_some(count)
    }
}

/// pytest's node ids (`-q`), or its per-file counts (`-qq`: `tests/a.py: 3`).
fn pytest_count(stdout: &str) -> u64 {
    let ids = stdout.lines().filter(|l| l.contains("::")).count() as u64;
    if ids > 0 {
        return ids;
    }
    stdout
        .lines()
        .filter_map(|l| l.rsplit_once(": "))
        .filter(|(file, _)| file.ends_with(".py"))
        .filter_map(|(_, n)| n.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(command: &str) -> Option<String> {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        listing(&argv).map(|l| l.argv.join(" "))
    }

    #[test]
    fn each_listing_runner_gets_its_own_listing_command() {
        let cases = [
            (
                "pytest -q tests/",
                Some("pytest --collect-only -q -q tests/"),
            ),
            (
                "python -m pytest tests/test_a.py",
                Some("python -m pytest --collect-only -q tests/test_a.py"),
            ),
            (
                "cargo test -p x --no-fail-fast",
                Some("cargo test -p x --no-fail-fast -- --list"),
            ),
            (
                "cargo test -- --nocapture",
                Some("cargo test -- --list --nocapture"),
            ),
            ("go test ./...", Some("go test -list . ./...")),
            ("npx vitest run test/", Some("npx vitest list test/")),
            ("npx jest", Some("npx jest --listTests")),
            ("python -m unittest", None),
            ("python tests/runtests.py", None),
            ("npx mocha", None),
        ];
        for (command, want) in cases {
            assert_eq!(listed(command).as_deref(), want, "{command}");
        }
    }

    #[test]
    fn counts_are_read_the_way_each_runner_prints_them() {
        let count = |command: &str, out: &str| {
            let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
            listing(&argv).and_then(|l| l.count(out))
        };
        assert_eq!(
            count(
                "pytest",
                "tests/a.py::test_a\ntests/a.py::T::test_b\n\n2 tests collected in 0.01s\n"
            ),
            Some(2)
        );
        assert_eq!(
            count("pytest -q", "tests/a.py: 3\ntests/b.py: 4\n"),
            Some(7)
        );
        assert_eq!(count("pytest", "ERROR tests/a.py\n1 error in 0.1s\n"), None);
        assert_eq!(
            count(
                "cargo test",
                "a::t1: test\nb::t2: test\nbench: benchmark\n\n2 tests, 1 benchmark\n"
            ),
            Some(2)
        );
        assert_eq!(
            count(
                "go test ./...",
                "TestA\nTestB_c\nExampleX\nok  \texample.com/m\t0.01s\n"
            ),
            Some(3)
        );
        assert_eq!(
            count("npx vitest run", "a.test.ts > s > t1\na.test.ts > t2\n"),
            Some(2)
        );
        assert_eq!(count("npx jest", "/r/a.test.js\n/r/b.test.js\n"), Some(2));
    }
}
