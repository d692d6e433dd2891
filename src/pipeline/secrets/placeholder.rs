//! Test data is not a leak: which matches of the place-based credential rules are obvious
//! placeholders (`https://user:pass@example.com`, `Authorization: Bearer test-token`,
//! `postgres://test:test@localhost/db`), so the prompt scan does not refuse to send a URL
//! library's tests to the engine.
//!
//! Only the rules that find a credential by where it sits (a URL's `user:password@`, the
//! `Authorization:` and `Cookie:` header values) are judged here. Provider-format tokens, the
//! values of the configured secrets and everything else stay secrets whatever they look like:
//! a token format is evidence enough. The judgement follows what secret scanners' allowlists
//! do (gitleaks' stopwords and its allowlisted hosts): a documentation or loopback host, a
//! value made only of stopwords and digits, a template, a value that repeats the user name, or
//! one with too little entropy to be a generated secret.

/// The rules whose matches may be placeholders.
const PLACE_BASED_RULES: &[&str] = &["url-credentials", "authorization-header", "cookie-header"];

/// Words that stand for a credential in examples, tests and documentation.
const STOPWORDS: &[&str] = &[
    "abc",
    "admin",
    "administrator",
    "anonymous",
    "apikey",
    "bar",
    "baz",
    "bearer",
    "changeit",
    "changeme",
    "credential",
    "credentials",
    "default",
    "demo",
    "dummy",
    "example",
    "fake",
    "foo",
    "foobar",
    "guest",
    "hunter",
    "invalid",
    "key",
    "letmein",
    "login",
    "me",
    "mock",
    "my",
    "mypass",
    "mypassword",
    "mysecret",
    "name",
    "none",
    "null",
    "pass",
    "passwd",
    "password",
    "placeholder",
    "pw",
    "pwd",
    "qux",
    "qwerty",
    "redacted",
    "root",
    "sample",
    "secret",
    "session",
    "sid",
    "test",
    "tester",
    "testing",
    "token",
    "user",
    "username",
    "value",
    "your",
    "yourpassword",
    "xxx",
];

/// Hosts reserved for documentation and tests (RFC 2606, RFC 6761), and loopback.
const EXAMPLE_DOMAINS: &[&str] = &["example.com", "example.net", "example.org", "example"];
const RESERVED_SUFFIXES: &[&str] = &[".test", ".invalid", ".localhost", ".example"];

/// Below this many bits of Shannon entropy per character a value is a word or a pattern,
/// not a generated secret (`aaaa`, `abab12`).
const LOW_ENTROPY_BITS: f64 = 2.5;

/// Whether `rule` finds a credential by where it sits, so that its matches may be test data.
pub(crate) fn is_place_based(rule: &str) -> bool {
    PLACE_BASED_RULES.contains(&rule)
}

/// Why a match is a placeholder, or `None` when it must be treated as a secret. `text` is the
/// whole scanned text and `range` the match the rule reported (for a URL, `user:password`).
pub(crate) fn placeholder(rule: &str, text: &str, range: std::ops::Range<usize>) -> Option<String> {
    if !PLACE_BASED_RULES.contains(&rule) {
        return None;
    }
    let matched = text.get(range.clone())?;
    if rule == "url-credentials" {
        let (user, password) = matched.split_once(':').unwrap_or(("", matched));
        let host = url_host(text.get(range.end..)?);
        if is_example_host(&host) {
            return Some(format!(
                "the host `{host}` is reserved for examples and tests"
            ));
        }
        if !user.is_empty() && user.eq_ignore_ascii_case(password) {
            return Some("the password repeats the user name".to_owned());
        }
        return placeholder_value(password);
    }
    placeholder_value(header_value(matched))
}

/// A header match ends with its value: the last space-separated word (`Bearer abc` → `abc`,
/// `Cookie: sid=abc` → `abc`).
fn header_value(matched: &str) -> &str {
    let last = matched
        .rsplit(|c: char| c.is_whitespace())
        .next()
        .unwrap_or(matched);
    let last = last.rsplit_once('=').map_or(last, |(_, value)| value);
    last.trim_matches(|c| c == '"' || c == '\'' || c == ';')
}

/// The host after a URL's `@`: up to the port, path, query, fragment or the end of the URL.
fn url_host(after: &str) -> String {
    let after = after.strip_prefix('@').unwrap_or(after);
    let end = after
        .find(|c: char| {
            matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`') || c.is_whitespace()
        })
        .unwrap_or(after.len());
    let host = &after[..end];
    // `[::1]:8080` keeps its brackets; `host:8080` loses its port.
    let host = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn is_example_host(host: &str) -> bool {
    host == "localhost"
        || host == "::1"
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || EXAMPLE_DOMAINS
            .iter()
            .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        || RESERVED_SUFFIXES.iter().any(|s| host.ends_with(s))
}

/// Why a credential value is a placeholder, or `None`.
pub(crate) fn placeholder_value(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() {
        return Some("the value is empty".to_owned());
    }
    if is_template(value) {
        return Some(format!("`{value}` is a template, not a value"));
    }
    if value
        .chars()
        .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '-' | '_' | '#'))
        || value.chars().all(|c| c.is_ascii_digit())
    {
        return Some(format!("`{value}` is a mask or a number"));
    }
    if is_made_of_stopwords(value) {
        return Some(format!("`{value}` is made of placeholder words"));
    }
    if entropy(value) < LOW_ENTROPY_BITS {
        return Some(format!(
            "`{value}` has too little entropy for a generated secret"
        ));
    }
    None
}

/// `${PASSWORD}`, `{{token}}`, `<password>`, `%s`, `$TOKEN`, `:password` placeholders.
fn is_template(value: &str) -> bool {
    value.contains("${")
        || value.contains("{{")
        || value.contains("%s")
        || value.contains("%(")
        || (value.starts_with('<') && value.ends_with('>'))
        || (value.starts_with('{') && value.ends_with('}'))
        || (value.starts_with('$')
            && value[1..]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// Whether the value splits (at punctuation and at letter/digit boundaries) into stopwords
/// and numbers only: `test-token`, `my_password123`, `Foo:Bar`.
fn is_made_of_stopwords(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut digits = false;
    for c in lower.chars() {
        if c.is_ascii_alphanumeric() && (word.is_empty() || c.is_ascii_digit() == digits) {
            digits = c.is_ascii_digit();
            word.push(c);
        } else {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if c.is_ascii_alphanumeric() {
                digits = c.is_ascii_digit();
                word.push(c);
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    !words.is_empty()
        && words.iter().any(|w| !w.chars().all(|c| c.is_ascii_digit()))
        && words
            .iter()
            .all(|w| w.chars().all(|c| c.is_ascii_digit()) || STOPWORDS.contains(&w.as_str()))
}

/// Shannon entropy in bits per character.
fn entropy(value: &str) -> f64 {
    let mut counts = std::collections::BTreeMap::new();
    for c in value.chars() {
        *counts.entry(c).or_insert(0u32) += 1;
    }
    let len = value.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = f64::from(n) / len;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placeholder verdict for a URL (`url-credentials` matches `user:password`).
    fn url(text: &str) -> Option<String> {
        let start = text.find("://").map(|i| i + 3).unwrap_or(0);
        let end = text.find('@').unwrap_or(text.len());
        placeholder("url-credentials", text, start..end)
    }

    #[test]
    fn url_credentials_in_test_data_are_placeholders() {
        for text in [
            "https://user:pass@example.com/path",
            "postgres://test:test@localhost/db",
            "http://foo:bar@host.internal/",
            "redis://:secret@cache:6379",
            "https://admin:${ADMIN_PASSWORD}@ci.internal",
            "https://u:pw@api.example.org",
            "amqp://guest:guest@rabbit:5672",
            "http://user:password123@[::1]:8080/",
            "https://me:xxxxx@svc.test",
            "ftp://a:<password>@files.company.io",
        ] {
            assert!(url(text).is_some(), "{text} should be a placeholder");
        }
    }

    #[test]
    fn real_looking_url_credentials_stay_secrets() {
        for text in [
            "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app",
            "https://deploy:Zq8vR2mK9pLx4T@registry.company.io",
            "mongodb://svc:9f2c81d0a7e4b3@mongo.prod:27017",
        ] {
            assert_eq!(url(text), None, "{text} should stay a secret");
        }
    }

    #[test]
    fn header_values_follow_the_same_rules() {
        let text = "Authorization: Bearer test-token";
        assert!(placeholder("authorization-header", text, 0..text.len()).is_some());
        let text = "Authorization: Bearer 8c1fA7qZ0pR4mX2vL9dK";
        assert_eq!(
            placeholder("authorization-header", text, 0..text.len()),
            None
        );
        let text = "Cookie: session=abc123";
        assert!(placeholder("cookie-header", text, 0..text.len()).is_some());
    }

    #[test]
    fn token_formats_are_never_placeholders() {
        let text = "ghp_test_test_test";
        assert_eq!(placeholder("github-token", text, 0..text.len()), None);
        assert_eq!(placeholder("env:API_KEY", text, 0..text.len()), None);
    }
}
