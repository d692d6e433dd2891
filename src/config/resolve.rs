//! Resolution: the file layer, the environment and the command line become one [`Config`],
//! with every default in this file and every value validated once.
//!
//! Precedence is CLI > environment > file > default. The environment overrides are:
//!
//! | variable                  | key                  | value                          |
//! |---------------------------|----------------------|--------------------------------|
//! | `EFIX_ENGINE`             | `engine`             | `openai`, `acp` or `replay`    |
//! | `EFIX_OPENAI_MODEL`       | `openai.model`       | model name                     |
//! | `EFIX_OPENAI_BASE_URL`    | `openai.base-url`    | `http://` or `https://` URL    |
//! | `EFIX_MAX_ROUNDS`         | `budget.max-rounds`  | whole number                   |
//! | `EFIX_COMMAND_TIMEOUT_MS` | `commands.timeout-ms`| milliseconds                   |
//!
//! An empty variable counts as unset, because CI systems often pass `VAR: ${{ inputs.x }}`
//! with an empty input. `--suite` on the command line REPLACES `test.required-suites` when
//! given at all; it is not appended.
//!
//! Lists in the file (`commands.allow`, `security.redact`, `paths.protected`, ...) replace the
//! default list rather than extending it, so what the file says is exactly what holds; only
//! `sandbox.env-pass` extends, because the runner's built-in pass-through list is not
//! configuration but what commands need to work. One exception: the variable named by
//! `openai.api-key-env` is always added to the redacted names.

use std::path::PathBuf;
use std::time::Duration;

use super::engine;
use super::error::{ConfigError, Origin};
use super::file::{FileConfig, FixFile, RequiredTier};
pub use super::layers::{AUTHOR_ASSOCIATIONS, MAX_OUTPUT_BYTES};
use super::layers::{
    Layers, check_associations, check_bytes, check_command, check_count, check_duration,
    check_env_name, check_env_names, check_globs, check_programs, check_text, check_url,
    default_writable, join_prompt, list, millis, out_of_range, owned, secrets, writable_path,
};
use super::model::{
    AcpMode, Candidates, Config, EngineKind, Env, FixFormat, OpenaiConfig, OpenaiFlavor, Overrides,
    PromptOverrides, SecretsInPrompt, TestConfig, TriggerConfig,
};
use crate::patch::PatchPolicy;
use crate::runner::{Mechanism, RunnerSettings, SandboxSettings, Tier, child_env};

/// Default engine.
pub const DEFAULT_ENGINE: EngineKind = EngineKind::Openai;
/// Default OpenAI model: cheap and good enough for small patches.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// Default name of the variable holding the API key.
pub const DEFAULT_OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Default OpenAI-compatible base URL.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default timeout of one API request.
pub const DEFAULT_OPENAI_TIMEOUT: Duration = Duration::from_millis(120_000);
/// Default retries of a failed API request.
pub const DEFAULT_OPENAI_MAX_RETRIES: u32 = 2;
/// Default OpenAI dialect.
pub const DEFAULT_OPENAI_FLAVOR: OpenaiFlavor = OpenaiFlavor::Openai;
/// Default Azure OpenAI `api-version`: the newest generally available one with structured
/// output.
pub const DEFAULT_OPENAI_API_VERSION: &str = "2024-10-21";
/// Default timeout of one ACP request; longer than HTTP because an agent turn runs tools.
pub const DEFAULT_ACP_TIMEOUT: Duration = Duration::from_millis(600_000);
/// ACP agents answer in text by default: nothing they ask to do is allowed.
pub const DEFAULT_ACP_MODE: AcpMode = AcpMode::Answer;
/// Prompts holding secrets are not sent by default.
pub const DEFAULT_SECRETS_IN_PROMPT: SecretsInPrompt = SecretsInPrompt::Deny;
/// The fix prompt asks for exact-text edits by default.
pub const DEFAULT_FIX_FORMAT: FixFormat = FixFormat::Edits;
/// Default cap on one prompt (200 KB): far above what localization sends, far below what
/// would cost real money by accident.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 200_000;
/// Smallest accepted `budget.max-input-bytes`: the prompts' fixed text must fit.
pub const MIN_INPUT_BYTES: u64 = 8 * 1024;
/// A regression test is required by default: an unproven fix is not a fix.
pub const DEFAULT_TEST_REQUIRED: bool = true;
/// `test.suite-budget-ms`: the derived whole suite's baseline may take 10 minutes.
pub const DEFAULT_SUITE_BUDGET: Duration = Duration::from_millis(600_000);
/// Default maximum number of changed files.
pub const DEFAULT_MAX_FILES: u32 = 8;
/// Default maximum number of changed lines.
pub const DEFAULT_MAX_LOC: u32 = 300;
/// Default allowlist: the original MVP's JavaScript and Python runners (`node npm npx pnpm yarn
/// pytest`) plus `cargo go python python3 make`, the toolchains efix's own examples and the
/// ecosystems it parses test output for use.
pub const DEFAULT_ALLOW: &[&str] = &[
    "node", "npm", "npx", "pnpm", "yarn", "pytest", "cargo", "go", "python", "python3", "make",
];
/// Default timeout of one command.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_millis(600_000);
/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_TERM_GRACE: Duration = crate::runner::DEFAULT_TERM_GRACE;
/// Reproduction, fix and proof commands run without network by default: a test suite needs
/// loopback at most, and a repository's code must not reach out next to a token that can
/// push. Dependencies are fetched by `commands.setup`, which has the network.
pub const DEFAULT_NETWORK: bool = false;
/// No sandbox tier is required by default: efix runs under whatever the machine gives and
/// records it.
pub const DEFAULT_REQUIRE: Tier = Tier::None;
/// Variables redacted by default.
pub const DEFAULT_REDACT: &[&str] = &["GITHUB_TOKEN", "OPENAI_API_KEY"];
/// Globs no patch may touch by default: CI definitions and efix's own config, so a patch
/// cannot widen what efix is allowed to do.
pub const DEFAULT_PROTECTED: &[&str] = &[".github/workflows/**", ".efix.yml"];
/// Globs of test-harness files a patch may change by default: none.
pub const DEFAULT_ALLOW_HARNESS: &[&str] = &[];
/// Patches may not delete files by default.
pub const DEFAULT_ALLOW_DELETE: bool = false;
/// Default maximum number of fix rounds.
pub const DEFAULT_MAX_ROUNDS: u32 = 3;
/// Default timeout of the whole run.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_millis(1_800_000);
/// Default bytes kept from the start of each output stream.
pub const DEFAULT_OUTPUT_HEAD_BYTES: u64 = 64 * 1024;
/// Default bytes kept from the end of each output stream (test summaries are at the end).
pub const DEFAULT_OUTPUT_TAIL_BYTES: u64 = 256 * 1024;

/// Whose `/efix` comments are considered by default: people GitHub already lists as the
/// repository's owner, organization members and collaborators (the permission check with the
/// API comes on top).
pub const DEFAULT_ALLOWED_ASSOCIATIONS: &[&str] = &["OWNER", "MEMBER", "COLLABORATOR"];

/// Longest accepted timeout (commands, requests, the run): a day.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// Longest accepted grace period between SIGTERM and SIGKILL.
pub const MAX_TERM_GRACE: Duration = Duration::from_secs(10 * 60);
/// Largest accepted `budget.max-rounds`.
pub const MAX_ROUNDS_LIMIT: u32 = 20;
/// Largest accepted `fix.candidates` (and `fix.jobs`).
pub const MAX_CANDIDATES_LIMIT: u32 = 16;
/// Largest accepted `openai.max-retries`.
pub const MAX_RETRIES_LIMIT: u32 = 10;
/// Largest accepted `diff.max-files`.
pub const MAX_FILES_LIMIT: u32 = 1_000;
/// Largest accepted `diff.max-loc`.
pub const MAX_LOC_LIMIT: u32 = 100_000;

/// Environment override names.
pub const ENV_ENGINE: &str = "EFIX_ENGINE";
/// Environment override of `openai.model`.
pub const ENV_OPENAI_MODEL: &str = "EFIX_OPENAI_MODEL";
/// Environment override of `openai.base-url`.
pub const ENV_OPENAI_BASE_URL: &str = "EFIX_OPENAI_BASE_URL";
/// Environment override of `budget.max-rounds`.
pub const ENV_MAX_ROUNDS: &str = "EFIX_MAX_ROUNDS";
/// Environment override of `commands.timeout-ms`.
pub const ENV_COMMAND_TIMEOUT_MS: &str = "EFIX_COMMAND_TIMEOUT_MS";
/// Sandbox mechanisms not to use, comma-separated (`landlock,seccomp,namespaces`): to see how
/// a run behaves on a machine without them. It can only weaken the sandbox, and the evidence
/// names each mechanism as disabled.
pub const ENV_SANDBOX_DISABLE: &str = "EFIX_SANDBOX_DISABLE";

impl Config {
    /// Resolve the file (if any), the command-line overrides and the environment snapshot into
    /// a complete, validated configuration.
    pub fn resolve(
        file: Option<(PathBuf, FileConfig)>,
        overrides: &Overrides,
        env: &Env,
    ) -> Result<Config, ConfigError> {
        let (source, file) = match file {
            Some((path, file)) => (Some(path), file),
            None => (None, FileConfig::default()),
        };
        let layers = Layers {
            file_origin: source.clone().map_or(Origin::Default, Origin::File),
            env,
        };
        let openai = file.openai.unwrap_or_default();
        let acp = file.acp.unwrap_or_default();
        let test = file.test.unwrap_or_default();
        let diff = file.diff.unwrap_or_default();
        let commands = file.commands.unwrap_or_default();
        let security = file.security.unwrap_or_default();
        let sandbox = file.sandbox.unwrap_or_default();
        let paths = file.paths.unwrap_or_default();
        let budget = file.budget.unwrap_or_default();
        let prompts = file.prompts.unwrap_or_default();
        let trigger = file.trigger.unwrap_or_default();

        let env_engine = match layers.env_text(ENV_ENGINE)? {
            Some((text, name)) => Some((
                text.trim()
                    .parse::<EngineKind>()
                    .map_err(|expected| ConfigError::EnvValue {
                        name,
                        value: text.clone(),
                        expected,
                    })?,
                name,
            )),
            None => None,
        };
        let engine_picked = layers.pick(
            overrides.engine.map(|e| (e, "--engine")),
            env_engine,
            file.engine,
            DEFAULT_ENGINE,
        );
        let engine = engine_picked.value;

        let model = layers.pick(
            None,
            layers.env_text(ENV_OPENAI_MODEL)?,
            openai.model,
            DEFAULT_OPENAI_MODEL.to_owned(),
        );
        let api_key_env = layers.file(openai.api_key_env, DEFAULT_OPENAI_API_KEY_ENV.to_owned());
        let base_url = layers.pick(
            None,
            layers.env_text(ENV_OPENAI_BASE_URL)?,
            openai.base_url,
            DEFAULT_OPENAI_BASE_URL.to_owned(),
        );
        let openai_timeout = layers.file(millis(openai.timeout_ms), DEFAULT_OPENAI_TIMEOUT);
        let max_retries = layers.file(openai.max_retries.map(|c| c.0), DEFAULT_OPENAI_MAX_RETRIES);
        // An empty name means "send no key".
        if !api_key_env.value.is_empty() {
            check_env_name(
                "openai.api-key-env",
                &api_key_env.value,
                &api_key_env.origin,
            )?;
        }
        let api_version = layers.file(openai.api_version, DEFAULT_OPENAI_API_VERSION.to_owned());
        let openai = OpenaiConfig {
            model: check_text("openai.model", &model)?,
            api_key_env: api_key_env.value,
            base_url: check_url("openai.base-url", &base_url)?,
            timeout: check_duration(
                "openai.timeout-ms",
                &openai_timeout,
                Duration::from_millis(1),
                MAX_TIMEOUT,
            )?,
            max_retries: check_count(
                "openai.max-retries",
                &max_retries,
                0,
                MAX_RETRIES_LIMIT,
                "retries",
            )?,
            flavor: layers.file(openai.flavor, DEFAULT_OPENAI_FLAVOR).value,
            api_version: check_text("openai.api-version", &api_version)?,
        };

        let acp_command = layers.file(acp.command.map(Some), None);
        if let Some(command) = &acp_command.value {
            check_command("acp.command", command, &acp_command.origin)?;
        }
        if engine == EngineKind::Acp && acp_command.value.is_none() {
            return Err(out_of_range(
                "engine",
                &engine_picked.origin,
                "`acp` needs the agent's command line; set `acp.command` in the config file"
                    .to_owned(),
            ));
        }
        let acp_timeout = layers.file(millis(acp.timeout_ms), DEFAULT_ACP_TIMEOUT);
        let acp_timeout = check_duration(
            "acp.timeout-ms",
            &acp_timeout,
            Duration::from_millis(1),
            MAX_TIMEOUT,
        )?;
        let acp_env_pass = layers.file(list(acp.env_pass), Vec::new());
        let acp_env_pass = check_env_names("acp.env-pass", &acp_env_pass)?;
        engine::check_agent_env(&acp_env_pass, &layers.file_origin)?;
        let acp_mode = layers.file(acp.mode, DEFAULT_ACP_MODE).value;

        let suites_cli =
            (!overrides.suites.is_empty()).then(|| (overrides.suites.clone(), "--suite"));
        let suites = layers.pick(suites_cli, None, list(test.required_suites), Vec::new());
        for (index, suite) in suites.value.iter().enumerate() {
            check_command(
                &format!("test.required-suites[{index}]"),
                suite,
                &suites.origin,
            )?;
        }
        let suite_budget = layers.file(millis(test.suite_budget_ms), DEFAULT_SUITE_BUDGET);
        let suite_budget = check_duration(
            "test.suite-budget-ms",
            &suite_budget,
            Duration::from_millis(1),
            MAX_TIMEOUT,
        )?;
        let test = TestConfig {
            required: layers.file(test.required, DEFAULT_TEST_REQUIRED).value,
            required_suites: suites.value,
            suite_budget,
        };

        let allow = layers.file(list(commands.allow), owned(DEFAULT_ALLOW));
        let allow = check_programs("commands.allow", &allow)?;
        let command_timeout = layers.pick(
            overrides.command_timeout.map(|t| (t, "--timeout-seconds")),
            layers
                .env_number::<u64>(ENV_COMMAND_TIMEOUT_MS, "an integer number of milliseconds")?
                .map(|(ms, name)| (Duration::from_millis(ms), name)),
            millis(commands.timeout_ms),
            DEFAULT_COMMAND_TIMEOUT,
        );
        let command_timeout = check_duration(
            "commands.timeout-ms",
            &command_timeout,
            Duration::from_millis(1),
            MAX_TIMEOUT,
        )?;
        let term_grace = layers.file(millis(commands.term_grace_ms), DEFAULT_TERM_GRACE);
        let term_grace = check_duration(
            "commands.term-grace-ms",
            &term_grace,
            Duration::ZERO,
            MAX_TERM_GRACE,
        )?;

        let setup = layers.file(list(commands.setup), Vec::new());
        for (index, command) in setup.value.iter().enumerate() {
            check_command(&format!("commands.setup[{index}]"), command, &setup.origin)?;
        }
        let setup = setup.value;

        let network = layers.file(security.network, DEFAULT_NETWORK).value;
        let secrets_in_prompt = layers
            .file(security.secrets_in_prompt, DEFAULT_SECRETS_IN_PROMPT)
            .value;
        let redact = layers.file(list(security.redact), owned(DEFAULT_REDACT));
        let mut redact = check_env_names("security.redact", &redact)?;
        // The API key efix itself uses is always a secret, even when `security.redact` replaces
        // the default list without naming it.
        if !openai.api_key_env.is_empty() && !redact.contains(&openai.api_key_env) {
            redact.push(openai.api_key_env.clone());
        }

        let env_pass = layers.file(list(sandbox.env_pass), Vec::new());
        let env_pass = check_env_names("sandbox.env-pass", &env_pass)?;
        let head = layers.file(
            sandbox.output_head_bytes.map(|b| b.0),
            DEFAULT_OUTPUT_HEAD_BYTES,
        );
        let tail = layers.file(
            sandbox.output_tail_bytes.map(|b| b.0),
            DEFAULT_OUTPUT_TAIL_BYTES,
        );
        // The tail must keep something: test runners print their summary last.
        let output_head_bytes = check_bytes("sandbox.output-head-bytes", &head, 0)?;
        let output_tail_bytes = check_bytes("sandbox.output-tail-bytes", &tail, 1)?;

        let protected = layers.file(list(paths.protected), owned(DEFAULT_PROTECTED));
        let allow_paths = layers.file(list(paths.allow), Vec::new());
        let allow_harness = layers.file(list(paths.allow_harness), owned(DEFAULT_ALLOW_HARNESS));
        let max_files = layers.file(diff.max_files.map(|c| c.0), DEFAULT_MAX_FILES);
        let max_loc = layers.file(diff.max_loc.map(|c| c.0), DEFAULT_MAX_LOC);
        let patch = PatchPolicy {
            protected: check_globs("paths.protected", &protected)?,
            allow: check_globs("paths.allow", &allow_paths)?,
            allow_delete: layers.file(paths.allow_delete, DEFAULT_ALLOW_DELETE).value,
            max_files: check_count("diff.max-files", &max_files, 1, MAX_FILES_LIMIT, "files")?
                as usize,
            max_loc: check_count("diff.max-loc", &max_loc, 1, MAX_LOC_LIMIT, "lines")? as usize,
            allow_harness: check_globs("paths.allow-harness", &allow_harness)?,
            // The configured suites are commands efix runs; a run adds its reproduction.
            commands: test.required_suites.clone(),
            secrets: Vec::new(),
            // A run adds what its failing tests expect.
            expectations: Vec::new(),
        };

        let max_rounds = layers.pick(
            overrides.max_rounds.map(|n| (n, "--max-rounds")),
            layers.env_number::<u32>(ENV_MAX_ROUNDS, "a whole number of rounds")?,
            budget.max_rounds.map(|c| c.0),
            DEFAULT_MAX_ROUNDS,
        );
        let max_rounds = check_count(
            "budget.max-rounds",
            &max_rounds,
            1,
            MAX_ROUNDS_LIMIT,
            "rounds",
        )?;
        let candidates = resolve_candidates(&layers, overrides, &file.fix.unwrap_or_default())?;
        let run_timeout = layers.pick(
            overrides.run_timeout.map(|t| (t, "--timeout-seconds")),
            None,
            millis(budget.run_timeout_ms),
            DEFAULT_RUN_TIMEOUT,
        );
        let run_timeout = check_duration(
            "budget.run-timeout-ms",
            &run_timeout,
            Duration::from_millis(1),
            MAX_TIMEOUT,
        )?;

        let input = layers.file(budget.max_input_bytes.map(|b| b.0), DEFAULT_MAX_INPUT_BYTES);
        let max_input_bytes = check_bytes("budget.max-input-bytes", &input, MIN_INPUT_BYTES)?;
        // An ACP agent reports its own cost; only the OpenAI engine's model needs a price.
        let priced_model = (engine == EngineKind::Openai).then_some(openai.model.as_str());
        let engine_budget =
            engine::budget(&budget, priced_model, max_input_bytes, &layers.file_origin)?;
        let prompt_overrides = PromptOverrides {
            plan: join_prompt(
                &overrides.repo,
                prompts.plan,
                "prompts.plan",
                &layers.file_origin,
            )?,
            fix: join_prompt(
                &overrides.repo,
                prompts.fix,
                "prompts.fix",
                &layers.file_origin,
            )?,
            dir: join_prompt(
                &overrides.repo,
                prompts.dir,
                "prompts.dir",
                &layers.file_origin,
            )?,
        };
        let fix_format = layers.file(prompts.fix_format, DEFAULT_FIX_FORMAT).value;

        let associations = layers.file(
            list(trigger.allowed_associations),
            owned(DEFAULT_ALLOWED_ASSOCIATIONS),
        );
        let trigger = TriggerConfig {
            allowed_associations: check_associations(
                "trigger.allowed-associations",
                &associations,
            )?,
        };

        let (mut child_env, env_dropped) = child_env(env.vars().iter().cloned(), &env_pass);
        // The key efix's engine uses never reaches a command, whatever it is named.
        child_env.retain(|(name, _)| name.to_str() != Some(openai.api_key_env.as_str()));
        let mut acp_env = engine::agent_env(env, &acp_env_pass);
        if !acp_env_pass.contains(&openai.api_key_env) {
            acp_env.retain(|(name, _)| name.to_str() != Some(openai.api_key_env.as_str()));
        }
        let acp_writable = list(acp.writable)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(index, path)| {
                writable_path(
                    &format!("acp.writable[{index}]"),
                    path,
                    &layers.file_origin,
                    env,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let writable = match list(sandbox.writable) {
            Some(paths) => {
                let origin = layers.file_origin.clone();
                paths
                    .iter()
                    .enumerate()
                    .map(|(index, path)| {
                        writable_path(&format!("sandbox.writable[{index}]"), path, &origin, env)
                    })
                    .collect::<Result<Vec<_>, _>>()?
            }
            None => default_writable(env),
        };
        let require = match sandbox.require {
            None => DEFAULT_REQUIRE,
            Some(RequiredTier::None) => Tier::None,
            Some(RequiredTier::Process) => Tier::Process,
            Some(RequiredTier::Filesystem) => Tier::Filesystem,
            Some(RequiredTier::Full) => Tier::Full,
        };
        let disabled = match layers.env_text(ENV_SANDBOX_DISABLE)? {
            Some((text, name)) => text
                .split(',')
                .map(str::trim)
                .filter(|word| !word.is_empty())
                .map(|word| {
                    word.parse::<Mechanism>()
                        .map_err(|expected| ConfigError::EnvValue {
                            name,
                            value: text.clone(),
                            expected: format!("a comma-separated list of {expected}"),
                        })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let temp_base = env
            .get("TMPDIR")
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
            .unwrap_or_else(|| PathBuf::from("/tmp"));

        // What efix hands the agent is redacted like `security.redact`: an agent may print it.
        let mut secrets = secrets(&redact, env);
        for secret in engine::passed_secrets(&acp_env_pass, env) {
            if !secrets.iter().any(|known| known.value == secret.value) {
                secrets.push(secret);
            }
        }
        let patch = PatchPolicy {
            secrets: secrets.clone(),
            ..patch
        };
        let runner = RunnerSettings {
            env: child_env,
            output_head_bytes,
            output_tail_bytes,
            term_grace,
            secrets,
            sandbox: SandboxSettings {
                writable,
                require,
                disabled,
                ..SandboxSettings::new(temp_base)
            },
        };

        Ok(Config {
            source,
            engine,
            openai,
            acp_command: acp_command.value,
            acp_timeout,
            acp_env,
            acp_mode,
            acp_writable,
            test,
            allow,
            command_timeout,
            setup,
            network,
            redact,
            secrets_in_prompt,
            env_dropped,
            max_rounds,
            candidates,
            run_timeout,
            prompt_overrides,
            fix_format,
            engine_budget,
            trigger,
            patch,
            runner,
        })
    }
}

/// `fix:` with its command-line overrides; jobs default to the cores, at most the candidates.
fn resolve_candidates(
    layers: &Layers<'_>,
    overrides: &Overrides,
    fix: &FixFile,
) -> Result<Candidates, ConfigError> {
    let count = layers.pick(
        overrides.candidates.map(|n| (n, "--candidates")),
        None,
        fix.candidates.map(|c| c.0),
        1,
    );
    let count = check_count(
        "fix.candidates",
        &count,
        1,
        MAX_CANDIDATES_LIMIT,
        "candidates",
    )?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cores = u32::try_from(cores).unwrap_or(MAX_CANDIDATES_LIMIT);
    let jobs = layers.pick(
        overrides.jobs.map(|n| (n, "--jobs")),
        None,
        fix.jobs.map(|c| c.0),
        cores.min(count),
    );
    let jobs = check_count("fix.jobs", &jobs, 1, MAX_CANDIDATES_LIMIT, "jobs")?;
    Ok(Candidates {
        count,
        jobs: jobs.min(count),
        first_proven: overrides.first_proven || layers.file(fix.first_proven, false).value,
    })
}
