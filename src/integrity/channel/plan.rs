//! Which runner a command's argv starts, and the arguments that make it write its structured
//! report to a file efix chose. The user's command is never rewritten in place: the plan is a
//! new argv, and when the runner or the command rules a report out, the reason is recorded
//! and the console stays the only channel.

use std::path::Path;

/// The format of a structured report file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// JUnit XML (pytest `--junitxml`, `node --test --test-reporter=junit`).
    JunitXml,
    /// jest's `--json` result object; vitest's json reporter writes the same shape.
    JestJson,
    /// The result file of efix's mocha reporter ([`MOCHA_REPORTER`]).
    MochaJson,
}

/// The mocha reporter efix writes beside the report: the console reporter the command asked
/// for, plus every result recorded in the report file.
pub(crate) const MOCHA_REPORTER: &str = include_str!("mocha_reporter.js");

/// The file name of [`MOCHA_REPORTER`] in the report's directory.
pub(crate) const MOCHA_REPORTER_FILE: &str = "efix-mocha-reporter.js";

/// mocha's built-in reporters, which efix's reporter can print on the console.
const MOCHA_BUILTIN: &[&str] = &[
    "spec",
    "dot",
    "tap",
    "list",
    "min",
    "nyan",
    "landing",
    "progress",
    "json",
    "json-stream",
    "doc",
    "markdown",
    "xunit",
];

/// How a command is run so that its runner writes a report efix reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The runner recognised (`pytest`, `jest`, `vitest`, `node`).
    pub runner: &'static str,
    /// The argv to run: the user's with the report arguments added.
    pub argv: Vec<String>,
    /// The arguments efix added, in the order they appear in `argv`.
    pub added: Vec<String>,
    pub format: ReportFormat,
}

/// What efix can do for a command's argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Run `plan.argv` and read the report at the path it names.
    Report(Plan),
    /// A runner efix knows whose report cannot be asked for this command; why.
    ConsoleOnly {
        runner: &'static str,
        reason: String,
    },
    /// Not a runner efix adds a report to.
    Unknown,
}

/// Plan the report for `argv`, writing to `path` (a fresh file in a directory only efix and
/// this command's runner know).
pub(crate) fn plan(argv: &[String], path: &Path) -> Choice {
    let path = path.display().to_string();
    let Some(at) = runner_at(argv) else {
        return Choice::Unknown;
    };
    let args = argv.get(at.index + 1..).unwrap_or_default();
    match at.runner {
        "pytest" => pytest(argv, args, &path),
        "jest" => with_added(
            argv,
            "jest",
            vec!["--json".to_owned(), format!("--outputFile={path}")],
            ReportFormat::JestJson,
        ),
        "vitest" => vitest(argv, args, &path),
        "node" => node(argv, args, &path),
        "mocha" => mocha(argv, at.index, &path),
        _ => Choice::Unknown,
    }
}

/// Where the runner's name is in an argv, after the launchers that pass their arguments on.
struct RunnerAt {
    runner: &'static str,
    index: usize,
}

fn runner_at(argv: &[String]) -> Option<RunnerAt> {
    let mut index = 0;
    let base = |arg: &str| arg.rsplit('/').next().unwrap_or(arg).to_owned();
    let first = base(argv.first()?);
    if matches!(first.as_str(), "npx" | "pnpx" | "bunx") || first == "yarn" || first == "pnpm" {
        index = 1;
        // `pnpm exec jest`, `yarn jest`, `npx --no-install jest`.
        while let Some(arg) = argv.get(index) {
            if arg.starts_with('-') || arg == "exec" {
                index += 1;
            } else {
                break;
            }
        }
    } else if is_python(&first) {
        // `python -m pytest`: the module after `-m`, with no other interpreter option before.
        if argv.get(1).map(String::as_str) == Some("-m")
            && argv.get(2).is_some_and(|m| m == "pytest")
        {
            return Some(RunnerAt {
                runner: "pytest",
                index: 2,
            });
        }
        return None;
    } else if first == "node" {
        let options = argv.iter().skip(1).take_while(|arg| arg.starts_with('-'));
        if options.clone().any(|arg| arg == "--test") {
            return Some(RunnerAt {
                runner: "node",
                index: 0,
            });
        }
        // `node node_modules/jest/bin/jest.js`: a runner's own script, named after it.
        index = 1 + options.count();
    }
    let name = base(argv.get(index)?);
    let name = if first == "node" {
        name.trim_end_matches(".js")
            .trim_end_matches(".mjs")
            .trim_end_matches(".cjs")
            .to_owned()
    } else {
        name
    };
    let runner = match name.as_str() {
        "pytest" | "py.test" => "pytest",
        "jest" => "jest",
        "vitest" => "vitest",
        "mocha" | "_mocha" => "mocha",
        _ => return None,
    };
    Some(RunnerAt { runner, index })
}

fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The argv with `added` appended (the runner reads options anywhere in its argv).
fn with_added(
    argv: &[String],
    runner: &'static str,
    added: Vec<String>,
    format: ReportFormat,
) -> Choice {
    let mut out = argv.to_vec();
    if let Some(end) = argv.iter().position(|arg| arg == "--") {
        // After `--` the arguments are positional; ours go before it.
        out.splice(end..end, added.iter().cloned());
    } else {
        out.extend(added.iter().cloned());
    }
    Choice::Report(Plan {
        runner,
        argv: out,
        added,
        format,
    })
}

fn mocha(argv: &[String], at: usize, path: &str) -> Choice {
    // The command's own reporter moves behind efix's, which prints it on the console.
    let mut kept: Vec<String> = argv.get(..=at).unwrap_or_default().to_vec();
    let mut console: Option<String> = None;
    let mut rest = argv.get(at + 1..).unwrap_or_default().iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            kept.push(arg.clone());
            kept.extend(rest.by_ref().cloned());
            break;
        }
        if arg == "--reporter" || arg == "-R" {
            console = rest.next().cloned();
        } else if let Some(name) = arg.strip_prefix("--reporter=") {
            console = Some(name.to_owned());
        } else {
            kept.push(arg.clone());
        }
    }
    if let Some(name) = console
        .as_deref()
        .filter(|name| !MOCHA_BUILTIN.contains(name))
    {
        return Choice::ConsoleOnly {
            runner: "mocha",
            reason: format!(
                "the command's reporter `{name}` is not one of mocha's own, which efix's \
                 reporter can print beside its report"
            ),
        };
    }
    let reporter = Path::new(path).with_file_name(MOCHA_REPORTER_FILE);
    let mut added = vec![
        "--reporter".to_owned(),
        reporter.display().to_string(),
        "--reporter-option".to_owned(),
        format!("efixOutput={path}"),
    ];
    if let Some(name) = console {
        added.push("--reporter-option".to_owned());
        added.push(format!("efixConsole={name}"));
    }
    let end = kept
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(kept.len());
    kept.splice(end..end, added.iter().cloned());
    Choice::Report(Plan {
        runner: "mocha",
        argv: kept,
        added,
        format: ReportFormat::MochaJson,
    })
}

fn pytest(argv: &[String], args: &[String], path: &str) -> Choice {
    let disabled = args.iter().enumerate().any(|(i, arg)| {
        arg == "-pno:junitxml"
            || (arg == "-p" && args.get(i + 1).is_some_and(|next| next == "no:junitxml"))
    });
    if disabled {
        return Choice::ConsoleOnly {
            runner: "pytest",
            reason: "the command disables pytest's junitxml plugin (`-p no:junitxml`)".to_owned(),
        };
    }
    with_added(
        argv,
        "pytest",
        vec![format!("--junitxml={path}")],
        ReportFormat::JunitXml,
    )
}

fn vitest(argv: &[String], args: &[String], path: &str) -> Choice {
    let has_reporter = args
        .iter()
        .any(|arg| arg == "--reporter" || arg.starts_with("--reporter="));
    let mut added = vec![
        "--reporter=json".to_owned(),
        format!("--outputFile.json={path}"),
    ];
    if !has_reporter {
        // A reporter on the command line replaces the default one; keep a console.
        added.push("--reporter=default".to_owned());
    }
    with_added(argv, "vitest", added, ReportFormat::JestJson)
}

fn node(argv: &[String], args: &[String], path: &str) -> Choice {
    let options: Vec<&String> = args.iter().take_while(|arg| arg.starts_with('-')).collect();
    let count = |name: &str| {
        options
            .iter()
            .filter(|arg| **arg == name || arg.starts_with(&format!("{name}=")))
            .count()
    };
    let reporters = count("--test-reporter");
    let destinations = count("--test-reporter-destination");
    if reporters != destinations {
        return Choice::ConsoleOnly {
            runner: "node",
            reason: "the command names test reporters without a destination for each, so \
                     another reporter cannot be added"
                .to_owned(),
        };
    }
    let mut added = Vec::new();
    if reporters == 0 {
        // A reporter on the command line replaces the default one; keep the spec console.
        added.push("--test-reporter=spec".to_owned());
        added.push("--test-reporter-destination=stdout".to_owned());
    }
    added.push("--test-reporter=junit".to_owned());
    added.push(format!("--test-reporter-destination={path}"));
    // Node reads its options before the first file name; ours go right after `node`.
    let mut out = argv.to_vec();
    out.splice(1..1, added.iter().cloned());
    Choice::Report(Plan {
        runner: "node",
        argv: out,
        added,
        format: ReportFormat::JunitXml,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn planned(text: &str) -> String {
        match plan(&argv(text), Path::new("/r/report")) {
            Choice::Report(plan) => format!("{}: {}", plan.runner, plan.argv.join(" ")),
            Choice::ConsoleOnly { runner, .. } => format!("{runner}: console only"),
            Choice::Unknown => "unknown".to_owned(),
        }
    }

    #[test]
    fn each_runner_gets_its_report_flags_where_it_reads_them() {
        let cases = [
            (
                "pytest -q tests",
                "pytest: pytest -q tests --junitxml=/r/report",
            ),
            (
                "python3 -m pytest -x",
                "pytest: python3 -m pytest -x --junitxml=/r/report",
            ),
            ("pytest -p no:junitxml", "pytest: console only"),
            (
                "npx jest parse",
                "jest: npx jest parse --json --outputFile=/r/report",
            ),
            (
                "npx vitest run",
                "vitest: npx vitest run --reporter=json --outputFile.json=/r/report \
                 --reporter=default",
            ),
            (
                "vitest run --reporter=verbose",
                "vitest: vitest run --reporter=verbose --reporter=json \
                 --outputFile.json=/r/report",
            ),
            (
                "node --test test/",
                "node: node --test-reporter=spec --test-reporter-destination=stdout \
                 --test-reporter=junit --test-reporter-destination=/r/report --test test/",
            ),
            ("node --test --test-reporter=tap t.js", "node: console only"),
            ("node script.js --test", "unknown"),
            (
                "npx mocha",
                "mocha: npx mocha --reporter /r/efix-mocha-reporter.js --reporter-option \
                 efixOutput=/r/report",
            ),
            (
                "mocha -R dot test/",
                "mocha: mocha test/ --reporter /r/efix-mocha-reporter.js --reporter-option \
                 efixOutput=/r/report --reporter-option efixConsole=dot",
            ),
            ("mocha --reporter mochawesome", "mocha: console only"),
            (
                "node node_modules/jest/bin/jest.js t",
                "jest: node node_modules/jest/bin/jest.js t --json --outputFile=/r/report",
            ),
            (
                "node node_modules/vitest/vitest.mjs run",
                "vitest: node node_modules/vitest/vitest.mjs run --reporter=json \
                 --outputFile.json=/r/report --reporter=default",
            ),
            ("node index.js", "unknown"),
            ("cargo test", "unknown"),
            ("npm test", "unknown"),
            ("python3 -c pass", "unknown"),
        ];
        let got: Vec<(String, String)> = cases
            .iter()
            .map(|(command, _)| ((*command).to_owned(), planned(command)))
            .collect();
        let want: Vec<(String, String)> = cases
            .iter()
            .map(|(command, plan)| ((*command).to_owned(), (*plan).to_owned()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn report_flags_go_before_a_double_dash() {
        assert_eq!(
            planned("pytest -k crlf -- tests/x.py"),
            "pytest: pytest -k crlf --junitxml=/r/report -- tests/x.py"
        );
    }
}
