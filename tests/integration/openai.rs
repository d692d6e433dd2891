//! `efix run --engine openai` against the stand-in server: the real fix of a real bug after a
//! 429, structured-output requests that the official request schema accepts, usage and the
//! model recorded per call, the key nowhere but the request header, the fallback to text,
//! retries, timeouts, refusals, cut-off answers, errors that end the run, budgets and secrets
//! in prompts.

use std::time::Duration;

use serde_json::{Value, json};

use crate::engines::{
    FIX_DIFF, KEY, artifacts_text, clamp_repo, fix_answer, fix_edits, outcomes, plan_answer, run,
};
use crate::harness::{Efix, Run};
use crate::openai_server::{Reply, Server};

/// `efix run --engine openai` against `server` with `config`.
fn run_openai(repo: &crate::harness::Repo, server: &Server, config: &str) -> (Run, Value) {
    run(
        repo,
        "openai",
        config,
        &[
            ("EFIX_OPENAI_BASE_URL", &server.url),
            ("OPENAI_API_KEY", KEY),
        ],
    )
}

/// Every request is a valid chat-completions request.
fn assert_valid(server: &Server) {
    for (index, request) in server.requests().iter().enumerate() {
        assert_eq!(
            request.schema_errors,
            Vec::<String>::new(),
            "request {index} breaks the chat-completions schema: {}",
            request.body
        );
    }
}

/// The key never left efix except in the request header.
fn assert_key_nowhere(repo: &crate::harness::Repo, run: &Run, evidence: &Value) {
    assert!(
        !artifacts_text(repo).contains(KEY),
        "the key is in an artifact"
    );
    assert!(!run.stdout().contains(KEY) && !run.stderr().contains(KEY));
    for command in evidence["commands"].as_array().unwrap() {
        let passed = &command["outcome"]["sandbox"]["env_passed"];
        assert!(
            !passed
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n == "OPENAI_API_KEY"),
            "the key's variable reached `{}`",
            command["command"]
        );
        // A listing names every test and runs none.
        if command["purpose"] == "suite-listing" {
            continue;
        }
        // The test is named only when it fails (a per-test rerun lists it as `PASSED` too).
        let stdout = command["outcome"]["stdout"].as_str().unwrap_or_default();
        assert!(
            !stdout.lines().any(|line| {
                line.contains("test_the_engine_key_never_reaches_a_test")
                    && !line.starts_with("PASSED ")
            }),
            "a test saw the key: {stdout}"
        );
    }
}

#[test]
fn the_real_fix_after_a_429_is_proven_with_valid_structured_requests() {
    let repo = clamp_repo(&[]);
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::error(429, "Rate limit reached").header("retry-after", "0"),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let (run, evidence) = run(
        &repo,
        "openai",
        "",
        &[
            ("EFIX_OPENAI_BASE_URL", &server.url),
            ("OPENAI_API_KEY", KEY),
            ("EFIX_LOG", "trace"),
        ],
    );
    let run = run.expect_code(0);
    assert_eq!(run.json()["status"], "fixed");
    assert!(repo.read("calc.py").contains("min(value, high)"));
    // Logs carry sizes, counts and durations: no prompt and no answer, even at trace level.
    let logs = run.stderr();
    assert!(logs.contains("engine call"), "{logs}");
    for content in [
        "Limit value to the range",
        "clamp uses low as the upper bound",
        "test_at_the_upper_bound",
    ] {
        assert!(!logs.contains(content), "the logs hold `{content}`");
    }

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&server);
    let names: Vec<&Value> = requests
        .iter()
        .map(|r| &r.body["response_format"]["json_schema"]["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("efix_plan"), &json!("efix_fix"), &json!("efix_fix")]
    );
    for request in &requests {
        assert_eq!(request.target, "/v1/chat/completions");
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(
            request.body["response_format"]["json_schema"]["strict"],
            true
        );
        assert_eq!(request.body["model"], "gpt-4o-mini");
        assert_eq!(request.body["messages"][0]["role"], "system");
    }
    assert_eq!(
        requests[1].body, requests[2].body,
        "a retry sends the same request"
    );

    let calls = &evidence["engine"]["calls"];
    assert_eq!(outcomes(&evidence), ["answered", "answered"]);
    assert_eq!(calls[0]["retries"], 0);
    assert_eq!(calls[1]["retries"], 1);
    for call in calls.as_array().unwrap() {
        assert_eq!(
            call["usage"],
            json!({"prompt-tokens": 1200, "completion-tokens": 300, "cached-tokens": 200})
        );
        assert_eq!(call["model"], "stand-in-model-2025");
    }
    let body = std::fs::read_to_string(crate::engines::beside(&repo).join("artifacts/pr-body.md"))
        .unwrap();
    assert!(
        body.contains("2400 prompt (400 cached) + 600 completion tokens"),
        "{body}"
    );
    assert!(body.contains("| 2 fix | 1 | answered | stand-in-model-2025 | 1200 / 200 / 300 |"));
    assert_key_nowhere(&repo, &run, &evidence);
}

#[test]
fn a_server_that_rejects_json_schema_gets_plain_text_from_then_on() {
    let repo = clamp_repo(&[]);
    let server = Server::start(vec![
        Reply::error(
            400,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        ),
        Reply::content(&plan_answer().to_string()),
        Reply::content(FIX_DIFF),
    ]);
    let config = "openai:\n  api-key-env: \"\"\nprompts:\n  fix-format: diff\n";
    let (run, evidence) = run_openai(&repo, &server, config);
    run.expect_code(0);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&server);
    assert!(requests[0].body.get("response_format").is_some());
    assert!(requests[1].body.get("response_format").is_none());
    assert!(
        requests[2].body.get("response_format").is_none(),
        "the fallback sticks"
    );
    assert!(
        requests.iter().all(|r| r.header("authorization").is_none()),
        "api-key-env: \"\" sends no key"
    );
    let fallback = evidence["engine"]["calls"][0]["fallback"].as_str().unwrap();
    assert!(
        fallback.starts_with("the server rejected structured output (HTTP 400"),
        "{fallback}"
    );
    assert_eq!(evidence["engine"]["calls"][1]["fallback"], Value::Null);
    let prompt = requests[2].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("Put the change in `output`"),
        "fix-format: diff asks for a diff"
    );
}

#[test]
fn errors_timeouts_and_broken_json_are_retried_or_fall_back() {
    let repo = clamp_repo(&[]);
    let server = Server::start(vec![
        Reply::error(500, "upstream exploded"),
        Reply::content(&plan_answer().to_string()),
        Reply::content("{}").after(Duration::from_secs(3)),
        Reply::content("Here is the fix you asked for!"),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let config = "openai:\n  timeout-ms: 1000\n  max-retries: 2\n";
    let (run, evidence) = run_openai(&repo, &server, config);
    run.expect_code(0);
    assert_valid(&server);
    let calls = &evidence["engine"]["calls"];
    assert_eq!(calls[0]["retries"], 1, "the 500 was retried");
    assert_eq!(
        calls[1]["retries"], 1,
        "the hang past timeout-ms was retried"
    );
    let fallback = calls[1]["fallback"].as_str().unwrap();
    assert!(
        fallback.starts_with("the server's answer was not the JSON object"),
        "{fallback}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(requests[4].body.get("response_format").is_none());
    // Both answers of the fixed call count.
    assert_eq!(calls[1]["usage"]["prompt-tokens"], 2400);
}

#[test]
fn refusals_cut_answers_and_broken_bodies_are_recorded_outcomes() {
    let repo = clamp_repo(&[]);
    let before = repo.fingerprint();
    let server = Server::start(vec![
        Reply::raw(200, "{\"choices\": [oops"),
        Reply::completion(
            json!({"role": "assistant", "content": "{\"output\": \"--- a/ca"}),
            "length",
        ),
        Reply::completion(
            json!({"role": "assistant", "content": null, "refusal": "I can't help with that."}),
            "stop",
        ),
    ]);
    let (run, evidence) = run_openai(&repo, &server, "");
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(outcomes(&evidence), ["failed", "truncated", "refused"]);
    let calls = &evidence["engine"]["calls"];
    assert!(
        calls[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("read the server's answer: it is not a chat completion"),
        "{}",
        calls[0]["error"]
    );
    assert_eq!(calls[2]["detail"], "I can't help with that.");
    assert_eq!(evidence["rounds"][0]["verdict"], "engine-failed");
    assert_eq!(
        evidence["result"]["reason"],
        "the engine gave no answer in round 1: the model refused: I can't help with that."
    );
    assert_eq!(
        evidence["rounds"][0]["attempts"][0]["patch"]["issues"][0]["rule"],
        "contract.truncated"
    );
    // The retry's prompt says what was wrong with the answer, fenced as data.
    let retry = server.requests()[2].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        retry.contains("Your previous answer could not be used"),
        "{retry}"
    );
    assert!(
        retry.contains(": efix's findings>>>\n- [contract.truncated]"),
        "{retry}"
    );
}

#[test]
fn the_second_round_gets_the_first_rounds_blocking_issues_and_change() {
    let repo = clamp_repo(&[]);
    // Round one drops the lower bound: the reproduction passes, another test breaks.
    let wrong = json!([{"path": "calc.py", "old_text": "    return max(low, min(value, low))\n",
        "new_text": "    return min(value, high)\n"}]);
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::content(&fix_answer(wrong).to_string()),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let (run, evidence) = run_openai(&repo, &server, "");
    run.expect_code(0);
    assert_eq!(evidence["rounds"][0]["verdict"], "proof-failed");
    let first_issue = evidence["rounds"][0]["issues"][0]["rule"]
        .as_str()
        .unwrap()
        .to_owned();
    let round_two = server.requests()[2].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(round_two.contains("This is round 2."), "{round_two}");
    assert!(
        round_two.contains("Your previous change was not kept"),
        "{round_two}"
    );
    assert!(
        round_two.contains(&format!("- [{first_issue}]")),
        "{round_two}"
    );
    assert!(
        round_two
            .contains(": your previous change, as a diff>>>\ndiff --git a/calc.py b/calc.py\n"),
        "{round_two}"
    );
}

#[test]
fn a_401_ends_the_run_at_once_with_the_servers_message_redacted() {
    let repo = clamp_repo(&[]);
    let server = Server::start(vec![Reply::error(
        401,
        &format!("Incorrect API key provided: {KEY}."),
    )]);
    let (run, evidence) = run_openai(&repo, &server, "");
    let run = run.expect_code(1);
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");
    let reason = evidence["result"]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "the engine could not be used: the server answered HTTP 401: Incorrect API key provided: \
         [REDACTED:env:OPENAI_API_KEY].; check the API key in $OPENAI_API_KEY and that it may \
         use model gpt-4o-mini"
    );
    assert!(run.stderr().contains("[REDACTED:env:OPENAI_API_KEY]"));
    assert_key_nowhere(&repo, &run, &evidence);
    assert!(evidence["rounds"].as_array().unwrap().is_empty());
}

#[test]
fn a_token_budget_smaller_than_the_run_needs_stops_with_partial_evidence() {
    let repo = clamp_repo(&[]);
    let before = repo.fingerprint();
    let server = Server::start(vec![Reply::content(&plan_answer().to_string())]);
    let (run, evidence) = run_openai(&repo, &server, "budget:\n  max-tokens: 1000\n");
    run.expect_code(1);
    assert_eq!(repo.fingerprint(), before);
    assert_eq!(
        server.requests().len(),
        1,
        "no call after the budget is spent"
    );
    assert_eq!(evidence["result"]["status"], "budget-exhausted");
    assert_eq!(
        evidence["result"]["reason"],
        "the token budget is spent: 1500 tokens used, budget.max-tokens is 1000; the run stopped \
         in round 1"
    );
    assert_eq!(outcomes(&evidence), ["answered", "skipped-budget"]);
    assert_eq!(evidence["rounds"][0]["verdict"], "stopped");
    let body = std::fs::read_to_string(crate::engines::beside(&repo).join("artifacts/pr-body.md"))
        .unwrap();
    assert!(body.contains("not sent: budget spent"), "{body}");
}

/// A committed token in the module the fix changes.
const TOKEN_LINE: &str = "# deploy token: ghp_efixtest0123456789abcdefghijklmnopqrst\n";

#[test]
fn a_prompt_holding_a_secret_is_not_sent_by_default() {
    let calc = format!("{TOKEN_LINE}{}", crate::engines::CALC);
    let repo = clamp_repo(&[("calc.py", &calc)]);
    let server = Server::start(vec![Reply::content(&plan_answer().to_string())]);
    let (run, evidence) = run_openai(&repo, &server, "");
    run.expect_code(1);
    // The plan prompt names files but shows none; the fix prompt shows calc.py.
    assert_eq!(server.requests().len(), 1);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.body.to_string().contains("ghp_efixtest"))
    );
    assert_eq!(outcomes(&evidence), ["answered", "skipped-secrets"]);
    assert_eq!(
        evidence["engine"]["calls"][1]["secrets"],
        json!({"count": 1, "rules": ["github-token"], "action": "deny",
               "detections": [{"rule": "github-token", "file": "calc.py", "line": 1}]})
    );
    let reason = evidence["result"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("security.secrets-in-prompt is deny"),
        "{reason}"
    );
}

/// A URL library's test data holds credentials that are placeholders: they are recorded with
/// their file and line and sent, and the fix is proven with the default `deny` (every round
/// was refused before: `security.secrets-in-prompt`).
#[test]
fn placeholder_credentials_in_test_data_are_sent_and_recorded_not_refused() {
    let calc = format!(
        "# usage: fetch(\"https://user:pass@example.com/api\") or postgres://test:test@localhost/db\n{}",
        crate::engines::CALC
    );
    let repo = clamp_repo(&[("calc.py", &calc)]);
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let (run, evidence) = run_openai(&repo, &server, "");
    run.expect_code(0);
    assert!(
        server.requests()[1]
            .body
            .to_string()
            .contains("https://user:pass@example.com/api")
    );
    assert_eq!(
        evidence["engine"]["calls"][1]["secrets"],
        json!({"count": 0, "rules": [], "action": "deny", "detections": [
            {"rule": "url-credentials", "file": "calc.py", "line": 1,
             "placeholder": "the host `example.com` is reserved for examples and tests"},
            {"rule": "url-credentials", "file": "calc.py", "line": 1,
             "placeholder": "the host `localhost` is reserved for examples and tests"},
        ]})
    );
    let body = std::fs::read_to_string(crate::engines::beside(&repo).join("artifacts/pr-body.md"))
        .unwrap();
    assert!(body.contains("sent as test data, not secrets"), "{body}");
}

#[test]
fn tokenized_secrets_go_out_as_placeholders_and_come_back_only_in_the_files() {
    let calc = format!("{TOKEN_LINE}{}", crate::engines::CALC);
    let repo = clamp_repo(&[("calc.py", &calc)]);
    let mut edits = fix_edits();
    edits[0]["old_text"] = json!(format!(
        "# deploy token: EFIX_SECRET_1\n{}",
        crate::engines::CALC
    ));
    edits[0]["new_text"] = json!(format!(
        "# deploy token: EFIX_SECRET_1\n{}",
        crate::engines::CALC.replace("min(value, low)", "min(value, high)")
    ));
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::content(&fix_answer(edits).to_string()),
    ]);
    let config = "security:\n  secrets-in-prompt: tokenize\n";
    let (run, evidence) = run_openai(&repo, &server, config);
    run.expect_code(0);
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .all(|r| !r.body.to_string().contains("ghp_efixtest"))
    );
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("# deploy token: EFIX_SECRET_1")
    );
    assert_eq!(
        repo.read("calc.py"),
        format!(
            "{TOKEN_LINE}{}",
            crate::engines::CALC.replace("min(value, low)", "min(value, high)")
        )
    );
    assert_eq!(
        evidence["engine"]["calls"][1]["secrets"],
        json!({"count": 1, "rules": ["github-token"], "action": "tokenize",
               "detections": [{"rule": "github-token", "file": "calc.py", "line": 1}]})
    );
}

#[test]
fn azure_gets_its_header_and_api_version() {
    let repo = clamp_repo(&[]);
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let config = "openai:\n  flavor: azure\n  api-key-env: AZURE_OPENAI_API_KEY\n";
    let base = format!("{}/openai/deployments/fixer", server.url);
    let (run, _) = run(
        &repo,
        "openai",
        config,
        &[
            ("EFIX_OPENAI_BASE_URL", &base),
            ("AZURE_OPENAI_API_KEY", KEY),
        ],
    );
    run.expect_code(0);
    assert_valid(&server);
    for request in server.requests() {
        assert_eq!(
            request.target,
            "/v1/openai/deployments/fixer/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(request.header("api-key"), Some(KEY));
        assert_eq!(request.header("authorization"), None);
    }
}

#[test]
fn a_missing_key_is_a_usage_error_naming_the_variable() {
    let repo = clamp_repo(&[]);
    let run = Efix::new()
        .args(["run", "--repro", "pytest", "--engine", "openai", "--repo"])
        .args([&repo.root])
        .run()
        .expect_code(2);
    insta::assert_snapshot!(run.stderr(), @r#"efix: error: failed to read the API key: the environment variable OPENAI_API_KEY is not set; set it, or set `openai.api-key-env: ""` for a server that needs no key (Ollama, vLLM, llama.cpp)"#);
}

#[test]
fn candidates_are_k_requests_and_the_next_round_hears_every_candidates_refusal() {
    let repo = clamp_repo(&[]);
    // Round one: two wrong candidates (one breaks another test, one changes nothing that
    // matters); round two: a wrong one and the real fix.
    let breaks = json!([{"path": "calc.py", "old_text": "    return max(low, min(value, low))\n",
        "new_text": "    return min(value, high)\n"}]);
    let idle = json!([{"path": "calc.py", "old_text": "    \"\"\"Limit value to the range [low, high].\"\"\"\n",
        "new_text": "    \"\"\"Limit value to [low, high].\"\"\"\n"}]);
    let server = Server::start(vec![
        Reply::content(&plan_answer().to_string()),
        Reply::content(&fix_answer(breaks.clone()).to_string()),
        Reply::content(&fix_answer(idle).to_string()),
        Reply::content(&fix_answer(breaks).to_string()),
        Reply::content(&fix_answer(fix_edits()).to_string()),
    ]);
    let (run, evidence) = run_openai(&repo, &server, "fix:\n  candidates: 2\n");
    run.expect_code(0);
    assert_eq!(server.requests().len(), 5);
    let first = &evidence["rounds"][0];
    assert_eq!(first["verdict"], "proof-failed");
    let round_two = server.requests()[3].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(round_two.contains("This is round 2."), "{round_two}");
    for (i, issue) in first["issues"].as_array().unwrap().iter().enumerate() {
        let rule = issue["rule"].as_str().unwrap();
        assert!(
            round_two.contains(&format!("- [{rule}] candidate {} (", i + 1)),
            "{round_two}"
        );
    }
    let second = &evidence["rounds"][1];
    assert_eq!(second["verdict"], "proven");
    assert_eq!(second["candidates"][1]["verdict"], "won");
    assert_eq!(second["candidates"][0]["verdict"], "refused");
    assert_eq!(evidence["fix"]["round"], 2);
}
