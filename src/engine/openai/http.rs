//! One HTTP exchange with retries: HTTP 429, 408 and 5xx, reset connections and timeouts are
//! retried with exponential backoff and full jitter, waiting what `Retry-After` (seconds or an
//! HTTP date) or `x-ratelimit-reset-*` ask for when the server says; at most `max_retries`
//! times and never past the run's deadline. Every other answer goes back to the caller.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;

/// First backoff step (500 ms); the n-th retry waits up to `BASE * 2^n`.
const BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Longest backoff step (30 s).
const BACKOFF_CAP: Duration = Duration::from_secs(30);

/// What the server answered.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Why the exchange gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GaveUp {
    pub attempts: u32,
    pub message: String,
}

/// One request to send, with its limits.
pub(crate) struct Exchange<'a> {
    pub client: &'a reqwest::Client,
    pub url: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    pub timeout: Duration,
    pub max_retries: u32,
    pub deadline: Instant,
}

/// Send until an answer that is not transient, or give up. Returns the answer and the
/// number of retries made.
pub(crate) async fn send(exchange: &Exchange<'_>) -> Result<(Answer, u32), GaveUp> {
    let mut retries = 0u32;
    loop {
        let remaining = exchange.deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(GaveUp {
                attempts: retries,
                message: "the run's time budget ran out".to_owned(),
            });
        }
        let attempt = exchange
            .client
            .post(exchange.url)
            .headers(exchange.headers.clone())
            .body(exchange.body.to_vec())
            .timeout(exchange.timeout.min(remaining))
            .send()
            .await;
        let (problem, wait) = match attempt {
            Ok(response) => {
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                match response.bytes().await {
                    Ok(body) if !transient(status) => {
                        return Ok((
                            Answer {
                                status,
                                body: body.to_vec(),
                            },
                            retries,
                        ));
                    }
                    Ok(_) => (
                        format!("HTTP {status}"),
                        server_wait(&headers, SystemTime::now()),
                    ),
                    Err(err) => (
                        format!("reading the answer failed: {}", describe(&err)),
                        None,
                    ),
                }
            }
            Err(err) => (describe(&err), None),
        };
        if retries >= exchange.max_retries {
            return Err(GaveUp {
                attempts: retries + 1,
                message: format!("{problem} (openai.max-retries is {})", exchange.max_retries),
            });
        }
        let wait = wait.unwrap_or_else(|| backoff(retries));
        if Instant::now() + wait >= exchange.deadline {
            return Err(GaveUp {
                attempts: retries + 1,
                message: format!(
                    "{problem}; the next try (in {} ms) would end after the run's time budget",
                    wait.as_millis()
                ),
            });
        }
        tracing::info!(retry = retries + 1, wait_ms = wait.as_millis() as u64, %problem, "retrying the engine request");
        tokio::time::sleep(wait).await;
        retries += 1;
    }
}

/// Whether a status is worth another try.
fn transient(status: u16) -> bool {
    status == 429 || status == 408 || (500..600).contains(&status)
}

/// A transport error in a few words (never the URL's query, which may carry a key).
fn describe(err: &reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "the request timed out (openai.timeout-ms)"
    } else if err.is_connect() {
        "the connection failed"
    } else if err.is_body() || err.is_decode() {
        "the answer was cut off"
    } else {
        "the request failed"
    };
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(err);
    let mut deepest = None;
    while let Some(inner) = source {
        deepest = Some(inner.to_string());
        source = inner.source();
    }
    match deepest {
        Some(cause) => format!("{kind}: {cause}"),
        None => kind.to_owned(),
    }
}

/// Full jitter: a random wait between zero and `BASE * 2^retries`, at most the cap.
fn backoff(retries: u32) -> Duration {
    let ceiling = BACKOFF_BASE
        .saturating_mul(2u32.saturating_pow(retries))
        .min(BACKOFF_CAP);
    let millis = ceiling.as_millis() as u64;
    if millis == 0 {
        return Duration::ZERO;
    }
    Duration::from_millis(random() % (millis + 1))
}

/// A random number. `RandomState` is seeded from the operating system's randomness for
/// each instance, which is all backoff jitter needs; it saves a dependency.
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    hasher.finish()
}

/// The wait the server asks for: `Retry-After` (seconds or an HTTP date), else the longest
/// of `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (`1s`, `6m0s`, `20ms`).
pub(crate) fn server_wait(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(value) = headers.get("retry-after").and_then(|v| v.to_str().ok()) {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<f64>()
            && seconds.is_finite()
            && seconds >= 0.0
        {
            return Some(Duration::from_secs_f64(seconds));
        }
        if let Ok(at) = httpdate::parse_http_date(value) {
            return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .iter()
        .filter_map(|name| headers.get(*name)?.to_str().ok())
        .filter_map(go_duration)
        .max()
}

/// A duration written like Go's `time.Duration` (`1h2m3.5s`, `250ms`), as OpenAI's
/// rate-limit headers are.
fn go_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    (total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(
            server_wait(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(
            server_wait(&headers(&[("retry-after", &later)]), now),
            Some(Duration::from_secs(7))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(
            server_wait(&headers(&[("retry-after", &earlier)]), now),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn rate_limit_resets_take_the_longest() {
        let now = SystemTime::now();
        assert_eq!(
            server_wait(
                &headers(&[
                    ("x-ratelimit-reset-requests", "1s"),
                    ("x-ratelimit-reset-tokens", "6m0.5s")
                ]),
                now
            ),
            Some(Duration::from_millis(360_500))
        );
        assert_eq!(go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(go_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(go_duration("soon"), None);
        assert_eq!(server_wait(&headers(&[]), now), None);
    }

    #[test]
    fn backoff_grows_within_its_ceiling() {
        for retries in 0..12 {
            let ceiling = BACKOFF_BASE
                .saturating_mul(2u32.saturating_pow(retries))
                .min(BACKOFF_CAP);
            assert!(backoff(retries) <= ceiling);
        }
        assert!(transient(429) && transient(503) && transient(408));
        assert!(!transient(400) && !transient(401) && !transient(404));
    }
}
