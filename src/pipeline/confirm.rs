//! Confirm what terse output cannot: when a run with the whole change does not name its
//! passing tests (plain `go test`, pytest `-q`, jest's and vitest's default reporters, mocha's
//! dot reporter, unittest without `-v`), run that command once more with the runner's per-test
//! flag and let the proof decide from that run. Both runs stay recorded; the rerun points at
//! the terse one (`confirms`).
//!
//! Without it a fixed test may stay "unconfirmed": `go test -run TestX .` prints
//! `ok example.com/m 0.01s` and no test name, and a real fix was refused with
//! `prevent.no-guard`.

use crate::evidence::{CommandRecord, Confirms, Phase};
use crate::patch::{self, FileChange};

use super::PipelineError;
use super::ctx::Ctx;

/// Rerun each of `ids` whose output did not name passing tests with the runner's per-test
/// flag, and put the rerun's id in its place. The whole change is in the working tree on entry
/// and on return. `false` when the run must stop.
pub(crate) fn terse_runs(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    ids: &mut [usize],
) -> Result<bool, PipelineError> {
    let mut ran = false;
    for slot in ids.iter_mut() {
        let Some(record) = ctx.evidence.command(*slot) else {
            continue;
        };
        if !needs_confirming(record) {
            continue;
        }
        let Some(verbose) = per_test_command(&record.command, &ctx.root) else {
            continue;
        };
        let (terse, purpose) = (record.id, record.purpose);
        let confirms = Confirms {
            id: terse,
            command: record.command.clone(),
        };
        ctx.reporter.info(&format!(
            "prove: `{}` did not name its passing tests; running `{verbose}`",
            confirms.command
        ));
        ran = true;
        let Some(id) = ctx.run_command(&verbose, Phase::Prove, purpose, Some(number))? else {
            ctx.restore()?;
            return Ok(false);
        };
        if let Some(rerun) = ctx.evidence.commands.get_mut(id) {
            rerun.confirms = Some(confirms);
        }
        *slot = id;
    }
    if ran {
        ctx.restore()?;
        patch::write_changes(&ctx.root, changes)?;
    }
    Ok(true)
}

/// A run whose tests ran and passed at least in part, whose output does not name passes.
fn needs_confirming(record: &CommandRecord) -> bool {
    let finished = record.outcome.as_ref().is_some_and(|o| !o.timed_out);
    finished
        && record
            .tests
            .as_ref()
            .is_some_and(|t| !t.lists_passed && t.passed > 0)
}

/// The command with the runner's per-test flag, or `None` for a runner efix cannot make name
/// its passing tests.
pub(crate) fn per_test_command(command: &str, cwd: &std::path::Path) -> Option<String> {
    let argv = crate::policy::command::split(command).ok()?;
    let verbose = per_test_argv(&argv, cwd)?;
    (verbose != argv)
        .then(|| shlex::try_join(verbose.iter().map(String::as_str)).ok())
        .flatten()
}

fn per_test_argv(argv: &[String], cwd: &std::path::Path) -> Option<Vec<String>> {
    if let Some(django) = crate::testreport::django::recognise_in(argv, cwd) {
        return django_per_test(argv, &django);
    }
    // The tool after a launcher (`npx jest`, `pnpm exec vitest`).
    let at = argv.iter().position(|a| {
        matches!(
            crate::policy::command::basename(a),
            "go" | "pytest"
                | "py.test"
                | "jest"
                | "vitest"
                | "mocha"
                | "_mocha"
                | "python"
                | "python3"
        )
    })?;
    let program = crate::policy::command::basename(&argv[at]);
    let sub = |i: usize| argv.get(at + i).map(String::as_str);
    let insert = |after: usize, flags: &[&str]| {
        let mut out = argv[..=at + after].to_vec();
        out.extend(flags.iter().map(|f| (*f).to_owned()));
        out.extend(argv[at + after + 1..].iter().cloned());
        out
    };
    let has = |flag: &str| argv.iter().any(|a| a == flag);
    Some(match program {
        "go" if sub(1) == Some("test") => {
            if has("-v") || has("-json") {
                return None;
            }
            insert(1, &["-v"])
        }
        "pytest" | "py.test" => insert(0, &["-rA"]),
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("pytest") => {
            insert(2, &["-rA"])
        }
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("unittest") => {
            // `discover` must stay first; `-v` goes after it.
            let after = if sub(3) == Some("discover") { 3 } else { 2 };
            insert(after, &["-v"])
        }
        "jest" => {
            let mut out: Vec<String> = argv
                .iter()
                .filter(|a| !a.starts_with("--verbose"))
                .cloned()
                .collect();
            out.push("--verbose".to_owned());
            out
        }
        "vitest" => without_reporter(argv, "verbose"),
        "mocha" | "_mocha" => without_reporter(argv, "spec"),
        _ => return None,
    })
}

/// A Django runner at verbosity 2, which names every test it runs; `None` when it is already.
fn django_per_test(
    argv: &[String],
    django: &crate::testreport::django::Django,
) -> Option<Vec<String>> {
    use crate::testreport::django::{options_and_labels, verbosity, without};
    let (options, labels) = options_and_labels(django, argv);
    if verbosity(&options) >= 2 {
        return None;
    }
    let mut out = argv[..django.first_arg].to_vec();
    out.extend(without(&options, &["-v", "--verbosity"]));
    out.extend(["-v", "2"].map(String::from));
    out.extend(labels);
    Some(out)
}

/// The command with its reporter options replaced by `reporter`.
fn without_reporter(argv: &[String], reporter: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "--reporter" || arg == "-R" {
            i += 2;
            continue;
        }
        if arg.starts_with("--reporter=") {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    out.extend(["--reporter".to_owned(), reporter.to_owned()]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runner_gets_its_per_test_flag() {
        let cases = [
            ("go test -run TestX .", Some("go test -v -run TestX .")),
            ("go test -v ./...", None),
            ("pytest -q tests/a.py", Some("pytest -rA -q tests/a.py")),
            ("python -m pytest -q", Some("python -m pytest -rA -q")),
            (
                "python -m unittest tests.test_a",
                Some("python -m unittest -v tests.test_a"),
            ),
            (
                "python3 -m unittest discover -s tests",
                Some("python3 -m unittest discover -v -s tests"),
            ),
            ("npx jest tests/", Some("npx jest tests/ --verbose")),
            (
                "npx vitest run --reporter dot",
                Some("npx vitest run --reporter verbose"),
            ),
            (
                "npx mocha -R dot test/",
                Some("npx mocha test/ --reporter spec"),
            ),
            ("cargo test", None),
            (
                "python tests/runtests.py --parallel 1 -v 1 a.b",
                Some("python tests/runtests.py --parallel 1 -v 2 a.b"),
            ),
            ("python manage.py test --verbosity=2", None),
            ("python repro.py a.b", None),
            // A project's own runner script under Django's name takes its own arguments.
            ("python other/runtests.py a.b", None),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (script, text) in [
            ("tests/runtests.py", "import django\n"),
            ("other/runtests.py", "import unittest\n"),
        ] {
            let path = dir.path().join(script);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for (command, expected) in cases {
            assert_eq!(
                per_test_command(command, dir.path()).as_deref(),
                expected,
                "{command}"
            );
        }
    }
}
