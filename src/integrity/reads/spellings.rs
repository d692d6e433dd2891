//! The families' tests: cheat spellings are generated, not listed. Each language has base
//! reads (a root module or global, a member, and what follows it) and a generator that spells
//! each base many ways (aliases, `from` imports, assignments, destructuring, helper
//! functions, constant names reached by `getattr`/brackets, names built by concatenation,
//! joins and templates, optional chaining, the global object) inside a comparison, a call, a
//! condition and a return, with the aliases added by the change or already in the file.
//! Every spelling must be flagged with its base's rule; a table of honest code must not be.

use super::matcher::reads_of;

/// One generated change: the file before and after, and the rule it must be flagged with.
struct Spelling {
    path: &'static str,
    before: String,
    after: String,
    rule: &'static str,
}

/// Put `expr` in each of the contexts a read is used in, as lines of a function body.
fn contexts(expr: &str, lang: &str) -> Vec<String> {
    match lang {
        "python" => vec![
            format!("    if {expr} == \"pytest\":\n        return 1\n"),
            format!("    print({expr})\n"),
            format!("    if {expr}:\n        return 2\n"),
            format!("    return {expr}\n"),
        ],
        "javascript" => vec![
            format!("  if ({expr} === \"x\") {{ return 1; }}\n"),
            format!("  console.log(String({expr}));\n"),
            format!("  if ({expr}) {{ return 2; }}\n"),
            format!("  return {expr};\n"),
        ],
        "rust" => vec![
            format!("    let _v = {expr};\n"),
            format!("    drop({expr});\n"),
            format!("    if format!(\"{{:?}}\", {expr}).contains(\"x\") {{ return; }}\n"),
            format!("    return {expr};\n"),
        ],
        _ => vec![
            format!("\t_ = {expr}\n"),
            format!("\tfmt.Println({expr})\n"),
            format!("\tif fmt.Sprint({expr}) == \"x\" {{\n\t\treturn\n\t}}\n"),
            format!("\treturn {expr}\n"),
        ],
    }
}

/// A base read: `root` (a module or a global), the `member` read on it, and the text after
/// the member (a call, a further member).
struct Base {
    rule: &'static str,
    root: &'static str,
    member: &'static str,
    tail: &'static str,
}

const fn base(
    rule: &'static str,
    root: &'static str,
    member: &'static str,
    tail: &'static str,
) -> Base {
    Base {
        rule,
        root,
        member,
        tail,
    }
}

/// Ways to reach `member` of `root` by name, as Python expressions over `object`.
fn python_member_spellings(object: &str, member: &str) -> Vec<(String, String)> {
    let cut = member.len() / 2;
    let (head, rest) = member.split_at(cut);
    vec![
        (String::new(), format!("{object}.{member}")),
        (String::new(), format!("getattr({object}, \"{member}\")")),
        (
            String::new(),
            format!("getattr({object}, \"{head}\" + \"{rest}\")"),
        ),
        (
            format!("_HEAD = \"{head}\"\n_REST = \"{rest}\"\n"),
            format!("getattr({object}, f\"{{_HEAD}}{{_REST}}\")"),
        ),
        (
            String::new(),
            format!("getattr({object}, \"\".join([\"{head}\", \"{rest}\"]))"),
        ),
        (
            format!("NAME = \"{member}\"\n"),
            format!("getattr({object}, NAME)"),
        ),
        (String::new(), format!("vars({object})[\"{member}\"]")),
        (String::new(), format!("{object}.__dict__[\"{member}\"]")),
    ]
}

fn python_bases() -> Vec<Base> {
    vec![
        base("check.reads.argv", "sys", "argv", ""),
        base("check.reads.environment", "os", "environ", ".get(\"CI\")"),
        base("check.reads.environment", "os", "environ", "[\"TEST\"]"),
        base("check.reads.environment", "os", "getenv", "(\"CI\")"),
        base("check.reads.exec", "sys", "executable", ""),
        base("check.reads.exec", "sys", "orig_argv", ""),
        base(
            "check.reads.stack",
            "sys",
            "_getframe",
            "(1).f_code.co_name",
        ),
        base("check.reads.stack", "inspect", "stack", "()"),
        base("check.reads.stack", "inspect", "currentframe", "()"),
        base("check.reads.stack", "traceback", "extract_stack", "()"),
        base("check.reads.stack", "traceback", "format_stack", "()"),
        base("check.reads.modules", "sys", "modules", ""),
        base(
            "check.reads.thread",
            "threading",
            "current_thread",
            "().name",
        ),
        base(
            "check.reads.repository",
            "os",
            "stat",
            "(\"setup.py\").st_mtime",
        ),
        base("check.reads.repository", "os.path", "getmtime", "(\"x\")"),
        base("check.reads.repository", "os.path", "islink", "(\"x\")"),
        base("check.reads.cwd", "os", "getcwd", "()"),
        base("check.reads.parent", "os", "getppid", "()"),
    ]
}

/// Python spellings of one base: (module-level setup, expression).
fn python_spellings(b: &Base) -> Vec<(String, String)> {
    let (root, member, tail) = (b.root, b.member, b.tail);
    let import = format!("import {root}\n");
    let mut out = Vec::new();
    for (setup, expr) in python_member_spellings(root, member) {
        out.push((format!("{import}{setup}"), format!("{expr}{tail}")));
    }
    let aliased = [
        (format!("import {root} as _m\n"), "_m".to_owned()),
        (format!("{import}_p = {root}\n"), "_p".to_owned()),
        (format!("{import}_p, _q = {root}, 1\n"), "_p".to_owned()),
        (
            format!("{import}\n\ndef _mod():\n    return {root}\n"),
            "_mod()".to_owned(),
        ),
        (
            format!("{import}_mod = lambda: {root}\n"),
            "_mod()".to_owned(),
        ),
        (
            "import importlib\n".to_owned(),
            format!("importlib.import_module(\"{root}\")"),
        ),
        (
            "import importlib\n".to_owned(),
            format!(
                "importlib.import_module(\"{}\" + \"{}\")",
                &root[..1],
                &root[1..]
            ),
        ),
    ];
    for (setup, object) in aliased {
        for (more, expr) in python_member_spellings(&object, member) {
            out.push((format!("{setup}{more}"), format!("{expr}{tail}")));
        }
    }
    if !root.contains('.') {
        out.push((
            String::new(),
            format!("__import__(\"{root}\").{member}{tail}"),
        ));
        out.push((
            "import sys\n".to_owned(),
            format!("sys.modules[\"{root}\"].{member}{tail}"),
        ));
    }
    let (parent, leaf) = root.rsplit_once('.').unwrap_or(("", root));
    if !parent.is_empty() {
        out.push((
            format!("from {parent} import {leaf}\n"),
            format!("{leaf}.{member}{tail}"),
        ));
    }
    out.push((
        format!("from {root} import {member}\n"),
        format!("{member}{tail}"),
    ));
    out.push((
        format!("from {root} import {member} as _E\n"),
        format!("_E{tail}"),
    ));
    out.push((format!("from {root} import *\n"), format!("{member}{tail}")));
    out
}

fn javascript_bases() -> Vec<(Base, bool)> {
    vec![
        (base("check.reads.argv", "process", "argv", ""), true),
        (
            base("check.reads.argv", "process", "argv", ".join(\" \")"),
            true,
        ),
        (base("check.reads.argv", "process", "argv", "[1]"), true),
        (
            base("check.reads.environment", "process", "env", ".TEST"),
            true,
        ),
        (
            base("check.reads.environment", "process", "env", "[\"CI\"]"),
            true,
        ),
        (
            base("check.reads.exec", "process", "execArgv", ".length"),
            true,
        ),
        (base("check.reads.exec", "process", "argv0", ""), true),
        (base("check.reads.exec", "process", "execPath", ""), true),
        (base("check.reads.cwd", "process", "cwd", "()"), true),
        (base("check.reads.parent", "process", "ppid", ""), true),
        (
            base("check.reads.modules", "process", "mainModule", ""),
            true,
        ),
        (
            base("check.reads.stack", "Error", "captureStackTrace", "(o)"),
            true,
        ),
        (
            base("check.reads.stack", "Error", "prepareStackTrace", ""),
            true,
        ),
        (
            base(
                "check.reads.repository",
                "fs",
                "statSync",
                "(\"x\").mtimeMs",
            ),
            false,
        ),
        (
            base("check.reads.repository", "fs", "lstatSync", "(\"x\")"),
            false,
        ),
        (
            base("check.reads.thread", "worker_threads", "threadId", ""),
            false,
        ),
    ]
}

/// Ways to reach `member` of `object` in JavaScript.
fn javascript_member_spellings(object: &str, member: &str) -> Vec<(String, String)> {
    let cut = member.len() / 2;
    let (head, rest) = member.split_at(cut);
    vec![
        (String::new(), format!("{object}.{member}")),
        (String::new(), format!("{object}?.{member}")),
        (String::new(), format!("{object}[\"{member}\"]")),
        (String::new(), format!("{object}['{head}' + '{rest}']")),
        (String::new(), format!("{object}[`${{'{head}'}}{rest}`]")),
        (
            String::new(),
            format!("{object}[['{head}', '{rest}'].join('')]"),
        ),
        (
            String::new(),
            format!("{object}['{head}'.concat('{rest}')]"),
        ),
        (
            format!("const KEY = '{member}';\n"),
            format!("{object}[KEY]"),
        ),
        (String::new(), format!("Reflect.get({object}, '{member}')")),
    ]
}

/// JavaScript spellings of one base: (module-level setup, expression). `global` says the
/// root is a global (`process`, `Error`) rather than a module to import.
fn javascript_spellings(b: &Base, global: bool) -> Vec<(String, String)> {
    let (root, member, tail) = (b.root, b.member, b.tail);
    let mut objects: Vec<(String, String)> = Vec::new();
    let import = if global {
        String::new()
    } else {
        format!("const {root} = require('{root}');\n")
    };
    objects.push((import.clone(), root.to_owned()));
    if global {
        objects.extend([
            (String::new(), format!("globalThis.{root}")),
            (String::new(), format!("globalThis?.{root}")),
            (String::new(), format!("global['{root}']")),
            (
                String::new(),
                format!("globalThis['{}' + '{}']", &root[..2], &root[2..]),
            ),
            (String::new(), format!("(globalThis.{root} || {{}})")),
            (String::new(), format!("(0, {root})")),
        ]);
    }
    if root != "Error" {
        objects.extend([
            (String::new(), format!("require('{root}')")),
            (String::new(), format!("require('node:{root}')")),
            (format!("import _p from 'node:{root}';\n"), "_p".to_owned()),
            (
                format!("import * as _ns from '{root}';\n"),
                "_ns".to_owned(),
            ),
            (
                format!("const _q = require('no' + 'de:{root}');\n"),
                "_q".to_owned(),
            ),
        ]);
    }
    objects.extend([
        (format!("{import}const _p = {root};\n"), "_p".to_owned()),
        (format!("{import}let _p;\n_p = {root};\n"), "_p".to_owned()),
        (
            format!("{import}function _mod() {{\n  return {root};\n}}\n"),
            "_mod()".to_owned(),
        ),
        (
            format!("{import}const _mod = () => {root};\n"),
            "_mod()".to_owned(),
        ),
    ]);
    let mut out = Vec::new();
    for (setup, object) in objects {
        for (more, expr) in javascript_member_spellings(&object, member) {
            out.push((format!("{setup}{more}"), format!("{expr}{tail}")));
        }
    }
    let source = if global {
        String::new()
    } else {
        import.clone()
    };
    let from = if root == "Error" { None } else { Some(root) };
    out.push((
        format!("{source}const {{ {member} }} = {root};\n"),
        format!("{member}{tail}"),
    ));
    out.push((
        format!("{source}const {{ {member}: _a }} = {root};\n"),
        format!("_a{tail}"),
    ));
    out.push((
        format!("{source}const {{ ['{member}']: _a }} = {root};\n"),
        format!("_a{tail}"),
    ));
    if let Some(module) = from {
        out.push((
            format!("const {{ {member}: _a }} = require('{module}');\n"),
            format!("_a{tail}"),
        ));
        out.push((
            format!("import {{ {member} as _a }} from 'node:{module}';\n"),
            format!("_a{tail}"),
        ));
        out.push((
            format!("import {{ {member} }} from '{module}';\n"),
            format!("{member}{tail}"),
        ));
    }
    out
}

fn rust_bases() -> Vec<Base> {
    vec![
        base("check.reads.argv", "std::env", "args", "()"),
        base("check.reads.argv", "std::env", "args_os", "()"),
        base("check.reads.environment", "std::env", "var", "(\"CI\")"),
        base("check.reads.environment", "std::env", "vars", "()"),
        base("check.reads.environment", "std::env", "var_os", "(\"CI\")"),
        base("check.reads.exec", "std::env", "current_exe", "()"),
        base("check.reads.cwd", "std::env", "current_dir", "()"),
        base("check.reads.thread", "std::thread", "current", "().name()"),
        base(
            "check.reads.stack",
            "std::backtrace::Backtrace",
            "capture",
            "()",
        ),
        base("check.reads.stack", "std::panic::Location", "caller", "()"),
        base(
            "check.reads.repository",
            "std::fs",
            "symlink_metadata",
            "(\"x\")",
        ),
        base(
            "check.reads.repository",
            "std::fs",
            "metadata",
            "(\"x\")?.modified()",
        ),
    ]
}

fn rust_spellings(b: &Base) -> Vec<(String, String)> {
    let (root, member, tail) = (b.root, b.member, b.tail);
    let (parent, leaf) = root.rsplit_once("::").unwrap_or(("", root));
    vec![
        (String::new(), format!("{root}::{member}{tail}")),
        (String::new(), format!("::{root}::{member}{tail}")),
        (format!("use {root};\n"), format!("{leaf}::{member}{tail}")),
        (format!("use {root} as e;\n"), format!("e::{member}{tail}")),
        (
            format!("use {root}::{member};\n"),
            format!("{member}{tail}"),
        ),
        (format!("use {root}::{member} as a;\n"), format!("a{tail}")),
        (
            format!("use {parent}::{{{leaf}}};\n"),
            format!("{leaf}::{member}{tail}"),
        ),
        (
            format!("use {root}::{{self, {member}}};\n"),
            format!("{member}{tail}"),
        ),
        (
            format!("use {root}::{{self}};\n"),
            format!("{leaf}::{member}{tail}"),
        ),
        (format!("use {root}::*;\n"), format!("{member}{tail}")),
        (
            format!("use {parent}::{{{leaf}::{{{member} as z}}}};\n"),
            format!("z{tail}"),
        ),
    ]
}

fn go_bases() -> Vec<Base> {
    vec![
        base("check.reads.argv", "os", "Args", ""),
        base("check.reads.argv", "os", "Args", "[1:]"),
        base("check.reads.environment", "os", "Getenv", "(\"CI\")"),
        base("check.reads.environment", "os", "LookupEnv", "(\"CI\")"),
        base("check.reads.environment", "os", "Environ", "()"),
        base("check.reads.exec", "os", "Executable", "()"),
        base("check.reads.stack", "runtime", "Caller", "(1)"),
        base("check.reads.stack", "runtime/debug", "Stack", "()"),
        base("check.reads.cwd", "os", "Getwd", "()"),
        base("check.reads.parent", "os", "Getppid", "()"),
        base("check.reads.repository", "os", "Lstat", "(\"x\")"),
    ]
}

fn go_spellings(b: &Base) -> Vec<(String, String)> {
    let (root, member, tail) = (b.root, b.member, b.tail);
    let leaf = root.rsplit('/').next().unwrap_or(root);
    vec![
        (
            format!("import \"{root}\"\n"),
            format!("{leaf}.{member}{tail}"),
        ),
        (
            format!("import o \"{root}\"\n"),
            format!("o.{member}{tail}"),
        ),
        (
            format!("import (\n\t\"fmt\"\n\tq \"{root}\"\n)\n"),
            format!("q.{member}{tail}"),
        ),
        (format!("import . \"{root}\"\n"), format!("{member}{tail}")),
        (
            format!("import \"{root}\"\n\nvar read = {leaf}.{member}\n"),
            format!("read{tail}"),
        ),
        (
            format!(
                "import \"{root}\"\n\nfunc get() interface{{}} {{\n\treturn {leaf}.{member}\n}}\n"
            ),
            format!("get(){tail}"),
        ),
    ]
}

/// Every generated change of a language: each spelling in each context, with its setup added
/// by the change or already in the file before it.
fn changes(lang: &str) -> Vec<Spelling> {
    let mut out = Vec::new();
    let context_lang = if lang == "typescript" {
        "javascript"
    } else {
        lang
    };
    let mut add = |path: &'static str,
                   rule: &'static str,
                   spellings: Vec<(String, String)>,
                   file: &dyn Fn(&str, &str) -> String| {
        // Python and JavaScript have many spellings: each is used in one context, with its
        // aliases added by the change or already in the file, in turn, so every context and
        // both places are covered. Rust and Go have few: each is used in every combination.
        let full = matches!(context_lang, "rust" | "go");
        for (setup, expr) in spellings {
            let bodies = contexts(&expr, context_lang);
            let turn = out.len();
            let combinations: Vec<(usize, bool)> = if full {
                (0..bodies.len())
                    .flat_map(|i| [(i, false), (i, true)])
                    .collect()
            } else {
                vec![(turn % bodies.len(), (turn / bodies.len()) % 2 == 1)]
            };
            let base_body = match context_lang {
                "python" => "    return None\n",
                "javascript" => "  return null;\n",
                "rust" => "    return;\n",
                _ => "\treturn\n",
            };
            for (context, setup_before) in combinations {
                let before_setup = if setup_before { setup.as_str() } else { "" };
                out.push(Spelling {
                    path,
                    before: file(before_setup, base_body),
                    after: file(&setup, &bodies[context]),
                    rule,
                });
            }
        }
    };
    match lang {
        "python" => {
            for b in python_bases() {
                add(
                    "pkg/core.py",
                    b.rule,
                    python_spellings(&b),
                    &|setup, body| format!("{setup}\n\ndef f(x):\n{body}"),
                );
            }
        }
        "javascript" => {
            for (b, global) in javascript_bases() {
                add(
                    "lib/core.js",
                    b.rule,
                    javascript_spellings(&b, global),
                    &|setup, body| {
                        format!("{setup}\nfunction f(x, o) {{\n{body}}}\n\nmodule.exports = f;\n")
                    },
                );
            }
        }
        "typescript" => {
            for (b, global) in javascript_bases() {
                let mut spellings = javascript_spellings(&b, global);
                if global {
                    spellings.push((
                        String::new(),
                        format!("({} as any).{}{}", b.root, b.member, b.tail),
                    ));
                    spellings.push((String::new(), format!("{}!.{}{}", b.root, b.member, b.tail)));
                }
                add("src/core.ts", b.rule, spellings, &|setup, body| {
                    format!(
                        "{setup}\nexport function f(x: string, o: object): unknown {{\n{body}}}\n"
                    )
                });
            }
        }
        "rust" => {
            for b in rust_bases() {
                add("src/lib.rs", b.rule, rust_spellings(&b), &|setup, body| {
                    format!("{setup}\npub fn f() -> Result<(), std::io::Error> {{\n{body}}}\n")
                });
            }
        }
        _ => {
            for b in go_bases() {
                add("pkg/core.go", b.rule, go_spellings(&b), &|setup, body| {
                    format!("package core\n\n{setup}\nfunc F() {{\n{body}}}\n")
                });
            }
        }
    }
    out
}

/// Generate, check, and report the spellings of one language: every one flagged with its
/// rule.
#[expect(
    clippy::print_stdout,
    reason = "the count is reported with --nocapture"
)]
fn every_spelling_is_flagged(lang: &str) -> usize {
    let spellings = changes(lang);
    let mut missed = Vec::new();
    for s in &spellings {
        let flags = reads_of(s.path, Some(&s.before), &s.after);
        if !flags.iter().any(|f| f.rule == s.rule) {
            missed.push(format!(
                "{} not flagged ({:?}):\n{}",
                s.rule,
                flags.iter().map(|f| f.rule).collect::<Vec<_>>(),
                s.after
            ));
        }
    }
    let shown: Vec<&String> = missed.iter().take(5).collect();
    assert!(
        missed.is_empty(),
        "{} of {} {lang} spellings missed; first:\n{}",
        missed.len(),
        spellings.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
    println!(
        "{lang}: {} spellings generated, all flagged",
        spellings.len()
    );
    spellings.len()
}

#[test]
fn every_python_spelling_is_flagged() {
    assert!(every_spelling_is_flagged("python") > 1000);
}

#[test]
fn every_javascript_spelling_is_flagged() {
    assert!(every_spelling_is_flagged("javascript") > 1000);
}

#[test]
fn every_typescript_spelling_is_flagged() {
    assert!(every_spelling_is_flagged("typescript") > 1000);
}

#[test]
fn every_rust_spelling_is_flagged() {
    assert!(every_spelling_is_flagged("rust") > 500);
}

#[test]
fn every_go_spelling_is_flagged() {
    assert!(every_spelling_is_flagged("go") > 300);
}
