//! The options of the runners the suites are derived for that take a value as the next
//! argument (what follows them is not a path or a selector), shared by the whole-suite forms
//! (`known`) and the test-root forms (`root`).

/// pytest options that take a value as the next argument; what follows them is not a path.
pub(super) const PYTEST_VALUE_OPTIONS: &[&str] = &[
    "-m",
    "-p",
    "-c",
    "-o",
    "-W",
    "-n",
    "-r",
    "--rootdir",
    "--confcutdir",
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--maxfail",
    "--tb",
    "--junitxml",
    "--junit-xml",
    "--cov",
    "--cov-report",
    "--durations",
    "--basetemp",
    "--import-mode",
    "--log-level",
    "--capture",
    "--color",
    "--dist",
    "--timeout",
];

pub(super) const JEST_VALUE_OPTIONS: &[&str] = &[
    "-c",
    "--config",
    "-w",
    "--maxWorkers",
    "--reporters",
    "--testTimeout",
    "--selectProjects",
    "--shard",
    "--rootDir",
    "--roots",
    "--testEnvironment",
];

pub(super) const VITEST_VALUE_OPTIONS: &[&str] = &[
    "-c",
    "--config",
    "-r",
    "--root",
    "--dir",
    "--project",
    "--reporter",
    "--pool",
    "--environment",
    "--shard",
    "--testTimeout",
];

pub(super) const MOCHA_VALUE_OPTIONS: &[&str] = &[
    "--config",
    "-R",
    "--reporter",
    "-r",
    "--require",
    "-t",
    "--timeout",
    "-u",
    "--ui",
    "--extension",
    "--ignore",
    "--file",
    "-O",
    "--reporter-option",
];
