//! The runners canaries support, recognised from the reproduction's argv, and the canary
//! commands built from it: the user's own program and options (interpreter, config file,
//! plugins), with the user's test selection replaced by the target and its canaries, and with
//! the options that would hide a record (quiet output, stop at the first failure, shuffled
//! order, a JSON or dot reporter) replaced by the runner's verbose per-test output.

/// A test runner whose tests efix can write canaries for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runner {
    Pytest,
    Unittest,
    /// Django's `manage.py test` and `runtests.py`: unittest with labels relative to the
    /// script's directory.
    Django,
    Jest,
    Vitest,
    Mocha,
    Tape,
    NodeTest,
    Cargo,
    Go,
}

/// The reproduction's argv read as a runner invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub runner: Runner,
    /// The program up to and including the runner (`python -m pytest`, `cargo test`,
    /// `npx jest`, `node --test`).
    prefix: Vec<String>,
    /// Everything after the prefix.
    rest: Vec<String>,
    /// `node test/x.js` running a tape file as a script: one file per invocation.
    script: bool,
    /// The directory dotted test ids are relative to (Django's label directory), relative to
    /// the repository root; empty for the root.
    pub base: String,
}

/// What a canary command selects: tests by id (pytest node ids, unittest dotted names,
/// libtest filters, go test names) and files (JavaScript runners select by file, and Go by
/// package directory).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    pub ids: Vec<String>,
    pub files: Vec<String>,
    /// Whole test names for the runners that filter by a name regex (jest, vitest, mocha).
    pub names: Vec<String>,
    /// `names` are the last titles of the names, after whatever suites hold them.
    pub name_endings: bool,
}

/// The program name without directories or a script extension: `node_modules/.bin/jest`,
/// `mocha.js`, `vitest.mjs` all name their runner.
fn program(arg: &str) -> &str {
    let base = arg.rsplit('/').next().unwrap_or(arg);
    [".js", ".mjs", ".cjs", ".exe"]
        .iter()
        .find_map(|ext| base.strip_suffix(ext))
        .unwrap_or(base)
}

/// Read a reproduction argv as a runner invocation; `None` when it names no runner efix can
/// point at canary files (`npm test`, `make test`, a shell script).
pub(crate) fn invocation(
    argv: &[String],
    format: Option<&str>,
    root: &std::path::Path,
) -> Option<Invocation> {
    let split = |at: usize, runner: Runner| Invocation {
        runner,
        prefix: argv[..=at].to_vec(),
        rest: argv[at + 1..].to_vec(),
        script: false,
        base: String::new(),
    };
    // A script named `runtests.py` may be anything: it is Django's when it printed unittest.
    if let Some(django) = crate::testreport::django::recognise_in(argv, root)
        && format == Some("unittest")
    {
        return Some(Invocation {
            runner: Runner::Django,
            prefix: argv[..django.first_arg].to_vec(),
            rest: argv[django.first_arg..].to_vec(),
            script: false,
            base: django.base,
        });
    }
    for (at, arg) in argv.iter().enumerate() {
        let next = argv.get(at + 1).map(String::as_str);
        let found = match (program(arg), next) {
            ("pytest" | "py.test", _) => Some(split(at, Runner::Pytest)),
            ("-m", Some("pytest")) => Some(split(at + 1, Runner::Pytest)),
            ("-m", Some("unittest")) => Some(split(at + 1, Runner::Unittest)),
            ("cargo", Some("test")) => Some(split(at + 1, Runner::Cargo)),
            ("go", Some("test")) => Some(split(at + 1, Runner::Go)),
            ("jest", _) => Some(split(at, Runner::Jest)),
            ("vitest", _) => Some(split(at, Runner::Vitest)),
            ("mocha" | "_mocha", _) => Some(split(at, Runner::Mocha)),
            ("tape", _) => Some(split(at, Runner::Tape)),
            ("node", _) if argv.iter().any(|a| a == "--test") => {
                let test = argv.iter().position(|a| a == "--test")?;
                Some(split(test, Runner::NodeTest))
            }
            ("node", Some(script))
                if format == Some("tap") && !script.starts_with('-') && at + 2 == argv.len() =>
            {
                Some(Invocation {
                    runner: Runner::Tape,
                    prefix: argv[..=at].to_vec(),
                    rest: Vec::new(),
                    script: true,
                    base: String::new(),
                })
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Options that take the next argument as their value, per runner (a value is never a test
/// selection).
fn valued(runner: Runner) -> &'static [&'static str] {
    match runner {
        Runner::Pytest => &[
            "-k",
            "-m",
            "-c",
            "-o",
            "-p",
            "-W",
            "-n",
            "--rootdir",
            "--basetemp",
            "--junitxml",
            "--junit-xml",
            "--confcutdir",
            "--tb",
            "--durations",
            "--import-mode",
            "--log-level",
            "--ignore",
            "--ignore-glob",
            "--maxfail",
            "--deselect",
            "--override-ini",
            "--config-file",
            "--capture",
            "--color",
            "--cov-report",
            "--dist",
        ],
        Runner::Unittest => &["-k"],
        Runner::Django => crate::testreport::django::VALUED,
        Runner::Cargo => &[
            "-p",
            "--package",
            "--bin",
            "--test",
            "--example",
            "--bench",
            "--features",
            "-F",
            "--target",
            "--target-dir",
            "--manifest-path",
            "-j",
            "--jobs",
            "--profile",
            "--color",
            "--config",
            "-Z",
            "--message-format",
            "--exclude",
            "--skip",
            "--test-threads",
            "--format",
            "--logfile",
        ],
        Runner::Go => &[
            "-run",
            "-count",
            "-timeout",
            "-p",
            "-parallel",
            "-tags",
            "-bench",
            "-benchtime",
            "-cpu",
            "-coverprofile",
            "-covermode",
            "-coverpkg",
            "-o",
            "-exec",
            "-skip",
            "-list",
            "-mod",
            "-ldflags",
            "-gcflags",
            "-vet",
            "-shuffle",
        ],
        Runner::Jest => &[
            "-c",
            "--config",
            "-t",
            "--testNamePattern",
            "--testPathPattern",
            "--testPathIgnorePatterns",
            "-w",
            "--maxWorkers",
            "--rootDir",
            "--roots",
            "--testTimeout",
            "--reporters",
            "--outputFile",
            "--coverageDirectory",
            "--env",
            "--testEnvironment",
            "--selectProjects",
            "--shard",
            "--seed",
        ],
        Runner::Vitest => &[
            "-c",
            "--config",
            "-t",
            "--testNamePattern",
            "--reporter",
            "--outputFile",
            "--root",
            "--dir",
            "--project",
            "--environment",
            "--pool",
            "--shard",
            "--mode",
            "--sequence.seed",
        ],
        Runner::Mocha => &[
            "-r",
            "--require",
            "-R",
            "--reporter",
            "-O",
            "--reporter-option",
            "-t",
            "--timeout",
            "-s",
            "--slow",
            "-u",
            "--ui",
            "--config",
            "--package",
            "--extension",
            "--file",
            "--ignore",
            "--spec",
            "-g",
            "--grep",
            "-f",
            "--fgrep",
            "-j",
            "--jobs",
            "--retries",
        ],
        Runner::Tape => &["-r", "--require", "-i", "--ignore"],
        Runner::NodeTest => &[
            "--test-name-pattern",
            "--test-reporter",
            "--test-reporter-destination",
            "--import",
            "--require",
            "-r",
            "--loader",
            "--experimental-loader",
            "--test-concurrency",
            "--test-timeout",
            "--test-skip-pattern",
        ],
    }
}

/// Options dropped from the user's command: they select tests, hide passing records, stop
/// early or shuffle.
fn dropped(runner: Runner) -> &'static [&'static str] {
    match runner {
        Runner::Pytest => &[
            "-k",
            "-q",
            "--quiet",
            "-x",
            "--exitfirst",
            "--maxfail",
            "--lf",
            "--last-failed",
            "--ff",
            "--failed-first",
            "--sw",
            "--stepwise",
            "--deselect",
            "-v",
            "-vv",
            "--verbose",
            "-rA",
            "--co",
            "--collect-only",
        ],
        Runner::Unittest => &["-k", "-f", "--failfast", "-q", "--quiet", "-v", "--verbose"],
        Runner::Django => DJANGO_DROPPED,
        Runner::Cargo => &[
            "-q",
            "--quiet",
            "--exact",
            "--skip",
            "--format",
            "--no-fail-fast",
        ],
        Runner::Go => &[
            "-run",
            "-count",
            "-skip",
            "-shuffle",
            "-failfast",
            "-v",
            "-list",
        ],
        Runner::Jest => &[
            "-t",
            "--testNamePattern",
            "--testPathPattern",
            "--bail",
            "-b",
            "-o",
            "--onlyChanged",
            "--findRelatedTests",
            "--listTests",
            "--silent",
            "--verbose",
            "--json",
            "--reporters",
        ],
        Runner::Vitest => &[
            "-t",
            "--testNamePattern",
            "--bail",
            "--reporter",
            "--changed",
            "--related",
            "--silent",
            "--shard",
            "--sequence.shuffle",
        ],
        Runner::Mocha => &[
            "-g",
            "--grep",
            "-f",
            "--fgrep",
            "-i",
            "--invert",
            "-b",
            "--bail",
            "-R",
            "--reporter",
            "-O",
            "--reporter-option",
            "-w",
            "--watch",
            "--spec",
            "--forbid-only",
            "--sort",
        ],
        Runner::Tape => &[],
        Runner::NodeTest => &[
            "--test-name-pattern",
            "--test-only",
            "--test-reporter",
            "--test-reporter-destination",
            "--test-skip-pattern",
            "--test-shard",
        ],
    }
}

/// Django options dropped: verbosity (the command asks for `-v 2`), selection, stopping early,
/// reordering and the debugger.
const DJANGO_DROPPED: &[&str] = &[
    "-v",
    "--verbosity",
    "-k",
    "--tag",
    "--failfast",
    "--shuffle",
    "-r",
    "--reverse",
    "--start-at",
    "--start-after",
    "--bisect",
    "--pair",
    "--pdb",
];

/// The user's options kept for a canary command: without positionals (the user's selection)
/// and without the dropped options and their values. Cargo's `--` is kept in place.
fn kept(runner: Runner, rest: &[String]) -> (Vec<String>, Vec<String>) {
    if runner == Runner::Django {
        // Django has options whose value is optional (`--parallel [N]`): its own reader.
        let django = crate::testreport::django::Django {
            first_arg: 0,
            base: String::new(),
        };
        let (options, _) = crate::testreport::django::options_and_labels(&django, rest);
        let options = crate::testreport::django::without(&options, dropped(runner));
        return (options, Vec::new());
    }
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut past_separator = false;
    let mut iter = rest.iter().peekable();
    while let Some(arg) = iter.next() {
        if arg == "--" && runner == Runner::Cargo {
            past_separator = true;
            continue;
        }
        let out = if past_separator {
            &mut after
        } else {
            &mut before
        };
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, _)) if arg.starts_with('-') => (flag, true),
            _ => (arg.as_str(), false),
        };
        let takes_value = !inline && valued(runner).contains(&flag);
        let drop = dropped(runner).contains(&flag)
            || (runner == Runner::Pytest
                && flag.starts_with("-v")
                && flag.trim_start_matches("-v").chars().all(|c| c == 'v'));
        if !arg.starts_with('-') {
            // A positional: the user's test selection (or vitest's `run` subcommand).
            if runner == Runner::Vitest && (arg == "run" || arg == "related") && out.is_empty() {
                out.push(arg.clone());
            }
            continue;
        }
        let value = if takes_value {
            iter.next().cloned()
        } else {
            None
        };
        if drop {
            continue;
        }
        out.push(arg.clone());
        out.extend(value);
    }
    (before, after)
}

impl Invocation {
    /// The argv of one canary command: the user's program and kept options, verbose
    /// per-test output, and `selection`.
    pub(crate) fn command(&self, selection: &Selection) -> Vec<String> {
        let mut argv = self.prefix.clone();
        if self.script {
            argv.extend(selection.files.iter().take(1).cloned());
            return argv;
        }
        let (before, after) = kept(self.runner, &self.rest);
        argv.extend(before);
        let ids = selection.ids.iter().cloned();
        let files = selection.files.iter().cloned();
        match self.runner {
            Runner::Pytest => {
                argv.extend(
                    ["-v", "-p", "no:cacheprovider", "-p", "no:randomly"].map(String::from),
                );
                argv.extend(ids);
            }
            Runner::Unittest => {
                argv.push("-v".to_owned());
                argv.extend(ids);
            }
            Runner::Django => {
                argv.extend(["-v", "2"].map(String::from));
                argv.extend(ids);
            }
            Runner::Cargo => {
                argv.push("--".to_owned());
                argv.extend(after);
                argv.extend(ids);
            }
            Runner::Go => {
                argv.extend(["-v", "-count=1"].map(String::from));
                let names: Vec<String> = selection.ids.iter().map(|i| regex::escape(i)).collect();
                argv.push(format!("-run=^({})$", names.join("|")));
                argv.extend(files.map(|dir| {
                    if dir.is_empty() {
                        ".".to_owned()
                    } else {
                        format!("./{dir}")
                    }
                }));
            }
            Runner::Jest => {
                argv.extend(["--verbose", "--runTestsByPath"].map(String::from));
                argv.extend(name_filter("-t", selection));
                argv.extend(files);
            }
            Runner::Vitest => {
                argv.push("--reporter=verbose".to_owned());
                argv.extend(name_filter("-t", selection));
                argv.extend(files);
            }
            Runner::Mocha => {
                argv.extend(["--reporter", "spec"].map(String::from));
                argv.extend(name_filter("--grep", selection));
                argv.extend(files);
            }
            Runner::NodeTest => {
                argv.push("--test-reporter=tap".to_owned());
                argv.extend(files);
            }
            Runner::Tape => argv.extend(files),
        }
        argv
    }

    /// Whether a command can select single tests, so that the output of a run is theirs
    /// alone (tape and `node --test` run whole files).
    pub(crate) fn selects_tests(&self) -> bool {
        !matches!(self.runner, Runner::Tape | Runner::NodeTest)
    }

    /// Whether one command can run several test files (a tape file run by `node` cannot).
    pub(crate) fn runs_several_files(&self) -> bool {
        !self.script
    }
}

/// `-t ^name$` (`^(a|b)$` for several) for the runners that filter by a regex over the
/// whole name; `(^| )(a|b)$` for names' last titles.
fn name_filter(flag: &str, selection: &Selection) -> Vec<String> {
    let names: Vec<String> = selection.names.iter().map(|n| regex::escape(n)).collect();
    let start = if selection.name_endings { "(^| )" } else { "^" };
    match names.as_slice() {
        [] => Vec::new(),
        [one] => vec![flag.to_owned(), format!("{start}{one}$")],
        several => vec![flag.to_owned(), format!("{start}({})$", several.join("|"))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose `tests/runtests.py` is Django's.
    fn root() -> &'static std::path::Path {
        static ROOT: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        ROOT.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("tests")).unwrap();
            std::fs::write(dir.path().join("tests/runtests.py"), "import django\n").unwrap();
            dir
        })
        .path()
    }

    fn test_invocation(argv: &[String], format: Option<&str>) -> Option<Invocation> {
        invocation(argv, format, root())
    }

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn command(repro: &str, format: Option<&str>, selection: Selection) -> String {
        test_invocation(&argv(repro), format)
            .map(|i| i.command(&selection).join(" "))
            .unwrap_or_default()
    }

    fn ids(ids: &[&str]) -> Selection {
        Selection {
            ids: ids.iter().map(|s| (*s).to_owned()).collect(),
            ..Selection::default()
        }
    }

    fn files(files: &[&str]) -> Selection {
        Selection {
            files: files.iter().map(|s| (*s).to_owned()).collect(),
            ..Selection::default()
        }
    }

    #[test]
    fn python_commands_keep_the_users_options_and_select_the_canaries() {
        assert_eq!(
            command(
                "python -m pytest -q -x -c ci.ini tests/test_a.py::test_b -k slow",
                None,
                ids(&["tests/test_a.py::test_b", "tests/test_a.py::test_k1"])
            ),
            "python -m pytest -c ci.ini -v -p no:cacheprovider -p no:randomly tests/test_a.py::test_b tests/test_a.py::test_k1"
        );
        assert_eq!(
            command(
                "python3 -m unittest -q tests.test_a",
                None,
                ids(&["tests.test_a.T.test_b"])
            ),
            "python3 -m unittest -v tests.test_a.T.test_b"
        );
    }

    #[test]
    fn django_commands_keep_the_settings_and_ask_for_verbosity_two() {
        assert_eq!(
            command(
                "python tests/runtests.py --settings=test_sqlite --parallel 4 -v 1 --failfast \
                 auth_tests.test_validators -k sim",
                Some("unittest"),
                ids(&["auth_tests.test_validators.T.test_a"])
            ),
            "python tests/runtests.py --settings=test_sqlite --parallel 4 -v 2 \
             auth_tests.test_validators.T.test_a"
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        let django = test_invocation(&argv("python site/manage.py test polls"), Some("unittest"));
        assert_eq!(
            django.map(|i| (i.runner, i.base)),
            Some((Runner::Django, "site".to_owned()))
        );
        // A `runtests.py` whose output is not unittest's is not Django's.
        assert_eq!(
            test_invocation(&argv("python runtests.py"), Some("pytest")),
            None
        );
    }

    #[test]
    fn cargo_and_go_commands_replace_the_filters() {
        assert_eq!(
            command(
                "cargo test -p parser -q crlf -- --exact --nocapture",
                None,
                ids(&["tests::crlf", "tests::k1"])
            ),
            "cargo test -p parser -- --nocapture tests::crlf tests::k1"
        );
        let selection = Selection {
            ids: vec!["TestA".into(), "TestK1".into()],
            files: vec!["pkg/words".into()],
            ..Selection::default()
        };
        assert_eq!(
            command("go test -run TestA ./...", None, selection),
            "go test -v -count=1 -run=^(TestA|TestK1)$ ./pkg/words"
        );
    }

    #[test]
    fn javascript_commands_run_the_canary_files_with_per_test_output() {
        assert_eq!(
            command(
                "npx jest -t crlf src/parse.test.js --config jest.config.js",
                None,
                files(&["src/parse.test.js", "src/k1.test.js"])
            ),
            "npx jest --config jest.config.js --verbose --runTestsByPath src/parse.test.js src/k1.test.js"
        );
        assert_eq!(
            command(
                "node node_modules/mocha/bin/mocha.js test/d.test.js",
                None,
                Selection {
                    files: vec!["test/d.test.js".into()],
                    names: vec!["d reads (s)".into()],
                    ..Selection::default()
                }
            ),
            "node node_modules/mocha/bin/mocha.js --reporter spec --grep ^d reads \\(s\\)$ test/d.test.js"
        );
        assert_eq!(
            command(
                "npx vitest run src/a.test.ts",
                None,
                files(&["src/a.test.ts"])
            ),
            "npx vitest run --reporter=verbose src/a.test.ts"
        );
        assert_eq!(
            command("node --test test/", None, files(&["test/a.test.mjs"])),
            "node --test --test-reporter=tap test/a.test.mjs"
        );
        assert_eq!(
            command(
                "node test/trim.js",
                Some("tap"),
                files(&["test/trim.js", "test/k.js"])
            ),
            "node test/trim.js"
        );
        assert_eq!(test_invocation(&argv("npm test"), None), None);
    }
}
