//! SIGINT/SIGTERM handling: the first signal asks the run to stop (the running command is
//! terminated, the tree restored, partial evidence and a checkpoint written); a second one
//! gets the default action.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// Set by the handler; the pipeline and the runner poll it.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    CANCEL.store(true, Ordering::SeqCst);
}

/// Install the handlers for SIGINT and SIGTERM; returns whether both were installed.
pub fn install() -> bool {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        // SA_RESETHAND: a second signal terminates efix the usual way.
        SaFlags::SA_RESETHAND,
        SigSet::empty(),
    );
    [Signal::SIGINT, Signal::SIGTERM].iter().all(|signal| {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe, and it
        // replaces no handler that other code relies on (efix installs no other).
        unsafe { sigaction(*signal, &action) }.is_ok()
    })
}
