//! What efix knows about particular agents: how to keep each from loading the settings the
//! repository under repair commits for it, which permission mode asks before every change,
//! and what to tell a user whose agent wants a key.
//!
//! A repository's agent settings are code the repository's author controls: Claude Code's
//! `.claude/settings.json` can allow shell commands and writes without a permission request
//! and run hooks (with the network) at every start, and Gemini CLI's `.gemini/settings.json`
//! can do the same. efix loads only the user's settings:
//!
//! - Claude Code (`claude-agent-acp`): `session/new` carries
//!   `_meta.claudeCode.options.settingSources: ["user"]`, so project and local settings,
//!   their hooks and their permission rules are not read;
//! - Gemini CLI: `GEMINI_CLI_TRUST_WORKSPACE=false` in its environment makes the repository
//!   an untrusted folder, whose workspace settings Gemini CLI does not load.
//!
//! Both are sent to every agent (an agent ignores `_meta` keys and variables it does not
//! know). An agent efix does not know is refused when the repository holds one of the
//! settings files below: efix cannot tell whether it would obey them.

use std::path::Path;

use agent_client_protocol as acp;

/// The environment variable that makes Gemini CLI treat the workspace as untrusted.
pub(crate) const GEMINI_TRUST_VARIABLE: &str = "GEMINI_CLI_TRUST_WORKSPACE";

/// Settings files agents read from a repository, relative to its root.
pub(crate) const PROJECT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".mcp.json",
];

/// The agents whose project settings efix knows how to turn off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known {
    ClaudeCode,
    GeminiCli,
}

impl Known {
    /// The agent named by its `initialize` answer (`agentInfo.name`), or by its command
    /// line when it gives no name.
    pub(crate) fn identify(name: Option<&str>, argv: &[String]) -> Option<Known> {
        let by = |text: &str| {
            let text = text.to_ascii_lowercase();
            if text.contains("claude") {
                Some(Known::ClaudeCode)
            } else if text.contains("gemini") {
                Some(Known::GeminiCli)
            } else {
                None
            }
        };
        match name {
            Some(name) => by(name),
            None => argv.iter().take(3).find_map(|word| by(word)),
        }
    }
}

/// The `_meta` of `session/new`: Claude Code reads only the user's settings.
pub(crate) fn session_meta() -> acp::Meta {
    let mut meta = acp::Meta::new();
    meta.insert(
        "claudeCode".to_owned(),
        serde_json::json!({"options": {"settingSources": ["user"]}}),
    );
    meta
}

/// The project settings files the repository holds, repository-relative.
pub(crate) fn project_settings(root: &Path) -> Vec<String> {
    PROJECT_SETTINGS
        .iter()
        .filter(|path| root.join(path).symlink_metadata().is_ok())
        .map(|path| (*path).to_owned())
        .collect()
}

/// Why efix refuses to start an agent it does not know on this repository, if it does.
pub(crate) fn refusal(known: Option<Known>, name: &str, root: &Path) -> Option<String> {
    if known.is_some() {
        return None;
    }
    let found = project_settings(root);
    if found.is_empty() {
        return None;
    }
    Some(format!(
        "the repository holds agent settings ({}) and efix does not know how to keep agent \
         `{name}` from loading them (they can allow commands and writes without a permission \
         request and run hooks with the network); efix keeps the repository's own settings \
         away from Claude Code (claude-agent-acp) and Gemini CLI only: use one of them, or \
         remove those files from the repository",
        found
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Permission modes of common agents that ask before every edit and command.
const ASKING_MODES: &[&str] = &["default"];

/// The mode to switch a session to so that the agent asks before each change, when it is
/// in another mode and offers one that asks.
pub(crate) fn asking_mode(modes: &acp::SessionModeState) -> Option<acp::SessionModeId> {
    let current = modes.current_mode_id.0.as_ref();
    if ASKING_MODES.contains(&current) {
        return None;
    }
    modes
        .available_modes
        .iter()
        .find(|mode| ASKING_MODES.contains(&mode.id.0.as_ref()))
        .map(|mode| mode.id.clone())
}

/// The remedy for an agent that says it needs authentication.
pub(crate) fn auth_remedy(known: Option<Known>) -> &'static str {
    match known {
        Some(Known::ClaudeCode) => {
            "pass the agent's key with `acp.env-pass` (Claude Code: ANTHROPIC_API_KEY, or \
             ANTHROPIC_AUTH_TOKEN for a gateway)"
        }
        Some(Known::GeminiCli) => {
            "pass the agent's key with `acp.env-pass` (Gemini CLI: GEMINI_API_KEY)"
        }
        None => "pass the agent's key with `acp.env-pass` (the variable its documentation names)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_known_by_their_name_or_their_command() {
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            (
                Known::identify(Some("@agentclientprotocol/claude-agent-acp"), &[]),
                Known::identify(Some("gemini-cli"), &[]),
                Known::identify(None, &argv(&["/opt/bin/gemini", "--acp"])),
                Known::identify(Some("my-agent"), &argv(&["claude-agent-acp"])),
                Known::identify(None, &argv(&["my-agent"])),
            ),
            (
                Some(Known::ClaudeCode),
                Some(Known::GeminiCli),
                Some(Known::GeminiCli),
                None,
                None
            )
        );
    }

    #[test]
    fn an_unknown_agent_is_refused_only_where_the_repository_holds_agent_settings() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(refusal(None, "my-agent", dir.path()), None);
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(".claude/settings.json"), "{}").unwrap();
        assert_eq!(refusal(Some(Known::ClaudeCode), "c", dir.path()), None);
        let refused = refusal(None, "my-agent", dir.path()).unwrap();
        assert!(
            refused.starts_with("the repository holds agent settings (`.claude/settings.json`)"),
            "{refused}"
        );
    }

    #[test]
    fn a_session_that_pre_approves_edits_is_switched_to_the_asking_mode() {
        let modes = |current: &str| {
            acp::SessionModeState::new(
                current.to_owned(),
                vec![
                    acp::SessionMode::new("default".to_owned(), "Default"),
                    acp::SessionMode::new("acceptEdits".to_owned(), "Accept edits"),
                ],
            )
        };
        assert_eq!(
            asking_mode(&modes("acceptEdits")).map(|m| m.0.to_string()),
            Some("default".to_owned())
        );
        assert_eq!(asking_mode(&modes("default")), None);
        let no_default = acp::SessionModeState::new(
            "yolo".to_owned(),
            vec![acp::SessionMode::new("yolo".to_owned(), "Yolo")],
        );
        assert_eq!(asking_mode(&no_default), None);
    }
}
