//! `efix demo`: the bundled example end to end, offline, and its PR body.

use crate::harness::{Efix, stable};

#[test]
fn demo_recovers_from_a_malformed_answer_and_proves_the_fix() {
    let out = tempfile::tempdir().unwrap();
    let artifacts = out.path().join("artifacts");
    let run = Efix::new()
        .current_dir(out.path())
        .args(["demo", "--artifacts"])
        .args([&artifacts])
        .run()
        .expect_code(0);
    let summary = run.json();
    assert_eq!(summary["status"], "fixed");
    assert_eq!(summary["rounds"], 1);
    assert!(
        run.stderr().contains("the PR body is at"),
        "{}",
        run.stderr()
    );
    for file in efix::pipeline::ARTIFACT_FILES {
        assert!(artifacts.join(file).is_file(), "{file} is missing");
    }
    let evidence: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(artifacts.join("evidence.json")).unwrap())
            .unwrap();
    let round = &evidence["rounds"][0];
    assert_eq!(
        round["attempts"].as_array().unwrap().len(),
        2,
        "one malformed answer, one retry"
    );
    assert_eq!(round["attempts"][0]["patch"]["outcome"], "rejected");
    assert_eq!(round["attempts"][1]["contract-retry"], true);
    assert_eq!(round["prevent"]["guard"], "changed-tests");
    assert_eq!(
        round["prevent"]["failed-without-fix"],
        serde_json::json!(["crlf_value_has_no_carriage_return"])
    );
    let root = std::path::PathBuf::from(evidence["repo"]["root"].as_str().unwrap());
    let body = std::fs::read_to_string(artifacts.join("pr-body.md")).unwrap();
    insta::assert_snapshot!("demo_pr_body", stable(&body, &[&root, &artifacts]));
    let full = std::fs::read_to_string(artifacts.join("evidence.md")).unwrap();
    insta::assert_snapshot!("demo_evidence_md", stable(&full, &[&root, &artifacts]));

    // The recorded outcomes hold when re-run from scratch.
    let verify = Efix::new()
        .args(["verify"])
        .args([&artifacts])
        .run()
        .expect_code(0);
    assert_eq!(verify.json()["holds"], true);
}
