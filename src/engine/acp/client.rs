//! efix's side of an ACP conversation: the answers to the agent's permission requests and the
//! collection of its message text and tool calls.
//!
//! Answer mode rejects every permission request. Edit mode allows, once, a tool call whose
//! kind is `edit` and whose every named path is inside the repository (symlinks resolved, not
//! under `.git/`); execute, fetch, anything else and anything outside are rejected. No file
//! system or terminal method is served: efix advertises neither capability.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use agent_client_protocol as acp;

use crate::engine::{Permission, PermissionAnswer};

/// Bytes of agent message text kept (2 MiB); the rest of a longer answer is dropped.
pub(crate) const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;

/// What one prompt turn collected.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub text: String,
    /// The text went over [`MAX_TEXT_BYTES`].
    pub cut: bool,
    pub permissions: Vec<Permission>,
    /// Repository-relative files of the tool calls that were allowed.
    pub allowed_paths: Vec<String>,
    /// Tool calls seen in session updates, by id: what a later permission request may leave
    /// out.
    tool_calls: HashMap<String, ToolCallFacts>,
}

#[derive(Debug, Default, Clone)]
struct ToolCallFacts {
    title: Option<String>,
    kind: Option<acp::ToolKind>,
    paths: Vec<String>,
}

/// The `Client` handed to the connection.
pub(crate) struct EfixClient {
    pub collected: Rc<RefCell<Collected>>,
    /// The repository root, with symlinks resolved.
    pub root: PathBuf,
    pub allow_edits: bool,
}

#[async_trait::async_trait(?Send)]
impl acp::Client for EfixClient {
    async fn request_permission(
        &self,
        args: acp::RequestPermissionRequest,
    ) -> acp::Result<acp::RequestPermissionResponse> {
        let mut collected = self.collected.borrow_mut();
        let id = args.tool_call.tool_call_id.0.to_string();
        let mut facts = collected.tool_calls.get(&id).cloned().unwrap_or_default();
        facts.merge_with_root(&self.root, &args.tool_call.fields);
        let kind = facts.kind.unwrap_or(acp::ToolKind::Other);
        let (wanted, reason) = self.decide(kind, &facts.paths);
        let choice = match wanted {
            PermissionAnswer::Allowed => {
                option(&args.options, &[acp::PermissionOptionKind::AllowOnce])
            }
            _ => option(
                &args.options,
                &[
                    acp::PermissionOptionKind::RejectOnce,
                    acp::PermissionOptionKind::RejectAlways,
                ],
            ),
        };
        let (answer, outcome, reason) = match (wanted, choice) {
            (PermissionAnswer::Allowed, Some(id)) => (
                PermissionAnswer::Allowed,
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id)),
                reason,
            ),
            (PermissionAnswer::Allowed, None) => match option(
                &args.options,
                &[
                    acp::PermissionOptionKind::RejectOnce,
                    acp::PermissionOptionKind::RejectAlways,
                ],
            ) {
                Some(id) => (
                    PermissionAnswer::Rejected,
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        id,
                    )),
                    "the agent offered no allow-once option".to_owned(),
                ),
                None => (
                    PermissionAnswer::Cancelled,
                    acp::RequestPermissionOutcome::Cancelled,
                    "the agent offered neither an allow-once nor a reject option".to_owned(),
                ),
            },
            (_, Some(id)) => (
                PermissionAnswer::Rejected,
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id)),
                reason,
            ),
            (_, None) => (
                PermissionAnswer::Cancelled,
                acp::RequestPermissionOutcome::Cancelled,
                format!("{reason}; the agent offered no reject option"),
            ),
        };
        if answer == PermissionAnswer::Allowed {
            for path in &facts.paths {
                if !collected.allowed_paths.contains(path) {
                    collected.allowed_paths.push(path.clone());
                }
            }
        }
        collected.permissions.push(Permission {
            title: facts.title.clone().unwrap_or_default(),
            kind: kind_name(kind),
            paths: facts.paths.clone(),
            answer,
            reason,
        });
        tracing::info!(kind = %kind_name(kind), paths = facts.paths.len(), ?answer, "agent permission request");
        Ok(acp::RequestPermissionResponse::new(outcome))
    }

    async fn session_notification(&self, args: acp::SessionNotification) -> acp::Result<()> {
        let mut collected = self.collected.borrow_mut();
        match args.update {
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                if let acp::ContentBlock::Text(text) = chunk.content {
                    collected.push_text(&text.text);
                }
            }
            acp::SessionUpdate::ToolCall(call) => {
                let paths = paths_of(
                    &self.root,
                    &call.locations,
                    &call.content,
                    call.raw_input.as_ref(),
                );
                collected.tool_calls.insert(
                    call.tool_call_id.0.to_string(),
                    ToolCallFacts {
                        title: Some(call.title),
                        kind: Some(call.kind),
                        paths,
                    },
                );
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.0.to_string();
                let entry = collected.tool_calls.entry(id).or_default();
                entry.merge_with_root(&self.root, &update.fields);
            }
            _ => {}
        }
        Ok(())
    }
}

impl EfixClient {
    /// What efix wants to answer, and why.
    fn decide(&self, kind: acp::ToolKind, paths: &[String]) -> (PermissionAnswer, String) {
        if !self.allow_edits {
            return (
                PermissionAnswer::Rejected,
                "efix answers every permission request with reject (acp.mode: answer, or a \
                 plan request)"
                    .to_owned(),
            );
        }
        if kind != acp::ToolKind::Edit {
            return (
                PermissionAnswer::Rejected,
                format!(
                    "only edits of files inside the repository are allowed, and this is a \
                     tool call of kind {}",
                    kind_name(kind)
                ),
            );
        }
        if paths.is_empty() {
            return (
                PermissionAnswer::Rejected,
                "the tool call names no file, so efix cannot tell that it stays inside the \
                 repository"
                    .to_owned(),
            );
        }
        if let Some(outside) = paths.iter().find(|p| p.starts_with(OUTSIDE)) {
            return (
                PermissionAnswer::Rejected,
                format!(
                    "{} is outside the repository (or inside .git)",
                    &outside[OUTSIDE.len()..]
                ),
            );
        }
        (
            PermissionAnswer::Allowed,
            "edits files inside the repository".to_owned(),
        )
    }
}

/// Prefix marking a path that resolved outside the repository.
const OUTSIDE: &str = "outside:";

impl Collected {
    fn push_text(&mut self, text: &str) {
        let room = MAX_TEXT_BYTES.saturating_sub(self.text.len());
        if text.len() <= room {
            self.text.push_str(text);
            return;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&text[..end]);
        self.cut = true;
    }
}

impl ToolCallFacts {
    /// Add what an update or a permission request says about the tool call.
    fn merge_with_root(&mut self, root: &Path, fields: &acp::ToolCallUpdateFields) {
        if let Some(title) = &fields.title {
            self.title = Some(title.clone());
        }
        if let Some(kind) = fields.kind {
            self.kind = Some(kind);
        }
        let paths = paths_of(
            root,
            fields.locations.as_deref().unwrap_or_default(),
            fields.content.as_deref().unwrap_or_default(),
            fields.raw_input.as_ref(),
        );
        for path in paths {
            if !self.paths.contains(&path) {
                self.paths.push(path);
            }
        }
    }
}

/// The first option of the first kind in `kinds` that the agent offers.
fn option(
    options: &[acp::PermissionOption],
    kinds: &[acp::PermissionOptionKind],
) -> Option<acp::PermissionOptionId> {
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|o| o.kind == *kind)
            .map(|o| o.option_id.clone())
    })
}

fn kind_name(kind: acp::ToolKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".to_owned())
}

/// Raw-input keys that name a file in the tool calls of common agents.
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "abs_path",
    "absolute_path",
    "notebook_path",
    "target_file",
];

/// Every path a tool call names, repository-relative, or `outside:PATH` for one that
/// resolves outside the repository or into `.git`.
fn paths_of(
    root: &Path,
    locations: &[acp::ToolCallLocation],
    content: &[acp::ToolCallContent],
    raw_input: Option<&serde_json::Value>,
) -> Vec<String> {
    let mut named: Vec<PathBuf> = locations.iter().map(|l| l.path.clone()).collect();
    for item in content {
        if let acp::ToolCallContent::Diff(diff) = item {
            named.push(diff.path.clone());
        }
    }
    if let Some(serde_json::Value::Object(input)) = raw_input {
        for key in PATH_KEYS {
            if let Some(serde_json::Value::String(path)) = input.get(*key) {
                named.push(PathBuf::from(path));
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for path in named {
        let shown = match inside(root, &path) {
            Some(relative) => relative,
            None => format!("{OUTSIDE}{}", path.display()),
        };
        if !out.contains(&shown) {
            out.push(shown);
        }
    }
    out
}

/// `path` (absolute, or relative to the repository) as a repository-relative path, when it
/// stays inside the repository once `..` and symlinks are resolved and is not under `.git`.
pub(crate) fn inside(root: &Path, path: &Path) -> Option<String> {
    let joined = if path.is_absolute() {
        path.to_owned()
    } else {
        root.join(path)
    };
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    // Resolve symlinks through the longest part of the path that exists.
    let mut existing = normal.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let resolved = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            Err(_) => {
                let name = existing.file_name()?.to_owned();
                rest.push(name);
                if !existing.pop() {
                    return None;
                }
            }
        }
    };
    let full = rest.iter().rev().fold(resolved, |acc, name| acc.join(name));
    let relative = full.strip_prefix(root).ok()?;
    let text = relative.to_str()?.to_owned();
    let first = relative.components().next();
    if text.is_empty() || first == Some(Component::Normal(".git".as_ref())) {
        return None;
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_repository_are_made_relative_and_escapes_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        assert_eq!(
            inside(&root, Path::new("src/lib.rs")),
            Some("src/lib.rs".to_owned())
        );
        assert_eq!(
            inside(&root, &root.join("src/new/deep.rs")),
            Some("src/new/deep.rs".to_owned())
        );
        assert_eq!(inside(&root, Path::new("src/../../outside.rs")), None);
        assert_eq!(inside(&root, Path::new("/etc/passwd")), None);
        assert_eq!(inside(&root, Path::new("link/passwd")), None);
        assert_eq!(inside(&root, Path::new(".git/hooks/pre-commit")), None);
        assert_eq!(inside(&root, Path::new(".")), None);
    }

    #[test]
    fn answer_text_is_kept_up_to_the_cap() {
        let mut collected = Collected::default();
        collected.push_text(&"a".repeat(MAX_TEXT_BYTES - 1));
        collected.push_text("éé");
        assert_eq!(collected.text.len(), MAX_TEXT_BYTES - 1);
        assert!(collected.cut);
    }
}
