//! Prevent: the change must carry a regression guard that is proven, not claimed. The test
//! part of the change is split from the fix and the guard decided from the recorded runs by
//! `integrity::guard`; here the test part runs without the fix (`step`) and must not make the
//! reproduction pass on its own (`harness`).

mod harness;
mod step;

pub(crate) use harness::{commands_in_play, patch_policy};
pub(crate) use step::{guard, proven_guard, run};
