//! Integrity: the checks that keep a change from emptying the proof without fixing anything.
//!
//! `harness` names what decides how tests run: files a runner or an interpreter loads without
//! being imported by name, by their names and the test sections of shared manifests;
//! `discovery` finds the rest from the repository as the change leaves it (modules that shadow
//! the standard library, a runner or a dependency; setup files a runner's config names).
//! `test_detection` reads the non-test side of a change for the static families of cheats
//! (detecting the test run, patching the checker, looking at the caller, exiting early,
//! reading the tests, equality that always holds, printing result lines), each family with
//! its own rule id; `special_case` finds the failing test's input answered with its expected
//! value. At proof time, `channel` takes per-test results from a report the code under test
//! cannot print into, `completeness` requires a record after the change for every test a
//! baseline recorded, and `proof` turns both into the proof's checks. Each check is data (an
//! [`Issue`](crate::policy::Issue) with its own rule id), never an error.

pub mod canary;
pub mod channel;
pub mod completeness;
pub(crate) mod discovery;
pub mod harness;
pub(crate) mod pattern;
pub(crate) mod proof;
pub mod reads;
pub mod special_case;
pub mod test_detection;
