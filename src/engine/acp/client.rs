//! efix's side of an ACP conversation: the answers to the agent's permission requests and the
//! collection of its message text, its tool calls (every one it reports, asked for or not),
//! its reported usage and cost, and its last updates (for the error of a call that hangs).
//!
//! Answer mode rejects every permission request. Edit mode allows, once, a tool call whose
//! kind is `edit` and whose every named path is inside the repository (symlinks resolved, not
//! under `.git/`) and passes the path policy (`paths.protected`, `paths.allow`), so an agent
//! learns in its turn that a protected file is off limits; execute, fetch, anything else and
//! anything outside are rejected. No file system or terminal method is served: efix
//! advertises neither capability.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use agent_client_protocol as acp;

use crate::engine::{Permission, PermissionAnswer, ToolCall};
use crate::patch::{PatchPolicy, PathRules, RepoDir};

/// Bytes of agent message text kept (2 MiB); the rest of a longer answer is dropped.
pub(crate) const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;

/// Tool calls recorded per call (500); an agent that reports more has the rest counted only.
pub(crate) const MAX_TOOL_CALLS: usize = 500;

/// Session updates remembered for the error of a call that does not finish (5).
const LAST_UPDATES: usize = 5;

/// Characters of an update kept in that memory (120).
const UPDATE_CHARS: usize = 120;

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
    /// Their ids in the order the agent first reported them.
    order: Vec<String>,
    /// Tool calls past [`MAX_TOOL_CALLS`], not recorded.
    pub dropped_tool_calls: usize,
    /// The cumulative cost of the last `usage_update` (amount, currency).
    pub cost: Option<(f64, String)>,
    /// The last few updates, one line each.
    last: VecDeque<String>,
}

#[derive(Debug, Default, Clone)]
struct ToolCallFacts {
    title: Option<String>,
    kind: Option<acp::ToolKind>,
    status: Option<acp::ToolCallStatus>,
    paths: Vec<String>,
    /// The agent asked permission for it.
    asked: bool,
    /// A status past `pending` was reported before any permission request.
    ran_unasked: bool,
}

/// The `Client` handed to the connection.
pub(crate) struct EfixClient {
    pub collected: Rc<RefCell<Collected>>,
    /// The repository root, with symlinks resolved.
    pub root: PathBuf,
    pub allow_edits: bool,
    /// The path policy an edit must pass to be allowed.
    pub paths: PatchPolicy,
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
        facts.asked = true;
        facts.merge_with_root(&self.root, &args.tool_call.fields);
        collected.remember(&id, facts.clone());
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
            paths: facts.paths.iter().map(|p| shown(p).to_owned()).collect(),
            answer,
            reason,
        });
        collected.note_update(format!(
            "permission request `{}` ({}): {}",
            facts.title.clone().unwrap_or_default(),
            kind_name(kind),
            answer_name(answer)
        ));
        tracing::info!(kind = %kind_name(kind), paths = facts.paths.len(), ?answer, "agent permission request");
        Ok(acp::RequestPermissionResponse::new(outcome))
    }

    async fn session_notification(&self, args: acp::SessionNotification) -> acp::Result<()> {
        let mut collected = self.collected.borrow_mut();
        match args.update {
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                if let acp::ContentBlock::Text(text) = chunk.content {
                    collected.note_update(format!("message: {}", text.text));
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
                let id = call.tool_call_id.0.to_string();
                let mut facts = collected.tool_calls.get(&id).cloned().unwrap_or_default();
                facts.title = Some(call.title);
                facts.kind = Some(call.kind);
                facts.set_status(call.status);
                for path in paths {
                    if !facts.paths.contains(&path) {
                        facts.paths.push(path);
                    }
                }
                collected.note_update(facts.line());
                collected.remember(&id, facts);
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.0.to_string();
                let mut facts = collected.tool_calls.get(&id).cloned().unwrap_or_default();
                facts.merge_with_root(&self.root, &update.fields);
                collected.note_update(facts.line());
                collected.remember(&id, facts);
            }
            acp::SessionUpdate::UsageUpdate(usage) => {
                if let Some(cost) = usage.cost {
                    collected.cost = Some((cost.amount, cost.currency));
                }
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
        match PathRules::new(&self.paths) {
            Ok(rules) => {
                let repo = RepoDir::new(&self.root);
                for path in paths {
                    if let Err(issue) = rules.check(path, &repo) {
                        return (
                            PermissionAnswer::Rejected,
                            format!("{} [{}]", issue.message, issue.rule),
                        );
                    }
                }
            }
            Err(err) => {
                return (
                    PermissionAnswer::Rejected,
                    format!("the path policy could not be read: {err}"),
                );
            }
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
    /// Every tool call the agent reported, in order, as recorded.
    pub(crate) fn tool_call_records(&self) -> Vec<ToolCall> {
        self.order
            .iter()
            .filter_map(|id| self.tool_calls.get(id))
            .map(|facts| ToolCall {
                title: facts.title.clone().unwrap_or_default(),
                kind: kind_name(facts.kind.unwrap_or(acp::ToolKind::Other)),
                status: facts
                    .status
                    .map_or_else(|| "pending".to_owned(), status_name),
                paths: facts.paths.iter().map(|p| shown(p).to_owned()).collect(),
                asked: facts.asked,
                unasked_run: facts.ran_unasked,
            })
            .collect()
    }

    /// The last updates, oldest first, one per line.
    pub(crate) fn last_updates(&self) -> Vec<String> {
        self.last.iter().cloned().collect()
    }

    fn remember(&mut self, id: &str, facts: ToolCallFacts) {
        if !self.tool_calls.contains_key(id) {
            if self.order.len() >= MAX_TOOL_CALLS {
                self.dropped_tool_calls += 1;
                return;
            }
            self.order.push(id.to_owned());
        }
        self.tool_calls.insert(id.to_owned(), facts);
    }

    fn note_update(&mut self, line: String) {
        let mut line: String = line
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(UPDATE_CHARS)
            .collect();
        line = line.trim().to_owned();
        if line.is_empty() {
            return;
        }
        if self.last.len() >= LAST_UPDATES {
            self.last.pop_front();
        }
        self.last.push_back(line);
    }

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
    /// A new status; one past `pending` before any permission request means the tool call
    /// runs without asking.
    fn set_status(&mut self, status: acp::ToolCallStatus) {
        if status != acp::ToolCallStatus::Pending && !self.asked {
            self.ran_unasked = true;
        }
        self.status = Some(status);
    }

    /// The tool call as one line of the last updates.
    fn line(&self) -> String {
        format!(
            "tool call `{}` ({}): {}",
            self.title.clone().unwrap_or_default(),
            kind_name(self.kind.unwrap_or(acp::ToolKind::Other)),
            self.status
                .map_or_else(|| "pending".to_owned(), status_name)
        )
    }

    /// Add what an update or a permission request says about the tool call.
    fn merge_with_root(&mut self, root: &Path, fields: &acp::ToolCallUpdateFields) {
        if let Some(title) = &fields.title {
            self.title = Some(title.clone());
        }
        if let Some(kind) = fields.kind {
            self.kind = Some(kind);
        }
        if let Some(status) = fields.status {
            self.set_status(status);
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

fn status_name(status: acp::ToolCallStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".to_owned())
}

fn answer_name(answer: PermissionAnswer) -> &'static str {
    match answer {
        PermissionAnswer::Allowed => "allowed",
        PermissionAnswer::Rejected => "rejected",
        PermissionAnswer::Cancelled => "cancelled",
    }
}

/// A path as the record shows it: without the internal mark of a path outside the
/// repository (which shows as the absolute path it is).
fn shown(path: &str) -> &str {
    path.strip_prefix(OUTSIDE).unwrap_or(path)
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
    fn an_edit_of_a_protected_path_is_refused_when_the_agent_asks() {
        let dir = tempfile::tempdir().unwrap();
        let client = EfixClient {
            collected: Rc::default(),
            root: dir.path().canonicalize().unwrap(),
            allow_edits: true,
            paths: PatchPolicy::default(),
        };
        let decide = |path: &str| client.decide(acp::ToolKind::Edit, &[path.to_owned()]);
        assert_eq!(
            decide("src/lib.rs"),
            (
                PermissionAnswer::Allowed,
                "edits files inside the repository".to_owned()
            )
        );
        assert_eq!(
            decide(".github/workflows/ci.yml"),
            (
                PermissionAnswer::Rejected,
                "path \".github/workflows/ci.yml\" is protected by policy; leave it unchanged \
                 [path.protected]"
                    .to_owned()
            )
        );
        let outside = format!("{OUTSIDE}/etc/passwd");
        assert_eq!(
            decide(&outside).1,
            "/etc/passwd is outside the repository (or inside .git)"
        );
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
