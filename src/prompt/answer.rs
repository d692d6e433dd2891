//! The answer format a prompt ends with: what to send back and one minimal example, for each
//! call kind, each way an engine answers ([`AnswerStyle`]) and each fix format.
//!
//! The wording states the patch contract of ARCHITECTURE §5 plainly; the examples are the
//! smallest answers the contract accepts.

use crate::config::FixFormat;
use crate::engine::{AnswerStyle, CallKind};

const PLAN_FIELDS: &str = "`hypothesis`: the root cause in a few sentences; `focus_files`: at \
                           most five repository-relative paths that must be read or changed.";

const PLAN_EXAMPLE: &str = r#"{"hypothesis": "parse_line keeps the \r of CRLF input, so the key comparison fails.", "focus_files": ["src/parser.rs", "tests/parser.rs"]}"#;

const EDITS_RULES: &str = "Each edit replaces `old_text` by `new_text` in the file at `path` \
    (repository-relative). `old_text` must occur exactly once in the file as it is now: copy it \
    exactly, whitespace and indentation included, without the `N| ` line numbers, and take \
    enough lines to make it unique. An empty `old_text` creates a new file holding `new_text`.";

const EDITS_EXAMPLE: &str = r#"{"output": "", "edits": [{"path": "src/calc.py", "old_text": "    return a - b\n", "new_text": "    return a + b\n"}, {"path": "tests/test_calc.py", "old_text": "def test_add():\n", "new_text": "def test_add_negative():\n    assert add(-1, -2) == -3\n\n\ndef test_add():\n"}], "root_cause": "add subtracted.", "fix_summary": "add adds.", "tests_summary": "test_add_negative covers negative operands.", "risk_rollback": "Low; revert the commit.", "file_justifications": []}"#;

const DIFF_RULES: &str = "`output` holds one unified diff: `--- a/PATH` and `+++ b/PATH` \
    headers, then `@@ -l,n +l,n @@` hunks whose context lines are copied exactly from the files \
    (without the `N| ` line numbers). No prose, no second block, no tags around it.";

const DIFF_EXAMPLE: &str = r#"{"output": "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n", "edits": [], "root_cause": "add subtracted.", "fix_summary": "add adds.", "tests_summary": "test_add_negative covers negative operands.", "risk_rollback": "Low; revert the commit.", "file_justifications": []}"#;

const EXPLAIN_FIELDS: &str = "The other fields are your explanation, shown to reviewers as \
    your words: `root_cause`, `fix_summary`, `tests_summary`, `risk_rollback`, and \
    `file_justifications` (`{\"file\", \"reason\"}` for each changed file not shown above).";

const NO_CHANGE: &str = "If no change to the repository can fix the failure, set `output` to \
    `NO_CHANGE` and leave `edits` empty.";

/// The answer-format paragraph for a call.
pub fn answer_format(kind: CallKind, style: AnswerStyle, format: FixFormat) -> String {
    match (kind, style) {
        (CallKind::Plan, AnswerStyle::Structured) => {
            format!("Answer with the JSON object of the response format. {PLAN_FIELDS}")
        }
        (CallKind::Plan, _) => format!(
            "Answer with only this JSON object, nothing before or after it. {PLAN_FIELDS} \
             Example:\n\n{PLAN_EXAMPLE}\n\nDo not change any file."
        ),
        (CallKind::Fix, AnswerStyle::EditFiles) => format!(
            "Make the change by editing the files in the repository yourself. efix allows \
             edits of files inside the repository and nothing else (no commands, no network); \
             do not run the tests, efix runs them. When you are done, answer with only a JSON \
             object, nothing before or after it:\n\n{}\n\n{EXPLAIN_FIELDS} If no change can \
             fix the failure, edit nothing and set `output` to `NO_CHANGE`.",
            r#"{"output": "", "edits": [], "root_cause": "...", "fix_summary": "...", "tests_summary": "...", "risk_rollback": "...", "file_justifications": []}"#
        ),
        (CallKind::Fix, style) => {
            let opening = match style {
                AnswerStyle::Structured => "Answer with the JSON object of the response format.",
                _ => "Answer with only one JSON object, nothing before or after it.",
            };
            let (rules, example, put) = match format {
                FixFormat::Edits => (
                    EDITS_RULES,
                    EDITS_EXAMPLE,
                    "Put the change in `edits` and leave `output` empty.",
                ),
                FixFormat::Diff => (
                    DIFF_RULES,
                    DIFF_EXAMPLE,
                    "Put the change in `output` and leave `edits` empty.",
                ),
            };
            format!(
                "{opening} {put} {rules} {EXPLAIN_FIELDS} {NO_CHANGE} A minimal example:\n\n\
                 {example}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FixResponse;

    /// The examples are answers efix itself accepts.
    #[test]
    fn examples_are_valid_answers() {
        for example in [EDITS_EXAMPLE, DIFF_EXAMPLE] {
            let response: FixResponse = serde_json::from_str(example).unwrap();
            assert!(response.patch_text().is_ok(), "{example}");
        }
        let plan: crate::engine::PlanResponse = serde_json::from_str(PLAN_EXAMPLE).unwrap();
        assert_eq!(plan.focus_files.len(), 2);
    }

    #[test]
    fn each_format_names_its_field() {
        let edits = answer_format(CallKind::Fix, AnswerStyle::Structured, FixFormat::Edits);
        assert!(edits.contains("Put the change in `edits`"));
        let diff = answer_format(CallKind::Fix, AnswerStyle::Text, FixFormat::Diff);
        assert!(diff.contains("Put the change in `output`"));
        assert!(diff.starts_with("Answer with only one JSON object"));
        let edit_files = answer_format(CallKind::Fix, AnswerStyle::EditFiles, FixFormat::Edits);
        assert!(edit_files.contains("editing the files in the repository yourself"));
    }
}
