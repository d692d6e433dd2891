//! Dispatch of the parsed command line to the areas that do the work.

use std::ffi::OsString;

use crate::ExitStatus;

/// Run efix with the given process arguments and return the exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitStatus {
    let _ = args.into_iter().count();
    ExitStatus::Usage
}
