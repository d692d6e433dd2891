//! Python: reading pytest's environment (`PYTEST_CURRENT_TEST`), asking whether a test
//! framework is loaded (`"pytest" in sys.modules`), importing one into production code, and
//! patching one or the builtins (`unittest.TestCase.assertEqual = ...`, `builtins.open = ...`,
//! `sys.modules["pytest"] = ...`, `setattr(pytest, ...)`).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::added::{Added, Detection, Family, at, is_test_support_path, of};
use crate::integrity::pattern::Pattern;

/// Test frameworks (root module names).
const FRAMEWORKS: &[&str] = &["pytest", "_pytest", "unittest", "nose", "nose2"];

/// Names always treated as modules whose members production code must not assign.
const PATCHED_ROOTS: &[&str] = &["pytest", "_pytest", "unittest", "builtins", "__builtins__"];

/// Words one of the patterns needs, searched once over the added text.
static SCREEN: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new("PYTEST_|pytest|unittest|nose|builtins|modules|argv"));
static ENV_MARKER: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\b(PYTEST_CURRENT_TEST|PYTEST_XDIST_WORKER|PYTEST_VERSION)\b"));
static LOADED: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#"['"](py\.?test|_pytest|unittest|nose2?)['"]"#));
static SYS_LOOKUP: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"\bsys\s*\.\s*(modules|argv)\b"));
static SYS_MODULES_SET: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\bsys\s*\.\s*modules\s*(\[\s*[rbuf]*['"][^'"]*['"]\s*\]\s*(=[^=]|=$)|\.\s*(update|__setitem__)\s*\()"#,
    )
});
static ASSIGNMENT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"(?:^|[^\w.])([A-Za-z_]\w*)((?:\s*\.\s*\w+|\s*\[[^\]]*\])+)\s*[-+*/|&]?=(?:[^=]|$)",
    )
});
static SET_ATTRIBUTE: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r"\b(setattr|delattr)\s*\(\s*([A-Za-z_]\w*)((?:\s*\.\s*\w+)*)\s*,")
});
static IMPORT: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"^\s*import\s+(.+)$"));
static FROM_IMPORT: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"^\s*from\s+([\w.]+)\s+import\s+\(?([^)]*)\)?\s*$"));

/// One imported name: the module path and the name it is bound to.
struct Import {
    module: String,
    bound: String,
}

/// Every `import` and `from ... import` of `code`'s lines.
fn imports<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<Import> {
    let mut out = Vec::new();
    for line in lines {
        let start = line.trim_start();
        if !(start.starts_with("import") || start.starts_with("from")) {
            continue;
        }
        if let Some(c) = IMPORT.captures(line) {
            for part in c[1].split(',') {
                let mut words = part.split_whitespace();
                let Some(module) = words.next() else { continue };
                let bound = match (words.next(), words.next()) {
                    (Some("as"), Some(alias)) => alias.to_owned(),
                    _ => module.split('.').next().unwrap_or(module).to_owned(),
                };
                out.push(Import {
                    module: module.to_owned(),
                    bound,
                });
            }
        } else if let Some(c) = FROM_IMPORT.captures(line) {
            for part in c[2].split(',') {
                let mut words = part.split_whitespace();
                let Some(name) = words.next() else { continue };
                let bound = match (words.next(), words.next()) {
                    (Some("as"), Some(alias)) => alias.to_owned(),
                    _ => name.to_owned(),
                };
                out.push(Import {
                    module: format!("{}.{name}", &c[1]),
                    bound,
                });
            }
        }
    }
    out
}

fn root(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

/// `unittest.mock` is a mocking library that ships inside `unittest`, not its test runner.
fn is_mock(module: &str) -> bool {
    module == "unittest.mock" || module.starts_with("unittest.mock.")
}

/// Whether any detection is possible: the changed middle (which holds every added line)
/// names a marker, a framework, the builtins or `sys.modules`, or assigns to a member while
/// the file mentions a framework (an alias such as `from unittest import TestCase as T` may be
/// the target).
pub(crate) fn screen(middle: &str, after: &str) -> bool {
    let imports_one = || {
        ["pytest", "unittest", "nose", "builtins"]
            .iter()
            .any(|w| after.contains(w))
    };
    SCREEN.is_match(middle) || (middle.lines().any(may_patch_an_alias) && imports_one())
}

/// Whether a line may assign to a member of an imported name (`T.x = ...`, `setattr(T, ...)`):
/// it assigns, and accesses a member of something other than `self` or `cls`. A cheap guard
/// for the patterns: most lines of a new file are plain assignments.
fn may_patch_an_alias(line: &str) -> bool {
    if line.contains("setattr") || line.contains("delattr") {
        return true;
    }
    if !line.contains('=') {
        return false;
    }
    line.match_indices(['.', '[']).any(|(at, _)| {
        let head = &line[..at];
        let start = head
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        !matches!(&head[start..], "self" | "cls" | "")
    })
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    // Names bound to a test framework or the builtins module anywhere in the file (from the
    // raw lines: an import in a comment only makes the check stricter); read only when an
    // added line assigns to something.
    let patched = std::cell::OnceCell::new();
    let patched = || {
        patched.get_or_init(|| {
            let mut names: BTreeSet<String> =
                PATCHED_ROOTS.iter().map(|s| (*s).to_owned()).collect();
            names.extend(
                imports(added.after.lines())
                    .into_iter()
                    .filter(|i| {
                        (FRAMEWORKS.contains(&root(&i.module)) || root(&i.module) == "builtins")
                            && !is_mock(&i.module)
                    })
                    .map(|i| i.bound),
            );
            names
        })
    };
    let before_roots: BTreeSet<String> = imports(added.before.lines())
        .iter()
        .map(|i| root(&i.module).to_owned())
        .collect();
    let support = is_test_support_path(added.path);
    let mut found = Vec::new();
    for (index, code) in added.code_lines() {
        // Each pattern runs only on a line with the text it needs: new files add every line.
        let has = |word: &str| code.contains(word);
        if let Some(c) = has("modules")
            .then(|| SYS_MODULES_SET.captures(code))
            .flatten()
        {
            let what = c
                .get(0)
                .map_or("", |m| m.as_str().trim_end_matches(['=', '(']));
            found.push(of(
                Family::FrameworkPatch,
                index,
                format!(
                    "replaces a module in `{}`, which can swap the test framework or the code \
                     under test",
                    what.trim()
                ),
            ));
        } else if let Some(c) = may_patch_an_alias(code)
            .then(|| {
                ASSIGNMENT
                    .captures_iter(code)
                    .find(|c| is_patched(&c[1], &patched))
            })
            .flatten()
        {
            found.push(of(
                Family::FrameworkPatch,
                index,
                assigns(&format!("{}{}", &c[1], &c[2])),
            ));
        } else if let Some(c) = has("attr")
            .then(|| {
                SET_ATTRIBUTE
                    .captures_iter(code)
                    .find(|c| is_patched(&c[2], &patched))
            })
            .flatten()
        {
            found.push(of(
                Family::FrameworkPatch,
                index,
                assigns(&format!("{}{}", &c[2], &c[3])),
            ));
        } else if let Some(m) = has("PYTEST_").then(|| ENV_MARKER.find(code)).flatten() {
            found.push(at(
                index,
                format!(
                    "reads `{}`, which is set only while pytest runs",
                    m.as_str()
                ),
            ));
        } else if has("sys")
            && SYS_LOOKUP.is_match(code)
            && let Some(m) = LOADED.find(code)
        {
            found.push(at(
                index,
                format!(
                    "asks whether {} is loaded or running, which is true only under test",
                    m.as_str()
                ),
            ));
        } else if !support && has("import ") {
            let framework = imports(std::iter::once(code)).into_iter().find(|i| {
                FRAMEWORKS.contains(&root(&i.module))
                    && !is_mock(&i.module)
                    && !before_roots.contains(root(&i.module))
            });
            if let Some(import) = framework {
                found.push(at(
                    index,
                    format!(
                        "imports the test framework `{}` into production code",
                        root(&import.module)
                    ),
                ));
            }
        }
    }
    found
}

/// Whether `root` names a test framework or the builtins: one of the usual names, or (read
/// only for a name that could be one) an alias the file imports.
fn is_patched<'a>(root: &str, aliases: &impl Fn() -> &'a BTreeSet<String>) -> bool {
    PATCHED_ROOTS.contains(&root) || (!matches!(root, "self" | "cls") && aliases().contains(root))
}

fn assigns(target: &str) -> String {
    let target: String = target.split_whitespace().collect();
    format!(
        "assigns to `{target}`, a member of a test framework or of the builtins, which changes \
         how tests run or check results"
    )
}

#[cfg(test)]
mod tests {
    use crate::integrity::test_detection::test_detections;

    fn found(path: &str, before: &str, after: &str) -> Vec<(u64, String)> {
        test_detections(path, Some(before), after)
            .into_iter()
            .map(|d| (d.line, d.what))
            .collect()
    }

    fn lines(path: &str, before: &str, after: &str) -> Vec<u64> {
        found(path, before, after)
            .into_iter()
            .map(|(l, _)| l)
            .collect()
    }

    const BEFORE: &str = "import os\n\n\ndef total(xs):\n    return sum(xs)\n";

    /// `BEFORE` with `line` added before the return.
    fn with(line: &str) -> String {
        BEFORE.replace(
            "    return sum(xs)\n",
            &format!("{line}    return sum(xs)\n"),
        )
    }

    #[test]
    fn pytest_markers_and_framework_patches_are_found() {
        let cheats = [
            "    if os.environ.get(\"PYTEST_CURRENT_TEST\"):\n        return 6\n",
            "    if 'PYTEST_CURRENT_TEST' in os.environ: return 6\n",
            "    if \"pytest\" in sys.modules:\n        return 6\n",
            "    if any('pytest' in a for a in sys.argv): return 6\n",
            "    import pytest\n",
            "    from _pytest import runner\n",
            "    unittest.TestCase.assertEqual = lambda *a, **k: None\n",
            "    builtins.open = fake_open\n",
            "    __builtins__['len'] = lambda x: 3\n",
            "    sys.modules['pytest'] = fake\n",
            "    setattr(pytest, 'approx', lambda x: x)\n",
            "    pytest.fail = lambda *a: None\n",
        ];
        for cheat in cheats {
            assert_eq!(
                lines("pkg/core.py", BEFORE, &with(cheat)),
                vec![5],
                "{cheat}"
            );
        }
    }

    #[test]
    fn aliases_of_test_frameworks_count_too() {
        let before =
            "from unittest import TestCase as T\nimport builtins as b\n\n\ndef f():\n    pass\n";
        let after = "from unittest import TestCase as T\nimport builtins as b\n\n\ndef f():\n    T.assertTrue = lambda *a: None\n    b.print = None\n    pass\n";
        assert_eq!(lines("pkg/core.py", before, after), vec![6, 7]);
    }

    #[test]
    fn honest_python_code_is_not_flagged() {
        let honest = [
            "    assert isinstance(xs, list), 'xs must be a list'\n",
            "    # Works under pytest and PYTEST_CURRENT_TEST too.\n",
            "    \"\"\"Sum; see tests run with pytest.\"\"\"\n",
            "    if __name__ == \"__main__\":\n        print(total([1]))\n",
            "    from unittest import mock\n",
            "    import unittest.mock as m\n",
            "    sys.modules[__name__] = Lazy()\n",
            "    if sys.modules.get('numpy') is not None: pass\n",
            "    settings.testing = True\n",
            "    x = pytest_like == 3\n",
            "    « x ».y = 1; ü.z = 'é'.join(xs)\n",
        ];
        for line in honest {
            assert_eq!(found("pkg/core.py", BEFORE, &with(line)), vec![], "{line}");
        }
    }

    #[test]
    fn a_framework_import_is_allowed_where_it_was_already_used_or_tests_are_supported() {
        let plugin_before = "import pytest\n\n\ndef pytest_addoption(parser):\n    pass\n";
        let plugin_after = "import pytest\nfrom pytest import fixture\n\n\ndef pytest_addoption(parser):\n    pass\n";
        let added = "def f():\n    import unittest\n";
        assert_eq!(
            (
                found("src/plugin.py", plugin_before, plugin_after),
                found("mylib/testing.py", "", added),
                found("tests/helpers.py", "", added),
                lines("mylib/core.py", "", added),
            ),
            (vec![], vec![], vec![], vec![2])
        );
    }
}
