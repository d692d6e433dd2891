//! The short human summary `efix config check` prints for a resolved [`Config`].
//!
//! It shows what efix will do, never secret values: redaction is summarised as how many of the
//! listed variables are set, and the child environment as the names passed.

use std::fmt::Write as _;
use std::time::Duration;

use super::model::{Config, EngineKind};

fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{millis} ms")
    }
}

fn bytes(count: usize) -> String {
    if count >= 1024 && count.is_multiple_of(1024) {
        format!("{} KiB", count / 1024)
    } else {
        format!("{count} B")
    }
}

fn names(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_owned()
    } else {
        items.join(", ")
    }
}

/// The required tier, what commands may write besides the repository, and what is disabled.
fn sandbox(config: &Config) -> String {
    let sandbox = &config.runner.sandbox;
    let writable: Vec<String> = sandbox
        .writable
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut text = format!(
        "require {}; writes to the repository, a private TMPDIR and {}",
        sandbox.require,
        names(&writable, "nothing else")
    );
    if !sandbox.disabled.is_empty() {
        let disabled: Vec<&str> = sandbox.disabled.iter().map(|m| m.as_str()).collect();
        text.push_str(&format!("; disabled: {}", disabled.join(", ")));
    }
    text
}

/// A few lines describing the resolved configuration, ending with a newline.
pub fn check_summary(config: &Config) -> String {
    let mut out = String::new();
    let source = match &config.source {
        Some(path) => format!("{} (valid)", path.display()),
        None => "no config file; built-in defaults".to_owned(),
    };
    let engine = match config.engine {
        EngineKind::Openai => format!(
            "openai ({}), model {} at {}, {}, timeout {}, {} retries, fix format {}",
            config.openai.flavor.as_str(),
            config.openai.model,
            config.openai.base_url,
            if config.openai.api_key_env.is_empty() {
                "no key".to_owned()
            } else {
                format!("key from ${}", config.openai.api_key_env)
            },
            seconds(config.openai.timeout),
            config.openai.max_retries,
            config.fix_format.as_str()
        ),
        EngineKind::Acp => acp_summary(config),
        EngineKind::Replay => "replay (answers from the --replay file)".to_owned(),
    };
    let tests = format!(
        "{}; required suites: {}",
        if config.test.required {
            "regression test required"
        } else {
            "regression test optional"
        },
        if config.test.required_suites.is_empty() {
            format!(
                "none (the reproduction's whole suite is derived; narrowed when its run takes \
                 over {})",
                seconds(config.test.suite_budget)
            )
        } else {
            names(&config.test.required_suites, "none")
        }
    );
    let secrets_set = config.runner.secrets.len();
    let passed: Vec<String> = config
        .runner
        .env
        .iter()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    let patch = &config.patch;
    let overrides = &config.prompt_overrides;
    let mut prompts = match (&overrides.plan, &overrides.fix) {
        (None, None) => "built-in".to_owned(),
        (plan, fix) => format!(
            "plan {}, fix {}",
            plan.as_ref()
                .map_or("built-in".to_owned(), |p| p.display().to_string()),
            fix.as_ref()
                .map_or("built-in".to_owned(), |p| p.display().to_string())
        ),
    };
    if let Some(dir) = &overrides.dir {
        prompts.push_str(&format!(" (others from {} when present)", dir.display()));
    }
    let budget = &config.engine_budget;
    let limit = |value: Option<String>| value.unwrap_or_else(|| "no limit".to_owned());
    let lines = [
        ("config", source),
        ("engine", engine),
        (
            "commands",
            format!(
                "allow {}; timeout {}, kill grace {}; setup {}",
                names(&config.allow, "nothing"),
                seconds(config.command_timeout),
                seconds(config.runner.term_grace),
                if config.setup.is_empty() {
                    "none".to_owned()
                } else {
                    config
                        .setup
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        ),
        ("tests", tests),
        (
            "diff",
            format!(
                "at most {} files, {} changed lines",
                patch.max_files, patch.max_loc
            ),
        ),
        (
            "paths",
            format!(
                "protected {}; allowed {}; test-harness changes allowed in {}; deletion {}",
                names(&patch.protected, "nothing"),
                names(&patch.allow, "anywhere else"),
                names(&patch.allow_harness, "no file"),
                if patch.allow_delete {
                    "allowed"
                } else {
                    "refused"
                }
            ),
        ),
        (
            "budget",
            format!(
                "{} rounds, {} per run; engine calls {}, tokens {}, cost {}; prompts up to {}",
                config.max_rounds,
                seconds(config.run_timeout),
                limit(budget.max_calls.map(|n| n.to_string())),
                limit(budget.max_tokens.map(|n| n.to_string())),
                limit(budget.max_cost_usd.map(|usd| format!("${usd}"))),
                bytes(budget.max_input_bytes)
            ),
        ),
        (
            "network",
            (if config.network {
                "allowed"
            } else {
                "off for reproduction, fix and proof (loopback only); setup has it"
            })
            .to_owned(),
        ),
        ("sandbox", sandbox(config)),
        (
            "redact",
            format!(
                "{} ({secrets_set} of {} set); secrets in prompts: {}",
                names(&config.redact, "nothing"),
                config.redact.len(),
                config.secrets_in_prompt.as_str()
            ),
        ),
        (
            "env",
            format!(
                "passes {}{}",
                names(&passed, "nothing"),
                if config.env_dropped.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; dropped as credentials: {}",
                        config.env_dropped.join(", ")
                    )
                }
            ),
        ),
        (
            "output",
            format!(
                "keeps head {} and tail {} per stream",
                bytes(config.runner.output_head_bytes),
                bytes(config.runner.output_tail_bytes)
            ),
        ),
        ("prompts", prompts),
        (
            "trigger",
            format!(
                "/efix comments from {} with write permission",
                names(&config.trigger.allowed_associations, "nobody")
            ),
        ),
    ];
    for (label, text) in lines {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{label:<9}{text}");
    }
    out
}

/// The ACP engine as a run will start it: the program found on the agent's PATH, the
/// variables passed to it (their values redacted everywhere), and what it may write.
fn acp_summary(config: &Config) -> String {
    let command = config.acp_command.as_deref().unwrap_or_default();
    let argv = shlex::split(command).unwrap_or_default();
    let program =
        match crate::runner::resolve_program(&argv, &config.acp_env, std::path::Path::new(".")) {
            Ok(path) => format!("found at {}", path.display()),
            Err(message) => format!("NOT FOUND: {message}"),
        };
    let passed: Vec<String> = config
        .acp_env
        .iter()
        .filter(|(name, _)| !config.runner.env.iter().any(|(kept, _)| kept == name))
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    let writable: Vec<String> = config
        .acp_writable
        .iter()
        .map(|path| {
            format!(
                "{} ({})",
                path.display(),
                crate::runner::writable_state(path)
            )
        })
        .collect();
    format!(
        "acp ({} mode), agent `{command}` ({program}), timeout {}, passes {} (values redacted \
         from every output), the agent may also write {}",
        config.acp_mode.as_str(),
        seconds(config.acp_timeout),
        if passed.is_empty() {
            "nothing beyond the commands' environment".to_owned()
        } else {
            passed.join(", ")
        },
        if writable.is_empty() {
            "nothing else (acp.writable is empty)".to_owned()
        } else {
            writable.join(", ")
        }
    )
}
