//! Files that define a command efix runs: the `Makefile` of `make test`, the `justfile` of
//! `just test`, the `noxfile.py` of `nox`, the `Taskfile.yml` of `task test`, and a script run
//! by path (`./run-tests.sh`, `bash scripts/test.sh`). A patch that changes one could point the
//! command at a new passing test and never run the failing one.
//!
//! Commands run at the repository root, so their paths are repository-relative.

use crate::policy::command::{SHELLS, basename, split};

/// Default makefile names, in GNU make's search order.
const MAKEFILES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];
/// Default Taskfile names (go-task).
const TASKFILES: &[&str] = &[
    "Taskfile.yml",
    "taskfile.yml",
    "Taskfile.yaml",
    "taskfile.yaml",
    "Taskfile.dist.yml",
    "taskfile.dist.yml",
    "Taskfile.dist.yaml",
    "taskfile.dist.yaml",
];

/// The first of `commands` whose definition lives in `path`.
pub fn defining_command<'a>(path: &str, commands: &'a [String]) -> Option<&'a str> {
    commands
        .iter()
        .find(|command| split(command).is_ok_and(|argv| defines(path, &argv)))
        .map(String::as_str)
}

/// Whether `path` defines the command `argv`.
fn defines(path: &str, argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let args = &argv[1..];
    if program.contains('/') && !program.starts_with('/') && normalize(program) == path {
        return true;
    }
    let name = basename(program);
    match name {
        "make" | "gmake" | "bmake" => {
            let dir = flag(args, &["-C", "--directory"]).unwrap_or_default();
            let in_dir = |file: &str| join(&dir, file) == path;
            match flag(args, &["-f", "--file", "--makefile"]) {
                Some(file) => in_dir(&file),
                // Makefiles include others, by convention named `*.mk`.
                None => {
                    MAKEFILES.iter().any(|f| in_dir(f))
                        || (path.ends_with(".mk") && under(&dir, path))
                }
            }
        }
        "just" => {
            let dir = flag(args, &["-d", "--working-directory"]).unwrap_or_default();
            match flag(args, &["-f", "--justfile"]) {
                Some(file) => join(&dir, &file) == path,
                None => {
                    let file = path.rsplit('/').next().unwrap_or(path);
                    (file.eq_ignore_ascii_case("justfile") || file == ".justfile")
                        && join(&dir, file) == path
                }
            }
        }
        "task" | "go-task" => {
            let dir = flag(args, &["-d", "--dir"]).unwrap_or_default();
            match flag(args, &["-t", "--taskfile"]) {
                Some(file) => join(&dir, &file) == path,
                None => TASKFILES.iter().any(|f| join(&dir, f) == path),
            }
        }
        "nox" => nox(args, path),
        "tox" => flag(args, &["-c", "--conf"]).is_some_and(|file| normalize(&file) == path),
        "python" | "python3" => {
            args.windows(2).any(|w| w[0] == "-m" && w[1] == "nox") && nox(args, path)
        }
        _ if SHELLS.contains(&name) => {
            // `bash -c '...'` runs a string, not a file; otherwise the first operand is the
            // script.
            !args.iter().any(|a| a == "-c")
                && args
                    .iter()
                    .find(|a| !a.starts_with('-'))
                    .is_some_and(|script| normalize(script) == path)
        }
        _ => false,
    }
}

fn nox(args: &[String], path: &str) -> bool {
    let file = flag(args, &["-f", "--noxfile"]).unwrap_or_else(|| "noxfile.py".to_owned());
    normalize(&file) == path
}

/// The value of the first of `names` in `args`, written `-f value`, `-fvalue` (short flags)
/// or `--flag=value`.
fn flag(args: &[String], names: &[&str]) -> Option<String> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        for name in names {
            if arg == name {
                return iter.next().cloned();
            }
            if let Some(value) = arg.strip_prefix(&format!("{name}=")) {
                return Some(value.to_owned());
            }
            if !name.starts_with("--")
                && let Some(value) = arg.strip_prefix(name)
                && !value.is_empty()
            {
                return Some(value.to_owned());
            }
        }
    }
    None
}

/// A relative path without `./` and doubled or trailing slashes.
fn normalize(path: &str) -> String {
    path.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn join(dir: &str, file: &str) -> String {
    normalize(&format!("{dir}/{file}"))
}

fn under(dir: &str, path: &str) -> bool {
    let dir = normalize(dir);
    dir.is_empty() || path.starts_with(&format!("{dir}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defined(path: &str, command: &str) -> bool {
        defining_command(path, &[command.to_owned()]).is_some()
    }

    #[test]
    fn the_files_behind_make_just_task_nox_and_scripts_are_found() {
        let yes = [
            ("Makefile", "make test"),
            ("GNUmakefile", "make -j4 check"),
            ("sub/Makefile", "make -C sub test"),
            ("sub/Makefile", "make --directory=sub test"),
            ("build/test.mk", "make test"),
            ("ci.make", "make -f ci.make"),
            ("justfile", "just test"),
            ("Justfile", "just test"),
            ("Taskfile.yml", "task test"),
            ("noxfile.py", "nox -s tests"),
            ("noxfile.py", "python3 -m nox -s tests"),
            ("run-tests.sh", "./run-tests.sh -v"),
            ("scripts/test.sh", "bash scripts/test.sh"),
        ];
        let no = [
            ("Makefile", "cargo test"),
            ("sub/Makefile", "make test"),
            ("justfile", "make test"),
            ("noxfile.py", "pytest"),
            ("scripts/test.sh", "bash -c 'scripts/test.sh'"),
            ("tests/test_a.py", "pytest tests/test_a.py"),
            ("test/a.js", "node test/a.js"),
        ];
        let missed: Vec<_> = yes.iter().filter(|(p, c)| !defined(p, c)).collect();
        let wrong: Vec<_> = no.iter().filter(|(p, c)| defined(p, c)).collect();
        assert_eq!((missed, wrong), (vec![], vec![]));
    }
}
