//! Tests against real temporary repositories.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use git2::Repository;

use super::*;

mod durable;

const GITIGNORE: &[u8] = b"target/\n*.log\n";

fn fixture() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let repo = init_with_files(
        dir.path(),
        &[
            (".gitignore", GITIGNORE),
            (
                "src/lib.rs",
                b"pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
            ),
            ("src/main.rs", b"fn main() {}\n"),
            ("tests/it.rs", b"#[test]\nfn it() {}\n"),
            ("README.md", b"# demo\n"),
        ],
        "initial",
    )
    .unwrap();
    (dir, repo)
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

/// As if the snapshot ran a minute from now: every file is older than the stat margin.
fn later() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 60
}

/// Set a file's modification time (which also moves its status-change time to now).
fn set_mtime(path: &Path, mtime: std::time::SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

fn stage(root: &Path, rel: &str) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(rel)).unwrap();
    index.write().unwrap();
}

fn commit_all(root: &Path, message: &str) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    let parent = repo.head().unwrap().peel_to_commit().unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &[&parent])
        .unwrap();
}

#[test]
fn open_from_a_subdirectory_finds_the_work_tree_root() {
    let (dir, _) = fixture();
    let repo = Repo::open(&dir.path().join("src")).unwrap();
    assert_eq!(
        repo.root,
        dir.path()
            .canonicalize()
            .unwrap_or(dir.path().to_path_buf())
    );
}

#[test]
fn open_outside_a_repository_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = Repo::open(dir.path()).unwrap_err();
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
}

#[test]
fn open_on_a_bare_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Repository::init_bare(dir.path()).unwrap();
    let err = Repo::open(dir.path()).unwrap_err();
    assert!(matches!(err, GitError::BareRepository { .. }), "{err:?}");
}

#[test]
fn head_commit_is_none_before_the_first_commit_and_the_id_after() {
    let dir = tempfile::tempdir().unwrap();
    Repository::init(dir.path()).unwrap();
    assert_eq!(Repo::open(dir.path()).unwrap().head_commit().unwrap(), None);

    let (_dir, repo) = fixture();
    let head = repo.head_commit().unwrap().unwrap();
    let expected = Repository::open(&repo.root)
        .unwrap()
        .head()
        .unwrap()
        .target()
        .unwrap()
        .to_string();
    assert_eq!(head, expected);
}

#[test]
fn a_fresh_repository_is_clean_and_lists_its_files() {
    let (_dir, repo) = fixture();
    assert_eq!(repo.dirty_paths().unwrap(), Vec::<String>::new());
    let expected = vec![
        ".gitignore",
        "README.md",
        "src/lib.rs",
        "src/main.rs",
        "tests/it.rs",
    ];
    assert_eq!(repo.tracked_files().unwrap(), expected);
    assert_eq!(repo.files_not_ignored().unwrap(), expected);
}

#[test]
fn dirty_paths_lists_modified_deleted_staged_and_untracked_but_not_ignored() {
    let (dir, repo) = fixture();
    let root = dir.path();
    write(root, "src/lib.rs", b"changed\n");
    fs::remove_file(root.join("README.md")).unwrap();
    write(root, "new/staged.rs", b"staged\n");
    stage(root, "new/staged.rs");
    write(root, "notes.txt", b"untracked\n");
    write(root, "target/debug/out", b"ignored\n");
    write(root, "run.log", b"ignored\n");
    assert_eq!(
        repo.dirty_paths().unwrap(),
        vec!["README.md", "new/staged.rs", "notes.txt", "src/lib.rs"]
    );
    assert_eq!(
        repo.files_not_ignored().unwrap(),
        vec![
            ".gitignore",
            "README.md",
            "new/staged.rs",
            "notes.txt",
            "src/lib.rs",
            "src/main.rs",
            "tests/it.rs"
        ]
    );
}

#[test]
fn restore_undoes_edits_deletions_creations_modes_links_and_staging() {
    let (dir, repo) = fixture();
    let root = dir.path();
    // State before the snapshot: some dirt the user had, plus ignored build output.
    write(root, "scratch.txt", b"user's untracked notes\n");
    write(root, "target/debug/app", b"binary v1");
    write(root, "tools/run.sh", b"#!/bin/sh\necho hi\n");
    fs::set_permissions(root.join("tools/run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("src/lib.rs", root.join("lib-link")).unwrap();
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot().unwrap();

    // What a failed run might do.
    write(
        root,
        "src/lib.rs",
        b"pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    fs::remove_file(root.join("tests/it.rs")).unwrap();
    fs::remove_file(root.join("scratch.txt")).unwrap();
    write(root, "src/new/mod.rs", b"// new\n");
    write(root, "added.rs", b"// staged\n");
    stage(root, "added.rs");
    fs::set_permissions(root.join("tools/run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::remove_file(root.join("lib-link")).unwrap();
    symlink("src/main.rs", root.join("lib-link")).unwrap();
    write(root, ".gitignore", b"*.log\n");
    write(root, "target/debug/app", b"binary v2");
    write(root, "target/debug/extra", b"more build output");

    let report = snapshot.restore().unwrap();
    assert_eq!(
        report,
        RestoreReport {
            rewritten: vec![".gitignore".into(), "lib-link".into(), "src/lib.rs".into()],
            recreated: vec!["scratch.txt".into(), "tests/it.rs".into()],
            removed: vec!["added.rs".into(), "src/new/mod.rs".into()],
            removed_dirs: vec!["src/new".into()],
            modes_restored: vec!["tools/run.sh".into()],
            exclude_restored: false,
            index_restored: true,
            head_restored: false,
        }
    );
    assert_eq!(tree_fingerprint(root).unwrap(), before);
    assert_eq!(
        fs::metadata(root.join("tools/run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
    // Ignored build output is the command's business, never ours.
    assert_eq!(
        fs::read(root.join("target/debug/app")).unwrap(),
        b"binary v2"
    );
    assert_eq!(
        fs::read(root.join("target/debug/extra")).unwrap(),
        b"more build output"
    );
    assert_eq!(
        repo.dirty_paths().unwrap(),
        vec!["lib-link", "scratch.txt", "tools/run.sh"]
    );
    // A second restore has nothing to do.
    assert!(snapshot.restore().unwrap().is_noop());
}

#[test]
fn restore_on_an_untouched_tree_changes_nothing() {
    let (_dir, repo) = fixture();
    let snapshot = repo.snapshot().unwrap();
    assert_eq!(snapshot.len(), 5);
    assert_eq!(snapshot.restore().unwrap(), RestoreReport::default());
}

#[test]
fn large_tracked_files_are_restored_from_their_blob() {
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
    let repo = init_with_files(dir.path(), &[("data/big.bin", &big)], "big").unwrap();
    let snapshot = repo.snapshot().unwrap();
    fs::write(dir.path().join("data/big.bin"), b"truncated").unwrap();
    let report = snapshot.restore().unwrap();
    assert_eq!(report.rewritten, vec!["data/big.bin"]);
    assert_eq!(fs::read(dir.path().join("data/big.bin")).unwrap(), big);
}

#[test]
fn restore_moves_the_branch_back_after_a_commit() {
    let (dir, repo) = fixture();
    let head = repo.head_commit().unwrap();
    let snapshot = repo.snapshot().unwrap();
    write(dir.path(), "src/lib.rs", b"committed by the command\n");
    commit_all(dir.path(), "oops");
    assert_ne!(repo.head_commit().unwrap(), head);

    let report = snapshot.restore().unwrap();
    assert!(report.head_restored);
    assert_eq!(report.rewritten, vec!["src/lib.rs"]);
    assert_eq!(repo.head_commit().unwrap(), head);
    assert_eq!(repo.dirty_paths().unwrap(), Vec::<String>::new());
}

#[test]
fn fingerprint_changes_with_the_executable_bit_and_ignores_ignored_files() {
    let (dir, _) = fixture();
    let before = tree_fingerprint(dir.path()).unwrap();
    write(dir.path(), "target/x", b"ignored");
    assert_eq!(tree_fingerprint(dir.path()).unwrap(), before);
    fs::set_permissions(
        dir.path().join("README.md"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let after = tree_fingerprint(dir.path()).unwrap();
    let changed: Vec<&String> = after
        .iter()
        .filter(|(path, hash)| before.get(*path) != Some(*hash))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(changed, vec!["README.md"]);
}

#[test]
fn copy_to_reproduces_the_tree_of_head_or_of_an_older_commit() {
    let (dir, repo) = fixture();
    let first = repo.head_commit().unwrap().unwrap();
    write(dir.path(), "src/lib.rs", b"second version\n");
    commit_all(dir.path(), "second");
    // Uncommitted dirt must not leak into the copy.
    write(dir.path(), "dirt.txt", b"dirt");

    let tree_of = |root: &Path, rev: &str| {
        Repository::open(root)
            .unwrap()
            .revparse_single(rev)
            .unwrap()
            .peel_to_tree()
            .unwrap()
            .id()
    };

    let scratch = tempfile::tempdir().unwrap();
    let copy = repo.copy_to(&scratch.path().join("head"), None).unwrap();
    assert_eq!(tree_of(&copy.root, "HEAD"), tree_of(dir.path(), "HEAD"));
    assert_eq!(copy.dirty_paths().unwrap(), Vec::<String>::new());
    assert_eq!(
        fs::read(copy.root.join("src/lib.rs")).unwrap(),
        b"second version\n"
    );
    assert!(!copy.root.join("dirt.txt").exists());

    let old = repo
        .copy_to(&scratch.path().join("old"), Some(&first))
        .unwrap();
    assert_eq!(tree_of(&old.root, "HEAD"), tree_of(dir.path(), &first));
    assert_eq!(
        fs::read(old.root.join("src/lib.rs")).unwrap(),
        b"pub fn add(a: i32, b: i32) -> i32 { a - b }\n"
    );
}

#[test]
fn copy_to_an_unknown_revision_or_an_unborn_head_fails_clearly() {
    let (_dir, repo) = fixture();
    let scratch = tempfile::tempdir().unwrap();
    let err = repo
        .copy_to(scratch.path(), Some("no-such-rev"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "find a commit named no-such-rev: there is none; commit first, or name an existing revision"
    );

    let empty = tempfile::tempdir().unwrap();
    Repository::init(empty.path()).unwrap();
    let err = Repo::open(empty.path())
        .unwrap()
        .copy_to(&scratch.path().join("x"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "find a commit at HEAD: there is none; commit first, or name an existing revision"
    );
}

#[test]
fn init_with_files_commits_as_efix_and_refuses_escaping_paths() {
    let (dir, repo) = fixture();
    let git = Repository::open(&repo.root).unwrap();
    let commit = git.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.author().name().ok(), Some("efix"));
    assert_eq!(commit.committer().email().ok(), Some("efix@localhost"));
    assert_eq!(commit.message().ok(), Some("initial"));
    drop(dir);

    let dir = tempfile::tempdir().unwrap();
    let err = init_with_files(&dir.path().join("r"), &[("../escape", b"x")], "m").unwrap_err();
    assert_eq!(err.to_string(), "write ../escape");
    assert!(!dir.path().join("escape").exists());
}

#[test]
fn restore_handles_a_file_turned_into_a_directory_and_a_read_only_file() {
    let (dir, repo) = fixture();
    let root = dir.path();
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot().unwrap();

    fs::remove_file(root.join("README.md")).unwrap();
    write(root, "README.md/inner.txt", b"a directory now");
    write(root, "src/main.rs", b"fn main() { broken }\n");
    fs::set_permissions(root.join("src/main.rs"), fs::Permissions::from_mode(0o444)).unwrap();

    let report = snapshot.restore().unwrap();
    assert_eq!(
        report,
        RestoreReport {
            rewritten: vec!["src/main.rs".into()],
            recreated: vec!["README.md".into()],
            removed: vec!["README.md/inner.txt".into()],
            removed_dirs: vec!["README.md".into()],
            ..RestoreReport::default()
        }
    );
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn restore_removes_files_hidden_by_an_ignore_file_the_command_added() {
    let (dir, repo) = fixture();
    let before = tree_fingerprint(dir.path()).unwrap();
    let snapshot = repo.snapshot().unwrap();
    write(dir.path(), "gen/.gitignore", b"*.out\n");
    write(dir.path(), "gen/result.out", b"left behind?");
    let report = snapshot.restore().unwrap();
    assert_eq!(report.removed, vec!["gen/.gitignore", "gen/result.out"]);
    assert_eq!(report.removed_dirs, vec!["gen"]);
    assert_eq!(tree_fingerprint(dir.path()).unwrap(), before);
    assert!(!dir.path().join("gen").exists());
}

#[test]
fn restore_handles_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let (dir, repo) = fixture();
    let name = OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(dir.path().join(name), b"latin-1 name").unwrap();
    let snapshot = repo.snapshot().unwrap();
    fs::remove_file(dir.path().join(name)).unwrap();
    let report = snapshot.restore().unwrap();
    assert_eq!(report.recreated, vec!["caf\u{fffd}.txt"]);
    assert_eq!(fs::read(dir.path().join(name)).unwrap(), b"latin-1 name");
}

/// Timings for the report, not assertions: run with
/// `cargo test --release --lib -- --ignored --nocapture measure_`.
#[test]
#[ignore = "measurement, prints timings"]
#[expect(clippy::print_stderr, reason = "a measurement reports its numbers")]
fn measure_snapshot_and_restore_of_ten_thousand_files() {
    let dir = tempfile::tempdir().unwrap();
    let contents: Vec<(String, Vec<u8>)> = (0..10_000)
        .map(|n| {
            (
                format!("src/m{}/f{n}.rs", n % 100),
                format!("// file {n}\n").repeat(40).into_bytes(),
            )
        })
        .collect();
    let files: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
        .collect();
    let repo = init_with_files(dir.path(), &files, "many").unwrap();
    // Files in a real checkout are older than the stat margin; pretend these are too.
    let start = std::time::Instant::now();
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    let taken = start.elapsed();
    for n in 0..100 {
        write(dir.path(), &format!("src/m{n}/f{n}.rs"), b"changed");
        write(dir.path(), &format!("new/{n}.rs"), b"new");
    }
    let start = std::time::Instant::now();
    let report = snapshot.restore().unwrap();
    let restored = start.elapsed();
    let start = std::time::Instant::now();
    let fingerprint = tree_fingerprint(dir.path()).unwrap();
    let fingerprinted = start.elapsed();
    eprintln!(
        "10000 files: snapshot {taken:?}, restore of 100 edits + 100 creations {restored:?} \
         ({} rewritten, {} removed), fingerprint {fingerprinted:?} ({} entries)",
        report.rewritten.len(),
        report.removed.len(),
        fingerprint.len()
    );
}

#[test]
fn working_diff_counts_edits_deletions_and_new_files_against_head() {
    let (dir, repo) = fixture();
    assert_eq!(repo.working_diff().unwrap(), WorkingDiff::default());
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    fs::remove_file(root.join("README.md")).unwrap();
    write(
        root,
        "tests/add.rs",
        b"#[test]\nfn adds() {\n    assert_eq!(demo::add(1, 2), 3);\n}\n",
    );
    write(root, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0binary");
    write(root, "target/ignored.rs", b"not part of the change\n");
    let diff = repo.working_diff().unwrap();
    insta::assert_json_snapshot!("working_diff_files", diff.files);
    assert_eq!((diff.insertions, diff.deletions), (7, 2));
    insta::assert_snapshot!("working_diff_patch", diff.patch);
}

#[test]
fn restore_puts_head_back_on_the_branch_after_a_checkout() {
    let (dir, repo) = fixture();
    let git = Repository::open(dir.path()).unwrap();
    let branch_before = git.head().unwrap().name().unwrap().to_owned();
    let snapshot = repo.snapshot().unwrap();

    let head = git.head().unwrap().peel_to_commit().unwrap();
    git.branch("elsewhere", &head, false).unwrap();
    git.set_head("refs/heads/elsewhere").unwrap();
    assert_eq!(git.head().unwrap().name().unwrap(), "refs/heads/elsewhere");

    let report = snapshot.restore().unwrap();
    assert_eq!(
        report,
        RestoreReport {
            head_restored: true,
            ..RestoreReport::default()
        }
    );
    let git = Repository::open(dir.path()).unwrap();
    assert_eq!(git.head().unwrap().name().unwrap(), branch_before);
}

#[test]
fn the_stat_shortcut_still_sees_a_same_size_rewrite_with_the_old_mtime() {
    let (dir, repo) = fixture();
    let path = dir.path().join("src/main.rs");
    // The same bytes written again, with another mtime: the index's stat data no longer
    // matches the file, so the snapshot hashes it and proves it untouched later by its own
    // stat data.
    fs::write(&path, fs::read(&path).unwrap()).unwrap();
    let mtime = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
    set_mtime(&path, mtime);
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert!(matches!(
        snapshot.tracked_entry(b"src/main.rs").unwrap().check,
        super::snapshot::Check::Own(_)
    ));

    fs::write(&path, b"fn main() {/}\n").unwrap();
    set_mtime(&path, mtime);
    let report = snapshot.restore().unwrap();
    assert_eq!(report.rewritten, vec!["src/main.rs"]);
    assert_eq!(fs::read(&path).unwrap(), b"fn main() {}\n");
    // Untouched files were skipped by stat, and nothing else changed.
    assert!(snapshot.restore().unwrap().is_noop());
}
