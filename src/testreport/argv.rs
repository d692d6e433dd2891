//! Best-effort extraction of the test names and filters a command asks for, so the pipeline
//! can check that the named failing tests pass after a fix.

/// The test filters a command names, in argv order: `cargo test -p x crlf` -> `["crlf"]`,
/// `pytest tests/t.py::test_b -k foo` -> `["tests/t.py::test_b", "foo"]`,
/// `go test -run TestX ./...` -> `["TestX"]`, `npx jest -t name` -> `["name"]`,
/// `node --test --test-name-pattern=x` -> `["x"]`.
///
/// Paths that only select files are not returned: they name no test. Unknown commands give
/// an empty list.
pub fn requested_tests(argv: &[String]) -> Vec<String> {
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let position = |names: &[&str]| args.iter().position(|arg| names.contains(&program(arg)));
    if let Some(at) = position(&["cargo"]) {
        return cargo(args.get(at + 1..).unwrap_or_default());
    }
    if let Some(at) = position(&["pytest", "py.test"]) {
        return pytest(args.get(at + 1..).unwrap_or_default());
    }
    if let Some(at) = args
        .windows(2)
        .position(|pair| pair.get(1) == Some(&"pytest") && pair.first() == Some(&"-m"))
    {
        return pytest(args.get(at + 2..).unwrap_or_default());
    }
    if let Some(at) = position(&["go"]).filter(|at| args.get(at + 1) == Some(&"test")) {
        return flag_values(args.get(at + 2..).unwrap_or_default(), &["-run", "--run"]);
    }
    if position(&["jest", "vitest"]).is_some() {
        return flag_values(&args, &["-t", "--testNamePattern", "--test-name-pattern"]);
    }
    if position(&["mocha"]).is_some() {
        return flag_values(&args, &["-g", "--grep", "-f", "--fgrep"]);
    }
    if position(&["node"]).is_some() {
        return flag_values(&args, &["--test-name-pattern"]);
    }
    // `npm test -- -t name` and friends: the runner is unknown, its usual filter flags are not.
    if position(&["npm", "npx", "yarn", "pnpm", "bun"]).is_some() {
        return flag_values(
            &args,
            &["-t", "--testNamePattern", "--test-name-pattern", "--grep"],
        );
    }
    Vec::new()
}

/// The program name without directories or a Windows extension.
fn program(arg: &str) -> &str {
    let base = arg.rsplit(['/', '\\']).next().unwrap_or(arg);
    base.strip_suffix(".exe")
        .or_else(|| base.strip_suffix(".cmd"))
        .unwrap_or(base)
}

/// Values of the given flags, as `-f value` or `-f=value`.
fn flag_values(args: &[&str], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if flags.contains(arg) {
            if let Some(value) = iter.next() {
                out.push((*value).to_owned());
            }
        } else if let Some((flag, value)) = arg.split_once('=')
            && flags.contains(&flag)
        {
            out.push(value.to_owned());
        }
    }
    out
}

/// cargo options that take a separate value, before `--`.
const CARGO_VALUED: &[&str] = &[
    "-p",
    "--package",
    "--bin",
    "--test",
    "--example",
    "--bench",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--manifest-path",
    "-j",
    "--jobs",
    "--profile",
    "--color",
    "--message-format",
    "-Z",
    "--config",
    "--exclude",
    "-E",
    "--filterset",
    "--filter-expr",
    "--partition",
    "--retries",
    "--test-threads",
    "--cargo-profile",
    "-P",
    "--archive-file",
    "--workspace-remap",
    "--binaries-metadata",
    "--cargo-metadata",
    "--run-ignored",
    "--threads",
    "--lockfile-path",
];

/// libtest options that take a separate value, after `--`.
const LIBTEST_VALUED: &[&str] = &[
    "--skip",
    "--test-threads",
    "--format",
    "--color",
    "--logfile",
    "-Z",
    "--shuffle-seed",
    "--report-time",
];

/// `cargo test [opts] [FILTER] [-- FILTERS...]` and `cargo nextest run [FILTERS] [-- ...]`.
fn cargo(args: &[&str]) -> Vec<String> {
    let mut args = args.iter().copied().skip_while(|arg| arg.starts_with('+'));
    let mut filters = Vec::new();
    match args.next() {
        Some("test" | "t") => {}
        Some("nextest") if args.next() == Some("run") => {}
        _ => return filters,
    }
    let mut after_separator = false;
    while let Some(arg) = args.next() {
        if arg == "--" && !after_separator {
            after_separator = true;
            continue;
        }
        let valued = if after_separator {
            LIBTEST_VALUED
        } else {
            CARGO_VALUED
        };
        if arg.starts_with('-') {
            if valued.contains(&arg) {
                args.next();
            }
            continue;
        }
        filters.push(arg.to_owned());
    }
    filters
}

/// pytest options that take a separate value.
const PYTEST_VALUED: &[&str] = &[
    "-m",
    "-p",
    "-c",
    "-o",
    "-n",
    "-r",
    "-W",
    "--rootdir",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--maxfail",
    "--tb",
    "--junitxml",
    "--junit-xml",
    "--basetemp",
    "--durations",
    "--log-level",
    "--cov",
    "--cov-report",
    "--confcutdir",
    "--import-mode",
    "--capture",
    "--dist",
    "--numprocesses",
    "--override-ini",
    "--config-file",
    "--log-file",
];

/// Node ids (`path::name`) and `-k` expressions; plain paths select files, not tests.
fn pytest(args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = args.iter().copied();
    while let Some(arg) = iter.next() {
        if arg == "-k" {
            if let Some(value) = iter.next() {
                out.push(value.to_owned());
            }
        } else if let Some(value) = arg.strip_prefix("-k").filter(|value| !value.is_empty()) {
            out.push(value.trim_start_matches('=').to_owned());
        } else if PYTEST_VALUED.contains(&arg) {
            iter.next();
        } else if !arg.starts_with('-') && arg.contains("::") {
            out.push(arg.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(command: &str) -> Vec<String> {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        requested_tests(&argv)
    }

    #[test]
    fn each_runner_filter_syntax_is_read() {
        let cases = [
            ("cargo test -p parser crlf", vec!["crlf"]),
            (
                "cargo +stable test --features x,y --test cli parses -- --exact --skip slow",
                vec!["parses"],
            ),
            (
                "cargo test -- crlf::tests::keeps_crlf --nocapture --test-threads 1",
                vec!["crlf::tests::keeps_crlf"],
            ),
            (
                "cargo nextest run -p parser -E test(crlf) keeps_crlf",
                vec!["keeps_crlf"],
            ),
            (
                "pytest tests/test_a.py::test_b -k foo",
                vec!["tests/test_a.py::test_b", "foo"],
            ),
            ("python3 -m pytest -q -m slow tests/ -kcrlf", vec!["crlf"]),
            ("go test -run TestX ./...", vec!["TestX"]),
            ("go test -v -run=^TestCRLF$ ./parse", vec!["^TestCRLF$"]),
            ("npx jest -t name", vec!["name"]),
            (
                "npx vitest run src/parse.test.ts --testNamePattern=crlf",
                vec!["crlf"],
            ),
            ("./node_modules/.bin/mocha --grep crlf test/", vec!["crlf"]),
            (
                "node --test --test-name-pattern=crlf test/parse.test.js",
                vec!["crlf"],
            ),
            ("npm test -- -t crlf", vec!["crlf"]),
        ];
        let found: Vec<(&str, Vec<String>)> = cases
            .iter()
            .map(|(command, _)| (*command, filters(command)))
            .collect();
        let wanted: Vec<(&str, Vec<String>)> = cases
            .iter()
            .map(|(command, want)| (*command, want.iter().map(|s| (*s).to_owned()).collect()))
            .collect();
        assert_eq!(found, wanted);
    }

    #[test]
    fn commands_that_name_no_test_give_nothing() {
        let commands = [
            "cargo test",
            "cargo build --release",
            "pytest tests/",
            "go test ./...",
            "node --test test/",
            "make check",
            "",
        ];
        let found: Vec<Vec<String>> = commands.iter().map(|command| filters(command)).collect();
        assert_eq!(found, vec![Vec::<String>::new(); commands.len()]);
    }
}
