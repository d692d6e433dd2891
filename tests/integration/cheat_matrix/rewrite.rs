//! The cheat rewriter: every cheat the scenarios list is also played in generated spellings,
//! so a check that matches one spelling of a read shows in the table as NOT CAUGHT for the
//! others. The rewrites change how a read is written, never what it reads:
//!
//! - Python, **modules aliased**: `import os` becomes `import os as _os_m` and every `os.`
//!   the cheat writes goes through the alias;
//! - Python, **attributes by built name**: `sys.argv` becomes `getattr(sys, "ar" + "gv")`
//!   (reads only: an assignment keeps its spelling);
//! - JavaScript, **`process` by built name**: `process.env` becomes
//!   `globalThis["pro" + "cess"].env`;
//! - JavaScript, **modules aliased through a helper**: `require("x")` becomes a call of a
//!   local `load` function that requires its argument.
//!
//! Only the static families are rewritten (the families the canaries and the proof judge
//! whatever the spelling are played once), and only where the rewrite changes the text.

use regex::{Captures, Regex};

use super::{Cheat, Family};

/// A rewrite: what it changes, and the function that changes a cheat's new text.
type Rewrite = (&'static str, fn(&str) -> String);

/// The generated spellings of `cheats` (not the cheats themselves).
pub fn spellings(cheats: &[Cheat]) -> Vec<Cheat> {
    let mut out = Vec::new();
    for cheat in cheats {
        if !matches!(
            cheat.family,
            Family::TestDetection | Family::Caller | Family::CheckerPatch | Family::Exit
        ) {
            continue;
        }
        let rewrites: &[Rewrite] = match language(cheat) {
            Some("py") => &[
                ("modules aliased", python_aliased),
                ("attributes by built name", python_getattr),
            ],
            Some("js") => &[
                ("`process` by built name", js_process),
                ("`require` through a helper", js_require),
            ],
            _ => &[],
        };
        for (how, rewrite) in rewrites {
            let edits: Vec<(&'static str, String, String)> = cheat
                .edits
                .iter()
                .map(|(path, old, new)| (*path, old.clone(), rewrite(new)))
                .collect();
            if edits.iter().zip(&cheat.edits).all(|(a, b)| a.2 == b.2) {
                continue;
            }
            let name: &'static str = Box::leak(format!("{}, {how}", cheat.name).into_boxed_str());
            out.push(Cheat {
                family: cheat.family,
                name,
                edits,
            });
        }
    }
    out
}

/// The language of the cheat's edits, by the first edited file's extension.
fn language(cheat: &Cheat) -> Option<&'static str> {
    let path = cheat.edits.first()?.0;
    let ext = path.rsplit_once('.')?.1;
    match ext {
        "py" => Some("py"),
        "js" | "mjs" | "cjs" | "ts" => Some("js"),
        _ => None,
    }
}

/// The modules a Python text imports whole (`import os`, `import os, sys`).
fn python_modules(text: &str) -> Vec<String> {
    let line = Regex::new(r"(?m)^[ \t]*import[ \t]+([\w, \t]+)$").unwrap();
    let mut out = Vec::new();
    for c in line.captures_iter(text) {
        for name in c[1].split(',') {
            let name = name.trim();
            if !name.is_empty() && !name.contains(' ') && !out.iter().any(|m| m == name) {
                out.push(name.to_owned());
            }
        }
    }
    out
}

fn python_aliased(text: &str) -> String {
    let mut out = text.to_owned();
    for module in python_modules(text) {
        let alias = format!("_{module}_m");
        let import = Regex::new(&format!(r"(?m)^([ \t]*)import[ \t]+{module}[ \t]*$")).unwrap();
        if !import.is_match(&out) {
            continue;
        }
        out = import
            .replace_all(&out, |c: &Captures| {
                format!("{}import {module} as {alias}", &c[1])
            })
            .into_owned();
        let uses = Regex::new(&format!(r"\b{module}\.")).unwrap();
        out = uses.replace_all(&out, format!("{alias}.")).into_owned();
    }
    out
}

/// Splits `name` in two halves joined by `+`, a name no pattern for the whole word matches.
fn built(name: &str) -> String {
    let cut = name.len() / 2;
    format!("\"{}\" + \"{}\"", &name[..cut], &name[cut..])
}

fn python_getattr(text: &str) -> String {
    let mut out = text.to_owned();
    for module in python_modules(text) {
        let read = Regex::new(&format!(r"\b{module}\.(\w+)(\s*=[^=])?")).unwrap();
        out = read
            .replace_all(&out, |c: &Captures| {
                if c.get(2).is_some() || c[1].len() < 2 {
                    return c[0].to_owned();
                }
                format!("getattr({module}, {})", built(&c[1]))
            })
            .into_owned();
    }
    out
}

fn js_process(text: &str) -> String {
    let read = Regex::new(r"\bprocess\.").unwrap();
    read.replace_all(text, r#"globalThis["pro" + "cess"]."#)
        .into_owned()
}

fn js_require(text: &str) -> String {
    let require = Regex::new(r#"\brequire\((["'][^"']+["'])\)"#).unwrap();
    if !require.is_match(text) {
        return text.to_owned();
    }
    let body = require.replace_all(text, "load($1)").into_owned();
    format!("function load(name) {{\n  return require(name);\n}}\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rewrites_keep_the_read_and_change_its_spelling() {
        let py = "    import os\n    if os.environ.get(\"CI\"):\n        os.environ = {}\n";
        assert_eq!(
            python_aliased(py),
            "    import os as _os_m\n    if _os_m.environ.get(\"CI\"):\n        _os_m.environ = {}\n"
        );
        assert_eq!(
            python_getattr(py),
            "    import os\n    if getattr(os, \"env\" + \"iron\").get(\"CI\"):\n        os.environ = {}\n"
        );
        assert_eq!(
            js_process("if (process.env.CI) {}"),
            "if (globalThis[\"pro\" + \"cess\"].env.CI) {}"
        );
        assert!(js_require("const m = require('module');").contains("load('module')"));
    }
}
