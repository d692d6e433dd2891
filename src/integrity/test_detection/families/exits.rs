//! Ending the process or hooking its end from library code: `os._exit`, `sys.exit`,
//! `raise SystemExit`, `atexit`, `sys.excepthook`, `process.exit`, `process.exitCode =`,
//! `process.on('exit')`, `std::process::exit`, constructors in `.init_array` (`#[ctor]`,
//! `#[link_section = ".init_array"]`), Go's `os.Exit`. An exit on the failing input ends the
//! run before the assertion, and some runners then report success.
//!
//! Exits are legitimate where a program decides how it ends: an entry point (see
//! [`super::entry`]: a `main`, a CLI module, a `bin/` script, a file run as a script), and a
//! file that already called the same exit before the change. Only library code that starts
//! exiting is refused.

use std::sync::LazyLock;

use super::super::added::{Added, Detection, Family, of};
use super::super::code::Syntax;
use super::entry::is_entry_point;
use crate::integrity::pattern::Pattern;

static PYTHON: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r"\bos\s*\.\s*(?:_exit|abort|kill\s*\(\s*os\s*\.\s*getpid)\b|\bsys\s*\.\s*exit\s*\(|(?:^|[^\w.])(?:exit|quit)\s*\(|\braise\s+SystemExit\b|\batexit\b|\b(?:sys|threading)\s*\.\s*excepthook\s*=[^=]",
    )
});
static JAVASCRIPT: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\bprocess\s*\.\s*(?:exit|reallyExit|abort)\s*\(|\bprocess\s*\.\s*exitCode\s*(?:=[^=]|\|\|=|\?\?=)|\bprocess\s*\.\s*(?:on|once|addListener|prependListener|prependOnceListener)\s*\(\s*['"](?:exit|beforeExit|uncaughtException|unhandledRejection)['"]|\bprocess\s*\.\s*kill\s*\(\s*process\s*\.\s*pid\b"#,
    )
});
static RUST: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\bprocess\s*::\s*(?:exit|abort)\b|\blibc\s*::\s*_?exit\b|#\s*\[\s*(?:unsafe\s*\(\s*)?link_section\s*=\s*"\.(?:init_array|ctors|fini_array|dtors|CRT\$X)|#\s*\[\s*(?:ctor\s*::\s*)?(?:ctor|dtor)\s*[\](]"#,
    )
});
static GO: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"\b(?:os|syscall)\s*\.\s*Exit\s*\("));

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
            "exit",
            "quit",
            "SystemExit",
            "excepthook",
            "abort",
            "getpid",
        ],
        Syntax::JavaScript => &["process"],
        Syntax::Rust => &["exit", "abort", "link_section", "ctor"],
        Syntax::Go => &["Exit"],
    };
    words.iter().any(|w| middle.contains(w))
}

/// The call or hook a match names, without spaces, for the message and for the comparison
/// with the file before the change.
fn name(found: &str) -> String {
    found
        .split_whitespace()
        .collect::<String>()
        .trim_end_matches(['(', '=', '[', ']'])
        .trim_start_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .to_owned()
}

/// Whether the exit at the end of `code[..end]` has a status that says failure: a nonzero
/// integer or a message (Python's `sys.exit("...")` exits with 1). Such an exit cannot turn a
/// failing run into a passing one, so an honest CLI fix that adds `process.exit(1)` stays
/// allowed; `exit(0)`, `exit()` and a computed status do not.
fn exits_with_failure(code: &str, end: usize) -> bool {
    let rest = code[end..].trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    let arg: String = rest
        .chars()
        .take_while(|c| !matches!(c, ')' | ';' | ','))
        .collect();
    let arg = arg.trim();
    if arg.starts_with(['"', '\'', 'f']) && arg.len() > 1 && !arg.starts_with("false") {
        return true;
    }
    let digits = arg.trim_start_matches('-');
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && !digits.trim_start_matches('0').is_empty()
}

pub(crate) fn detect(added: &Added<'_>, syntax: Syntax) -> Vec<Detection> {
    let pattern = pattern(syntax);
    let candidates: Vec<(usize, String)> = added
        .code_lines()
        .filter_map(|(index, code)| {
            let m = pattern.find(code)?;
            let call = name(m.as_str());
            let is_call = !call.contains("atexit")
                && !call.contains("excepthook")
                && !call.starts_with('#')
                && !code[m.start()..].contains("process.on");
            if is_call && exits_with_failure(code, m.end()) {
                return None;
            }
            Some((index, call))
        })
        .collect();
    if candidates.is_empty() || is_entry_point(added.path, added.after, syntax) {
        return Vec::new();
    }
    // A file that already exited the same way is a program's module; it may do it again.
    let before: String = added.before.split_whitespace().collect();
    candidates
        .into_iter()
        .filter(|(_, what)| !before.contains(what.as_str()))
        .map(|(index, what)| {
            of(
                Family::ProcessExit,
                index,
                format!(
                    "ends the process or hooks its end (`{what}`) in library code, which can \
                     stop the run before an assertion fails"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use crate::integrity::test_detection::Family;

    const PY: &str = "import os\n\n\ndef f(x):\n    return x\n";
    const JS: &str = "function f(x) {\n  return x;\n}\nmodule.exports = { f };\n";
    const RS: &str = "pub fn f(x: u32) -> u32 {\n    x\n}\n";

    fn py(line: &str) -> String {
        PY.replace("    return x", &format!("{line}\n    return x"))
    }
    fn js(line: &str) -> String {
        JS.replace("  return x", &format!("{line}\n  return x"))
    }
    fn rs(line: &str) -> String {
        RS.replace("    x\n", &format!("{line}\n    x\n"))
    }

    #[test]
    fn exits_and_exit_hooks_in_library_code_are_found() {
        let cases = [
            ("pkg/core.py", PY.to_owned(), py("    if x == 3: os._exit(0)")),
            ("pkg/core.py", PY.to_owned(), py("    import sys; sys.exit(0)")),
            ("pkg/core.py", PY.to_owned(), py("    atexit.register(lambda: os._exit(0))")),
            ("pkg/core.py", PY.to_owned(), py("    sys.excepthook = lambda *a: os._exit(0)")),
            ("pkg/core.py", PY.to_owned(), py("    raise SystemExit(0)")),
            ("lib/a.js", JS.to_owned(), js("  if (x === 3) process.exit(0);")),
            ("lib/a.js", JS.to_owned(), js("  process.on('exit', () => { process.exitCode = 0; });")),
            ("lib/a.js", JS.to_owned(), js("  process.exitCode = 0;")),
            ("src/lib.rs", RS.to_owned(), rs("    if x == 3 { std::process::exit(0) }")),
            ("src/lib.rs", RS.to_owned(), "#[used]\n#[unsafe(link_section = \".init_array\")]\nstatic INIT: extern \"C\" fn() = init;\npub fn f(x: u32) -> u32 {\n    x\n}\n".to_owned()),
            ("src/lib.rs", RS.to_owned(), "#[ctor::ctor]\nfn init() {}\npub fn f(x: u32) -> u32 {\n    x\n}\n".to_owned()),
            ("x.go", "package x\n\nfunc F() {\n}\n".to_owned(), "package x\n\nfunc F() {\n\tos.Exit(0)\n}\n".to_owned()),
        ];
        for (path, before, after) in cases {
            assert_eq!(
                families(path, &before, &after),
                vec![Family::ProcessExit],
                "{after}"
            );
        }
    }

    /// An honest CLI fix that adds `process.exit(1)` or `sys.exit(2)` where the program ends.
    #[test]
    fn exits_in_entry_points_and_in_files_that_already_exited_are_allowed() {
        let cli = "#!/usr/bin/env node\nconst { f } = require('../lib');\nf(process.argv[2]);\n";
        let cases = [
            ("bin/tool.js", cli.to_owned(), cli.replace("f(process.argv[2]);", "if (!f(process.argv[2])) process.exit(1);")),
            ("src/main.rs", RS.to_owned(), rs("    std::process::exit(2);")),
            ("pkg/__main__.py", PY.to_owned(), py("    sys.exit(2)")),
            ("pkg/cmd.py", "import sys\n\ndef run():\n    sys.exit(1)\n".to_owned(), "import sys\n\ndef run():\n    sys.exit(1)\n\ndef other():\n    sys.exit(2)\n".to_owned()),
            ("pkg/tool.py", "def f():\n    pass\n\nif __name__ == '__main__':\n    f()\n".to_owned(), "def f():\n    pass\n\nif __name__ == '__main__':\n    f()\n    raise SystemExit(1)\n".to_owned()),
            ("pkg/core.py", PY.to_owned(), py("    with open(x) as fh:\n        fh.__exit__(None, None, None)")),
            ("lib/a.js", JS.to_owned(), js("  server.on('exit', done); child.exit(1);")),
            // A status that says failure cannot make a failing run pass.
            ("lib/a.js", JS.to_owned(), js("  if (!x) { console.error('no input'); process.exit(1); }")),
            ("lib/a.js", JS.to_owned(), js("  process.exitCode = 2;")),
            ("pkg/core.py", PY.to_owned(), py("    sys.exit('cannot read the file')")),
            ("src/lib.rs", RS.to_owned(), rs("    std::process::exit(101);")),
        ];
        for (path, before, after) in cases {
            assert_eq!(families(path, &before, &after), vec![], "{after}");
        }
    }
}
