//! The token formats of the credentials people actually hold, as their providers document
//! them: GitHub, GitLab, OpenAI, Anthropic, AWS, Slack, npm, PyPI, Google, Stripe, Hugging
//! Face, Docker Hub, Sentry, Twilio, SendGrid, Shopify, DigitalOcean, Azure storage and SAS,
//! private keys (a GCP service account's `private_key` included), JWTs, and the credentials
//! that are not token-shaped but sit in a recognisable place: a URL's `user:password@`, the
//! `Authorization:` and `Cookie:` header values.
//!
//! Each rule says whether it also guards code (`check.secret-in-change`): provider tokens and
//! keys do; the place-based rules and JWTs do not, since test fixtures legitimately hold
//! `postgres://test:test@localhost` and sample tokens.
//!
//! It does not scan; `redact` compiles these with the configured secrets into one regex.
//! Every pattern starts with a literal of at least three bytes, and the whole table yields at
//! most 50 distinct prefixes (a test checks it), so the regex engine can hand the search to
//! its SIMD prefilter (Teddy, which takes at most 64 literals, the configured secrets' forms
//! included); one two-letter prefix or a few more literals make every byte go through the
//! automaton instead, two to four times slower. Variants are folded into character classes
//! after the literal (`shp[a-z]{2}_`, not `shp(?:at|ca|pa|ss)_`) for that reason.

use super::rules::{Extent, PRIVATE_KEY_BEGIN, Rule, TokenClass};

/// Whether a rule also refuses a change that adds a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Output and code.
    Everywhere,
    /// Output only.
    Output,
}

/// The token-format rules, in priority order (an earlier rule wins at the same position, so
/// `sk-ant-` is tried before `sk-`).
///
/// Token tails, private keys and JWTs are found by a short regex and finished by code: as
/// bounded repetitions in the regex (`.{0,8192}`, `{20,255}`) they made it take 40 ms to
/// compile, which every `efix exec` would pay, and slowed the scan. Literal prefixes come
/// first in every pattern, so the regex engine's prefilter skips most bytes.
pub(crate) fn pattern_rules() -> Vec<Rule> {
    use Scope::{Everywhere, Output};
    use TokenClass::{
        Alnum, AlnumDash, AlnumUnderscore, Base64Any, Base64Url, GitLab, NotLineEndOrQuote,
        NotSpaceOrQuote, UrlEncoded,
    };
    let run = |class, max_extra| Extent::Run { class, max_extra };
    let table = [
        (
            "private-key",
            PRIVATE_KEY_BEGIN,
            Extent::PrivateKeyBlock,
            Everywhere,
        ),
        (
            "github-token",
            r"gh[pousr]_[A-Za-z0-9]{20}",
            run(Alnum, 235),
            Everywhere,
        ),
        (
            "github-token",
            r"github_pat_[A-Za-z0-9_]{20}",
            run(AlnumUnderscore, 235),
            Everywhere,
        ),
        (
            "gitlab-token",
            r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20}",
            run(GitLab, 230),
            Everywhere,
        ),
        (
            "anthropic-key",
            r"\bsk-ant-[A-Za-z0-9_-]{20}",
            run(Base64Url, 235),
            Everywhere,
        ),
        (
            "openai-key",
            r"\bsk-[A-Za-z0-9_-]{20}",
            run(Base64Url, 235),
            Everywhere,
        ),
        (
            "aws-access-key",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            Extent::Regex,
            Everywhere,
        ),
        (
            "aws-secret-key",
            r#"(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|SecretAccessKey)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?[A-Za-z0-9/+]{40}\b"#,
            Extent::Value,
            Everywhere,
        ),
        (
            "slack-token",
            r"\bxox[a-z]-[A-Za-z0-9-]{10}",
            run(AlnumDash, 245),
            Everywhere,
        ),
        (
            "slack-token",
            r"\bxapp-[0-9]-[A-Za-z0-9-]{10}",
            run(AlnumDash, 245),
            Everywhere,
        ),
        (
            "slack-webhook",
            r"hooks\.slack\.com/services/T[A-Za-z0-9]{6,12}/B[A-Za-z0-9]{6,12}/[A-Za-z0-9]{20}",
            run(Alnum, 20),
            Everywhere,
        ),
        (
            "npm-token",
            r"\bnpm_[A-Za-z0-9]{36}\b",
            Extent::Regex,
            Everywhere,
        ),
        (
            "pypi-token",
            r"\bpypi-AgE[A-Za-z0-9_-]{40}",
            run(Base64Url, 1000),
            Everywhere,
        ),
        (
            "google-api-key",
            r"\bAIza[0-9A-Za-z_-]{35}",
            Extent::Regex,
            Everywhere,
        ),
        (
            "google-oauth-secret",
            r"\bGOCSPX-[A-Za-z0-9_-]{28}",
            Extent::Regex,
            Everywhere,
        ),
        (
            "google-oauth-token",
            r"\bya29\.[0-9A-Za-z_-]{20}",
            run(Base64Url, 1000),
            Everywhere,
        ),
        (
            "stripe-key",
            r"\b[rs]k_live_[0-9A-Za-z]{24}",
            run(Alnum, 75),
            Everywhere,
        ),
        (
            "stripe-webhook-secret",
            r"\bwhsec_[A-Za-z0-9]{32}",
            run(Alnum, 32),
            Everywhere,
        ),
        (
            "huggingface-token",
            r"\bhf_[A-Za-z0-9]{30}",
            run(Alnum, 20),
            Everywhere,
        ),
        (
            "docker-hub-token",
            r"\bdckr_[a-z]at_[A-Za-z0-9_-]{20}",
            run(Base64Url, 60),
            Everywhere,
        ),
        (
            "sentry-token",
            r"\bsntry[a-z]_[A-Za-z0-9+/=_]{40}",
            run(Base64Any, 400),
            Everywhere,
        ),
        (
            "sentry-dsn",
            r"://[0-9a-f]{32}@",
            Extent::Inner {
                keep_prefix: 3,
                keep_suffix: 1,
            },
            Output,
        ),
        (
            // Twilio's API key SIDs (`SK` + 32 hex) are identifiers, and a two-letter prefix
            // would make the scanner's prefilter useless; the secrets (auth tokens, API key
            // secrets) have no prefix, so they are recognised by the name they come with.
            "twilio-credential",
            r#"(?:TWILIO|twilio)[A-Za-z_]{0,24}(?:TOKEN|[Tt]oken|SECRET|[Ss]ecret|KEY|[Kk]ey|SID|[Ss]id)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:SK|AC)?[0-9A-Za-z]{32}\b"#,
            Extent::Value,
            Everywhere,
        ),
        (
            "sendgrid-key",
            r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
            Extent::Regex,
            Everywhere,
        ),
        (
            "shopify-token",
            r"\bshp[a-z]{2}_[a-fA-F0-9]{32}\b",
            Extent::Regex,
            Everywhere,
        ),
        (
            "digitalocean-token",
            r"\bdo[opr]_v1_[a-f0-9]{64}\b",
            Extent::Regex,
            Everywhere,
        ),
        (
            "azure-storage-key",
            r"AccountKey=[A-Za-z0-9+/]{86}==",
            Extent::Value,
            Everywhere,
        ),
        (
            "azure-shared-access-key",
            r"SharedAccessKey=[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=",
            Extent::Value,
            Everywhere,
        ),
        (
            "azure-sas-signature",
            r"sig=[A-Za-z0-9%+/]{20}",
            Extent::ValueRun {
                class: UrlEncoded,
                max_extra: 200,
            },
            Everywhere,
        ),
        (
            "url-credentials",
            r#"://[^\s:/@"'<>]{0,128}:[^\s/@"'<>]{1,256}@"#,
            Extent::Inner {
                keep_prefix: 3,
                keep_suffix: 1,
            },
            Output,
        ),
        (
            "authorization-header",
            r#"[Aa]uthorization["']?[ \t]{0,8}:[ \t]{0,8}["']?(?:[Bb]earer|[Bb]asic|[Tt]oken|[Dd]igest|[Bb]ot|[Nn]egotiate|NTLM|[Aa]pi[Kk]ey|AWS4-HMAC-SHA256)[ \t]{1,8}[^\s"']{4}"#,
            Extent::ValueRun {
                class: NotSpaceOrQuote,
                max_extra: 4092,
            },
            Output,
        ),
        (
            // `Set-Cookie:` ends in `Cookie:` and is matched there.
            "cookie-header",
            r#"[Cc]ookie["']?[ \t]{0,8}:[ \t]{0,8}["']?[A-Za-z0-9_.!#$%&*+^`|~-]{1,64}=[^\r\n"']"#,
            Extent::ValueRun {
                class: NotLineEndOrQuote,
                max_extra: 4095,
            },
            Output,
        ),
        ("jwt", r"\beyJ", Extent::Jwt, Output),
    ];
    table
        .into_iter()
        .map(|(id, pattern, extent, scope)| Rule {
            id: id.to_owned(),
            pattern: pattern.to_owned(),
            extent,
            in_code: scope == Everywhere,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::redact::{Counts, Redactor};

    /// A deterministic string of `len` characters from `alphabet`, so that no token-shaped
    /// literal sits in the source (secret scanners would flag it) and runs are repeatable.
    fn body(alphabet: &str, len: usize, seed: u64) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chars[(state % chars.len() as u64) as usize]
            })
            .collect()
    }

    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const HEX: &str = "0123456789abcdef";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    fn redact(redactor: &Redactor, text: &str) -> String {
        redactor.redact_text(text, &mut Counts::new())
    }

    /// One realistic credential per provider format (shaped as the provider documents it)
    /// with what must remain of its line, and a near miss that must stay as it is.
    fn cases() -> Vec<(&'static str, String, String, String)> {
        let gcp_key = format!(
            "-----BEGIN PRIVATE KEY-----\\n{}\\n{}\\n-----END PRIVATE KEY-----\\n",
            body(B64, 64, 40),
            body(B64, 64, 41)
        );
        let sas = format!(
            "{}%2B{}%2F{}%3D",
            body(ALNUM, 14, 42),
            body(ALNUM, 14, 43),
            body(ALNUM, 10, 44)
        );
        vec![
            (
                "github-token",
                format!("token ghp_{}", body(ALNUM, 36, 1)),
                "token [REDACTED:github-token]".to_owned(),
                "ghp_short".to_owned(),
            ),
            (
                "gitlab-token",
                format!("GITLAB=glpat-{}", body(B64URL, 20, 2)),
                "GITLAB=[REDACTED:gitlab-token]".to_owned(),
                "glpattern-matching is off".to_owned(),
            ),
            (
                "gitlab-token",
                format!("glpat-{}.01.{}", body(B64URL, 27, 3), body(ALNUM, 9, 4)),
                "[REDACTED:gitlab-token]".to_owned(),
                "gldt-short".to_owned(),
            ),
            (
                "openai-key",
                format!("OPENAI_API_KEY=sk-proj-{}", body(B64URL, 48, 5)),
                "OPENAI_API_KEY=[REDACTED:openai-key]".to_owned(),
                "import sk-learn-style".to_owned(),
            ),
            (
                "anthropic-key",
                format!("sk-ant-api03-{}AA", body(B64URL, 93, 6)),
                "[REDACTED:anthropic-key]".to_owned(),
                "sk-ant-short".to_owned(),
            ),
            (
                "aws-access-key",
                format!("id AKIA{}", body(UPPER, 16, 7)),
                "id [REDACTED:aws-access-key]".to_owned(),
                "AKIA123 ASIAN".to_owned(),
            ),
            (
                "aws-secret-key",
                format!("aws_secret_access_key = {}", body(B64, 40, 8)),
                "aws_secret_access_key = [REDACTED:aws-secret-key]".to_owned(),
                "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}".to_owned(),
            ),
            (
                "slack-token",
                format!("xoxb-1234567890-1234567890123-{}", body(ALNUM, 24, 9)),
                "[REDACTED:slack-token]".to_owned(),
                "xoxb-short".to_owned(),
            ),
            (
                "slack-webhook",
                format!(
                    "https://hooks.slack.com/services/T{}/B{}/{}",
                    body(UPPER, 8, 10),
                    body(UPPER, 10, 11),
                    body(ALNUM, 24, 12)
                ),
                "https://[REDACTED:slack-webhook]".to_owned(),
                "see https://hooks.slack.com/services/ for setup".to_owned(),
            ),
            (
                "npm-token",
                format!("//registry.npmjs.org/:_authToken=npm_{}", body(ALNUM, 36, 13)),
                "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]".to_owned(),
                "npm_config_cache=/home/u/.npm".to_owned(),
            ),
            (
                "pypi-token",
                format!("password = pypi-AgEIcHlwaS5vcmc{}", body(B64URL, 150, 14)),
                "password = [REDACTED:pypi-token]".to_owned(),
                "index-url = pypi-simple-mirror".to_owned(),
            ),
            (
                "google-api-key",
                format!("key=AIza{}", body(B64URL, 35, 15)),
                "key=[REDACTED:google-api-key]".to_owned(),
                "AIzaShort".to_owned(),
            ),
            (
                "google-oauth-secret",
                format!("client_secret GOCSPX-{}", body(B64URL, 28, 16)),
                "client_secret [REDACTED:google-oauth-secret]".to_owned(),
                "GOCSPX-abc".to_owned(),
            ),
            (
                "stripe-key",
                format!("sk_live_{}", body(ALNUM, 99, 17)),
                "[REDACTED:stripe-key]".to_owned(),
                format!("pk_live_{}", body(ALNUM, 24, 18)),
            ),
            (
                "stripe-key",
                format!("rk_live_{}", body(ALNUM, 24, 19)),
                "[REDACTED:stripe-key]".to_owned(),
                "sk_live_short".to_owned(),
            ),
            (
                "huggingface-token",
                format!("HF_TOKEN=hf_{}", body(LETTERS, 34, 20)),
                "HF_TOKEN=[REDACTED:huggingface-token]".to_owned(),
                "from huggingface_hub import hf_hub_download".to_owned(),
            ),
            (
                "docker-hub-token",
                format!("docker login -p dckr_pat_{}", body(B64URL, 27, 21)),
                "docker login -p [REDACTED:docker-hub-token]".to_owned(),
                "dckr_pat_x".to_owned(),
            ),
            (
                "sentry-token",
                format!("SENTRY_AUTH_TOKEN=sntryu_{}", body(HEX, 64, 22)),
                "SENTRY_AUTH_TOKEN=[REDACTED:sentry-token]".to_owned(),
                "sntryu_short".to_owned(),
            ),
            (
                "sentry-dsn",
                format!("dsn https://{}@o447951.ingest.sentry.io/5456", body(HEX, 32, 23)),
                "dsn https://[REDACTED:sentry-dsn]@o447951.ingest.sentry.io/5456".to_owned(),
                "https://o447951.ingest.sentry.io/5456".to_owned(),
            ),
            (
                "twilio-credential",
                format!("TWILIO_AUTH_TOKEN={}", body(HEX, 32, 24)),
                "TWILIO_AUTH_TOKEN=[REDACTED:twilio-credential]".to_owned(),
                format!("twilio account AC{}", body(HEX, 32, 25)),
            ),
            (
                "twilio-credential",
                format!("twilio_api_key: SK{}", body(HEX, 32, 26)),
                "twilio_api_key: [REDACTED:twilio-credential]".to_owned(),
                "TWILIO_AUTH_TOKEN=${TWILIO_AUTH_TOKEN}".to_owned(),
            ),
            (
                "sendgrid-key",
                format!("SG.{}.{}", body(B64URL, 22, 26), body(B64URL, 43, 27)),
                "[REDACTED:sendgrid-key]".to_owned(),
                "SG.short.value".to_owned(),
            ),
            (
                "shopify-token",
                format!("shpat_{}", body(HEX, 32, 28)),
                "[REDACTED:shopify-token]".to_owned(),
                format!("shpat_{}", body("ghijklmnopqrstuvwxyz", 32, 29)),
            ),
            (
                "digitalocean-token",
                format!("dop_v1_{}", body(HEX, 64, 30)),
                "[REDACTED:digitalocean-token]".to_owned(),
                "dop_v1_short".to_owned(),
            ),
            (
                "azure-storage-key",
                format!(
                    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;EndpointSuffix=core.windows.net",
                    body(B64, 86, 31)
                ),
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net"
                    .to_owned(),
                "AccountName=devstoreaccount1;AccountKey=short==".to_owned(),
            ),
            (
                "azure-shared-access-key",
                format!(
                    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}A=",
                    body(B64, 42, 32)
                ),
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:azure-shared-access-key]"
                    .to_owned(),
                "SharedAccessKeyName=RootManageSharedAccessKey".to_owned(),
            ),
            (
                "azure-sas-signature",
                format!("https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig={sas}"),
                "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=[REDACTED:azure-sas-signature]"
                    .to_owned(),
                "https://acct.blob.core.windows.net/c/b.txt?signal=1&sig=abc".to_owned(),
            ),
            (
                "private-key",
                format!(r#"{{"type": "service_account", "private_key": "{gcp_key}", "client_email": "bot@p.iam.gserviceaccount.com"}}"#),
                r#"{"type": "service_account", "private_key": "[REDACTED:private-key]\n", "client_email": "bot@p.iam.gserviceaccount.com"}"#
                    .to_owned(),
                r#"{"private_key_id": "0123456789abcdef", "client_id": "1234"}"#.to_owned(),
            ),
            (
                "url-credentials",
                "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app".to_owned(),
                "DATABASE_URL=postgres://[REDACTED:url-credentials]@db.internal:5432/app"
                    .to_owned(),
                "https://example.com:8443/health and git@github.com:org/repo.git".to_owned(),
            ),
            (
                "authorization-header",
                format!("> Authorization: Bearer {}", body(B64URL, 40, 33)),
                "> Authorization: [REDACTED:authorization-header]".to_owned(),
                "Authorization header is missing; authorization: denied".to_owned(),
            ),
            (
                "cookie-header",
                format!("Cookie: sessionid={}; csrftoken={}", body(ALNUM, 32, 34), body(ALNUM, 32, 35)),
                "Cookie: [REDACTED:cookie-header]".to_owned(),
                "Cookie: none (cookies=3)".to_owned(),
            ),
            (
                "cookie-header",
                format!("< Set-Cookie: sid={}; Path=/; HttpOnly", body(ALNUM, 32, 36)),
                "< Set-Cookie: [REDACTED:cookie-header]".to_owned(),
                "set-cookie handling is tested below".to_owned(),
            ),
            (
                "aws-secret-key",
                format!(r#""SecretAccessKey": "{}","#, body(B64, 40, 37)),
                r#""SecretAccessKey": "[REDACTED:aws-secret-key]","#.to_owned(),
                r#""AccessKeyId": "placeholder","#.to_owned(),
            ),
        ]
    }

    #[test]
    fn every_documented_format_is_redacted_and_its_near_miss_kept() {
        let redactor = Redactor::new(&[]).unwrap_or_else(|error| panic!("rules: {error}"));
        let cases = cases();
        let observed: Vec<(&str, String, String)> = cases
            .iter()
            .map(|(id, example, _, near)| {
                (*id, redact(&redactor, example), redact(&redactor, near))
            })
            .collect();
        let expected: Vec<(&str, String, String)> = cases
            .iter()
            .map(|(id, _, redacted, near)| (*id, redacted.clone(), near.clone()))
            .collect();
        assert_eq!(observed, expected);
    }

    #[test]
    fn provider_tokens_guard_code_but_fixture_shaped_credentials_do_not() {
        let redactor = Redactor::new(&[]).unwrap_or_else(|error| panic!("rules: {error}"));
        let code = format!(
            "TOKEN = \"ghp_{}\"\nDB = \"postgres://test:test@localhost/test\"\nJWT = \"{}\"\n",
            body(ALNUM, 36, 50),
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"
        );
        let found: Vec<String> = redactor
            .find_in_code(code.as_bytes())
            .into_iter()
            .map(|(id, range)| format!("{id}@{}", range.start))
            .collect();
        assert_eq!(found, vec!["github-token@9".to_owned()]);
    }

    /// The most prefix literals the token table may yield, leaving room within Teddy's 64 for
    /// the literal forms of configured secrets.
    const PREFIX_LITERALS_MAX: usize = 50;

    #[test]
    fn the_table_keeps_the_prefilter_fast() {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let rules = super::pattern_rules();
        let combined = rules
            .iter()
            .map(|rule| format!("(?:{})", rule.pattern))
            .collect::<Vec<_>>()
            .join("|");
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(&format!("(?-u){combined}"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut extractor = Extractor::new();
        extractor.kind(ExtractKind::Prefix);
        let mut seq = extractor.extract(&hir);
        seq.optimize_for_prefix_by_preference();
        let literals: Vec<String> = seq
            .literals()
            .unwrap_or_default()
            .iter()
            .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
            .collect();
        let shortest = literals.iter().map(String::len).min().unwrap_or(0);
        assert!(
            !literals.is_empty() && literals.len() <= PREFIX_LITERALS_MAX && shortest >= 3,
            "{} prefix literals (at most {}), shortest {shortest}: {literals:?}",
            literals.len(),
            PREFIX_LITERALS_MAX
        );
    }
}
