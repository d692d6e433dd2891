//! Path rules: which repository-relative paths a patch may touch, and the file sources the
//! engine reads from (the repository on disk, or memory for benches and tests).
//!
//! It does not apply anything; policy globs come from [`PatchPolicy`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::patch::model::{PatchError, PatchPolicy};
use crate::policy::Issue;

/// Where the engine reads the files a patch names.
pub trait FileSource {
    /// The file's bytes, or `None` when it does not exist.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, PatchError>;
    /// Whether `path` resolves, through a symlink, to somewhere outside the repository.
    fn escapes(&self, path: &str) -> bool;
    /// Why `path` is not the project's to change (git ignores it, or it sits in a dependency
    /// directory), or `None`; see `patch::ignored`.
    fn off_limits(&self, _path: &str) -> Option<String> {
        None
    }
}

/// A repository on disk.
#[derive(Debug, Clone)]
pub struct RepoDir {
    root: PathBuf,
}

impl RepoDir {
    pub fn new(root: &Path) -> Self {
        RepoDir {
            root: root.to_path_buf(),
        }
    }
}

impl FileSource for RepoDir {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, PatchError> {
        let full = self.root.join(path);
        match std::fs::read(&full) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(None),
            Err(source) => Err(PatchError::Io {
                what: format!("read {}", full.display()),
                source,
            }),
        }
    }

    fn escapes(&self, path: &str) -> bool {
        let Ok(root) = self.root.canonicalize() else {
            return false;
        };
        // The deepest existing ancestor decides: a symlinked directory or file that resolves
        // outside the root is an escape; a dangling link counts as one too.
        let mut probe = self.root.join(path);
        loop {
            if let Ok(meta) = std::fs::symlink_metadata(&probe) {
                return match probe.canonicalize() {
                    Ok(real) => !real.starts_with(&root),
                    Err(_) => meta.file_type().is_symlink(),
                };
            }
            if !probe.pop() || probe == self.root {
                return false;
            }
        }
    }

    fn off_limits(&self, path: &str) -> Option<String> {
        crate::patch::ignored::off_limits(&self.root, path)
    }
}

/// Files held in memory (benches, tests); nothing escapes.
#[derive(Debug, Clone, Default)]
pub struct MemoryFiles(pub BTreeMap<String, Vec<u8>>);

impl FileSource for MemoryFiles {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, PatchError> {
        Ok(self.0.get(path).cloned())
    }

    fn escapes(&self, _path: &str) -> bool {
        false
    }
}

/// Compiled path globs.
pub(crate) struct PathRules {
    protected: GlobSet,
    allow: Option<GlobSet>,
}

fn globset(globs: &[String]) -> Result<GlobSet, PatchError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|source| PatchError::Glob {
                glob: g.clone(),
                source,
            })?;
        b.add(glob);
    }
    b.build().map_err(|source| PatchError::Glob {
        glob: globs.join(","),
        source,
    })
}

/// The globs the last [`PathRules::for_policy`] call on this thread compiled, with the result.
type Compiled = (Vec<String>, Vec<String>, Rc<PathRules>);

thread_local! {
    /// Compiling globs for every answer showed in the profile; a run has one policy.
    static COMPILED: RefCell<Option<Compiled>> = const { RefCell::new(None) };
}

impl PathRules {
    /// The rules for `policy`, compiled once per policy (per thread) rather than per answer.
    pub fn for_policy(policy: &PatchPolicy) -> Result<Rc<Self>, PatchError> {
        let cached = COMPILED.with_borrow(|c| {
            c.as_ref()
                .filter(|(protected, allow, _)| {
                    *protected == policy.protected && *allow == policy.allow
                })
                .map(|(_, _, rules)| Rc::clone(rules))
        });
        if let Some(rules) = cached {
            return Ok(rules);
        }
        let rules = Rc::new(PathRules::new(policy)?);
        COMPILED.set(Some((
            policy.protected.clone(),
            policy.allow.clone(),
            Rc::clone(&rules),
        )));
        Ok(rules)
    }

    pub fn new(policy: &PatchPolicy) -> Result<Self, PatchError> {
        let allow = if policy.allow.is_empty() {
            None
        } else {
            Some(globset(&policy.allow)?)
        };
        Ok(PathRules {
            protected: globset(&policy.protected)?,
            allow,
        })
    }

    /// Normalize `raw` (drop `./`, doubled slashes) and check it; `Err` holds the issue.
    pub fn check(&self, raw: &str, source: &dyn FileSource) -> Result<String, Issue> {
        let path = normalize(raw);
        let issue = |rule: &str, why: &str| {
            Err(Issue::new(rule, format!("path {raw:?} {why}")).at_path(raw.to_owned()))
        };
        if path.is_empty() {
            return issue(
                "path.empty",
                "is empty; name a file relative to the repository root",
            );
        }
        if raw.starts_with('/') || raw.starts_with('\\') || raw.get(1..2) == Some(":") {
            return issue(
                "path.absolute",
                "is absolute; use a path relative to the repository root",
            );
        }
        let comps: Vec<Component<'_>> = Path::new(&path).components().collect();
        if comps.iter().any(|c| matches!(c, Component::ParentDir)) {
            return issue("path.parent", "contains `..`; stay inside the repository");
        }
        if comps.iter().any(|c| c.as_os_str() == ".git") {
            return issue(
                "path.git-dir",
                "is inside .git; change only tracked project files",
            );
        }
        if self.protected.is_match(&path) {
            return issue(
                "path.protected",
                "is protected by policy; leave it unchanged",
            );
        }
        if let Some(allow) = &self.allow
            && !allow.is_match(&path)
        {
            return issue(
                "path.not-allowed",
                "is outside the allowed paths (paths.allow); change only allowed files",
            );
        }
        if source.escapes(&path) {
            return issue(
                "path.symlink-escape",
                "goes through a symlink that leads outside the repository; change the real file",
            );
        }
        if let Some(why) = source.off_limits(&path) {
            return issue(
                "paths.ignored",
                &format!(
                    "{why}: dependencies, virtualenvs and build output are not the project's \
                     code and efix cannot restore them; change tracked project files only"
                ),
            );
        }
        Ok(path)
    }
}

fn normalize(raw: &str) -> String {
    let parts: Vec<&str> = raw
        .trim()
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(path: &str, policy: &PatchPolicy) -> String {
        let rules = PathRules::new(policy).unwrap_or_else(|e| panic!("{e}"));
        match rules.check(path, &MemoryFiles::default()) {
            Ok(p) => format!("ok:{p}"),
            Err(i) => i.rule,
        }
    }

    #[test]
    fn path_rules_refuse_escapes_and_protected_globs() {
        let p = PatchPolicy::default();
        let got: Vec<String> = [
            "./src//a.rs",
            "/etc/passwd",
            "src/../../x",
            ".git/config",
            ".github/workflows/ci.yml",
            ".efix.yml",
            "",
        ]
        .iter()
        .map(|x| rule(x, &p))
        .collect();
        assert_eq!(
            got,
            [
                "ok:src/a.rs",
                "path.absolute",
                "path.parent",
                "path.git-dir",
                "path.protected",
                "path.protected",
                "path.empty"
            ]
        );
    }

    #[test]
    fn allow_globs_limit_what_may_be_touched() {
        let p = PatchPolicy {
            allow: vec!["src/**".into()],
            ..PatchPolicy::default()
        };
        assert_eq!(
            (rule("src/x/y.rs", &p), rule("README.md", &p)),
            ("ok:src/x/y.rs".into(), "path.not-allowed".into())
        );
    }
}
