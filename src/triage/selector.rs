//! The command that runs exactly a group's tests, in its runner's own selector syntax:
//! pytest node ids, `cargo test ... -- --exact`, `jest FILE -t '^(...)$'`,
//! `vitest run FILE -t '^(...)$'`, `go test -run '^(...)$' ./pkg`,
//! `node --test --test-name-pattern '^(...)$' FILE`. Words are quoted for `efix run
//! --repro`, which splits with shell rules and never runs a shell.

use std::collections::BTreeSet;

use super::failure::Runner;

/// One test of a group: its selector name and scope (see [`super::Failure`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct TestRef {
    pub(crate) name: String,
    pub(crate) scope: Option<String>,
}

/// How commands start: the runner's program (overridable, e.g. `python -m pytest`) and the Go
/// module path that package import paths are made relative to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Programs {
    pub(crate) program: Option<String>,
    pub(crate) go_module: Option<String>,
}

/// The default program of a runner.
pub(crate) fn default_program(runner: Runner) -> &'static str {
    match runner {
        Runner::Pytest => "pytest",
        Runner::Jest => "npx jest",
        Runner::Vitest => "npx vitest run",
        Runner::Cargo => "cargo test",
        Runner::Go => "go test",
        Runner::Node => "node --test",
    }
}

/// The command for `tests` (all of one runner).
pub(crate) fn command(runner: Runner, tests: &[TestRef], programs: &Programs) -> String {
    let program = programs
        .program
        .clone()
        .unwrap_or_else(|| default_program(runner).to_owned());
    let mut words: Vec<String> = Vec::new();
    let files = || -> Vec<String> {
        tests
            .iter()
            .filter_map(|test| test.scope.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let names = || -> Vec<String> {
        tests
            .iter()
            .map(|test| test.name.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    match runner {
        Runner::Pytest => words.extend(names()),
        Runner::Jest | Runner::Vitest => {
            words.extend(files());
            words.push("-t".to_owned());
            words.push(alternation(&names()));
        }
        Runner::Node => {
            // Node 20 matches the pattern against a test's title, later versions against its
            // describe blocks and title joined by spaces: both forms are in the pattern.
            let mut forms = BTreeSet::new();
            for name in names() {
                forms.insert(name.replace(" > ", " "));
                forms.insert(name.rsplit(" > ").next().unwrap_or(&name).to_owned());
            }
            words.push("--test-name-pattern".to_owned());
            words.push(alternation(&forms.into_iter().collect::<Vec<_>>()));
            words.extend(files());
        }
        Runner::Go => {
            words.push("-run".to_owned());
            words.push(go_pattern(&names()));
            for package in files() {
                words.push(go_package(&package, programs.go_module.as_deref()));
            }
        }
        Runner::Cargo => cargo_words(tests, &mut words),
    }
    let mut command = program;
    for word in words {
        command.push(' ');
        command.push_str(&quote(&word));
    }
    command
}

/// `^(?:a|b)$` with each name's regex metacharacters escaped (the escapes mean the same in
/// JavaScript, Go's RE2 and Python).
fn alternation(names: &[String]) -> String {
    let escaped: Vec<String> = names.iter().map(|name| escape(name)).collect();
    format!("^(?:{})$", escaped.join("|"))
}

fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// go's `-run` splits its pattern at unbracketed `/` into one pattern per subtest level.
fn go_pattern(names: &[String]) -> String {
    let split: Vec<Vec<&str>> = names.iter().map(|name| name.split('/').collect()).collect();
    let depth = split.iter().map(Vec::len).max().unwrap_or(1);
    let mut levels = Vec::new();
    for level in 0..depth {
        let at_level: BTreeSet<String> = split
            .iter()
            .filter_map(|parts| parts.get(level))
            .map(|part| escape(part))
            .collect();
        let joined: Vec<String> = at_level.into_iter().collect();
        levels.push(format!("^(?:{})$", joined.join("|")));
    }
    levels.join("/")
}

/// `./pkg` for a package of the module, else the import path as given.
fn go_package(package: &str, module: Option<&str>) -> String {
    match module.and_then(|module| package.strip_prefix(module)) {
        Some("") => ".".to_owned(),
        Some(rest) if rest.starts_with('/') => format!(".{rest}"),
        _ => package.to_owned(),
    }
}

/// `-p CRATE` and the target flags of every test binary, then `-- --exact NAME...`.
/// Scopes are nextest binary ids (`crate`, `crate::target`, `crate::bin/name`) or cargo test
/// target paths (`src/lib.rs`, `tests/a.rs`).
fn cargo_words(tests: &[TestRef], words: &mut Vec<String>) {
    let mut packages = BTreeSet::new();
    let mut targets = BTreeSet::new();
    for test in tests {
        let Some(scope) = test.scope.as_deref() else {
            continue;
        };
        if scope.contains(".rs") {
            targets.insert(target_of_path(scope));
            continue;
        }
        match scope.split_once("::") {
            None => {
                packages.insert(scope.to_owned());
                targets.insert(vec!["--lib".to_owned()]);
            }
            Some((package, target)) => {
                packages.insert(package.to_owned());
                let flag = match target.split_once('/') {
                    Some(("bin", name)) => vec!["--bin".to_owned(), name.to_owned()],
                    Some(("example", name)) => vec!["--example".to_owned(), name.to_owned()],
                    Some(("bench", name)) => vec!["--bench".to_owned(), name.to_owned()],
                    _ => vec!["--test".to_owned(), target.to_owned()],
                };
                targets.insert(flag);
            }
        }
    }
    for package in packages {
        words.push("-p".to_owned());
        words.push(package);
    }
    for target in targets {
        words.extend(target);
    }
    words.push("--".to_owned());
    words.push("--exact".to_owned());
    let names: BTreeSet<&str> = tests.iter().map(|test| test.name.as_str()).collect();
    words.extend(names.into_iter().map(str::to_owned));
}

fn target_of_path(path: &str) -> Vec<String> {
    let path = path.trim_start_matches("./");
    let stem = |rest: &str| {
        rest.trim_end_matches("/main.rs")
            .trim_end_matches(".rs")
            .to_owned()
    };
    if path.ends_with("src/lib.rs") {
        vec!["--lib".to_owned()]
    } else if let Some(rest) = path.split_once("tests/").map(|(_, rest)| rest) {
        vec!["--test".to_owned(), stem(rest)]
    } else if let Some(rest) = path.split_once("src/bin/").map(|(_, rest)| rest) {
        vec!["--bin".to_owned(), stem(rest)]
    } else if let Some(rest) = path.split_once("benches/").map(|(_, rest)| rest) {
        vec!["--bench".to_owned(), stem(rest)]
    } else {
        vec!["--bins".to_owned()]
    }
}

/// A word quoted so shell-rule splitting (`efix run --repro`, a shell in a workflow) gives
/// it back unchanged: bare when it is plain, else in single quotes (which keep backslashes).
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\"'\"'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tests(items: &[(&str, Option<&str>)]) -> Vec<TestRef> {
        items
            .iter()
            .map(|(name, scope)| TestRef {
                name: (*name).to_owned(),
                scope: scope.map(str::to_owned),
            })
            .collect()
    }

    #[test]
    fn each_runner_selects_exactly_its_tests() {
        let programs = Programs {
            program: None,
            go_module: Some("example.com/shop".to_owned()),
        };
        assert_eq!(
            command(
                Runner::Pytest,
                &tests(&[("tests/a.py::test_x[1 2]", Some("tests/a.py"))]),
                &programs
            ),
            "pytest 'tests/a.py::test_x[1 2]'"
        );
        assert_eq!(
            command(
                Runner::Jest,
                &tests(&[
                    ("cart total (x)", Some("test/a.test.js")),
                    ("b", Some("test/a.test.js"))
                ]),
                &programs
            ),
            "npx jest test/a.test.js -t '^(?:b|cart total \\(x\\))$'"
        );
        assert_eq!(
            command(
                Runner::Go,
                &tests(&[
                    ("TestA", Some("example.com/shop/p")),
                    ("TestB", Some("example.com/shop"))
                ]),
                &programs
            ),
            "go test -run '^(?:TestA|TestB)$' . ./p"
        );
        assert_eq!(
            command(
                Runner::Cargo,
                &tests(&[("a::b", Some("inv::orders")), ("c", Some("inv"))]),
                &programs
            ),
            "cargo test -p inv --lib --test orders -- --exact a::b c"
        );
        assert_eq!(
            command(
                Runner::Cargo,
                &tests(&[("t", Some("tests/x.rs"))]),
                &programs
            ),
            "cargo test --test x -- --exact t"
        );
        assert_eq!(
            command(
                Runner::Node,
                &tests(&[("adds", Some("test/a.js"))]),
                &programs
            ),
            "node --test --test-name-pattern '^(?:adds)$' test/a.js"
        );
    }

    #[test]
    fn quoted_words_split_back_to_themselves() {
        for word in [
            "plain",
            "a b",
            "it's",
            "^(?:a\\(b\\))$",
            "x[1 2]",
            "",
            "$HOME",
        ] {
            assert_eq!(
                shlex::split(&quote(word)),
                Some(vec![word.to_owned()]),
                "{word}"
            );
        }
    }

    #[test]
    fn go_subtests_get_one_pattern_per_level() {
        assert_eq!(
            go_pattern(&["TestA/one".to_owned(), "TestA/two.x".to_owned()]),
            "^(?:TestA)$/^(?:one|two\\.x)$"
        );
    }
}
