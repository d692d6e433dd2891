//! Streaming redaction: every byte a child writes passes through here before it is stored,
//! and matches of the rules (see `rules`) become `[REDACTED:<id>]`.
//!
//! The stream is scanned with one combined regex over a sliding window. Every rule has a
//! bounded maximum length `L`, so a match that starts at least `L + 1` bytes before the end of
//! the data seen so far can no longer change when more data arrives; everything before such a
//! point is emitted, the rest is carried into the next scan. That is how a secret written in
//! two halves, with a pause between them, is still caught, and why the head/tail split in
//! `capture` can never cut a secret in half (it only ever sees redacted bytes).
//!
//! It does not decide what is kept (that is `capture`) and it does not know where the rules
//! come from.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use regex::bytes::{CaptureLocations, Regex, RegexBuilder};

use super::model::{RunnerError, Secret};
use super::rules::{
    EXTENDED_MATCH_MAX_BYTES, Extent, PRIVATE_KEY_END, Rule, jwt_len, private_key_block_end,
    run_end, secret_rules, value_start,
};

/// Bytes gathered beyond the carried window before a scan (256 KiB), so the carried window
/// (about 8 KiB, set by the longest rule) is rescanned only a few percent of the time.
const BATCH_BYTES: usize = 256 * 1024;

/// Upper bound on the compiled rules (64 MiB), far above what the built-in rules need
/// (a few MiB) so only an absurdly long configured secret can hit it.
const REGEX_SIZE_LIMIT: usize = 64 * 1024 * 1024;

/// The compiled rules.
#[derive(Debug)]
pub(crate) struct Redactor {
    regex: Regex,
    /// Rule id of capture group `i + 1`.
    ids: Vec<String>,
    /// How each rule's match ends.
    extents: Vec<Extent>,
    /// Whether each rule also guards code.
    in_code: Vec<bool>,
    /// `[REDACTED:<id>]` for each rule, prepared once.
    replacements: Vec<Vec<u8>>,
    /// A private key's END line, for [`Extent::PrivateKeyBlock`].
    private_key_end: Regex,
    /// Longest possible match plus one byte of look-ahead for `\b`.
    window: usize,
}

/// The last compilation of the rules and the secrets it was for.
static LAST: Mutex<Option<(Vec<Secret>, Arc<Redactor>)>> = Mutex::new(None);

/// Redactions made so far, by rule id.
pub(crate) type Counts = BTreeMap<String, u64>;

impl Redactor {
    /// Compile the rules for these secrets.
    pub(crate) fn new(secrets: &[Secret]) -> Result<Self, RunnerError> {
        let mut rules = secret_rules(secrets);
        rules.extend(super::tokens::pattern_rules());
        let window = rules
            .iter()
            .map(max_len)
            .try_fold(EXTENDED_MATCH_MAX_BYTES, |acc, len| {
                len.map(|len| acc.max(len))
            })?
            + 1;
        let combined = rules
            .iter()
            .map(|rule| format!("({})", rule.pattern))
            .collect::<Vec<_>>()
            .join("|");
        let regex = RegexBuilder::new(&format!("(?-u){combined}"))
            .unicode(false)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|error| RunnerError::Redaction {
                reason: error.to_string(),
            })?;
        let private_key_end = RegexBuilder::new(&format!("(?-u){PRIVATE_KEY_END}"))
            .unicode(false)
            .build()
            .map_err(|error| RunnerError::Redaction {
                reason: error.to_string(),
            })?;
        let replacements = rules
            .iter()
            .map(|rule| format!("[REDACTED:{}]", rule.id).into_bytes())
            .collect();
        Ok(Self {
            regex,
            extents: rules.iter().map(|rule| rule.extent).collect(),
            in_code: rules.iter().map(|rule| rule.in_code).collect(),
            ids: rules.into_iter().map(|rule| rule.id).collect(),
            replacements,
            private_key_end,
            window,
        })
    }

    /// The compiled rules for these secrets, reusing the last compilation when the secrets
    /// are the same (they are, for every command of a run), since compiling takes longer than
    /// spawning a small command.
    pub(crate) fn cached(secrets: &[Secret]) -> Result<Arc<Self>, RunnerError> {
        let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cached_secrets, redactor)) = last.as_ref()
            && cached_secrets.as_slice() == secrets
        {
            return Ok(Arc::clone(redactor));
        }
        let redactor = Arc::new(Self::new(secrets)?);
        *last = Some((secrets.to_vec(), Arc::clone(&redactor)));
        Ok(redactor)
    }

    /// The last compilation, when it was for these secrets: nothing left to compile.
    pub(crate) fn compiled(secrets: &[Secret]) -> Option<Arc<Self>> {
        let last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        last.as_ref()
            .filter(|(cached_secrets, _)| cached_secrets.as_slice() == secrets)
            .map(|(_, redactor)| Arc::clone(redactor))
    }

    /// A fresh stream over these rules.
    pub(crate) fn stream(&self) -> RedactStream<'_> {
        RedactStream {
            redactor: self,
            work: Vec::new(),
            look: 0,
            locations: self.regex.capture_locations(),
            counts: vec![0; self.ids.len()],
        }
    }

    /// Redact a whole text at once (argv, messages), adding to `counts`.
    pub(crate) fn redact_text(&self, text: &str, counts: &mut Counts) -> String {
        let mut out = Vec::with_capacity(text.len());
        let mut stream = self.stream();
        stream.push(text.as_bytes(), &mut |bytes: &[u8]| {
            out.extend_from_slice(bytes)
        });
        stream.finish(&mut |bytes: &[u8]| out.extend_from_slice(bytes));
        stream.add_counts(counts);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Where a redaction rule matches in a text that is scanned whole (a prompt), and which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretMatch {
    /// Byte range of the match in the text.
    pub range: std::ops::Range<usize>,
    /// The rule id, as in `[REDACTED:<id>]` (`github-token`, `env:NAME`, ...).
    pub rule: String,
}

/// Every match of the redaction rules (token formats and the literal forms of `secrets`) in
/// `text`, in order and not overlapping: what `[REDACTED:<id>]` would replace.
pub fn secret_matches(secrets: &[Secret], text: &str) -> Result<Vec<SecretMatch>, RunnerError> {
    let redactor = Redactor::cached(secrets)?;
    let mut locations = redactor.regex.capture_locations();
    let haystack = text.as_bytes();
    let mut matches = Vec::new();
    let mut from = 0;
    while let Some(span) = redactor.next_span(haystack, from, haystack.len(), &mut locations) {
        // A match that ends inside a UTF-8 sequence is widened to whole characters, so the
        // caller can slice the text.
        let mut end = span.cut_end.min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let mut start = span.cut_start;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        matches.push(SecretMatch {
            range: start..end,
            rule: redactor.ids[span.rule].clone(),
        });
        from = span.resume.max(end);
    }
    Ok(matches)
}

/// `text` with every match of the redaction rules replaced by `[REDACTED:<id>]`, for text
/// that does not come from a command's pipes (an agent's stderr, a server's error message).
pub fn redact_text(secrets: &[Secret], text: &str) -> Result<String, RunnerError> {
    let redactor = Redactor::cached(secrets)?;
    Ok(redactor.redact_text(text, &mut Counts::new()))
}

/// The maximum length of a rule's matches (regex plus what its extent adds), or an error for an unbounded rule (a bug: the
/// window would be infinite).
fn max_len(rule: &Rule) -> Result<usize, RunnerError> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&rule.pattern)
        .map_err(|error| RunnerError::Redaction {
            reason: error.to_string(),
        })?;
    hir.properties()
        .maximum_len()
        .map(|len| len + rule.extent.extra_max_bytes())
        .ok_or_else(|| RunnerError::Redaction {
            reason: format!("rule {} has no maximum length", rule.id),
        })
}

/// One stream being redacted. Feed it with [`RedactStream::push`], end it with
/// [`RedactStream::finish`]; redacted bytes go to the sink in order.
pub(crate) struct RedactStream<'r> {
    redactor: &'r Redactor,
    /// Bytes not yet emitted, after `look` bytes that were emitted already and are kept only
    /// as look-behind context for `\b`.
    work: Vec<u8>,
    look: usize,
    locations: CaptureLocations,
    /// Matches per rule (indexed like the capture groups).
    counts: Vec<u64>,
}

impl RedactStream<'_> {
    /// Take more bytes; emits what can no longer be part of an unfinished match.
    pub(crate) fn push(&mut self, chunk: &[u8], sink: &mut impl FnMut(&[u8])) {
        self.work.extend_from_slice(chunk);
        if self.work.len() - self.look >= self.redactor.window + BATCH_BYTES {
            self.scan(false, sink);
        }
    }

    /// The stream ended: emit everything left.
    pub(crate) fn finish(&mut self, sink: &mut impl FnMut(&[u8])) {
        self.scan(true, sink);
        self.work.clear();
        self.look = 0;
    }

    /// Add this stream's redaction counts to `counts`.
    pub(crate) fn add_counts(&self, counts: &mut Counts) {
        for (index, &count) in self.counts.iter().enumerate() {
            if count > 0
                && let Some(id) = self.redactor.ids.get(index)
            {
                *counts.entry(id.clone()).or_default() += count;
            }
        }
    }

    fn scan(&mut self, last: bool, sink: &mut impl FnMut(&[u8])) {
        let redactor = self.redactor;
        let len = self.work.len();
        // Matches starting before `settled` have all the bytes they could ever span.
        let settled = if last {
            len
        } else {
            len.saturating_sub(redactor.window)
        };
        let mut emitted = self.look;
        let mut search_from = self.look;
        while let Some(span) =
            redactor.next_span(&self.work, search_from, settled, &mut self.locations)
        {
            sink(&self.work[emitted..span.cut_start]);
            sink(&redactor.replacements[span.rule]);
            self.counts[span.rule] += 1;
            emitted = span.cut_end;
            search_from = span.resume;
        }
        let cut = settled.max(emitted).min(len);
        if emitted < cut {
            sink(&self.work[emitted..cut]);
        }
        let keep_from = cut.saturating_sub(1);
        self.work.drain(..keep_from);
        self.look = cut - keep_from;
    }
}

/// One redaction: the rule, the bytes replaced, and where the search goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) rule: usize,
    pub(crate) cut_start: usize,
    pub(crate) cut_end: usize,
    pub(crate) resume: usize,
}

impl Redactor {
    /// The first redaction in `haystack` that starts at `from` or later and before `until`.
    fn next_span(
        &self,
        haystack: &[u8],
        mut from: usize,
        until: usize,
        locations: &mut CaptureLocations,
    ) -> Option<Span> {
        while from < until {
            let found = self.regex.captures_read_at(locations, haystack, from)?;
            if found.start() >= until {
                return None;
            }
            let rule = (0..self.ids.len())
                .find(|&index| locations.get(index + 1).is_some())
                .unwrap_or(0);
            let (start, end) = (found.start(), found.end());
            let cut = match self.extents[rule] {
                Extent::Regex => Some((start, end, end)),
                Extent::PrivateKeyBlock => {
                    let end =
                        private_key_block_end(&self.private_key_end, haystack, end).unwrap_or(end);
                    Some((start, end, end))
                }
                Extent::Run { class, max_extra } => {
                    let end = run_end(haystack, end, class, max_extra);
                    Some((start, end, end))
                }
                Extent::Jwt => {
                    jwt_len(&haystack[start..]).map(|len| (start, start + len, start + len))
                }
                Extent::Inner {
                    keep_prefix,
                    keep_suffix,
                } => {
                    let cut_start = start + keep_prefix;
                    Some((
                        cut_start,
                        end.saturating_sub(keep_suffix).max(cut_start),
                        end,
                    ))
                }
                Extent::Value => Some((start + value_start(&haystack[start..end]), end, end)),
                Extent::ValueRun { class, max_extra } => {
                    let end = run_end(haystack, end, class, max_extra);
                    Some((start + value_start(&haystack[start..end]), end, end))
                }
            };
            match cut {
                // Rules never match the empty string (each starts with a literal), so the
                // search always advances.
                Some((cut_start, cut_end, resume)) => {
                    return Some(Span {
                        rule,
                        cut_start,
                        cut_end,
                        resume: resume.max(start + 1),
                    });
                }
                // A trigger that is not a whole token: look again one byte further on.
                None => from = start + 1,
            }
        }
        None
    }

    /// Where `text` holds something that must never be committed: a configured secret (in
    /// any encoding) or a provider token; rule ids and byte ranges, in order.
    pub(crate) fn find_in_code(&self, text: &[u8]) -> Vec<(String, std::ops::Range<usize>)> {
        let mut locations = self.regex.capture_locations();
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(span) = self.next_span(text, from, text.len(), &mut locations) {
            if self.in_code[span.rule] {
                found.push((self.ids[span.rule].clone(), span.cut_start..span.cut_end));
            }
            from = span.resume;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::rules::base64_url;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    const SECRET: &str = "s3cr3t-V@lue/with+odd&chars\"x";

    fn redactor() -> Redactor {
        let secrets = [Secret {
            name: "MY_TOKEN".to_owned(),
            value: SECRET.to_owned(),
        }];
        match Redactor::new(&secrets) {
            Ok(redactor) => redactor,
            Err(error) => panic!("rules compile: {error}"),
        }
    }

    /// Redact `input` fed in the given chunk sizes (cycled), returning text and counts.
    fn redact_chunked(redactor: &Redactor, input: &[u8], sizes: &[usize]) -> (String, Counts) {
        let mut out = Vec::new();
        let mut stream = redactor.stream();
        let mut rest = input;
        for size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at((*size).min(rest.len()));
            stream.push(chunk, &mut |b: &[u8]| out.extend_from_slice(b));
            rest = tail;
        }
        stream.finish(&mut |b: &[u8]| out.extend_from_slice(b));
        let mut counts = Counts::new();
        stream.add_counts(&mut counts);
        (String::from_utf8_lossy(&out).into_owned(), counts)
    }

    fn counts(pairs: &[(&str, u64)]) -> Counts {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn token_patterns_are_replaced_by_rule_id() {
        let gh = format!("ghp_{}", "a".repeat(36));
        let pat = format!("github_pat_{}", "B_c".repeat(30));
        let ant = format!("sk-ant-api03-{}", "x".repeat(40));
        let oai = format!("sk-proj-{}", "Y".repeat(48));
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc==\n-----END RSA PRIVATE KEY-----";
        let input = format!(
            "gh={gh} pat={pat}\nant={ant} oai={oai}\naws=AKIAIOSFODNN7EXAMPLE slack=xoxb-1234567890-abcdef\njwt {jwt}\n{pem}\nend\n"
        );
        let (text, found) = redact_chunked(&redactor(), input.as_bytes(), &[usize::MAX]);
        insta::assert_snapshot!(text, @r"
        gh=[REDACTED:github-token] pat=[REDACTED:github-token]
        ant=[REDACTED:anthropic-key] oai=[REDACTED:openai-key]
        aws=[REDACTED:aws-access-key] slack=[REDACTED:slack-token]
        jwt [REDACTED:jwt]
        [REDACTED:private-key]
        end
        ");
        assert_eq!(
            found,
            counts(&[
                ("anthropic-key", 1),
                ("aws-access-key", 1),
                ("github-token", 2),
                ("jwt", 1),
                ("openai-key", 1),
                ("private-key", 1),
                ("slack-token", 1),
            ])
        );
    }

    #[test]
    fn ordinary_words_that_resemble_prefixes_are_kept() {
        let input = "task-assessment-module-version-two risk-x AKIA123 eyJ.eyJ. xoxb-short\n";
        let (text, found) = redact_chunked(&redactor(), input.as_bytes(), &[usize::MAX]);
        assert_eq!((text.as_str(), found), (input, Counts::new()));
    }

    #[test]
    fn secret_in_every_encoding_never_survives() {
        let mut input = format!("raw {SECRET}\n");
        for prefix in ["", "a", "ab"] {
            let blob = STANDARD.encode(format!("{prefix}{SECRET}trailing"));
            input.push_str(&format!("b64 {blob}\n"));
            let url_blob = base64_url(format!("{prefix}{SECRET}").as_bytes());
            input.push_str(&format!("b64url {url_blob}\n"));
        }
        let url = "s3cr3t-V%40lue%2Fwith%2Bodd%26chars%22x";
        let lower = "s3cr3t-V%40lue%2fwith%2bodd%26chars%22x";
        input.push_str(&format!("url {url} lower {lower}\n"));
        let json = serde_json::to_string(&serde_json::json!({ "k": SECRET })).unwrap_or_default();
        input.push_str(&format!("json {json}\n"));
        for sizes in [&[usize::MAX][..], &[1], &[7, 3, 64]] {
            let (text, found) = redact_chunked(&redactor(), input.as_bytes(), sizes);
            assert!(!text.contains("s3cr3t"), "{text}");
            assert!(!text.contains("V@lue"), "{text}");
            assert_eq!(found, counts(&[("env:MY_TOKEN", 10)]), "{text}");
        }
    }

    #[test]
    fn secret_split_across_large_chunks_is_still_redacted() {
        let redactor = redactor();
        let filler = "x".repeat(BATCH_BYTES + redactor.window);
        let input = format!("{filler}{SECRET}{filler}");
        let split = filler.len() + SECRET.len() / 2;
        let (text, found) = redact_chunked(&redactor, input.as_bytes(), &[split, usize::MAX]);
        assert_eq!(
            (text.len(), found),
            (
                2 * filler.len() + "[REDACTED:env:MY_TOKEN]".len(),
                counts(&[("env:MY_TOKEN", 1)])
            )
        );
    }

    #[test]
    fn private_key_longer_than_the_bound_still_loses_its_header() {
        let body = "A".repeat(super::super::rules::PRIVATE_KEY_BODY_MAX_BYTES + 10);
        let input = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
        let (text, found) = redact_chunked(&redactor(), input.as_bytes(), &[4096]);
        assert_eq!(
            (text.starts_with("[REDACTED:private-key]\nAAA"), found),
            (true, counts(&[("private-key", 1)]))
        );
    }

    #[test]
    fn output_without_matches_is_passed_through_unchanged_in_any_chunking() {
        let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let (expected, _) = (String::from_utf8_lossy(&input).into_owned(), ());
        let (text, found) = redact_chunked(&redactor(), &input, &[65_536, 1, 300_000]);
        assert_eq!((text, found), (expected, Counts::new()));
    }
}
