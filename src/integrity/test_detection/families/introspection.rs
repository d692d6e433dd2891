//! Looking at the caller: stack frames (`inspect.currentframe()`, `sys._getframe()`,
//! `traceback.extract_stack()`, `frame.f_back`), a stack captured from a new error
//! (`new Error().stack`, `Error.captureStackTrace`, `Error.prepareStackTrace`, `callsite`),
//! backtraces (`std::backtrace::Backtrace::capture()`), Go's `runtime.Caller`. Code that finds
//! the test's name, file or source line this way can answer the test and nobody else.
//!
//! Reading an error's own `.stack` for a message, and `inspect.signature`, stay allowed: they
//! describe the code, not the caller.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use super::super::code::Syntax;
use crate::integrity::pattern::Pattern;

static PYTHON: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\binspect\s*\.\s*(?:stack|currentframe|getouterframes|getinnerframes|getframeinfo|trace)\b|\bfrom\s+inspect\s+import\b.*\b(?:stack|currentframe|getouterframes|getframeinfo|trace)\b|\bsys\s*\.\s*(?:_getframe|_current_frames)\b|\btraceback\s*\.\s*(?:extract_stack|format_stack|print_stack|walk_stack|StackSummary)\b|\bgc\s*\.\s*get_referrers\b|\.\s*(?:f_back|f_locals|f_globals|tb_frame)\b",
    )
});
static JAVASCRIPT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\bError\s*\([^()]*\)\s*\)?\s*\.\s*stack\b|\(\s*new\s+Error\s*\)\s*\.\s*stack\b|\bError\s*\.\s*(?:captureStackTrace|prepareStackTrace)\b|['"](?:callsites?|caller-callsite|caller-path|get-caller-file|stack-trace|error-stack-parser)['"]|\barguments\s*\.\s*callee\b"#,
    )
});
static RUST: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bBacktrace\s*::\s*(?:capture|force_capture|new|new_unresolved)\b|\bbacktrace\s*::\s*(?:trace|resolve|Backtrace)\b|\bstd\s*::\s*backtrace\b",
    )
});
static GO: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bruntime\s*\.\s*(?:Caller|Callers|Stack|FuncForPC)\s*\(|\bdebug\s*\.\s*(?:Stack|PrintStack)\s*\(",
    )
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
        Syntax::Python => &[
            "inspect",
            "_getframe",
            "_frames",
            "traceback",
            "get_referrers",
            "f_",
            "tb_frame",
        ],
        Syntax::JavaScript => &["stack", "Stack", "callsite", "caller", "callee"],
        Syntax::Rust => &["acktrace"],
        Syntax::Go => &["runtime", "debug"],
    };
    words.iter().any(|w| middle.contains(w))
}

pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    let pattern = pattern(syntax);
    added
        .code_lines()
        .filter_map(|(index, code)| {
            let m = pattern.find(code)?;
            let what: String = m.as_str().split_whitespace().collect();
            Some(of(
                Family::Introspection,
                index,
                format!(
                    "looks at its caller's stack (`{what}`), which lets it answer the test by \
                     its name, file or source line"
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    #[test]
    fn stack_and_frame_introspection_is_found_in_every_language() {
        let cases = [
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    ctx = inspect.getframeinfo(inspect.currentframe().f_back).code_context\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    if 'test_' in sys._getframe(1).f_code.co_name: return 14\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    names = [s.name for s in traceback.extract_stack()]\n    return x\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  if (new Error().stack.includes('test.js')) return 3;\n  return x;\n}\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  const o = {}; Error.captureStackTrace(o);\n  return x;\n}\n",
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n",
                "pub fn f() {\n    let b = std::backtrace::Backtrace::force_capture();\n}\n",
            ),
            (
                "x.go",
                "package x\n\nfunc F() {\n}\n",
                "package x\n\nfunc F() {\n\t_, file, _, _ := runtime.Caller(1)\n}\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(
                families(path, before, after),
                vec![Family::Introspection],
                "{after}"
            );
        }
    }

    #[test]
    fn describing_the_code_or_an_error_is_not_introspection() {
        let cases = [
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    sig = inspect.signature(x)\n    return x\n",
            ),
            (
                "pkg/core.py",
                "def f(x):\n    return x\n",
                "def f(x):\n    traceback.print_exc()\n    return x\n",
            ),
            (
                "lib/a.js",
                "function f(x) {\n  return x;\n}\n",
                "function f(x) {\n  try { g(); } catch (e) { log(e.stack); }\n  return x;\n}\n",
            ),
            (
                "pkg/core.py",
                "import sys\nframe = sys._getframe(1)\n\ndef f(x):\n    return x\n",
                "import sys\nframe = sys._getframe(1)\n\ndef f(x):\n    return x + 1\n",
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, before, after), vec![], "{after}");
        }
    }
}
