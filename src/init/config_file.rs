//! The `.efix.yml` `efix init` writes: the engine section, `commands.allow` with exactly the
//! programs the runners' commands start, and, as comments, what was found and the suites
//! Prove derives.
//!
//! No `test.required-suites` is written: a configured suite must pass in full after the fix,
//! while the suite Prove derives from each reproduction is checked against its own baseline
//! (failures that predate the fix are allowed, new ones are not), narrowed when it is slower
//! than `test.suite-budget-ms`, and dropped when it cannot establish a baseline. A repository
//! with one unrelated failing test would otherwise never get a fix proven.

use std::fmt::Write as _;

use super::commands::RunnerCommands;
use super::detect::Findings;
use super::{Agent, EngineChoice};

/// The model written for the OpenAI-compatible engine (efix's default).
pub const OPENAI_MODEL: &str = "gpt-4o-mini";
/// The variable holding the OpenAI-compatible API key.
pub const OPENAI_KEY: &str = "OPENAI_API_KEY";

impl Agent {
    /// The agent's command line, as the real-agent tests start it.
    pub fn command(self) -> &'static str {
        match self {
            Agent::Claude => "claude-agent-acp",
            Agent::Gemini => "gemini --acp",
        }
    }

    /// The program of [`Agent::command`].
    pub fn program(self) -> &'static str {
        match self {
            Agent::Claude => "claude-agent-acp",
            Agent::Gemini => "gemini",
        }
    }

    /// The npm package (and the release the tests run) that provides the agent.
    pub fn package(self) -> &'static str {
        match self {
            Agent::Claude => "@agentclientprotocol/claude-agent-acp@0.49.0",
            Agent::Gemini => "@google/gemini-cli@0.61.0",
        }
    }

    /// The variable holding the agent's model API key.
    pub fn key(self) -> &'static str {
        match self {
            Agent::Claude => "ANTHROPIC_API_KEY",
            Agent::Gemini => "GEMINI_API_KEY",
        }
    }

    /// The agent's own state, which it writes outside the repository.
    pub fn writable(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => &["~/.claude", "~/.claude.json"],
            Agent::Gemini => &["~/.gemini"],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Gemini => "Gemini CLI",
        }
    }
}

/// A YAML scalar: bare when it cannot be read as anything but the string, else double-quoted
/// (JSON string syntax is valid YAML).
pub fn scalar(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !value.starts_with(['-', '.'])
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        )
        && value.parse::<f64>().is_err();
    if plain {
        value.to_owned()
    } else {
        serde_json::Value::String(value.to_owned()).to_string()
    }
}

/// Text for a YAML comment: control characters (a line break in a script or a file name
/// would end the comment and start YAML) become spaces.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| scalar(i)).collect();
    format!("[{}]", items.join(", "))
}

/// The programs `commands.allow` lists: the runners' programs, then the agent's.
pub fn allowed_programs(commands: &[RunnerCommands], engine: EngineChoice) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let agent = match engine {
        EngineChoice::Acp(agent) => Some(agent.program().to_owned()),
        EngineChoice::Openai => None,
    };
    for program in commands.iter().flat_map(|c| &c.programs).chain(&agent) {
        if !out.contains(program) {
            out.push(program.clone());
        }
    }
    out
}

/// The text of `.efix.yml`.
pub fn render(findings: &Findings, commands: &[RunnerCommands], engine: EngineChoice) -> String {
    let mut out = String::new();
    out.push_str(
        "# Written by `efix init` from this repository's files (see docs/init.md).\n\
         # Check it with `efix config check`; every key is described by `efix schema config`.\n",
    );
    for found in &findings.runners {
        let _ = writeln!(
            out,
            "# {}: {}",
            found.what.name(),
            one_line(&found.why.join("; "))
        );
    }
    out.push_str("version: 1\n");
    match engine {
        EngineChoice::Openai => {
            let _ = write!(
                out,
                "engine: openai\nopenai:\n  model: {OPENAI_MODEL}\n  api-key-env: {OPENAI_KEY}\n"
            );
        }
        EngineChoice::Acp(agent) => {
            let writable: Vec<String> = agent.writable().iter().map(|w| (*w).to_owned()).collect();
            let _ = write!(
                out,
                "engine: acp\n# {name}, started as the end-to-end tests start it (npm install -g {package}).\n\
                 acp:\n  command: {command}\n  env-pass: [{key}]\n  writable: {writable}\n",
                name = agent.name(),
                package = agent.package(),
                command = scalar(agent.command()),
                key = agent.key(),
                writable = list(&writable),
            );
        }
    }
    out.push_str(
        "commands:\n  # Exactly the programs the commands below start; anything else is refused.\n",
    );
    let _ = writeln!(
        out,
        "  allow: {}",
        list(&allowed_programs(commands, engine))
    );
    out.push_str(
        "# No test.required-suites: for each reproduction efix derives the runner's suite and\n\
         # proves that no test passing before the fix fails after it, e.g.\n",
    );
    for command in commands {
        let suites = if command.suites.is_empty() {
            "(the whole suite already)".to_owned()
        } else {
            command.suites.join(" | ")
        };
        let _ = writeln!(
            out,
            "#   {}  ->  {}",
            one_line(&command.example),
            one_line(&suites)
        );
    }
    out
}
