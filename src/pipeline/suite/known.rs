//! The suites of the runners efix knows, derived from the reproduction's argv.
//!
//! The whole suite is the same runner with the same options, without what selects tests:
//! `pytest tests/a.py::t -q` → `pytest -q`, `cargo test -p x crlf` → `cargo test -p x`,
//! `python -m unittest tests.test_a.T.t` → `python -m unittest`, `node --test
//! --test-name-pattern=x test/a.test.js` → `node --test`, `npx jest a.test.js -t x` →
//! `npx jest`, `go test -run X ./pkg` → `go test ./...`. Runners whose bare form may not find
//! the project's tests (mocha without its spec, tape and plain `node test/file.js`) run what the
//! package's `test` script gives its runner (`"tests-only": "nyc tape 'test/**/*.js'"` →
//! `npx tape test/**/*.js`), so lint, build and audit steps around it are left out; a script
//! with no known runner is run as `npm test`.
//!
//! Django's runners (`manage.py test`, `runtests.py`) have forms of their own (`django.rs`).
//!
//! The root suite is the same runner on the test directory holding the reproduction's tests
//! (see `root.rs`); the narrow suite is what the reproduction selects, widened to its files or
//! targets (`pytest tests/a.py`, `cargo test --test api`).
//!
//! This module only computes argv; it runs nothing and decides nothing about results.

use super::options::{
    JEST_VALUE_OPTIONS, MOCHA_VALUE_OPTIONS, PYTEST_VALUE_OPTIONS, VITEST_VALUE_OPTIONS,
};
use std::path::Path;

pub(crate) use super::derived::{Derived, unittest_module};

/// A whole suite: the reproduction's tool with other arguments (run under the same launcher),
/// or a complete command of its own (the package's `npm test`).
enum Whole {
    Tool(Vec<String>),
    Command(Vec<String>),
}

/// The suites derived from a reproduction's argv, read against the repository at `root`.
/// `None` when the runner is unknown; a `whole` equal to `argv` when the reproduction already
/// runs the whole suite.
pub(crate) fn derive(argv: &[String], root: &Path) -> Option<Derived> {
    if let Some(django) = crate::testreport::django::recognise_in(argv, root) {
        return Some(super::django::derive(argv, &django, root));
    }
    let (launcher, tool) = split_launcher(argv)?;
    let program = crate::policy::command::basename(tool.first()?);
    let (whole, narrow) = match program {
        "cargo" => tool_suites(cargo(tool)?),
        "pytest" | "py.test" => tool_suites(pytest(tool, 1)),
        "python" | "python3" if tool.get(1).map(String::as_str) == Some("-m") => {
            match tool.get(2).map(String::as_str) {
                Some("pytest") => tool_suites(pytest(tool, 3)),
                Some("unittest") => tool_suites(unittest(tool, root)),
                _ => return None,
            }
        }
        "go" if tool.get(1).map(String::as_str) == Some("test") => tool_suites(go(tool)),
        "node" => node(tool, root)?,
        "jest" => tool_suites(without(tool, 1, JEST_VALUE_OPTIONS, JEST_SELECTORS)),
        "vitest" => tool_suites(without(tool, 1, VITEST_VALUE_OPTIONS, VITEST_SELECTORS)),
        "mocha" | "_mocha" => match package_runner(root) {
            Some(command) => (Whole::Command(command), None),
            None => tool_suites(without(tool, 1, MOCHA_VALUE_OPTIONS, MOCHA_SELECTORS)),
        },
        "tape" | "tap" | "ava" => (Whole::Command(package_suite(root)?), None),
        "npm" | "pnpm" | "yarn" | "bun" if launcher.is_empty() => {
            (Whole::Command(package_script(tool)?), None)
        }
        _ => return None,
    };
    let under_launcher = |rest: Vec<String>| [launcher.to_vec(), rest].concat();
    let whole = match whole {
        Whole::Tool(rest) => under_launcher(rest),
        Whole::Command(command) => command,
    };
    if whole == argv {
        // The reproduction is the whole suite already; the caller tells it apart.
        return Some(Derived {
            whole,
            root: None,
            narrow: None,
        });
    }
    let narrow = narrow
        .map(under_launcher)
        .filter(|narrow| narrow != argv && *narrow != whole);
    let root = super::root::form(program, tool, root)
        .map(under_launcher)
        .filter(|form| form != argv && *form != whole && Some(form) != narrow.as_ref());
    Some(Derived {
        whole,
        root,
        narrow,
    })
}

fn tool_suites(
    (whole, narrow): (Vec<String>, Option<Vec<String>>),
) -> (Whole, Option<Vec<String>>) {
    (Whole::Tool(whole), narrow)
}

/// A launcher in front of the test tool (`npx`, `npx --yes`, `pnpm exec`, `yarn`, `bunx`)
/// and the tool's own argv. `npm`/`pnpm`/`yarn` running a package script have no tool.
pub(super) fn split_launcher(argv: &[String]) -> Option<(&[String], &[String])> {
    let program = crate::policy::command::basename(argv.first()?);
    let skip_flags = |from: usize| {
        let mut at = from;
        while argv.get(at).is_some_and(|a| a.starts_with('-')) {
            at += 1;
        }
        at
    };
    let at = match program {
        "npx" | "bunx" => skip_flags(1),
        "pnpm" if argv.get(1).map(String::as_str) == Some("exec") => skip_flags(2),
        "pnpm" | "yarn"
            if argv
                .get(1)
                .is_some_and(|a| matches!(a.as_str(), "jest" | "vitest" | "mocha" | "tape")) =>
        {
            1
        }
        _ => 0,
    };
    (at < argv.len()).then(|| argv.split_at(at))
}

/// `cargo test` / `cargo nextest run`: the package's whole run, and the reproduction's target
/// selectors without its filter as the narrow one.
fn cargo(argv: &[String]) -> Option<(Vec<String>, Option<Vec<String>>)> {
    const WITH_VALUE: &[&str] = &[
        "-p",
        "--package",
        "-F",
        "--features",
        "--manifest-path",
        "--target",
        "-j",
        "--jobs",
        "--profile",
        "--cargo-profile",
        "--target-dir",
        "--exclude",
        "--config",
        "-Z",
    ];
    const SELECTORS_WITH_VALUE: &[&str] = &["--test", "--bin", "--example", "--bench", "-E"];
    const SELECTORS: &[&str] = &[
        "--lib",
        "--bins",
        "--tests",
        "--examples",
        "--benches",
        "--doc",
    ];
    let command = match argv.get(1).map(String::as_str) {
        Some("test") => 2,
        Some("nextest") if argv.get(2).map(String::as_str) == Some("run") => 3,
        _ => return None,
    };
    let mut whole = argv[..command].to_vec();
    let mut narrow = argv[..command].to_vec();
    let mut selected = false;
    let mut i = command;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "--" {
            break;
        }
        if WITH_VALUE.contains(&arg.as_str()) {
            let value = argv.get(i + 1).into_iter().cloned();
            let pair: Vec<String> = std::iter::once(arg.clone()).chain(value).collect();
            whole.extend(pair.iter().cloned());
            narrow.extend(pair);
            i += 2;
            continue;
        }
        if SELECTORS_WITH_VALUE.contains(&arg.as_str()) {
            // `-E` is nextest's filter expression: a filter, not a target.
            if arg != "-E" {
                narrow.push(arg.clone());
                narrow.extend(argv.get(i + 1).cloned());
                selected = true;
            }
            i += 2;
            continue;
        }
        if SELECTORS.contains(&arg.as_str()) {
            narrow.push(arg.clone());
            selected = true;
            i += 1;
            continue;
        }
        if !arg.starts_with('-') {
            i += 1;
            continue;
        }
        whole.push(arg.clone());
        narrow.push(arg.clone());
        i += 1;
    }
    // cargo stops at the first test target that fails; the baseline must run them all, or a
    // target that already failed after it would count as broken by the fix.
    if whole.as_slice() != argv && !whole.iter().any(|a| a == "--no-fail-fast") {
        whole.push("--no-fail-fast".to_owned());
    }
    Some((whole, selected.then_some(narrow)))
}

/// pytest without its test selection (`-k`, paths and node ids): the suite of the same root
/// and options; narrow: the files of the node ids.
fn pytest(argv: &[String], first_arg: usize) -> (Vec<String>, Option<Vec<String>>) {
    let mut whole: Vec<String> = argv[..first_arg].to_vec();
    let mut narrow = whole.clone();
    let mut narrowed = false;
    let mut i = first_arg;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "-k" {
            narrowed = true;
            i += 2;
            continue;
        }
        if arg.starts_with("-k") || arg.starts_with("--keyword") {
            narrowed = true;
            i += if arg == "--keyword" { 2 } else { 1 };
            continue;
        }
        if PYTEST_VALUE_OPTIONS.contains(&arg.as_str()) {
            whole.push(arg.clone());
            whole.extend(argv.get(i + 1).cloned());
            narrow.push(arg.clone());
            narrow.extend(argv.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if arg.starts_with('-') {
            whole.push(arg.clone());
            narrow.push(arg.clone());
            i += 1;
            continue;
        }
        // A path or node id: it selects tests; its file is the narrow suite.
        let file = match arg.split_once("::") {
            Some((file, _)) => {
                narrowed = true;
                file.to_owned()
            }
            None => arg.clone(),
        };
        if !narrow.contains(&file) {
            narrow.push(file);
        }
        i += 1;
    }
    (whole, narrowed.then_some(narrow))
}

/// `python -m unittest [options] [ids]` → discovery with the same options; `discover` keeps
/// its start directory and pattern and only loses `-k`. Narrow: the modules of the ids.
fn unittest(argv: &[String], root: &Path) -> (Vec<String>, Option<Vec<String>>) {
    const VALUE_OPTIONS: &[&str] = &["-s", "--start-directory", "-p", "--pattern", "-t"];
    let mut whole: Vec<String> = argv[..3].to_vec();
    let mut narrow = whole.clone();
    let mut narrowed = false;
    let discover = argv.get(3).map(String::as_str) == Some("discover");
    let mut i = 3;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "-k" {
            narrowed = true;
            i += 2;
            continue;
        }
        if arg.starts_with("-k") {
            narrowed = true;
            i += 1;
            continue;
        }
        if VALUE_OPTIONS.contains(&arg.as_str()) {
            whole.push(arg.clone());
            whole.extend(argv.get(i + 1).cloned());
            narrow.push(arg.clone());
            narrow.extend(argv.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if arg.starts_with('-') || (discover && i == 3) {
            whole.push(arg.clone());
            narrow.push(arg.clone());
            i += 1;
            continue;
        }
        if discover {
            // Positional start directory and pattern of `discover`.
            whole.push(arg.clone());
            narrow.push(arg.clone());
            i += 1;
            continue;
        }
        let module = unittest_module(arg, root);
        narrowed |= module != *arg;
        if !narrow.contains(&module) {
            narrow.push(module);
        }
        i += 1;
    }
    (whole, narrowed.then_some(narrow))
}

/// `go test [flags] [packages]` → every package of the module; narrow: the packages given,
/// without the name filter.
fn go(argv: &[String]) -> (Vec<String>, Option<Vec<String>>) {
    const VALUE_OPTIONS: &[&str] = &["-tags", "-timeout", "-count", "-p", "-parallel"];
    const SELECTORS: &[&str] = &["-run", "-test.run", "-skip"];
    let (mut whole, _) = without(argv, 2, VALUE_OPTIONS, SELECTORS);
    whole.push("./...".to_owned());
    (whole, Some(drop_flag_values(argv, SELECTORS)))
}

/// `node --test [options] [files]` → `node --test [options]`; narrow: the files without the
/// name pattern. A plain `node test/file.js` (tape and similar) → the package's `npm test`.
fn node(argv: &[String], root: &Path) -> Option<(Whole, Option<Vec<String>>)> {
    const VALUE_OPTIONS: &[&str] = &[
        "--test-reporter",
        "--test-reporter-destination",
        "--import",
        "--require",
        "-r",
    ];
    const SELECTORS: &[&str] = &["--test-name-pattern", "--test-skip-pattern"];
    if argv.iter().any(|a| a == "--test") {
        let (whole, _) = without(argv, 1, VALUE_OPTIONS, SELECTORS);
        let narrow = drop_flag_values(argv, SELECTORS);
        return Some((Whole::Tool(whole), Some(narrow)));
    }
    let script = argv.get(1)?;
    if script.starts_with('-') || !crate::integrity::test_policy::is_test_path(script) {
        return None;
    }
    Some((Whole::Command(package_suite(root)?), None))
}

/// `npm test -- <args>`, `npm run test:unit -- <args>`, `yarn test <args>`: the script
/// alone (what follows the script name selects tests or changes nothing the suite needs).
fn package_script(argv: &[String]) -> Option<Vec<String>> {
    let script_end = match argv.get(1).map(String::as_str) {
        Some("test" | "t") => 2,
        Some("run" | "run-script") if argv.len() > 2 => 3,
        Some(_) if crate::policy::command::basename(&argv[0]) != "npm" => 2,
        _ => return None,
    };
    Some(argv[..script_end].to_vec())
}

/// Test runners whose invocation in a package's scripts is the package's whole suite.
const SCRIPT_RUNNERS: &[&str] = &["tape", "tap", "mocha", "_mocha", "ava", "jest", "vitest"];
/// How deep `npm run` references between scripts are followed.
const SCRIPT_DEPTH: usize = 5;

/// The package's whole suite: the test runner its `test` script invokes (followed through
/// `npm run` references and past wrappers such as `nyc`, `c8` or `cross-env`), run directly
/// with `npx` so lint, build and audit steps around it do not count; else `npm test`.
fn package_suite(root: &Path) -> Option<Vec<String>> {
    package_runner(root).or_else(|| npm_test(root))
}

/// The runner invocation the package's `test` script reaches, as `npx RUNNER ARGS`.
fn package_runner(root: &Path) -> Option<Vec<String>> {
    let scripts = package_scripts(root)?;
    runner_in_script(&scripts, "test", 0)
}

fn runner_in_script(
    scripts: &serde_json::Map<String, serde_json::Value>,
    name: &str,
    depth: usize,
) -> Option<Vec<String>> {
    if depth > SCRIPT_DEPTH {
        return None;
    }
    let script = scripts.get(name)?.as_str()?;
    // Shell operators separate commands; a pipe's later commands read output, they test nothing.
    let commands = script
        .split("&&")
        .flat_map(|part| part.split("||"))
        .flat_map(|part| part.split(';'))
        .map(|part| part.split('|').next().unwrap_or(part));
    for command in commands {
        let Some(words) = shlex::split(command) else {
            continue;
        };
        let program = words.first().map(|w| crate::policy::command::basename(w));
        let referenced = match (program, words.get(1).map(String::as_str)) {
            (Some("npm" | "pnpm" | "yarn" | "bun"), Some("run" | "run-script")) => words.get(2),
            (Some("npm" | "pnpm" | "yarn" | "bun"), Some("test" | "t")) => None,
            (Some("pnpm" | "yarn"), Some(other)) if scripts.contains_key(other) => words.get(1),
            _ => None,
        };
        if let Some(referenced) = referenced {
            if let Some(found) = runner_in_script(scripts, referenced, depth + 1) {
                return Some(found);
            }
            continue;
        }
        if let Some(at) = words
            .iter()
            .position(|w| SCRIPT_RUNNERS.contains(&crate::policy::command::basename(w)))
        {
            let runner = crate::policy::command::basename(&words[at]).to_owned();
            let mut out = vec!["npx".to_owned(), runner];
            out.extend(words[at + 1..].iter().cloned());
            return Some(out);
        }
    }
    None
}

/// `npm test` when the repository's `package.json` defines a test script.
fn npm_test(root: &Path) -> Option<Vec<String>> {
    let script = package_scripts(root)?.get("test")?.as_str()?.to_owned();
    (!script.contains("no test specified")).then(|| vec!["npm".to_owned(), "test".to_owned()])
}

fn package_scripts(root: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("scripts")?.as_object().cloned()
}

const JEST_SELECTORS: &[&str] = &[
    "-t",
    "--testNamePattern",
    "--testPathPattern",
    "--testPathPatterns",
    "--findRelatedTests",
];
const MOCHA_SELECTORS: &[&str] = &["-g", "--grep", "-f", "--fgrep", "--spec"];
const VITEST_SELECTORS: &[&str] = &["-t", "--testNamePattern"];

/// The command without positional arguments after `from` (test paths) and without the
/// `selectors` and their values (`-t v`, `-t=v`); options in `value_options` keep their
/// values, and a mode word right after the program (`vitest run`) stays. Returns the whole
/// suite and, when something was selected, the reproduction without its selectors (paths
/// kept) as the narrow one.
fn without(
    argv: &[String],
    from: usize,
    value_options: &[&str],
    selectors: &[&str],
) -> (Vec<String>, Option<Vec<String>>) {
    const MODES: &[&str] = &["run"];
    let mut whole: Vec<String> = argv[..from.min(argv.len())].to_vec();
    let mut narrow = whole.clone();
    let mut selected = false;
    let mut i = from;
    while i < argv.len() {
        let arg = &argv[i];
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        if selectors.contains(&name) {
            selected = true;
            i += if name == arg { 2 } else { 1 };
            continue;
        }
        if value_options.contains(&arg.as_str()) {
            whole.push(arg.clone());
            whole.extend(argv.get(i + 1).cloned());
            narrow.push(arg.clone());
            narrow.extend(argv.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if arg.starts_with('-') || (i == from && MODES.contains(&arg.as_str())) {
            whole.push(arg.clone());
        } else {
            selected = true;
        }
        narrow.push(arg.clone());
        i += 1;
    }
    (whole, selected.then_some(narrow))
}

/// The command without the given options and their values (`-f v` and `-f=v`).
fn drop_flag_values(argv: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        if flags.contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if flags.iter().any(|f| arg.starts_with(&format!("{f}="))) {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    out
}
