//! Prevent: the change must carry a regression guard that is proven, not claimed. The test
//! part of the change is split from the fix (`split`), run without the fix (`step`), must not
//! make the reproduction pass on its own (`harness`), and the guard is decided from the
//! recorded runs (`guard`).

mod guard;
mod harness;
mod split;
mod step;

pub(crate) use harness::{commands_in_play, patch_policy};
pub(crate) use split::split;
pub(crate) use step::{guard, proven_guard, run};
