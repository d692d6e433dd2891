//! Paths a patch never touches because they are not the project's code: what git ignores
//! (installed dependencies, virtualenvs, build output) and, whatever `.gitignore` says,
//! untracked files inside a dependency directory. Efix's snapshot covers tracked and
//! untracked-but-not-ignored files only, and these directories hold the test runner itself
//! (`node_modules/mocha`, `site-packages/_pytest`), so a write there could change how tests
//! run and outlive the run.
//!
//! Tracked files are the project's, even under an ignore rule. Outside a git repository only
//! the dependency directories count.

use std::path::{Path, PathBuf};

/// Directories that hold installed packages.
const DEPENDENCY_DIRS: &[&str] = &["node_modules", "site-packages", "dist-packages"];

/// Why `path` (repository-relative, normalized) under `root` is off limits, or `None`.
pub(crate) fn off_limits(root: &Path, path: &str) -> Option<String> {
    let dependency = path.split('/').find(|part| DEPENDENCY_DIRS.contains(part));
    let repo = git2::Repository::discover(root).ok();
    let Some((repo, rel)) = repo
        .as_ref()
        .and_then(|repo| Some((repo, relative_to_workdir(repo, root, path)?)))
    else {
        return dependency.map(in_dependency_dir);
    };
    let ignored = repo.is_path_ignored(&rel).unwrap_or(false);
    if !ignored && dependency.is_none() {
        return None;
    }
    // The index is read only now: on a large repository it is the costly part, and most
    // paths a patch names are neither ignored nor in a dependency directory.
    let tracked = repo
        .index()
        .ok()
        .is_some_and(|index| index.get_path(&rel, 0).is_some());
    match (tracked, ignored) {
        (true, _) => None,
        (false, true) => Some("is ignored by git".to_owned()),
        (false, false) => dependency.map(in_dependency_dir),
    }
}

fn in_dependency_dir(dir: &str) -> String {
    format!("is inside a dependency directory ({dir})")
}

/// `path` relative to the repository's work tree (`root` may be a directory inside it).
fn relative_to_workdir(repo: &git2::Repository, root: &Path, path: &str) -> Option<PathBuf> {
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let prefix = root.strip_prefix(&workdir).ok()?;
    Some(prefix.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_and_dependency_paths_are_off_limits_and_tracked_files_are_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files: &[(&str, &[u8])] = &[
            (".gitignore", b"/node_modules/\n.venv/\nbuild/\n*.log\n"),
            ("src/app.js", b"x\n"),
            ("build/kept.txt", b"tracked although ignored\n"),
        ];
        let repo = crate::git::init_with_files(&dir.path().join("repo"), files, "initial")
            .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(&str, Option<String>)> = [
            "src/app.js",
            "src/new.js",
            "node_modules/mocha/lib/runner.js",
            ".venv/lib/python3.12/site-packages/_pytest/main.py",
            "build/out.js",
            "build/kept.txt",
            "debug.log",
            "vendor/node_modules/x.js",
        ]
        .into_iter()
        .map(|p| (p, off_limits(&repo.root, p)))
        .collect();
        let ignored = Some("is ignored by git".to_owned());
        assert_eq!(
            got,
            vec![
                ("src/app.js", None),
                ("src/new.js", None),
                ("node_modules/mocha/lib/runner.js", ignored.clone()),
                (
                    ".venv/lib/python3.12/site-packages/_pytest/main.py",
                    ignored.clone()
                ),
                ("build/out.js", ignored.clone()),
                ("build/kept.txt", None),
                ("debug.log", ignored),
                (
                    "vendor/node_modules/x.js",
                    Some("is inside a dependency directory (node_modules)".to_owned())
                ),
            ]
        );
    }

    #[test]
    fn outside_a_repository_only_dependency_directories_count() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                off_limits(dir.path(), "src/a.py"),
                off_limits(dir.path(), "lib/site-packages/x.py")
            ),
            (
                None,
                Some("is inside a dependency directory (site-packages)".to_owned())
            )
        );
    }
}
