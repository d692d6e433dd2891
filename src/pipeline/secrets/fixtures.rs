//! Credential-shaped test data the repository itself holds: a match of a place-based rule (a
//! URL's `user:password@`, an `Authorization:` or `Cookie:` value) whose exact text is in one
//! of the repository's tracked test files is a fixture, and follows the placeholder rules in
//! every round's prompt (recorded with its reason, sent as it is) instead of refusing the
//! prompt. HTTP and URL libraries test their credential parsing with such URLs
//! (`http://user:pass%20pass@complex.url.com`), their test ids repeat them, and every round's
//! prompt quotes those tests and the failures that name them.
//!
//! What stays a secret whatever the test files hold: token formats and the configured secrets
//! (their rules are not place-based), and a place-based match that holds a configured secret's
//! value. A credential committed to a tracked test file is already in the hands of everyone
//! who can read the repository; the configured secrets are what the run must never send.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::runner::Secret;

/// Test files larger than this (1 MiB) are not read: generated data, not fixtures.
const FILE_BYTES_AT_MOST: u64 = 1024 * 1024;

/// The repository's tracked test files, read on first use.
#[derive(Debug, Default)]
pub(crate) struct Fixtures {
    root: PathBuf,
    paths: Vec<String>,
    texts: OnceCell<Vec<(String, String)>>,
}

impl Fixtures {
    /// The tracked test files among `tracked` (repository-relative paths) under `root`.
    pub(crate) fn new(root: &Path, tracked: &[String]) -> Self {
        Fixtures {
            root: root.to_path_buf(),
            paths: tracked
                .iter()
                .filter(|path| crate::integrity::test_policy::is_test_path(path))
                .cloned()
                .collect(),
            texts: OnceCell::new(),
        }
    }

    /// No test files: nothing is a fixture.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Fixtures::default()
    }

    /// The tracked test file that holds `needle` verbatim, if any.
    fn holding(&self, needle: &str) -> Option<&str> {
        if needle.is_empty() {
            return None;
        }
        let texts = self.texts.get_or_init(|| {
            self.paths
                .iter()
                .filter_map(|path| {
                    let full = self.root.join(path);
                    let small = std::fs::metadata(&full)
                        .is_ok_and(|meta| meta.is_file() && meta.len() <= FILE_BYTES_AT_MOST);
                    let text = std::fs::read_to_string(&full).ok().filter(|_| small)?;
                    Some((path.clone(), text))
                })
                .collect()
        });
        texts
            .iter()
            .find(|(_, text)| text.contains(needle))
            .map(|(path, _)| path.as_str())
    }

    /// Why the match `matched` of the place-based rule `rule` is test data of the repository,
    /// or `None`. `secrets` are the configured ones: a match holding one of their values is
    /// never test data.
    pub(crate) fn why(&self, rule: &str, matched: &str, secrets: &[Secret]) -> Option<String> {
        if !super::placeholder::is_place_based(rule) {
            return None;
        }
        let holds_secret = secrets
            .iter()
            .any(|secret| !secret.value.is_empty() && matched.contains(secret.value.as_str()));
        if holds_secret {
            return None;
        }
        // A URL's credentials are looked for with the `@` that ends them, so a pair of words
        // elsewhere in a test does not make a URL's credentials a fixture.
        let needle = if rule == "url-credentials" {
            format!("{matched}@")
        } else {
            matched.to_owned()
        };
        let path = self.holding(&needle)?;
        Some(format!("test data in the tracked test file `{path}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap_or(dir.path()))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(full, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let tracked = files.iter().map(|(path, _)| (*path).to_owned()).collect();
        (dir, tracked)
    }

    #[test]
    fn credentials_in_a_tracked_test_file_are_fixtures_and_configured_values_never() {
        let (dir, tracked) = repo(&[
            (
                "tests/test_utils.py",
                "URLS = ['http://user%25user:Zq8%21vR2%40kL9@complex.url.com/path',\n\
                 'https://alice:s3cr3t-Pa55w0rd-9x@db.internal/x']\n",
            ),
            (
                "src/conf.py",
                "URL = 'https://bob:Xk9vQ2mPz7wL@prod.internal/'\n",
            ),
        ]);
        let fixtures = Fixtures::new(dir.path(), &tracked);
        let secret = Secret {
            name: "DB_PASSWORD".to_owned(),
            value: "s3cr3t-Pa55w0rd-9x".to_owned(),
        };
        let why =
            |rule: &str, matched: &str| fixtures.why(rule, matched, std::slice::from_ref(&secret));
        assert_eq!(
            [
                why("url-credentials", "user%25user:Zq8%21vR2%40kL9"),
                // The configured secret's value: never test data.
                why("url-credentials", "alice:s3cr3t-Pa55w0rd-9x"),
                // Only in a source file, not a test file.
                why("url-credentials", "bob:Xk9vQ2mPz7wL"),
                // Not a place-based rule.
                why("github-token", "user%25user:Zq8%21vR2%40kL9"),
            ],
            [
                Some("test data in the tracked test file `tests/test_utils.py`".to_owned()),
                None,
                None,
                None
            ]
        );
    }
}
