//! Reading the tests from production code: a string literal that names a test directory or a
//! test file (`tests/`, `__tests__`, `test_x.py`, `x.test.js`, `x_test.go`, `conftest.py`) on
//! a line that opens, reads, lists or builds a path (`open`, `Path`, `glob`, `os.path.join`,
//! `__file__`, `fs.readFileSync`, `include_str!`, `os.ReadFile`). Code that reads the test
//! can pull the expected value out of it at run time.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use crate::integrity::pattern::Pattern;

/// A string literal (single, double or back quotes) on one line.
static LITERAL: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#""([^"\\]*(?:\\.[^"\\]*)*)"|'([^'\\]*(?:\\.[^'\\]*)*)'|`([^`]*)`"#)
});

/// Calls and names that touch the file system or build a path.
static FILE_ACCESS: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\b(?:open|read|read_text|read_bytes|readFile|readFileSync|readdir|readdirSync|readlines|Path|PurePath|glob|iglob|rglob|listdir|scandir|walk|join|resolve|exists|existsSync|createReadStream|include_str|include_bytes|read_to_string|ReadFile|ReadDir|Open|loadtxt|load)\b|__file__|__dirname|__filename|import\.meta\.url|\bCARGO_MANIFEST_DIR\b",
    )
});

/// Whether a literal names a test directory or a test file.
pub(crate) fn names_tests(literal: &str) -> bool {
    let parts: Vec<&str> = literal
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    if parts.is_empty() {
        return false;
    }
    let last = parts.len() - 1;
    parts.iter().enumerate().any(|(i, part)| {
        let dir_like = i < last || literal.ends_with('/') || parts.len() == 1;
        (dir_like && matches!(*part, "tests" | "test" | "__tests__" | "spec" | "testing"))
            || is_test_file(part)
    })
}

fn is_test_file(name: &str) -> bool {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    match ext {
        "py" => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest",
        "go" => stem.ends_with("_test"),
        "rs" => false,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            stem.ends_with(".test") || stem.ends_with(".spec")
        }
        _ => false,
    }
}

pub(crate) fn screen(middle: &str) -> bool {
    ["test", "spec", "conftest"]
        .iter()
        .any(|w| middle.contains(w))
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    added
        .code_lines()
        .filter(|(_, code)| code.contains("test") || code.contains("spec"))
        .filter_map(|(index, code)| {
            let literal = LITERAL.captures_iter(code).find_map(|c| {
                let text = (1..=3).find_map(|i| c.get(i))?.as_str();
                names_tests(text).then(|| text.to_owned())
            })?;
            FILE_ACCESS.is_match(code).then(|| {
                of(
                    Family::TestFileRead,
                    index,
                    format!(
                        "reads the tests (`{literal}`) from production code, which can pull the \
                         expected value out of the test at run time"
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use super::names_tests;
    use crate::integrity::test_detection::Family;

    #[test]
    fn literals_that_name_tests_are_recognised() {
        let yes = [
            "tests/test_a.py",
            "tests",
            "../test/",
            "__tests__/x.js",
            "a.test.ts",
            "conftest.py",
            "pkg/x_test.go",
            "**/test_*.py",
        ];
        let no = [
            "testdata.json",
            "contest",
            "latest/",
            "src/lib.rs",
            "attest.py",
            "x.py",
            "a test of b",
        ];
        let missed: Vec<_> = yes.iter().filter(|l| !names_tests(l)).collect();
        let wrong: Vec<_> = no.iter().filter(|l| names_tests(l)).collect();
        assert_eq!(
            (missed, wrong),
            (vec![] as Vec<&&str>, vec![] as Vec<&&str>)
        );
    }

    #[test]
    fn reads_of_test_files_are_found_in_every_language() {
        let cases = [
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    src = open(os.path.join(os.path.dirname(__file__), '..', 'tests', 'test_core.py')).read()\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    files = glob.glob('tests/**/test_*.py')\n    return x\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  const t = fs.readFileSync(path.join(__dirname, '../test/a.test.js'), 'utf8');\n  return x;\n}\n",
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n",
                "pub fn f() {\n    let t = std::fs::read_to_string(\"tests/cli.rs\");\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(
                families(path, before, after),
                vec![Family::TestFileRead],
                "{after}"
            );
        }
    }

    #[test]
    fn test_words_that_are_not_test_paths_are_allowed() {
        let cases = [
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    data = open(os.path.join(root, 'latest.json')).read()\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    parser.add_argument('tests', help='which tests to run')\n    return x\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, before, after), vec![], "{after}");
        }
    }
}
