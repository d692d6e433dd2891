//! Suites derived from the reproduction when none is configured: the same runner and options
//! without the reproduction's test filter, so a fix that breaks a neighbouring test is caught.

/// A wider suite derived from a filtered test command, when it has a filter to drop: the
/// package for `cargo test NAME`, the file for a pytest node id, the command without `-run`
/// / `-t` / `-k` for go test, jest/vitest and pytest. `None` when nothing would change.
pub(crate) fn derive(argv: &[String]) -> Option<Vec<String>> {
    let program = argv.first().map(|p| crate::policy::command::basename(p))?;
    let derived = match program {
        "cargo" if argv.get(1).map(String::as_str) == Some("test") => derive_cargo(argv),
        "pytest" => derive_pytest(argv, 1),
        "python" | "python3"
            if argv.get(1).map(String::as_str) == Some("-m")
                && argv.get(2).map(String::as_str) == Some("pytest") =>
        {
            derive_pytest(argv, 3)
        }
        "go" if argv.get(1).map(String::as_str) == Some("test") => {
            drop_options(argv, &["-run", "-test.run"], &[])
        }
        "npx" | "npm" | "jest" | "vitest" | "pnpm" | "yarn" => drop_options(
            argv,
            &["-t", "--testNamePattern", "--test-name-pattern"],
            &[],
        ),
        _ => None,
    }?;
    (derived != argv).then_some(derived)
}

/// `cargo test [options] [FILTER] [-- args]` without the filter, the harness args and target
/// selectors.
fn derive_cargo(argv: &[String]) -> Option<Vec<String>> {
    const WITH_VALUE: &[&str] = &[
        "-p",
        "--package",
        "-F",
        "--features",
        "--manifest-path",
        "--target",
        "-j",
        "--jobs",
        "--profile",
        "--target-dir",
        "--exclude",
        "--config",
        "-Z",
    ];
    const SELECTORS_WITH_VALUE: &[&str] = &["--test", "--bin", "--example", "--bench"];
    const SELECTORS: &[&str] = &[
        "--lib",
        "--bins",
        "--tests",
        "--examples",
        "--benches",
        "--doc",
    ];
    let mut out = vec![argv[0].clone(), argv[1].clone()];
    let mut i = 2;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "--" {
            break;
        }
        if WITH_VALUE.contains(&arg.as_str()) {
            out.push(arg.clone());
            if let Some(value) = argv.get(i + 1) {
                out.push(value.clone());
            }
            i += 2;
            continue;
        }
        if SELECTORS_WITH_VALUE.contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if SELECTORS.contains(&arg.as_str()) || !arg.starts_with('-') {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    Some(out)
}

/// pytest with node ids reduced to their files and `-k` expressions dropped.
fn derive_pytest(argv: &[String], first_arg: usize) -> Option<Vec<String>> {
    let mut out: Vec<String> = argv[..first_arg].to_vec();
    let mut i = first_arg;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "-k" {
            i += 2;
            continue;
        }
        if arg.starts_with("-k") && arg.len() > 2 {
            i += 1;
            continue;
        }
        let reduced = match arg.split_once("::") {
            Some((file, _)) if !arg.starts_with('-') => file.to_owned(),
            _ => arg.clone(),
        };
        if !out.contains(&reduced) || reduced.starts_with('-') {
            out.push(reduced);
        }
        i += 1;
    }
    Some(out)
}

/// The command without the given options (and their values).
fn drop_options(argv: &[String], with_value: &[&str], flags: &[&str]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        if with_value.contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if with_value.iter().any(|o| arg.starts_with(&format!("{o}=")))
            || flags.contains(&arg.as_str())
        {
            i += 1;
            continue;
        }
        out.push(arg.clone());
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn derived(text: &str) -> Option<String> {
        derive(&argv(text)).map(|a| a.join(" "))
    }

    #[test]
    fn derives_the_unfiltered_suite_from_filtered_test_commands() {
        assert_eq!(
            derived("cargo test -p parser crlf"),
            Some("cargo test -p parser".to_owned())
        );
        assert_eq!(
            derived("cargo test crlf -- --nocapture"),
            Some("cargo test".to_owned())
        );
        assert_eq!(
            derived("cargo test --test api crlf"),
            Some("cargo test".to_owned())
        );
        assert_eq!(
            derived("pytest tests/test_a.py::test_b"),
            Some("pytest tests/test_a.py".to_owned())
        );
        assert_eq!(
            derived("python -m pytest -k crlf tests"),
            Some("python -m pytest tests".to_owned())
        );
        assert_eq!(
            derived("go test -run TestX ./..."),
            Some("go test ./...".to_owned())
        );
        assert_eq!(
            derived("npx jest -t crlf src/a.test.js"),
            Some("npx jest src/a.test.js".to_owned())
        );
    }

    #[test]
    fn does_not_derive_when_nothing_is_filtered() {
        assert_eq!(derived("cargo test"), None);
        assert_eq!(derived("pytest tests/test_a.py"), None);
        assert_eq!(derived("make check"), None);
    }
}
