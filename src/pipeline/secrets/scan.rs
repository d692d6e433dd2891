//! Secrets in prompts (`security.secrets-in-prompt`): the exact text about to leave the
//! machine is scanned with the runner's redaction rules (token formats and the configured
//! secrets' values), then the call is refused (`deny`), sent as is (`allow`), or sent with
//! each secret replaced by a placeholder (`tokenize`).
//!
//! Placeholders are numbered by first occurrence (`EFIX_SECRET_1`, ...), so the same value
//! gets the same placeholder everywhere in a request and the same prompt always gets the same
//! placeholders (a resumed run re-renders it identically). The mapping lives only in memory
//! for the one call: it is never recorded. Values go back only into the change the answer
//! makes to files ([`Tokens::restore`]), never into the model's explanation.

use regex::Regex;

use crate::engine::{FixResponse, Prompt};
use crate::runner::{RunnerError, Secret, secret_matches};

/// Prefix of a placeholder; the number follows.
pub(crate) const PLACEHOLDER_PREFIX: &str = "EFIX_SECRET_";

/// What the scan found (never the values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    pub count: u64,
    /// Rule ids, sorted, each once.
    pub rules: Vec<String>,
}

/// The secrets replaced in one request, in placeholder order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    values: Vec<String>,
}

/// Scan the prompts of one request.
pub(crate) fn scan(secrets: &[Secret], prompts: &[&Prompt]) -> Result<Found, RunnerError> {
    // The variants of a request (structured, text) differ only in their answer format: the
    // count is that of the one holding most, the rules those of all.
    let mut found = Found::default();
    for prompt in prompts {
        let mut count = 0;
        for text in [&prompt.system, &prompt.user] {
            for hit in secret_matches(secrets, text)? {
                count += 1;
                found.rules.push(hit.rule);
            }
        }
        found.count = found.count.max(count);
    }
    found.rules.sort();
    found.rules.dedup();
    Ok(found)
}

/// Replace every secret in the prompts by its placeholder.
pub(crate) fn tokenize(
    secrets: &[Secret],
    prompts: &mut [&mut Prompt],
) -> Result<Tokens, RunnerError> {
    let mut tokens = Tokens::default();
    for prompt in prompts.iter_mut() {
        for text in [&mut prompt.system, &mut prompt.user] {
            let hits = secret_matches(secrets, text)?;
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
        let found = scan(&[secret()], &[&prompt]).unwrap();
        assert_eq!(
            found,
            Found {
                count: 3,
                rules: vec!["env:DB_PASSWORD".to_owned(), "github-token".to_owned()],
            }
        );
    }

    #[test]
    fn tokenize_numbers_by_first_occurrence_and_restores_only_the_change() {
        let token = format!("ghp_{}", "b".repeat(36));
        let mut prompt = Prompt {
            system: "none here".to_owned(),
            user: format!("a {token} b hunter2-correct-horse c {token}"),
        };
        let tokens = tokenize(&[secret()], &mut [&mut prompt]).unwrap();
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
