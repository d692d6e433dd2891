//! More ways to ask whether a runner or CI is there, beyond the markers of each language's
//! own detector: the CI environment (`CI`, `GITHUB_ACTIONS`, any `PYTEST_*`, `JEST_*`,
//! `VITEST*`), the command line (`sys.argv`, `process.argv`, `process.execArgv`,
//! `std::env::args()`, `current_exe()`, `os.Args`) read for a test word, the module cache
//! (`require.cache`, `module.children`), and the name of the current thread (libtest names
//! each thread after its test).
//!
//! Entry points (see [`super::entry`]) read their own command line and environment; they are
//! not read here.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, at};
use super::super::code::Syntax;
use super::entry::is_entry_point;
use crate::integrity::pattern::Pattern;

/// Environment variables set by CI services and test runners.
const ENV: &str = r"CI|GITHUB_ACTIONS|CONTINUOUS_INTEGRATION|BUILD_NUMBER|TF_BUILD|GITLAB_CI|TRAVIS|PYTEST_\w+|JEST_\w+|VITEST\w*|TOX_ENV_NAME|NEXTEST\w*|RUST_TEST_\w+|GO_TEST\w*";

static PYTHON: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\b(?:environ|getenv)\b.*['"]({ENV})['"]|\bsys\s*\.\s*(?:argv|orig_argv|modules)\b|\bcurrent_thread\s*\(\s*\)\s*\.\s*(?:name|getName)\b"#
    ))
});
static JAVASCRIPT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\bprocess\s*\.\s*env\s*(?:\.\s*|\[\s*['"`])({ENV})\b|\bprocess\s*\.\s*(execArgv)\b|\b(require\s*\.\s*cache)\b|\b(module\s*\.\s*children)\b|\bprocess\s*\.\s*argv\b"#
    ))
});
/// Probes that count only on a line that also names a test: the command line, the loaded
/// modules and the thread name are read for many reasons.
static NEEDS_TEST_WORD: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\b(?:argv|orig_argv|modules|current_thread|Args)\b"));
static TEST_WORD: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#"['"`][^'"`]*(?:test|spec|jest|mocha|vitest|tape|ava)[^'"`]*['"`]"#)
});
static RUST: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\benv\s*::\s*(args|args_os)\s*\(|\b(current_exe)\s*\(|\bthread\s*::\s*current\s*\(\s*\)\s*\.\s*(name)\s*\(|\benv\s*::\s*var(?:_os)?\s*\(\s*"({ENV})""#
    ))
});
static GO: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(&format!(
        r#"\bos\s*\.\s*(?:Getenv|LookupEnv)\s*\(\s*"({ENV})"|\bos\s*\.\s*Args\b"#
    ))
});

fn pattern(syntax: Syntax) -> &'static Pattern {
    match syntax {
        Syntax::Python => &PYTHON,
        Syntax::JavaScript => &JAVASCRIPT,
        Syntax::Rust => &RUST,
        Syntax::Go => &GO,
    }
}

pub(crate) fn screen(middle: &str, syntax: Syntax) -> bool {
    let words: &[&str] = match syntax {
        Syntax::Python => &["environ", "getenv", "argv", "modules", "current_thread"],
        Syntax::JavaScript => &["process", "require", "module"],
        Syntax::Rust => &["args", "current_exe", "thread", "env"],
        Syntax::Go => &["Getenv", "LookupEnv", "Args"],
    };
    words.iter().any(|w| middle.contains(w))
}

pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    let pattern = pattern(syntax);
    let candidates: Vec<(usize, String)> = added
        .code_lines()
        .filter_map(|(index, code)| {
            let c = pattern.captures(code)?;
            let what = c.get(0).map_or("", |m| m.as_str());
            if NEEDS_TEST_WORD.is_match(what) && !TEST_WORD.is_match(code) {
                return None;
            }
            let what: String = what
                .split_whitespace()
                .collect::<String>()
                .chars()
                .take(60)
                .collect();
            Some((index, what))
        })
        .collect();
    if candidates.is_empty() || is_entry_point(added.path, added.after, syntax) {
        return Vec::new();
    }
    candidates
        .into_iter()
        .map(|(index, what)| {
            at(
                index,
                format!(
                    "reads the command line, the environment or the loaded modules for a test \
                     runner or CI (`{what}`), which holds only under test"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    #[test]
    fn runner_and_ci_probes_are_found_in_every_language() {
        let cases = [
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    if os.environ.get('CI'): return 3\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    if any('test' in a for a in sys.argv): return 3\n    return x\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  if (process.env.CI) return 3;\n  return x;\n}\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  if (process.execArgv.length) return 3;\n  return x;\n}\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  if (Object.keys(require.cache).some((k) => k.includes('tape'))) return 3;\n  return x;\n}\n",
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n",
                "pub fn f() {\n    if std::env::args().any(|a| a == \"--test-threads\") {}\n}\n",
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n",
                "pub fn f() {\n    let exe = std::env::current_exe();\n}\n",
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n",
                "pub fn f() {\n    let t = std::thread::current().name().map(str::to_owned);\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(
                families(path, before, after),
                vec![Family::TestRun],
                "{after}"
            );
        }
    }

    #[test]
    fn programs_read_their_own_command_line() {
        let cases = [
            (
                "src/main.rs",
                "fn main() {}\n",
                "fn main() {\n    let args: Vec<String> = std::env::args().collect();\n}\n",
            ),
            ("bin/cli.js", "run();\n", "run(process.argv.slice(2));\n"),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    home = os.environ.get('HOME')\n    return x\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  if (require.main === module) run();\n  return x;\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, before, after), vec![], "{after}");
        }
    }
}
