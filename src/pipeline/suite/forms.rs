//! The ladder of suite forms derived from a reproduction: the known runner's forms (whole
//! suite, test directory, the reproduction's files), or the widened selectors of a command
//! efix does not know.

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
    if let Some(derived) = super::known::derive(argv, root) {
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
    let forms = super::widen::forms(argv, root);
    if forms.is_empty() {
        Derivation::Nothing
    } else {
        Derivation::Forms(forms)
    }
}
