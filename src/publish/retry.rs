//! When to send a GitHub request again, and after how long: rate limits (primary and
//! secondary) and, for repeatable calls, server errors.
//!
//! GitHub's guidance, in order: honour `Retry-After`; when `x-ratelimit-remaining` is `0`,
//! wait until `x-ratelimit-reset` (epoch seconds); otherwise back off exponentially. The
//! back-off uses full jitter (a uniformly random wait between zero and the exponential cap),
//! so parallel jobs hitting the same limit do not retry in lockstep. A wait longer than
//! [`MAX_WAIT`] is not waited out: the job would sit idle, so the error says when to retry.
//!
//! This module decides; the client sleeps.

use std::time::Duration;

/// Retries after the first attempt.
pub(crate) const MAX_RETRIES: u32 = 5;
/// The first back-off cap; doubled on every retry.
pub(crate) const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The largest back-off cap.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(60);
/// The longest single wait efix sits through (a primary limit resets within the hour).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(300);
/// Added to a reset time, for clock skew between the runner and GitHub.
const RESET_SLACK: Duration = Duration::from_secs(1);

/// The rate-limit headers of an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RateHeaders {
    pub(crate) retry_after: Option<String>,
    pub(crate) remaining: Option<String>,
    pub(crate) reset: Option<String>,
}

/// What to do with an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Keep the answer (success, or an error that another try would not change).
    Keep,
    /// Send again after this long.
    Retry(Duration),
    /// A limit that will not lift soon enough (or retries spent); the text says when it does.
    GiveUp(String),
}

/// Whether this answer is a rate limit: 429, or 403 with no requests left or a secondary
/// limit message.
pub(crate) fn is_rate_limit(status: u16, headers: &RateHeaders, message: &str) -> bool {
    status == 429
        || (status == 403
            && (headers.remaining.as_deref().map(str::trim) == Some("0")
                || headers.retry_after.is_some()
                || message.to_ascii_lowercase().contains("rate limit")))
}

/// Decide about the answer to attempt number `attempt` (0 for the first send). `now` is the
/// current Unix time in seconds, `jitter` a uniform random number in `[0, 1)`.
pub(crate) fn decide(
    attempt: u32,
    status: u16,
    headers: &RateHeaders,
    message: &str,
    repeatable: bool,
    now: u64,
    jitter: f64,
) -> Decision {
    let rate_limited = is_rate_limit(status, headers, message);
    let server_error = matches!(status, 500 | 502 | 503 | 504) && repeatable;
    if !rate_limited && !server_error {
        return Decision::Keep;
    }
    if attempt >= MAX_RETRIES {
        return Decision::GiveUp(format!(
            "still {} after {MAX_RETRIES} retries",
            if rate_limited {
                "rate limited"
            } else {
                "failing"
            }
        ));
    }
    let number = |value: Option<&String>| value.and_then(|v| v.trim().parse::<u64>().ok());
    let retry_after = number(headers.retry_after.as_ref());
    let exhausted = rate_limited && headers.remaining.as_deref().map(str::trim) == Some("0");
    let reset = number(headers.reset.as_ref()).filter(|_| exhausted);
    let wait = match (retry_after, reset) {
        (Some(seconds), _) => Duration::from_secs(seconds),
        (None, Some(reset)) => Duration::from_secs(reset.saturating_sub(now)) + RESET_SLACK,
        (None, None) => backoff(attempt, jitter),
    };
    if wait > MAX_WAIT {
        return Decision::GiveUp(format!(
            "the rate limit lifts in {} s, longer than the {} s efix waits; run again later",
            wait.as_secs(),
            MAX_WAIT.as_secs()
        ));
    }
    Decision::Retry(wait)
}

/// Full jitter: uniform in `[0, min(cap, base * 2^attempt)]`.
fn backoff(attempt: u32, jitter: f64) -> Duration {
    let ceiling = BACKOFF_BASE
        .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX))
        .min(BACKOFF_CAP);
    ceiling.mul_f64(jitter.clamp(0.0, 1.0))
}

/// A uniform random number in `[0, 1)` from the standard library's per-process random hash
/// keys, enough to spread retries without a random-number crate.
pub(crate) fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(
        retry_after: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> RateHeaders {
        RateHeaders {
            retry_after: retry_after.map(str::to_owned),
            remaining: remaining.map(str::to_owned),
            reset: reset.map(str::to_owned),
        }
    }

    #[test]
    fn success_and_ordinary_errors_are_kept() {
        let none = RateHeaders::default();
        assert_eq!(decide(0, 201, &none, "", true, 0, 0.5), Decision::Keep);
        assert_eq!(
            decide(0, 404, &none, "Not Found", true, 0, 0.5),
            Decision::Keep
        );
        assert_eq!(
            decide(
                0,
                403,
                &none,
                "Resource not accessible by integration",
                true,
                0,
                0.5
            ),
            Decision::Keep
        );
        // A comment is not posted twice because GitHub had a bad moment.
        assert_eq!(decide(0, 502, &none, "", false, 0, 0.5), Decision::Keep);
    }

    #[test]
    fn retry_after_is_honoured_first() {
        let h = headers(Some("7"), Some("0"), Some("1000"));
        assert_eq!(
            decide(0, 429, &h, "", true, 100, 0.5),
            Decision::Retry(Duration::from_secs(7))
        );
    }

    #[test]
    fn an_exhausted_primary_limit_waits_until_the_reset() {
        let h = headers(None, Some("0"), Some("1030"));
        assert_eq!(
            decide(0, 403, &h, "API rate limit exceeded", true, 1000, 0.5),
            Decision::Retry(Duration::from_secs(31))
        );
        // A reset already past still waits the slack, not a negative time.
        assert_eq!(
            decide(0, 403, &h, "", true, 2000, 0.5),
            Decision::Retry(Duration::from_secs(1))
        );
    }

    #[test]
    fn a_secondary_limit_without_headers_backs_off_with_full_jitter() {
        let none = RateHeaders::default();
        let message = "You have exceeded a secondary rate limit";
        assert_eq!(
            decide(0, 403, &none, message, true, 0, 0.0),
            Decision::Retry(Duration::ZERO)
        );
        assert_eq!(
            decide(3, 403, &none, message, true, 0, 0.5),
            Decision::Retry(Duration::from_secs(4))
        );
        // The cap holds however many retries came before.
        assert_eq!(backoff(30, 0.999_999), BACKOFF_CAP.mul_f64(0.999_999));
        assert_eq!(
            decide(1, 503, &none, "", true, 0, 1.0),
            Decision::Retry(Duration::from_secs(2))
        );
    }

    #[test]
    fn waits_beyond_the_limit_and_spent_retries_give_up_with_a_reason() {
        let h = headers(None, Some("0"), Some("5000"));
        assert_eq!(
            decide(0, 403, &h, "", true, 1000, 0.5),
            Decision::GiveUp(
                "the rate limit lifts in 4001 s, longer than the 300 s efix waits; run again later"
                    .to_owned()
            )
        );
        assert_eq!(
            decide(MAX_RETRIES, 429, &RateHeaders::default(), "", true, 0, 0.5),
            Decision::GiveUp("still rate limited after 5 retries".to_owned())
        );
    }

    #[test]
    fn jitter_is_in_the_unit_interval() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
