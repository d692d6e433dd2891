//! The families as data: each has a rule id, what it reads in words, and one tree-sitter
//! query per language (`queries/<language>/<family>.scm`, compiled in). A query captures the
//! read as `@read` and names what it must stand for with two predicates the matcher
//! evaluates: `#reads? @read "path" ...` (any path the capture can stand for, aliases
//! followed; `*x` matches any path ending in `x`) and `#git-path? @read` (a string, spelled
//! or built from constants, with a `.git` path segment).

use std::sync::OnceLock;

use tree_sitter::{Language, Query};

/// One family of reads.
#[derive(Debug)]
pub(crate) struct Family {
    /// The rule id in the evidence and the PR.
    pub rule: &'static str,
    /// What the family reads, as the end of "reads `expr` (...)".
    pub what: &'static str,
    /// The query source per language, in [`Lang::QUERY_SETS`] order.
    sources: [&'static str; 4],
}

macro_rules! family {
    ($rule:literal, $what:literal, $file:literal) => {
        Family {
            rule: $rule,
            what: $what,
            sources: [
                include_str!(concat!("queries/python/", $file, ".scm")),
                include_str!(concat!("queries/javascript/", $file, ".scm")),
                include_str!(concat!("queries/rust/", $file, ".scm")),
                include_str!(concat!("queries/go/", $file, ".scm")),
            ],
        }
    };
}

/// Every family, in the order flags are reported.
pub(crate) static FAMILIES: [Family; 11] = [
    family!(
        "check.reads.argv",
        "the process's command-line arguments",
        "argv"
    ),
    family!(
        "check.reads.environment",
        "the process's environment variables",
        "environment"
    ),
    family!(
        "check.reads.exec",
        "how the process was started: the interpreter's arguments or the executable's path",
        "exec"
    ),
    family!(
        "check.reads.stack",
        "the call stack: frames, tracebacks or the caller's location",
        "stack"
    ),
    family!(
        "check.reads.modules",
        "the module registry: which modules are loaded, or the main one",
        "modules"
    ),
    family!(
        "check.reads.thread",
        "the current thread's name or identity",
        "thread"
    ),
    family!(
        "check.reads.repository",
        "the repository as files: `.git`, modification times or symbolic links",
        "repository"
    ),
    family!("check.reads.cwd", "the working directory", "cwd"),
    family!("check.reads.parent", "the parent process", "parent"),
    family!(
        "check.reads.proc",
        "the process's own state as files under `/proc` (its command line, environment or parent)",
        "proc"
    ),
    family!(
        "check.reads.eval",
        "code evaluated at run time (`eval`, `exec`, `new Function`, a module imported by a computed name), which can hold any read out of the syntax tree's sight",
        "eval"
    ),
];

/// A language the families read, by the grammar that parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Rust,
    Go,
}

impl Lang {
    const ALL: [Lang; 6] = [
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Rust,
        Lang::Go,
    ];

    /// The language of a file by its extension.
    pub(crate) fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        Some(match ext {
            "py" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "rs" => Lang::Rust,
            "go" => Lang::Go,
            _ => return None,
        })
    }

    pub(crate) fn grammar(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Which of a family's query sources this language reads: TypeScript's grammar extends
    /// JavaScript's, so both read the JavaScript queries.
    fn query_set(self) -> usize {
        match self {
            Lang::Python => 0,
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => 1,
            Lang::Rust => 2,
            Lang::Go => 3,
        }
    }

    fn index(self) -> usize {
        Lang::ALL.iter().position(|l| *l == self).unwrap_or(0)
    }
}

/// Every family's query, compiled once per language; a query that does not compile is
/// `Err` with the reason (a unit test keeps them all compiling).
type Compiled = Vec<Result<Query, String>>;

/// Compiled on first use, one language at a time (compiling every grammar's queries costs
/// more than reading a change).
static QUERIES: [OnceLock<Compiled>; 6] = [const { OnceLock::new() }; 6];

/// The compiled queries of `lang`, one per family in [`FAMILIES`] order.
pub(crate) fn queries(lang: Lang) -> &'static [Result<Query, String>] {
    QUERIES[lang.index()].get_or_init(|| {
        let grammar = lang.grammar();
        FAMILIES
            .iter()
            .map(|family| {
                Query::new(&grammar, family.sources[lang.query_set()])
                    .map_err(|e| format!("{} ({lang:?}): {e}", family.rule))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_for_every_language() {
        let errors: Vec<&String> = Lang::ALL
            .iter()
            .flat_map(|lang| queries(*lang))
            .filter_map(|q| q.as_ref().err())
            .collect();
        assert_eq!(errors, Vec::<&String>::new());
    }
}
