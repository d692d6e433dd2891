//! `efix triage` as a command: read the inputs, group, check for open efix pull requests,
//! print the matrix and write the step outputs. Messages go through `report`.

use std::path::{Path, PathBuf};

use super::cause::Rule;
use super::error::TriageError;
use super::failure::{Failure, Runner};
use super::group::{Options, Triage, triage};
use super::render::{markdown, matrix_json};
use super::{junit, logs};
use crate::ExitStatus;
use crate::cli::{GroupByArg, RunnerArg, TriageArgs};
use crate::config::{self, Config, Env, Overrides};
use crate::git::Repo;
use crate::localize::{Repository, Targets, list_files};
use crate::publish::{self, GithubEnv, Runs};
use crate::report;

/// Directories given to `--junit` are searched this deep.
const MAX_DIR_DEPTH: usize = 8;
/// A root that is not a git work tree is listed up to this many files.
const MAX_LISTED_FILES: usize = 200_000;

/// Run `efix triage`.
pub fn run(args: TriageArgs, env: &Env) -> ExitStatus {
    let root = match args.root.clone() {
        Some(root) => root,
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    };
    let overrides = Overrides {
        repo: root.clone(),
        ..Overrides::default()
    };
    let config = match config::load(&root, args.config.as_deref())
        .map_err(|err| report::error(&err))
        .and_then(|file| Config::resolve(file, &overrides, env).map_err(|err| report::error(&err)))
    {
        Ok(config) => config,
        Err(()) => return ExitStatus::Usage,
    };
    let options = Options {
        root: absolute(&root).to_string_lossy().into_owned(),
        program: args.runner_command.clone(),
        go_module: go_module(&root),
        max_jobs: usize::try_from(args.max_jobs).unwrap_or(usize::MAX),
        allow: config.allow.clone(),
        group_by: args.group_by.map(rule_of),
    };
    let repository = Repository::new(absolute(&root), repository_files);
    let targets = Targets::new(&repository);
    let runner = args.runner.map(runner_of);
    let github = GithubEnv::from_env(env);
    let token = publish::event::token(env, &args.token_env).ok();
    let mut connection = None;
    if args.run_id.is_some() || (token.is_some() && !args.no_open_check) {
        let Some(token) = token.clone() else {
            report::error(&TriageError::Github(publish::PublishError::NoToken {
                name: args.token_env.clone(),
            }));
            return ExitStatus::Usage;
        };
        match Runs::connect(&github, token, &config.runner.secrets) {
            Ok(runs) => connection = Some(runs),
            Err(err) if args.run_id.is_some() => {
                report::error(&TriageError::Github(err));
                return ExitStatus::Usage;
            }
            // Without GITHUB_REPOSITORY there is nothing to check: not an error outside CI.
            Err(err) => tracing::debug!(%err, "no open pull request check"),
        }
    }
    let run = args.run_id.zip(connection.as_mut());
    let read = |found: &mut dyn FnMut(Failure)| -> Result<(), TriageError> {
        for path in junit_files(&args.junit)? {
            let xml = read_text(&path)?;
            junit::read_junit(&path, &xml, runner, found)?;
        }
        for path in &args.log {
            let text = read_text(path)?;
            logs::read_log(path, &text, runner, found)?;
        }
        if let Some((run_id, runs)) = run {
            run_logs(runs, run_id, runner, found)?;
        }
        Ok(())
    };
    let mut triage = match triage(&options, Some(&targets), read) {
        Ok(triage) => triage,
        Err(err) => {
            report::error(&err);
            return ExitStatus::Usage;
        }
    };
    if repository.listed() == Some(0) {
        report::message(&format!(
            "efix triage: {} holds no files to localize in; failures without a frame outside \
             the test are grouped by message and file",
            root.display()
        ));
    }
    if let Some(runs) = connection.as_mut().filter(|_| !args.no_open_check) {
        match runs.open_efix_branches() {
            Ok(branches) => triage.skip_open(
                &|command| {
                    branches
                        .iter()
                        .find(|branch| publish::branch_is_for(branch, command))
                        .cloned()
                },
                options.max_jobs,
            ),
            // Publishing updates an open pull request of the same branch, so a check that
            // cannot be made costs a duplicate run, not a duplicate pull request.
            Err(err) => report::message(&format!(
                "efix: warning: could not look for open efix pull requests ({err}); every \
                 cause is in the matrix"
            )),
        }
    }
    finish(&triage, &args, env)
}

/// Print and write what a triage found; the exit status says whether there is work.
fn finish(triage: &Triage, args: &TriageArgs, env: &Env) -> ExitStatus {
    let matrix = matrix_json(triage);
    report::stdout(&matrix);
    let table = markdown(triage);
    let summary = args
        .summary
        .clone()
        .or_else(|| env_path(env, "GITHUB_STEP_SUMMARY"));
    if let Some(file) = summary
        && let Err(err) = append(&file, &table)
    {
        report::message(&format!(
            "efix: warning: failed to write the summary to {}: {err}",
            file.display()
        ));
    }
    let outputs = args
        .github_output
        .clone()
        .or_else(|| env_path(env, "GITHUB_OUTPUT"));
    if let Some(file) = outputs
        && let Err(err) = report::github_output(
            &file,
            &[
                ("matrix", matrix.clone()),
                ("jobs", triage.groups.len().to_string()),
                ("failures", triage.failures.to_string()),
                ("left-out", triage.left_out.len().to_string()),
            ],
        )
    {
        report::message(&format!(
            "efix: warning: failed to write the step outputs to {}: {err}",
            file.display()
        ));
    }
    report::message(&format!(
        "efix triage: {} failing tests, {} matrix jobs, {} left out, {} refused, {} with an \
         open pull request",
        triage.failures,
        triage.groups.len(),
        triage.left_out.len(),
        triage.refused.len(),
        triage.open.len()
    ));
    for skipped in &triage.left_out {
        report::message(&format!(
            "efix triage: left out ({}): `{}` for {}",
            skipped.reason, skipped.group.command, skipped.group.cause
        ));
    }
    for skipped in &triage.refused {
        report::message(&format!(
            "efix triage: refused `{}`: {}",
            skipped.group.command, skipped.reason
        ));
    }
    if triage.failures == 0 {
        return ExitStatus::NotReproduced;
    }
    if triage.groups.is_empty() && triage.open.is_empty() && triage.left_out.is_empty() {
        return ExitStatus::PolicyRefused;
    }
    ExitStatus::Success
}

/// The failing tests in the logs of a workflow run's failed jobs.
fn run_logs(
    runs: &mut Runs,
    run_id: u64,
    runner: Option<Runner>,
    found: &mut dyn FnMut(Failure),
) -> Result<(), TriageError> {
    let mut first_error = None;
    runs.failed_job_logs(run_id, &mut |job| {
        let path = PathBuf::from(format!("run {run_id} job {} ({})", job.id, job.name));
        match logs::read_log(&path, &job.log, runner, found) {
            Ok(_) => {}
            // A failed job that ran no tests (a lint or build job) has nothing to triage.
            Err(TriageError::UnknownLog { .. }) => {
                tracing::info!(job = %job.name, "no test output in the failed job's log");
            }
            Err(err) => {
                first_error.get_or_insert(err);
            }
        }
    })?;
    match first_error {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

fn runner_of(arg: RunnerArg) -> Runner {
    match arg {
        RunnerArg::Pytest => Runner::Pytest,
        RunnerArg::Jest => Runner::Jest,
        RunnerArg::Vitest => Runner::Vitest,
        RunnerArg::Cargo => Runner::Cargo,
        RunnerArg::Go => Runner::Go,
        RunnerArg::Node => Runner::Node,
    }
}

fn rule_of(arg: GroupByArg) -> Rule {
    match arg {
        GroupByArg::Frame => Rule::Frame,
        GroupByArg::Target => Rule::Target,
        GroupByArg::Message => Rule::Message,
        GroupByArg::File => Rule::File,
    }
}

/// The files of the checkout at `root`, listed once for every failure: the tracked files
/// under it when it is in a git work tree, else the files below it; none when it is not a
/// directory (the checkout is not here: causes cannot be localized).
fn repository_files(root: &Path) -> Vec<String> {
    if !root.is_dir() {
        return Vec::new();
    }
    let tracked = Repo::open(root).ok().and_then(|repo| {
        let inside = root
            .strip_prefix(&repo.root)
            .ok()?
            .to_string_lossy()
            .into_owned();
        let prefix = if inside.is_empty() {
            String::new()
        } else {
            format!("{inside}/")
        };
        let files: Vec<String> = repo
            .tracked_files()
            .ok()?
            .into_iter()
            .filter_map(|path| path.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        (!files.is_empty()).then_some(files)
    });
    tracked.unwrap_or_else(|| list_files(root, MAX_LISTED_FILES))
}

fn env_path(env: &Env, name: &str) -> Option<PathBuf> {
    env.get(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The `module` line of `go.mod` at the root.
fn go_module(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("go.mod")).ok()?;
    text.lines()
        .find_map(|line| line.trim().strip_prefix("module "))
        .map(|module| module.trim().trim_matches('"').to_owned())
}

fn read_text(path: &Path) -> Result<String, TriageError> {
    let bytes = std::fs::read(path).map_err(|err| TriageError::Read {
        path: path.to_owned(),
        message: err.to_string(),
    })?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    })
}

/// The files given to `--junit`: files as given, directories searched for `*.xml`, sorted.
fn junit_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TriageError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|err| TriageError::Read {
            path: path.clone(),
            message: err.to_string(),
        })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(path, 0, &mut found)?;
            if found.is_empty() {
                return Err(TriageError::Read {
                    path: path.clone(),
                    message: "the directory holds no .xml file; pass the directory the \
                              runner wrote its JUnit report to"
                        .to_owned(),
                });
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), TriageError> {
    if depth > MAX_DIR_DEPTH {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|err| TriageError::Read {
        path: dir.to_owned(),
        message: err.to_string(),
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, depth + 1, out)?;
        } else if path.extension().is_some_and(|ext| ext == "xml") {
            out.push(path);
        }
    }
    Ok(())
}

fn append(file: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    out.write_all(text.as_bytes())
}
