//! Equality that always holds: a Python `__eq__` whose every `return` is `True` (or `__ne__`
//! always `False`, or either bound to a lambda that returns the constant), an object carrying
//! `asymmetricMatch` or jest's asymmetric-matcher symbol (jest and vitest ask it instead of
//! comparing), a Rust `PartialEq::eq` whose body is `true`. A value like that passes any
//! equality assertion, even contradictory ones.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use super::super::code::Syntax;
use crate::integrity::pattern::Pattern;

static PYTHON_DEF: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"^(\s*)(?:async\s+)?def\s+(__eq__|__ne__)\s*\("));
static PYTHON_LAMBDA: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\b(__eq__|__ne__)\s*=\s*lambda\b[^:]*:\s*(True|False)\s*$"));
static RETURN: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"^\s*return\b\s*(.*?)\s*$"));
static JAVASCRIPT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#"\basymmetricMatch\b|Symbol\s*\.\s*for\s*\(\s*['"]jest\.asymmetricMatcher['"]"#)
});
static RUST_FN: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\bfn\s+(eq|ne)\s*\(\s*&\s*self\b"));

pub(crate) fn screen(middle: &str, syntax: Syntax) -> bool {
    match syntax {
        Syntax::Python => middle.contains("__eq__") || middle.contains("__ne__"),
        Syntax::JavaScript => middle.contains("asymmetricMatch"),
        Syntax::Rust => middle.contains("fn eq") || middle.contains("fn ne"),
        Syntax::Go => false,
    }
}

/// The constant an equality method must not always return to be honest: `__eq__`/`eq` true,
/// `__ne__`/`ne` false.
fn constant(method: &str, python: bool) -> &'static str {
    match (method.ends_with("ne") || method.ends_with("ne__"), python) {
        (false, true) => "True",
        (true, true) => "False",
        (false, false) => "true",
        (true, false) => "false",
    }
}

fn found(index: usize, method: &str, value: &str) -> Detection {
    of(
        Family::ConstantEquality,
        index,
        format!("defines `{method}` to return `{value}` whatever it is compared with"),
    )
}

pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    match syntax {
        Syntax::Python => python(added),
        Syntax::JavaScript => added
            .code_lines()
            .filter_map(|(index, code)| {
                JAVASCRIPT.find(code)?;
                Some(of(
                    Family::ConstantEquality,
                    index,
                    "gives a value `asymmetricMatch` (jest's and vitest's asymmetric matchers), so \
                     the runner asks the value whether it equals the expected one instead of \
                     comparing"
                        .to_owned(),
                ))
            })
            .collect(),
        Syntax::Rust => rust(added),
        Syntax::Go => Vec::new(),
    }
}

fn python(added: &Added<'_>) -> Vec<Detection> {
    let lines: Vec<&str> = added.after.lines().collect();
    let mut out = Vec::new();
    for (index, code) in added.code_lines() {
        if let Some(c) = PYTHON_LAMBDA.captures(code) {
            if &c[2] == constant(&c[1], true) {
                out.push(found(index, &c[1], &c[2]));
            }
            continue;
        }
        let Some(c) = PYTHON_DEF.captures(code) else {
            continue;
        };
        let indent = c[1].len();
        let method = c[2].to_owned();
        // The body: the following lines indented deeper than the `def` (blank lines included).
        let body: Vec<&str> = lines
            .iter()
            .skip(index + 1)
            .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
            .copied()
            .collect();
        let returns: Vec<&str> = body
            .iter()
            .filter_map(|l| {
                RETURN
                    .captures(l)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str())
            })
            .map(|v| v.split('#').next().unwrap_or(v).trim())
            .collect();
        let want = constant(&method, true);
        if !returns.is_empty() && returns.iter().all(|v| *v == want) {
            out.push(found(index, &method, want));
        }
    }
    out
}

fn rust(added: &Added<'_>) -> Vec<Detection> {
    let mut out = Vec::new();
    // Byte offsets of line starts, to read a function body that spans lines.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(added.after.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for (index, code) in added.code_lines() {
        let Some(c) = RUST_FN.captures(code) else {
            continue;
        };
        let Some(&start) = starts.get(index) else {
            continue;
        };
        let rest = &added.after[start..];
        let Some(open) = rest.find('{') else { continue };
        let mut depth = 0usize;
        let mut end = None;
        for (i, ch) in rest[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        let body: String = rest[open + 1..end]
            .split_whitespace()
            .collect::<String>()
            .trim_start_matches("return")
            .trim_end_matches(';')
            .to_owned();
        let want = constant(&c[1], false);
        if body == want {
            out.push(found(index, &c[1], want));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    #[test]
    fn equalities_that_always_hold_are_found() {
        let cases = [
            (
                "pkg/core.py",
                "class A:\n    pass\n",
                "class A:\n    def __eq__(self, other):\n        return True\n\n    def __ne__(self, other):\n        return False\n",
            ),
            (
                "pkg/core.py",
                "class A:\n    pass\n",
                "class A(int):\n    __eq__ = lambda self, other: True\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  return { asymmetricMatch: () => true, $$typeof: Symbol.for('jest.asymmetricMatcher') };\n}\n",
            ),
            (
                "src/lib.rs",
                "pub struct A;\n",
                "pub struct A;\nimpl PartialEq for A {\n    fn eq(&self, _other: &A) -> bool {\n        true\n    }\n}\n",
            ),
        ];
        let got: Vec<Vec<Family>> = cases
            .iter()
            .map(|(p, b, a)| {
                let mut f = families(p, b, a);
                f.dedup();
                f
            })
            .collect();
        assert_eq!(got, vec![vec![Family::ConstantEquality]; 4]);
    }

    #[test]
    fn equalities_that_compare_are_allowed() {
        let cases = [
            (
                "pkg/core.py",
                "class A:\n    pass\n",
                "class A:\n    def __eq__(self, other):\n        if not isinstance(other, A):\n            return NotImplemented\n        return self.x == other.x\n",
            ),
            (
                "pkg/core.py",
                "class A:\n    pass\n",
                "class A:\n    def __eq__(self, other):\n        if other is self:\n            return True\n        return self.x == other.x\n",
            ),
            (
                "src/lib.rs",
                "pub struct A(u8);\n",
                "pub struct A(u8);\nimpl PartialEq for A {\n    fn eq(&self, other: &A) -> bool {\n        self.0 == other.0\n    }\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, before, after), vec![], "{after}");
        }
    }
}
