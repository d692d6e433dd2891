//! The test harness: what decides how tests run and what counts as a pass, as opposed to the
//! tests themselves and the code under test.
//!
//! That is runner configuration (`conftest.py`, `pytest.ini`, jest, vitest, mocha, ava and
//! karma configs), interpreter start-up hooks (`sitecustomize.py`, `*.pth`), build hooks
//! (`build.rs`, `.cargo/config.toml`), the test parts of shared manifests (fields of
//! `package.json`, tables of `pyproject.toml` and `setup.cfg`) and the files that define the
//! commands efix runs (`Makefile` when a command is `make ...`). A change there can turn every
//! failure into a pass without fixing anything, so the patch engine refuses it unless the user
//! allows the path (`paths.allow-harness`), and Prevent counts it as part of the test side of a
//! change.
//!
//! Pure functions of paths, contents and command strings: this module reads no file and runs
//! nothing.

mod change;
mod commands;
mod files;
mod sections;

pub use change::harness_change;
pub use commands::defining_command;
pub use files::harness_file;
pub use sections::{changed_sections, has_test_sections};
