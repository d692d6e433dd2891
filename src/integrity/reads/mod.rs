//! Reads of process state a change adds to non-test code, by what is read rather than how it
//! is spelled: the process's arguments, environment, executable and interpreter flags, the
//! call stack, the module registry, the thread's name, the repository as files (`.git`,
//! mtimes, symbolic links), the working directory and the parent process, the process's own
//! state as files under `/proc`, and code evaluated at run time (`eval`, `exec`,
//! `new Function`, an import by a computed name), which can hide any of them. The stack read
//! through a caught exception (`e.stack`, `__traceback__`, `sys.exc_info`, `traceback`) is
//! a stack read. Each family has its own rule id (`check.reads.argv`, ...).
//!
//! A read has legitimate uses (a CLI library reads argv), so a read is neither refused nor
//! passed silently: the round records a flagged check per family, and a proven round holding
//! one ends `fixed-flagged`, its PR saying what was read where.
//!
//! Rules are data (`families`: one tree-sitter query per family and language under
//! `queries/`), run by one matcher (`matcher`) over the syntax nodes that intersect the lines
//! a change adds. Each language's resolver (`python`, `javascript` for JavaScript and
//! TypeScript, `rust`, `go`) follows aliases within the file (imports, assignments,
//! destructuring, helper functions, the global object) and builds names from constant
//! strings, so `const {argv: a} = require("process")` and `getattr(sys, "_get" + "frame")`
//! read what `process.argv` and `sys._getframe` read. Bindings are not scoped: a name stands
//! for every value the file binds it to.

mod families;
#[cfg(test)]
mod gaps;
mod go;
#[cfg(test)]
mod honest;
mod javascript;
mod matcher;
mod python;
mod rust;
mod scope;
#[cfg(test)]
mod spellings;

pub(crate) use families::Lang;
pub use matcher::{ReadFlag, process_reads};

/// The rule id of every family, in the order flags are reported.
pub fn rules() -> impl Iterator<Item = &'static str> {
    families::FAMILIES.iter().map(|f| f.rule)
}
