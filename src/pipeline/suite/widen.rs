//! Suite forms for a runner efix does not know (a project's own script, `./run-tests
//! LABEL`): widen the test selector the command shows.
//!
//! A selector is an argument that names something of the repository: a dotted label whose
//! first part is a module or package (`a.b.C.test_x`), a path or node id
//! (`tests/x.py::T::t`), a bare name of a package directory (`model_fields`); plus name
//! patterns (`-k`, `-t`, `-run`, `--grep`, ...). Labels widen to the modules and packages
//! that hold them (`a.b.C.test_x` → `a.b` → `a`), paths to their file and directories
//! (`tests/x.py::T::t` → `tests/x.py` → `tests/`), patterns are dropped; the widest form is
//! the same program with no selector. Names are looked up from the repository root and from
//! the directory of the script the program runs (`tests/run_suite.py` reads labels
//! under `tests/`). An argument that resolves to nothing is not a selector and stays.

use std::path::{Path, PathBuf};

use crate::evidence::SuiteFormKind;

use super::Form;

/// Interpreters whose first positional argument is the script they run (part of the program).
const INTERPRETERS: &[&str] = &[
    "python", "python3", "node", "ruby", "perl", "php", "bun", "deno",
];
/// Options that filter tests by name; they and their values are dropped.
const NAME_PATTERNS: &[&str] = &[
    "-k",
    "--keyword",
    "-t",
    "--testNamePattern",
    "--test-name-pattern",
    "-run",
    "--run",
    "-test.run",
    "-g",
    "--grep",
    "--filter",
    "--match",
];
/// At most this many forms are derived; the widest and narrowest levels are kept.
const MAX_FORMS: usize = 5;

/// One argument of the reproduction after the program.
enum Arg {
    /// Stays in every form.
    Keep(String),
    /// A selector as written, with its wider selectors, widest first (possibly none).
    Selector { own: String, wider: Vec<String> },
    /// A name pattern (with its value): dropped from every form.
    Pattern,
}

/// The wider forms of `argv`, widest first; empty when the command shows no selector.
pub(super) fn forms(argv: &[String], root: &Path) -> Vec<Form> {
    let Some((program, rest)) = split_program(argv) else {
        return Vec::new();
    };
    let mut bases = vec![root.to_path_buf()];
    if let Some(script) = program.last().filter(|_| program.len() > 1)
        && let Some(dir) = Path::new(script).parent()
        && !dir.as_os_str().is_empty()
    {
        bases.push(root.join(dir));
    }
    let args = classify(rest, &bases);
    if !args.iter().any(|a| !matches!(a, Arg::Keep(_))) {
        return Vec::new();
    }
    // Each selector replaced by what `choose` gives for its wider ones (itself for `None`).
    let with = |choose: &dyn Fn(&[String]) -> Option<String>| {
        let mut out = program.to_vec();
        for arg in &args {
            match arg {
                Arg::Keep(word) => out.push(word.clone()),
                Arg::Pattern => {}
                Arg::Selector { own, wider } => out.push(choose(wider).unwrap_or(own.clone())),
            }
        }
        out
    };
    let mut forms = vec![Form {
        kind: SuiteFormKind::NoSelector,
        argv: program
            .iter()
            .cloned()
            .chain(args.iter().filter_map(|a| match a {
                Arg::Keep(word) => Some(word.clone()),
                _ => None,
            }))
            .collect(),
    }];
    let levels = args
        .iter()
        .map(|a| match a {
            Arg::Selector { wider, .. } => wider.len(),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    for level in 0..levels {
        let at = |wider: &[String]| {
            (!wider.is_empty()).then(|| wider[level.min(wider.len() - 1)].clone())
        };
        forms.push(Form {
            kind: SuiteFormKind::WiderSelector,
            argv: with(&at),
        });
    }
    forms.push(Form {
        kind: SuiteFormKind::WiderSelector,
        argv: with(&|_| None),
    });
    let mut unique: Vec<Form> = Vec::new();
    for form in forms {
        if form.argv != argv && !unique.iter().any(|u| u.argv == form.argv) {
            unique.push(form);
        }
    }
    if unique.len() > MAX_FORMS {
        let last = unique.split_off(MAX_FORMS - 1).pop();
        unique.extend(last);
    }
    unique
}

/// The program (with the script an interpreter runs, or `-m module`) and its arguments.
fn split_program(argv: &[String]) -> Option<(&[String], &[String])> {
    let name = crate::policy::command::basename(argv.first()?);
    let interpreter = INTERPRETERS.iter().any(|i| {
        name == *i
            || name
                .strip_prefix(i)
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    });
    if !interpreter {
        return Some(argv.split_at(1));
    }
    let mut at = 1;
    while let Some(arg) = argv.get(at) {
        if arg == "-m" {
            at += 2;
            break;
        }
        if !arg.starts_with('-') {
            at += 1;
            break;
        }
        at += 1;
    }
    (at <= argv.len()).then(|| argv.split_at(at))
}

fn classify(rest: &[String], bases: &[PathBuf]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut after_option = false;
    while i < rest.len() {
        let arg = &rest[i];
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        if NAME_PATTERNS.contains(&name) {
            out.push(Arg::Pattern);
            i += if name == arg { 2 } else { 1 };
            after_option = false;
            continue;
        }
        if !arg.starts_with('-') && is_selector(arg, after_option, bases) {
            out.push(Arg::Selector {
                own: arg.clone(),
                wider: wider(arg, bases),
            });
        } else {
            out.push(Arg::Keep(arg.clone()));
        }
        after_option = arg.starts_with('-') && !arg.contains('=');
        i += 1;
    }
    out
}

/// Whether `arg` names a test of the repository. Right after an option it may be the
/// option's value, so only a node id, a path or a dotted label counts there.
fn is_selector(arg: &str, after_option: bool, bases: &[PathBuf]) -> bool {
    let path = arg.split_once("::").map_or(arg, |(path, _)| path);
    if arg.contains("::") || path.contains('/') {
        return bases.iter().any(|b| b.join(path).exists());
    }
    let parts: Vec<&str> = arg.split('.').collect();
    if parts.iter().any(|p| !is_identifier(p)) {
        return false;
    }
    if after_option && parts.len() < 2 {
        return false;
    }
    resolves(parts[0], bases)
}

fn is_identifier(part: &str) -> bool {
    !part.is_empty()
        && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !part.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a dotted module name is a package directory or a module file under a base.
fn resolves(module: &str, bases: &[PathBuf]) -> bool {
    let rel = module.replace('.', "/");
    bases
        .iter()
        .any(|b| b.join(&rel).is_dir() || b.join(format!("{rel}.py")).is_file())
}

/// The wider selectors of one selector, widest first.
fn wider(arg: &str, bases: &[PathBuf]) -> Vec<String> {
    let path = arg.split_once("::").map(|(path, _)| path);
    if let Some(path) = path.or_else(|| arg.contains('/').then_some(arg)) {
        let mut out: Vec<String> = Vec::new();
        if path != arg {
            out.push(path.to_owned());
        }
        let mut dir = Path::new(path.trim_end_matches('/')).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            out.push(format!("{}/", d.display()));
            dir = d.parent();
        }
        out.reverse();
        return out;
    }
    let parts: Vec<&str> = arg.split('.').collect();
    (1..parts.len())
        .map(|n| parts[..n].join("."))
        .filter(|module| resolves(module, bases))
        .collect()
}
