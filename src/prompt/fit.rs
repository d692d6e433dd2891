//! Fitting a prompt into `budget.max-input-bytes`: the sections that may shrink are cut, in
//! the order given, by what the prompt is over the cap, and every cut is recorded.
//!
//! A section is cut at a line boundary where one is near, and says in place that it was cut,
//! so the model knows the text is incomplete. Data sections are fenced after the cut, so a
//! cut never breaks a fence.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{data_block, render};

/// Rounds of cutting at most; each round removes at least what the prompt is over.
const MAX_ROUNDS: usize = 8;

/// How a section may shrink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It may not.
    Keep,
    /// Keep its start (lists, file contents: the best candidates come first).
    Head,
    /// Keep its end (command output: the summary and the error are last).
    Tail,
}

/// One `{{key}}` of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub key: &'static str,
    pub text: String,
    /// `Some(label)`: the text is data, fenced with this label.
    pub data: Option<String>,
    pub cut: Cut,
}

impl Section {
    /// A section that is part of the instructions and never cut.
    pub fn fixed(key: &'static str, text: impl Into<String>) -> Section {
        Section {
            key,
            text: text.into(),
            data: None,
            cut: Cut::Keep,
        }
    }

    /// A data section, fenced with `label`, that may shrink as `cut` says.
    pub fn data(key: &'static str, label: impl Into<String>, text: String, cut: Cut) -> Section {
        Section {
            key,
            text,
            data: Some(label.into()),
            cut,
        }
    }

    fn rendered(&self) -> String {
        match &self.data {
            Some(label) if !self.text.is_empty() => data_block(label, &self.text),
            Some(_) => "(none)".to_owned(),
            None => self.text.clone(),
        }
    }
}

/// What was cut from one section to fit the cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CutRecord {
    /// The template placeholder (`files`, `excerpts`, `failure`, ...).
    pub section: String,
    /// Bytes of the section before the cut.
    pub bytes: u64,
    /// Bytes kept.
    pub kept: u64,
}

/// A rendered prompt and what was cut to fit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub text: String,
    pub cuts: Vec<CutRecord>,
    /// Still over the cap after every section that may shrink was emptied.
    pub over: bool,
}

/// Render `template` with `sections`, cutting sections in their order (those with
/// [`Cut::Keep`] never) until `reserved + text.len() <= limit`.
pub fn fit(template: &str, mut sections: Vec<Section>, reserved: usize, limit: usize) -> Fitted {
    let original: Vec<usize> = sections.iter().map(|s| s.text.len()).collect();
    let mut text = render_all(template, &sections);
    for _ in 0..MAX_ROUNDS {
        let total = reserved + text.len();
        if total <= limit {
            break;
        }
        let over = total - limit;
        let Some(section) = sections
            .iter_mut()
            .find(|s| s.cut != Cut::Keep && !s.text.is_empty())
        else {
            break;
        };
        cut(section, over);
        text = render_all(template, &sections);
    }
    let cuts = sections
        .iter()
        .zip(original)
        .filter(|(section, before)| section.text.len() != *before)
        .map(|(section, before)| CutRecord {
            section: section.key.to_owned(),
            bytes: before as u64,
            kept: section.text.len() as u64,
        })
        .collect();
    let over = reserved + text.len() > limit;
    Fitted { text, cuts, over }
}

fn render_all(template: &str, sections: &[Section]) -> String {
    let values: BTreeMap<&str, String> = sections.iter().map(|s| (s.key, s.rendered())).collect();
    render(template, &values)
}

/// Remove at least `over` bytes (plus the note that says so) from the section.
fn cut(section: &mut Section, over: usize) {
    let text = std::mem::take(&mut section.text);
    let note_room = 80;
    let keep = text.len().saturating_sub(over + note_room);
    if keep == 0 {
        section.text = String::new();
        return;
    }
    section.text = match section.cut {
        Cut::Keep => text,
        Cut::Head => {
            let mut end = keep;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            // Prefer to end on a whole line when one ends in the last quarter.
            if let Some(line_end) = text[..end].rfind('\n').filter(|&at| at >= end * 3 / 4) {
                end = line_end + 1;
            }
            format!(
                "{}[… {} bytes cut by efix to fit budget.max-input-bytes]\n",
                &text[..end],
                text.len() - end
            )
        }
        Cut::Tail => {
            let mut start = text.len() - keep;
            while !text.is_char_boundary(start) {
                start += 1;
            }
            if let Some(line_start) = text[start..]
                .find('\n')
                .map(|at| start + at + 1)
                .filter(|&at| at - start <= keep / 4)
            {
                start = line_start;
            }
            format!(
                "[… {} bytes cut by efix to fit budget.max-input-bytes]\n{}",
                start,
                &text[start..]
            )
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(prefix: &str, count: usize) -> String {
        (1..=count).map(|i| format!("{prefix} {i}\n")).collect()
    }

    #[test]
    fn a_prompt_under_the_cap_is_not_cut() {
        let fitted = fit(
            "A {{x}}",
            vec![Section::data("x", "x", "short".to_owned(), Cut::Head)],
            0,
            1000,
        );
        assert_eq!(fitted.cuts, Vec::new());
        assert!(!fitted.over);
        assert!(fitted.text.contains("short"));
    }

    #[test]
    fn sections_are_cut_in_order_and_recorded() {
        let sections = vec![
            Section::fixed("rules", "rules stay"),
            Section::data("files", "files", lines("file", 400), Cut::Head),
            Section::data("failure", "output", lines("out", 400), Cut::Tail),
        ];
        let fitted = fit("{{rules}}\n{{files}}\n{{failure}}\n", sections, 100, 2500);
        assert!(!fitted.over);
        assert!(100 + fitted.text.len() <= 2500, "{}", fitted.text.len());
        assert!(fitted.text.contains("rules stay"));
        // The file list went first and entirely; the output kept its end.
        assert_eq!(fitted.cuts[0].section, "files");
        assert_eq!(fitted.cuts[0].kept, 0);
        assert_eq!(fitted.cuts[1].section, "failure");
        assert!(fitted.text.contains("\nout 400\n"));
        assert!(!fitted.text.contains("\nout 1\n"));
        assert!(
            fitted
                .text
                .contains("bytes cut by efix to fit budget.max-input-bytes")
        );
    }

    #[test]
    fn fixed_text_over_the_cap_is_reported() {
        let fitted = fit("{{a}}", vec![Section::fixed("a", "x".repeat(100))], 0, 10);
        assert!(fitted.over);
        assert_eq!(fitted.cuts, Vec::new());
    }
}
