//! The cases a stat-trusting snapshot can get wrong, the journal that survives `kill -9`, and
//! the lock that allows one efix per working tree.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::{Duration, SystemTime};

use git2::{IndexEntry, Repository};

use super::super::snapshot::Check;
use super::super::*;
use super::{fixture, later, set_mtime, write};

/// Index entry flag of `git update-index --assume-unchanged`.
const ASSUME_VALID: u16 = 0x8000;
/// Extended index entry flag of `git update-index --skip-worktree`.
const SKIP_WORKTREE: u16 = 1 << 14;

/// Give every tracked file an mtime well in the past and refresh the index's stat data, as
/// after a checkout followed by `git status`: no entry is racily clean.
fn freshen_index(root: &Path) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    let past = SystemTime::now() - Duration::from_secs(100);
    let paths: Vec<String> = index
        .iter()
        .map(|entry| String::from_utf8(entry.path).unwrap())
        .collect();
    for path in &paths {
        set_mtime(&root.join(path), past);
        index.add_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
}

fn checks(snapshot: &Snapshot) -> Vec<(String, Check)> {
    snapshot
        .tracked
        .iter()
        .map(|t| (String::from_utf8_lossy(&t.path).into_owned(), t.check))
        .collect()
}

fn set_index_entry(root: &Path, rel: &str, change: impl FnOnce(&mut IndexEntry)) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    let mut entry = index.get_path(Path::new(rel), 0).unwrap();
    change(&mut entry);
    index.add(&entry).unwrap();
    index.write().unwrap();
}

#[test]
fn a_fresh_index_proves_files_untouched_without_hashing_them() {
    let (dir, repo) = fixture();
    freshen_index(dir.path());
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert!(
        checks(&snapshot)
            .iter()
            .all(|(_, check)| *check == Check::Index),
        "{:?}",
        checks(&snapshot)
    );
    assert!(snapshot.entries.is_empty());
    assert!(snapshot.dirty_paths().is_empty());
    assert!(snapshot.restore().unwrap().is_noop());
}

#[test]
fn a_same_size_rewrite_in_the_same_second_with_the_mtime_put_back_is_seen() {
    let (dir, repo) = fixture();
    freshen_index(dir.path());
    let path = dir.path().join("src/main.rs");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert_eq!(
        snapshot.tracked_entry(b"src/main.rs").unwrap().check,
        Check::Index
    );

    fs::write(&path, b"fn main() {/}\n").unwrap();
    set_mtime(&path, mtime);
    let report = snapshot.restore().unwrap();
    assert_eq!(report.rewritten, vec!["src/main.rs"]);
    assert_eq!(fs::read(&path).unwrap(), b"fn main() {}\n");
}

#[test]
fn a_racily_clean_entry_is_hashed_not_trusted() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    // An index whose entry for README.md has the file's exact stat data but another blob,
    // written in the same second as the file's mtime: only the racy rule stands between the
    // snapshot and believing the file is that blob.
    let other = Repository::open(root).unwrap().blob(b"# other\n").unwrap();
    let meta = fs::metadata(root.join("README.md")).unwrap();
    let index_time = SystemTime::UNIX_EPOCH + Duration::from_secs(meta_mtime(&meta) as u64);
    set_index_entry(root, "README.md", |entry| entry.id = other);
    set_mtime(&root.join(".git/index"), index_time);
    kept_whole_and_restored(&repo, root);
}

#[test]
fn an_assume_unchanged_entry_is_checked_by_content_even_when_its_stat_data_matches() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    // git stops refreshing an assume-unchanged entry, so its stat data and blob say nothing
    // about the file: here they match the file's stat but name other bytes.
    let other = Repository::open(root).unwrap().blob(b"# other\n").unwrap();
    set_index_entry(root, "README.md", |entry| {
        entry.id = other;
        entry.flags |= ASSUME_VALID;
    });
    kept_whole_and_restored(&repo, root);
}

/// README.md's index entry names other bytes than the file holds (so git counts it staged):
/// the snapshot must keep the file whole, and a restore must bring it back after an edit.
fn kept_whole_and_restored(repo: &Repo, root: &Path) {
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert_eq!(
        snapshot.tracked_entry(b"README.md").unwrap().check,
        Check::Explicit
    );
    assert_eq!(snapshot.dirty_paths(), ["README.md"]);

    fs::write(root.join("README.md"), b"# edited\n").unwrap();
    snapshot.restore().unwrap();
    assert_eq!(fs::read(root.join("README.md")).unwrap(), b"# demo\n");
}

fn meta_mtime(meta: &fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    meta.mtime()
}

#[test]
fn flags_a_command_sets_in_the_index_do_not_hide_its_edits() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot_started_at(later()).unwrap();

    write(
        root,
        "src/lib.rs",
        b"pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    set_index_entry(root, "src/lib.rs", |entry| entry.flags |= ASSUME_VALID);
    write(root, "src/main.rs", b"fn main() { changed() }\n");
    set_index_entry(root, "src/main.rs", |entry| {
        entry.flags_extended |= SKIP_WORKTREE;
    });
    let report = snapshot.restore().unwrap();
    assert!(report.index_restored);
    assert_eq!(report.rewritten, vec!["src/lib.rs", "src/main.rs"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
    assert!(repo.dirty_paths().unwrap().is_empty());
}

#[test]
fn files_the_user_marked_assume_unchanged_or_skip_worktree_keep_their_bytes() {
    let (dir, repo) = fixture();
    let root = dir.path();
    // The user's own edits behind flags git honours: not dirty, but theirs to keep.
    write(root, "src/lib.rs", b"// local tweak\n");
    set_index_entry(root, "src/lib.rs", |entry| entry.flags |= ASSUME_VALID);
    set_index_entry(root, "tests/it.rs", |entry| {
        entry.flags_extended |= SKIP_WORKTREE;
    });
    fs::remove_file(root.join("tests/it.rs")).unwrap();
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot().unwrap();
    assert!(
        snapshot.dirty_paths().is_empty(),
        "{:?}",
        snapshot.dirty_paths()
    );

    write(root, "src/lib.rs", b"// the command's\n");
    write(root, "tests/it.rs", b"// recreated by the command\n");
    let report = snapshot.restore().unwrap();
    assert_eq!(report.rewritten, vec!["src/lib.rs"]);
    assert_eq!(report.removed, vec!["tests/it.rs"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn a_file_hidden_by_an_edit_of_info_exclude_or_of_a_tracked_gitignore_is_removed() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let exclude = fs::read(root.join(".git/info/exclude")).ok();
    let snapshot = repo.snapshot_started_at(later()).unwrap();

    write(root, "generated.txt", b"made by the command");
    fs::create_dir_all(root.join(".git/info")).unwrap();
    fs::write(root.join(".git/info/exclude"), b"generated.txt\n").unwrap();
    write(root, "src/out.rs", b"made by the command");
    write(root, ".gitignore", b"target/\n*.log\nsrc/out.rs\n");
    let report = snapshot.restore().unwrap();
    assert!(report.exclude_restored);
    assert_eq!(report.removed, vec!["generated.txt", "src/out.rs"]);
    assert_eq!(report.rewritten, vec![".gitignore"]);
    assert_eq!(fs::read(root.join(".git/info/exclude")).ok(), exclude);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn new_files_are_found_in_unchanged_and_new_directories_alike() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    // Directories old enough at the snapshot are only read again when they change.
    assert!(snapshot.dirs.values().all(Option::is_some));

    write(root, "tests/new_test.rs", b"// new");
    write(root, "a/b/c/deep.rs", b"// new");
    write(root, "target/debug/ignored", b"build output");
    let report = snapshot.restore().unwrap();
    assert_eq!(report.removed, vec!["a/b/c/deep.rs", "tests/new_test.rs"]);
    assert_eq!(report.removed_dirs, vec!["a", "a/b", "a/b/c"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
    assert!(root.join("target/debug/ignored").exists());
}

#[test]
fn a_directory_replaced_by_a_link_never_leads_the_restore_outside_the_tree() {
    let (dir, repo) = fixture();
    let root = dir.path();
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("lib.rs"), b"outside").unwrap();
    fs::remove_dir_all(root.join("src")).unwrap();
    symlink(outside.path(), root.join("src")).unwrap();

    let report = snapshot.restore().unwrap();
    assert_eq!(report.removed, vec!["src"]);
    assert_eq!(report.recreated, vec!["src/lib.rs", "src/main.rs"]);
    assert_eq!(fs::read(outside.path().join("lib.rs")).unwrap(), b"outside");
    assert!(!outside.path().join("main.rs").exists());
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn files_a_checkout_filter_changed_are_kept_whole_and_restored_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = init_with_files(
        root,
        &[
            (".gitattributes", b"*.bat text eol=crlf\n"),
            ("run.bat", b"@echo off\necho hi\n"),
            ("plain.txt", b"plain\n"),
        ],
        "crlf",
    )
    .unwrap();
    // A checkout writes CRLF: git calls the file clean, but its bytes are not the blob's.
    fs::remove_file(root.join("run.bat")).unwrap();
    let git = Repository::open(root).unwrap();
    git.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
    assert_eq!(
        fs::read(root.join("run.bat")).unwrap(),
        b"@echo off\r\necho hi\r\n"
    );
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert!(
        snapshot.dirty_paths().is_empty(),
        "{:?}",
        snapshot.dirty_paths()
    );
    assert_eq!(
        snapshot.tracked_entry(b"run.bat").unwrap().check,
        Check::Explicit
    );
    assert_eq!(
        snapshot.tracked_entry(b"plain.txt").unwrap().check,
        Check::Index
    );

    fs::write(root.join("run.bat"), b"broken\r\n").unwrap();
    snapshot.restore().unwrap();
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn permission_bits_git_does_not_track_are_restored() {
    let (dir, repo) = fixture();
    let root = dir.path();
    fs::set_permissions(root.join("README.md"), fs::Permissions::from_mode(0o600)).unwrap();
    freshen_index(root);
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert!(snapshot.dirty_paths().is_empty());
    fs::set_permissions(root.join("README.md"), fs::Permissions::from_mode(0o644)).unwrap();
    let report = snapshot.restore().unwrap();
    assert_eq!(report.modes_restored, vec!["README.md"]);
    let mode = fs::metadata(root.join("README.md"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn the_snapshot_is_the_clean_tree_check() {
    let (dir, repo) = fixture();
    let root = dir.path();
    write(root, "src/lib.rs", b"changed\n");
    fs::remove_file(root.join("README.md")).unwrap();
    write(root, "new/staged.rs", b"staged\n");
    let git = Repository::open(root).unwrap();
    let mut index = git.index().unwrap();
    index.add_path(Path::new("new/staged.rs")).unwrap();
    index.write().unwrap();
    write(root, "notes.txt", b"untracked\n");
    write(root, "target/debug/out", b"ignored\n");
    let snapshot = repo.snapshot().unwrap();
    assert_eq!(snapshot.dirty_paths(), repo.dirty_paths().unwrap());
    assert_eq!(
        snapshot.dirty_paths(),
        ["README.md", "new/staged.rs", "notes.txt", "src/lib.rs"]
    );
}

fn record() -> RunRecord {
    RunRecord {
        pid: 4242,
        started_at: "2026-11-26T10:00:00Z".to_owned(),
        root: "/repo".to_owned(),
        artifacts: Some("/repo/efix-artifacts".to_owned()),
    }
}

#[test]
fn a_journal_left_by_a_killed_run_restores_the_tree_byte_for_byte() {
    let (dir, repo) = fixture();
    let root = dir.path();
    fs::set_permissions(root.join("README.md"), fs::Permissions::from_mode(0o600)).unwrap();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let head = repo.head_commit().unwrap();
    let mut snapshot = repo.snapshot_started_at(later()).unwrap();
    let mut journal = Journal::begin(&repo, &snapshot, record()).unwrap();
    let git = Repository::open(root).unwrap();
    assert_eq!(
        git.find_reference("refs/efix/snapshot")
            .unwrap()
            .target()
            .map(|o| o.to_string()),
        head
    );
    snapshot.note_written(["src/lib.rs"]);
    journal.note_written(["src/lib.rs"]).unwrap();
    // What a run does before it is killed: a patch, a command's output, a commit.
    write(
        root,
        "src/lib.rs",
        b"pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    write(root, "tests/regression.rs", b"#[test]\nfn r() {}\n");
    fs::set_permissions(root.join("README.md"), fs::Permissions::from_mode(0o644)).unwrap();
    super::commit_all(root, "made by the command");
    drop(journal);
    drop(snapshot);

    let unfinished = Journal::unfinished(&repo).unwrap().unwrap();
    assert_eq!(unfinished.run, record());
    let (run, report) = unfinished.restore().unwrap();
    assert_eq!(run.pid, 4242);
    assert!(report.head_restored && report.index_restored);
    assert_eq!(report.rewritten, vec!["src/lib.rs"]);
    assert_eq!(report.removed, vec!["tests/regression.rs"]);
    assert_eq!(report.modes_restored, vec!["README.md"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
    assert_eq!(
        fs::metadata(root.join("README.md"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert_eq!(repo.head_commit().unwrap(), head);
    // Nothing is left: no journal, no ref.
    assert!(Journal::unfinished(&repo).unwrap().is_none());
    assert!(git.find_reference("refs/efix/snapshot").is_err());
}

/// Canaries are written into the user's tree (the target's test file edited in place, a new
/// file in a new directory beside it) with the journal noting them first; a kill while they
/// run leaves nothing of them after `efix restore`.
#[test]
fn canary_files_written_in_the_tree_are_gone_after_a_kill_and_a_journal_restore() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let mut snapshot = repo.snapshot_started_at(later()).unwrap();
    let mut journal = Journal::begin(&repo, &snapshot, record()).unwrap();
    let canaries = ["tests/it.rs", "tests/it_words/mod.rs"];
    snapshot.note_written(canaries);
    journal.note_written(canaries).unwrap();
    // In place, as the canary step writes: same inode, same permissions.
    fs::write(
        root.join("tests/it.rs"),
        "#[test]\nfn it() {}\n\n#[path = \"it_words/mod.rs\"]\nmod it_words;\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("tests/it_words")).unwrap();
    fs::write(
        root.join("tests/it_words/mod.rs"),
        "#[test]\nfn it_words() {}\n",
    )
    .unwrap();
    // The canary run's build output, which git ignores, is the user's to keep as after any
    // command.
    drop(journal);
    drop(snapshot);

    let (_, report) = Journal::unfinished(&repo)
        .unwrap()
        .unwrap()
        .restore()
        .unwrap();
    assert_eq!(report.rewritten, vec!["tests/it.rs"]);
    assert_eq!(report.removed, vec!["tests/it_words/mod.rs"]);
    assert!(!root.join("tests/it_words").exists());
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn a_journal_keeps_untracked_and_odd_files_through_the_object_database() {
    let (dir, repo) = fixture();
    let root = dir.path();
    write(root, "notes.txt", b"the user's notes\n");
    symlink("src/lib.rs", root.join("lib-link")).unwrap();
    let before = tree_fingerprint(root).unwrap();
    let snapshot = repo.snapshot().unwrap();
    let journal = Journal::begin(&repo, &snapshot, record()).unwrap();
    fs::remove_file(root.join("notes.txt")).unwrap();
    fs::remove_file(root.join("lib-link")).unwrap();
    drop(journal);

    let (_, report) = Journal::unfinished(&repo)
        .unwrap()
        .unwrap()
        .restore()
        .unwrap();
    assert_eq!(report.recreated, vec!["lib-link", "notes.txt"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn a_finished_journal_leaves_nothing_behind() {
    let (_dir, repo) = fixture();
    let snapshot = repo.snapshot().unwrap();
    let journal = Journal::begin(&repo, &snapshot, record()).unwrap();
    assert!(repo.root.join(".git/efix/journal.json").exists());
    journal.finish().unwrap();
    assert!(Journal::unfinished(&repo).unwrap().is_none());
    assert!(!repo.root.join(".git/efix/index").exists());
}

#[test]
fn a_damaged_journal_is_an_error_that_names_it() {
    let (_dir, repo) = fixture();
    let dir = repo.root.join(".git/efix");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("journal.json"), b"{not json").unwrap();
    let err = Journal::unfinished(&repo).unwrap_err();
    assert!(matches!(err, GitError::Journal { .. }), "{err:?}");
    assert!(err.to_string().contains("journal.json"), "{err}");
}

#[test]
fn the_lock_refuses_a_second_holder_naming_the_first_and_frees_on_drop() {
    let (_dir, repo) = fixture();
    let lock = repo.lock("2026-11-26T10:00:00Z").unwrap();
    let err = repo.lock("later").unwrap_err();
    match &err {
        GitError::Busy { pid, started, .. } => {
            assert_eq!(*pid, Some(std::process::id()));
            assert_eq!(started.as_deref(), Some("2026-11-26T10:00:00Z"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().starts_with(&format!(
            "another efix run (pid {}, started 2026-11-26T10:00:00Z) is in progress in",
            std::process::id()
        )),
        "{err}"
    );
    drop(lock);
    repo.lock("again").unwrap();
}

#[test]
fn each_linked_worktree_has_its_own_lock_and_journal() {
    let (dir, repo) = fixture();
    let git = Repository::open(dir.path()).unwrap();
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join("wt");
    git.worktree("wt", &path, None).unwrap();
    let linked = Repo::open(&path).unwrap();
    let _main = repo.lock("t").unwrap();
    let _linked = linked.lock("t").unwrap();

    let snapshot = linked.snapshot().unwrap();
    let journal = Journal::begin(&linked, &snapshot, record()).unwrap();
    assert!(Journal::unfinished(&repo).unwrap().is_none());
    assert!(git.find_reference("refs/efix/worktrees/wt").is_ok());
    journal.finish().unwrap();
    assert!(git.find_reference("refs/efix/worktrees/wt").is_err());
}

#[test]
fn restoring_only_what_efix_wrote_costs_nothing_else_and_a_full_restore_still_covers_all() {
    let (dir, repo) = fixture();
    let root = dir.path();
    freshen_index(root);
    let before = tree_fingerprint(root).unwrap();
    let mut snapshot = repo.snapshot_started_at(later()).unwrap();
    snapshot.note_written(["src/lib.rs", "tests/new/regression.rs"]);
    write(
        root,
        "src/lib.rs",
        b"pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    write(root, "tests/new/regression.rs", b"#[test]\nfn r() {}\n");
    // Not efix's: only a full restore looks at it.
    write(root, "README.md", b"# changed by a command\n");

    let report = snapshot.restore_written().unwrap();
    assert_eq!(report.rewritten, vec!["src/lib.rs"]);
    assert_eq!(report.removed, vec!["tests/new/regression.rs"]);
    assert_eq!(report.removed_dirs, vec!["tests/new"]);
    assert_eq!(
        fs::read(root.join("README.md")).unwrap(),
        b"# changed by a command\n"
    );
    let report = snapshot.restore().unwrap();
    assert_eq!(report.rewritten, vec!["README.md"]);
    assert_eq!(tree_fingerprint(root).unwrap(), before);
}

#[test]
fn many_files_are_checked_in_bulk_on_several_threads_with_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let contents: Vec<(String, Vec<u8>)> = (0..9000)
        .map(|n| {
            (
                format!("d{}/e{}/f{n}.txt", n % 7, n % 13),
                format!("{n}\n").into_bytes(),
            )
        })
        .collect();
    let files: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
        .collect();
    let repo = init_with_files(dir.path(), &files, "many").unwrap();
    freshen_index(dir.path());
    let before = tree_fingerprint(dir.path()).unwrap();
    let snapshot = repo.snapshot_started_at(later()).unwrap();
    assert!(
        checks(&snapshot)
            .iter()
            .all(|(_, check)| *check == Check::Index)
    );
    for n in [0, 4500, 8999] {
        write(
            dir.path(),
            &format!("d{}/e{}/f{n}.txt", n % 7, n % 13),
            b"changed\n",
        );
    }
    fs::remove_dir_all(dir.path().join("d3/e5")).unwrap();
    let report = snapshot.restore().unwrap();
    assert_eq!(
        report.rewritten,
        vec!["d0/e0/f0.txt", "d4/e3/f8999.txt", "d6/e2/f4500.txt"]
    );
    // Every n with n % 7 == 3 and n % 13 == 5.
    assert_eq!(report.recreated.len(), 99);
    assert_eq!(tree_fingerprint(dir.path()).unwrap(), before);
}
