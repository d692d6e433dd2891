//! The redaction rules: token patterns with their ids and bounded lengths, and the literal
//! forms a configured secret can take in output (raw, base64 at every alignment, URL-encoded,
//! JSON-escaped).
//!
//! It does not scan anything; `redact` compiles these rules into one regex and runs it over
//! the streams.
//!
//! Known gaps, by design of exact matching: a secret's base64 split by a line break (`base64`
//! wraps at 76 columns, so a secret encoded inside a longer blob can straddle a wrap), JSON
//! escapes of non-ASCII characters as `\uXXXX`, and other encodings (hex, gzip) are not
//! recognised.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use super::model::Secret;

/// Longest private-key body matched between the BEGIN and END lines (8 KiB).
///
/// An 8192-bit RSA key in PEM is about 6.5 KB, so every real key fits. A longer block is not
/// recognised as a whole: its BEGIN line is still redacted, but the body would pass. The bound
/// exists because the stream redactor carries the longest possible match between chunks, so
/// every rule needs a finite maximum length.
pub(crate) const PRIVATE_KEY_BODY_MAX_BYTES: usize = 8 * 1024;

/// A private key's BEGIN line; the block extends to the first END line (see
/// [`private_key_block_end`]).
pub(crate) const PRIVATE_KEY_BEGIN: &str = "-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----";

/// A private key's END line.
pub(crate) const PRIVATE_KEY_END: &str = "-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----";

/// Longest BEGIN line (`-----BEGIN ` + 40 + `PRIVATE KEY-----`).
const PRIVATE_KEY_BEGIN_MAX_BYTES: usize = 11 + 40 + 16;

/// Longest END line (`-----END ` + 40 + `PRIVATE KEY-----`).
const PRIVATE_KEY_END_MAX_BYTES: usize = 9 + 40 + 16;

/// Segment bounds of a JWT (header, payload, signature), generous for real tokens: headers
/// are tens of bytes, payloads rarely above 2 KiB, RS512 signatures with 4096-bit keys 683.
const JWT_SEGMENT_MAX_BYTES: [usize; 3] = [1024, 4096, 1024];

/// Longest match of a rule whose end is found by code rather than by the regex.
pub(crate) const EXTENDED_MATCH_MAX_BYTES: usize = {
    let key = PRIVATE_KEY_BEGIN_MAX_BYTES + PRIVATE_KEY_BODY_MAX_BYTES + PRIVATE_KEY_END_MAX_BYTES;
    let jwt = 3
        + JWT_SEGMENT_MAX_BYTES[0]
        + 1
        + 3
        + JWT_SEGMENT_MAX_BYTES[1]
        + 1
        + JWT_SEGMENT_MAX_BYTES[2];
    if key > jwt { key } else { jwt }
};

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

/// How a rule's match ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extent {
    /// Where the regex match ends.
    Regex,
    /// The regex matched a private key's BEGIN line; the match extends to the END line.
    PrivateKeyBlock,
    /// The regex matched `eyJ`; the match is a whole JWT or nothing.
    Jwt,
    /// The regex matched a token's prefix and minimum length; the match extends over
    /// following bytes of `class`, at most `max_extra` of them (a greedy `{min,max}` done in
    /// code, which keeps the regex small and fast to compile).
    Run { class: TokenClass, max_extra: usize },
    /// Where the regex match ends, but its first `keep_prefix` and last `keep_suffix` bytes
    /// stay: the `://` and `@` around a URL's credentials.
    Inner {
        keep_prefix: usize,
        keep_suffix: usize,
    },
    /// Where the regex match ends, but the name before the value stays: everything through
    /// the first `:` or `=` and the spaces and quotes after it (`Authorization: `,
    /// `AccountKey=`).
    Value,
    /// Like [`Extent::Value`], with the value extended as in [`Extent::Run`].
    ValueRun { class: TokenClass, max_extra: usize },
}

impl Extent {
    /// Bytes this extent can add beyond the regex match, for those not covered by
    /// [`EXTENDED_MATCH_MAX_BYTES`].
    pub(crate) fn extra_max_bytes(self) -> usize {
        match self {
            Self::Run { max_extra, .. } | Self::ValueRun { max_extra, .. } => max_extra,
            Self::Regex | Self::PrivateKeyBlock | Self::Jwt | Self::Inner { .. } | Self::Value => 0,
        }
    }
}

/// The characters a token's tail is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenClass {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Za-z0-9_]`
    AlnumUnderscore,
    /// `[A-Za-z0-9_-]`
    Base64Url,
    /// `[A-Za-z0-9-]`
    AlnumDash,
    /// `[A-Za-z0-9_.-]`: GitLab's newer tokens carry a routing part after a dot.
    GitLab,
    /// `[A-Za-z0-9+/=_-]`: either base64 alphabet with padding.
    Base64Any,
    /// `[A-Za-z0-9%+/=]`: base64 that went through URL encoding.
    UrlEncoded,
    /// Anything but whitespace and quotes: a header's credential.
    NotSpaceOrQuote,
    /// Anything but a line end and quotes: a header's value to the end of the line.
    NotLineEndOrQuote,
}

impl TokenClass {
    fn contains(self, byte: u8) -> bool {
        match self {
            Self::NotSpaceOrQuote => {
                return !(byte.is_ascii_whitespace() || byte == b'"' || byte == b'\'');
            }
            Self::NotLineEndOrQuote => {
                return !matches!(byte, b'\r' | b'\n' | b'"' | b'\'');
            }
            _ => {}
        }
        byte.is_ascii_alphanumeric()
            || match self {
                Self::Alnum => false,
                Self::AlnumUnderscore => byte == b'_',
                Self::Base64Url => byte == b'_' || byte == b'-',
                Self::AlnumDash => byte == b'-',
                Self::GitLab => matches!(byte, b'_' | b'.' | b'-'),
                Self::Base64Any => matches!(byte, b'+' | b'/' | b'=' | b'_' | b'-'),
                Self::UrlEncoded => matches!(byte, b'%' | b'+' | b'/' | b'='),
                Self::NotSpaceOrQuote | Self::NotLineEndOrQuote => false,
            }
    }
}

/// Where the value starts in a `name: value` or `name=value` match: after the first `:` or
/// `=` and the spaces and quotes that follow it.
pub(crate) fn value_start(matched: &[u8]) -> usize {
    let Some(separator) = matched.iter().position(|b| *b == b':' || *b == b'=') else {
        return 0;
    };
    separator
        + 1
        + matched[separator + 1..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'"' | b'\''))
            .count()
}

/// Where a token run that the regex matched up to `end` really ends.
pub(crate) fn run_end(haystack: &[u8], end: usize, class: TokenClass, max_extra: usize) -> usize {
    end + haystack
        .get(end..)
        .unwrap_or_default()
        .iter()
        .take(max_extra)
        .take_while(|&&byte| class.contains(byte))
        .count()
}

/// One redaction rule: matches of `pattern` (extended per `extent`) become
/// `[REDACTED:<id>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) id: String,
    /// A regex in `regex::bytes` syntax, written for Unicode mode off, with a bounded maximum
    /// length.
    pub(crate) pattern: String,
    pub(crate) extent: Extent,
    /// Whether a change that adds a match is refused (`check.secret-in-change`).
    pub(crate) in_code: bool,
}

/// Where a private-key block that starts with a BEGIN line ending at `header_end` ends: after
/// the first END line that starts within [`PRIVATE_KEY_BODY_MAX_BYTES`]; `None` when there is
/// none (then only the BEGIN line is redacted).
pub(crate) fn private_key_block_end(
    end_line: &regex::bytes::Regex,
    haystack: &[u8],
    header_end: usize,
) -> Option<usize> {
    let limit = haystack
        .len()
        .min(header_end + PRIVATE_KEY_BODY_MAX_BYTES + PRIVATE_KEY_END_MAX_BYTES);
    let found = end_line.find(haystack.get(header_end..limit)?)?;
    (found.start() <= PRIVATE_KEY_BODY_MAX_BYTES).then_some(header_end + found.end())
}

fn is_base64url(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// Length of the JWT at the start of `bytes` (which starts with `eyJ`): header, `.`, payload
/// starting with `eyJ`, `.`, signature (possibly empty, at most its bound); `None` if it is
/// not one.
pub(crate) fn jwt_len(bytes: &[u8]) -> Option<usize> {
    let run = |from: usize, max: usize| {
        bytes
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take(max + 1)
            .take_while(|&&b| is_base64url(b))
            .count()
    };
    let [header_max, payload_max, signature_max] = JWT_SEGMENT_MAX_BYTES;
    if !bytes.starts_with(b"eyJ") {
        return None;
    }
    let header = run(3, header_max);
    let mut at = 3 + header;
    if !(2..=header_max).contains(&header) || bytes.get(at..at + 4) != Some(b".eyJ") {
        return None;
    }
    let payload = run(at + 4, payload_max);
    at += 4 + payload;
    if !(2..=payload_max).contains(&payload) || bytes.get(at) != Some(&b'.') {
        return None;
    }
    at += 1;
    Some(at + run(at, signature_max).min(signature_max))
}

/// The rules for a set of secrets: each secret's literal forms (longest first, so the longest
/// form wins at a position). The redactor puts the token patterns after them.
pub(crate) fn secret_rules(secrets: &[Secret]) -> Vec<Rule> {
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
                extent: Extent::Regex,
                in_code: true,
            });
        }
    }
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
        let rules = secret_rules(&[
            Secret {
                name: "TINY".to_owned(),
                value: "abc".to_owned(),
            },
            Secret {
                name: "EMPTY".to_owned(),
                value: String::new(),
            },
        ]);
        assert_eq!(rules, Vec::new());
        assert_eq!(texts(&secret_forms(b"abcd")), vec!["abcd".to_owned()]);
    }

    #[test]
    fn extended_bounds_match_the_regexes() {
        let max = |pattern: &str| {
            regex_syntax::ParserBuilder::new()
                .unicode(false)
                .build()
                .parse(pattern)
                .ok()
                .and_then(|hir| hir.properties().maximum_len())
        };
        assert_eq!(
            (max(PRIVATE_KEY_BEGIN), max(PRIVATE_KEY_END)),
            (
                Some(PRIVATE_KEY_BEGIN_MAX_BYTES),
                Some(PRIVATE_KEY_END_MAX_BYTES)
            )
        );
    }

    #[test]
    fn jwt_len_accepts_whole_tokens_only() {
        let token = b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl rest";
        let lens: Vec<Option<usize>> = [
            &token[..],
            b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0. unsigned",
            b"eyJhbGciOiJIUzI1NiJ9.notpayload.sig",
            b"eyJhbGciOiJIUzI1NiJ9 no dot",
            b"eyJ.eyJab.c",
        ]
        .iter()
        .map(|bytes| jwt_len(bytes))
        .collect();
        assert_eq!(lens, vec![Some(49), Some(37), None, None, None]);
    }

    #[test]
    fn literal_pattern_escapes_every_non_alphanumeric_byte() {
        assert_eq!(literal_pattern(b"a.b*\xff"), r"a\x2eb\x2a\xff");
    }
}
