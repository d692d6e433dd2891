//! Source files a failing test file imports: when a test fails on an assertion, the failure
//! output often names only the test file, yet the code under test is what it imports.
//! Python `import`/`from`, JS/TS relative `require`/`import`, Rust `use crate_name::module`,
//! and Go's same-package files.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::localize::Candidate;
use crate::policy::test_integrity::is_test_path;

/// Test files whose imports are followed.
const MAX_TEST_FILES: usize = 3;
/// Share of the test file's score an imported file gets.
const IMPORT_SCORE_FACTOR: f64 = 0.6;

static PY_FROM: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*from\s+(\.*[\w.]*)\s+import\s+([\w, ()]+)").ok());
static PY_IMPORT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*import\s+([\w.]+)").ok());
static JS_IMPORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?:require\(\s*|from\s+|import\s+)['"](\.{1,2}/[^'"]+)['"]"#).ok()
});
static RUST_USE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*use\s+(\w+)::(\w+)").ok());

/// Candidates for the files imported by the test files among `candidates`, not already there.
pub(crate) fn imported(
    root: &Path,
    tracked: &[String],
    candidates: &[Candidate],
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for test in candidates
        .iter()
        .filter(|c| is_test_path(&c.path))
        .take(MAX_TEST_FILES)
    {
        let Ok(text) = std::fs::read_to_string(root.join(&test.path)) else {
            continue;
        };
        for path in imports_of(&test.path, &text, tracked) {
            if path == test.path
                || candidates.iter().any(|c| c.path == path)
                || out.iter().any(|c| c.path == path)
            {
                continue;
            }
            out.push(Candidate {
                path,
                score: test.score * IMPORT_SCORE_FACTOR,
                lines: Vec::new(),
                reasons: vec![format!("imported by failing test file {}", test.path)],
            });
        }
    }
    out
}

fn imports_of(test: &str, text: &str, tracked: &[String]) -> Vec<String> {
    let dir = Path::new(test)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let extension = test.rsplit('.').next().unwrap_or("");
    let mut found = Vec::new();
    match extension {
        "py" => {
            let mut modules: Vec<String> = Vec::new();
            if let Some(re) = PY_FROM.as_ref() {
                for c in re.captures_iter(text) {
                    let module = c[1].to_owned();
                    for name in c[2]
                        .split(',')
                        .map(|n| n.trim().trim_matches(|ch| ch == '(' || ch == ')'))
                    {
                        if !name.is_empty() {
                            modules.push(format!("{module}.{name}"));
                        }
                    }
                    modules.push(module);
                }
            }
            if let Some(re) = PY_IMPORT.as_ref() {
                modules.extend(re.captures_iter(text).map(|c| c[1].to_owned()));
            }
            for module in modules {
                let relative = module.starts_with('.');
                let dotted = module.trim_start_matches('.');
                if dotted.is_empty() {
                    continue;
                }
                let path = dotted.replace('.', "/");
                for suffix in [format!("{path}.py"), format!("{path}/__init__.py")] {
                    let wanted = if relative && !dir.is_empty() {
                        format!("{dir}/{suffix}")
                    } else {
                        suffix
                    };
                    found.extend(by_suffix(&wanted, tracked));
                }
            }
        }
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            let Some(re) = JS_IMPORT.as_ref() else {
                return found;
            };
            for c in re.captures_iter(text) {
                let joined = normalize(&format!("{dir}/{}", &c[1]));
                for ext in [
                    "",
                    ".js",
                    ".ts",
                    ".jsx",
                    ".tsx",
                    ".mjs",
                    ".cjs",
                    "/index.js",
                    "/index.ts",
                ] {
                    let candidate = format!("{joined}{ext}");
                    if tracked.contains(&candidate) {
                        found.push(candidate);
                        break;
                    }
                }
            }
        }
        "rs" => {
            let Some(re) = RUST_USE.as_ref() else {
                return found;
            };
            for c in re.captures_iter(text) {
                if matches!(&c[1], "std" | "core" | "alloc" | "super" | "self") {
                    continue;
                }
                for wanted in [
                    format!("src/{}.rs", &c[2]),
                    format!("src/{}/mod.rs", &c[2]),
                    "src/lib.rs".to_owned(),
                ] {
                    found.extend(by_suffix(&wanted, tracked));
                }
            }
        }
        "go" => {
            let prefix = if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            };
            found.extend(
                tracked
                    .iter()
                    .filter(|p| {
                        p.starts_with(&prefix)
                            && !p[prefix.len()..].contains('/')
                            && p.ends_with(".go")
                            && !p.ends_with("_test.go")
                    })
                    .cloned(),
            );
        }
        _ => {}
    }
    found.dedup();
    found.into_iter().filter(|p| !is_test_path(p)).collect()
}

/// Tracked files equal to `wanted` or ending with `/wanted`.
fn by_suffix(wanted: &str, tracked: &[String]) -> Vec<String> {
    let slash = format!("/{wanted}");
    tracked
        .iter()
        .filter(|p| *p == wanted || p.ends_with(&slash))
        .cloned()
        .collect()
}

/// Resolve `.` and `..` in a relative path.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn python_imports_map_to_modules_and_packages() {
        let files = tracked(&[
            "words.py",
            "pkg/__init__.py",
            "pkg/util.py",
            "tests/test_a.py",
        ]);
        let text = "from words import word_count\nfrom pkg import util\nimport os\n";
        assert_eq!(
            imports_of("tests/test_a.py", text, &files),
            ["words.py", "pkg/util.py", "pkg/__init__.py"]
        );
    }

    #[test]
    fn javascript_relative_requires_resolve_with_extensions() {
        let files = tracked(&["src/slug.js", "src/index.ts", "test/slug.test.js"]);
        let text = "const { slugify } = require('../src/slug.js');\nimport x from '../src';\nimport y from 'lodash';\n";
        assert_eq!(
            imports_of("test/slug.test.js", text, &files),
            ["src/slug.js", "src/index.ts"]
        );
    }

    #[test]
    fn go_tests_map_to_their_package_files() {
        let files = tracked(&["pkg/a.go", "pkg/a_test.go", "pkg/sub/b.go", "main.go"]);
        assert_eq!(
            imports_of("pkg/a_test.go", "package pkg\n", &files),
            ["pkg/a.go"]
        );
    }
}
