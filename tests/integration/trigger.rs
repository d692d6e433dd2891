//! `efix run --from-event` with an event fixture for every trigger, against the stand-in
//! GitHub: refusals exit 4 before anything runs (a human gets a comment saying why, a bot gets
//! nothing), an accepted comment gets an `eyes` reaction, and the command reaches the command
//! policy as plain argv words whatever shell syntax it holds.

use std::path::Path;

use serde_json::{Value, json};

use crate::github_api::{FakeGithub, REPOSITORY};
use crate::harness::{Efix, Repo};
use crate::publish::in_actions;

/// `efix run --from-event` on `repo` for the event `name` in fixture `file`.
fn from_event(repo: &Repo, github: &FakeGithub, name: &str, file: &str) -> Efix {
    let no_change = json!({"version": 1, "plan": {"hypothesis": "h", "focus_files": []}, "fix": [{"output": "NO_CHANGE", "root_cause": "r", "fix_summary": "f", "tests_summary": "t", "risk_rollback": "x"}]});
    // Beside the repository, so it lives exactly as long as the scratch repository does.
    let replay = repo.root.parent().unwrap().join("replay.yml");
    std::fs::write(&replay, no_change.to_string()).unwrap();
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    in_actions(
        Efix::new()
            .args(["run", "--from-event", "--engine", "replay", "--replay"])
            .args([&replay])
            .args(["--repo"])
            .args([&repo.root])
            .args(["--artifacts"])
            .args([&artifacts]),
        github,
        Some((name, file)),
    )
}

fn plain_repo() -> Repo {
    Repo::with_files(&[("README.md", "# demo\n")])
}

fn nothing_ran(repo: &Repo) {
    assert!(
        !repo.root.parent().unwrap().join("artifacts").exists(),
        "a refused trigger wrote artifacts"
    );
}

fn evidence(repo: &Repo) -> Value {
    let text = std::fs::read_to_string(repo.root.parent().unwrap().join("artifacts/evidence.json"))
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_commenter_without_write_permission_is_refused_with_an_answer() {
    let repo = plain_repo();
    let github = FakeGithub::start(&repo.root);
    github.state().permissions.insert(
        "helper".to_owned(),
        ("read".to_owned(), "triage".to_owned()),
    );
    let result = from_event(
        &repo,
        &github,
        "issue_comment",
        "issue_comment_no_write.json",
    )
    .run()
    .expect_code(4);
    assert_eq!(
        github.calls(),
        [
            format!("GET /repos/{REPOSITORY}/collaborators/helper/permission"),
            format!("POST /repos/{REPOSITORY}/issues/42/comments"),
        ]
    );
    let state = github.state();
    assert_eq!(state.comments.len(), 1);
    insta::assert_snapshot!("refused_no_write_comment", state.comments[0].1);
    assert!(state.reactions.is_empty());
    assert!(
        result
            .stderr()
            .contains("efix: refused: @helper has triage permission, not write"),
        "{}",
        result.stderr()
    );
    drop(state);
    nothing_ran(&repo);
}

#[test]
fn an_association_outside_the_allowed_list_is_refused_without_asking_the_api() {
    let repo = plain_repo();
    let github = FakeGithub::start(&repo.root);
    from_event(
        &repo,
        &github,
        "issue_comment",
        "issue_comment_contributor.json",
    )
    .run()
    .expect_code(4);
    assert_eq!(
        github.calls(),
        [format!("POST /repos/{REPOSITORY}/issues/42/comments")]
    );
    insta::assert_snapshot!("refused_contributor_comment", github.state().comments[0].1);
    nothing_ran(&repo);
}

#[test]
fn a_configured_association_lets_a_contributor_with_write_permission_in() {
    let repo = Repo::with_files(&[(
        ".efix.yml",
        "version: 1\ntrigger:\n  allowed-associations: [CONTRIBUTOR]\ncommands:\n  allow: [python3]\n",
    )]);
    let github = FakeGithub::start(&repo.root);
    github.grant("drive-by", "write");
    // The comment asks for cargo, which this configuration does not allow: the answer says so.
    from_event(
        &repo,
        &github,
        "issue_comment",
        "issue_comment_contributor.json",
    )
    .run()
    .expect_code(4);
    let state = github.state();
    assert_eq!(state.comments.len(), 1);
    assert!(
        state.comments[0].1.contains("rule `command.not-allowed`"),
        "{}",
        state.comments[0].1
    );
}

#[test]
fn a_bot_never_triggers_and_gets_no_answer() {
    let repo = plain_repo();
    let github = FakeGithub::start(&repo.root);
    let result = from_event(&repo, &github, "issue_comment", "issue_comment_bot.json")
        .run()
        .expect_code(4);
    assert_eq!(github.calls(), Vec::<String>::new());
    assert!(
        result
            .stderr()
            .contains("comments by bots never start efix (@renovate[bot])"),
        "{}",
        result.stderr()
    );
    nothing_ran(&repo);
}

#[test]
fn edited_comments_and_comments_not_for_efix_are_ignored_silently() {
    for fixture in [
        "issue_comment_edited.json",
        "issue_comment_not_for_efix.json",
    ] {
        let repo = plain_repo();
        let github = FakeGithub::start(&repo.root);
        from_event(&repo, &github, "issue_comment", fixture)
            .run()
            .expect_code(4);
        assert_eq!(github.calls(), Vec::<String>::new(), "{fixture}");
        nothing_ran(&repo);
    }
}

#[test]
fn a_comment_on_a_pull_request_from_a_fork_never_runs_the_fork() {
    let repo = plain_repo();
    let github = FakeGithub::start(&repo.root);
    github
        .state()
        .foreign_pulls
        .insert(8, "mallory/demo".to_owned());
    github.grant("octocat", "admin");
    from_event(
        &repo,
        &github,
        "issue_comment",
        "issue_comment_fork_pr.json",
    )
    .run()
    .expect_code(4);
    assert_eq!(
        github.calls(),
        [
            format!("GET /repos/{REPOSITORY}/pulls/8"),
            format!("POST /repos/{REPOSITORY}/issues/8/comments"),
        ]
    );
    insta::assert_snapshot!("refused_fork_comment", github.state().comments[0].1);
    nothing_ran(&repo);
}

#[test]
fn a_shell_or_no_command_in_an_accepted_comment_is_refused_with_an_answer() {
    for (fixture, snapshot) in [
        ("issue_comment_shell.json", "refused_shell_comment"),
        ("issue_comment_bare.json", "refused_no_command_comment"),
    ] {
        let repo = plain_repo();
        let github = FakeGithub::start(&repo.root);
        github.grant("octocat", "admin");
        from_event(&repo, &github, "issue_comment", fixture)
            .run()
            .expect_code(4);
        insta::assert_snapshot!(snapshot, github.state().comments[0].1);
        nothing_ran(&repo);
    }
}

#[test]
fn shell_metacharacters_in_a_comment_reach_the_runner_as_plain_words() {
    let repo = Repo::demo();
    let github = FakeGithub::start(&repo.root);
    github.grant("octocat", "admin");
    // cargo runs with the words as test filters; no test matches, so nothing reproduces.
    from_event(
        &repo,
        &github,
        "issue_comment",
        "issue_comment_metacharacters.json",
    )
    .run()
    .expect_code(3);
    let state = github.state();
    assert_eq!(state.reactions, vec![(1001, "eyes".to_owned())]);
    assert!(state.comments.is_empty());
    drop(state);
    let evidence = evidence(&repo);
    assert_eq!(
        evidence["commands"][0]["outcome"]["argv"],
        json!([
            "cargo",
            "test",
            "--",
            "$(touch pwned1)",
            "; touch pwned2",
            "| tee pwned3",
            "&& touch pwned4",
            "`touch",
            "pwned5`",
            "$HOME>pwned6"
        ])
    );
    for n in 1..=6 {
        for dir in [repo.root.as_path(), Path::new(".")] {
            assert!(!dir.join(format!("pwned{n}")).exists(), "pwned{n} exists");
        }
    }
    assert!(!repo.root.join("rm").exists());
}

#[test]
fn workflow_dispatch_takes_the_command_and_suite_inputs() {
    let repo = Repo::demo();
    let github = FakeGithub::start(&repo.root);
    from_event(
        &repo,
        &github,
        "workflow_dispatch",
        "workflow_dispatch.json",
    )
    .run()
    .expect_code(1);
    assert_eq!(github.calls(), Vec::<String>::new());
    let evidence = evidence(&repo);
    assert_eq!(evidence["request"]["command"], "cargo test crlf");
    assert_eq!(evidence["request"]["suites"], json!(["cargo test"]));
}

#[test]
fn workflow_run_takes_the_command_of_the_failed_step() {
    let repo = Repo::demo();
    let github = FakeGithub::start(&repo.root);
    github.state().jobs = json!({"total_count": 2, "jobs": [
        {"id": 1, "name": "fmt", "conclusion": "success", "steps": [{"name": "Run cargo fmt --check", "conclusion": "success", "number": 2}]},
        {"id": 2, "name": "test", "conclusion": "failure", "steps": [
            {"name": "Set up job", "conclusion": "success", "number": 1},
            {"name": "Run cargo test crlf", "conclusion": "failure", "number": 2}
        ]}
    ]});
    from_event(&repo, &github, "workflow_run", "workflow_run_failure.json")
        .run()
        .expect_code(1);
    assert_eq!(
        github.calls(),
        [format!("GET /repos/{REPOSITORY}/actions/runs/5550001/jobs")]
    );
    assert!(
        github.state().problems.is_empty(),
        "{:?}",
        github.state().problems
    );
    assert_eq!(evidence(&repo)["request"]["command"], "cargo test crlf");
}

#[test]
fn a_workflow_run_of_a_fork_is_refused() {
    let repo = plain_repo();
    let github = FakeGithub::start(&repo.root);
    let result = from_event(&repo, &github, "workflow_run", "workflow_run_fork.json")
        .run()
        .expect_code(4);
    assert_eq!(github.calls(), Vec::<String>::new());
    assert!(
        result.stderr().contains("built code from mallory/demo"),
        "{}",
        result.stderr()
    );
    nothing_ran(&repo);
}

#[test]
fn from_event_outside_actions_exits_2_naming_the_variable() {
    let repo = plain_repo();
    let result = Efix::new()
        .args(["run", "--from-event", "--repo"])
        .args([&repo.root])
        .run()
        .expect_code(2);
    assert_eq!(
        result.stderr(),
        "efix: error: failed to read GITHUB_EVENT_NAME: it is not set; run --from-event inside \
         GitHub Actions, or pass --repro CMD instead\n"
    );
}
