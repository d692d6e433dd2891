//! The engine wire format of ARCHITECTURE §4: what an engine returns, whatever the transport.
//! Field names are the wire names (snake_case), shared by replay files and structured output.
//!
//! Every field but `hypothesis` may be absent or `null` (structured output sends `null` for
//! what a model leaves out, since a strict schema makes every property required). Reading an
//! answer that came as text (an ACP agent, or a server that refused structured output) is
//! [`FixResponse::from_text`] and [`PlanResponse::from_text`].

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::policy::Issue;

/// A plan response (`efix_plan`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanResponse {
    /// The model's root-cause hypothesis, in its own words.
    pub hypothesis: String,
    /// Repository-relative files the model wants to look at or change.
    #[serde(default, deserialize_with = "nullable")]
    pub focus_files: Vec<String>,
}

/// Why one changed file is part of the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileJustification {
    pub file: String,
    pub reason: String,
}

/// One exact-text replacement: the only occurrence of `old_text` in `path` becomes
/// `new_text`; an empty `old_text` creates the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Repository-relative path.
    pub path: String,
    /// Text that occurs exactly once in the file, copied exactly; empty to create the file.
    pub old_text: String,
    /// The replacement.
    pub new_text: String,
}

/// A fix response (`efix_fix`). Exactly one of `output` and `edits` is non-empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixResponse {
    /// The raw text exactly as a model would emit it under the patch contract (a unified
    /// diff, a JSON edits object or `NO_CHANGE`); empty when `edits` holds the change.
    #[serde(default, deserialize_with = "nullable")]
    pub output: String,
    /// The change as exact-text replacements; empty when `output` holds it.
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<Edit>,
    #[serde(default, deserialize_with = "nullable")]
    pub root_cause: String,
    #[serde(default, deserialize_with = "nullable")]
    pub fix_summary: String,
    #[serde(default, deserialize_with = "nullable")]
    pub tests_summary: String,
    #[serde(default, deserialize_with = "nullable")]
    pub risk_rollback: String,
    #[serde(default, deserialize_with = "nullable")]
    pub file_justifications: Vec<FileJustification>,
}

/// `null` reads as the type's default, like an absent field.
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// Serialized form of the edits for the patch engine, which reads the contract's JSON edits
/// object.
#[derive(Serialize)]
struct EditsObject<'a> {
    edits: &'a [Edit],
}

impl FixResponse {
    /// The answer as the patch contract reads it: `output`, or the edits as one JSON edits
    /// object. An answer that fills both breaks the contract, since it is not clear which one
    /// the model meant.
    pub fn patch_text(&self) -> Result<String, Issue> {
        match (self.output.trim().is_empty(), self.edits.is_empty()) {
            (_, true) => Ok(self.output.clone()),
            (true, false) => serde_json::to_string(&EditsObject { edits: &self.edits })
                .map_err(|err| Issue::new("contract.bad-json", err.to_string())),
            (false, false) => Err(Issue::new(
                "contract.output-and-edits",
                "the answer fills both `output` and `edits`; put the change in exactly one of \
                 them and leave the other empty",
            )),
        }
    }

    /// Read an answer that came as text: a JSON fix object (bare or in one ```json fence)
    /// when it is one, else the whole text is `output` and goes to the patch contract as is.
    pub fn from_text(text: &str) -> FixResponse {
        json_object::<FixResponse>(text).unwrap_or_else(|| FixResponse {
            output: text.to_owned(),
            ..FixResponse::default()
        })
    }
}

impl PlanResponse {
    /// Read a plan that came as text: a JSON plan object (bare or in one ```json fence) when
    /// it is one, else the text itself is the hypothesis and no file is named.
    pub fn from_text(text: &str) -> PlanResponse {
        json_object::<PlanResponse>(text).unwrap_or_else(|| PlanResponse {
            hypothesis: text.trim().to_owned(),
            focus_files: Vec::new(),
        })
    }
}

/// `text` as one JSON object of type `T`, allowing one surrounding ```json (or bare ```)
/// fence and blank lines around it.
fn json_object<T: for<'de> Deserialize<'de>>(text: &str) -> Option<T> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map_or(trimmed, str::trim);
    if !inner.starts_with('{') {
        return None;
    }
    serde_json::from_str(inner).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_read_as_empty_values() {
        let response: FixResponse = serde_json::from_str(
            r#"{"output": null, "edits": [{"path": "a.rs", "old_text": "x", "new_text": "y"}],
                "root_cause": null, "fix_summary": "s", "tests_summary": null,
                "risk_rollback": null, "file_justifications": null}"#,
        )
        .unwrap();
        assert_eq!(
            response,
            FixResponse {
                edits: vec![Edit {
                    path: "a.rs".to_owned(),
                    old_text: "x".to_owned(),
                    new_text: "y".to_owned(),
                }],
                fix_summary: "s".to_owned(),
                ..FixResponse::default()
            }
        );
    }

    #[test]
    fn edits_become_the_contracts_json_edits_object() {
        let response = FixResponse {
            edits: vec![Edit {
                path: "a.rs".to_owned(),
                old_text: "1".to_owned(),
                new_text: "2".to_owned(),
            }],
            ..FixResponse::default()
        };
        assert_eq!(
            response.patch_text().unwrap(),
            r#"{"edits":[{"path":"a.rs","old_text":"1","new_text":"2"}]}"#
        );
        let both = FixResponse {
            output: "NO_CHANGE".to_owned(),
            ..response
        };
        assert_eq!(
            both.patch_text().unwrap_err().rule,
            "contract.output-and-edits"
        );
    }

    #[test]
    fn text_answers_are_a_fix_object_or_raw_output() {
        let fenced = "```json\n{\"output\": \"NO_CHANGE\", \"root_cause\": \"r\"}\n```\n";
        assert_eq!(
            FixResponse::from_text(fenced),
            FixResponse {
                output: "NO_CHANGE".to_owned(),
                root_cause: "r".to_owned(),
                ..FixResponse::default()
            }
        );
        let bare_edits = r#"{"edits":[{"path":"a","old_text":"b","new_text":"c"}]}"#;
        assert_eq!(FixResponse::from_text(bare_edits).edits.len(), 1);
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(FixResponse::from_text(diff).output, diff);
        let prose = "Here is my fix: {\"output\": \"x\"}";
        assert_eq!(FixResponse::from_text(prose).output, prose);
    }

    #[test]
    fn text_plans_are_a_plan_object_or_the_hypothesis() {
        assert_eq!(
            PlanResponse::from_text("{\"hypothesis\": \"h\", \"focus_files\": [\"a.rs\"]}"),
            PlanResponse {
                hypothesis: "h".to_owned(),
                focus_files: vec!["a.rs".to_owned()],
            }
        );
        assert_eq!(
            PlanResponse::from_text("  The parser drops CR.\n"),
            PlanResponse {
                hypothesis: "The parser drops CR.".to_owned(),
                focus_files: Vec::new(),
            }
        );
    }
}
