//! Suites derived from the reproduction when none is configured, so the proof covers the
//! repository's own tests and a fix that breaks a test elsewhere is caught.
//!
//! A derivation is a ladder of forms, widest first: for a runner efix knows (`known`), its
//! whole suite, the same runner on the test directory holding the reproduction's tests
//! (`root`), and the reproduction's own files or targets; for any other command (`widen`),
//! the same program with no selector, then the reproduction's selector widened step by step.
//! The pipeline runs them in turn before the fix until one establishes a baseline
//! (`pipeline/baseline.rs`).
//!
//! This module only computes argv; it runs nothing and decides nothing about results.

mod known;
mod root;
mod widen;

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::evidence::SuiteFormKind;

/// One derived suite form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Form {
    pub kind: SuiteFormKind,
    pub argv: Vec<String>,
}

/// What the reproduction says about the repository's suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Derivation {
    /// The reproduction already runs its runner's whole suite (`cargo test`, `pytest -q`).
    Whole,
    /// Forms wider than the reproduction, widest first (never empty).
    Forms(Vec<Form>),
    /// No form wider than the reproduction can be derived: a command that shows no test
    /// selector (`make check`, `python repro.py`).
    Nothing,
}

/// The suite forms of a reproduction's argv, read against the repository at `root`.
pub(crate) fn derive(argv: &[String], root: &Path) -> Derivation {
    if let Some(derived) = known::derive(argv, root) {
        if derived.whole == argv {
            return Derivation::Whole;
        }
        let mut forms = vec![Form {
            kind: SuiteFormKind::WholeSuite,
            argv: derived.whole,
        }];
        forms.extend(derived.root.map(|argv| Form {
            kind: SuiteFormKind::TestRoot,
            argv,
        }));
        forms.extend(derived.narrow.map(|argv| Form {
            kind: SuiteFormKind::ReproductionFiles,
            argv,
        }));
        return Derivation::Forms(forms);
    }
    let forms = widen::forms(argv, root);
    if forms.is_empty() {
        Derivation::Nothing
    } else {
        Derivation::Forms(forms)
    }
}
