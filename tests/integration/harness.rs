//! A small fluent harness around the built `efix` binary, plus scratch repositories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Variables passed from the test process to `efix`: where the toolchains live, nothing
/// that changes their output.
const KEPT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
];

/// The pytest the Python end-to-end tests use, pinned to one major version.
const PYTEST_REQUIREMENT: &str = "pytest>=8,<9";

/// The `bin` directory of a virtual environment with pytest, under the target directory.
///
/// Made once per target directory and reused: tests in this process share it through a
/// `OnceLock`, and test processes running side by side (nextest) take a file lock while one of
/// them checks or builds it. The machine needs python3 with `venv` and pip access to PyPI; anything
/// missing fails the test with a message that says what to install.
pub fn python_tools() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| venv("pytest-venv", PYTEST_REQUIREMENT, "pytest"))
        .clone()
}

/// The Django the Django end-to-end tests use, pinned to one minor version.
const DJANGO_REQUIREMENT: &str = "Django>=5.1,<5.2";

/// The `bin` directory of a virtual environment with Django (its `python` runs a project's
/// `runtests.py`), made once per target directory like [`python_tools`].
pub fn django_tools() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| venv("django-venv", DJANGO_REQUIREMENT, "django-admin"))
        .clone()
}

/// The ACP Python SDK the real-peer tests' agent is written on, pinned.
const ACP_SDK_REQUIREMENT: &str = "agent-client-protocol==0.12.1";

/// The python of a virtual environment with the official ACP Python SDK, made once per
/// target directory like [`python_tools`].
pub fn acp_python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| venv("acp-venv", ACP_SDK_REQUIREMENT, "python").join("python"))
        .clone()
}

/// The `bin` directory of the venv `name` under the target directory, with `requirement`
/// installed and `program` runnable; built under a file lock when missing or half-built.
fn venv(name: &str, requirement: &str, program: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let venv = base.join(name);
    let bin = venv.join("bin");
    std::fs::create_dir_all(base).unwrap();
    let lock = std::fs::File::create(base.join(format!("{name}.lock"))).unwrap();
    let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, err)| err)
        .unwrap();
    if !is_ready(&venv, program) {
        build_venv(&venv, requirement);
    }
    bin
}

/// Whether the venv is complete: built to the end (its marker written last) and runnable.
fn is_ready(venv: &Path, program: &str) -> bool {
    venv.join(VENV_READY).is_file()
        && Command::new(venv.join("bin").join(program))
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
}

/// Marker written after the requirement is installed, so a venv left half-built by a killed test run
/// is rebuilt instead of trusted. (A venv cannot be built elsewhere and moved: its scripts
/// name its own path.)
const VENV_READY: &str = "efix-tests-ready";

fn build_venv(venv: &Path, requirement: &str) {
    let python = which("python3").unwrap_or_else(|| {
        panic!(
            "the Python end-to-end tests need python3 on PATH (with the venv module and pip): \
             install python3 (Debian: apt-get install python3 python3-venv), then run cargo \
             test again"
        )
    });
    let _ = std::fs::remove_dir_all(venv);
    let created = Command::new(&python)
        .args(["-m", "venv"])
        .arg(venv)
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "`python3 -m venv {}` failed; install the venv module (Debian: apt-get install \
         python3-venv):\n{}",
        venv.display(),
        String::from_utf8_lossy(&created.stderr)
    );
    let installed = Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ])
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "installing {requirement} into the test venv {} failed (pip needs access to PyPI):\n{}",
        venv.display(),
        String::from_utf8_lossy(&installed.stderr)
    );
    std::fs::write(venv.join(VENV_READY), requirement).unwrap();
}

/// The mocha the JavaScript end-to-end tests use, pinned to one version.
pub const MOCHA: &str = "mocha@10.8.2";

/// A directory whose `node_modules/` holds the npm package `spec` (pinned, e.g. [`MOCHA`]),
/// under the target directory.
///
/// Made once per target directory and spec, like [`python_tools`]: tests in this process
/// share it, and test processes running side by side take a file lock while one of them
/// checks or installs it. The machine needs node and npm with access to the npm registry;
/// anything missing fails the test with a message that says what to install.
pub fn npm_tools(spec: &str) -> PathBuf {
    static DIRS: std::sync::Mutex<BTreeMap<String, PathBuf>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut dirs = DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(dir) = dirs.get(spec) {
        return dir.clone();
    }
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let name: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let dir = base.join(format!("npm-{name}"));
    std::fs::create_dir_all(base).unwrap();
    let lock = std::fs::File::create(base.join(format!("npm-{name}.lock"))).unwrap();
    let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, err)| err)
        .unwrap();
    if !dir.join(NPM_READY).is_file() {
        npm_install(&dir, spec);
    }
    dirs.insert(spec.to_owned(), dir.clone());
    dir
}

/// Marker written after the install finished, so a half-done install is redone.
const NPM_READY: &str = "efix-tests-ready";

fn npm_install(dir: &Path, spec: &str) {
    let npm = which("npm").unwrap_or_else(|| {
        panic!(
            "the JavaScript end-to-end tests need node and npm on PATH: install Node.js with \
             npm (Debian: apt-get install nodejs npm), then run cargo test again"
        )
    });
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
    let installed = Command::new(npm)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-package-lock",
            "--prefix",
        ])
        .arg(dir)
        .arg(spec)
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "`npm install {spec}` into {} failed (npm needs access to the npm registry):\n{}",
        dir.display(),
        String::from_utf8_lossy(&installed.stderr)
    );
    std::fs::write(dir.join(NPM_READY), spec).unwrap();
}

/// Copy the directory `from` to `to`, keeping symlinks as symlinks (`node_modules/.bin`).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_dir(&source, &target);
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// One invocation of the built binary.
pub struct Efix {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Efix {
    /// The built binary with an environment that does not depend on the caller's: only the
    /// variables a toolchain needs to find itself are kept, so `CARGO_TARGET_DIR`,
    /// `RUST_BACKTRACE`, the locale, colour settings, `CI` and every `EFIX_*` variable of the
    /// shell that runs `cargo test` cannot change what a test sees.
    pub fn new() -> Efix {
        let mut command = Command::new(env!("CARGO_BIN_EXE_efix"));
        command.env_clear();
        for name in KEPT_ENV {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        Efix {
            command,
            stdin: None,
        }
    }

    /// Put a virtual environment with pytest first on PATH (created once per target
    /// directory; see [`python_tools`]).
    pub fn with_pytest(self) -> Efix {
        self.with_first_on_path(python_tools())
    }

    /// Put a virtual environment with Django first on PATH (see [`django_tools`]).
    pub fn with_django(self) -> Efix {
        self.with_first_on_path(django_tools())
    }

    fn with_first_on_path(mut self, bin: PathBuf) -> Efix {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path));
        self.command
            .env("PATH", std::env::join_paths(dirs).unwrap());
        self
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

/// The engine calls an evidence records, as (kind, reused from a checkpoint).
pub fn engine_calls(evidence: &serde_json::Value) -> Vec<(&str, bool)> {
    evidence["engine"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap(), c["reused"].as_bool().unwrap()))
        .collect()
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
        // Wherever the scratch crate's target directory is, a test binary reads the same.
        (
            r"Running (unittests )?(\S+) \([^()\s]*/deps/([A-Za-z0-9_]+)-[0-9a-f]+\)",
            "Running $1$2 (target/debug/deps/$3-[HASH])",
        ),
        (r"kvconf-[0-9a-f]{16}", "kvconf-[HASH]"),
        // What the sandbox achieved depends on the machine's kernel; the adversarial tests
        // assert it exactly, the snapshots pin the layout.
        (
            r"(?m)^\| (\d+(?:, \d+)*) \| ([^|]+) \| (?:none|process-group|process|filesystem|full) \| (?:ABI \d+|none) \| (?:on|off) \| [^|]+ \| (?:read-only|writable) \| (\d+) \|$",
            "| $1 | $2 | [TIER] | [LANDLOCK] | [SECCOMP] | [NETWORK] | [GIT] | $3 |",
        ),
        (
            r"Sandbox: weakest tier [a-z-]+ ",
            "Sandbox: weakest tier [TIER] ",
        ),
        (r"(?m)^- missing: .*\n", ""),
        (r"rustc/[0-9a-f]+/", "rustc/[HASH]/"),
        // Cargo waits for a lock another test's cargo holds, or does not.
        (r"(?m)^\s*Blocking waiting for file lock on [^\n]*\n", ""),
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
