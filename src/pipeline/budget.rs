//! The budget governor: before every engine call, whether `budget.max-engine-calls`,
//! `budget.max-tokens` or `budget.max-cost-usd` is already spent, counted from the calls the
//! evidence records (so a resumed run counts what it already paid for).
//!
//! Checking before each call means a budget is never exceeded by more than the one call in
//! flight: its cost is unknown until it returns. Prices come from `budget.prices`, looked up
//! by the model the server reports, then by the configured model.

use crate::config::{EngineBudget, Price};
use crate::engine::Usage;
use crate::evidence::EngineRecord;

/// Which budget is spent, and the sentence that says so.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spent {
    /// Rule id: `budget.max-engine-calls`, `budget.max-tokens` or `budget.max-cost-usd`.
    pub rule: &'static str,
    pub reason: String,
}

/// Whether another call may be made.
pub(crate) fn check(budget: &EngineBudget, record: &EngineRecord) -> Result<(), Spent> {
    let calls = record.calls_made();
    if let Some(max) = budget.max_calls
        && calls >= max as usize
    {
        return Err(Spent {
            rule: "budget.max-engine-calls",
            reason: format!(
                "the engine-call budget is spent: {calls} call{} made, budget.max-engine-calls \
                 is {max}",
                if calls == 1 { "" } else { "s" }
            ),
        });
    }
    let tokens = record.tokens().total();
    if let Some(max) = budget.max_tokens
        && tokens >= max
    {
        return Err(Spent {
            rule: "budget.max-tokens",
            reason: format!(
                "the token budget is spent: {tokens} tokens used, budget.max-tokens is {max}"
            ),
        });
    }
    let cost = record.cost_usd();
    if let Some(max) = budget.max_cost_usd
        && cost >= max
    {
        return Err(Spent {
            rule: "budget.max-cost-usd",
            reason: format!(
                "the cost budget is spent: ${cost:.4} used, budget.max-cost-usd is ${max}"
            ),
        });
    }
    Ok(())
}

/// What a call cost, when its model has a price.
pub(crate) fn cost(
    budget: &EngineBudget,
    configured_model: &str,
    reported_model: Option<&str>,
    usage: Option<Usage>,
) -> Option<f64> {
    let usage = usage?;
    let price: &Price = reported_model
        .and_then(|model| budget.prices.get(model))
        .or_else(|| budget.prices.get(configured_model))?;
    Some(
        usage.prompt_tokens as f64 * price.prompt / 1e6
            + usage.completion_tokens as f64 * price.completion / 1e6,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CallKind, EngineInfo};
    use crate::evidence::EngineCall;

    fn record(calls: &[(u64, u64, Option<f64>)]) -> EngineRecord {
        EngineRecord {
            info: EngineInfo {
                kind: "openai".to_owned(),
                model: "m".to_owned(),
            },
            calls: calls
                .iter()
                .map(|&(prompt, completion, cost)| EngineCall {
                    usage: Some(Usage {
                        prompt_tokens: prompt,
                        completion_tokens: completion,
                        cached_tokens: 0,
                    }),
                    cost_usd: cost,
                    ..EngineCall::new(CallKind::Fix, Some(1), 10)
                })
                .collect(),
        }
    }

    #[test]
    fn each_budget_stops_the_call_after_the_one_that_spent_it() {
        let budget = EngineBudget {
            max_calls: Some(2),
            ..EngineBudget::default()
        };
        assert_eq!(check(&budget, &record(&[(1, 1, None)])), Ok(()));
        let spent = check(&budget, &record(&[(1, 1, None), (1, 1, None)])).unwrap_err();
        assert_eq!(spent.rule, "budget.max-engine-calls");
        assert_eq!(
            spent.reason,
            "the engine-call budget is spent: 2 calls made, budget.max-engine-calls is 2"
        );

        let tokens = EngineBudget {
            max_tokens: Some(1000),
            ..EngineBudget::default()
        };
        assert_eq!(check(&tokens, &record(&[(600, 300, None)])), Ok(()));
        assert_eq!(
            check(&tokens, &record(&[(600, 300, None), (90, 20, None)]))
                .unwrap_err()
                .reason,
            "the token budget is spent: 1010 tokens used, budget.max-tokens is 1000"
        );

        let dollars = EngineBudget {
            max_cost_usd: Some(0.01),
            ..EngineBudget::default()
        };
        assert_eq!(
            check(&dollars, &record(&[(0, 0, Some(0.02))]))
                .unwrap_err()
                .rule,
            "budget.max-cost-usd"
        );
    }

    #[test]
    fn calls_answered_from_a_checkpoint_or_skipped_cost_nothing() {
        let budget = EngineBudget {
            max_calls: Some(1),
            ..EngineBudget::default()
        };
        let mut record = record(&[]);
        record.calls.push(EngineCall {
            reused: true,
            ..EngineCall::new(CallKind::Plan, None, 1)
        });
        record.calls.push(EngineCall {
            outcome: crate::engine::CallOutcome::SkippedSecrets,
            ..EngineCall::new(CallKind::Fix, Some(1), 1)
        });
        assert_eq!(check(&budget, &record), Ok(()));
    }

    #[test]
    fn prices_follow_the_reported_model_then_the_configured_one() {
        let budget = EngineBudget {
            prices: [(
                "gpt-x".to_owned(),
                Price {
                    prompt: 2.0,
                    completion: 8.0,
                },
            )]
            .into(),
            ..EngineBudget::default()
        };
        let usage = Some(Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            cached_tokens: 0,
        });
        assert_eq!(cost(&budget, "gpt-x", Some("gpt-x-2025"), usage), Some(6.0));
        assert_eq!(cost(&budget, "other", None, usage), None);
        assert_eq!(cost(&budget, "gpt-x", None, None), None);
    }
}
