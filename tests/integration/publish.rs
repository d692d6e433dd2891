//! `efix publish` against the stand-in GitHub (`github_api`), after real runs on the demo
//! crate: the published commit holds exactly the fixed tree on the recorded base, the pull
//! request carries the rendered title and body, an open pull request is updated instead of
//! duplicated, a failed run only comments, an edited artifact is refused (by verify too), and
//! GitHub's refusals come back with their remedy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::github_api::{FakeGithub, REPOSITORY, TOKEN};
use crate::harness::{Efix, Repo, replay_file, stable};
use crate::http::HttpResponse;

const REPRO: &str = "cargo test crlf";

/// A finished run: its repository and artifacts directory (shared by the tests, read only).
pub struct Finished {
    pub repo: Repo,
    pub artifacts: PathBuf,
}

fn finish(fix: Value, code: i32) -> Finished {
    let repo = Repo::demo();
    let replay = json!({"version": 1, "plan": {"hypothesis": "CR is kept", "focus_files": ["src/lib.rs"]}, "fix": [fix]});
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    Efix::replay_run(&repo, REPRO, &path)
        .run()
        .expect_code(code);
    Finished { repo, artifacts }
}

/// The demo crate fixed and proven by the real fix (exit 0, the fix left applied).
pub fn proven() -> &'static Finished {
    static RUN: OnceLock<Finished> = OnceLock::new();
    RUN.get_or_init(|| {
        let text = include_str!("../../examples/demo-replay.yml");
        let replay: efix::engine::replay::ReplayFile = yaml_serde::from_str(text).unwrap();
        finish(serde_json::to_value(&replay.fix[1]).unwrap(), 0)
    })
}

/// The demo crate after the engine proposed nothing (exit 1, no fix).
fn failed() -> &'static Finished {
    static RUN: OnceLock<Finished> = OnceLock::new();
    RUN.get_or_init(|| {
        let answer = json!({"output": "NO_CHANGE", "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x"});
        finish(answer, 1)
    })
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events")
        .join(name)
}

/// `efix publish` in a GitHub Actions context pointing at `github`.
pub fn in_actions(efix: Efix, github: &FakeGithub, event: Option<(&str, &str)>) -> Efix {
    let efix = efix
        .env("GITHUB_API_URL", &github.url)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .env("GITHUB_RUN_ID", "777")
        .env("GITHUB_REF", "refs/heads/main")
        .env("GITHUB_TOKEN", TOKEN);
    match event {
        Some((name, file)) => efix
            .env("GITHUB_EVENT_NAME", name)
            .env("GITHUB_EVENT_PATH", fixture(file).to_str().unwrap()),
        None => efix,
    }
}

fn publish(run: &Finished, artifacts: &Path) -> Efix {
    Efix::new()
        .args(["publish", "--artifacts"])
        .args([artifacts])
        .args(["--repo"])
        .args([&run.repo.root])
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Every file of the working tree that git does not ignore, as bytes.
fn working_tree(repo: &Repo) -> BTreeMap<String, Vec<u8>> {
    efix::git::Repo::open(&repo.root)
        .unwrap()
        .files_not_ignored()
        .unwrap()
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(repo.root.join(&path)).unwrap();
            (path, bytes)
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn no_problems(github: &FakeGithub) {
    let state = github.state();
    assert!(state.problems.is_empty(), "{:#?}", state.problems);
    for seen in &state.seen {
        assert!(seen.headers["user-agent"].starts_with("efix/"), "{seen:?}");
    }
}

#[test]
fn a_proven_run_becomes_a_commit_of_the_fixed_tree_on_the_base_and_a_pull_request() {
    let run = proven();
    let github = FakeGithub::start(&run.repo.root);
    let outputs = tempfile::tempdir().unwrap();
    let output = outputs.path().join("github-output");
    let result = in_actions(
        publish(run, &run.artifacts),
        &github,
        Some(("issue_comment", "issue_comment_owner.json")),
    )
    .args(["--label", "efix", "--github-output"])
    .args([&output])
    .run()
    .expect_code(0);
    let report = result.json();
    let evidence: Value =
        serde_json::from_str(&read(&run.artifacts.join("evidence.json"))).unwrap();
    let base = evidence["repo"]["base-commit"].as_str().unwrap().to_owned();
    let hash = Sha256::digest(REPRO.as_bytes());
    let branch = format!(
        "efix/42-{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()[..8].to_owned()
    );
    assert_eq!(report["branch"], branch.as_str());
    assert_eq!(report["base"], "main");
    assert_eq!(report["branch-update"], "created");
    let commit = github.branch(&branch).unwrap();
    assert_eq!(report["commit"], commit.as_str());

    // The commit's only parent is the recorded base, and its files are the fixed tree.
    let (parents, message) = github.commit(&commit);
    assert_eq!(parents, vec![base.clone()]);
    assert_eq!(github.files_of(&commit), working_tree(&run.repo));
    assert_ne!(github.files_of(&commit), github.files_of(&base));
    let evidence_sha: String =
        Sha256::digest(std::fs::read(run.artifacts.join("evidence.json")).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
    assert!(
        message.ends_with(&format!(
            "\nEfix-Run: https://github.example/{REPOSITORY}/actions/runs/777\nEfix-Evidence-Sha256: {evidence_sha}\n"
        )),
        "{message}"
    );
    insta::assert_snapshot!("commit_message", message.replace(&evidence_sha, "[SHA256]"));

    // The commit was made without an author, committer or signature of efix's own, so GitHub
    // signs it as the token's identity.
    {
        let state = github.state();
        let create = state
            .seen
            .iter()
            .find(|s| s.operation.as_deref() == Some("git/create-commit"))
            .unwrap();
        let mut keys: Vec<&String> = create.body.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["message", "parents", "tree"]);
        let list = state
            .seen
            .iter()
            .find(|s| s.operation.as_deref() == Some("pulls/list"))
            .unwrap();
        assert_eq!(
            list.query,
            [
                ("head".to_owned(), format!("octo-org:{branch}")),
                ("state".to_owned(), "open".to_owned())
            ]
        );
    }

    let state = github.state();
    assert_eq!(state.pulls.len(), 1);
    let pull = &state.pulls[0];
    assert_eq!(pull.head, branch);
    assert_eq!(pull.base, "main");
    assert_eq!(
        format!("{}\n", pull.title),
        read(&run.artifacts.join("pr-title.txt"))
    );
    assert_eq!(pull.body, read(&run.artifacts.join("pr-body.md")));
    assert!(!pull.draft);
    assert_eq!(state.labels, vec![(pull.number, vec!["efix".to_owned()])]);
    let url = format!("https://github.example/{REPOSITORY}/pull/{}", pull.number);
    assert_eq!(state.comments.len(), 1);
    assert_eq!(state.comments[0].0, 42);
    assert!(
        state.comments[0].1.contains(&url),
        "{}",
        state.comments[0].1
    );
    assert_eq!(
        read(&output),
        format!("pr-url={url}\npr-number={}\n", pull.number)
    );
    let number = pull.number;
    drop(state);
    no_problems(&github);

    // No credential was written anywhere: not in the artifacts, not in git's config.
    for dir in [&run.artifacts, &run.repo.root.join(".git")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(TOKEN),
                    "{} holds the token",
                    path.display()
                );
            }
        }
    }

    // A second publish for the same trigger finds the open pull request and updates it.
    let again = in_actions(
        publish(run, &run.artifacts),
        &github,
        Some(("issue_comment", "issue_comment_owner.json")),
    )
    .run()
    .expect_code(0)
    .json();
    assert_eq!(again["branch"], branch.as_str());
    assert_eq!(again["branch-update"], "moved");
    assert_eq!(
        again["pull-request"],
        json!({"number": number, "url": url, "created": false})
    );
    let calls = github.calls();
    assert!(
        calls.contains(&format!("PATCH /repos/{REPOSITORY}/pulls/{number}")),
        "{calls:#?}"
    );
    assert!(calls.contains(&format!(
        "PATCH /repos/{REPOSITORY}/git/refs/heads/{branch}"
    )));
    let state = github.state();
    assert_eq!(state.pulls.len(), 1);
    assert_eq!(state.comments.len(), 2);
    drop(state);
    no_problems(&github);
}

/// A reproducer script that runs the demo's failing test through cargo: efix can point no
/// canary at it, so the proven fix is `fixed-not-judged`.
const CHECK_PY: &str = "import subprocess\nimport sys\n\nsys.exit(subprocess.run([\"cargo\", \"test\", \"crlf\"]).returncode)\n";

#[test]
fn a_fix_whose_checks_could_not_all_be_judged_is_published_as_a_draft_that_says_so() {
    let demo = Repo::demo();
    let mut files: Vec<(String, String)> = [
        ".gitignore",
        "Cargo.lock",
        "Cargo.toml",
        "README.md",
        "src/lib.rs",
    ]
    .iter()
    .map(|p| (p.to_string(), demo.read(p)))
    .collect();
    files.push(("check.py".to_owned(), CHECK_PY.to_owned()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let repo = Repo::with_files(&refs);
    let text = include_str!("../../examples/demo-replay.yml");
    let replay: efix::engine::replay::ReplayFile = yaml_serde::from_str(text).unwrap();
    let fix = serde_json::to_value(&replay.fix[1]).unwrap();
    let replay = json!({"version": 1, "plan": {"hypothesis": "CR is kept", "focus_files": ["src/lib.rs"]}, "fix": [fix]});
    let (_guard, path) = replay_file(&replay.to_string());
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let run = Efix::replay_run(&repo, "python3 check.py", &path)
        .run()
        .expect_code(5);
    assert_eq!(run.json()["status"], "fixed-not-judged");
    let run = Finished { repo, artifacts };
    let github = FakeGithub::start(&run.repo.root);
    in_actions(
        publish(&run, &run.artifacts),
        &github,
        Some(("issue_comment", "issue_comment_owner.json")),
    )
    .run()
    .expect_code(0);
    let state = github.state();
    assert_eq!(state.pulls.len(), 1);
    let pull = &state.pulls[0];
    assert!(
        pull.draft,
        "a claim weaker than fixed and proven is never ready for review"
    );
    assert!(
        pull.title
            .contains("(not fully proven: prove.canary.not-built)"),
        "{}",
        pull.title
    );
    assert!(pull.body.contains("**Not fully proven:**"), "{}", pull.body);
    assert_eq!(state.comments.len(), 1);
    assert!(
        state.comments[0]
            .1
            .starts_with("efix: fixed, not fully proven"),
        "{}",
        state.comments[0].1
    );
    drop(state);
    no_problems(&github);
}

#[test]
fn a_run_without_a_proven_fix_publishes_only_the_comment() {
    let run = failed();
    let github = FakeGithub::start(&run.repo.root);
    let report = in_actions(
        publish(run, &run.artifacts),
        &github,
        Some(("issue_comment", "issue_comment_owner.json")),
    )
    .run()
    .expect_code(0)
    .json();
    assert_eq!(report["status"], "no-change");
    assert_eq!(report["branch"], Value::Null);
    assert_eq!(report["pull-request"], Value::Null);
    assert_eq!(
        github.calls(),
        vec![format!("POST /repos/{REPOSITORY}/issues/42/comments")]
    );
    let state = github.state();
    assert_eq!(
        state.comments,
        vec![(42, read(&run.artifacts.join("pr-body.md")))]
    );
    drop(state);
    no_problems(&github);
}

#[test]
fn a_failed_run_without_an_issue_publishes_nothing_and_says_so() {
    let run = failed();
    let github = FakeGithub::start(&run.repo.root);
    let result = in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(0);
    assert_eq!(github.calls(), Vec::<String>::new());
    assert!(
        result.stderr().contains("nothing was published"),
        "{}",
        result.stderr()
    );
}

#[test]
fn dry_run_prints_the_requests_and_sends_nothing() {
    let run = proven();
    let result = publish(run, &run.artifacts)
        .args(["--dry-run", "--issue", "42", "--base", "main", "--draft"])
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .run()
        .expect_code(0);
    let mut report = result.json();
    // The blob is the fixed file and the pull request's body is pr-body.md, byte for byte;
    // both are shown as placeholders below (their text is pinned by other snapshots).
    let requests = report["requests"].as_array_mut().unwrap();
    let blob = &mut requests[1]["body"]["content"];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.as_str().unwrap())
        .unwrap();
    assert_eq!(
        bytes,
        std::fs::read(run.repo.root.join("src/lib.rs")).unwrap()
    );
    *blob = json!("[base64 of the fixed src/lib.rs]");
    let body = &mut requests[7]["body"]["body"];
    assert_eq!(
        body.as_str().unwrap(),
        read(&run.artifacts.join("pr-body.md"))
    );
    *body = json!("[pr-body.md]");
    let text = regex::Regex::new(r"[0-9a-f]{64}")
        .unwrap()
        .replace_all(&serde_json::to_string_pretty(&report).unwrap(), "[SHA256]")
        .into_owned();
    insta::assert_snapshot!("dry_run", stable(&text, &[]));
}

#[test]
fn an_artifact_edited_after_the_run_is_refused_by_publish_and_reported_by_verify() {
    let run = proven();
    let scratch = tempfile::tempdir().unwrap();
    let artifacts = scratch.path().join("artifacts");
    copy_dir(&run.artifacts, &artifacts);
    let body = artifacts.join("pr-body.md");
    std::fs::write(
        &body,
        read(&body).replace("Fixed and proven", "Fixed, proven and tested on Windows"),
    )
    .unwrap();
    let github = FakeGithub::start(&run.repo.root);
    let result = in_actions(publish(run, &artifacts), &github, None)
        .run()
        .expect_code(1);
    assert_eq!(github.calls(), Vec::<String>::new());
    insta::assert_snapshot!(
        "edited_artifact_refused",
        stable(&result.stderr(), &[&artifacts])
    );
    let verify = Efix::new()
        .args(["verify"])
        .args([&artifacts])
        .run()
        .expect_code(1);
    let report = verify.json();
    assert_eq!(
        report["artifact-mismatches"],
        json!([{"file": "pr-body.md", "problem": "differs from what evidence.json renders"}])
    );
    assert!(
        report["claims"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["holds"] == true)
    );
}

#[test]
fn github_refusing_pull_requests_from_actions_names_the_setting() {
    let run = proven();
    let github = FakeGithub::start(&run.repo.root);
    github.script(
        "POST",
        &format!("/repos/{REPOSITORY}/pulls"),
        HttpResponse::json(
            403,
            &json!({"message": "GitHub Actions is not permitted to create or approve pull requests.", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}),
        ),
    );
    let result = in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(1);
    insta::assert_snapshot!(
        "actions_may_not_create_pull_requests",
        stable(&result.stderr(), &[])
    );
}

#[test]
fn a_missing_permission_and_branch_protection_are_named() {
    let run = proven();
    let github = FakeGithub::start(&run.repo.root);
    github.script(
        "POST",
        "/git/blobs",
        HttpResponse::json(
            403,
            &json!({"message": "Resource not accessible by integration"}),
        )
        .header("x-accepted-github-permissions", "contents=write"),
    );
    let result = in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(1);
    assert!(
        result
            .stderr()
            .contains("the token lacks `contents: write`; add `permissions: { contents: write }`"),
        "{}",
        result.stderr()
    );
    github.script(
        "POST",
        "/git/refs",
        HttpResponse::json(422, &json!({"message": "Repository rule violations found\n\nCannot create ref due to creations being restricted."})),
    );
    let result = in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(1);
    assert!(
        result.stderr().contains("exclude `efix/**` from it"),
        "{}",
        result.stderr()
    );
    no_problems(&github);
}

#[test]
fn rate_limits_are_waited_out_and_retried() {
    let run = proven();
    let github = FakeGithub::start(&run.repo.root);
    github.script(
        "POST",
        "/git/blobs",
        HttpResponse::json(
            429,
            &json!({"message": "You have exceeded a secondary rate limit."}),
        )
        .header("retry-after", "0"),
    );
    github.script(
        "POST",
        "/git/trees",
        HttpResponse::json(403, &json!({"message": "API rate limit exceeded"}))
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-reset", "0"),
    );
    in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(0);
    let calls = github.calls();
    let count = |suffix: &str| calls.iter().filter(|c| c.ends_with(suffix)).count();
    assert_eq!(count("/git/blobs"), 2, "{calls:#?}");
    assert_eq!(count("/git/trees"), 2, "{calls:#?}");
    no_problems(&github);
}

#[test]
fn without_a_token_publish_exits_2_and_says_where_the_token_goes() {
    let run = proven();
    let result = publish(run, &run.artifacts)
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .run()
        .expect_code(2);
    insta::assert_snapshot!("no_token", result.stderr());
}

#[test]
fn the_token_never_reaches_a_message_even_when_github_echoes_it() {
    let run = proven();
    let github = FakeGithub::start(&run.repo.root);
    github.script(
        "POST",
        "/git/blobs",
        HttpResponse::json(
            422,
            &json!({"message": format!("Invalid request: token {TOKEN} is not allowed here")}),
        ),
    );
    let result = in_actions(publish(run, &run.artifacts), &github, None)
        .run()
        .expect_code(1);
    assert!(!result.stderr().contains(TOKEN), "{}", result.stderr());
    assert!(!result.stdout().contains(TOKEN));
    assert!(
        result
            .stderr()
            .contains("Invalid request: token [REDACTED:"),
        "{}",
        result.stderr()
    );
}
