//! Integrity: the checks that keep a change from emptying the proof without fixing anything.
//!
//! `harness` names what decides how tests run: files a runner or an interpreter loads without
//! being imported by name, by their names and the test sections of shared manifests;
//! `discovery` finds the rest from the repository as the change leaves it (modules that shadow
//! the standard library, a runner or a dependency; setup files a runner's config names).
//! `test_detection` reads the non-test side of a change for the static families of cheats
//! (detecting the test run, patching the checker, looking at the caller, exiting early,
//! reading the tests, equality that always holds, printing result lines), each family with
//! its own rule id. Canary runs and the structured result channel live beside them. Each
//! check is data (an [`Issue`](crate::policy::Issue) with its own rule id), never an error.

pub(crate) mod discovery;
pub mod harness;
pub(crate) mod pattern;
pub mod special_case;
pub mod test_detection;
