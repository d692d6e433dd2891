//! The localization benchmark's cases: real failures, captured by running each project's
//! own test runner on a small real-world-shaped project (`tests/fixtures/localize/<case>/`,
//! re-captured with its `capture.sh`), plus the bundled example. A case loads into a scratch
//! working tree with the captured output as efix would see it there.
//!
//! Shared by the integration test (each case's fixed file among the first three candidates)
//! and `cargo bench --bench localize` (recall and timing, also on large generated trees).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `case.yml`: what was run, and the file(s) the real fix changes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    command: String,
    /// The project, relative to the repository, when it is not the case's own `tree/`.
    tree: Option<String>,
    fixed: Vec<String>,
}

/// One captured failure.
pub struct Case {
    pub name: String,
    pub command: String,
    pub fixed: Vec<String>,
    tree: PathBuf,
    stdout: String,
    stderr: String,
}

/// A case loaded into a scratch working tree.
pub struct Loaded {
    /// Keeps the scratch directory alive.
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub placed: Placed,
}

/// A case's files placed in a working tree, with its output as efix would see it there.
pub struct Placed {
    /// The case's files, repository-relative, sorted.
    pub tracked: Vec<String>,
    /// stdout then stderr, as the pipeline hands them to localization.
    pub output: String,
    /// The failing tests efix's own test-report parser finds in the output.
    pub failing: Vec<String>,
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every case, by name.
pub fn cases() -> Vec<Case> {
    let dir = repository().join("tests/fixtures/localize");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().join("case.yml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let case = dir.join(&name);
            let meta: Meta =
                yaml_serde::from_str(&std::fs::read_to_string(case.join("case.yml")).unwrap())
                    .unwrap();
            let tree = match &meta.tree {
                Some(tree) => repository().join(tree),
                None => case.join("tree"),
            };
            let read = |file: &str| std::fs::read_to_string(case.join(file)).unwrap();
            Case {
                name,
                command: meta.command,
                fixed: meta.fixed,
                tree,
                stdout: read("stdout.txt"),
                stderr: read("stderr.txt"),
            }
        })
        .collect()
}

impl Case {
    /// The project in a fresh scratch directory, every file tracked.
    pub fn load(&self) -> Loaded {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let placed = self.place(&root);
        Loaded {
            _dir: dir,
            root,
            placed,
        }
    }

    /// The project's files copied into `root` (which may hold other files).
    pub fn place(&self, root: &Path) -> Placed {
        let mut tracked = Vec::new();
        copy_tree(&self.tree, root, "", &mut tracked);
        tracked.sort();
        let root_text = root.to_string_lossy();
        let stdout = self.stdout.replace("{ROOT}", &root_text);
        let stderr = self.stderr.replace("{ROOT}", &root_text);
        let failing = efix::testreport::parse(&stdout, &stderr)
            .map(|report| {
                report
                    .tests
                    .into_iter()
                    .filter(|t| t.status == efix::testreport::TestStatus::Failed)
                    .map(|t| t.name)
                    .collect()
            })
            .unwrap_or_default();
        Placed {
            tracked,
            output: format!("{stdout}\n{stderr}"),
            failing,
        }
    }
}

/// Copy `from` to `to`, build output and dependencies left out, noting relative paths.
fn copy_tree(from: &Path, to: &Path, prefix: &str, tracked: &mut Vec<String>) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if entry.file_type().unwrap().is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                copy_tree(&entry.path(), &to.join(&name), &relative, tracked);
            }
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
            tracked.push(relative);
        }
    }
}

/// The 1-based rank of the first of `fixed` among `candidates`.
pub fn rank_of(candidates: &[efix::localize::Candidate], fixed: &[String]) -> Option<usize> {
    candidates
        .iter()
        .position(|c| fixed.contains(&c.path))
        .map(|i| i + 1)
}
