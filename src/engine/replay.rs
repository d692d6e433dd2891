//! The replay engine: answers read from a YAML file (`version: 1`, `plan:`, `fix:` in round
//! order). It drives the tests and the demo offline, and reproduces a recorded run.
//!
//! Answers go through the same contract, parse and apply path as a live model's, so a replay
//! file may hold malformed output on purpose. A fix answer holds the change in `output` (raw
//! model text) or in `edits` (exact-text replacements), like a structured answer.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Engine, EngineError, EngineInfo, FixRequest, FixResponse, PlanRequest, PlanResponse, Reply,
};

/// The only replay file version this build reads.
pub const REPLAY_VERSION: u32 = 1;

/// A replay file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayFile {
    /// Format version; must be 1.
    pub version: u32,
    /// The plan answer.
    pub plan: PlanResponse,
    /// Fix answers in the order they are asked for (contract retries take the next one).
    pub fix: Vec<FixResponse>,
}

/// Serves the answers of a [`ReplayFile`].
#[derive(Debug, Clone)]
pub struct ReplayEngine {
    name: String,
    file: ReplayFile,
}

impl ReplayEngine {
    /// Read and validate a replay file.
    pub fn from_path(path: &Path) -> Result<ReplayEngine, EngineError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| EngineError::ReplayRead {
            path: shown.clone(),
            source,
        })?;
        Self::from_str(&shown, &text)
    }

    /// Parse a replay file's text; `name` is used in messages and the evidence.
    pub fn from_str(name: &str, text: &str) -> Result<ReplayEngine, EngineError> {
        let file: ReplayFile = yaml_serde::from_str(text).map_err(|err| {
            let message = err.to_string();
            // The location goes in front, like a compiler's; drop yaml's trailing copy of it.
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_owned(),
                None => message,
            };
            let location = err
                .location()
                .map(|at| format!(":{}:{}", at.line(), at.column()))
                .unwrap_or_default();
            EngineError::ReplayInvalid {
                path: format!("{name}{location}"),
                message,
            }
        })?;
        if file.version != REPLAY_VERSION {
            return Err(EngineError::ReplayInvalid {
                path: name.to_owned(),
                message: format!(
                    "version {} is not supported; this efix reads version {REPLAY_VERSION}",
                    file.version
                ),
            });
        }
        Ok(ReplayEngine {
            name: name.to_owned(),
            file,
        })
    }
}

impl Engine for ReplayEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "replay".to_owned(),
            model: self.name.clone(),
        }
    }

    fn plan(&mut self, _request: &PlanRequest) -> Result<Reply<PlanResponse>, EngineError> {
        Ok(Reply::plain(self.file.plan.clone()))
    }

    fn fix(&mut self, request: &FixRequest) -> Result<Reply<FixResponse>, EngineError> {
        // Indexed by call number, not by an internal cursor, so a resumed run that already
        // consumed answers from its checkpoint asks for the right one.
        let answer =
            self.file
                .fix
                .get(request.call_index)
                .cloned()
                .ok_or(EngineError::ReplayExhausted {
                    number: request.call_index + 1,
                    available: self.file.fix.len(),
                })?;
        Ok(Reply::plain(answer))
    }
}

/// The JSON Schema of the replay file.
pub fn schema_json() -> String {
    crate::evidence::pretty_schema(schemars::schema_for!(ReplayFile))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(call_index: usize) -> FixRequest {
        FixRequest {
            round: 1,
            call_index,
            prompt: crate::engine::Prompt::default(),
            text_prompt: None,
            deadline: std::time::Instant::now(),
        }
    }

    #[test]
    fn serves_fix_answers_by_call_index_and_stops_when_exhausted() {
        let text = "version: 1\nplan:\n  hypothesis: h\n  focus_files: [src/lib.rs]\nfix:\n  - output: NO_CHANGE\n";
        let mut engine = ReplayEngine::from_str("r.yml", text).unwrap();
        assert_eq!(
            engine.fix(&request(0)).unwrap().response.output,
            "NO_CHANGE"
        );
        let err = engine.fix(&request(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the replay file has no fix answer number 2 (it holds 1)"
        );
    }

    #[test]
    fn fix_answers_may_hold_structured_edits() {
        let text = "version: 1\nplan: {hypothesis: h}\nfix:\n  - edits:\n      - path: a.py\n        old_text: \"x = 1\\n\"\n        new_text: \"x = 2\\n\"\n    root_cause: r\n";
        let mut engine = ReplayEngine::from_str("r.yml", text).unwrap();
        let answer = engine.fix(&request(0)).unwrap().response;
        assert_eq!(
            answer.patch_text().unwrap(),
            r#"{"edits":[{"path":"a.py","old_text":"x = 1\n","new_text":"x = 2\n"}]}"#
        );
        assert_eq!(answer.root_cause, "r");
    }

    #[test]
    fn rejects_unknown_keys_with_their_location() {
        let text = "version: 1\nplan:\n  hypothesis: h\n  focus: []\nfix: []\n";
        let err = ReplayEngine::from_str("r.yml", text).unwrap_err();
        insta::assert_snapshot!(err.to_string());
    }

    #[test]
    fn rejects_other_versions() {
        let err = ReplayEngine::from_str("r.yml", "version: 2\nplan: {hypothesis: h}\nfix: []\n")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "replay file r.yml: version 2 is not supported; this efix reads version 1"
        );
    }
}
