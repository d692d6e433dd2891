//! The output contract: decides, before any parsing, whether a raw model answer is exactly one
//! of `NO_CHANGE`, one unified diff (bare, in one fence, or in `<patch>` tags) or one JSON
//! edits object, and strips the wrapping.
//!
//! It does not parse hunks (see `parse`) and does not look at the repository.

use serde::Deserialize;

use crate::policy::Issue;

/// The answer's kind, with its wrapping removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    NoChange,
    /// A unified diff with LF line endings, and how the answer around it ends.
    Diff {
        text: String,
        ending: Ending,
    },
    Edits(Vec<Edit>),
}

/// How a diff answer ends, which says whether its last hunk can have been cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Its `</patch>` or closing fence is there: the model finished it.
    Closed,
    /// Its `<patch>` or fence is never closed: the answer stops early.
    CutOff,
    /// A bare diff: nothing says whether it is whole.
    Bare,
}

/// What one wrapper (patch tags, a fence) said about the end of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrap {
    None,
    Closed,
    Open,
}

/// One structured edit: replace the only occurrence of `old_text` in `path` by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Edit {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditsObject {
    edits: Vec<Edit>,
}

const ONE_BLOCK: &str = "answer with exactly one unified diff (or one ```diff fence, or one \
                         <patch>...</patch>), one JSON edits object, or NO_CHANGE";

/// Lines that models put after (or before) a diff and that end a hunk without being content.
pub(crate) fn is_known_junk(line: &str) -> bool {
    let t = line.trim();
    t == "[end of patch]"
        || t == "--cut--"
        || t == "</patch>"
        || t == "<patch>"
        || t.starts_with("```")
        || t == "[start of patch]"
        || (t.starts_with("[end of ") && t.ends_with(']'))
}

/// Whether a line (trimmed) is an XML/HTML-ish tag such as `<tool_call>` or `</answer>`.
fn is_tag_line(line: &str) -> bool {
    let t = line.trim();
    if !t.starts_with('<') || !t.ends_with('>') || t.len() < 3 {
        return false;
    }
    let inner = t
        .trim_start_matches('<')
        .trim_start_matches(['/', '|', '!', '?']);
    inner
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '|')
}

fn is_diff_start(line: &str) -> bool {
    line.starts_with("diff ")
        || line.starts_with("--- ")
        || line.starts_with("-- ")
        || line.starts_with("--->")
        || line.starts_with("+++ ")
        || line.starts_with("Index: ")
        || line.starts_with("index ")
        || line.starts_with("@@")
}

fn first_nonblank(lines: &[&str]) -> Option<usize> {
    lines.iter().position(|l| !l.trim().is_empty())
}

fn last_nonblank(lines: &[&str]) -> Option<usize> {
    lines.iter().rposition(|l| !l.trim().is_empty())
}

/// Classify a raw model answer.
pub(crate) fn classify(raw: &str) -> Result<Answer, Issue> {
    let text = raw.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    let start = text.len() - text.trim_start().len();
    // git writes a blank context line as one space; as the diff's last line it is still one.
    let lines_end = text.trim_end_matches('\n');
    let end = if lines_end.ends_with("\n ") {
        lines_end.len()
    } else {
        text.trim_end().len()
    };
    let trimmed = text.get(start..end.max(start)).unwrap_or("");
    if trimmed.is_empty() {
        return Err(Issue::new(
            "contract.empty",
            format!("the answer is empty; {ONE_BLOCK}"),
        ));
    }
    if trimmed == "NO_CHANGE" {
        return Ok(Answer::NoChange);
    }
    let (body, tags) = strip_patch_tags(trimmed)?;
    reject_tags(&body)?;
    let (body, fence) = strip_fence(&body)?;
    let ending = if tags == Wrap::Open || fence == Wrap::Open {
        Ending::CutOff
    } else if tags == Wrap::Closed || fence == Wrap::Closed {
        Ending::Closed
    } else {
        Ending::Bare
    };
    let t = body.trim();
    if t == "NO_CHANGE" {
        return Ok(Answer::NoChange);
    }
    if t.starts_with('{') {
        return parse_edits(t);
    }
    let lines: Vec<&str> = body.lines().collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty() && !is_known_junk(l))
        .unwrap_or(0);
    if !lines.get(start).is_some_and(|l| is_diff_start(l)) {
        if lines.iter().any(|l| l.contains("NO_CHANGE")) {
            return Err(Issue::new(
                "contract.prose",
                "NO_CHANGE must be the whole answer; write nothing else when no change is needed",
            ));
        }
        if lines
            .iter()
            .any(|l| l.starts_with("@@") || l.starts_with("--- "))
        {
            return Err(Issue::new(
                "contract.prose",
                format!(
                    "text before the diff (line {}); start the answer with the diff header and \
                     write no explanation",
                    start + 1
                ),
            ));
        }
        return Err(Issue::new(
            "contract.no-hunks",
            format!("no diff, edits or NO_CHANGE found; {ONE_BLOCK}"),
        ));
    }
    Ok(Answer::Diff {
        text: lines[start..].join("\n") + "\n",
        ending,
    })
}

/// A cut-off answer (an unclosed wrapper) may stop at a context line, and the rest is still a
/// usable patch; stopped after `+` or `-` lines, its last change is partial.
fn ends_inside_a_change(text: &str) -> bool {
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    !last.starts_with(' ')
}

/// Remove one `<patch>...</patch>` wrapper, tolerating repeated closing tags.
fn strip_patch_tags(text: &str) -> Result<(String, Wrap), Issue> {
    const OPEN: &str = "<patch>";
    const CLOSE: &str = "</patch>";
    let Some(open) = text.find(OPEN) else {
        if text.contains(CLOSE) {
            return Err(Issue::new(
                "contract.tags",
                "a </patch> without <patch>; wrap the diff in one <patch>...</patch> or send it bare",
            ));
        }
        return Ok((text.to_owned(), Wrap::None));
    };
    if !text[..open].trim().is_empty() {
        return Err(Issue::new(
            "contract.prose",
            "text before <patch>; send only the patch, with no explanation around it",
        ));
    }
    let rest = &text[open + OPEN.len()..];
    let Some(close) = rest.find(CLOSE) else {
        // Real answers are often cut off before `</patch>`.
        if !ends_inside_a_change(rest) {
            return Ok((rest.to_owned(), Wrap::Open));
        }
        return Err(Issue::new(
            "contract.truncated",
            "the answer stops inside a hunk and <patch> is never closed (it was cut off); send \
             a smaller patch and end it with </patch>",
        ));
    };
    let inner = &rest[..close];
    let mut after = rest[close + CLOSE.len()..].trim();
    // A repeated closing tag is harmless, and real output has it.
    while let Some(more) = after.strip_prefix(CLOSE) {
        after = more.trim();
    }
    if after.contains(OPEN) {
        return Err(Issue::new(
            "contract.several-blocks",
            format!("several <patch> blocks; {ONE_BLOCK}, with every file in it"),
        ));
    }
    if !after.is_empty() {
        return Err(Issue::new(
            "contract.prose",
            "text after </patch>; send only the patch, with no explanation around it",
        ));
    }
    if inner.contains(OPEN) {
        return Err(Issue::new(
            "contract.several-blocks",
            format!("nested <patch> tags; {ONE_BLOCK}"),
        ));
    }
    Ok((inner.to_owned(), Wrap::Closed))
}

fn reject_tags(body: &str) -> Result<(), Issue> {
    for (i, line) in body.lines().enumerate() {
        let starts_body = line.starts_with([' ', '+', '-', '\\']);
        if !starts_body && is_tag_line(line) {
            return Err(Issue::new(
                "contract.tags",
                format!(
                    "tag {:?} on line {}; send no tool calls or XML/HTML tags, only the patch",
                    line.trim(),
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// Remove one surrounding markdown fence; reject fences anywhere else.
fn strip_fence(body: &str) -> Result<(String, Wrap), Issue> {
    let lines: Vec<&str> = body.lines().collect();
    // Inside a diff a line that starts with a space is a context line, and a markdown file's
    // own fences appear as " ```python"; only the answer's first line, and its last when the
    // first opens a fence, may be an indented fence.
    let indented = |i: usize| lines[i].trim_start().starts_with("```");
    let first_line = first_nonblank(&lines).filter(|&i| indented(i));
    let last_line = last_nonblank(&lines).filter(|&i| first_line.is_some() && indented(i));
    let is_fence =
        |i: usize| lines[i].starts_with("```") || Some(i) == first_line || Some(i) == last_line;
    let fences: Vec<usize> = (0..lines.len()).filter(|&i| is_fence(i)).collect();
    let Some(&first) = fences.first() else {
        return Ok((body.to_owned(), Wrap::None));
    };
    let start = first_nonblank(&lines).unwrap_or(0);
    if first != start {
        let before_is_diff = lines[start..first].iter().any(|l| is_diff_start(l));
        if before_is_diff {
            return Err(Issue::new(
                "contract.fence-in-diff",
                format!(
                    "markdown fence on line {} inside the diff; put the whole diff in one \
                     fence or none",
                    first + 1
                ),
            ));
        }
        return Err(Issue::new(
            "contract.prose",
            format!(
                "text before the fence (line {}); send only the fenced patch, with no \
                 explanation",
                start + 1
            ),
        ));
    }
    let Some(&close) = fences.get(1) else {
        // An unclosed fence: the rest is the block, and the answer was most likely cut off.
        let rest = lines[first + 1..].join("\n");
        if ends_inside_a_change(&rest) && rest.lines().any(is_diff_start) {
            return Err(Issue::new(
                "contract.truncated",
                "the answer stops inside a hunk and its ``` fence is never closed (it was cut \
                 off); send a smaller patch and close the fence",
            ));
        }
        return Ok((rest, Wrap::Open));
    };
    let opener = lines[first].trim();
    if opener != "```" && lines[close].trim() != "```" {
        return Err(Issue::new(
            "contract.fence-in-diff",
            format!(
                "a second opening fence on line {} inside the block; put the whole diff in one \
                 fence",
                close + 1
            ),
        ));
    }
    let after: Vec<&str> = lines[close + 1..]
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if fences.len() > 2 {
        let third = lines[fences[2]].trim();
        let rule = if third != "```" || fences.len() >= 4 {
            "contract.several-blocks"
        } else {
            "contract.fence-in-diff"
        };
        return Err(Issue::new(
            rule,
            format!(
                "several fenced blocks (a fence on line {}); {ONE_BLOCK}",
                fences[2] + 1
            ),
        ));
    }
    if !after.is_empty() {
        return Err(Issue::new(
            "contract.prose",
            "text after the closing fence; send only the patch, with no explanation",
        ));
    }
    Ok((lines[first + 1..close].join("\n"), Wrap::Closed))
}

fn parse_edits(text: &str) -> Result<Answer, Issue> {
    match serde_json::from_str::<EditsObject>(text) {
        Ok(obj) if obj.edits.is_empty() => Err(Issue::new(
            "contract.no-hunks",
            "the edits list is empty; give at least one edit, or answer NO_CHANGE",
        )),
        Ok(obj) => Ok(Answer::Edits(obj.edits)),
        Err(e) => Err(Issue::new(
            "contract.bad-json",
            format!(
                "the edits object is not valid ({e}); send {{\"edits\":[{{\"path\":..,\
                 \"old_text\":..,\"new_text\":..}}]}} and nothing else"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(raw: &str) -> String {
        match classify(raw) {
            Ok(a) => format!("ok:{a:?}"),
            Err(i) => i.rule,
        }
    }

    #[test]
    fn no_change_is_accepted_when_trimmed() {
        assert_eq!(classify("  NO_CHANGE \n").ok(), Some(Answer::NoChange));
    }

    #[test]
    fn patch_tags_with_a_repeated_closing_tag_are_unwrapped() {
        let raw = "<patch>\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n</patch>\n</patch>\n";
        assert_eq!(
            classify(raw).ok(),
            Some(Answer::Diff {
                text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n".into(),
                ending: Ending::Closed
            })
        );
    }

    #[test]
    fn a_markdown_files_own_fences_are_diff_lines() {
        let d =
            "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,4 @@\n ```python\n x = 1\n+y = 2\n ```\n";
        let diff = |ending| {
            Some(Answer::Diff {
                text: d.into(),
                ending,
            })
        };
        assert_eq!(classify(d).ok(), diff(Ending::Bare));
        let fenced = format!("```diff\n{d}```\n");
        assert_eq!(classify(&fenced).ok(), diff(Ending::Closed));
        let indented = format!("  ```diff\n{d}  ```\n");
        assert_eq!(classify(&indented).ok(), diff(Ending::Closed));
    }

    #[test]
    fn wrapping_violations_get_their_own_rules() {
        let d = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(rule(&format!("Here is the fix:\n{d}")), "contract.prose");
        assert_eq!(
            rule(&format!("<tool_call>\n{d}</tool_call>")),
            "contract.tags"
        );
        assert_eq!(
            rule(&format!("```diff\n{d}```\n```diff\n{d}```")),
            "contract.several-blocks"
        );
        assert_eq!(rule(&format!("{d}```\n{d}")), "contract.fence-in-diff");
        assert_eq!(
            rule(&format!("<patch>{d}</patch>\nThis fixes it.")),
            "contract.prose"
        );
        assert_eq!(rule("I think the code is fine."), "contract.no-hunks");
        assert_eq!(rule("{\"edits\": 3}"), "contract.bad-json");
    }

    #[test]
    fn fenced_json_edits_are_parsed() {
        let raw =
            "```json\n{\"edits\":[{\"path\":\"a\",\"old_text\":\"x\",\"new_text\":\"y\"}]}\n```";
        assert_eq!(
            classify(raw).ok(),
            Some(Answer::Edits(vec![Edit {
                path: "a".into(),
                old_text: "x".into(),
                new_text: "y".into()
            }]))
        );
    }

    #[test]
    fn an_answer_cut_off_inside_a_change_is_truncated_whatever_wraps_it() {
        // A bare diff's last blank context line (one space) is still a line.
        let blank_last = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n \n";
        assert_eq!(
            classify(&format!("{blank_last}\n\n")).ok(),
            Some(Answer::Diff {
                text: blank_last.into(),
                ending: Ending::Bare
            })
        );
        let d = "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n a\n-b\n+c\n";
        assert_eq!(rule(&format!("<patch>\n{d}")), "contract.truncated");
        assert_eq!(rule(&format!("```diff\n{d}")), "contract.truncated");
        // Cut at a context line: usable, but marked so the last hunk's counts are checked.
        let at_context = format!("{d} d\n");
        for raw in [
            format!("<patch>\n{at_context}"),
            format!("```diff\n{at_context}"),
        ] {
            assert_eq!(
                classify(&raw).ok(),
                Some(Answer::Diff {
                    text: at_context.clone(),
                    ending: Ending::CutOff
                })
            );
        }
    }
}
