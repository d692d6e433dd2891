//! Integrity: every check that keeps a change from emptying the proof without fixing anything,
//! in one folder.
//!
//! Before anything runs, on the change itself: `test_policy` says which files are tests and
//! whether a change deletes, skips or weakens them; `harness` names what decides how tests
//! run (files a runner or an interpreter loads without being imported by name, and the test
//! sections of shared manifests); `discovery` finds the rest from the repository as the change
//! leaves it (modules that shadow the standard library, a runner or a dependency; setup files
//! a runner's config names); `test_detection` reads the non-test side of a change for the
//! static families of cheats (detecting the test run, patching the checker, looking at the
//! caller, exiting early, reading the tests, equality that always holds, printing result
//! lines), each with its own rule id; `special_case` finds the failing test's input answered
//! with its expected value; `checks` runs them as the patch engine's plug-ins, so `efix patch`
//! refuses what `efix run` refuses.
//!
//! From the recorded runs: `guard` splits the test part from the fix and decides which
//! regression guard held; `channel` takes per-test results from a report the code under test
//! cannot print into; `completeness` requires a record after the change for every test a
//! baseline recorded; `proof` turns both into the proof's checks; `canary` builds and judges
//! the canaries that run beside the failing tests once the change passed.
//!
//! Each check is data (an [`Issue`](crate::policy::Issue) with its own rule id, or a
//! [`CheckRecord`](crate::evidence::CheckRecord) that may weaken the claim), never an error.
//! Closed by default: a check that could not be built or judged never passes silently.

pub mod canary;
pub mod channel;
pub(crate) mod checks;
pub mod completeness;
pub(crate) mod discovery;
pub(crate) mod guard;
pub mod harness;
pub(crate) mod pattern;
pub(crate) mod proof;
pub mod reads;
pub mod special_case;
pub mod test_detection;
pub mod test_policy;
