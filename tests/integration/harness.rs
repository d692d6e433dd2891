//! A small fluent harness around the built `efix` binary, plus scratch repositories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// One invocation of the built binary.
pub struct Efix {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Efix {
    pub fn new() -> Efix {
        let mut command = Command::new(env!("CARGO_BIN_EXE_efix"));
        command.env_remove("GITHUB_ACTIONS").env_remove("EFIX_LOG");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("EFIX_") {
                command.env_remove(name);
            }
        }
        Efix {
            command,
            stdin: None,
        }
    }

    /// `efix run --repro CMD --engine replay --replay FILE --repo ROOT --artifacts
    /// ROOT/../artifacts`.
    pub fn replay_run(repo: &Repo, repro: &str, replay: &Path) -> Efix {
        let artifacts = repo.root.parent().unwrap().join("artifacts");
        Efix::new()
            .args(["run", "--repro", repro, "--engine", "replay", "--replay"])
            .args([replay])
            .args(["--repo"])
            .args([&repo.root])
            .args(["--artifacts"])
            .args([&artifacts])
    }

    pub fn args<I, S>(mut self, args: I) -> Efix
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Efix {
        self.command.current_dir(dir);
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Efix {
        self.command.env(name, value);
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Efix {
        self.stdin = Some(bytes.into());
        self
    }

    /// Start without waiting.
    pub fn spawn(mut self) -> std::process::Child {
        self.command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self.command.spawn().unwrap()
    }

    pub fn run(mut self) -> Run {
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        self.command.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = self.command.spawn().unwrap();
        if let Some(bytes) = self.stdin.take() {
            use std::io::Write;
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(&bytes).unwrap();
        }
        Run(child.wait_with_output().unwrap())
    }
}

/// What a finished invocation produced.
pub struct Run(pub Output);

impl Run {
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.0.stdout).unwrap_or_else(|err| {
            panic!(
                "stdout is not JSON ({err}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
    }

    /// Assert the exit code, showing both streams when it differs.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code(),
            code,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

/// A scratch git repository with one commit.
pub struct Repo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Repo {
    pub fn with_files(files: &[(&str, &str)]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
        let repo = efix::git::init_with_files(&dir.path().join("repo"), &bytes, "initial").unwrap();
        Repo {
            root: repo.root,
            _dir: dir,
        }
    }

    /// The demo crate (`examples/demo`): a real CRLF bug with a failing test.
    pub fn demo() -> Repo {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
        let files: Vec<(String, String)> = [
            ".gitignore",
            "Cargo.lock",
            "Cargo.toml",
            "README.md",
            "src/lib.rs",
        ]
        .iter()
        .map(|p| {
            (
                p.to_string(),
                std::fs::read_to_string(base.join(p)).unwrap(),
            )
        })
        .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        Repo::with_files(&refs)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// sha256 of every tracked and untracked-not-ignored file.
    pub fn fingerprint(&self) -> BTreeMap<String, String> {
        efix::git::tree_fingerprint(&self.root).unwrap()
    }
}

/// Write a replay file into a fresh temp dir and return (dir guard, path).
pub fn replay_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.yml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Replace volatile parts (durations, times, hashes, temp paths) so snapshots are stable.
pub fn stable(text: &str, paths: &[&Path]) -> String {
    let mut out = text.to_owned();
    for path in paths {
        out = out.replace(&path.display().to_string(), "[PATH]");
    }
    let rules = [
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[TIME]"),
        (r"\b[0-9a-f]{40}\b", "[COMMIT]"),
        (r"\b\d+(\.\d+)? (ms|s)\b", "[DURATION]"),
        (r"in \d+\.\d+s\b", "in [DURATION]"),
        (r"' \(\d+\) panicked", "' ([TID]) panicked"),
        (
            r"\(\d+ variables passed through\)",
            "([N] variables passed through)",
        ),
        (r"\d+ bytes", "[N] bytes"),
        (r"/tmp/[A-Za-z0-9._/-]+", "[TMP]"),
        (
            r"Running unittests src/lib.rs \(target/debug/deps/kvconf-[0-9a-f]+\)",
            "Running unittests src/lib.rs (target/debug/deps/kvconf-[HASH])",
        ),
        (r"kvconf-[0-9a-f]{16}", "kvconf-[HASH]"),
        // What the sandbox achieved depends on the machine's kernel; the adversarial tests
        // assert it exactly, the snapshots pin the layout.
        (
            r"(?m)^\| (\d+) \| ([^|]+) \| (?:none|process-group|process|filesystem|full) \| (?:ABI \d+|none) \| (?:on|off) \| [^|]+ \| (?:read-only|writable) \| (\d+) \|$",
            "| $1 | $2 | [TIER] | [LANDLOCK] | [SECCOMP] | [NETWORK] | [GIT] | $3 |",
        ),
        (
            r"Weakest tier achieved: \*\*[a-z-]+\*\*",
            "Weakest tier achieved: **[TIER]**",
        ),
        (r"(?m)^- missing: .*\n", ""),
        (r"rustc/[0-9a-f]+/", "rustc/[HASH]/"),
    ];
    for (pattern, replacement) in rules {
        out = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&out, replacement)
            .into_owned();
    }
    sort_test_lines(&out)
}

/// Parallel test runners print results in completion order; sort each run of result lines.
fn sort_test_lines(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let is_result =
        |l: &str| l.starts_with("test ") && (l.ends_with(" ok") || l.ends_with(" FAILED"));
    for line in text.split('\n') {
        if is_result(line) {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        out.extend(run.drain(..).map(str::to_owned));
        out.push(line.to_owned());
    }
    run.sort_unstable();
    out.extend(run.drain(..).map(str::to_owned));
    out.join("\n")
}
