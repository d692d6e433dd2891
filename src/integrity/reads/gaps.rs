//! Reads that hide behind dynamic evaluation, `/proc` paths and caught exceptions, each in
//! several spellings (aliases, names built from strings, helpers), flagged with their rule;
//! and their honest look-alikes (`re.compile`, `__import__("json")`, other absolute paths)
//! are in `honest`.

use super::matcher::reads_of;

/// The rules flagged when `body` is added to a function in a file of `path`'s language.
fn flagged(path: &str, setup: &str, body: &str) -> Vec<&'static str> {
    let (before, after) = match path.rsplit('.').next() {
        Some("py") => (
            format!("{setup}\n\ndef f(x):\n    return x\n"),
            format!("{setup}\n\ndef f(x):\n{body}    return x\n"),
        ),
        Some("rs") => (
            format!("{setup}\npub fn f(x: &str) -> String {{\n    x.to_owned()\n}}\n"),
            format!("{setup}\npub fn f(x: &str) -> String {{\n{body}    x.to_owned()\n}}\n"),
        ),
        Some("go") => (
            format!("package p\n\n{setup}\nfunc f(x string) string {{\n\treturn x\n}}\n"),
            format!("package p\n\n{setup}\nfunc f(x string) string {{\n{body}\treturn x\n}}\n"),
        ),
        _ => (
            format!("{setup}\nfunction f(x) {{\n  return x;\n}}\n"),
            format!("{setup}\nfunction f(x) {{\n{body}  return x;\n}}\n"),
        ),
    };
    reads_of(path, Some(&before), &after)
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

fn assert_flagged(rule: &str, path: &str, cases: &[(&str, &str)]) {
    for (setup, body) in cases {
        let rules = flagged(path, setup, body);
        assert!(
            rules.contains(&rule),
            "{path}: `{body}` (setup `{setup}`) is not flagged {rule}: {rules:?}"
        );
    }
}

#[test]
fn dynamic_evaluation_is_flagged_however_it_is_named() {
    assert_flagged(
        "check.reads.eval",
        "a.py",
        &[
            ("", "    eval(x)\n"),
            ("", "    exec(\"import sys; v = sys.argv\")\n"),
            ("", "    code = compile(x, \"<x>\", \"eval\")\n"),
            ("import builtins", "    builtins.eval(x)\n"),
            (
                "import builtins",
                "    getattr(builtins, \"ev\" + \"al\")(x)\n",
            ),
            ("_run = exec", "    _run(x)\n"),
            ("", "    m = __import__(x)\n"),
            ("", "    m = __import__(\"s\" + x)\n"),
            ("import importlib", "    m = importlib.import_module(x)\n"),
            (
                "import importlib as il",
                "    m = il.import_module(x.strip())\n",
            ),
        ],
    );
    assert_flagged(
        "check.reads.eval",
        "a.js",
        &[
            ("", "  eval(x);\n"),
            ("", "  globalThis.eval(x);\n"),
            ("", "  globalThis['ev' + 'al'](x);\n"),
            ("const run = eval;", "  run(x);\n"),
            ("", "  new Function('return process.argv')();\n"),
            ("", "  Function(x)();\n"),
            ("", "  require('vm').runInThisContext(x);\n"),
            ("const vm = require('node:vm');", "  new vm.Script(x);\n"),
        ],
    );
}

#[test]
fn proc_paths_are_flagged_spelled_or_built() {
    assert_flagged(
        "check.reads.proc",
        "a.py",
        &[
            ("", "    open(\"/proc/self/cmdline\").read()\n"),
            ("", "    open(\"/proc/\" + \"self/environ\").read()\n"),
            ("P = \"/proc/self\"", "    open(P + \"/cmdline\").read()\n"),
            (
                "import os",
                "    open(f\"/proc/{os.getppid()}/cmdline\").read()\n",
            ),
            (
                "import pathlib",
                "    pathlib.Path(\"/proc\", \"self\", \"environ\").read_bytes()\n",
            ),
        ],
    );
    assert_flagged(
        "check.reads.proc",
        "a.js",
        &[
            (
                "const fs = require('fs');",
                "  fs.readFileSync('/proc/self/cmdline');\n",
            ),
            (
                "const fs = require('fs');",
                "  fs.readFileSync(`/proc/${process.ppid}/environ`);\n",
            ),
            (
                "const fs = require('fs');",
                "  fs.readFileSync('/proc/' + 'self/environ');\n",
            ),
        ],
    );
    assert_flagged(
        "check.reads.proc",
        "a.rs",
        &[(
            "",
            "    let _ = std::fs::read_to_string(\"/proc/self/cmdline\");\n",
        )],
    );
    assert_flagged(
        "check.reads.proc",
        "a.go",
        &[(
            "import \"os\"\n",
            "\t_, _ = os.ReadFile(\"/proc/self/environ\")\n",
        )],
    );
}

#[test]
fn the_stack_read_through_a_caught_exception_is_a_stack_read() {
    assert_flagged(
        "check.reads.stack",
        "a.py",
        &[
            (
                "",
                "    try:\n        raise ValueError\n    except ValueError as e:\n        t = e.__traceback__\n",
            ),
            (
                "import sys",
                "    try:\n        raise ValueError\n    except ValueError:\n        t = sys.exc_info()[2].tb_frame\n",
            ),
            ("import traceback", "    s = traceback.format_exc()\n"),
            ("import traceback as tb", "    s = tb.extract_tb(x)\n"),
            (
                "from traceback import walk_tb",
                "    s = list(walk_tb(x))\n",
            ),
        ],
    );
    assert_flagged(
        "check.reads.stack",
        "a.js",
        &[
            (
                "",
                "  try { null.x; } catch (e) { if (e.stack.includes('jest')) return 1; }\n",
            ),
            (
                "",
                "  try { null.x; } catch (err) { return err['stack']; }\n",
            ),
            ("", "  Promise.reject(new Error()).catch((e) => e.stack);\n"),
        ],
    );
}
