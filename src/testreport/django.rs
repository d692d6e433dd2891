//! Django's test runners read from argv: `python manage.py test`, `django-admin test` and a
//! project's `runtests.py` (Django's own `tests/runtests.py`). They are unittest underneath:
//! their `-v 2` output is unittest's (`unittest.rs` parses it), a test is named by its dotted
//! label, and a label is a module path relative to the directory the runner puts on
//! `sys.path`, the script's own directory (`tests/` for `tests/runtests.py`).
//!
//! This module only reads argv; the suite forms, canary commands and per-test reruns are built
//! from what it finds by their own modules.

/// A Django runner invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Django {
    /// Where the runner's own arguments start (after `manage.py test`, `runtests.py`).
    pub first_arg: usize,
    /// The directory test labels are relative to, relative to the working directory: the
    /// script's directory without a trailing slash; empty for the working directory itself.
    pub base: String,
}

/// Options that take a value.
pub(crate) const VALUED: &[&str] = &[
    "-v",
    "--verbosity",
    "--settings",
    "--pythonpath",
    "--testrunner",
    "-t",
    "--top-level-directory",
    "-p",
    "--pattern",
    "--tag",
    "--exclude-tag",
    "-k",
    "--bisect",
    "--pair",
    "--selenium",
    "--selenium-hub",
    "--external-host",
    "--start-after",
    "--start-at",
    "--durations",
];

/// Options whose value is optional: taken when the next argument is a number or `auto`.
const OPTIONAL_VALUE: &[&str] = &["--parallel", "--shuffle"];

/// Options that select tests or change which run the runner makes (bisecting, pairing,
/// starting part way): a suite form drops them with their values.
pub(crate) const SELECTORS: &[&str] = &[
    "-k",
    "--tag",
    "--start-after",
    "--start-at",
    "--bisect",
    "--pair",
    "--failfast",
];

/// Read `argv` as a Django runner invocation; `None` for any other command.
///
/// `runtests.py` is a name many projects give a script of their own; callers that act on the
/// runner's output check that it is unittest's.
pub(crate) fn recognise(argv: &[String]) -> Option<Django> {
    let program = crate::policy::command::basename(argv.first()?);
    if program == "django-admin" {
        return (argv.get(1).map(String::as_str) == Some("test")).then(|| Django {
            first_arg: 2,
            base: String::new(),
        });
    }
    let script_at = if is_python(program) {
        python_script(argv)?
    } else {
        0
    };
    let script = argv.get(script_at)?;
    let (dir, name) = match script.rsplit_once('/') {
        Some((dir, name)) => (dir.trim_start_matches("./").trim_end_matches('/'), name),
        None => ("", script.as_str()),
    };
    let dir = if dir == "." { "" } else { dir };
    let first_arg = match name {
        "runtests.py" => script_at + 1,
        "manage.py" if argv.get(script_at + 1).map(String::as_str) == Some("test") => script_at + 2,
        _ => return None,
    };
    Some(Django {
        first_arg,
        base: dir.to_owned(),
    })
}

/// [`recognise`], with a `runtests.py` counted as Django's only when the script at `cwd`
/// mentions Django: a project's own `runtests.py` takes its own arguments (Django's `-v 2`
/// would be read as a label there).
pub(crate) fn recognise_in(argv: &[String], cwd: &std::path::Path) -> Option<Django> {
    let django = recognise(argv)?;
    let script = argv[..django.first_arg].last()?;
    if crate::policy::command::basename(script) != "runtests.py" {
        return Some(django);
    }
    let text = std::fs::read(cwd.join(script)).ok()?;
    let text = String::from_utf8_lossy(&text).to_ascii_lowercase();
    text.contains("django").then_some(django)
}

/// `python`, `python3`, `python3.12`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The position of the script after the interpreter's own options (`python -W error x.py`);
/// `None` for `python -m ...` and `python -c ...`.
fn python_script(argv: &[String]) -> Option<usize> {
    let mut at = 1;
    while let Some(arg) = argv.get(at) {
        match arg.as_str() {
            "-m" | "-c" => return None,
            "-W" | "-X" => at += 2,
            flag if flag.starts_with('-') => at += 1,
            _ => return Some(at),
        }
    }
    None
}

/// The runner's arguments split into options (with their values, in order) and test labels.
pub(crate) fn options_and_labels(django: &Django, argv: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut options, mut labels) = (Vec::new(), Vec::new());
    let mut at = django.first_arg;
    while let Some(arg) = argv.get(at) {
        at += 1;
        if !arg.starts_with('-') {
            labels.push(arg.clone());
            continue;
        }
        options.push(arg.clone());
        if arg.contains('=') {
            continue;
        }
        let value = argv.get(at);
        let takes = VALUED.contains(&arg.as_str())
            || (OPTIONAL_VALUE.contains(&arg.as_str())
                && value.is_some_and(|v| v == "auto" || v.parse::<u64>().is_ok()));
        if takes && let Some(value) = value {
            options.push(value.clone());
            at += 1;
        }
    }
    (options, labels)
}

/// `options` without the flags in `drop` and their values (`-k x`, `-k=x`, `--parallel 4`).
pub(crate) fn without(options: &[String], drop: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(arg) = options.get(at) {
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        let value_follows = name == arg
            && options.get(at + 1).is_some_and(|next| {
                VALUED.contains(&name)
                    || (OPTIONAL_VALUE.contains(&name)
                        && (next == "auto" || next.parse::<u64>().is_ok()))
            });
        let step = if value_follows { 2 } else { 1 };
        if !drop.contains(&name) {
            out.extend(options[at..at + step].iter().cloned());
        }
        at += step;
    }
    out
}

/// The verbosity the options ask for (`-v 2`, `--verbosity=3`); Django's default is 1.
pub(crate) fn verbosity(options: &[String]) -> u32 {
    let mut level = 1;
    let mut iter = options.iter();
    while let Some(arg) = iter.next() {
        let value = match arg.split_once('=') {
            Some(("-v" | "--verbosity", value)) => Some(value.to_owned()),
            None if arg == "-v" || arg == "--verbosity" => iter.next().cloned(),
            None if arg.starts_with("-v") && arg.len() > 2 => Some(arg[2..].to_owned()),
            _ => None,
        };
        if let Some(value) = value.and_then(|v| v.parse().ok()) {
            level = value;
        }
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn each_spelling_of_a_django_runner_is_recognised_with_its_label_directory() {
        let found = |text: &str| recognise(&argv(text)).map(|d| (d.first_arg, d.base));
        assert_eq!(
            found("python tests/runtests.py auth_tests"),
            Some((2, "tests".to_owned()))
        );
        assert_eq!(
            found("python3 -W error ./tests/runtests.py --parallel 1"),
            Some((4, "tests".to_owned()))
        );
        assert_eq!(found("./runtests.py x"), Some((1, String::new())));
        assert_eq!(
            found("python manage.py test polls.tests"),
            Some((3, String::new()))
        );
        assert_eq!(
            found(".venv/bin/python3.12 site/manage.py test"),
            Some((3, "site".to_owned()))
        );
        assert_eq!(found("django-admin test x"), Some((2, String::new())));
        assert_eq!(found("python manage.py runserver"), None);
        assert_eq!(found("python -m unittest tests.test_a"), None);
        assert_eq!(found("python repro.py"), None);
        assert_eq!(found("pytest tests/runtests.py"), None);
    }

    #[test]
    fn options_keep_their_values_and_labels_are_the_positionals() {
        let command = argv(
            "python tests/runtests.py --parallel 1 auth_tests.test_a -k slow --shuffle \
             admin_views --settings=s -v 2",
        );
        let django = recognise(&command).unwrap();
        let (options, labels) = options_and_labels(&django, &command);
        assert_eq!(
            options,
            argv("--parallel 1 -k slow --shuffle --settings=s -v 2")
        );
        assert_eq!(labels, argv("auth_tests.test_a admin_views"));
        assert_eq!(
            without(&options, SELECTORS),
            argv("--parallel 1 --shuffle --settings=s -v 2")
        );
        assert_eq!(verbosity(&options), 2);
        assert_eq!(verbosity(&argv("--verbosity=3")), 3);
        assert_eq!(verbosity(&[]), 1);
    }
}
