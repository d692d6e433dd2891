//! Canary runs in the same session: once the whole change passes the proof, the
//! reproduction's failing tests run again beside canaries that efix writes into a scratch
//! copy of the repository, and each canary must behave as it does under an honest fix:
//!
//! - an always-failing test beside the target (same file, module, invocation) is reported
//!   failed with its own record, and the run's exit code says failure: a patched runner or
//!   assertion library, an early exit or printed result lines cannot hide it;
//! - the target copied under a new name into a new file, its lines moved, passes: code that
//!   answers by the caller's name, file or source line, or reads the test file, does not;
//! - the target run again in the same process, and alone in its own invocation, passes each
//!   time: call-count toggles and order tricks do not;
//! - a copy whose expected literal is changed fails: values that equal everything do not.
//!
//! Why this shape:
//! - The scratch copy (`scratch`) holds every file git does not ignore, with the change, so
//!   the user's tree is only read and a failed run leaves it as it was; ignored dependency
//!   directories are linked, build output is not (a cargo build in the copy uses the copy's
//!   own `target/`, so the crate and its dependencies are compiled once per proof there).
//! - Sources are edited with tree-sitter (`source`), per language, so a test is copied
//!   whole; tests whose source is not a plain function (parametrized, generated, doctests)
//!   get a reason in the evidence instead of a canary.
//! - Commands are the reproduction's own argv (`runner`), with its test selection replaced
//!   and per-test output turned on, and they run through the same sandboxed runner as every
//!   other command, recorded in the evidence with their own purpose.
//! - Canary names are derived from a digest of the change: they differ between changes and
//!   carry no fixed marker, so code under test cannot single them out by name.
//! - Verdicts are read per test from the runner's report (`judge`); a canary with no record of
//!   its own fails its check.
//!
//! What it does not do: run canaries for a reproduction that is not a runner invocation
//! efix recognises (`npm test`, `make test`), or for more than [`plan::MAX_TARGETS`] failing
//! tests; the evidence says so.

mod judge;
mod names;
mod plan;
mod runner;
mod source;

pub(crate) use judge::{judge, not_applicable, not_built};
pub(crate) use plan::plan;
