//! The regression guard of Prevent, decided from recorded runs (pure: nothing runs here):
//! the change is split into its test part and its fix (`split`), and the guard that held —
//! changed tests that fail without the fix and pass with it, or the reproduction's own
//! failing tests passing after it — is read from the runs (`decide`). The pipeline's Prevent
//! step runs the commands and records the checks.

mod decide;
mod split;

pub(crate) use decide::{decide, reported_with, status_in_scope};
pub(crate) use split::{Split, split};
