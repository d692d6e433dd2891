//! The root form of a known runner's suite: the same runner on the test directory that holds
//! the reproduction's tests (`pytest tests/`, `jest test/`, `go test ./pkg/...`,
//! `python -m unittest discover -s tests -t .`), with only the options the runner needs to find
//! and load them (its config file, root directory, plugins, build tags).
//!
//! Every other option of the reproduction is left out: output options change nothing a suite
//! needs, and an option the runner does not own may be read by the tests themselves (a jest
//! suite parsing `process.argv` aborts on the reproduction's `--coverage=false`). This is the
//! form tried when the whole suite does not establish a baseline.

use std::path::Path;

use super::options::{
    JEST_VALUE_OPTIONS, MOCHA_VALUE_OPTIONS, PYTEST_VALUE_OPTIONS, VITEST_VALUE_OPTIONS,
};

/// How one runner's argv reads: where its arguments start, which options take a value, which
/// of them (and which flags) it needs to find the tests, and how it is given a directory.
struct Runner {
    first_arg: usize,
    value_options: &'static [&'static str],
    needed: &'static [&'static str],
    /// A word right after the program that stays (`vitest run`).
    mode: Option<&'static str>,
    directory: fn(&str) -> Vec<String>,
}

const PYTEST_NEEDED: &[&str] = &[
    "-c",
    "--config-file",
    "--rootdir",
    "-p",
    "-o",
    "--override-ini",
    "--import-mode",
    "--confcutdir",
];
const JEST_NEEDED: &[&str] = &[
    "-c",
    "--config",
    "--rootDir",
    "--roots",
    "--selectProjects",
    "--testEnvironment",
];
const VITEST_NEEDED: &[&str] = &[
    "-c",
    "--config",
    "-r",
    "--root",
    "--dir",
    "--project",
    "--environment",
    "--pool",
];
const MOCHA_NEEDED: &[&str] = &[
    "--config",
    "-r",
    "--require",
    "-u",
    "--ui",
    "--extension",
    "--file",
];
/// Name patterns whose value is not a path (`-k expr`, `-t name`).
const PATTERNS_WITH_VALUE: &[&str] = &[
    "-k",
    "--keyword",
    "-t",
    "--testNamePattern",
    "-g",
    "--grep",
    "-f",
    "--fgrep",
    "--testPathPattern",
];
const GO_VALUE_OPTIONS: &[&str] = &["-tags", "-timeout", "-count", "-p", "-parallel", "-run"];
const GO_NEEDED: &[&str] = &["-tags"];

fn plain(dir: &str) -> Vec<String> {
    vec![format!("{dir}/")]
}

fn mocha_dir(dir: &str) -> Vec<String> {
    vec!["--recursive".to_owned(), format!("{dir}/")]
}

fn go_dir(dir: &str) -> Vec<String> {
    vec![format!("./{dir}/...")]
}

/// The root form of the tool's argv (launcher not included), or `None` when the runner has
/// none or the reproduction names no test inside a directory of `root`.
pub(super) fn form(program: &str, tool: &[String], root: &Path) -> Option<Vec<String>> {
    let sub = |at: usize| tool.get(at).map(String::as_str);
    if matches!(program, "python" | "python3") && sub(1) == Some("-m") && sub(2) == Some("unittest")
    {
        return unittest(tool, root);
    }
    let runner = runner(program, tool)?;
    let (mut out, directory) = needed(&runner, tool, root);
    out.extend((runner.directory)(&directory?));
    Some(out)
}

/// The same runner as the tool's argv, with only the options it needs, on `targets` (test
/// files, or go packages): the related form. `None` for a runner with no root form here.
pub(super) fn on_targets(
    program: &str,
    tool: &[String],
    targets: &[String],
) -> Option<Vec<String>> {
    let runner = runner(program, tool)?;
    let (mut out, _) = needed(&runner, tool, Path::new(""));
    out.extend(targets.iter().cloned());
    Some(out)
}

fn runner(program: &str, tool: &[String]) -> Option<Runner> {
    let sub = |at: usize| tool.get(at).map(String::as_str);
    let runner = match program {
        "pytest" | "py.test" => pytest(1),
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("pytest") => pytest(3),
        "jest" => Runner {
            first_arg: 1,
            value_options: JEST_VALUE_OPTIONS,
            needed: JEST_NEEDED,
            mode: None,
            directory: plain,
        },
        "vitest" => Runner {
            first_arg: 1,
            value_options: VITEST_VALUE_OPTIONS,
            needed: VITEST_NEEDED,
            mode: Some("run"),
            directory: plain,
        },
        "mocha" | "_mocha" => Runner {
            first_arg: 1,
            value_options: MOCHA_VALUE_OPTIONS,
            needed: MOCHA_NEEDED,
            mode: None,
            directory: mocha_dir,
        },
        "go" if sub(1) == Some("test") => Runner {
            first_arg: 2,
            value_options: GO_VALUE_OPTIONS,
            needed: GO_NEEDED,
            mode: None,
            directory: go_dir,
        },
        _ => return None,
    };
    Some(runner)
}

fn pytest(first_arg: usize) -> Runner {
    Runner {
        first_arg,
        value_options: PYTEST_VALUE_OPTIONS,
        needed: PYTEST_NEEDED,
        mode: None,
        directory: plain,
    }
}

/// The tool's argv up to its arguments with only the options the runner needs, and the test
/// directory of the first path it names under `root`.
fn needed(runner: &Runner, tool: &[String], root: &Path) -> (Vec<String>, Option<String>) {
    let mut out: Vec<String> = tool[..runner.first_arg.min(tool.len())].to_vec();
    let mut at = runner.first_arg;
    if let Some(mode) = runner.mode
        && tool.get(at).map(String::as_str) == Some(mode)
    {
        out.push(mode.to_owned());
        at += 1;
    }
    let mut directory = None;
    while at < tool.len() {
        let arg = &tool[at];
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        let needed = runner.needed.contains(&name);
        let valued = runner.value_options.contains(&arg.as_str())
            || PATTERNS_WITH_VALUE.contains(&arg.as_str());
        if valued || (needed && name == arg) {
            if needed {
                out.push(arg.clone());
                out.extend(tool.get(at + 1).cloned());
            }
            at += 2;
            continue;
        }
        if arg.starts_with('-') {
            if needed {
                out.push(arg.clone());
            }
            at += 1;
            continue;
        }
        if directory.is_none() {
            directory = test_directory(arg, root);
        }
        at += 1;
    }
    (out, directory)
}

/// The top directory of the repository that holds the test a path or node id names
/// (`tests/unit/test_a.py::T::t` → `tests`, `./pkg/sub` → `pkg`); `None` for a file at the
/// root or a name that is not a path of the repository.
fn test_directory(arg: &str, root: &Path) -> Option<String> {
    let path = arg.split_once("::").map_or(arg, |(path, _)| path);
    let path = path.trim_start_matches("./");
    let (top, rest) = path.split_once('/')?;
    let exists = root.join(path).exists() || !rest.is_empty() && root.join(top).is_dir();
    (exists && !top.is_empty() && top != ".." && root.join(top).is_dir()).then(|| top.to_owned())
}

/// `python -m unittest tests.test_a.T.t` (or a path) → discovery in the test's top directory,
/// with the repository as the top-level directory so the ids stay the same.
fn unittest(tool: &[String], root: &Path) -> Option<Vec<String>> {
    if tool.get(3).map(String::as_str) == Some("discover") {
        return None;
    }
    let id = tool.iter().skip(3).find(|a| !a.starts_with('-'))?;
    let top = if id.contains('/') || id.ends_with(".py") {
        test_directory(id, root)?
    } else {
        let first = id.split('.').next()?;
        root.join(first).is_dir().then(|| first.to_owned())?
    };
    let mut out = tool[..3].to_vec();
    out.extend(["discover", "-s", &top, "-t", "."].map(str::to_owned));
    Some(out)
}
