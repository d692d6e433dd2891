//! Finding a failing test's body from the name the reproduction reported: a pytest node id
//! (`tests/test_url.py::TestX::test_scheme[a]`), a unittest id (`test_scheme
//! (tests.test_url.TestX)`), a cargo path (`url::tests::scheme`), a Go name (`TestScheme/sub`),
//! or a jest, vitest or mocha title (`url › scheme`). The body is the lines of the function,
//! or of the `it`/`test` call, that defines it.

use std::path::Path;

use super::expect::{Expectation, expectations};
use crate::integrity::test_policy::is_test_path;

/// Most files read to find the failing tests.
const MAX_FILES: usize = 5000;

/// The function or title a test name ends with, and the file it names, if any.
fn parts(test: &str) -> (Option<String>, String) {
    if let Some((file, rest)) = test.split_once("::")
        && file.contains('.')
        && file.contains(['/', '.'])
        && !file.contains(' ')
    {
        let name = rest.rsplit("::").next().unwrap_or(rest);
        let name = name.split('[').next().unwrap_or(name);
        return (Some(file.to_owned()), name.to_owned());
    }
    if let Some((name, _)) = test.split_once(" (") {
        return (None, name.trim().to_owned());
    }
    let last = test.rsplit(['›', '>']).next().unwrap_or(test).trim();
    let last = last.rsplit("::").next().unwrap_or(last);
    let last = if last.starts_with("Test") {
        last.split('/').next().unwrap_or(last)
    } else {
        last
    };
    let last = if !last.contains(' ') && last.contains('.') {
        last.rsplit('.').next().unwrap_or(last)
    } else {
        last
    };
    // tape numbers the assertions of one test (`title #2`): the source names the title.
    let last = match last.rsplit_once(" #") {
        Some((title, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => title,
        _ => last,
    };
    (None, last.to_owned())
}

/// The body of the test `name` in `text`: a function of that name, or an `it`/`test` call with
/// that title.
fn body(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let is_def = |l: &str| {
        let t = l.trim_start();
        let fns = [
            format!("def {name}("),
            format!("fn {name}("),
            format!("func {name}("),
        ];
        fns.iter()
            .any(|f| t.starts_with(f.as_str()) || t.contains(&format!(" {f}")))
            || [
                format!("'{name}'"),
                format!("\"{name}\""),
                format!("`{name}`"),
            ]
            .iter()
            .any(|q| (t.starts_with("it") || t.starts_with("test")) && t.contains(q.as_str()))
    };
    let start = lines.iter().position(|l| is_def(l))?;
    let indent = lines[start].len() - lines[start].trim_start().len();
    let python = lines[start].trim_start().starts_with("def ") || lines[start].contains(" def ");
    let end = body_end(&lines, start, indent, python);
    // A Python test's decorators hold its cases (`@pytest.mark.parametrize(...)`): they are
    // part of its source.
    let start = if python {
        decorators_start(&lines, start, indent)
    } else {
        start
    };
    Some(lines[start..end.min(lines.len())].join("\n"))
}

/// The first line of the decorators right above the `def` at `def_line`: lines that start
/// with `@` at the def's indent, and the lines of their arguments.
fn decorators_start(lines: &[&str], def_line: usize, indent: usize) -> usize {
    let mut start = def_line;
    let mut k = def_line;
    while k > 0 {
        k -= 1;
        let line = lines[k];
        let trimmed = line.trim_start();
        let at = line.len() - trimmed.len();
        if trimmed.is_empty()
            || (at <= indent && !trimmed.starts_with('@') && !trimmed.starts_with([')', ']', '}']))
        {
            break;
        }
        if at == indent && trimmed.starts_with('@') {
            start = k;
        }
    }
    start
}

/// The line after the body of the test defined at `start`.
fn body_end(lines: &[&str], start: usize, indent: usize, python: bool) -> usize {
    let mut end = start + 1;
    if python {
        while end < lines.len()
            && (lines[end].trim().is_empty()
                || lines[end].len() - lines[end].trim_start().len() > indent)
        {
            end += 1;
        }
    } else {
        let mut depth = 0i32;
        let mut opened = false;
        for (k, line) in lines.iter().enumerate().skip(start) {
            for c in line.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            end = k + 1;
            if opened && depth <= 0 {
                break;
            }
        }
    }
    end
}

/// The expectations of the failing tests, read from the repository at `root` (`tracked` lists
/// its files). A test whose body is not found gives none.
pub fn for_failing_tests(root: &Path, tracked: &[String], failing: &[String]) -> Vec<Expectation> {
    let mut out = Vec::new();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).ok();
    // The candidate files, read at most once.
    let candidates: Vec<&String> = tracked
        .iter()
        .filter(|p| is_test_path(p) || p.ends_with(".rs"))
        .take(MAX_FILES)
        .collect();
    let mut cache: Vec<(String, Option<String>)> = Vec::new();
    for test in failing {
        let (file, name) = parts(test);
        if name.is_empty() {
            continue;
        }
        let found = match file {
            Some(file) => read(&file).and_then(|text| body(&text, &name)),
            None => candidates.iter().find_map(|path| {
                let text = match cache.iter().find(|(p, _)| p == *path) {
                    Some((_, text)) => text.clone(),
                    None => {
                        let text = read(path);
                        cache.push(((*path).clone(), text.clone()));
                        text
                    }
                };
                let text = text?;
                if !text.contains(name.as_str()) {
                    return None;
                }
                body(&text, &name)
            }),
        };
        if let Some(source) = found {
            out.extend(expectations(test, &source));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_of_every_runner_give_their_function_or_title() {
        let got: Vec<(Option<String>, String)> = [
            "tests/test_url.py::TestX::test_scheme[a-b]",
            "test_scheme (tests.test_url.TestX)",
            "url::tests::scheme",
            "TestScheme/sub",
            "url › handles //x",
            "tests.test_url.TestX.test_scheme",
            "counts double spaces #2",
            "issue #12 #1",
        ]
        .iter()
        .map(|t| parts(t))
        .collect();
        let s = |x: &str| x.to_owned();
        assert_eq!(
            got,
            vec![
                (Some(s("tests/test_url.py")), s("test_scheme")),
                (None, s("test_scheme")),
                (None, s("scheme")),
                (None, s("TestScheme")),
                (None, s("handles //x")),
                (None, s("test_scheme")),
                (None, s("counts double spaces")),
                (None, s("issue #12")),
            ]
        );
    }

    #[test]
    fn a_python_tests_decorators_are_part_of_its_source() {
        let py = "X = 1\n\n@pytest.mark.parametrize(\n    \"s, n\",\n    [(\"a  b\", 2)],\n)\ndef test_count(s, n):\n    assert count(s) == n\n";
        assert_eq!(
            body(py, "test_count").as_deref(),
            Some(
                "@pytest.mark.parametrize(\n    \"s, n\",\n    [(\"a  b\", 2)],\n)\ndef test_count(s, n):\n    assert count(s) == n"
            )
        );
    }

    #[test]
    fn bodies_are_found_by_function_or_title() {
        let py = "def test_a():\n    assert f('ab') == 'cd'\n\ndef test_b():\n    pass\n";
        let js = "describe('x', () => {\n  it('handles //x', () => {\n    expect(f('ab')).toBe('cd');\n  });\n});\n";
        assert_eq!(
            (
                body(py, "test_a").as_deref(),
                body(js, "handles //x").as_deref()
            ),
            (
                Some("def test_a():\n    assert f('ab') == 'cd'\n"),
                Some("  it('handles //x', () => {\n    expect(f('ab')).toBe('cd');\n  });")
            )
        );
    }
}
