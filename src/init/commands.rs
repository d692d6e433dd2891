//! The commands `efix init` derives for each runner it found: a real test command of the
//! repository (the reproduction a user would give), the suite forms Prove derives from it
//! (`pipeline/suite`, the same code a run uses), and the programs those commands start, which
//! become `commands.allow`.

use std::path::Path;

use super::detect::{Findings, PackageManager, Runner, is_python_test_file};

/// One runner's commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerCommands {
    pub runner: Runner,
    /// A command that runs one real test file of the repository (or the whole suite when the
    /// runner's files are not found).
    pub example: String,
    /// The suite forms Prove derives from `example`, widest first; empty when the example is
    /// the whole suite already.
    pub suites: Vec<String>,
    /// The programs `example` and `suites` start, in order of first use.
    pub programs: Vec<String>,
}

/// The commands of every runner in `findings`, in the findings' order.
pub fn commands(root: &Path, findings: &Findings) -> Vec<RunnerCommands> {
    let launcher = launcher(findings.javascript.as_ref().map(|f| f.what));
    findings
        .runners
        .iter()
        .map(|found| {
            let argv = example(found.what, &findings.files, &launcher);
            let suites: Vec<Vec<String>> = match crate::pipeline::suite::derive(&argv, root) {
                crate::pipeline::suite::Derivation::Forms(forms) => {
                    forms.into_iter().map(|form| form.argv).collect()
                }
                _ => Vec::new(),
            };
            let mut programs: Vec<String> = Vec::new();
            for command in std::iter::once(&argv).chain(&suites) {
                if let Some(program) = command.first() {
                    let name = crate::policy::command::basename(program).to_owned();
                    if !programs.contains(&name) {
                        programs.push(name);
                    }
                }
            }
            RunnerCommands {
                runner: found.what,
                example: join(&argv),
                suites: suites.iter().map(|argv| join(argv)).collect(),
                programs,
            }
        })
        .collect()
}

/// argv as a command line that splits back into the same argv.
pub fn join(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// What runs a package's binaries under its package manager.
fn launcher(manager: Option<PackageManager>) -> Vec<String> {
    let words: &[&str] = match manager {
        Some(PackageManager::Pnpm) => &["pnpm", "exec"],
        Some(PackageManager::Yarn) => &["yarn"],
        _ => &["npx"],
    };
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The runner's command on its first test file in path order, else its whole suite.
fn example(runner: Runner, files: &[String], launcher: &[String]) -> Vec<String> {
    // A test of the repository's own suite: not a fixture or an example that its runner
    // does not collect, and one under a top-level test directory when there is one.
    let first = |pick: &dyn Fn(&str) -> bool| {
        let candidates: Vec<&String> = files
            .iter()
            .filter(|f| pick(f) && !f.split('/').any(|part| NOT_SUITE_DIRS.contains(&part)))
            .collect();
        candidates
            .iter()
            .find(|f| TEST_DIRS.iter().any(|dir| f.starts_with(dir)))
            .or(candidates.first())
            .map(|f| (*f).clone())
    };
    let under_launcher = |rest: &[&str], file: Option<String>| {
        let mut argv = launcher.to_vec();
        argv.extend(owned(rest));
        argv.extend(file);
        argv
    };
    match runner {
        Runner::Pytest => {
            let file = first(&|f| is_python_test_file(f) && !f.ends_with("/tests.py"));
            [owned(&["pytest"]), file.into_iter().collect()].concat()
        }
        Runner::Unittest => {
            let file = first(&|f| is_python_test_file(f));
            let module = file.map(|f| python_module(&f));
            [
                owned(&["python3", "-m", "unittest"]),
                module.into_iter().collect(),
            ]
            .concat()
        }
        Runner::Django => {
            let file = first(&|f| is_python_test_file(f));
            let module = file.map(|f| python_module(&f));
            [
                owned(&["python3", "manage.py", "test"]),
                module.into_iter().collect(),
            ]
            .concat()
        }
        Runner::Jest => under_launcher(&["jest"], first(&is_js_spec)),
        Runner::Vitest => under_launcher(&["vitest", "run"], first(&is_js_spec)),
        Runner::Mocha => under_launcher(&["mocha"], first(&is_js_test_dir_file)),
        Runner::Tape => match first(&is_js_test_dir_file) {
            // A tape test is a plain script: node runs it.
            Some(file) => vec!["node".to_owned(), file],
            None => under_launcher(&["tape"], None),
        },
        Runner::NodeTest => {
            let file = first(&|f| is_js_spec(f) || is_js_test_dir_file(f));
            [owned(&["node", "--test"]), file.into_iter().collect()].concat()
        }
        Runner::Cargo => {
            let target = first(&|f| {
                f.starts_with("tests/") && f.ends_with(".rs") && f.matches('/').count() == 1
            });
            let mut argv = owned(&["cargo", "test"]);
            if let Some(file) = target {
                let stem = file.trim_start_matches("tests/").trim_end_matches(".rs");
                argv.extend(owned(&["--test", stem]));
            }
            argv
        }
        Runner::Go => {
            let dir = first(&|f| f.ends_with("_test.go")).map(|f| {
                f.rsplit_once('/')
                    .map_or(String::new(), |(d, _)| d.to_owned())
            });
            let package = match dir {
                Some(dir) if !dir.is_empty() => format!("./{dir}"),
                Some(_) => ".".to_owned(),
                None => "./...".to_owned(),
            };
            vec!["go".to_owned(), "test".to_owned(), package]
        }
    }
}

/// Directories whose files a runner's suite usually does not collect as tests.
const NOT_SUITE_DIRS: &[&str] = &[
    "fixtures", "fixture", "testdata", "examples", "example", "docs",
];
/// Top-level test directories, preferred for the example.
const TEST_DIRS: &[&str] = &["tests/", "test/", "__tests__/", "spec/"];

const JS_EXTENSIONS: &[&str] = &[".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"];

fn is_js(path: &str) -> bool {
    JS_EXTENSIONS.iter().any(|ext| path.ends_with(ext)) && !path.ends_with(".d.ts")
}

/// `*.test.js`, `*.spec.ts` or a file under `__tests__/`.
fn is_js_spec(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    is_js(path)
        && (name.contains(".test.") || name.contains(".spec.") || path.contains("__tests__/"))
}

/// A script directly under `test/` or `tests/` (mocha's and tape's habit), or a spec file.
fn is_js_test_dir_file(path: &str) -> bool {
    let in_test_dir = ["test/", "tests/"]
        .iter()
        .any(|dir| path.starts_with(dir) && path[dir.len()..].matches('/').count() == 0);
    is_js(path) && (in_test_dir || is_js_spec(path))
}

/// `app/tests/test_a.py` → `app.tests.test_a`.
fn python_module(path: &str) -> String {
    path.trim_end_matches(".py").replace('/', ".")
}
