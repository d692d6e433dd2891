//! The related form: one invocation of the reproduction's runner on the test files whose
//! imports reach the files a change touches (the selection is `localize::related_tests`).
//!
//! Per runner: pytest, jest, vitest and mocha get the files with only the options the runner
//! needs to find and load them, as the test-directory form (`root.rs`); `node --test` its whole
//! form's options and the files; `python -m unittest` the files' modules; Django's runners the
//! files' labels (relative to the labels' directory) with the whole form's options; tape and
//! tap the files; cargo the integration-test targets (`--test NAME`, and `--lib` for test
//! modules inside `src/`) of the one package that holds them, or every test target of the
//! packages when several do; go the test files' packages.
//!
//! jest's `--findRelatedTests` and `vitest related` are not used: the files run are the ones
//! the PR names with the import chain that selected them, and a test the proof's own suite
//! already runs is left out rather than run twice.
//!
//! This module only computes argv; it runs nothing.

use std::path::Path;

use super::derived::Derived;
use super::known::split_launcher;
use crate::policy::command::basename;

/// How the related form is built for one reproduction's runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelatedRunner {
    kind: Kind,
    /// The reproduction's argv.
    argv: Vec<String>,
    /// Its runner's whole suite (`known::derive`).
    whole: Vec<String>,
    /// Django: the directory test labels are relative to.
    labels: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pytest,
    Unittest,
    Django,
    Jest,
    Vitest,
    Mocha,
    NodeTest,
    Tape,
    Cargo,
    Go,
}

/// The related form's runner for a reproduction's argv, read against the repository at
/// `root`; `None` for a runner it is not built for (an unknown command, a package script).
pub(crate) fn runner(argv: &[String], root: &Path) -> Option<RelatedRunner> {
    let Derived { whole, .. } = super::known::derive(argv, root)?;
    let runner = |kind, labels: String| RelatedRunner {
        kind,
        argv: argv.to_vec(),
        whole: whole.clone(),
        labels,
    };
    if let Some(django) = crate::testreport::django::recognise_in(argv, root) {
        return Some(runner(Kind::Django, django.base));
    }
    let (_, tool) = split_launcher(argv)?;
    let sub = |at: usize| tool.get(at).map(String::as_str);
    let kind = match basename(tool.first()?) {
        "pytest" | "py.test" => Kind::Pytest,
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("pytest") => Kind::Pytest,
        "python" | "python3" if sub(1) == Some("-m") && sub(2) == Some("unittest") => {
            Kind::Unittest
        }
        "jest" => Kind::Jest,
        "vitest" => Kind::Vitest,
        "mocha" | "_mocha" => Kind::Mocha,
        "node" if tool.iter().any(|a| a == "--test") => Kind::NodeTest,
        "node" | "tape" | "tap" => {
            // A tape-style file run by node: the package's runner, when it is tape or tap.
            let (_, runner) = split_launcher(&whole)?;
            match basename(runner.first()?) {
                "tape" | "tap" => Kind::Tape,
                _ => return None,
            }
        }
        "cargo" if sub(1) == Some("test") => Kind::Cargo,
        "go" if sub(1) == Some("test") => Kind::Go,
        _ => return None,
    };
    Some(runner(kind, String::new()))
}

impl RelatedRunner {
    /// Whether the runner would run `path` as a test file when given it.
    pub(crate) fn accepts(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map_or("", |(_, ext)| ext);
        let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
        let js = matches!(
            ext,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts"
        );
        // Directories of data and helpers that sit beside the tests.
        let helper_dir = dirs.iter().any(|d| {
            matches!(
                *d,
                "fixtures" | "__fixtures__" | "__mocks__" | "helpers" | "support" | "node_modules"
            )
        });
        match self.kind {
            Kind::Pytest | Kind::Unittest => {
                ext == "py" && (name.starts_with("test") || name.ends_with("_test.py"))
            }
            Kind::Django => {
                ext == "py"
                    && name.starts_with("test")
                    && path.starts_with(&label_prefix(&self.labels))
            }
            Kind::Jest | Kind::Vitest => {
                js && !helper_dir
                    && (name.contains(".test.")
                        || name.contains(".spec.")
                        || dirs.contains(&"__tests__"))
            }
            Kind::Mocha | Kind::NodeTest | Kind::Tape => {
                js && !helper_dir && crate::integrity::test_policy::is_test_path(path)
            }
            Kind::Cargo => ext == "rs" && (dirs.first() == Some(&"tests") || in_src_tests(path)),
            Kind::Go => name.ends_with("_test.go"),
        }
    }

    /// The command running the test files `tests`, read against the repository at `root`;
    /// `None` when none of them can be given to the runner.
    pub(crate) fn command(&self, tests: &[&str], root: &Path) -> Option<Vec<String>> {
        if tests.is_empty() {
            return None;
        }
        let files: Vec<String> = tests.iter().map(|t| (*t).to_owned()).collect();
        let (launcher, tool) = split_launcher(&self.argv)?;
        let program = basename(tool.first()?);
        let under_launcher = |rest: Vec<String>| [launcher.to_vec(), rest].concat();
        match self.kind {
            Kind::Pytest | Kind::Jest | Kind::Vitest | Kind::Mocha => {
                super::root::on_targets(program, tool, &files).map(under_launcher)
            }
            Kind::Go => {
                let packages = unique(tests.iter().map(|t| match t.rsplit_once('/') {
                    Some((dir, _)) => format!("./{dir}"),
                    None => ".".to_owned(),
                }));
                super::root::on_targets(program, tool, &packages).map(under_launcher)
            }
            Kind::NodeTest => Some([self.whole.clone(), files].concat()),
            Kind::Tape => {
                let (_, runner) = split_launcher(&self.whole)?;
                let kept: Vec<String> = runner
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| *i == 0 || a.starts_with('-'))
                    .map(|(_, a)| a.clone())
                    .collect();
                let prefix = &self.whole[..self.whole.len() - runner.len()];
                Some([prefix.to_vec(), kept, files].concat())
            }
            Kind::Unittest => {
                let modules = unique(tests.iter().filter_map(|t| module(t, "")));
                (!modules.is_empty()).then(|| [self.argv[..3].to_vec(), modules].concat())
            }
            Kind::Django => {
                let labels = unique(tests.iter().filter_map(|t| module(t, &self.labels)));
                (!labels.is_empty()).then(|| [self.whole.clone(), labels].concat())
            }
            Kind::Cargo => self.cargo(tests, root),
        }
    }

    /// `cargo test` with the whole form's options and the targets holding `tests`.
    fn cargo(&self, tests: &[&str], root: &Path) -> Option<Vec<String>> {
        let mut packages: Vec<(String, Vec<String>)> = Vec::new();
        for test in tests {
            let Some(dir) = crate_dir(test, root) else {
                continue;
            };
            let rest = test.strip_prefix(&label_prefix(&dir)).unwrap_or(test);
            let target = match rest.strip_prefix("tests/") {
                Some(file) if !file.contains('/') => {
                    vec!["--test".to_owned(), file.trim_end_matches(".rs").to_owned()]
                }
                _ => vec!["--lib".to_owned()],
            };
            match packages.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, targets)) => {
                    if !targets
                        .windows(target.len())
                        .any(|w| w == target.as_slice())
                    {
                        targets.extend(target);
                    }
                }
                None => packages.push((dir, target)),
            }
        }
        let selects_package = self.whole.iter().any(|a| {
            matches!(
                a.as_str(),
                "-p" | "--package" | "--manifest-path" | "--workspace"
            )
        });
        let mut out = self.whole.clone();
        match packages.as_slice() {
            [] => return None,
            [(dir, targets)] => {
                if !dir.is_empty() && !selects_package {
                    out.extend(["-p".to_owned(), package_name(root, dir)?]);
                }
                out.extend(targets.iter().cloned());
            }
            several => {
                if selects_package {
                    return None;
                }
                for (dir, _) in several {
                    out.extend(["-p".to_owned(), package_name(root, dir)?]);
                }
                out.extend(["--tests".to_owned(), "--lib".to_owned()]);
            }
        }
        Some(out)
    }

    /// Whether `form` (a derived suite form's argv) already runs test file `file`: one of its
    /// arguments names the file, a directory holding it, its package, or its module or label.
    pub(crate) fn runs(&self, form: &[String], file: &str) -> bool {
        form.iter().skip(1).any(|arg| {
            if arg.starts_with('-') {
                return false;
            }
            let arg = arg.split_once("::").map_or(arg.as_str(), |(path, _)| path);
            let arg = arg.trim_start_matches("./");
            let arg = arg
                .strip_suffix("/...")
                .unwrap_or(arg)
                .trim_end_matches('/');
            let mut paths = vec![arg.to_owned()];
            if (!arg.contains('/') && !arg.ends_with(".py") && arg.contains('.'))
                || self.kind == Kind::Django
            {
                paths.push(format!(
                    "{}{}",
                    label_prefix(&self.labels),
                    arg.replace('.', "/")
                ));
            }
            paths.iter().any(|path| {
                !path.is_empty()
                    && (file == path
                        || file
                            .strip_prefix(path.as_str())
                            .is_some_and(|rest| rest.starts_with('/') || rest == ".py"))
            })
        })
    }
}

/// `dir/` (nothing at the root).
fn label_prefix(dir: &str) -> String {
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

/// The dotted module of a Python file relative to directory `base` (`tests/test_a.py` →
/// `tests.test_a`); `None` outside it or for a name Python cannot import.
fn module(path: &str, base: &str) -> Option<String> {
    let rest = path
        .strip_prefix(&label_prefix(base))?
        .strip_suffix(".py")?;
    rest.split('/')
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| rest.replace('/', "."))
}

/// A Rust test module inside a crate's `src/` (`src/tests.rs`, `src/parse_tests.rs`).
fn in_src_tests(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.split('/').any(|d| d == "src") && (name == "tests.rs" || name.ends_with("_tests.rs"))
}

/// The directory of the nearest `Cargo.toml` above `path` ("" at the root).
fn crate_dir(path: &str, root: &Path) -> Option<String> {
    let mut dir = path;
    while let Some((up, _)) = dir.rsplit_once('/') {
        if root.join(up).join("Cargo.toml").is_file() {
            return Some(up.to_owned());
        }
        dir = up;
    }
    root.join("Cargo.toml").is_file().then(String::new)
}

/// The `[package]` name of the crate in `dir`.
fn package_name(root: &Path, dir: &str) -> Option<String> {
    let text = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).ok()?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if in_package && let Some(value) = line.strip_prefix("name") {
            let value = value
                .trim_start()
                .strip_prefix('=')?
                .trim()
                .trim_matches('"');
            return Some(value.to_owned());
        }
    }
    None
}

fn unique(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        shlex::split(text).unwrap()
    }

    /// A repository holding `files` (paths only matter, and a few contents).
    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let abs = dir.path().join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, text).unwrap();
        }
        dir
    }

    fn command(repro: &str, root: &Path, tests: &[&str]) -> Option<String> {
        let runner = runner(&argv(repro), root)?;
        runner.command(tests, root).map(|argv| argv.join(" "))
    }

    #[test]
    fn each_runner_gets_the_files_with_the_options_it_needs() {
        let root = Path::new("/nonexistent");
        let cases = [
            (
                "pytest -q -p no:cacheprovider tests/test_a.py::test_b",
                vec!["other/test_c.py"],
                "pytest -p no:cacheprovider other/test_c.py",
            ),
            (
                "python -m pytest -k crlf tests/test_a.py",
                vec!["a/test_x.py", "b/test_y.py"],
                "python -m pytest a/test_x.py b/test_y.py",
            ),
            (
                "python3 -m unittest -v tests.test_a.T.test_b",
                vec!["other/test_c.py", "pkg/sub/test_d.py"],
                "python3 -m unittest other.test_c pkg.sub.test_d",
            ),
            (
                "npx jest --coverage=false -c jest.config.js tests/a.test.js -t x",
                vec!["lib/__tests__/b.test.js"],
                "npx jest -c jest.config.js lib/__tests__/b.test.js",
            ),
            (
                "npx vitest run --reporter=dot tests/a.test.ts",
                vec!["src/b.test.ts"],
                "npx vitest run src/b.test.ts",
            ),
            (
                "npx mocha -r ts-node/register test/a.spec.ts -g crlf",
                vec!["lib/test/b.spec.ts"],
                "npx mocha -r ts-node/register lib/test/b.spec.ts",
            ),
            (
                "node --test --test-name-pattern=crlf test/a.test.js",
                vec!["lib/b.test.js"],
                "node --test lib/b.test.js",
            ),
            (
                "go test -tags integration -run TestX ./pkg/a",
                vec!["pkg/b/b_test.go", "pkg/b/c_test.go", "main_test.go"],
                "go test -tags integration ./pkg/b .",
            ),
        ];
        for (repro, tests, expected) in cases {
            assert_eq!(
                command(repro, root, &tests).as_deref(),
                Some(expected),
                "{repro}"
            );
        }
    }

    #[test]
    fn django_labels_are_the_files_modules_under_the_label_directory() {
        let dir = repo(&[("tests/runtests.py", "import django\n")]);
        let repro = "python tests/runtests.py --parallel 1 auth_tests.test_validators.T.test_x";
        assert_eq!(
            command(
                repro,
                dir.path(),
                &["tests/forms_tests/test_a.py", "tests/admin_views/tests.py"]
            )
            .as_deref(),
            Some("python tests/runtests.py --parallel 1 forms_tests.test_a admin_views.tests")
        );
        let runner = runner(&argv(repro), dir.path()).unwrap();
        // The app label the proof runs holds its files; another app's do not.
        let form = argv("python tests/runtests.py --parallel 1 auth_tests");
        assert!(runner.runs(&form, "tests/auth_tests/test_hashers.py"));
        assert!(!runner.runs(&form, "tests/forms_tests/test_a.py"));
        assert!(runner.accepts("tests/forms_tests/test_a.py"));
        assert!(!runner.accepts("django/forms/fields.py"));
    }

    #[test]
    fn cargo_runs_the_integration_targets_of_the_package_that_holds_them() {
        let dir = repo(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"parser\", \"cli\"]\n",
            ),
            ("parser/Cargo.toml", "[package]\nname = \"text-parser\"\n"),
            ("cli/Cargo.toml", "[package]\nname = \"cli\"\n"),
        ]);
        let repro = "cargo test -p text-parser crlf";
        // `-p` already picks the package.
        assert_eq!(
            command(
                repro,
                dir.path(),
                &["parser/tests/api.rs", "parser/src/tests.rs"]
            )
            .as_deref(),
            Some("cargo test -p text-parser --no-fail-fast --test api --lib")
        );
        let repro = "cargo test crlf";
        assert_eq!(
            command(repro, dir.path(), &["parser/tests/api.rs"]).as_deref(),
            Some("cargo test --no-fail-fast -p text-parser --test api")
        );
        assert_eq!(
            command(
                repro,
                dir.path(),
                &["parser/tests/api.rs", "cli/tests/run.rs"]
            )
            .as_deref(),
            Some("cargo test --no-fail-fast -p text-parser -p cli --tests --lib")
        );
    }

    #[test]
    fn a_form_runs_the_files_under_the_paths_and_packages_it_names() {
        let root = Path::new("/nonexistent");
        let runner = runner(&argv("pytest tests/unit/test_a.py::test_b"), root).unwrap();
        let form = argv("pytest tests/");
        assert!(runner.runs(&form, "tests/unit/test_c.py"));
        assert!(!runner.runs(&form, "other/test_c.py"));
        // A directory's name is not a prefix of another's.
        assert!(!runner.runs(&form, "tests_extra/test_c.py"));
        let go = runner_for("go test -run X ./pkg/a");
        assert!(go.runs(&argv("go test ./pkg/..."), "pkg/b/b_test.go"));
        assert!(!go.runs(&argv("go test ./pkg/a"), "pkg/b/b_test.go"));
        let unittest = runner_for("python -m unittest tests.test_a.T.t");
        assert!(unittest.runs(
            &argv("python -m unittest discover -s tests -t ."),
            "tests/test_c.py"
        ));
        assert!(unittest.runs(&argv("python -m unittest tests.test_a"), "tests/test_a.py"));
    }

    fn runner_for(repro: &str) -> RelatedRunner {
        runner(&argv(repro), Path::new("/nonexistent")).unwrap()
    }

    #[test]
    fn test_files_are_those_each_runner_would_run() {
        let pytest = runner_for("pytest tests/test_a.py");
        assert!(pytest.accepts("pkg/tests/test_x.py"));
        assert!(pytest.accepts("pkg/x_test.py"));
        assert!(!pytest.accepts("tests/conftest.py"));
        assert!(!pytest.accepts("tests/helpers.py"));
        let jest = runner_for("npx jest tests/a.test.js");
        assert!(jest.accepts("src/__tests__/x.js"));
        assert!(jest.accepts("src/x.spec.ts"));
        assert!(!jest.accepts("test/fixtures/x.test.js"));
        assert!(!jest.accepts("src/x.js"));
        let go = runner_for("go test ./...  -run X");
        assert!(go.accepts("a/b_test.go"));
        assert!(!go.accepts("a/b.go"));
    }
}
