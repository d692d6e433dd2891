//! What a failed conversation tells its user besides the failure itself: a failed model call
//! the agent reported (the API's status and message, first: an agent that retries a failing
//! API internally ends at the timeout, which is not the cause), the agent's last updates (what
//! it was doing when it hung or broke off) and, when its stderr shows the sandbox refusing it a
//! write, which path and that `acp.writable` grants it. The stderr tail itself is added by the
//! caller, redacted, without the tool's own advice to change the ownership of that path.

use std::path::Path;
use std::sync::LazyLock;

use super::AcpSettings;

/// `EACCES`/`EROFS`/`EPERM` errors that name the path they refused (node's and the C
/// library's wording).
static DENIED: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r#"(?:EACCES|EROFS|EPERM)[^'"\n]*['"](/[^'"\n]+)['"]"#).ok()
});

/// The same errors told over several lines, the path on a line of its own (npm's
/// `code EACCES` … `path /home/u/.npm/_cacache`).
static DENIED_FIELDS: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r"(?:EACCES|EROFS|EPERM)(?:[^\n]*\n){1,6}?[^\n]*\bpath[:=]?\s+(/\S+)").ok()
});

/// A failed model call as agents print it: `status 500`, `status code: 429`, `API Error: 500`.
static API_STATUS: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)(?:\bstatus(?:[ _]code)?|\bAPI Error)[:= ]+([45]\d\d)\b").ok()
});

/// The API's own message in the error body it printed (`"message":"..."`).
static API_MESSAGE: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r#""message"\s*:\s*"((?:[^"\\]|\\.){1,300})""#).ok());

/// How many lines from a failure's status its message may be (a stack trace's length).
const MESSAGE_DISTANCE: usize = 20;

/// Advice to change a file's ownership or mode (`sudo chown -R 1000:1000 "/home/u/.npm"`),
/// and the words around it that blame an owner (`root-owned files`).
static OWNERSHIP_ADVICE: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r"(?i)\b(?:chown|chmod)\s|root-owned|owned by root").ok());

/// The message, with the failed model call first, the agent's last updates and the remedy
/// for a write the sandbox refused.
pub(crate) fn explain(
    message: &str,
    updates: &[String],
    stderr: &str,
    settings: &AcpSettings,
) -> String {
    let mut out = match api_failure(&format!("{}\n{stderr}", updates.join("\n"))) {
        Some(failure) => format!("{failure}; then {message}"),
        None => message.to_owned(),
    };
    if let Some(path) = refused_write(stderr, settings) {
        out.push_str(&format!(
            "; the sandbox refused the agent a write to {path}, outside the paths it may write: \
             add {} to `acp.writable`",
            remedy(&path, settings)
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

/// The stderr tail as the user sees it: when the sandbox refused a write, the tool's advice
/// to change ownership (which cannot help: the sandbox refused, not the owner) is left out.
pub(crate) fn shown_stderr(stderr: &str, settings: &AcpSettings) -> String {
    let Some(advice) = OWNERSHIP_ADVICE.as_ref() else {
        return stderr.to_owned();
    };
    if refused_write(stderr, settings).is_none() {
        return stderr.to_owned();
    }
    let lines: Vec<&str> = stderr.lines().collect();
    let flagged: Vec<usize> = (0..lines.len())
        .filter(|&i| advice.is_match(lines[i]))
        .collect();
    let (Some(&first), Some(&last)) = (flagged.first(), flagged.last()) else {
        return stderr.to_owned();
    };
    let mut kept: Vec<&str> = lines[..first].to_vec();
    kept.push("(advice to change file ownership left out: the sandbox refused the write)");
    kept.extend_from_slice(&lines[last + 1..]);
    kept.join("\n")
}

/// The last failed model call the agent printed: its status and the API's message (on the
/// status's line or the nearest line around it that carries one).
fn api_failure(text: &str) -> Option<String> {
    let status = API_STATUS.as_ref()?;
    let message = API_MESSAGE.as_ref()?;
    let lines: Vec<&str> = text.lines().collect();
    let (at, code) = lines
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, line)| Some((i, status.captures(line)?.get(1)?.as_str())))?;
    let said = |i: usize| Some(message.captures(lines.get(i)?)?.get(1)?.as_str().to_owned());
    // A stack trace may stand between an error's first line and its status.
    let nearest = (0..=MESSAGE_DISTANCE)
        .flat_map(|d| [at.checked_add(d), at.checked_sub(d)])
        .flatten()
        .find_map(said);
    Some(match nearest {
        Some(said) => format!("the agent's model API failed with status {code}: {said}"),
        None => format!("the agent's model API failed with status {code}"),
    })
}

/// The first path in `stderr` a write to which was refused and that the agent may not write.
fn refused_write(stderr: &str, settings: &AcpSettings) -> Option<String> {
    [DENIED.as_ref(), DENIED_FIELDS.as_ref()]
        .into_iter()
        .flatten()
        .flat_map(|denied| {
            denied
                .captures_iter(stderr)
                .filter_map(|captures| captures.get(1).map(|m| m.as_str().to_owned()))
                .collect::<Vec<_>>()
        })
        .find(|path| !writable(Path::new(path), settings))
}

/// What to add to `acp.writable`: under the home directory, the entry right below it that
/// holds the path (`~/.npm` for `/home/u/.npm/_cacache`); elsewhere the path itself.
fn remedy(path: &str, settings: &AcpSettings) -> String {
    let home = settings
        .runner
        .env
        .iter()
        .find(|(name, _)| name == "HOME")
        .map(|(_, value)| Path::new(value));
    let below = home.and_then(|home| Path::new(path).strip_prefix(home).ok());
    match below.and_then(|rest| rest.components().next()) {
        Some(first) => format!(
            "`~/{}` (or the directory it belongs in)",
            first.as_os_str().to_string_lossy()
        ),
        None => "that path (or the directory it belongs in)".to_owned(),
    }
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

    #[test]
    fn a_failed_model_call_is_named_first_with_its_status_and_message() {
        let settings = crate::engine::acp::tests::settings();
        let stderr = "Attempt 1 failed with status 500. Retrying with backoff... _ApiError: \
                      {\"error\":{\"code\":500,\"message\":\"internal\"}}\n    at x\n\
                      Attempt 2 failed with status 503. Retrying... _ApiError: \
                      {\"error\":{\"code\":503,\"message\":\"overloaded\"}}\n";
        assert_eq!(
            explain(
                "the agent did not finish within 20000 ms",
                &[],
                stderr,
                &settings
            ),
            "the agent's model API failed with status 503: overloaded; then the agent did not \
             finish within 20000 ms"
        );
        let update = ["API Error: 529 overloaded".to_owned()];
        assert_eq!(
            explain("timed out", &update, "", &settings),
            "the agent's model API failed with status 529; then timed out; the agent's last \
             updates: API Error: 529 overloaded"
        );
        assert_eq!(
            explain("timed out", &[], "exit status 1", &settings),
            "timed out"
        );
    }

    #[test]
    fn a_refused_write_told_over_several_lines_is_named_without_the_ownership_advice() {
        let mut settings = crate::engine::acp::tests::settings();
        settings.runner.env.retain(|(name, _)| name != "HOME");
        settings.runner.env.push(("HOME".into(), "/home/u".into()));
        let stderr = "npm error code EACCES\nnpm error syscall mkdir\nnpm error path \
                      /home/u/.npm/_cacache\nnpm error errno -13\nnpm error Your cache folder \
                      contains root-owned files, due to a bug in\nnpm error previous versions \
                      of npm which has since been addressed.\nnpm error\nnpm error To \
                      permanently fix this problem, please run:\nnpm error   sudo chown -R \
                      1000:1000 \"/home/u/.npm\"\nnpm error A complete log is in /tmp/x.log";
        assert_eq!(
            explain("session/new failed", &[], stderr, &settings),
            "session/new failed; the sandbox refused the agent a write to \
             /home/u/.npm/_cacache, outside the paths it may write: add `~/.npm` (or the \
             directory it belongs in) to `acp.writable`"
        );
        let shown = shown_stderr(stderr, &settings);
        assert!(
            !shown.contains("chown") && !shown.contains("root-owned"),
            "{shown}"
        );
        assert!(shown.starts_with("npm error code EACCES\n"), "{shown}");
        assert!(
            shown.ends_with("npm error A complete log is in /tmp/x.log"),
            "{shown}"
        );
        // Without a refused write, the stderr is shown as it is.
        assert_eq!(
            shown_stderr("run: sudo chown x", &settings),
            "run: sudo chown x"
        );
    }
}
