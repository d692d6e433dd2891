//! `efix init`: read a repository, derive its configuration and workflow, check them, write
//! them.
//!
//! `detect` reads the repository (runners, package managers, CI workflows), `commands` turns
//! each runner into a real test command and the suite forms Prove derives from it,
//! `config_file` and `workflow` render the two files, and `summary` says what was found and
//! why. [`plan`] does all of that without writing; [`write`] writes a plan. The configuration
//! is validated by the same code as `efix config check` before anything is written. `command`
//! is the CLI command: the prompts, printing (through `report`) and the exit code.

mod command;
mod commands;
mod config_file;
mod detect;
mod summary;
mod workflow;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::config::{self, Config, ConfigError, Env, Overrides};

pub use command::run;
pub use commands::RunnerCommands;
pub use detect::{CiWorkflow, Findings, Found, PackageManager, Runner, detect};
pub use summary::{dry_run, summary};
pub use workflow::ACTION_PLACEHOLDER;

/// Where the workflow is written, relative to the repository.
pub const WORKFLOW_PATH: &str = ".github/workflows/efix.yml";

/// The agent behind the ACP engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Gemini,
}

/// The engine the written configuration uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Openai,
    Acp(Agent),
}

/// What went wrong; each message reads after "failed to".
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The repository shows no runner efix knows; nothing is written. The user writes
    /// `.efix.yml` by hand (the message names what was looked for).
    #[error(
        "set up efix in {}: no test runner found. efix init looks for pytest (pytest.ini, \
         conftest.py, [tool.pytest.ini_options], pytest in the requirements), Django \
         (manage.py), unittest (test_*.py using unittest), jest, vitest, mocha, tape and node \
         --test (package.json's test scripts and dependencies), cargo (Cargo.toml) and go \
         (go.mod) at the repository root; nothing was written. Write .efix.yml by hand (efix \
         schema config) or run efix init at the root of the project",
        root.display()
    )]
    NoRunner { root: PathBuf },
    /// `--repo` is not a directory.
    #[error("set up efix in {}: not a directory", root.display())]
    NotADirectory { root: PathBuf },
    /// A file init would write exists and `--force` was not given; nothing is written.
    #[error(
        "write {}: it already exists (nothing was written; --force replaces it, --dry-run \
         shows what would be written)",
        paths.join(", ")
    )]
    Exists { paths: Vec<String> },
    /// `--action` is not `OWNER/REPO@<40-hex commit>`.
    #[error(
        "use --action `{value}`: give the efix action pinned by commit, as \
         OWNER/REPO@<40 hexadecimal digits>"
    )]
    Action { value: String },
    /// The configuration init derived does not pass `efix config check`: a bug in init; the
    /// file is not written.
    #[error("check the configuration efix init derived (nothing was written):\n{text}")]
    Invalid {
        text: String,
        #[source]
        source: Box<ConfigError>,
    },
    /// Writing a file failed; files written before it stay.
    #[error("write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What `efix init` asks for.
#[derive(Debug, Clone)]
pub struct InitOptions {
    pub root: PathBuf,
    pub engine: EngineChoice,
    /// The efix action pinned by commit (`OWNER/REPO@SHA`), when known.
    pub action: Option<String>,
}

/// One file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// Relative to the repository.
    pub path: &'static str,
    pub text: String,
    /// Whether a file is there already.
    pub exists: bool,
}

/// Everything `efix init` would write and say.
#[derive(Debug, Clone)]
pub struct Plan {
    pub findings: Findings,
    pub commands: Vec<RunnerCommands>,
    pub engine: EngineChoice,
    pub action: Option<String>,
    pub files: Vec<PlannedFile>,
    /// The resolved configuration, as `efix config check` resolves it.
    pub config: Config,
}

impl Plan {
    /// The secrets the workflow reads, by name.
    pub fn secrets(&self) -> Vec<&'static str> {
        match self.engine {
            EngineChoice::Openai => vec![config_file::OPENAI_KEY],
            EngineChoice::Acp(agent) => vec![agent.key()],
        }
    }

    /// The command to try first: the first runner's real test command.
    pub fn next_command(&self) -> Option<&str> {
        self.commands.first().map(|c| c.example.as_str())
    }
}

/// Read the repository and derive what to write; writes nothing.
pub fn plan(options: &InitOptions, env: &Env) -> Result<Plan, InitError> {
    if let Some(action) = &options.action {
        check_action(action)?;
    }
    let root = &options.root;
    if !root.is_dir() {
        return Err(InitError::NotADirectory { root: root.clone() });
    }
    let findings = detect(root);
    if findings.runners.is_empty() {
        return Err(InitError::NoRunner { root: root.clone() });
    }
    let commands = commands::commands(root, &findings);
    let config_text = config_file::render(&findings, &commands, options.engine);
    let config = validate(root, &config_text, env)?;
    let example = commands.first().map_or("", |c| c.example.as_str());
    let workflow_text = workflow::render(
        &findings,
        options.engine,
        options.action.as_deref(),
        example,
    );
    let files = [
        (config::DEFAULT_FILE_NAME, config_text),
        (WORKFLOW_PATH, workflow_text),
    ]
    .into_iter()
    .map(|(path, text)| PlannedFile {
        path,
        text,
        exists: std::fs::symlink_metadata(root.join(path)).is_ok(),
    })
    .collect();
    Ok(Plan {
        findings,
        commands,
        engine: options.engine,
        action: options.action.clone(),
        files,
        config,
    })
}

/// `OWNER/REPO@<40 hex>` (a path under the repository is allowed: `OWNER/REPO/sub@SHA`).
fn check_action(value: &str) -> Result<(), InitError> {
    let bad = || InitError::Action {
        value: value.to_owned(),
    };
    let (name, commit) = value.rsplit_once('@').ok_or_else(bad)?;
    let parts: Vec<&str> = name.split('/').collect();
    let name_ok = parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
    let commit_ok = commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit());
    if name_ok && commit_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Parse and resolve the text as `efix config check` does.
fn validate(root: &Path, text: &str, env: &Env) -> Result<Config, InitError> {
    let path = root.join(config::DEFAULT_FILE_NAME);
    let invalid = |source| InitError::Invalid {
        text: text.to_owned(),
        source: Box::new(source),
    };
    let file = config::parse(&path, text).map_err(invalid)?;
    let overrides = Overrides {
        repo: root.to_path_buf(),
        ..Overrides::default()
    };
    Config::resolve(Some((path, file)), &overrides, env).map_err(invalid)
}

/// Write the plan's files. Without `force`, nothing is written when any of them exists.
pub fn write(root: &Path, plan: &Plan, force: bool) -> Result<(), InitError> {
    let existing: Vec<String> = plan
        .files
        .iter()
        .filter(|f| f.exists)
        .map(|f| f.path.to_owned())
        .collect();
    if !force && !existing.is_empty() {
        return Err(InitError::Exists { paths: existing });
    }
    for file in &plan.files {
        let path = root.join(file.path);
        let failed = |source| InitError::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        // A symlink in its place is replaced, never written through.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            std::fs::remove_file(&path).map_err(failed)?;
        }
        std::fs::write(&path, &file.text).map_err(failed)?;
    }
    Ok(())
}
