//! Privilege: reading efix's environment through `/proc`, `sudo`, a setuid program, and the
//! same confinement for a user without root (through a user namespace).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use serde_json::{Value, json};

use super::machine::machine;
use super::{Scratch, lines};
use crate::harness::Efix;

#[test]
fn a_child_cannot_read_efix_environment() {
    let scratch = Scratch::new("");
    let canary = "canary-0f3a9c2e71";
    let run = scratch.efix_exec(
        Efix::new().env("CANARY_VALUE", canary),
        &[
            "sh",
            "-c",
            "cat /proc/$PPID/environ >/dev/null 2>&1; echo read=$?; \
             tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c CANARY_VALUE",
        ],
    );
    let outcome = run.expect_code(0).json();
    assert_eq!(
        (
            lines(&outcome),
            outcome["stdout"].as_str().unwrap().contains(canary),
            &outcome["sandbox"]["non_dumpable_parent"]
        ),
        (
            vec!["read=1".to_owned(), "0".to_owned()],
            false,
            &json!(true)
        ),
        "{outcome:#}"
    );
}

#[test]
fn sudo_gains_nothing_under_no_new_privs() {
    let scratch = Scratch::new("");
    let outcome = scratch.exec(&["sudo", "-n", "true"]);
    let flag = scratch.exec(&["sh", "-c", "grep NoNewPrivs /proc/self/status"]);
    let has_sudo = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("sudo").is_file()));
    let machine = machine();
    let stderr = outcome["stderr"].as_str().unwrap_or_default().to_owned();
    let expected = match (has_sudo, machine.root) {
        (false, _) => (json!(127), "efix: program not found: sudo\n".to_owned()),
        // Root needs no escalation; sudo has nothing to give.
        (true, true) => (json!(0), stderr.clone()),
        // sudo itself says why it cannot work.
        (true, false) => (json!(1), stderr.clone()),
    };
    assert_eq!(
        (
            (&outcome["exit_code"], stderr.clone()),
            &flag["stdout"],
            &flag["sandbox"]["no_new_privs"]
        ),
        (
            (&expected.0, expected.1),
            &json!("NoNewPrivs:\t1\n"),
            &json!(true)
        ),
        "{outcome:#}"
    );
    if has_sudo && !machine.root {
        assert!(stderr.contains("no new privileges"), "{stderr}");
    }
}

#[test]
fn a_setuid_program_runs_with_the_callers_identity() {
    let machine = machine();
    if !machine.root {
        // Only root can make a program setuid to another user; `sudo` above covers the
        // unprivileged case (no_new_privs is what both test).
        let scratch = Scratch::new("");
        let outcome = scratch.exec(&["true"]);
        assert_eq!(outcome["sandbox"]["no_new_privs"], json!(true));
        return;
    }
    let scratch = Scratch::new("");
    let program = scratch.root().join("whoami-setuid");
    std::fs::copy("/usr/bin/id", &program).unwrap();
    std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    if nosuid(scratch.root()) {
        // The setuid bit would not take effect even without efix; check the flag itself.
        let outcome = scratch.exec(&["sh", "-c", "grep NoNewPrivs /proc/self/status"]);
        assert_eq!(outcome["stdout"], json!("NoNewPrivs:\t1\n"));
        return;
    }
    let direct = std::process::Command::new(&program)
        .arg("-u")
        .output()
        .unwrap();
    let outcome = scratch.exec(&["sh", "-c", "./whoami-setuid -u"]);
    assert_eq!(
        (
            String::from_utf8_lossy(&direct.stdout).into_owned(),
            outcome["stdout"].clone()
        ),
        ("65534\n".to_owned(), json!("0\n")),
        "without efix the setuid bit takes effect; under efix it does not: {outcome:#}"
    );
}

#[test]
fn an_unprivileged_user_gets_the_same_confinement_through_a_user_namespace() {
    let machine = machine();
    let scratch = Scratch::new("");
    let repo = scratch.root().to_path_buf();
    let mut efix = std::process::Command::new(env!("CARGO_BIN_EXE_efix"));
    efix.args(["exec", "--repo"])
        .arg(&repo)
        .args([
            "--",
            "sh",
            "-c",
            "id -u; touch .git/x 2>/dev/null; echo git=$?",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &repo);
    let uid = if machine.root {
        // Give the scratch repository to nobody and run efix as nobody.
        for entry in walk(&repo) {
            std::os::unix::fs::lchown(&entry, Some(65534), Some(65534)).unwrap();
        }
        std::os::unix::fs::chown(repo.parent().unwrap(), Some(65534), Some(65534)).unwrap();
        efix.uid(65534).gid(65534);
        65534
    } else {
        // SAFETY: getuid cannot fail.
        unsafe { libc::getuid() }
    };
    // Whether this user can create namespaces, asked without efix.
    let mut probe = std::process::Command::new("unshare");
    probe.args(["--user", "--map-root-user", "--net", "--mount", "true"]);
    if machine.root {
        probe.uid(65534).gid(65534);
    }
    let user_namespaces = probe.output().is_ok_and(|o| o.status.success());
    let output = efix.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let outcome: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sandbox = &outcome["sandbox"];
    let expected_git = if user_namespaces { "git=1" } else { "git=0" };
    assert_eq!(
        (
            lines(&outcome),
            sandbox["landlock_abi"].is_u64(),
            &sandbox["seccomp"],
            sandbox["network"] == json!("namespace"),
            &sandbox["capabilities_dropped"],
        ),
        (
            vec![uid.to_string(), expected_git.to_owned()],
            machine.landlock,
            &json!(machine.seccomp),
            user_namespaces,
            &json!([]),
        ),
        "{outcome:#}"
    );
}

fn nosuid(path: &std::path::Path) -> bool {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs is plain old data; zeroes are a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    let ok = unsafe { libc::statvfs(path.as_ptr(), &mut stat) } == 0;
    ok && stat.f_flag & libc::ST_NOSUID != 0
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if std::fs::symlink_metadata(&path).unwrap().is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
