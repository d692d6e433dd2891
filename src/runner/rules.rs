//! The redaction rules: token patterns with their ids and bounded lengths, and the literal
//! forms a configured secret can take in output (raw, base64 at every alignment, URL-encoded,
//! JSON-escaped).
//!
//! It does not scan anything; `redact` compiles these rules into one regex and runs it over
//! the streams.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use super::model::Secret;

/// Longest private-key body matched between the BEGIN and END lines (8 KiB).
///
/// An 8192-bit RSA key in PEM is about 6.5 KB, so every real key fits. A longer block is not
/// recognised as a whole; its BEGIN line is still redacted by a second rule, but the body
/// would pass. The bound exists because the stream redactor carries the longest possible match
/// between chunks, so every rule needs a finite maximum length.
pub(crate) const PRIVATE_KEY_BODY_MAX_BYTES: usize = 8 * 1024;

/// Secrets shorter than this (4 bytes) are not redacted.
///
/// A one- to three-byte value (`1`, `yes`, `dev`) occurs all over ordinary output, so
/// redacting it would destroy the evidence while protecting nothing: such a value is
/// guessable anyway. The skip is logged.
pub(crate) const MIN_SECRET_BYTES: usize = 4;

/// Encoded forms shorter than this (8 bytes) are not redacted.
///
/// The stable part of a short secret's base64 can be just a few characters, which would match
/// by chance in any base64 blob (a 6-character string occurs about once per 64^6 = 7e10
/// positions; 8 characters push that to once per 3e14).
pub(crate) const MIN_ENCODED_BYTES: usize = 8;

/// One redaction rule: matches of `pattern` become `[REDACTED:<id>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) id: String,
    /// A regex in `regex::bytes` syntax, written for Unicode mode off.
    pub(crate) pattern: String,
}

/// The token-format rules, in priority order (an earlier rule wins at the same position, so
/// `sk-ant-` is tried before `sk-`).
fn pattern_rules() -> Vec<Rule> {
    let key_line = "-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----";
    let end_line = "-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----";
    let table: Vec<(&str, String)> = vec![
        (
            "private-key",
            format!("{key_line}(?s:.){{0,{PRIVATE_KEY_BODY_MAX_BYTES}}}?{end_line}"),
        ),
        // A block too long for the rule above still loses its header, so it is obvious in the
        // output that a key was printed.
        ("private-key", key_line.to_owned()),
        (
            "github-token",
            r"gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}".to_owned(),
        ),
        (
            "anthropic-key",
            r"\bsk-ant-[A-Za-z0-9_-]{20,255}".to_owned(),
        ),
        ("openai-key", r"\bsk-[A-Za-z0-9_-]{20,255}".to_owned()),
        (
            "aws-access-key",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b".to_owned(),
        ),
        (
            "slack-token",
            r"\bxox[abprs]-[A-Za-z0-9-]{10,255}".to_owned(),
        ),
        (
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{2,1024}\.eyJ[A-Za-z0-9_-]{2,4096}\.[A-Za-z0-9_-]{0,1024}"
                .to_owned(),
        ),
    ];
    table
        .into_iter()
        .map(|(id, pattern)| Rule {
            id: id.to_owned(),
            pattern,
        })
        .collect()
}

/// All rules for a set of secrets: each secret's literal forms first (longest first, so the
/// longest form wins at a position), then the token patterns.
pub(crate) fn rules_for(secrets: &[Secret]) -> Vec<Rule> {
    let mut rules = Vec::new();
    for secret in secrets {
        if secret.value.len() < MIN_SECRET_BYTES {
            if !secret.value.is_empty() {
                tracing::warn!(
                    name = %secret.name,
                    "not redacting a secret shorter than {MIN_SECRET_BYTES} bytes"
                );
            }
            continue;
        }
        for form in secret_forms(secret.value.as_bytes()) {
            rules.push(Rule {
                id: format!("env:{}", secret.name),
                pattern: literal_pattern(&form),
            });
        }
    }
    rules.extend(pattern_rules());
    rules
}

/// A regex matching exactly `bytes`, valid with Unicode mode off.
fn literal_pattern(bytes: &[u8]) -> String {
    let mut pattern = String::with_capacity(bytes.len() * 4);
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() {
            pattern.push(char::from(byte));
        } else {
            pattern.push_str(&format!("\\x{byte:02x}"));
        }
    }
    pattern
}

/// The forms a secret's value can take in output, deduplicated, longest first.
pub(crate) fn secret_forms(value: &[u8]) -> Vec<Vec<u8>> {
    let mut forms = vec![value.to_vec()];
    for alignment in 0..3 {
        if let Some(stable) = base64_stable(value, alignment) {
            let url_safe = stable
                .iter()
                .map(|&b| match b {
                    b'+' => b'-',
                    b'/' => b'_',
                    other => other,
                })
                .collect();
            forms.push(stable);
            forms.push(url_safe);
        }
    }
    forms.push(percent_encode(value, b"0123456789ABCDEF", false));
    forms.push(percent_encode(value, b"0123456789abcdef", false));
    forms.push(percent_encode(value, b"0123456789ABCDEF", true));
    if let Ok(text) = std::str::from_utf8(value) {
        let quoted = serde_json::Value::String(text.to_owned()).to_string();
        let escaped = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        forms.push(escaped.as_bytes().to_vec());
        forms.push(escaped.replace('/', "\\/").into_bytes());
    }
    forms.retain(|form| form.as_slice() == value || form.len() >= MIN_ENCODED_BYTES);
    forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    forms.dedup();
    forms
}

/// The part of the base64 encoding of `value` that does not depend on its neighbours when
/// `value` starts `alignment` bytes (0, 1 or 2) after a 3-byte group boundary in a longer
/// input; `None` when that part is empty.
///
/// Base64 output character `i` encodes input bits `6i..6i+6`. With `alignment` unknown bytes
/// before the secret and unknown bytes after it, the characters that depend only on the
/// secret are those whose 6 bits lie entirely inside bits `8*alignment..8*(alignment+len)`.
fn base64_stable(value: &[u8], alignment: usize) -> Option<Vec<u8>> {
    let mut padded = vec![0u8; alignment];
    padded.extend_from_slice(value);
    let encoded = STANDARD_NO_PAD.encode(&padded);
    let first_bit = 8 * alignment;
    let end_bit = 8 * (alignment + value.len());
    let start = first_bit.div_ceil(6);
    let end = end_bit / 6;
    let stable = encoded.as_bytes().get(start..end)?;
    (!stable.is_empty()).then(|| stable.to_vec())
}

/// Percent-encode every byte outside RFC 3986's unreserved set, with the given hex digits;
/// `plus_for_space` gives the form-encoding variant.
fn percent_encode(value: &[u8], hex: &[u8; 16], plus_for_space: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() * 3);
    for &byte in value {
        match byte {
            b' ' if plus_for_space => out.push(b'+'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte),
            _ => {
                out.push(b'%');
                out.push(hex[usize::from(byte >> 4)]);
                out.push(hex[usize::from(byte & 0x0f)]);
            }
        }
    }
    out
}

/// URL-safe base64 without padding, used by tests to build inputs.
#[cfg(test)]
pub(crate) fn base64_url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(forms: &[Vec<u8>]) -> Vec<String> {
        forms
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect()
    }

    #[test]
    fn secret_forms_cover_raw_base64_alignments_url_and_json() {
        let forms = secret_forms(b"p@ss/w\"rd 42");
        insta::assert_debug_snapshot!(texts(&forms));
    }

    #[test]
    fn base64_stable_part_is_found_inside_any_longer_encoding() {
        let secret = b"correct horse battery staple";
        for before in 0..6 {
            for after in 0..4 {
                let mut input = vec![b'x'; before];
                input.extend_from_slice(secret);
                input.extend(std::iter::repeat_n(b'y', after));
                let encoded = STANDARD_NO_PAD.encode(&input);
                let stable = base64_stable(secret, before % 3).unwrap_or_default();
                let found = encoded
                    .as_bytes()
                    .windows(stable.len())
                    .any(|w| w == stable.as_slice());
                assert!(found, "before={before} after={after}");
            }
        }
    }

    #[test]
    fn short_secrets_and_short_encodings_are_skipped() {
        let rules = rules_for(&[
            Secret {
                name: "TINY".to_owned(),
                value: "abc".to_owned(),
            },
            Secret {
                name: "EMPTY".to_owned(),
                value: String::new(),
            },
        ]);
        assert_eq!(rules, pattern_rules());
        assert_eq!(texts(&secret_forms(b"abcd")), vec!["abcd".to_owned()]);
    }

    #[test]
    fn literal_pattern_escapes_every_non_alphanumeric_byte() {
        assert_eq!(literal_pattern(b"a.b*\xff"), r"a\x2eb\x2a\xff");
    }
}
