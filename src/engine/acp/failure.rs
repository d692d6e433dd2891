//! What a failed conversation tells its user besides the failure itself: the agent's last
//! updates (what it was doing when it hung or broke off) and, when its stderr shows the
//! sandbox refusing it a write, which path and that `acp.writable` grants it. The stderr tail
//! itself is added by the caller, redacted.

use std::path::Path;
use std::sync::LazyLock;

use super::AcpSettings;

/// `EACCES`/`EROFS`/`EPERM` errors that name the path they refused (node's and the C
/// library's wording).
static DENIED: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r#"(?:EACCES|EROFS|EPERM)[^'"\n]*['"](/[^'"\n]+)['"]"#).ok()
});

/// The message, with the agent's last updates and the remedy for a write the sandbox refused.
pub(crate) fn explain(
    message: &str,
    updates: &[String],
    stderr: &str,
    settings: &AcpSettings,
) -> String {
    let mut out = message.to_owned();
    if let Some(path) = refused_write(stderr, settings) {
        out.push_str(&format!(
            "; the sandbox refused the agent a write to {path}, outside the paths it may write: \
             add that path (or the directory it belongs in) to `acp.writable`"
        ));
    }
    if !updates.is_empty() {
        let joined = updates.join(" | ");
        let redacted = crate::runner::redact_text(&settings.runner.secrets, &joined)
            .unwrap_or_else(|_| "(not shown: they could not be redacted)".to_owned());
        out.push_str(&format!("; the agent's last updates: {redacted}"));
    }
    out
}

/// The first path in `stderr` a write to which was refused and that the agent may not write.
fn refused_write(stderr: &str, settings: &AcpSettings) -> Option<String> {
    let denied = DENIED.as_ref()?;
    denied
        .captures_iter(stderr)
        .filter_map(|captures| captures.get(1).map(|m| m.as_str().to_owned()))
        .find(|path| !writable(Path::new(path), settings))
}

/// Whether the agent may write `path`: the repository, or below a writable path.
fn writable(path: &Path, settings: &AcpSettings) -> bool {
    path.starts_with(&settings.root)
        || settings
            .runner
            .sandbox
            .writable
            .iter()
            .any(|allowed| path.starts_with(allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_the_sandbox_refused_is_named_with_its_remedy() {
        let settings = crate::engine::acp::tests::settings();
        let stderr = "Error: EACCES: permission denied, mkdir '/home/u/.gemini'\n    at x";
        assert_eq!(
            explain("session/new failed", &[], stderr, &settings),
            "session/new failed; the sandbox refused the agent a write to /home/u/.gemini, \
             outside the paths it may write: add that path (or the directory it belongs in) \
             to `acp.writable`"
        );
        let inside = format!(
            "EACCES: permission denied, open '{}/x'",
            settings.root.display()
        );
        assert_eq!(explain("m", &[], &inside, &settings), "m");
        assert_eq!(
            explain(
                "m",
                &["tool call `ls` (execute): pending".to_owned()],
                "",
                &settings
            ),
            "m; the agent's last updates: tool call `ls` (execute): pending"
        );
    }
}
