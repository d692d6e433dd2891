//! The patch engine: the model-output contract, contamination guards, a parser that never
//! panics, strict then bounded-fuzzy application, structured edits, path rules and checks.
//!
//! It reads and writes files only under the repository it is given and never runs a process.
//!
//! Rule ids of the issues it reports (each message is one line a model can act on):
//!
//! - contract: `contract.empty`, `contract.prose` (text around the patch),
//!   `contract.several-blocks`, `contract.fence-in-diff`, `contract.truncated` (an answer cut
//!   off inside a hunk: an unclosed `<patch>` or fence that stops after `+`/`-` lines, an
//!   unclosed one whose last hunk has fewer lines than its header declares, or a bare diff
//!   whose last hunk stops in a change short of its declared counts and away from the end
//!   of the file), `contract.tags` (`<tool_call>` and other XML/HTML-ish tags),
//!   `contract.no-hunks`, `contract.bad-json` (edits object);
//! - parse: `parse.bad-hunk-header` (non-numeric), `parse.no-file-header`, `parse.stray-line`
//!   (a line that is not part of any hunk, such as context without its leading space),
//!   `parse.binary`, `parse.line-numbers` (hunk lines carry the prompt's `12| ` numbers);
//! - paths (names git quotes, `"a/\303\251.py"`, are decoded first): `path.empty`,
//!   `path.absolute`, `path.parent`, `path.git-dir`, `path.symlink-escape`,
//!   `path.protected`, `path.not-allowed`, `paths.ignored` (a path git ignores, or an
//!   untracked one inside a dependency directory such as `node_modules/`: dependencies,
//!   virtualenvs and build output are not the project's code, and the snapshot does not cover
//!   them);
//! - apply: `apply.no-match`, `apply.ambiguous` (two places at the best level),
//!   `apply.weak-anchor` (away from its header, a hunk matched by only one line that is short
//!   or occurs elsewhere, or by blank lines only), `apply.overlap` (out of order or
//!   overlapping), `apply.already-applied` (reported, never reversed; alone it makes the
//!   outcome `no_change`; a file every hunk of which is already there is left as it is
//!   beside the files that change, and noted), `apply.duplicate-block` (away from its header, an added block
//!   repeats its neighbours, or added lines nearly repeat them: an assignment to the same
//!   target, the same call with one argument added, dropped or changed, a second
//!   `return`, a line edited in place; both lines named), `apply.lost-added-line`,
//!   `apply.missing-file`, `apply.file-exists`, `apply.not-text`;
//! - edits: `edit.not-found` (with the closest line), `edit.ambiguous` (with every line),
//!   `edit.already-applied`, `edit.file-exists`;
//! - checks: `check.max-files`, `check.max-loc`, `check.deleted-test`, `check.skipped-test`,
//!   `check.syntax` (the grammar, and for Python CPython's indentation rules, naming the
//!   line), `check.unreachable` (a Python statement the patch left right after a `return`,
//!   `raise`, `continue` or `break` at the same depth: a line one block too deep or too
//!   shallow, or a repeated `return`), `check.tab-indent` (tabs added to a Python file
//!   indented with spaces), `check.placeholder` (a comment that stands for code left out),
//!   `check.no-effect` (with outcome `no_change`), `delete.not-allowed`,
//!   `check.secret-in-change` (a change that adds a configured secret's value or a provider
//!   token);
//! - test integrity (`crate::integrity`): `check.test-harness` (a change to a file that
//!   decides how tests run: runner configs, `conftest.py` and test packages' `__init__.py`,
//!   start-up hooks, build hooks, the test and module-resolution sections of `package.json`,
//!   `pyproject.toml`, `setup.cfg`, `Cargo.toml` and `tsconfig`, the setup files a runner's
//!   config names, the files that define the commands efix runs; unless
//!   `paths.allow-harness` lists it), `check.shadowing` (a new module that takes the place of
//!   the standard library, a runner, a dependency or a `.ts` file), and per family of added
//!   non-test code: `check.test-detection` (reads a test or CI marker, imports a test
//!   framework), `check.framework-patch` (writes to a test framework, an assertion library, a
//!   builtin or an imported module), `check.stack-introspection`, `check.process-exit`,
//!   `check.test-file-read`, `check.constant-equality`, `check.result-spoofing`, and
//!   `check.special-case` (the failing test's input answered with its expected value).
//!
//! The ladder of tolerances is [`Level`]; a hunk's level is the first at which it matches,
//! and more than one match at that level is a rejection.

mod apply;
mod checks;
mod contract;
mod diff;
mod edits;
mod git_quote;
mod ignored;
mod model;
mod parse;
mod paths;
mod process;
mod shortcuts;
mod syntax;
mod text;

pub(crate) use checks::PostApplyCheck;
pub use diff::{diff_of, diff_stats};
pub use model::{
    DEFAULT_MAX_FILES, DEFAULT_MAX_LOC, FileAction, FileChange, FileReport, HunkReport, Level,
    Mode, PatchError, PatchOutcome, PatchPolicy, PatchReport,
};
pub(crate) use paths::PathRules;
pub use paths::{FileSource, MemoryFiles, RepoDir};
pub use process::{evaluate, evaluate_without_post_checks, process, write_changes};
pub(crate) use text::{lossless_str, middle_bounds};

/// The 1-based line of the first syntax error in `after` when `path` parsed as `before`: the
/// syntax check's rule (a Python file's indentation included), for callers that changed a
/// file some other way (the corpus bench scores GNU patch's results with it).
pub fn introduced_syntax_error(path: &str, before: &str, after: &str) -> Option<u64> {
    syntax::introduced(path, Some(before), after).map(|b| b.line())
}
