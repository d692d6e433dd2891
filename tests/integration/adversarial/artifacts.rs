//! efix's own files and git, against a repository that tries to redirect them: a committed
//! `efix-artifacts` symlink, committed artifacts, a planted link at an artifact's name, and a
//! git config full of hooks, fsmonitor and filters. Plus the tier a user requires, and setup
//! commands that have the network while the reproduction does not.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::machine::machine;
use crate::harness::{Efix, Repo, replay_file};

const REPRO: &str = "cargo test crlf";

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
        .arg(root)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// The demo crate's replay, whose second answer is the real fix.
fn demo_replay() -> (tempfile::TempDir, std::path::PathBuf) {
    replay_file(include_str!("../../../examples/demo-replay.yml"))
}

/// `efix run` on `repo` with the default artifacts directory (inside the repository).
fn run_default_artifacts(repo: &Repo, replay: &Path) -> crate::harness::Run {
    Efix::new()
        .args(["run", "--repro", REPRO, "--engine", "replay", "--replay"])
        .args([replay])
        .args(["--repo"])
        .args([&repo.root])
        .run()
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn a_committed_artifacts_symlink_is_refused_and_its_target_untouched() {
    let repo = Repo::demo();
    let target = repo.root.parent().unwrap().join("redirected");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, repo.path("efix-artifacts")).unwrap();
    git(&repo.root, &["add", "efix-artifacts"]);
    git(&repo.root, &["commit", "-qm", "link"]);
    let (_guard, replay) = demo_replay();
    let run = run_default_artifacts(&repo, &replay).expect_code(2);
    assert_eq!(
        (run.stderr().trim_end().to_owned(), entries(&target)),
        (
            format!(
                "efix: error: failed to use {} as the artifacts directory: it is a symbolic link; \
                 efix writes its own files only into real directories inside the repository",
                repo.path("efix-artifacts").display()
            ),
            0
        )
    );
}

#[test]
fn committed_artifacts_are_refused() {
    let repo = Repo::demo();
    repo.write("efix-artifacts/evidence.json", "{}\n");
    git(&repo.root, &["add", "-f", "efix-artifacts"]);
    git(&repo.root, &["commit", "-qm", "artifacts"]);
    let (_guard, replay) = demo_replay();
    let run = run_default_artifacts(&repo, &replay).expect_code(2);
    assert_eq!(
        (
            run.stderr().trim_end().to_owned(),
            repo.read("efix-artifacts/evidence.json")
        ),
        (
            format!(
                "efix: error: failed to use {} as the artifacts directory: it is tracked by git \
                 (efix-artifacts/evidence.json); efix's artifacts are never part of the \
                 repository: remove them from git, or pass --artifacts DIR",
                repo.path("efix-artifacts").display()
            ),
            "{}\n".to_owned()
        )
    );
}

#[test]
fn a_link_planted_at_an_artifact_name_is_replaced_not_followed() {
    let repo = Repo::demo();
    let victim = repo.root.parent().unwrap().join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    repo.write("efix-artifacts/.gitignore", "*\n");
    for name in ["evidence.json", "checkpoint.json", "pr-body.md"] {
        std::os::unix::fs::symlink(&victim, repo.path(&format!("efix-artifacts/{name}"))).unwrap();
    }
    let (_guard, replay) = demo_replay();
    run_default_artifacts(&repo, &replay).expect_code(0);
    let links: Vec<bool> = ["evidence.json", "checkpoint.json", "pr-body.md"]
        .iter()
        .map(|name| {
            std::fs::symlink_metadata(repo.path(&format!("efix-artifacts/{name}")))
                .unwrap()
                .file_type()
                .is_symlink()
        })
        .collect();
    let evidence: Value = serde_json::from_str(&repo.read("efix-artifacts/evidence.json")).unwrap();
    assert_eq!(
        (
            std::fs::read_to_string(&victim).unwrap(),
            links,
            &evidence["result"]["status"]
        ),
        (
            "keep me\n".to_owned(),
            vec![false, false, false],
            &json!("fixed")
        )
    );
}

#[test]
fn a_required_tier_the_machine_cannot_give_refuses_with_exit_4_before_anything_runs() {
    let repo = Repo::demo();
    repo.write(
        ".efix.yml",
        "version: 1\nsandbox:\n  require: full\ncommands:\n  allow: [cargo]\n",
    );
    git(&repo.root, &["add", ".efix.yml"]);
    git(&repo.root, &["commit", "-qm", "require full"]);
    let (_guard, replay) = demo_replay();
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    let run = Efix::replay_run(&repo, REPRO, &replay)
        .env("EFIX_SANDBOX_DISABLE", "namespaces")
        .run()
        .expect_code(4);
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    assert_eq!(
        (
            &evidence["result"]["status"],
            evidence["result"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("sandbox.require is `full` but this machine gives at most"),
            evidence["result"]["reason"]
                .as_str()
                .unwrap()
                .contains("namespaces: disabled by EFIX_SANDBOX_DISABLE"),
            &evidence["commands"],
        ),
        (&json!("policy-refused"), true, true, &json!([])),
        "{}",
        run.stderr()
    );
    // Without disabling anything, the machine decides: exit 4 naming the kernel's reason
    // where a mechanism is missing, a run at tier `full` where none is.
    let exec = Efix::new()
        .args(["exec", "--repo"])
        .args([&repo.root])
        .args(["--", "cargo", "--version"])
        .run();
    let machine = machine();
    if machine.landlock && machine.seccomp && machine.namespaces {
        assert_eq!(exec.expect_code(0).json()["sandbox"]["tier"], "full");
    } else {
        let stderr = exec.expect_code(4).stderr();
        assert!(
            stderr.contains("efix: refused: sandbox.require is `full`"),
            "{stderr}"
        );
        assert!(!stderr.contains("EFIX_SANDBOX_DISABLE"), "{stderr}");
    }
}

#[test]
fn setup_commands_have_the_network_and_the_reproduction_does_not() {
    let repo = Repo::demo();
    repo.write(
        ".efix.yml",
        "version: 1\ncommands:\n  allow: [cargo]\n  setup: [cargo fetch]\n",
    );
    git(&repo.root, &["add", ".efix.yml"]);
    git(&repo.root, &["commit", "-qm", "setup"]);
    let (_guard, replay) = demo_replay();
    let artifacts = repo.root.parent().unwrap().join("artifacts");
    Efix::replay_run(&repo, REPRO, &replay).run().expect_code(0);
    let evidence: Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    let network = |id: usize| evidence["commands"][id]["outcome"]["sandbox"]["network"].clone();
    let machine = machine();
    let off = if machine.namespaces {
        "namespace"
    } else if machine.seccomp {
        "seccomp"
    } else {
        "not-isolated"
    };
    assert_eq!(
        (
            &evidence["commands"][0]["phase"],
            &evidence["commands"][0]["purpose"],
            network(0),
            &evidence["commands"][1]["purpose"],
            network(1),
        ),
        (
            &json!("setup"),
            &json!("setup"),
            json!("allowed"),
            &json!("reproduction"),
            json!(off),
        )
    );
}

#[test]
fn the_repositorys_git_config_cannot_make_efix_run_hooks_fsmonitor_or_filters() {
    let repo = Repo::demo();
    let marker = repo.root.parent().unwrap().join("ran");
    let script = repo.root.parent().unwrap().join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hooks = repo.root.parent().unwrap().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
    ] {
        std::fs::copy(&script, hooks.join(hook)).unwrap();
        std::fs::copy(&script, repo.path(&format!(".git/hooks/{hook}"))).unwrap();
    }
    repo.write(".gitattributes", "* filter=evil\n");
    git(&repo.root, &["add", ".gitattributes"]);
    git(&repo.root, &["commit", "-qm", "attributes"]);
    std::fs::remove_file(&marker).ok();
    let script = script.display().to_string();
    let hooks = hooks.display().to_string();
    for (key, value) in [
        ("core.fsmonitor", script.as_str()),
        ("core.hooksPath", hooks.as_str()),
        ("filter.evil.clean", script.as_str()),
        ("filter.evil.smudge", script.as_str()),
        ("filter.evil.process", script.as_str()),
    ] {
        git(&repo.root, &["config", key, value]);
    }
    let (_guard, replay) = demo_replay();
    Efix::replay_run(&repo, REPRO, &replay).run().expect_code(0);
    assert_eq!(
        std::fs::read_to_string(&marker).ok(),
        None,
        "efix's git ran something the repository configured"
    );
}
