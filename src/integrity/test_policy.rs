//! Test policy: which files are tests, and whether a change deletes, skips or weakens tests.
//!
//! Pure functions of paths and file contents; the patch checks and the Prevent phase call them.
//! Recognition is line-based (no parser): good enough to flag removed or skipped tests for a
//! model to explain, not a proof that a test still runs.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::policy::Issue;

/// Whether `path` (repository-relative, `/`-separated) is a test file.
pub fn is_test_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let dirs = &parts[..parts.len().saturating_sub(1)];
    let in_dir = |d: &str| dirs.contains(&d);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "rs" => in_dir("tests"),
        "py" => {
            name.starts_with("test_")
                || name.ends_with("_test.py")
                || name == "conftest.py"
                || in_dir("tests")
                || in_dir("test")
        }
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            // Mocha and Jasmine keep plain `.js` files under test/ or spec/.
            name.contains(".test.")
                || name.contains(".spec.")
                || in_dir("__tests__")
                || in_dir("test")
                || in_dir("tests")
                || in_dir("spec")
        }
        "go" => name.ends_with("_test.go"),
        _ => false,
    }
}

/// Names of test functions declared in `content`, with their 1-based lines.
fn test_names(path: &str, content: &str) -> BTreeMap<String, u64> {
    let mut names = BTreeMap::new();
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let lines: Vec<&str> = content.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let name = match ext {
            "rs" => {
                let attr_above = lines[..i]
                    .iter()
                    .rev()
                    .map(|l| l.trim())
                    .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                    .any(|l| l.starts_with("#[test]") || l.ends_with("::test]"));
                if attr_above { fn_name(t) } else { None }
            }
            "py" => t
                .strip_prefix("def ")
                .or_else(|| t.strip_prefix("async def "))
                .filter(|r| r.starts_with("test"))
                .map(ident),
            "go" => t
                .strip_prefix("func Test")
                .map(|r| format!("Test{}", ident(r))),
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => js_test_title(t),
            _ => None,
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            names.entry(n).or_insert(i as u64 + 1);
        }
    }
    names
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn fn_name(t: &str) -> Option<String> {
    let pos = t.find("fn ")?;
    let before = &t[..pos];
    let ok = before.split_whitespace().all(|w| {
        matches!(w, "pub" | "async" | "unsafe" | "const" | "extern") || w.starts_with("pub(")
    });
    ok.then(|| ident(&t[pos + 3..]))
}

fn js_test_title(t: &str) -> Option<String> {
    let rest = [
        "it(",
        "test(",
        "it.only(",
        "test.only(",
        "it.skip(",
        "test.skip(",
        "xit(",
        "xtest(",
    ]
    .iter()
    .find_map(|p| t.strip_prefix(p))?;
    let q = rest.chars().next()?;
    if !matches!(q, '\'' | '"' | '`') {
        return None;
    }
    let body = &rest[1..];
    body.find(q).map(|end| body[..end].to_owned())
}

/// Markers that switch a test off, by the language of the file that holds them: a marker of
/// another language is ordinary code there (`.skip(` is an iterator adapter in Rust).
fn skip_markers(path: &str) -> &'static [&'static str] {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "rs" => &["#[ignore"],
        "py" => &[
            "@pytest.mark.skip",
            "@pytest.mark.skipif",
            "@pytest.mark.xfail",
            "pytest.skip(",
            "unittest.skip",
            "@skip",
        ],
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            &[".skip(", "xit(", "xdescribe(", "xtest("]
        }
        "go" => &["t.Skip(", "t.Skipf(", "t.SkipNow("],
        _ => &[],
    }
}

/// Whether `line` holds `marker` as code tokens: a marker that starts with a word character
/// must not continue a longer name (`xit(` is not in `process.exit(` or `atexit(`).
fn has_marker(line: &str, marker: &str) -> bool {
    let word_start = marker
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_');
    line.match_indices(marker).any(|(at, _)| {
        !word_start
            || line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
    })
}

fn skip_count(content: &str, marker: &str) -> usize {
    content.lines().filter(|l| has_marker(l, marker)).count()
}

/// Lines kept before the first changed line, so attributes above a changed function count.
const LEAD_CONTEXT: usize = 8;

/// The changed middle of both texts (whole lines, with some leading context) and the number
/// of lines skipped before it: names and markers outside it are the same on both sides.
fn changed_middle<'a>(before: &'a str, after: &'a str) -> (usize, &'a str, &'a str) {
    let (lines, start, cut) = crate::patch::middle_bounds(before, after);
    // Back up LEAD_CONTEXT whole lines; everything before `start` is common and ends with a
    // newline (or is empty).
    let head = before.as_bytes().get(..start).unwrap_or_default();
    let mut lead_start = start;
    let mut backed = 0;
    while backed < LEAD_CONTEXT && lead_start > 0 {
        lead_start = head[..lead_start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        backed += 1;
    }
    (
        lines.saturating_sub(backed),
        before.get(lead_start..before.len() - cut).unwrap_or(""),
        after.get(lead_start..after.len() - cut).unwrap_or(""),
    )
}

/// Issues for test functions removed and skip markers added between `before` and `after`.
pub fn weakened_tests(path: &str, before: &str, after: &str) -> Vec<Issue> {
    let (skipped, before, after) = changed_middle(before, after);
    let mut issues = Vec::new();
    let (old, new) = (test_names(path, before), test_names(path, after));
    for (name, line) in &old {
        if !new.contains_key(name) {
            issues.push(
                Issue::new(
                    "check.deleted-test",
                    format!(
                        "test {name} in {path} was removed; keep existing tests and fix the code \
                         instead"
                    ),
                )
                .at_path(path)
                .at_line(*line + skipped as u64),
            );
        }
    }
    for marker in skip_markers(path) {
        // Only an added marker counts, and searching the whole text once is much cheaper than
        // counting lines (this showed in the profile).
        if !after.contains(marker) {
            continue;
        }
        // `.skip(` also matches `pytest.skip(`; count each line under its longest marker.
        if *marker == ".skip("
            && (before.contains("pytest.skip(") || after.contains("pytest.skip("))
        {
            continue;
        }
        if skip_count(after, marker) > skip_count(before, marker) {
            let line = first_new_line(before, after, marker);
            let mut issue = Issue::new(
                "check.skipped-test",
                format!(
                    "{path} adds {marker:?}, which skips a test; make the test pass instead of \
                     skipping it"
                ),
            )
            .at_path(path);
            if let Some(l) = line {
                issue = issue.at_line(l + skipped as u64);
            }
            issues.push(issue);
        }
    }
    issues
}

fn first_new_line(before: &str, after: &str, marker: &str) -> Option<u64> {
    let old: Vec<&str> = before.lines().filter(|l| has_marker(l, marker)).collect();
    after
        .lines()
        .enumerate()
        .find(|(_, l)| has_marker(l, marker) && !old.contains(l))
        .map(|(i, _)| i as u64 + 1)
}

/// 0-based line ranges of test code inside `content`: Rust `#[cfg(test)]` modules and
/// `#[test]` functions; for a test file, the whole file.
pub fn test_line_ranges(path: &str, content: &str) -> Vec<Range<usize>> {
    let lines: Vec<&str> = content.lines().collect();
    if is_test_path(path) {
        return if lines.is_empty() {
            Vec::new()
        } else {
            let whole = 0..lines.len();
            vec![whole]
        };
    }
    if !path.ends_with(".rs") {
        return Vec::new();
    }
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if (t.starts_with("#[cfg(test)]") || t.starts_with("#[test]"))
            && let Some(end) = block_end(&lines, i)
        {
            ranges.push(i..end);
            i = end;
            continue;
        }
        i += 1;
    }
    ranges
}

/// The line after the brace block that starts at or after `start` closes.
fn block_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(start) {
        let code = line.split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                ';' if !opened && depth == 0 && k > start => return Some(k + 1),
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(k + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognized_per_ecosystem() {
        let yes = [
            "tests/cli.rs",
            "pkg/tests/test_x.py",
            "test_mod.py",
            "mod_test.py",
            "conftest.py",
            "src/a.test.ts",
            "web/__tests__/b.js",
            "x.spec.jsx",
            "net/http_test.go",
            "test/slug.js",
            "spec/parser.ts",
        ];
        let no = [
            "src/lib.rs",
            "src/testing.py",
            "src/attest.js",
            "src/test.js",
            "main.go",
            "tests.md",
        ];
        assert_eq!(yes.iter().filter(|p| is_test_path(p)).count(), yes.len());
        assert_eq!(no.iter().filter(|p| is_test_path(p)).count(), 0);
    }

    #[test]
    fn removed_and_skipped_tests_are_reported() {
        let before = "def test_a():\n    pass\n\ndef test_b():\n    pass\n";
        let after = "def test_a():\n    pass\n\n@pytest.mark.skip\ndef test_c():\n    pass\n";
        let rules: Vec<(String, Option<u64>)> = weakened_tests("tests/test_x.py", before, after)
            .into_iter()
            .map(|i| (i.rule, i.line))
            .collect();
        assert_eq!(
            rules,
            vec![
                ("check.deleted-test".into(), Some(4)),
                ("check.skipped-test".into(), Some(4))
            ]
        );
    }

    #[test]
    fn a_skip_made_by_prefixing_an_existing_line_is_reported_at_its_line() {
        // The changed part is found from byte-level common ends; a line that only gained a
        // prefix must still count as changed, with its line number in the whole file.
        let head = "line\n".repeat(20);
        let before = format!("{head}    skip(x)\n");
        let after = format!("{head}    .skip(x)\n");
        let found: Vec<(String, Option<u64>)> = weakened_tests("a.test.js", &before, &after)
            .into_iter()
            .map(|i| (i.rule, i.line))
            .collect();
        assert_eq!(found, vec![("check.skipped-test".into(), Some(21))]);
    }

    #[test]
    fn rust_ignore_and_js_skip_and_go_skip_are_reported() {
        let rs_before = "#[test]\nfn a() {}\n";
        let rs_after = "#[test]\n#[ignore]\nfn a() {}\n";
        let js = weakened_tests(
            "a.test.js",
            "it('works', () => {});\n",
            "it.skip('works', () => {});\n",
        );
        let go = weakened_tests(
            "a_test.go",
            "func TestA(t *testing.T) {\n}\n",
            "func TestA(t *testing.T) {\n\tt.Skip(\"x\")\n}\n",
        );
        let rules = |v: Vec<Issue>| v.into_iter().map(|i| i.rule).collect::<Vec<_>>();
        assert_eq!(
            rules(weakened_tests("tests/a.rs", rs_before, rs_after)),
            ["check.skipped-test"]
        );
        assert_eq!(rules(js), ["check.skipped-test"]);
        assert_eq!(rules(go), ["check.skipped-test"]);
    }

    /// Issue 18: the text `xit(` is in `process.exit(`, `std::process::exit(`, `os._exit(` and
    /// `atexit(`, and an honest CLI fix that adds an exit was refused as a skipped test.
    #[test]
    fn exits_and_other_languages_markers_are_not_skips() {
        let cases = [
            (
                "test/cli.test.js",
                "it('a', () => {});\n",
                "it('a', () => {});\nprocess.exit(1);\n",
            ),
            (
                "tests/cli.rs",
                "#[test]\nfn a() {}\n",
                "#[test]\nfn a() { std::process::exit(1) }\n",
            ),
            (
                "src/main.rs",
                "fn a() {}\n",
                "fn a() { let v: Vec<_> = x.iter().skip(1).collect(); }\n",
            ),
            (
                "tests/test_cli.py",
                "def test_a():\n    pass\n",
                "def test_a():\n    atexit(f)\n    os._exit(0)\n",
            ),
            (
                "tests/test_cli.py",
                "def test_a():\n    pass\n",
                "def test_a():\n    x.skip(1)\n",
            ),
            (
                "a_test.go",
                "func TestA(t *testing.T) {\n}\n",
                "func TestA(t *testing.T) {\n\tat.Skip(1)\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(
                weakened_tests(path, before, after),
                vec![],
                "{path}: {after}"
            );
        }
        let skip = weakened_tests(
            "test/a.test.js",
            "it('a', () => {});\n",
            "xit('a', () => {});\n",
        );
        assert_eq!(skip.len(), 1);
    }

    #[test]
    fn rust_test_module_and_test_fn_ranges_are_found() {
        let src =
            "fn a() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\nfn b() {}\n";
        assert_eq!(test_line_ranges("src/lib.rs", src), vec![1..6]);
        assert_eq!(test_line_ranges("tests/x.rs", "a\nb\n"), vec![0..2]);
    }
}
