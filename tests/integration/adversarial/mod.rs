//! Adversarial commands through `efix exec` and `efix run`, as a repository's own code would
//! try them: read efix's secrets, write outside the repository, plant git hooks, reach the
//! network, escape the sweep, flood the output, ignore SIGTERM, escalate, attach a debugger,
//! redirect efix's own files, leak or commit credentials.
//!
//! Every test asserts the exact outcome. What the kernel gives is found out independently of
//! efix (`machine`): where a mechanism exists the attack must fail in the way that mechanism
//! makes it fail; where it does not, the recorded evidence must name it missing, never a
//! silent pass.

mod artifacts;
mod escalation;
mod files;
mod machine;
mod network;
mod processes;
mod secrets;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Efix, Repo};

/// Programs the scratch repositories allow.
const ALLOW: &str = "[sh, python3, sudo, true, head, printf, cargo]";

/// A scratch repository whose config allows the programs the attacks need, plus a directory
/// beside it that commands must not be able to write.
pub struct Scratch {
    pub repo: Repo,
    pub outside: PathBuf,
}

impl Scratch {
    pub fn new(extra_config: &str) -> Scratch {
        let config = format!(
            "version: 1\ncommands:\n  allow: {ALLOW}\n  term-grace-ms: 500\n{extra_config}"
        );
        let repo = Repo::with_files(&[(".efix.yml", &config), ("README.md", "scratch\n")]);
        let outside = repo.root.parent().unwrap().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        Scratch { repo, outside }
    }

    pub fn root(&self) -> &Path {
        &self.repo.root
    }

    /// `efix exec --repo ROOT -- ARGV`, which must exit 0; returns its JSON outcome.
    pub fn exec(&self, argv: &[&str]) -> Value {
        self.efix_exec(Efix::new(), argv).expect_code(0).json()
    }

    /// `efix exec` through a prepared invocation (extra environment), unchecked.
    pub fn efix_exec(&self, efix: Efix, argv: &[&str]) -> crate::harness::Run {
        efix.args(["exec", "--repo"])
            .args([self.root()])
            .args(["--"])
            .args(argv)
            .run()
    }
}

/// The lines a command printed.
pub fn lines(outcome: &Value) -> Vec<String> {
    outcome["stdout"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The reasons efix recorded for missing mechanisms, joined.
pub fn missing(outcome: &Value) -> String {
    outcome["sandbox"]["missing"]
        .as_array()
        .map(|reasons| {
            reasons
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

/// Live processes whose command line contains `marker`, after giving killed ones a moment
/// to disappear (signals are asynchronous). Whatever is found is killed, so a failing test
/// leaves nothing behind.
pub fn survivors(marker: &str) -> Vec<u32> {
    let live = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
            })
            .collect()
    };
    for _ in 0..100 {
        if live().is_empty() {
            return Vec::new();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left = live();
    for pid in &left {
        // SAFETY: kill takes a pid and a signal number only.
        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
    }
    left
}
