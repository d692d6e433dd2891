//! Test detection: production code that games the tests, by family, each with its own rule id
//! ([`Family::rule`]): code that asks whether it runs under test (`cfg!(test)`,
//! `PYTEST_CURRENT_TEST`, `process.env.JEST_WORKER_ID`, `testing.Testing()`, CI and argv
//! probes) or imports a test framework (`check.test-detection`); that reaches into the test
//! framework, a builtin or an imported module (`require('assert').throws = ...`,
//! `unittest.TestCase.x = ...`, `time.time = ...`: `check.framework-patch`); and the families
//! of `families` (the caller's stack, exits, reads of test files, constant equality, printed
//! result lines). A fix of that kind behaves one way under the tests and another for users,
//! so whatever the tests say proves nothing.
//!
//! Only added lines count, only outside test code (test files, Rust `#[cfg(test)]` modules and
//! `#[test]` functions), and only code (comments and docstrings are not read). Reading is not
//! patching: `assert` for invariants, `NODE_ENV === 'production'` and `if __name__ ==
//! "__main__"` stay allowed.
//!
//! Pure functions of a path and its contents; recognition is by patterns per language over the
//! code of added lines (plus a Rust parse to see where a `#[cfg(test)]` attribute sits), not a
//! type checker. This departs from the wish for syntax-tree rules everywhere: the families are
//! line patterns on comment-free code, screened by the words they need.

mod added;
mod code;
mod detect;
mod families;
mod go;
mod javascript;
mod python;
mod rust;

pub use added::{Detection, Family};
pub(crate) use detect::added_lines;
pub use detect::{is_read, test_detections};
pub(crate) use rust::test_rows;
