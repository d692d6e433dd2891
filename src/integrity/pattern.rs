//! A regular expression that may have failed to compile: the detectors' patterns are
//! constants pinned by unit tests, and one that did not compile matches nothing rather than
//! stopping the patch engine.

use regex::{Captures, Match, Regex};

pub(crate) struct Pattern(Option<Regex>);

impl Pattern {
    pub(crate) fn new(source: &str) -> Pattern {
        Pattern(Regex::new(source).ok())
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(text))
    }

    pub(crate) fn find<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.0.as_ref()?.find(text)
    }

    pub(crate) fn captures<'t>(&self, text: &'t str) -> Option<Captures<'t>> {
        self.0.as_ref()?.captures(text)
    }

    /// `text` with every match replaced by `with`; unchanged when the pattern did not compile.
    pub(crate) fn replace_all<'t>(&self, text: &'t str, with: &str) -> std::borrow::Cow<'t, str> {
        match &self.0 {
            Some(r) => r.replace_all(text, regex::NoExpand(with)),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    pub(crate) fn captures_iter<'r, 't>(
        &'r self,
        text: &'t str,
    ) -> impl Iterator<Item = Captures<'t>> + use<'r, 't> {
        self.0.iter().flat_map(move |r| r.captures_iter(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_does_not_compile_matches_nothing() {
        let broken = Pattern::new("(");
        assert!(!broken.is_match("("));
        assert!(broken.find("(").is_none());
        assert!(Pattern::new("a+").is_match("caat"));
    }
}
