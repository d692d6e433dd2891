//! Mapping a path written in failure output to tracked files.
//!
//! Absolute paths under the repository root are made relative; other paths are matched by
//! suffix against tracked files (Go prints `foo_test.go`, CI logs carry paths from another
//! checkout like `/home/runner/work/x/x/src/a.py`). Paths inside dependency and toolchain
//! directories are ignored outright, so a tracked `case.py` is never blamed for
//! `/usr/lib/python3/unittest/case.py`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Path fragments that mark code the repository does not own.
const FOREIGN_MARKERS: &[&str] = &[
    "/rustc/",
    "/.cargo/registry/",
    "/.cargo/git/",
    "/.rustup/",
    "/rustlib/",
    "site-packages/",
    "dist-packages/",
    "/lib/python",
    "node_modules/",
    "node:",
    "/usr/lib/",
    "/usr/local/lib/",
    "/usr/local/go/",
    "/usr/include/",
    "/go/pkg/mod/",
    "/pkg/mod/",
    "/go/src/runtime/",
    "/go/src/testing/",
    "<frozen",
    "<string>",
    "<stdin>",
];

/// More suffix matches than this for one relative path make it too ambiguous to use.
const MAX_AMBIGUOUS: usize = 3;

/// Tracked files indexed by file name.
pub(crate) struct PathIndex<'a> {
    /// The root as given and, when different, as the filesystem resolves it (output may
    /// print either).
    roots: Vec<String>,
    tracked: HashSet<&'a str>,
    by_name: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> PathIndex<'a> {
    pub(crate) fn new(repo_root: &Path, tracked_files: &'a [String]) -> Self {
        let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
        for path in tracked_files {
            let name = path.rsplit('/').next().unwrap_or(path);
            by_name.entry(name).or_default().push(path);
        }
        for paths in by_name.values_mut() {
            paths.sort_unstable();
        }
        let mut roots = vec![repo_root.to_string_lossy().trim_end_matches('/').to_owned()];
        if let Ok(canonical) = repo_root.canonicalize() {
            let canonical = canonical.to_string_lossy().trim_end_matches('/').to_owned();
            if !roots.contains(&canonical) {
                roots.push(canonical);
            }
        }
        PathIndex {
            roots,
            tracked: tracked_files.iter().map(String::as_str).collect(),
            by_name,
        }
    }

    /// Tracked files `raw` may name, best first; empty when it names none or is foreign.
    pub(crate) fn resolve(&self, raw: &str) -> Vec<&'a str> {
        let raw = raw.strip_prefix("file://").unwrap_or(raw);
        if FOREIGN_MARKERS.iter().any(|marker| raw.contains(marker)) && !self.under_root(raw) {
            return Vec::new();
        }
        let absolute = raw.starts_with('/');
        let relative = match self.strip_root(raw) {
            Some(rest) if absolute => rest,
            _ => raw,
        };
        let relative = normalize(relative);
        if let Some(&exact) = self.tracked.get(relative.as_str()) {
            return vec![exact];
        }
        let name = relative.rsplit('/').next().unwrap_or(&relative);
        let Some(same_name) = self.by_name.get(name) else {
            return Vec::new();
        };
        if relative.starts_with('/') {
            // Another checkout: the longest tracked path that ends the raw path wins.
            return same_name
                .iter()
                .filter(|tracked| {
                    relative.ends_with(*tracked)
                        && relative.as_bytes()[relative.len() - tracked.len() - 1] == b'/'
                })
                .max_by_key(|tracked| tracked.len())
                .map(|tracked| vec![*tracked])
                .unwrap_or_default();
        }
        // A relative path printed from a subdirectory (a Go package, a workspace member).
        let matches: Vec<&str> = same_name
            .iter()
            .copied()
            .filter(|tracked| {
                *tracked == relative
                    || (tracked.ends_with(relative.as_str())
                        && tracked.as_bytes()[tracked.len() - relative.len() - 1] == b'/')
            })
            .collect();
        if matches.len() > MAX_AMBIGUOUS {
            return Vec::new();
        }
        matches
    }

    /// `path` (repository-relative) as the tracked list holds it, if tracked.
    pub(crate) fn get(&self, path: &str) -> Option<&'a str> {
        self.tracked.get(path).copied()
    }

    /// Tracked files equal to `wanted` or ending with `/wanted`, shortest first.
    pub(crate) fn with_suffix(&self, wanted: &str) -> Vec<&'a str> {
        let name = wanted.rsplit('/').next().unwrap_or(wanted);
        let mut found: Vec<&'a str> = self
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|path| {
                *path == wanted
                    || (path.ends_with(wanted)
                        && path.as_bytes()[path.len() - wanted.len() - 1] == b'/')
            })
            .collect();
        found.sort_by_key(|path| (path.len(), *path));
        found
    }

    /// The part of `raw` below the repository root, if it is below it.
    fn strip_root<'r>(&self, raw: &'r str) -> Option<&'r str> {
        self.roots.iter().find_map(|root| {
            raw.strip_prefix(root.as_str())
                .filter(|rest| rest.starts_with('/'))
                .map(|rest| rest.trim_start_matches('/'))
        })
    }

    fn under_root(&self, raw: &str) -> bool {
        self.strip_root(raw).is_some_and(|rest| {
            !rest.starts_with("node_modules/") && !rest.contains("/node_modules/")
        })
    }
}

/// Drop `./` segments and empty segments; keep a leading `/`.
fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Whether a path looks like a test file in any of the ecosystems efix knows.
pub(crate) fn is_test_path(path: &str) -> bool {
    // The test policy's rule, plus directory conventions that only matter for ranking.
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_test_dir = path
        .split('/')
        .rev()
        .skip(1)
        .any(|dir| matches!(dir, "tests" | "test" | "__tests__" | "spec" | "testing"));
    crate::integrity::test_policy::is_test_path(path)
        || in_test_dir
        || name.starts_with("test_")
        || name.ends_with("_tests.rs")
}
