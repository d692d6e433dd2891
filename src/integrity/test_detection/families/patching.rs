//! More ways to patch what the tests use, beyond the framework and builtin assignments of each
//! language's own detector: a write to a member of any module the file imports (Python
//! `time.time = ...`, `setattr(mod, ...)`, `importlib.import_module(...).x = ...`,
//! `sys.modules[...].x = ...`), the runners' registries (jest's
//! `Symbol.for('$$jest-matchers-object')`, chai's `Assertion`, `expect.extend`, `chai.use`),
//! the runners' globals (`globalThis.it = ...`), `module.require` and writes into
//! `require.cache`, and a Rust `macro_rules!` that shadows std's assertion macros.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use super::super::code::Syntax;
use crate::integrity::pattern::Pattern;

static IMPORT: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"^\s*import\s+(.+)$"));
static PY_ASSIGN: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r"(?:^|[^\w.])([A-Za-z_]\w*)((?:\s*\.\s*\w+)+)\s*[-+*/|&]?=(?:[^=]|$)")
});
static PY_SETATTR: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\bsetattr\s*\(\s*([A-Za-z_]\w*)\s*,"));
static PY_DYNAMIC: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\b(?:importlib\s*\.\s*)?import_module\s*\([^)]*\)\s*\.\s*\w+\s*=[^=]|\bsetattr\s*\(\s*(?:importlib\s*\.\s*)?import_module\s*\(|\b__import__\s*\([^)]*\)\s*\.\s*\w+\s*=[^=]|\bsys\s*\.\s*modules\s*\[[^\]]*\]\s*\.\s*\w+\s*=[^=]|\bsetattr\s*\(\s*sys\s*\.\s*modules\s*\[",
    )
});
static JAVASCRIPT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\bmodule\s*\.\s*require\s*\(|Symbol\s*\.\s*for\s*\(\s*['"]\$\$jest-matchers-object['"]|\bAssertion\s*\.\s*(?:addMethod|addProperty|addChainableMethod|overwriteMethod|overwriteProperty|overwriteChainableMethod|prototype)\b|\bexpect\s*\.\s*extend\s*\(|\bchai\s*\.\s*use\s*\(|\b(?:globalThis|global|window|self)\s*(?:\.\s*|\[\s*['"])(?:it|test|describe|expect|suite|beforeEach|afterEach|beforeAll|afterAll|before|after)\b['"]?\]?\s*(?:=[^=]|\|\|=|\?\?=)|\brequire\s*\.\s*cache\s*\[[^\]]*\]\s*(?:\.\s*exports\s*)?(?:=[^=]|\.)"#,
    )
});
static RUST: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bmacro_rules\s*!\s*(assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|panic|assert_matches)\b",
    )
});

pub(crate) fn screen(middle: &str, syntax: Syntax) -> bool {
    match syntax {
        Syntax::Python => middle.contains('=') || middle.contains("setattr"),
        Syntax::JavaScript => true,
        Syntax::Rust => middle.contains("macro_rules"),
        Syntax::Go => false,
    }
}

/// The names `import X`, `import X.Y` and `import X as Z` bind in `text`.
fn imported_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let Some(c) = IMPORT.captures(line) else {
            continue;
        };
        for part in c[1].split('#').next().unwrap_or("").split(',') {
            let mut words = part.split_whitespace();
            let Some(module) = words.next() else { continue };
            let bound = match (words.next(), words.next()) {
                (Some("as"), Some(alias)) => alias,
                _ => module.split('.').next().unwrap_or(module),
            };
            let bound = bound.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
            if !bound.is_empty() {
                out.insert(bound.to_owned());
            }
        }
    }
    out
}

fn patched(index: usize, target: &str) -> Detection {
    let target: String = target.split_whitespace().collect();
    of(
        Family::FrameworkPatch,
        index,
        format!(
            "writes to `{target}`, a member of an imported module or of a test runner, which \
             changes the code the tests run or how they check results"
        ),
    )
}

pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    match syntax {
        Syntax::Python => python(added),
        Syntax::JavaScript => simple(added, &JAVASCRIPT),
        Syntax::Rust => simple(added, &RUST),
        Syntax::Go => Vec::new(),
    }
}

fn simple(added: &Added<'_>, pattern: &Pattern) -> Vec<Detection> {
    added
        .code_lines()
        .filter_map(|(index, code)| Some(patched(index, pattern.find(code)?.as_str())))
        .collect()
}

fn python(added: &Added<'_>) -> Vec<Detection> {
    let modules = std::cell::OnceCell::new();
    let modules = || modules.get_or_init(|| imported_modules(added.after));
    let mut out = Vec::new();
    for (index, code) in added.code_lines() {
        if let Some(m) = PY_DYNAMIC.find(code) {
            out.push(patched(
                index,
                m.as_str()
                    .trim_end_matches(|c| c != '=')
                    .trim_end_matches('='),
            ));
            continue;
        }
        if !code.contains('=') && !code.contains("setattr") {
            continue;
        }
        if let Some(c) = PY_ASSIGN
            .captures_iter(code)
            .find(|c| modules().contains(&c[1]))
        {
            out.push(patched(index, &format!("{}{}", &c[1], &c[2])));
        } else if let Some(c) = PY_SETATTR
            .captures_iter(code)
            .find(|c| modules().contains(&c[1]))
        {
            out.push(patched(index, &c[1]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    const PY: &str = "import time\nimport os.path as osp\n\n\ndef f(x):\n    return x\n";
    const JS: &str = "function f(x) {\n  return x;\n}\n";

    #[test]
    fn writes_to_imported_modules_and_runner_registries_are_found() {
        let py = |line: &str| PY.replace("    return x", &format!("{line}\n    return x"));
        let js = |line: &str| JS.replace("  return x", &format!("{line}\n  return x"));
        let cases = [
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    time.time = lambda: 0"),
            ),
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    setattr(osp, 'exists', lambda p: True)"),
            ),
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    importlib.import_module('_pytest.reports').TestReport = R"),
            ),
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    sys.modules['unittest'].TestCase = T"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                js("  const a = module.require('assert');"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                js("  globalThis[Symbol.for('$$jest-matchers-object')].matchers.toBe = ok;"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                js("  chai.Assertion.overwriteMethod('equal', () => () => {});"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                js("  globalThis.it = (name, fn) => {};"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                js("  require.cache[k].exports.Test.prototype.equal = ok;"),
            ),
            (
                "src/lib.rs",
                "pub fn f() {}\n".to_owned(),
                "macro_rules! assert_eq {\n    ($a:expr, $b:expr) => {};\n}\npub fn f() {}\n"
                    .to_owned(),
            ),
        ];
        for (path, before, after) in cases {
            let mut got = families(path, &before, &after);
            got.dedup();
            assert_eq!(got, vec![Family::FrameworkPatch], "{path}: {after}");
        }
    }

    #[test]
    fn writes_to_own_objects_are_allowed() {
        let py = |line: &str| PY.replace("    return x", &format!("{line}\n    return x"));
        let cases = [
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    self.time = time.time()\n    x.path = osp.join(a, b)"),
            ),
            (
                "pkg/core.py",
                PY.to_owned(),
                py("    result = time.time() == 3"),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                JS.replace(
                    "  return x",
                    "  const it = items[Symbol.iterator]();\n  return x",
                ),
            ),
            (
                "lib/a.js",
                JS.to_owned(),
                JS.replace(
                    "  return x",
                    "  const test = { it: 1 }; test.it = 2;\n  return x",
                ),
            ),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, &before, &after), vec![], "{after}");
        }
    }
}
