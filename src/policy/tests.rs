//! Test policy: which files are tests, and whether a change deletes, skips or weakens tests.
//!
//! Pure functions of paths and file contents; the patch checks and the Prevent phase call them.
