//! Entry points: the files where ending the process, reading argv and printing are the
//! program's own business (a `main`, a CLI module, a `bin/` script), as opposed to library
//! code that the tests import.

use super::super::code::Syntax;

/// Directory names whose files are programs, not libraries.
const PROGRAM_DIRS: &[&str] = &[
    "bin", "scripts", "script", "cli", "cmd", "tools", "examples", "benches", "xtask",
];

/// File stems that are programs.
const PROGRAM_STEMS: &[&str] = &[
    "main", "__main__", "cli", "setup", "manage", "build", "cmd", "command", "commands",
];

/// Whether `path` (with its contents `after`) is a program's entry point: under a program
/// directory, named like one, a Rust `src/main.rs` or `src/bin/*`, a script with a `#!` line,
/// a Python module with an `if __name__ == "__main__":` block, or a Go `package main`.
pub(crate) fn is_entry_point(path: &str, after: &str, syntax: Syntax) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let stem = name.split('.').next().unwrap_or(name);
    let dirs = &parts[..parts.len().saturating_sub(1)];
    if dirs.iter().any(|d| PROGRAM_DIRS.contains(d)) || PROGRAM_STEMS.contains(&stem) {
        return true;
    }
    if after.starts_with("#!") {
        return true;
    }
    match syntax {
        Syntax::Python => after.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("if __name__") && l.contains("__main__")
        }),
        Syntax::Go => after.lines().any(|l| l.trim() == "package main"),
        Syntax::Rust | Syntax::JavaScript => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_told_from_libraries() {
        let yes = [
            ("src/main.rs", "", Syntax::Rust),
            ("src/bin/tool.rs", "", Syntax::Rust),
            ("bin/cli.js", "", Syntax::JavaScript),
            ("lib/run.js", "#!/usr/bin/env node\n", Syntax::JavaScript),
            ("pkg/__main__.py", "", Syntax::Python),
            (
                "pkg/tool.py",
                "if __name__ == '__main__':\n    main()\n",
                Syntax::Python,
            ),
            ("cmd/x/x.go", "", Syntax::Go),
            ("x.go", "package main\n", Syntax::Go),
        ];
        let no = [
            ("src/lib.rs", "", Syntax::Rust),
            ("lib/index.js", "", Syntax::JavaScript),
            ("pkg/core.py", "import sys\n", Syntax::Python),
            ("x.go", "package x\n", Syntax::Go),
        ];
        let missed: Vec<_> = yes
            .iter()
            .filter(|(p, a, s)| !is_entry_point(p, a, *s))
            .collect();
        let wrong: Vec<_> = no
            .iter()
            .filter(|(p, a, s)| is_entry_point(p, a, *s))
            .collect();
        assert_eq!((missed, wrong), (vec![], vec![]));
    }
}
