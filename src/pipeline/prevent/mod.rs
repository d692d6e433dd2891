//! Prevent: the change must carry a regression guard that is proven, not claimed. The test
//! part of the change is split from the fix (`split`), run without the fix (`step`), and the
//! guard is decided from the recorded runs (`guard`).

mod guard;
mod split;
mod step;

pub(crate) use split::split;
pub(crate) use step::{guard, proven_guard, run};
