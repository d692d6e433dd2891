//! Resolution of the engine keys that need more than a default: the engine budget (a cost
//! limit needs the model's price) and the ACP agent's environment (only the variables
//! `acp.env-pass` names, never GitHub's channels). Their defaults live in `resolve` with every
//! other default.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::error::{ConfigError, Origin};
use super::file::BudgetFile;
use super::model::{EngineBudget, Env, Price};
use crate::runner::child_env;

fn invalid(key: &str, origin: &Origin, problem: String) -> ConfigError {
    ConfigError::OutOfRange {
        key: key.to_owned(),
        origin: origin.clone(),
        problem,
    }
}

/// The engine budget of the `budget` section; `max_input_bytes` is resolved by the caller.
/// `model` is the model a cost limit needs the price of (none for an engine that reports its
/// cost itself, an ACP agent).
pub(super) fn budget(
    budget: &BudgetFile,
    model: Option<&str>,
    max_input_bytes: usize,
    origin: &Origin,
) -> Result<EngineBudget, ConfigError> {
    let prices: BTreeMap<String, Price> = budget
        .prices
        .iter()
        .flatten()
        .map(|(name, price)| {
            (
                name.clone(),
                Price {
                    prompt: price.prompt_usd_per_mtok.0,
                    completion: price.completion_usd_per_mtok.0,
                },
            )
        })
        .collect();
    // A cost limit without the model's price could never be enforced.
    if let Some(limit) = budget.max_cost_usd
        && let Some(model) = model
        && !prices.contains_key(model)
    {
        return Err(invalid(
            "budget.max-cost-usd",
            origin,
            format!(
                "{} needs the price of model {model:?}; add it under `budget.prices` \
                 (`{model}: {{prompt-usd-per-mtok: N, completion-usd-per-mtok: N}}`)",
                limit.0
            ),
        ));
    }
    Ok(EngineBudget {
        max_calls: budget.max_engine_calls.map(|c| c.0),
        max_tokens: budget.max_tokens.map(|t| t.0),
        max_cost_usd: budget.max_cost_usd.map(|usd| usd.0),
        prices,
        max_input_bytes,
    })
}

/// `acp.env-pass` may name the agent's own credentials, but never GitHub's token or the
/// runner's channels.
pub(super) fn check_agent_env(names: &[String], origin: &Origin) -> Result<(), ConfigError> {
    for (index, name) in names.iter().enumerate() {
        if crate::runner::is_github_channel(name) {
            return Err(invalid(
                &format!("acp.env-pass[{index}]"),
                origin,
                format!(
                    "{name} is never passed to an agent: it carries the repository's token or \
                     the runner's own channels; list only the agent's own credentials"
                ),
            ));
        }
    }
    Ok(())
}

/// Values shorter than this (8 bytes) are not redacted when passed with `acp.env-pass`: a
/// flag such as `1` or `true` would blank out every occurrence of it in the evidence.
pub(super) const MIN_PASSED_SECRET_BYTES: usize = 8;

/// The values `acp.env-pass` hands the agent, as secrets to redact.
pub(super) fn passed_secrets(pass: &[String], env: &Env) -> Vec<crate::runner::Secret> {
    pass.iter()
        .filter_map(|name| {
            let value = env.get(name)?.to_str()?;
            (value.len() >= MIN_PASSED_SECRET_BYTES).then(|| crate::runner::Secret {
                name: name.clone(),
                value: value.to_owned(),
            })
        })
        .collect()
}

/// The agent's environment: what every command gets, plus the variables `acp.env-pass` names
/// (the agent's own credentials, which the command list would drop), when set.
pub(super) fn agent_env(env: &Env, pass: &[String]) -> Vec<(OsString, OsString)> {
    let (mut vars, _) = child_env(env.vars().iter().cloned(), &[]);
    for name in pass {
        match env.get(name) {
            Some(value) => {
                vars.retain(|(existing, _)| existing != name.as_str());
                vars.push((name.into(), value.to_owned()));
            }
            None => tracing::warn!(%name, "acp.env-pass names a variable that is not set"),
        }
    }
    vars.sort();
    vars
}
