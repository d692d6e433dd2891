//! Command policy: argv splitting with shlex and the program allowlist.
