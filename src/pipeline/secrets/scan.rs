//! Secrets in prompts (`security.secrets-in-prompt`): the exact text about to leave the
//! machine is scanned with the runner's redaction rules (token formats and the configured
//! secrets' values), then the call is refused (`deny`), sent as is (`allow`), or sent with
//! each secret replaced by a placeholder (`tokenize`).
//!
//! Matches of the place-based rules that are obvious test data (`https://user:pass@example.com`)
//! are not secrets ([`super::placeholder`]): they are recorded with their file and line and
//! sent as they are.
//!
//! Placeholders are numbered by first occurrence (`EFIX_SECRET_1`, ...), so the same value
//! gets the same placeholder everywhere in a request and the same prompt always gets the same
//! placeholders (a resumed run re-renders it identically). The mapping lives only in memory
//! for the one call: it is never recorded. Values go back only into the change the answer
//! makes to files ([`Tokens::restore`]), never into the model's explanation.

use regex::Regex;

use crate::engine::{FixResponse, Prompt};
use crate::evidence::SecretDetection;
use crate::runner::{RunnerError, Secret, SecretMatch, secret_matches};

use super::fixtures::Fixtures;
use super::placeholder::placeholder;

/// Why a match is not a secret: an obvious placeholder, or test data a tracked test file of
/// the repository holds.
fn not_secret(
    secrets: &[Secret],
    fixtures: &Fixtures,
    hit: &SecretMatch,
    text: &str,
) -> Option<String> {
    let matched = text.get(hit.range.clone())?;
    if is_redaction_marker(matched) {
        return Some("already redacted by the runner".to_owned());
    }
    placeholder(&hit.rule, text, hit.range.clone())
        .or_else(|| fixtures.why(&hit.rule, matched, secrets))
}

/// Whether `matched` is nothing but the runner's own `[REDACTED:<id>]` markers (and the `:`
/// between them): a command's output quoted in a prompt holds
/// `http://[REDACTED:url-credentials]@host`, which the URL rule reads as a user
/// `[REDACTED` with a password `url-credentials]`.
fn is_redaction_marker(matched: &str) -> bool {
    let mut rest = matched.trim_matches(':');
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix("[REDACTED:") else {
            return false;
        };
        let Some(end) = after.find(']') else {
            return false;
        };
        let id = &after[..end];
        let plain = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
        if !plain {
            return false;
        }
        rest = after[end + 1..].trim_start_matches(':');
    }
    true
}

/// Prefix of a placeholder; the number follows.
pub(crate) const PLACEHOLDER_PREFIX: &str = "EFIX_SECRET_";

/// What the scan found (never the values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// Secrets (placeholders not counted).
    pub count: u64,
    /// Rule ids of the secrets, sorted, each once.
    pub rules: Vec<String>,
    /// Every match, placeholders included, with where it sits, each place once.
    pub detections: Vec<SecretDetection>,
}

/// The secrets replaced in one request, in placeholder order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    values: Vec<String>,
}

/// Scan the prompts of one request.
pub(crate) fn scan(
    secrets: &[Secret],
    fixtures: &Fixtures,
    prompts: &[&Prompt],
) -> Result<Found, RunnerError> {
    // The variants of a request (structured, text) differ only in their answer format: the
    // count is that of the one holding most, the rules those of all.
    let mut found = Found::default();
    for prompt in prompts {
        let mut count = 0;
        for text in [&prompt.system, &prompt.user] {
            for hit in secret_matches(secrets, text)? {
                let why = not_secret(secrets, fixtures, &hit, text);
                if why.is_none() {
                    count += 1;
                    found.rules.push(hit.rule.clone());
                }
                let (file, line) = location(text, hit.range.start);
                let detection = SecretDetection {
                    rule: hit.rule,
                    file,
                    line,
                    placeholder: why,
                };
                if !found.detections.contains(&detection) {
                    found.detections.push(detection);
                }
            }
        }
        found.count = found.count.max(count);
    }
    found.rules.sort();
    found.rules.dedup();
    Ok(found)
}

/// The matches in `text` that are secrets, placeholders left out.
fn secrets_in(
    secrets: &[Secret],
    fixtures: &Fixtures,
    text: &str,
) -> Result<Vec<SecretMatch>, RunnerError> {
    Ok(secret_matches(secrets, text)?
        .into_iter()
        .filter(|hit| not_secret(secrets, fixtures, hit, text).is_none())
        .collect())
}

/// The repository file and line a prompt offset falls in: the prompt quotes files as a
/// `--- path` header followed by `N| line` lines. `(None, None)` outside a quoted file (the
/// failure output, the hypothesis).
fn location(text: &str, at: usize) -> (Option<String>, Option<u64>) {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let Some(number) = line
        .split_once("| ")
        .and_then(|(n, _)| n.parse::<u64>().ok())
    else {
        return (None, None);
    };
    // The nearest header above, with no unnumbered line between it and the match.
    for above in text[..line_start].lines().rev() {
        if let Some(path) = above.strip_prefix("--- ") {
            let path = path.strip_suffix(" (cut)").unwrap_or(path);
            return (Some(path.to_owned()), Some(number));
        }
        let numbered = above
            .split_once("| ")
            .is_some_and(|(n, _)| n.parse::<u64>().is_ok());
        if !numbered && !above.is_empty() {
            break;
        }
    }
    (None, None)
}

/// Replace every secret in the prompts by its placeholder.
pub(crate) fn tokenize(
    secrets: &[Secret],
    fixtures: &Fixtures,
    prompts: &mut [&mut Prompt],
) -> Result<Tokens, RunnerError> {
    let mut tokens = Tokens::default();
    for prompt in prompts.iter_mut() {
        for text in [&mut prompt.system, &mut prompt.user] {
            let hits = secrets_in(secrets, fixtures, text)?;
            let mut out = String::with_capacity(text.len());
            let mut last = 0;
            for hit in hits {
                out.push_str(&text[last..hit.range.start]);
                out.push_str(&tokens.placeholder(&text[hit.range.clone()]));
                last = hit.range.end;
            }
            out.push_str(&text[last..]);
            *text = out;
        }
    }
    Ok(tokens)
}

impl Tokens {
    fn placeholder(&mut self, value: &str) -> String {
        let index = match self.values.iter().position(|v| v == value) {
            Some(index) => index,
            None => {
                self.values.push(value.to_owned());
                self.values.len() - 1
            }
        };
        format!("{PLACEHOLDER_PREFIX}{}", index + 1)
    }

    /// Put the values back into the change the answer makes (its `output` and edits), and
    /// nowhere else.
    pub(crate) fn restore(&self, response: &mut FixResponse) {
        if self.values.is_empty() {
            return;
        }
        response.output = self.restore_text(&response.output);
        for edit in &mut response.edits {
            edit.path = self.restore_text(&edit.path);
            edit.old_text = self.restore_text(&edit.old_text);
            edit.new_text = self.restore_text(&edit.new_text);
        }
    }

    /// `text` with every known placeholder replaced by its value; unknown numbers stay.
    pub(crate) fn restore_text(&self, text: &str) -> String {
        let Ok(pattern) = Regex::new(&format!(r"{PLACEHOLDER_PREFIX}(\d+)\b")) else {
            return text.to_owned();
        };
        pattern
            .replace_all(text, |caps: &regex::Captures<'_>| {
                caps[1]
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| self.values.get(i))
                    .cloned()
                    .unwrap_or_else(|| caps[0].to_owned())
            })
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_s_own_markers_are_not_secrets_and_a_value_beside_one_is() {
        let markers = [
            "[REDACTED:url-credentials]",
            "[REDACTED:env:DB_PASSWORD]",
            "[REDACTED:url-credentials]:[REDACTED:github-token]",
        ];
        let values = [
            "[REDACTED:x]Zq8vR2kL9xW4",
            "Zq8vR2kL9xW4[REDACTED:x]",
            "[REDACTED:a b]",
            "[REDACTED:",
            "user:pass",
        ];
        let got: Vec<bool> = markers
            .iter()
            .chain(&values)
            .map(|m| is_redaction_marker(m))
            .collect();
        assert_eq!(got, [true, true, true, false, false, false, false, false]);
    }
    use crate::engine::Edit;

    fn secret() -> Secret {
        Secret {
            name: "DB_PASSWORD".to_owned(),
            value: "hunter2-correct-horse".to_owned(),
        }
    }

    #[test]
    fn finds_configured_values_and_token_formats_without_keeping_them() {
        let token = format!("ghp_{}", "a".repeat(36));
        let prompt = Prompt {
            system: String::new(),
            user: format!("pw=hunter2-correct-horse token={token} and again {token}"),
        };
        let found = scan(&[secret()], &Fixtures::none(), &[&prompt]).unwrap();
        assert_eq!(
            found,
            Found {
                count: 3,
                rules: vec!["env:DB_PASSWORD".to_owned(), "github-token".to_owned()],
                detections: vec![
                    SecretDetection {
                        rule: "env:DB_PASSWORD".to_owned(),
                        file: None,
                        line: None,
                        placeholder: None,
                    },
                    SecretDetection {
                        rule: "github-token".to_owned(),
                        file: None,
                        line: None,
                        placeholder: None,
                    },
                ],
            }
        );
    }

    #[test]
    fn placeholder_credentials_in_quoted_test_files_are_recorded_but_not_secrets() {
        let prompt = Prompt {
            system: String::new(),
            user: "--- tests/test_url.py\n1| def test_userinfo():\n2|     u = parse(\"https://user:pass@example.com/p\")\n\n--- src/conf.py\n7| DB = \"postgres://app:s3cr3t-Pa55@db.internal/app\"\n".to_owned(),
        };
        let found = scan(&[], &Fixtures::none(), &[&prompt]).unwrap();
        assert_eq!(found.count, 1);
        assert_eq!(found.rules, vec!["url-credentials".to_owned()]);
        assert_eq!(
            found.detections,
            vec![
                SecretDetection {
                    rule: "url-credentials".to_owned(),
                    file: Some("tests/test_url.py".to_owned()),
                    line: Some(2),
                    placeholder: Some(
                        "the host `example.com` is reserved for examples and tests".to_owned()
                    ),
                },
                SecretDetection {
                    rule: "url-credentials".to_owned(),
                    file: Some("src/conf.py".to_owned()),
                    line: Some(7),
                    placeholder: None,
                },
            ]
        );
        let mut prompt = prompt;
        tokenize(&[], &Fixtures::none(), &mut [&mut prompt]).unwrap();
        assert!(prompt.user.contains("https://user:pass@example.com/p"));
        assert!(prompt.user.contains("postgres://EFIX_SECRET_1@db.internal"));
    }

    #[test]
    fn tokenize_numbers_by_first_occurrence_and_restores_only_the_change() {
        let token = format!("ghp_{}", "b".repeat(36));
        let mut prompt = Prompt {
            system: "none here".to_owned(),
            user: format!("a {token} b hunter2-correct-horse c {token}"),
        };
        let tokens = tokenize(&[secret()], &Fixtures::none(), &mut [&mut prompt]).unwrap();
        assert_eq!(
            prompt.user,
            "a EFIX_SECRET_1 b EFIX_SECRET_2 c EFIX_SECRET_1"
        );
        let mut answer = FixResponse {
            edits: vec![Edit {
                path: "config.py".to_owned(),
                old_text: "TOKEN = \"EFIX_SECRET_1\"\n".to_owned(),
                new_text: "TOKEN = \"EFIX_SECRET_1\"  # EFIX_SECRET_9\n".to_owned(),
            }],
            root_cause: "EFIX_SECRET_2 was logged".to_owned(),
            ..FixResponse::default()
        };
        tokens.restore(&mut answer);
        assert_eq!(answer.edits[0].old_text, format!("TOKEN = \"{token}\"\n"));
        assert_eq!(
            answer.edits[0].new_text,
            format!("TOKEN = \"{token}\"  # EFIX_SECRET_9\n")
        );
        assert_eq!(answer.root_cause, "EFIX_SECRET_2 was logged");
    }
}
