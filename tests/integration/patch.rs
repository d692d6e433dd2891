//! `efix patch`: raw model output on stdin through the contract, the parser and the apply
//! ladder, with JSON on stdout and all-or-nothing writes.

use crate::harness::{Efix, Repo};

#[test]
fn a_fenced_diff_with_wrong_counts_applies_and_reports_json() {
    let repo = Repo::with_files(&[("src/a.py", "def f():\n    return 1\n")]);
    let raw = "```diff\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n```\n";
    let run = Efix::new()
        .args(["patch", "--repo"])
        .args([&repo.root])
        .stdin(raw)
        .run()
        .expect_code(0);
    let json = run.json();
    assert_eq!(json["outcome"], "applied");
    assert_eq!(repo.read("src/a.py"), "def f():\n    return 2\n");
}

#[test]
fn check_mode_never_writes() {
    let repo = Repo::with_files(&[("src/a.py", "def f():\n    return 1\n")]);
    let raw = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
    let run = Efix::new()
        .args(["patch", "--check", "--repo"])
        .args([&repo.root])
        .stdin(raw)
        .run()
        .expect_code(0);
    assert_eq!(run.json()["outcome"], "applied");
    assert_eq!(repo.read("src/a.py"), "def f():\n    return 1\n");
}

#[test]
fn tool_call_junk_and_parent_paths_are_rejected_with_exit_1() {
    let repo = Repo::with_files(&[("src/a.py", "x = 1\n")]);
    let before = repo.fingerprint();
    for raw in [
        "<tool_call>{\"name\":\"edit\"}</tool_call>",
        "--- a/../outside.py\n+++ b/../outside.py\n@@ -0,0 +1 @@\n+x = 1\n",
    ] {
        let run = Efix::new()
            .args(["patch", "--repo"])
            .args([&repo.root])
            .stdin(raw)
            .run()
            .expect_code(1);
        assert_eq!(run.json()["outcome"], "rejected");
        assert!(!run.json()["issues"].as_array().unwrap().is_empty());
    }
    assert_eq!(repo.fingerprint(), before);
}

#[test]
fn no_change_is_reported_as_such() {
    let repo = Repo::with_files(&[("src/a.py", "x = 1\n")]);
    let run = Efix::new()
        .args(["patch", "--repo"])
        .args([&repo.root])
        .stdin("NO_CHANGE\n")
        .run()
        .expect_code(0);
    assert_eq!(run.json()["outcome"], "no_change");
}
