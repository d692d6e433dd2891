//! The suite forms of Django's runners (`manage.py test`, `runtests.py`, `django-admin
//! test`): the whole suite is the runner with its options and no label; the test root is the
//! app label that holds the reproduction's tests (`auth_tests` for
//! `auth_tests.test_validators.T.test_x`), the unit Django's own suite is organised by and the
//! cheapest form that still runs every test of the reproduction's app; the narrow form is the
//! labels' modules.
//!
//! Options that select tests or stop early (`-k`, `--tag`, `--start-at`, `--bisect`,
//! `--failfast`) are left out of every form: a baseline must run every test of its form.

use std::path::Path;

use super::derived::{Derived, unittest_module};
use crate::testreport::django::{Django, SELECTORS, options_and_labels, without};

/// The forms of a Django reproduction's argv, read against the repository at `root`.
pub(super) fn derive(argv: &[String], django: &Django, root: &Path) -> Derived {
    let prefix = &argv[..django.first_arg.min(argv.len())];
    let (options, labels) = options_and_labels(django, argv);
    let options = without(&options, SELECTORS);
    let form = |labels: &[String]| [prefix, options.as_slice(), labels].concat();
    let whole = form(&[]);
    if whole == argv {
        return Derived {
            whole,
            root: None,
            narrow: None,
        };
    }
    let base = root.join(&django.base);
    let modules = unique(labels.iter().map(|label| unittest_module(label, &base)));
    let apps: Option<Vec<String>> = labels.iter().map(|label| app_of(label, &base)).collect();
    let narrow = (!modules.is_empty())
        .then(|| form(&modules))
        .filter(|narrow| narrow != argv && *narrow != whole);
    let root_form = apps
        .filter(|apps| !apps.is_empty())
        .map(|apps| form(&unique(apps.into_iter())))
        .filter(|app| app != argv && *app != whole && Some(app) != narrow.as_ref());
    Derived {
        whole,
        root: root_form,
        narrow,
    }
}

/// The app label of a dotted test label: its first part, when that is a package or module
/// under the label directory `base`; `None` for a path or a name found nowhere.
fn app_of(label: &str, base: &Path) -> Option<String> {
    if label.contains('/') || label.ends_with(".py") {
        return None;
    }
    let first = label.split('.').next().filter(|first| !first.is_empty())?;
    let found = base.join(first).is_dir() || base.join(format!("{first}.py")).is_file();
    found.then(|| first.to_owned())
}

fn unique(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
